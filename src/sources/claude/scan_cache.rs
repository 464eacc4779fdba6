//! Session scans ([`super::threads`]) kept by each file's stamp, so that reading a store's
//! layout costs what changed: in this process (a file that grew is read on from where its scan
//! stopped, so a live session watched every second costs its new lines), and between processes
//! in one small file per store in the cache directory (each `mctl` command reads the layout).
//! That file is a line of JSON that names its version, then one record per session file (its
//! path, stamp and scan in `postcard`'s compact form, as the index keeps runs), written a record
//! at a time and read a batch of records at a time: a store of tens of thousands of sessions is
//! never held as one file. (It was JSON Lines: parsing them was a tenth of a warm listing's
//! instructions.)
//!
//! Like the index, this is a cache: a scan equals a scan made now, and deleting the file is
//! always safe.

use super::threads::{Scanner, SessionScan};
use crate::model::stamp::FileStamp as Stamp;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

/// Bumped when what a scan finds changes, or how the file says it: an older file is then not
/// read.
const VERSION: u32 = 7;

struct Kept {
    stamp: Stamp,
    /// A scan of this process, which can be read on; one from the cache file cannot. (Boxed:
    /// only a live session keeps one, and a store of thousands of sessions keeps this for each.)
    scanner: Option<Box<Scanner>>,
    /// Shared: the cache file is written from the kept scans after the lock is let go.
    scan: Arc<SessionScan>,
    /// The latest read of a layout that met this file (see [`Scans::read`]).
    met_by: u64,
}

/// A session file's path as the cache's key, hashed and compared as bytes: a `Path` hashes
/// component by component, and a warm listing looks every session's path up.
type Files = HashMap<OsString, Kept, foldhash::fast::RandomState>;

#[derive(Default)]
struct Cache {
    files: Files,
    /// Stores whose cache file was read by this process.
    /// (By the root's bytes, as the files are: a store named two ways keeps each way's scans.)
    loaded: HashSet<OsString>,
    /// When this process last wrote each cache file.
    written: HashMap<PathBuf, std::time::Instant>,
}

/// How often a cache file is written again when only stamps moved (a live session read on,
/// nothing new in it): other processes then read on less, and a watched store is not written
/// every second.
const MOVED_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

/// Held while a cache file is written (see `write_out`).
static WRITING: Mutex<()> = Mutex::new(());

/// Whether this process reads each store's layout once (see [`one_look`]).
static ONE_LOOK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that this process reads each store's layout once (a command that lists and ends): a
/// store's scans are then written to its cache file and not kept in the process too, where
/// only a next read of the layout would use them (20,000 sessions' scans are 10 MB). A process
/// that reads a layout again and again (the watcher, the app) keeps them: a session that grew
/// is then read on from where its scan stopped.
pub(crate) fn one_look() {
    ONE_LOOK.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A cache file's first line.
#[derive(Serialize, Deserialize)]
struct Header {
    version: u32,
}

/// Each record after it: a session file's path (under the store's root, so that any spelling of
/// the root finds it, and the root's is not written 20,000 times), its stamp and its scan.
type Line = (String, Stamp, SessionScan);

/// [`Line`] as it is written, borrowed from the scans.
type LineRef<'a> = (&'a str, Stamp, &'a SessionScan);

/// What comes before each record's bytes: their length and their CRC-32C, both u32
/// little-endian. A record whose bytes do not check is not read (a damaged record costs its
/// session's scan, never a wrong one).
const RECORD_HEAD: usize = 8;

/// A record longer than this is no record (a length damaged): the rest of the file is not read.
const RECORD_MAX: usize = 64 << 20;

/// The scans of one store's session files, as one layout read asks for them.
pub(crate) struct Scans<'a> {
    /// The file kept between processes, when the store's listings use a cache.
    file: Option<PathBuf>,
    root: &'a Path,
    /// Whether a scan found something new, or a file was scanned whole: the cache file is
    /// written again.
    changed: bool,
    /// Whether a file's stamp moved with nothing new in it.
    moved: bool,
    /// Whether this process reads the layout once ([`one_look`]): the scans made are then
    /// not kept in the process, and the cache file is written from the caller's.
    one_look: bool,
    /// The files this read met, when they are kept in the process.
    seen: Vec<PathBuf>,
    /// This read, numbered in the order reads start: each kept scan it meets is marked with it,
    /// so the store's scans it did not meet are told apart without a set of what it met.
    read: u64,
}

