//! The run model's settings and the clock it reads. Reading a run, reading its summary,
//! comparing its value files and GC all need them, and none of those needs the others, so they
//! live here on their own rather than in any one of them.

use crate::retained::DEFAULT_THRESHOLD;
use std::fs;
use std::time::{SystemTime, UNIX_EPOCH};

/// Settings of the run model.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// A result longer than this many bytes is retained (spec B.1).
    pub threshold: u64,
    /// A run with no terminal event is `running` while its transcript changed within this
    /// window, `interrupted` after (spec A.4).
    pub running_window_ms: i64,
    /// The clock, in epoch milliseconds.
    pub now_ms: i64,
    /// How value files are compared with the transcript to tell retained from damaged.
    pub verify: Verify,
    /// Whether the stub of every result is measured (the threshold what-if), not only of the
    /// results over the threshold. Building a stub for each of a listing's many small results
    /// would more than double what reading a run costs.
    pub measure_stubs: bool,
}

/// How closely a value file is compared with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Every byte: what one run's view, `show`, `full`, `stub` and `peek` use.
    Full,
    /// Size, then the first and last 64 KiB: what a listing of every run uses, so that listing
    /// a directory does not read gigabytes of values each time.
    Sampled,
    /// Size only: what GC planning uses (it needs to know which file backs which result).
    Size,
}

impl RunOptions {
    /// The running-window rule (spec A.4), the one place it is written: a run without a
    /// terminal event whose transcript (or last line) last changed at `changed_ms` is running
    /// while that is within the window, interrupted after it.
    pub fn status_by_clock(&self, changed_ms: i64) -> super::RunStatus {
        if self.now_ms.saturating_sub(changed_ms) <= self.running_window_ms {
            super::RunStatus::Running
        } else {
            super::RunStatus::Interrupted
        }
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            threshold: DEFAULT_THRESHOLD,
            running_window_ms: 30 * 60 * 1000,
            now_ms: now_ms(),
            verify: Verify::Full,
            measure_stubs: false,
        }
    }
}

/// The wall clock in epoch milliseconds; 0 for a clock set before 1970, so it never panics.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A file's modification time in epoch milliseconds: what a run's last activity is told by.
pub(crate) fn modified_ms(meta: &fs::Metadata) -> Option<i64> {
    let t = meta.modified().ok()?;
    let d = t.duration_since(UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

/// A file's modification time in nanoseconds, as text (too big for a JSON number a UI reads):
/// what GC compares before deleting, where a millisecond is too coarse to see a rewrite.
pub(crate) fn mtime_ns(meta: &fs::Metadata) -> String {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or_else(String::new, |d| d.as_nanos().to_string())
}
