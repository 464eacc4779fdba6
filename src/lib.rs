//! Mission Control's core: everything that knows the runs-directory format (`docs/runs-dir.md`).
//! No UI and no Tauri here: the `mctl` CLI and the desktop shell both call these functions.

pub mod config;
pub mod error;
pub mod gc;
pub mod pins;
pub mod retained;
pub mod runs;
pub mod transcript;
pub mod watch;
pub mod wire;

pub use error::{Error, ErrorCode, Result};
pub mod demo;

/// The harness's own runs directory on this system (spec A.1): `<app data dir>/runs` for the
/// bundle identifier `com.pierre.klide`.
pub fn default_runs_dir() -> Option<std::path::PathBuf> {
    dirs::data_dir().map(|d| d.join("com.pierre.klide").join("runs"))
}
