//! The kinds of store Mission Control reads. Each is one folder of `crate::sources`, which maps
//! a kind to its implementation; the kind itself is a plain name the run model carries.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kind of store a directory is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS,
)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The harness's runs directory.
    #[default]
    Klide,
    /// Claude Code's projects directory (or one project folder).
    Claude,
    /// Codex CLI's sessions directory.
    Codex,
}

impl SourceKind {
    /// Every kind of store, the harness's first.
    pub const ALL: [SourceKind; 3] = [SourceKind::Klide, SourceKind::Claude, SourceKind::Codex];

    /// The kind's name, as in JSON, `--source` and the run's `source` (`klide`, `claude`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Klide => "klide",
            SourceKind::Claude => "claude",
            SourceKind::Codex => "codex",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SourceKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SourceKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown source `{s}`: give klide, claude or codex"))
    }
}
