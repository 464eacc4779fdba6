//! Search across the runs directories shown: a call into the core's `search`, its hits
//! streamed to the window in batches; a new search cancels the one before it.

use crate::commands::{blocking, Res};
use crate::state::AppState;
use mission_control::search::{Batches, Kinds, SearchQuery, SearchSummary};
use mission_control::wire::command as c;
use mission_control::wire::SearchBatch;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

/// Hits per message to the window, at most, and how long hits wait to be sent with others.
const BATCH: usize = 2000;
const BATCH_WAIT: Duration = Duration::from_millis(80);

#[tauri::command]
pub async fn search(
    app: AppHandle,
    req: c::search::Request,
    channel: Channel<c::search::Stream>,
) -> Res<c::search::Response> {
    blocking(app, move |state, _| {
        let cancel = state.start_search();
        let kinds = req.kinds.as_deref().map_or(Kinds::ALL, Kinds::of);
        let mut total = SearchSummary::default();
        for dir in &req.dirs {
            let d = state.runs_dir(dir)?;
            let query = SearchQuery {
                pattern: req.pattern.clone(),
                regex: req.regex,
                ignore_case: req.ignore_case,
                run: req.run.clone(),
                kinds,
                max: req.max.map(|m| m.saturating_sub(total.hits)),
            };
            let send = |hits| {
                let _ = channel.send(SearchBatch {
                    dir: dir.clone(),
                    hits,
                });
            };
            let batches = Batches::new(send, BATCH, BATCH_WAIT);
            let done = AtomicBool::new(false);
            // Hits found just after a batch went wait for the next to be found, or for this
            // tick: none waits longer than BATCH_WAIT.
            let summary = std::thread::scope(|s| {
                let ticker = s.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        std::thread::park_timeout(BATCH_WAIT);
                        batches.flush();
                    }
                });
                let summary = d.search(&query, &cancel, &|hits| batches.push(hits));
                done.store(true, Ordering::Relaxed);
                ticker.thread().unpark();
                summary
            })?;
            batches.flush();
            merge(&mut total, summary);
            if total.truncated || total.cancelled {
                break;
            }
        }
        Ok(total)
    })
    .await
}

/// Stops the running search between two files.
#[tauri::command]
pub fn search_cancel(state: State<'_, AppState>) {
    state.start_search().store(true, Ordering::Relaxed);
}

fn merge(total: &mut SearchSummary, s: SearchSummary) {
    total.hits += s.hits;
    total.files += s.files;
    total.bytes += s.bytes;
    total.elapsed_ms += s.elapsed_ms;
    total.truncated |= s.truncated;
    total.cancelled |= s.cancelled;
    total.runs += s.runs;
    total.skipped.extend(s.skipped);
}

impl AppState {
    /// Cancels the search running, if any, and returns the flag of the one starting.
    fn start_search(&self) -> Arc<AtomicBool> {
        let fresh = Arc::new(AtomicBool::new(false));
        let mut current = self.search.lock().expect("search lock");
        current.store(true, Ordering::Relaxed);
        *current = fresh.clone();
        fresh
    }
}