/// The number of the next read of a layout.
static READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Whether session file `path` is under store `root`: its key starts with the root's bytes
/// and a separator (every key is `root.join(..)` of the root a read was given).
fn is_under(path: &OsStr, root: &Path) -> bool {
    let (path, root) = (path.as_encoded_bytes(), root.as_os_str().as_encoded_bytes());
    match path.strip_prefix(root) {
        Some(rest) => root.ends_with(b"/") || rest.first() == Some(&b'/'),
        None => false,
    }
}

impl<'a> Scans<'a> {
    /// Scans of store `root`, kept between processes in `cache` (none: kept in this process
    /// only).
    pub(crate) fn new(root: &'a Path, cache: Option<&Path>) -> Self {
        let file = cache.map(|c| file_of(root, c));
        Self {
            file,
            root,
            changed: false,
            moved: false,
            one_look: ONE_LOOK.load(std::sync::atomic::Ordering::Relaxed),
            seen: Vec::new(),
            read: READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The scans of session files `files` (each with its metadata, links not followed), in
    /// their order; none for a file that cannot be read (nothing in or under it to show). The
    /// files are read on every core, and no lock is held while one is read: one store's first
    /// scan does not hold up another's layout.
    pub(crate) fn scan_all(
        &mut self,
        files: &[(&Path, SessionMeta)],
    ) -> Vec<Option<Arc<SessionScan>>> {
        use rayon::prelude::*;
        self.load_once();
        // Those whose stamp has not moved (on a warm listing, all of them) are taken under one
        // lock; the others are read on every core.
        let read = self.read;
        let kept: Vec<Option<Arc<SessionScan>>> = {
            let mut cache = lock();
            (files.iter())
                .map(|(path, meta)| {
                    let kept = cache.files.get_mut(path.as_os_str())?;
                    kept.met_by = kept.met_by.max(read);
                    kept.unmoved(meta)
                })
                .collect()
        };
        let keep = !self.one_look;
        let scanned: Vec<(Option<Arc<SessionScan>>, Outcome)> = (files.par_iter().zip(kept))
            .map(|((path, meta), kept)| match kept {
                Some(scan) => (Some(scan), Outcome::Kept),
                None => scan_one(path, *meta, read, keep),
            })
            .collect();
        for ((path, _), (_, outcome)) in files.iter().zip(&scanned) {
            if keep {
                self.seen.push(path.to_path_buf());
            }
            match outcome {
                Outcome::Kept => {}
                Outcome::Moved => self.moved = true,
                Outcome::Changed => self.changed = true,
            }
        }
        scanned.into_iter().map(|(scan, _)| scan).collect()
    }

    /// Reads the cache file into this process's cache, the first time the store is read.
    fn load_once(&self) {
        let Some(file) = &self.file else { return };
        if !lock().loaded.insert(self.root.as_os_str().to_owned()) {
            return;
        }
        let loaded = load(file, self.root);
        let mut cache = lock();
        for (path, kept) in loaded {
            cache.files.entry(path.into_os_string()).or_insert(kept);
        }
    }

    /// Ends a read of the store's layout: forgets the files of the store it did not meet (gone,
    /// or renamed), and writes the cache file again when a scan changed (said on the log when
    /// it cannot be). `scanned` are the files [`scan_all`](Self::scan_all) gave a scan, each
    /// with its stamp and that scan: what the file is written from when the process reads the
    /// layout once.
    pub(crate) fn save<'f>(
        self,
        scanned: impl Iterator<Item = (&'f Path, Stamp, &'f SessionScan)>,
    ) {
        let root = self.root;
        let one_look = self.one_look;
        self.write_out(scanned);
        if one_look {
            // Read again, the store's scans come from its cache file.
            let mut cache = lock();
            cache.files.retain(|p, _| !is_under(p, root));
            // A map keeps its table when emptied (3 MB at 28,000 sessions) while the runs are
            // read.
            cache.files.shrink_to_fit();
            cache.loaded.remove(root.as_os_str());
        }
    }

    fn write_out<'f>(self, scanned: impl Iterator<Item = (&'f Path, Stamp, &'f SessionScan)>) {
        // One write at a time, each from what the cache holds when it starts: an older
        // snapshot is never renamed over a newer one. (Taken before the cache's lock, never
        // after: nothing that holds that lock waits for this one.)
        let _writing = crate::sync::lock(&WRITING);
        let mut cache = lock();
        let before = cache.files.len();
        // A scan met by this read (or one that started later) stays; one of this store that
        // none of them met is of a file gone.
        let read = self.read;
        (cache.files).retain(|p, k| k.met_by >= read || !is_under(p, self.root));
        let dropped = cache.files.len() != before;
        let Some(file) = &self.file else { return };
        let due = (cache.written.get(file)).is_none_or(|at| at.elapsed() >= MOVED_EVERY);
        if !(self.changed || dropped || (self.moved && due)) {
            return;
        }
        cache
            .written
            .insert(file.clone(), std::time::Instant::now());
        if self.one_look {
            // The only read of the store in this process: its own scans are the newest, and
            // the process kept none of them (20,000 sessions' paths and scans twice over).
            drop(cache);
            let lines = scanned.filter_map(|(path, stamp, scan)| {
                // A path that is not UTF-8 is scanned again by the next process.
                Some((path.strip_prefix(self.root).ok()?.to_str()?, stamp, scan))
            });
            return self.write_lines(file, lines);
        }
        // Written from the kept scans themselves (shared, not copied: a copy of every scan, or
        // of the whole file's text, would double what a store of tens of thousands of sessions
        // holds), once the lock is let go: other stores' scans go on meanwhile.
        let kept: Vec<(&str, Stamp, Arc<SessionScan>)> = (self.seen.iter())
            .filter_map(|p| {
                let kept = cache.files.get(p.as_os_str())?;
                // A path that is not UTF-8 is scanned again by the next process.
                let under = p.strip_prefix(self.root).ok()?.to_str()?;
                Some((under, kept.stamp, Arc::clone(&kept.scan)))
            })
            .collect();
        drop(cache);
        let lines = (kept.iter()).map(|(p, stamp, scan)| (*p, *stamp, &**scan));
        self.write_lines(file, lines);
    }

