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
mod packed;
mod session;
mod tail;
mod watcher;

pub use list::{DirStatus, RunKey, RunList, RunPatch, RunRow, RunUpdate};
pub use session::{ChangeSink, LiveSession, SharedWatch, UpdateSink};
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
    /// Transcript line of the event (1-based).
    pub line: u64,
    /// Event type (`user_message`, `tool_call_finished`...), or `unreadable`.
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
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Run id.
        run: String,
    },
    /// Events were appended (in file order, each exactly once).
    Appended {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Run id.
        run: String,
        /// The lines appended, each with its event type.
        lines: Vec<LineRef>,
        /// Bytes of a torn last line still waiting for its newline.
        pending_bytes: u64,
    },
    /// The transcript shrank or was replaced: the run was read again from the start.
    Reset {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Run id.
        run: String,
        /// Lines read in the new reading (0 when only the summary is left).
        lines: u64,
    },
    /// The summary was written (at the start or end of a dispatch).
    Summarised {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Run id.
        run: String,
    },
    /// The last dispatch ended (`run_result` or `run_error`).
    Finished {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Run id.
        run: String,
        /// The run's status now (`done`, `error`, `cancelled`).
        status: String,
    },
    /// The transcript and summary are gone.
    RunRemoved {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Run id.
        run: String,
    },
    /// A value directory appeared.
    ValuesAdded {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Id of the run the value directory belongs to.
        run: String,
    },
    /// A value directory disappeared: the run's retained results are unretained now.
    ValuesRemoved {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Id of the run the value directory belonged to.
        run: String,
    },
    /// Value files appeared in a value directory that was already there (`values`: their ids).
    /// Seen by a look at the value directories every second.
    ValueFilesAdded {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Id of the run the value directory belongs to.
        run: String,
        /// Value ids of the files added (their names without `.txt`).
        values: Vec<String>,
    },
    /// Value files were removed from a value directory that is still there (by a GC, or by
    /// hand): the run's results they backed are unretained now.
    ValueFilesRemoved {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Id of the run the value directory belongs to.
        run: String,
        /// Value ids of the files removed (their names without `.txt`).
        values: Vec<String>,
    },
    /// The watcher's first look at the directory is done. A list read from disk before (the
    /// app lists through the index without waiting for it) may miss what changed meanwhile:
    /// list again. Sent by a live session, not by `mctl watch`.
    Scanned {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
    },
    /// Native watching failed (or polling was asked for); the directory is polled instead,
    /// every `interval_ms`.
    Polling {
        /// Path of the runs directory, as it was given to the watcher.
        dir: String,
        /// Why native watching is not used (the error, or that polling was asked for).
        reason: String,
        /// Time between two polls, in milliseconds.
        interval_ms: u64,
    },
}
