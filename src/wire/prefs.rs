//! The settings the app saves and where each setting in effect comes from: part of the command
//! contract (the Settings view sends and receives them), kept and resolved by
//! `crate::service::prefs`.

use super::DirsSource;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The colours of the window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// As the system says (light or dark), following it when it changes.
    #[default]
    System,
    /// Light, whatever the system says.
    Light,
    /// Dark, whatever the system says.
    Dark,
}

/// What the Settings view saves (the app's `settings.json`). A setting left out (`null`) takes
/// its default; a file of an older version, with fewer fields, still reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct SavedSettings {
    /// Runs directories to show, in order; empty for the default directory.
    pub runs_dirs: Vec<String>,
    /// Retention threshold in bytes, above 0; `null` for the default (20,480).
    pub threshold: Option<u64>,
    /// Running window in milliseconds; `null` for the default (30 minutes).
    pub running_window_ms: Option<i64>,
    /// Default GC idle guard in milliseconds; `null` for the default (10 minutes).
    pub gc_idle_guard_ms: Option<i64>,
    /// Colour theme of the window.
    pub theme: Theme,
    /// Other agents' stores the user chose not to show when the app offered them.
    #[serde(default)]
    pub declined_agents: Vec<String>,
    /// The kind of store a directory is read as, where the user chose one (else detected).
    #[serde(default)]
    pub dir_kinds: std::collections::BTreeMap<String, crate::model::SourceKind>,
}

/// Where each setting in effect comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SettingSources {
    /// Where the runs directories shown come from.
    pub runs_dirs: DirsSource,
    /// Where the retention threshold comes from.
    pub threshold: DirsSource,
    /// Where the running window comes from.
    pub running_window: DirsSource,
    /// Where the GC idle guard comes from.
    pub gc_idle_guard: DirsSource,
    /// Where the theme comes from: saved, or the default (no flag or variable sets it).
    pub theme: DirsSource,
}

impl Default for SettingSources {
    fn default() -> Self {
        Self {
            runs_dirs: DirsSource::Default,
            threshold: DirsSource::Default,
            running_window: DirsSource::Default,
            gc_idle_guard: DirsSource::Default,
            theme: DirsSource::Default,
        }
    }
}