    fn write_lines<'l>(&self, file: &Path, lines: impl Iterator<Item = LineRef<'l>>) {
        if let Err(e) = write(file, lines) {
            tracing::warn!(file = %file.display(), error = %e, "could not keep the session scans");
        }
    }
}

/// What a scan needs of a session file's metadata, as its folder was listed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionMeta {
    /// Size, modification and change times, inode: any write moves it (the change time even
    /// when the modification time is set back).
    stamp: Stamp,
    /// Whether it was written within [`LIVE`].
    live: bool,
}

impl SessionMeta {
    pub(crate) fn of(meta: &fs::Metadata) -> Self {
        Self {
            stamp: Stamp::from_meta(meta),
            live: is_live(meta),
        }
    }

    /// The file's stamp as its folder was listed.
    pub(crate) fn stamp(&self) -> Stamp {
        self.stamp
    }
}

/// What reading a file's scan did to the kept ones.
enum Outcome {
    /// Its stamp had not moved, or it could not be read.
    Kept,
    /// Its stamp moved with nothing new in it.
    Moved,
    /// It was scanned whole, or read on and found something new.
    Changed,
}

impl Kept {
    /// The scan, when the file's stamp has not moved since it was made.
    fn unmoved(&mut self, meta: &SessionMeta) -> Option<Arc<SessionScan>> {
        if self.stamp != meta.stamp {
            return None;
        }
        // A session that went quiet since its scan no longer keeps what reading on needs.
        if self.scanner.is_some() && !meta.live {
            self.scanner = None;
        }
        Some(Arc::clone(&self.scan))
    }
}

