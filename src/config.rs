//! Mission Control's own files (pins, the GC journal): in its config directory, never in the
//! harness's runs directory. `$MCTL_CONFIG_DIR` overrides the location (tests use it).

use std::io;
use std::path::{Path, PathBuf};

pub fn config_dir() -> Option<PathBuf> {
    match std::env::var_os("MCTL_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::config_dir().map(|d| d.join("mission-control")),
    }
}

/// A stable key for a runs directory: its canonical path when it exists.
pub fn dir_key(runs_dir: &Path) -> String {
    runs_dir
        .canonicalize()
        .unwrap_or_else(|_| runs_dir.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// Writes `bytes` to `path` whole or not at all (temp file, fsync, rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(tmp, path)
}
