//! The kinds of store Mission Control reads. Each is one folder of `crate::sources`, which maps
//! a kind to its implementation and spells its name (`as_str`, `ALL`, parsing); the kind itself
//! is a plain name the run model carries.

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
    /// Gemini CLI's chats (`~/.gemini/tmp`, a project folder in it, or its `chats` folder).
    Gemini,
    /// opencode's data folder (`~/.local/share/opencode`: its database and JSON tree).
    Opencode,
}
