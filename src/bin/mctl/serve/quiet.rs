//! Quiet logs under abuse: what the server refuses or sheds is counted per reason and said once
//! per interval at INFO ("refused 4,045 requests in the last minute: …"), each one at DEBUG. A
//! flood then costs the log a line a minute, not a line a request.

use mission_control::sync::lock;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the counts are said.
const INTERVAL: Duration = Duration::from_secs(60);

/// Counts per reason since the last summary.
#[derive(Default)]
pub struct Tally(Mutex<BTreeMap<String, u64>>);

impl Tally {
    /// Counts one more for `reason`.
    pub fn note(&self, reason: &str) {
        tracing::debug!("{reason}");
        let mut counts = lock(&self.0);
        match counts.get_mut(reason) {
            Some(n) => *n += 1,
            None => {
                counts.insert(reason.to_string(), 1);
            }
        }
    }

    /// Counts a failed `accept`, by what failed.
    pub fn note_error(&self, e: &std::io::Error) {
        self.note(&format!("accept failed ({e})"));
    }

    /// The counts since the last call, as `N reason` clauses; `None` when there are none.
    fn take(&self) -> Option<(u64, String)> {
        let counts = std::mem::take(&mut *lock(&self.0));
        let total = counts.values().sum();
        let said: Vec<String> = counts.iter().map(|(why, n)| format!("{n} {why}")).collect();
        (total > 0).then(|| (total, said.join("; ")))
    }
}

fn interval() -> Duration {
    // A test sets `MCTL_TEST_LOG_INTERVAL_MS` to read a summary without waiting a minute.
    crate::hooks::duration("MCTL_TEST_LOG_INTERVAL_MS", INTERVAL)
}

/// Says what `refused` and `shed` counted, once per interval, for as long as the server runs.
pub async fn summarise(refused: Arc<Tally>, shed: Arc<Tally>) {
    let every = interval();
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    let per = humantime::format_duration(every);
    loop {
        tick.tick().await;
        if let Some((n, why)) = refused.take() {
            tracing::info!("refused {n} requests in the last {per}: {why}");
        }
        if let Some((n, why)) = shed.take() {
            tracing::info!("shed {n} connections in the last {per}: {why}");
        }
    }
}
