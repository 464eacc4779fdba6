//! What an agent's own cleanup will delete of its store: the same figures for every agent
//! that sweeps its own sessions or outputs (Claude Code's `cleanupPeriodDays`, Gemini CLI's
//! `sessionRetention`, opencode's 7 days of saved outputs), so the Storage view and `mctl gc`
//! forecast them alike: what its next cleanup deletes, and what comes within the next days.

use serde::Serialize;
use ts_rs::TS;

/// A day, in milliseconds.
pub const DAY_MS: i64 = 86_400_000;
/// How far ahead the forecast looks ("within 2 days").
pub const SOON_DAYS: u64 = 2;

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
    /// The agent whose own cleanup this is ("Claude Code").
    pub agent: String,
    /// The setting that sets its period (`cleanupPeriodDays`); `null` when the period is the
    /// agent's own and no setting changes it.
    pub setting: Option<String>,
    /// The retention period in effect, in whole days.
    pub period_days: u64,
    /// The retention period in effect, in milliseconds (a setting may say hours).
    pub period_ms: i64,
    /// How many sessions of a project it keeps whatever their age (Gemini CLI's `maxCount`):
    /// the others go too; `null` when it keeps any number.
    pub max_count: Option<u64>,
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
    /// How far ahead the `soon…` figures look, in days.
    pub soon_days: u64,
    /// Sessions kept today that pass the cutoff within `soon_days`.
    pub soon_sessions: u64,
    /// Their transcripts' bytes.
    pub soon_session_bytes: u64,
    /// Value files kept today that pass the cutoff within `soon_days`.
    pub soon_value_files: u64,
    /// Their bytes.
    pub soon_value_bytes: u64,
}

impl AgentSweep {
    /// An empty forecast of `agent`'s cleanup, which keeps what changed within `period_ms`.
    pub fn new(agent: &str, setting: Option<&str>, period_ms: i64, now_ms: i64) -> Self {
        Self {
            agent: agent.to_owned(),
            setting: setting.map(str::to_owned),
            period_days: u64::try_from(period_ms / DAY_MS).unwrap_or(0),
            period_ms,
            cutoff_ms: now_ms.saturating_sub(period_ms),
            soon_days: SOON_DAYS,
            ..Default::default()
        }
    }

    /// Whether a file changed at `time_ms` goes at the next cleanup (`Some(true)`), within
    /// the next `soon_days` (`Some(false)`), or later (`None`).
    fn when(&self, time_ms: Option<i64>) -> Option<bool> {
        let t = time_ms?;
        let soon = self
            .cutoff_ms
            .saturating_add(self.soon_days as i64 * DAY_MS);
        match (t < self.cutoff_ms, t < soon) {
            (true, _) => Some(true),
            (false, true) => Some(false),
            _ => None,
        }
    }

    /// Counts a value file changed at `time_ms`.
    pub fn count_value(&mut self, time_ms: Option<i64>, bytes: u64) {
        match self.when(time_ms) {
            Some(true) => {
                self.value_files += 1;
                self.value_bytes += bytes;
            }
            Some(false) => {
                self.soon_value_files += 1;
                self.soon_value_bytes += bytes;
            }
            None => {}
        }
    }

    /// Counts a session whose transcript changed at `s.modified_ms`.
    pub fn count_session(&mut self, s: SweptSession) {
        let at = s.modified_ms;
        self.count_session_at(s, at)
    }

    /// Counts session `s` as if it changed at `decide_ms` (a session past a count limit goes
    /// whatever its age).
    pub fn count_session_at(&mut self, s: SweptSession, decide_ms: Option<i64>) {
        match self.when(decide_ms) {
            Some(true) => {
                self.session_bytes += s.bytes;
                self.sessions.push(s);
            }
            Some(false) => {
                self.soon_sessions += 1;
                self.soon_session_bytes += s.bytes;
            }
            None => {}
        }
    }
}
