//! The front ends' wire contract: every command of the desktop app by name, with its request,
//! response and streamed item types ([`COMMANDS`], [`command`]), and the few types that belong
//! to no model (settings, a reference to a result). Plain data, no Tauri: the shell passes these
//! through, and their TypeScript twins, the command map included, are generated into
//! `ui/src/gen/` (checked by `tests/it/gen_types.rs`).

mod commands;
pub(crate) mod prefs;
mod requests;

pub(crate) use commands::with_contract;
pub use commands::{command, export_typescript, CommandSpec, COMMANDS};
pub use requests::*;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where the runs directories came from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DirsSource {
    /// `--runs-dir` on the command line.
    Cli,
    /// `$MCTL_RUNS_DIR`.
    Env,
    /// Chosen in the app and remembered.
    Saved,
    /// The harness's own directory.
    Default,
}

/// What the app is told of the program it talks to: the settings in effect, where each comes
/// from, and what this front end may do.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Paths of the runs directories shown, in the order shown.
    pub runs_dirs: Vec<String>,
    /// Where the runs directories shown came from.
    pub source: DirsSource,
    /// Retention threshold in effect, in bytes: a result longer than this should be retained.
    pub threshold: u64,
    /// Whether pinning, unpinning and applying a GC are allowed (not on a read-only server).
    #[serde(default)]
    pub can_change: bool,
    /// Whether the directories shown can be changed, with a folder picker (not on a server).
    #[serde(default)]
    pub can_set_dirs: bool,
    /// Whether a value file can be shown in the system's file manager (the desktop app).
    #[serde(default)]
    pub can_reveal: bool,
    /// The version and commit of the program answering, as its `--version` prints them.
    #[serde(default)]
    pub version: String,
    /// The folder the desktop app writes its log files to; none for `mctl serve`, which logs to
    /// its standard error.
    #[serde(default)]
    pub log_dir: Option<String>,
    /// How long a run without a terminal event counts as running after its last change.
    #[serde(default)]
    pub running_window_ms: i64,
    /// How recently changed a run may be and still have its values collected: the GC form's
    /// default.
    #[serde(default)]
    pub gc_idle_guard_ms: i64,
    /// Colour theme in effect.
    #[serde(default)]
    pub theme: prefs::Theme,
    /// Where each setting in effect comes from: the command line and the environment win over
    /// what is saved (`docs/settings.md`).
    #[serde(default)]
    pub sources: prefs::SettingSources,
    /// What the Settings view saved, whether or not it is in effect.
    #[serde(default)]
    pub saved: prefs::SavedSettings,
    /// What was ignored on the way (an environment variable that does not parse, an unreadable
    /// settings file).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Other agents' stores found in their default places on this machine and not shown yet
    /// (nor turned down): the app offers each, and adds it only when the user accepts.
    #[serde(default)]
    pub agent_locations: Vec<crate::sources::AgentLocation>,
    /// Every kind of store this program reads, with its label, mark and capabilities: the app
    /// asks these of a directory's kind instead of matching the kind's name.
    #[serde(default)]
    pub store_kinds: Vec<crate::sources::SourceInfo>,
    /// The buckets shown (`s3://…` runs directories), each with its mirror's root (the path in
    /// `runsDirs` that stands for it) and how keeping it in step goes: a front end shows the
    /// URL in place of the path.
    #[serde(default)]
    pub buckets: Vec<crate::remote::BucketStatus>,
}

/// Names one tool result: a runs directory (by path), a run id, a tool call id or value id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResultRef {
    /// Path of the runs directory, as listed in the settings' `runsDirs`.
    pub dir: String,
    /// Run id (or a unique prefix of one).
    pub run: String,
    /// Tool call id or value id of the result.
    pub call: String,
}