/// The scan of session file `path`, from this process's cache when its stamp has not moved;
/// none when it cannot be read. (Shared with the kept one: a store's layout is read every
/// second while it is watched, and a copy of each session's scan each time would be wasted.)
/// A scan made is kept in the process when `keep` says so.
fn scan_one(
    path: &Path,
    meta: SessionMeta,
    read: u64,
    keep: bool,
) -> (Option<Arc<SessionScan>>, Outcome) {
    let stamp = meta.stamp;
    let kept = {
        let mut cache = lock();
        match cache.files.get_mut(path.as_os_str()) {
            Some(kept) => {
                // Another read may have kept it since this one looked.
                kept.met_by = kept.met_by.max(read);
                match kept.unmoved(&meta) {
                    Some(scan) => return (Some(scan), Outcome::Kept),
                    None => cache.files.remove(path.as_os_str()),
                }
            }
            None => None,
        }
    };
    // A later read that met the file while this one read it keeps its mark.
    let met_by = kept.as_ref().map_or(read, |k| k.met_by.max(read));
    // Appended to (longer, same file, and the bytes before where the scan stopped are still
    // there): read on. Anything else is scanned again whole.
    let grown = |k: &Kept| k.stamp.ino == stamp.ino && k.stamp.len < stamp.len;
    let resumed = kept
        .filter(grown)
        .and_then(|k| k.scanner.map(|s| (*s, k.scan)))
        .filter(|(s, _)| s.still_there(path));
    let (mut scanner, before) = match resumed {
        Some((s, before)) => (s, Some(before)),
        None => (Scanner::default(), None),
    };
    if scanner.read_on(path).is_err() {
        return (None, Outcome::Kept);
    }
    let outcome = match before.as_deref() == Some(&scanner.scan) {
        true => Outcome::Moved,
        false => Outcome::Changed,
    };
    if !keep {
        return (Some(Arc::new(scanner.scan)), outcome);
    }
    let scan = Arc::new(scanner.scan.clone());
    let mut kept = Kept {
        stamp,
        scanner: meta.live.then(|| Box::new(scanner)),
        scan: Arc::clone(&scan),
        met_by,
    };
    let mut cache = lock();
    if let Some(other) = cache.files.get(path.as_os_str()) {
        // Scanned by another read meanwhile: the last scan made is kept, with every mark.
        kept.met_by = kept.met_by.max(other.met_by);
    }
    cache.files.insert(path.as_os_str().to_owned(), kept);
    (Some(scan), outcome)
}

/// How long after its last write a session file's scan is kept ready to be read on. What
/// reading on needs (the `uuid` of every side line) grows with the file, and a store holds
/// thousands of files that will never grow again: only a live session's is kept, so that a
/// process's memory follows the sessions being written, not the store's size. A file written
/// again after longer is scanned whole once, and is live again.
const LIVE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Whether the file of `meta` was written within [`LIVE`] (a time that cannot be read counts as
/// live: the scan is then kept, as it always was).
fn is_live(meta: &fs::Metadata) -> bool {
    let written = meta.modified().map(|t| t.elapsed());
    !matches!(written, Ok(Ok(age)) if age > LIVE)
}

/// Forgets every scan of store `root`, in this process and in `cache` (the app's Refresh reads
/// every file again).
pub(crate) fn forget(root: &Path, cache: Option<&Path>) {
    let mut kept = lock();
    kept.files.retain(|p, _| !Path::new(p).starts_with(root));
    kept.loaded.remove(root.as_os_str());
    drop(kept);
    if let Some(cache) = cache {
        let _ = fs::remove_file(file_of(root, cache));
    }
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    crate::sync::lock(&CACHE)
}

/// The file that keeps store `root`'s scans in cache directory `cache`: one per store, however
/// its path was spelled.
fn file_of(root: &Path, cache: &Path) -> PathBuf {
    let canonical = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let key = crate::config::dir_hash(canonical.as_os_str().as_encoded_bytes());
    cache.join(format!("claude-sessions-{key:016x}-v{VERSION}.bin"))
}

/// The scans kept in `file` for store `root`, [`LOADED_AT_ONCE`] records at a time. A file of
/// another version gives none; a record that cannot be read is left out (its session file is
/// scanned again), said once.
fn load(file: &Path, root: &Path) -> Vec<(PathBuf, Kept)> {
    use rayon::prelude::*;
    use std::io::BufRead;
    let Ok(f) = fs::File::open(file) else {
        return Vec::new();
    };
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, f);
    let mut line = Vec::new();
    let header = reader.read_until(b'\n', &mut line).ok();
    let header = header.and_then(|_| serde_json::from_slice::<Header>(&line).ok());
    if header.is_none_or(|h| h.version != VERSION) {
        return Vec::new();
    }
    let (mut loaded, mut unreadable) = (Vec::new(), 0usize);
    // Read a batch of records at a time, each batch's decoded on every core: what is held at
    // once stays a batch, whatever the number of sessions.
    let mut batch: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut ended = false;
    while !ended {
        while !ended && batch.len() < LOADED_AT_ONCE {
            match next_record(&mut reader) {
                Ok(Some(record)) => batch.push(record),
                Ok(None) => ended = true,
                Err(_) => {
                    unreadable += 1;
                    ended = true;
                }
            }
        }
        let decoded: Vec<Option<(PathBuf, Kept)>> = (batch.par_drain(..))
            .map(|(check, bytes)| kept_of(check, &bytes, root))
            .collect();
        unreadable += decoded.iter().filter(|p| p.is_none()).count();
        loaded.extend(decoded.into_iter().flatten());
    }
    if unreadable > 0 {
        tracing::warn!(file = %file.display(), unreadable, "session scans kept there are unreadable: those files are scanned again");
    }
    loaded
}

