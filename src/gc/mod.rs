//! Garbage collection of value directories (spec B.6): the only code that deletes anything, so
//! the most careful. It plans first ([`plan`]), listing every file it would delete with its reason
//! and what deleting it costs the next resume; it deletes only on [`apply`], which re-checks every
//! file against the plan just before deleting it. In the harness's runs directory it deletes
//! nothing but `*.txt` regular files directly inside a `<run>.values/` directory, then that
//! directory once empty unless it is also a run's own folder; in another agent's store, only the
//! files its source recognises as that agent's saved outputs of one session (docs/gc.md). It
//! never follows a symbolic link.

mod apply;
mod audit;
mod candidates;
mod journal;
pub(crate) mod owners;
mod plan;
mod policies;
mod storage;

pub use apply::{apply, delete_elsewhere, DeleteElsewhere, Progress};
pub use audit::AUDIT_FILE;
pub use plan::plan;
pub use storage::{storage, StorageRow, StorageRun, StorageStats};

/// Why an apply cannot start: another holds what it needs (the lock of its runs directory, or
/// the front end's one apply at a time).
pub(crate) fn busy() -> crate::Error {
    crate::Error::new(
        crate::ErrorCode::Busy,
        "another garbage collection is running",
    )
}

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Which value files to collect. Policies combine: a file is collected when any selects it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct GcPolicy {
    /// Runs whose last activity is older than this.
    pub older_than_ms: Option<i64>,
    /// Keep the values of the newest N runs that have values; collect the rest.
    pub keep_last: Option<u64>,
    /// Bring the total of value bytes under this, oldest runs first.
    pub max_bytes: Option<u64>,
    /// Value directories whose run is gone.
    pub orphans: bool,
    /// Value files that match no result of their run.
    pub strays: bool,
    /// A run changed within this window is never touched (default 10 minutes).
    pub idle_guard_ms: i64,
}

/// Default idle guard, in milliseconds (10 minutes): a run changed more recently is left alone.
pub const DEFAULT_IDLE_GUARD_MS: i64 = 10 * 60 * 1000;

impl Default for GcPolicy {
    /// No policy selected, and the 10-minute idle guard.
    fn default() -> Self {
        Self {
            older_than_ms: None,
            keep_last: None,
            max_bytes: None,
            orphans: false,
            strays: false,
            idle_guard_ms: DEFAULT_IDLE_GUARD_MS,
        }
    }
}

/// Which policy selected a file (the first that did, when several would).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum GcReason {
    /// Its run's last activity is older than `olderThanMs`.
    Age,
    /// Its run is not one of the newest `keepLast` runs that have values.
    KeepLast,
    /// Its run's values go to bring the total under `maxBytes`, oldest runs first.
    Budget,
    /// Its value directory's run is gone.
    Orphan,
    /// It matches no result of its run.
    Stray,
}

/// One file a plan would delete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GcFile {
    /// Relative to the runs directory: `<run>.values/<value id>.txt`.
    pub path: String,
    /// Id of the run whose value directory holds the file (an orphan's: the id in its name).
    pub run: String,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// Which policy selected the file.
    pub reason: GcReason,
    /// Bytes the next resume of the run carries again once this file is gone: the full text of
    /// the result it backs (0 for strays and orphans).
    pub context_bytes: u64,
    /// Modification time when planned, in nanoseconds (as a string: too big for a JS number).
    pub mtime_ns: String,
    /// The run's transcript and summary (sizes and times) when planned: if they change, the run
    /// is active again and its files are left alone.
    pub run_stamp: String,
}

/// What collecting a run's files costs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GcRun {
    /// Id of the run (an orphan's: the id in its value directory's name).
    pub run: String,
    /// The run's title (its first user message), for people; empty for an orphan, and in the
    /// report of an apply.
    #[serde(default)]
    pub title: String,
    /// Files of the run the plan would delete (or the apply deleted).
    pub files: u64,
    /// Their size in bytes.
    pub bytes: u64,
    /// Bytes the next resume of the run carries again: the full texts of the results they back.
    pub context_bytes: u64,
    /// `context_bytes / 4`: about how many tokens the next resume carries again.
    pub context_tokens: u64,
    /// The run's transcript is gone: its value directory is an orphan.
    pub orphan: bool,
}

/// Something a plan or an apply left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GcSkip {
    /// A file (relative to the runs directory), or a run's value directory (ending in `/`).
    pub path: String,
    /// Why it was left alone (`pinned`, `cancelled`, changed since the plan...).
    pub reason: String,
}

/// A plan (`applied: false`) or the outcome of applying one.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GcReport {
    /// False for a plan (nothing deleted), true for the outcome of an apply.
    pub applied: bool,
    /// Planned: the files to delete. Applied: the files deleted.
    pub files: Vec<GcFile>,
    /// Total size of `files` in bytes.
    pub total_bytes: u64,
    /// Per run, what collecting its files costs it, in run id order.
    pub runs: Vec<GcRun>,
    /// Bytes the next resumes carry again, over every run.
    pub context_bytes: u64,
    /// `contextBytes / 4`: about how many tokens the next resumes carry again.
    pub context_tokens: u64,
    /// Files left alone, and why (changed since the plan, run active or pinned, cancelled...).
    pub skipped: Vec<GcSkip>,
    /// Value directories removed because they became empty.
    pub removed_dirs: Vec<String>,
    /// Files carried over from an apply that was interrupted.
    pub resumed: u64,
    /// The apply was stopped before its end; the files not reached are in `skipped`.
    pub cancelled: bool,
    /// For a store whose agent cleans up after itself (Claude Code, Gemini CLI, opencode): what
    /// its own cleanup deletes at its next start, whatever this plan does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent_sweep: Option<crate::sources::sweep::AgentSweep>,
}

impl GcReport {
    /// Recomputes the totals and per-run figures from `files`.
    pub(crate) fn total(&mut self) {
        use std::collections::BTreeMap;
        let mut runs: BTreeMap<String, GcRun> = BTreeMap::new();
        for f in &self.files {
            // Files come grouped by run: look the run up before making a key for it.
            if !runs.contains_key(&f.run) {
                let run = GcRun {
                    run: f.run.clone(),
                    title: String::new(),
                    files: 0,
                    bytes: 0,
                    context_bytes: 0,
                    context_tokens: 0,
                    orphan: f.reason == GcReason::Orphan,
                };
                runs.insert(f.run.clone(), run);
            }
            let r = runs.get_mut(&f.run).expect("inserted above");
            r.files += 1;
            r.bytes += f.bytes;
            r.context_bytes += f.context_bytes;
            r.context_tokens = r.context_bytes / 4;
        }
        self.total_bytes = self.files.iter().map(|f| f.bytes).sum();
        self.context_bytes = self.files.iter().map(|f| f.context_bytes).sum();
        self.context_tokens = self.context_bytes / 4;
        self.runs = runs.into_values().collect();
    }
}
