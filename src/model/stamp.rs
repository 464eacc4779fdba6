//! What proves a file unchanged since it was read: its size, modification and change times in
//! nanoseconds and its inode. The change time (ctime) cannot be set back by a program: a file
//! renamed into place with an old modification time (`mv`, `cp -a`, `tar x`), or whose
//! permissions changed, gets a new one. The index keeps these per run (`crate::index`), GC
//! compares them between a plan and its apply, the watcher between two looks.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One file's stamp: what proves it unchanged since it was last read, the one such proof the
/// index, GC, the watcher and the sources' scan caches all use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FileStamp {
    pub len: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
}

impl FileStamp {
    /// The stamp of `path` (not following a final symbolic link), `None` when it is not there.
    pub(crate) fn of(path: &Path) -> Option<Self> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| Self::from_meta(&m))
    }

    /// The stamp of entry `name` of the directory open as `dir` (not following a final
    /// symbolic link). Relative to an open directory, a stat skips the walk of the whole path:
    /// a listing stats three entries per run.
    pub(crate) fn at(dir: &rustix::fd::OwnedFd, name: &str) -> Option<Self> {
        let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(Self {
            len: u64::try_from(st.st_size).unwrap_or(0),
            mtime_ns: i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec),
            ctime_ns: i128::from(st.st_ctime) * 1_000_000_000 + i128::from(st.st_ctime_nsec),
            ino: st.st_ino,
        })
    }

    pub(crate) fn from_meta(meta: &Metadata) -> Self {
        let mtime_ns = meta
            .modified()
            .ok()
            .map(|t| match t.duration_since(UNIX_EPOCH) {
                Ok(d) => d.as_nanos() as i128,
                Err(e) => -(e.duration().as_nanos() as i128),
            })
            .unwrap_or(0);
        #[cfg(unix)]
        let (ino, ctime_ns) = {
            use std::os::unix::fs::MetadataExt;
            let ctime = i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec());
            (meta.ino(), ctime)
        };
        #[cfg(not(unix))]
        let (ino, ctime_ns) = (0, 0);
        Self {
            len: meta.len(),
            mtime_ns,
            ctime_ns,
            ino,
        }
    }

    /// Its modification time in milliseconds.
    pub(crate) fn mtime_ms(&self) -> i64 {
        i64::try_from(self.mtime_ns.div_euclid(1_000_000)).unwrap_or(i64::MAX)
    }
}

/// The stamps of `paths` as GC records them in a plan (`runStamp`): each file's size and
/// modification time in nanoseconds, `-` for one that is not there. Any write by the agent
/// changes it.
pub(crate) fn files_stamp(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| match FileStamp::of(p) {
            Some(s) => format!("{}:{}", s.len, s.mtime_ns),
            None => "-".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}