/// The next record of a cache file: the check it was written with, and its bytes. `None` at the
/// file's end; an error for a record cut short or of no possible length.
fn next_record(reader: &mut impl std::io::Read) -> std::io::Result<Option<(u32, Vec<u8>)>> {
    let mut head = [0u8; RECORD_HEAD];
    // The file ends between records, or in one.
    let first = reader.read(&mut head)?;
    if first == 0 {
        return Ok(None);
    }
    reader.read_exact(&mut head[first..])?;
    let (len, check) = head.split_at(4);
    let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
    let check = u32::from_le_bytes(check.try_into().expect("4 bytes"));
    if len > RECORD_MAX {
        return Err(std::io::ErrorKind::InvalidData.into());
    }
    let mut bytes = vec![0; len];
    reader.read_exact(&mut bytes)?;
    Ok(Some((check, bytes)))
}

/// How many records of a cache file are read before they are decoded.
const LOADED_AT_ONCE: usize = 2048;

/// A session file's path and kept scan, from one record of a cache file (its bytes, and the
/// check they were written with); `None` when the record cannot be read, or names a path that
/// is not under the root (it is not this store's).
fn kept_of(check: u32, bytes: &[u8], root: &Path) -> Option<(PathBuf, Kept)> {
    if check_of(bytes) != check {
        return None;
    }
    let ((under, stamp, scan), rest) = postcard::take_from_bytes::<Line>(bytes).ok()?;
    if !rest.is_empty() {
        return None;
    }
    let under = Path::new(&under);
    if !(under.components()).all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let kept = Kept {
        stamp,
        scanner: None,
        scan: Arc::new(scan),
        met_by: 0,
    };
    Some((root.join(under), kept))
}

/// Writes a cache file of `lines` to a temporary file beside `file` and renames it over: a
/// reader sees the old file or the new one, never half of one.
fn write<'a>(file: &Path, lines: impl Iterator<Item = LineRef<'a>>) -> std::io::Result<()> {
    write_within(file, lines, RECORD_MAX)
}

