//! How far the reads of a listing have come: runs and transcript bytes to read, and read, for a
//! front end to show while a cold scan takes long (`mctl runs` on a terminal). Counted for the
//! whole process: a front end that lists one directory at a time sees that listing's.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Runs and their transcripts' bytes, to read and read so far, since the process started (a
/// front end shows the difference between two of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct ScanProgress {
    /// Runs the listings under way have to read (those an index could not vouch for).
    pub runs: u64,
    /// Runs read so far.
    pub runs_done: u64,
    /// Bytes of their transcripts (a file several runs share counts once).
    pub bytes: u64,
    /// Bytes of the transcripts read so far.
    pub bytes_done: u64,
}

static RUNS: AtomicU64 = AtomicU64::new(0);
static RUNS_DONE: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static BYTES_DONE: AtomicU64 = AtomicU64::new(0);

/// How far the reads of this process's listings have come.
pub fn scan_progress() -> ScanProgress {
    ScanProgress {
        runs: RUNS.load(Relaxed),
        runs_done: RUNS_DONE.load(Relaxed),
        bytes: BYTES.load(Relaxed),
        bytes_done: BYTES_DONE.load(Relaxed),
    }
}

/// A listing is about to read `runs` runs whose transcripts hold `bytes`.
pub(crate) fn to_read(runs: u64, bytes: u64) {
    RUNS.fetch_add(runs, Relaxed);
    BYTES.fetch_add(bytes, Relaxed);
}

/// One run was read, its transcript `bytes` long.
pub(crate) fn read_one(bytes: u64) {
    RUNS_DONE.fetch_add(1, Relaxed);
    BYTES_DONE.fetch_add(bytes, Relaxed);
}

/// The size of a run's transcript, as far as it can be told (a side conversation's file is its
/// session's, and counted once, there).
pub(crate) fn transcript_len(layout: &crate::model::Layout, id: &str) -> u64 {
    (layout.runs.get(id))
        .filter(|f| f.side().is_none())
        .and_then(|f| f.transcript.as_deref())
        .and_then(|p| std::fs::metadata(p).ok())
        .map_or(0, |m| m.len())
}

static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

/// Starts the process's clock, which [`since_start_ms`] reads: the app and `mctl` call it first
/// thing in `main`, so the log says how long after the launch each step of the start ended.
pub fn start_clock() {
    STARTED.get_or_init(std::time::Instant::now);
}

/// Milliseconds since [`start_clock`] (since the first call of either).
pub fn since_start_ms() -> u64 {
    let started = STARTED.get_or_init(std::time::Instant::now);
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
