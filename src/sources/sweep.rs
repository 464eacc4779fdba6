//! What an agent's own cleanup will delete of its store: the same figures for every agent
//! that sweeps its own sessions or outputs (Claude Code's `cleanupPeriodDays`), so the Storage
//! view and `mctl gc` forecast it alike.

use serde::Serialize;
use ts_rs::TS;

/// One session the agent's cleanup will delete.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SweptSession {
    /// Session id.
    pub run: String,
    /// The session's title.
    pub title: String,
    /// Its transcript's bytes.
    pub bytes: u64,
    /// Its transcript's last modification, in milliseconds since the Unix epoch.
    pub modified_ms: Option<i64>,
}

/// What the agent's next cleanup deletes of this store.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentSweep {
    /// The retention period in effect, in days.
    pub period_days: u64,
    /// The settings file it was read from; `null` when there is none (the default applies).
    pub settings_file: Option<String>,
    /// Files modified before this are deleted.
    pub cutoff_ms: i64,
    /// Sessions whose transcript goes, oldest first.
    pub sessions: Vec<SweptSession>,
    /// Their transcripts' bytes.
    pub session_bytes: u64,
    /// Value files that go (in sessions kept too: each file goes by its own age).
    pub value_files: u64,
    /// Their bytes.
    pub value_bytes: u64,
}