/// [`write`], leaving out each record longer than `max` bytes: a reader takes such a length
/// for a damaged one and reads nothing after it, so a session whose scan is that long (millions
/// of separate side-line ranges) would cost every session after it its kept scan. Left out, it
/// alone is scanned again.
fn write_within<'a>(
    file: &Path,
    lines: impl Iterator<Item = LineRef<'a>>,
    max: usize,
) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir)?;
    }
    // Named by process and by write: two threads saving one store never share a file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = file.with_extension(format!("bin.{}-{n}.tmp", std::process::id()));
    let written = fs::File::create(&tmp).and_then(|f| {
        let mut out = std::io::BufWriter::new(f);
        serde_json::to_writer(&mut out, &Header { version: VERSION })?;
        out.write_all(b"\n")?;
        let mut bytes = Vec::new();
        for line in lines {
            let Some(head) = record(&line, &mut bytes, max)? else {
                continue;
            };
            out.write_all(&head)?;
            out.write_all(&bytes)?;
        }
        // A cache: a record cut short reads as unreadable, and its file is scanned again.
        out.flush()
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, file).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// `line` encoded into `bytes` (emptied first): what comes before them in the file; `None`
/// when they are more than `max` bytes (no reader would take them).
fn record(
    line: &LineRef<'_>,
    bytes: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<[u8; RECORD_HEAD]>> {
    bytes.clear();
    postcard::to_io(line, &mut *bytes).map_err(std::io::Error::other)?;
    if bytes.len() > max {
        return Ok(None);
    }
    let len = u32::try_from(bytes.len()).map_err(std::io::Error::other)?;
    let mut head = [0u8; RECORD_HEAD];
    head[..4].copy_from_slice(&len.to_le_bytes());
    head[4..].copy_from_slice(&check_of(bytes).to_le_bytes());
    Ok(Some(head))
}

/// The CRC-32C of a record's bytes.
fn check_of(bytes: &[u8]) -> u32 {
    // A 32-bit CRC's value fits in 32 bits.
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, bytes) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(len: u64) -> Stamp {
        Stamp {
            len,
            mtime_ns: 1,
            ctime_ns: 2,
            ino: 3,
        }
    }

    fn scan(to: u64) -> SessionScan {
        SessionScan {
            scanned_to: to,
            agent_calls: [("a1".to_owned(), format!("toolu_{to}"))].into(),
            ..SessionScan::default()
        }
    }

    fn loaded(file: &Path) -> Vec<(String, u64, SessionScan)> {
        loaded_under(file, Path::new("/s"))
    }

    /// What `file` keeps of store `root`'s sessions, in its order: path, length, scan.
    fn loaded_under(file: &Path, root: &Path) -> Vec<(String, u64, SessionScan)> {
        (load(file, root).into_iter())
            .map(|(p, k)| (p.display().to_string(), k.stamp.len, (*k.scan).clone()))
            .collect()
    }

    /// The session files under `root` this process keeps a scan of, by name.
    fn kept_under(root: &Path) -> Vec<String> {
        let cache = lock();
        let mut names: Vec<String> = (cache.files.keys())
            .filter(|p| is_under(p, root))
            .map(|p| {
                Path::new(p)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    fn read_store(root: &Path, cache: &Path) {
        let files: Vec<(PathBuf, SessionMeta)> = (fs::read_dir(root).unwrap())
            .map(|e| e.unwrap())
            .map(|e| (e.path(), SessionMeta::of(&e.metadata().unwrap())))
            .collect();
        let files: Vec<(&Path, SessionMeta)> = files.iter().map(|(p, m)| (&**p, *m)).collect();
        read_files(root, cache, &files, false);
    }

    /// One read of `files` of store `root`, as a layout makes it (by a process that reads the
    /// layout once, when `one_look` says so): their scans, the cache file saved.
    fn read_files(
        root: &Path,
        cache: &Path,
        files: &[(&Path, SessionMeta)],
        one_look: bool,
    ) -> Vec<Option<Arc<SessionScan>>> {
        let mut scans = Scans::new(root, Some(cache));
        scans.one_look = one_look;
        let scanned = scans.scan_all(files);
        let lines = (files.iter().zip(&scanned))
            .filter_map(|((path, meta), scan)| Some((*path, meta.stamp(), scan.as_deref()?)));
        scans.save(lines);
        scanned
    }

    #[test]
    fn a_read_forgets_the_scans_of_its_files_gone_and_no_other_stores() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        // A store whose name starts with the other's is not under it.
        let (store, sibling) = (dir.path().join("store"), dir.path().join("store2"));
        for (root, names) in [(&store, ["a", "b"]), (&sibling, ["c", "d"])] {
            fs::create_dir(root).unwrap();
            for n in names {
                fs::write(root.join(format!("{n}.jsonl")), "{\"type\":\"user\"}\n").unwrap();
            }
            read_store(root, &cache);
        }
        assert_eq!(kept_under(&store), ["a.jsonl", "b.jsonl"]);
        assert_eq!(kept_under(&sibling), ["c.jsonl", "d.jsonl"]);

        fs::remove_file(store.join("b.jsonl")).unwrap();
        read_store(&store, &cache);
        assert_eq!(kept_under(&store), ["a.jsonl"], "b is gone");
        assert_eq!(kept_under(&sibling), ["c.jsonl", "d.jsonl"]);
        let written: Vec<String> = (loaded_under(&file_of(&store, &cache), &store).into_iter())
            .map(|(path, ..)| path)
            .collect();
        assert_eq!(written, [store.join("a.jsonl").display().to_string()]);
        assert!(is_under(store.join("a.jsonl").as_os_str(), &store));
        assert!(!is_under(sibling.join("c.jsonl").as_os_str(), &store));
        assert!(
            !is_under(store.as_os_str(), &store),
            "the root is not under itself"
        );
        forget(&store, Some(&cache));
        forget(&sibling, Some(&cache));
    }

    #[test]
    fn a_read_of_a_process_that_looks_once_keeps_nothing_and_writes_what_it_scanned() {
        let dir = tempfile::tempdir().unwrap();
        let (root, cache) = (dir.path().join("store"), dir.path().join("cache"));
        fs::create_dir(&root).unwrap();
        let side = r#"{"type":"user","uuid":"x1","parentUuid":null,"isSidechain":true}"#;
        fs::write(root.join("a.jsonl"), format!("{side}\n")).unwrap();
        fs::write(root.join("b.jsonl"), "{\"type\":\"user\"}\n").unwrap();
        // Listed, then gone before it is read: it has no scan, and none is written.
        let gone = root.join("c.jsonl");
        fs::write(&gone, "{\"type\":\"user\"}\n").unwrap();
        let mut files: Vec<(PathBuf, SessionMeta)> = (fs::read_dir(&root).unwrap())
            .map(|e| e.unwrap())
            .map(|e| (e.path(), SessionMeta::of(&e.metadata().unwrap())))
            .collect();
        files.sort_by(|a, b| a.0.cmp(&b.0));
        fs::remove_file(&gone).unwrap();
        let files: Vec<(&Path, SessionMeta)> = files.iter().map(|(p, m)| (&**p, *m)).collect();
        let scanned = read_files(&root, &cache, &files, true);
        assert_eq!(
            scanned.iter().map(Option::is_some).collect::<Vec<_>>(),
            [true, true, false]
        );
        assert_eq!(scanned[0].as_ref().unwrap().sidechains.len(), 1);
        assert_eq!(
            kept_under(&root),
            Vec::<String>::new(),
            "the process keeps none"
        );
        // The next process reads both scans back (in the files' order), as a process that keeps
        // them writes them.
        let file = file_of(&root, &cache);
        let want: Vec<(String, u64, SessionScan)> = (files[..2].iter().zip(&scanned))
            .map(|((p, m), s)| {
                (
                    p.display().to_string(),
                    m.stamp().len,
                    (**s.as_ref().unwrap()).clone(),
                )
            })
            .collect();
        assert_eq!(loaded_under(&file, &root), want);
        fs::remove_file(&file).unwrap();
        read_files(&root, &cache, &files[..2], false);
        assert_eq!(kept_under(&root), ["a.jsonl", "b.jsonl"]);
        assert_eq!(loaded_under(&file, &root), want);
        forget(&root, Some(&cache));

        // Read once again with nothing changed, the file is not written again; with a session
        // gone, it is, without it.
        // (Each read as another process's: what this one loaded is forgotten, the file kept.)
        let one_look = |files: &[(&Path, SessionMeta)]| {
            forget(&root, None);
            read_files(&root, &cache, files, true);
        };
        one_look(&files[..2]);
        let written = Stamp::of(&file).unwrap();
        one_look(&files[..2]);
        assert_eq!(
            Stamp::of(&file),
            Some(written),
            "nothing changed: not written"
        );
        fs::remove_file(files[1].0).unwrap();
        one_look(&files[..1]);
        assert_ne!(Stamp::of(&file), Some(written));
        assert_eq!(loaded_under(&file, &root), want[..1]);
        forget(&root, Some(&cache));
    }

    #[test]
    fn a_file_scanned_again_keeps_the_mark_of_a_later_read_that_met_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        fs::create_dir(&root).unwrap();
        let file = root.join("x.jsonl");
        fs::write(&file, "{\"type\":\"user\"}\n").unwrap();
        read_store(&root, &dir.path().join("cache"));
        let met_by = |f: &Path| lock().files.get(f.as_os_str()).map(|k| k.met_by);
        let later = READS.fetch_add(10, std::sync::atomic::Ordering::Relaxed) + 5;
        lock().files.get_mut(file.as_os_str()).unwrap().met_by = later;

        // An earlier read scans the grown file again: the later read's mark stays.
        fs::write(&file, "{\"type\":\"user\"}\n{\"type\":\"user\"}\n").unwrap();
        let meta = SessionMeta::of(&fs::metadata(&file).unwrap());
        let (_, outcome) = scan_one(&file, meta, 1, true);
        assert!(matches!(outcome, Outcome::Changed));
        assert_eq!(met_by(&file), Some(later));
        // A read past it that finds the scan unmoved marks it.
        let (_, outcome) = scan_one(&file, meta, later + 1, true);
        assert!(matches!(outcome, Outcome::Kept));
        assert_eq!(met_by(&file), Some(later + 1));
        forget(&root, None);
    }

    /// A cache file of `header` and `records`, each as [`write`] writes it.
    fn file_of_records(header: &str, records: &[Vec<u8>]) -> Vec<u8> {
        let mut file = format!("{header}\n").into_bytes();
        records.iter().for_each(|r| file.extend_from_slice(r));
        file
    }

    /// `line` as a record of a cache file: its head, then its bytes.
    fn record_of(path: &str, stamp: Stamp, scan: &SessionScan) -> Vec<u8> {
        let mut bytes = Vec::new();
        let head = record(&(path, stamp, scan), &mut bytes, RECORD_MAX)
            .unwrap()
            .unwrap();
        [&head[..], &bytes].concat()
    }

    /// `record` with the first letter of its path's changed case: it still decodes (as another
    /// path), but no longer checks.
    fn damaged(mut record: Vec<u8>) -> Vec<u8> {
        // The head, then the path's length (one byte), then the path.
        record[RECORD_HEAD + 1] ^= 0x20;
        record
    }

    #[test]
    fn a_cache_file_is_read_in_batches_and_a_bad_record_costs_only_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("claude-sessions-0-v7.bin");
        let (s1, s2, s3) = (scan(10), scan(20), scan(30));
        let (t1, t2, t3) = (stamp(10), stamp(20), stamp(30));
        let lines = [("p/a.jsonl", t1, &s1), ("p/b.jsonl", t2, &s2)];
        write(&file, lines.into_iter()).unwrap();
        let bytes = fs::read(&file).unwrap();
        let header = "{\"version\":7}";
        let (a, b) = (
            record_of("p/a.jsonl", t1, &s1),
            record_of("p/b.jsonl", t2, &s2),
        );
        assert_eq!(
            bytes,
            file_of_records(header, &[a.clone(), b.clone()]),
            "a header line, then a record per session"
        );
        let want = vec![
            ("/s/p/a.jsonl".to_owned(), 10, s1.clone()),
            ("/s/p/b.jsonl".to_owned(), 20, s2.clone()),
        ];
        assert_eq!(loaded(&file), want);

        // A damaged record loses its session only, and so does one that names a file outside
        // the store; a record cut short at the end is lost.
        let c = record_of("p/c.jsonl", t3, &s3);
        let records = [
            a.clone(),
            damaged(record_of("p/x.jsonl", t3, &scan(1))),
            record_of("../etc/x.jsonl", t3, &scan(1)),
            b.clone(),
            c.clone(),
            c[..c.len() - 3].to_vec(),
        ];
        fs::write(&file, file_of_records(header, &records)).unwrap();
        let mut with_c = want.clone();
        with_c.push(("/s/p/c.jsonl".to_owned(), 30, s3.clone()));
        assert_eq!(loaded(&file), with_c);
        // Cut in its head, too.
        let records = [a.clone(), b.clone(), c.clone(), c[..5].to_vec()];
        fs::write(&file, file_of_records(header, &records)).unwrap();
        assert_eq!(loaded(&file), with_c);
        // A length no record has: what comes after it is not read.
        let mut endless = c.clone();
        endless[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        let records = [a.clone(), b.clone(), endless, c.clone()];
        fs::write(&file, file_of_records(header, &records)).unwrap();
        assert_eq!(loaded(&file), want);
        // A record longer than a reader takes is not written: the sessions after it keep
        // theirs.
        let long = scan(40);
        let lines = [
            ("p/a.jsonl", t1, &s1),
            ("p/long.jsonl", stamp(40), &long),
            ("p/b.jsonl", t2, &s2),
        ];
        let longest = [&a, &b].map(|r| r.len() - RECORD_HEAD).into_iter().max();
        write_within(&file, lines.into_iter(), longest.unwrap()).unwrap();
        assert!(record_of("p/long.jsonl", stamp(40), &long).len() > a.len().max(b.len()));
        assert_eq!(
            fs::read(&file).unwrap(),
            file_of_records(header, &[a.clone(), b.clone()])
        );
        assert_eq!(loaded(&file), want);

        // Another version's file, or no file, gives nothing.
        let older = file_of_records("{\"version\":6}", &[a.clone(), b.clone()]);
        fs::write(&file, older).unwrap();
        assert_eq!(loaded(&file), Vec::new());
        assert_eq!(loaded(&dir.path().join("none.bin")), Vec::new());
        let absolute = record_of("/etc/x.jsonl", t3, &scan(1));
        fs::write(&file, file_of_records(header, &[absolute])).unwrap();
        assert_eq!(
            loaded(&file),
            Vec::new(),
            "an absolute path is no file of the store"
        );

        // Past a batch, in order, a damaged record on each side of the boundary.
        let n = LOADED_AT_ONCE * 2 + 3;
        let mut records = Vec::new();
        let mut want = Vec::new();
        for i in 0..n as u64 {
            let name = format!("p/{i}.jsonl");
            let record = record_of(&name, stamp(i), &scan(i));
            if i == LOADED_AT_ONCE as u64 - 2 || i == LOADED_AT_ONCE as u64 + 1 {
                records.push(damaged(record));
                continue;
            }
            records.push(record);
            want.push((format!("/s/{name}"), i, scan(i)));
        }
        fs::write(&file, file_of_records(header, &records)).unwrap();
        assert_eq!(loaded(&file), want);
    }
}
