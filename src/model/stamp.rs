//! What proves a file unchanged since it was read: its size, modification and change times in
//! nanoseconds and its inode. The change time (ctime) cannot be set back by a program: a file
//! renamed into place with an old modification time (`mv`, `cp -a`, `tar x`), or whose
//! permissions changed, gets a new one. The index keeps these per run (`crate::index`), GC
//! compares them between a plan and its apply, the watcher between two looks.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// One file's stamp: what proves it unchanged since it was last read, the one such proof the
/// index, GC, the watcher and the sources' scan caches all use.
///
/// Its times are nanoseconds since 1970 in an `i64` (late 1677 to 2262; a time outside is
/// held at the nearest end): a watch holds three per run, and an `i128` makes an
/// `Option<FileStamp>` 64 bytes instead of 40. A modification time past the end says nothing of
/// a write, but the change time, which the kernel sets to the clock at each write, always does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FileStamp {
    pub len: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
}

/// A time of `secs` seconds and `frac` nanoseconds since 1970 as nanoseconds, held at the ends
/// of an `i64`.
fn nanos(secs: i64, frac: i64) -> i64 {
    let end = if secs < 0 { i64::MIN } else { i64::MAX };
    (secs.checked_mul(1_000_000_000))
        .and_then(|n| n.checked_add(frac))
        .unwrap_or(end)
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
            mtime_ns: nanos(st.st_mtime, i64::try_from(st.st_mtime_nsec).unwrap_or(0)),
            ctime_ns: nanos(st.st_ctime, i64::try_from(st.st_ctime_nsec).unwrap_or(0)),
            ino: st.st_ino,
        })
    }

    pub(crate) fn from_meta(meta: &Metadata) -> Self {
        // Read as the stat gave them (as `at` does), not through `SystemTime`.
        #[cfg(unix)]
        let (mtime_ns, ctime_ns, ino) = {
            use std::os::unix::fs::MetadataExt;
            let mtime = nanos(meta.mtime(), meta.mtime_nsec());
            (mtime, nanos(meta.ctime(), meta.ctime_nsec()), meta.ino())
        };
        #[cfg(not(unix))]
        let (mtime_ns, ctime_ns, ino) = (modified_ns(meta), 0, 0);
        Self {
            len: meta.len(),
            mtime_ns,
            ctime_ns,
            ino,
        }
    }

    /// Its modification time in milliseconds.
    pub(crate) fn mtime_ms(&self) -> i64 {
        self.mtime_ns.div_euclid(1_000_000)
    }
}

/// A file's modification time in nanoseconds since 1970, where no stat gives it apart.
#[cfg(not(unix))]
fn modified_ns(meta: &Metadata) -> i64 {
    let since = |t: std::time::SystemTime| match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    };
    meta.modified().map_or(0, since)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_held_at_the_ends_of_an_i64() {
        assert_eq!(nanos(1, 5), 1_000_000_005);
        assert_eq!(nanos(-2, 500_000_000), -1_500_000_000);
        assert_eq!(nanos(i64::MAX / 1000, 0), i64::MAX);
        assert_eq!(nanos(i64::MAX / 1_000_000_000, 999_999_999), i64::MAX);
        assert_eq!(nanos(i64::MIN / 1000, 999_999_999), i64::MIN);
    }

    #[test]
    fn a_stat_by_path_and_one_in_an_open_folder_agree_before_1970_too() {
        use rustix::fs::{Mode, OFlags};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = std::fs::File::create(&path).unwrap();
        let before = std::time::UNIX_EPOCH - std::time::Duration::from_millis(1500);
        file.set_modified(before).unwrap();
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let open = rustix::fs::open(dir.path(), flags, Mode::empty()).unwrap();
        let by_path = FileStamp::of(&path).unwrap();
        // 1.5 s before 1970 (2 s on a file system that keeps whole seconds).
        let (ns, ms) = (by_path.mtime_ns, by_path.mtime_ms());
        assert!(
            [(-1_500_000_000, -1_500), (-2_000_000_000, -2_000)].contains(&(ns, ms)),
            "{ns} ns, {ms} ms"
        );
        assert_eq!(FileStamp::at(&open, "f"), Some(by_path));
    }
}
