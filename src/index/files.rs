//! The index's file: where it is, opening it while another process sets it up, and setting a
//! bad one aside.

use super::store::{Store, Unusable, SCHEMA};
use std::path::{Path, PathBuf};

/// Where the index of runs directory `runs_dir` (canonical) lives in cache directory `cache`:
/// one file per runs directory and schema, named by a hash of the directory's path (an older
/// and a newer Mission Control each keep their own, rather than setting each other's aside).
pub fn index_path(cache: &Path, runs_dir: &str) -> PathBuf {
    cache.join(format!(
        "index-{:016x}-v{SCHEMA}.sqlite",
        crate::config::dir_hash(runs_dir.as_bytes())
    ))
}

/// Opens the store, waiting (up to about ten seconds) while another process sets it up.
pub(super) fn open_store(path: &Path, runs_dir: &str) -> Result<Store, Unusable> {
    let mut tries = 0;
    loop {
        match Store::open(path, runs_dir) {
            Err(Unusable::Busy(_)) if tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// The side files SQLite keeps beside a database in write-ahead-log mode.
const SIDE_FILES: [&str; 2] = ["-wal", "-shm"];

/// Renames a bad index file aside with its side files, where a curious user can look at it; it
/// is never read again. The caller holds no connection to it: SQLite removes the side files of
/// the last connection it closes, by name, and those names are the new index's now.
pub(super) fn set_aside(path: &Path) -> PathBuf {
    let aside = PathBuf::from(format!("{}.bad-{}", path.display(), crate::model::now_ms()));
    if std::fs::rename(path, &aside).is_err() {
        let _ = std::fs::remove_file(path);
    }
    for ext in SIDE_FILES {
        let from = format!("{}{ext}", path.display());
        if std::fs::rename(&from, format!("{}{ext}", aside.display())).is_err() {
            let _ = std::fs::remove_file(&from);
        }
    }
    aside
}
