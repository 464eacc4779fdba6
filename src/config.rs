//! Mission Control's own files (pins, the GC journal): in its config directory, never in the
//! harness's runs directory. `$MCTL_CONFIG_DIR` overrides the location (tests use it).

use std::io;
use std::path::{Path, PathBuf};

pub(crate) fn config_dir() -> Option<PathBuf> {
    match std::env::var_os("MCTL_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::config_dir().map(|d| d.join("mission-control")),
    }
}

/// Where Mission Control keeps what it can always rebuild (the index): `$MCTL_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/mission-control`, else `~/.cache/mission-control`.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("MCTL_CACHE_DIR") {
        return Some(dir);
    }
    // The XDG rule: a relative path is invalid and ignored.
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("mission-control"));
    }
    dirs::home_dir().map(|h| h.join(".cache").join("mission-control"))
}

/// Sets how many threads read files at once (a cold listing, a full read, GC planning,
/// search): `jobs` when given, else `$MCTL_JOBS`, else every core. Called once, at start,
/// before anything reads; the answer is the number in effect (a bad `$MCTL_JOBS` is an error,
/// not a silent default).
pub fn init_jobs(jobs: Option<usize>) -> Result<usize, String> {
    let jobs = match jobs {
        Some(n) => Some(n),
        None => match std::env::var("MCTL_JOBS") {
            Ok(v) if !v.trim().is_empty() => Some(parse_jobs(&v)?),
            _ => None,
        },
    };
    let n = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // A second call (a test, an embedding) keeps the pool it has.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global();
    Ok(rayon::current_num_threads())
}

/// A number of threads, 1 or more.
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}` is not a number of jobs (1 or more)")),
    }
}

/// Opens (creating it and its directory) the lock file at `path`, for `flock`: the GC lock and
/// the pins lock are both such files in the config directory.
pub(crate) fn open_lock_file(path: &Path) -> crate::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| crate::Error::io(format!("creating {}", dir.display()), &e))?;
    }
    // Readable too: a shared lock on NFS is a read lock, which needs the file open for reading.
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| crate::Error::io(format!("opening {}", path.display()), &e))
}

/// A stable key for a runs directory: its canonical path when it exists.
pub(crate) fn dir_key(runs_dir: &Path) -> String {
    runs_dir
        .canonicalize()
        .unwrap_or_else(|_| runs_dir.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// Writes `bytes` to `path` whole or not at all: a temporary file of its own beside it, fsync,
/// rename. Two writers at once (the app and `mctl`) each write their own temporary file, so
/// neither can rename the other's half-written bytes into place.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes to the file, as it makes it (an export streamed).
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let (tmp, mut f) = create_temp(path)?;
    let written = write(&mut f)
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        // Best effort: the error that matters is the one returned.
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A new file `.<name>.<pid>.<random>.tmp` beside `path`. `create_new` makes sure it is no
/// other writer's; a name already taken (a left-over, or a coincidence) is drawn again.
fn create_temp(path: &Path) -> io::Result<(PathBuf, std::fs::File)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tries = 0;
    loop {
        let tmp = path.with_file_name(format!(
            ".{name}.{}.{:016x}.tmp",
            std::process::id(),
            fastrand::u64(..)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            other => return other.map(|f| (tmp, f)),
        }
    }
}

/// FNV-1a, 64 bits: a stable name for a runs directory's files in the cache (its index, a
/// source's scans).
pub(crate) fn dir_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writers_at_once_each_use_their_own_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        // Before, every writer used `f.tmp`: one could rename another's half-written file, or
        // find it gone. Each write is whole, whoever wins.
        let contents: Vec<Vec<u8>> = (0..4u8).map(|i| vec![b'a' + i; 16 * 1024]).collect();
        std::thread::scope(|s| {
            for c in &contents {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..5 {
                        write_atomic(path, c).unwrap();
                    }
                });
            }
        });
        let last = std::fs::read(&path).unwrap();
        assert!(contents.contains(&last), "a whole write, not a mix");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["f.json"], "no temporary file is left behind");
    }
}
