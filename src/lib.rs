//! Mission Control's core: everything that knows the runs-directory format (`docs/runs-dir.md`).
//! No UI and no Tauri here: the `mctl` CLI and the desktop shell both call these functions.

pub mod retained;
pub mod error;
pub mod runs;
pub mod transcript;

pub use error::{Error, ErrorCode, Result};
