//! Live: watch runs directories and tail running transcripts. The watcher knows nothing of any
//! UI: it turns file-system notices into [`Change`]s on a channel; the CLI prints them, the
//! desktop shell forwards them.
//!
//! Only the runs directories themselves are watched, never each `.values/` directory: the harness
//! writes a value file just before the transcript line that refers to it, so the line's arrival
//! tells of the value too, and the number of watches stays one per runs directory, far from
//! inotify's limits. Files removed inside a value directory touch only that directory, so the
//! value directories are looked at (one `stat` each) every second. When native watching fails
//! (limits, network file systems) the watcher falls back to polling and says so.

mod dir_state;
mod foreign;
mod list;
mod session;
mod tail;
mod watcher;

pub use list::{DirStatus, RunKey, RunList, RunPatch, RunRow, RunUpdate};
pub use session::{ChangeSink, LiveSession, UpdateSink};
pub use tail::{Tail, TailUpdate};
pub use watcher::{
    poll_asked, watch, watch_polling, watch_with, FirstLook, WatchHandle, POLL, VALUES_CHECK,
};

use serde::Serialize;
use ts_rs::TS;

/// One appended event: its transcript line and type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LineRef {
    pub line: u64,
    #[serde(rename = "type")]
    pub kind: String,
}

/// What changed in a runs directory.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(
    tag = "kind",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Change {
    /// A transcript or summary appeared.
    RunAdded {
        dir: String,
        run: String,
    },
    /// Events were appended (in file order, each exactly once).
    Appended {
        dir: String,
        run: String,
        lines: Vec<LineRef>,
        pending_bytes: u64,
    },
    /// The transcript shrank or was replaced: the run was read again from the start.
    Reset {
        dir: String,
        run: String,
        lines: u64,
    },
    /// The summary was written (at the start or end of a dispatch).
    Summarised {
        dir: String,
        run: String,
    },
    /// The last dispatch ended (`run_result` or `run_error`).
    Finished {
        dir: String,
        run: String,
        status: String,
    },
    /// The transcript and summary are gone.
    RunRemoved {
        dir: String,
        run: String,
    },
    /// A value directory appeared or disappeared.
    ValuesAdded {
        dir: String,
        run: String,
    },
    ValuesRemoved {
        dir: String,
        run: String,
    },
    /// Value files appeared in a value directory that was already there (`values`: their ids).
    /// Seen by a look at the value directories every second.
    ValueFilesAdded {
        dir: String,
        run: String,
        values: Vec<String>,
    },
    /// Value files were removed from a value directory that is still there (by a GC, or by
    /// hand): the run's results they backed are unretained now.
    ValueFilesRemoved {
        dir: String,
        run: String,
        values: Vec<String>,
    },
    /// The watcher's first look at the directory is done. A list read from disk before (the
    /// app lists through the index without waiting for it) may miss what changed meanwhile:
    /// list again. Sent by a live session, not by `mctl watch`.
    Scanned {
        dir: String,
    },
    /// Native watching failed (or polling was asked for); the directory is polled instead,
    /// every `interval_ms`.
    Polling {
        dir: String,
        reason: String,
        interval_ms: u64,
    },
}
