//! The watcher: notify with a debouncer on each runs directory (non-recursive), coalescing bursts,
//! and a polling fallback.

use super::{Change, LineRef, Tail};
use crate::runs::layout::{SUMMARY_SUFFIX, TEMP_SUFFIX, TRANSCRIPT_SUFFIX, VALUES_SUFFIX};
use crate::runs::RunOptions;
use notify::{PollWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer_opt, DebounceEventResult, RecommendedCache};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

/// How long bursts are coalesced.
const DEBOUNCE: Duration = Duration::from_millis(50);
/// The polling interval when native watching fails.
const POLL: Duration = Duration::from_millis(500);

/// Keeps the watchers alive; dropping it stops them.
pub struct WatchHandle {
    _watchers: Vec<Box<dyn std::any::Any + Send>>,
}

/// Watches `dirs`; every change is sent on the returned channel, in order per run. The runs
/// already there are reported as added, so a consumer starts from a full picture.
pub fn watch(
    dirs: &[PathBuf],
    opts: RunOptions,
) -> notify::Result<(WatchHandle, Receiver<Change>)> {
    let (tx, rx) = mpsc::channel();
    let mut watchers: Vec<Box<dyn std::any::Any + Send>> = Vec::new();
    for dir in dirs {
        let state =
            std::sync::Arc::new(std::sync::Mutex::new(DirState::new(dir, opts, tx.clone())));
        state.lock().expect("watch state").scan_all();
        let handler_state = state.clone();
        let handler = move |res: DebounceEventResult| {
            let mut st = handler_state.lock().expect("watch state");
            match res {
                Ok(events) => {
                    let names: BTreeSet<String> = events
                        .iter()
                        .flat_map(|e| e.paths.iter())
                        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
                        .collect();
                    st.touched(&names);
                }
                Err(_) => st.scan_all(),
            }
        };
        let native = new_debouncer_opt::<_, notify::RecommendedWatcher, RecommendedCache>(
            DEBOUNCE,
            None,
            handler.clone(),
            RecommendedCache::new(),
            notify::Config::default(),
        )
        .and_then(|mut d| d.watch(dir, RecursiveMode::NonRecursive).map(|()| d));
        match native {
            Ok(d) => watchers.push(Box::new(d)),
            Err(e) => {
                let _ = tx.send(Change::Polling {
                    dir: dir.display().to_string(),
                    reason: e.to_string(),
                });
                let mut d = new_debouncer_opt::<_, PollWatcher, RecommendedCache>(
                    DEBOUNCE,
                    None,
                    handler,
                    RecommendedCache::new(),
                    notify::Config::default().with_poll_interval(POLL),
                )?;
                d.watch(dir, RecursiveMode::NonRecursive)?;
                watchers.push(Box::new(d));
            }
        }
    }
    Ok((
        WatchHandle {
            _watchers: watchers,
        },
        rx,
    ))
}

/// What the watcher knows of one runs directory.
struct DirState {
    root: PathBuf,
    name: String,
    opts: RunOptions,
    tx: Sender<Change>,
    tails: HashMap<String, Tail>,
    summaries: BTreeSet<String>,
    values: BTreeSet<String>,
}

impl DirState {
    fn new(root: &Path, opts: RunOptions, tx: Sender<Change>) -> Self {
        Self {
            root: root.to_path_buf(),
            name: root.display().to_string(),
            opts,
            tx,
            tails: HashMap::new(),
            summaries: BTreeSet::new(),
            values: BTreeSet::new(),
        }
    }

    fn send(&self, c: Change) {
        let _ = self.tx.send(c);
    }

    /// Looks at every entry (at start, and when the watcher lost events).
    fn scan_all(&mut self) {
        let names: BTreeSet<String> = std::fs::read_dir(&self.root)
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        let mut all = names.clone();
        // Known runs that vanished are looked at too.
        all.extend(
            self.tails
                .keys()
                .map(|id| format!("{id}{TRANSCRIPT_SUFFIX}")),
        );
        all.extend(self.values.iter().map(|id| format!("{id}{VALUES_SUFFIX}")));
        self.touched(&all);
    }

    /// Re-reads what the names touched. Transcripts are read from their last complete line on.
    fn touched(&mut self, names: &BTreeSet<String>) {
        let opts = RunOptions {
            now_ms: crate::runs::now_ms(),
            ..self.opts
        };
        for name in names {
            if name.ends_with(TEMP_SUFFIX) {
                continue;
            }
            if let Some(id) = name
                .strip_suffix(TRANSCRIPT_SUFFIX)
                .filter(|s| !s.is_empty())
            {
                self.transcript(id, opts);
            } else if let Some(id) = name.strip_suffix(SUMMARY_SUFFIX).filter(|s| !s.is_empty()) {
                let exists = self.root.join(name).is_file();
                let known = self.summaries.contains(id);
                if exists && !known && !self.tails.contains_key(id) {
                    self.send(Change::RunAdded {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                }
                if exists {
                    self.summaries.insert(id.to_owned());
                    self.send(Change::Summarised {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                } else if known {
                    self.summaries.remove(id);
                    if !self.tails.contains_key(id) {
                        self.send(Change::RunRemoved {
                            dir: self.name.clone(),
                            run: id.to_owned(),
                        });
                    }
                }
            } else if let Some(id) = name.strip_suffix(VALUES_SUFFIX).filter(|s| !s.is_empty()) {
                let exists =
                    std::fs::symlink_metadata(self.root.join(name)).is_ok_and(|m| m.is_dir());
                let known = self.values.contains(id);
                if exists && !known {
                    self.values.insert(id.to_owned());
                    self.send(Change::ValuesAdded {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                } else if !exists && known {
                    self.values.remove(id);
                    self.send(Change::ValuesRemoved {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                    // Its results are unretained now: the run model is read again. Lines that
                    // arrived meanwhile are still reported as appended, exactly once.
                    if let Some(t) = self.tails.get_mut(id) {
                        let seen = t.lines();
                        *t = Tail::new(&self.root, id, opts);
                        if let Ok(update) = t.poll() {
                            let fresh: Vec<_> = update
                                .events
                                .into_iter()
                                .filter(|e| e.line > seen)
                                .collect();
                            self.report(id, fresh, update.pending_bytes);
                        }
                    }
                }
            }
        }
    }

    fn transcript(&mut self, id: &str, opts: RunOptions) {
        let path = self.root.join(format!("{id}{TRANSCRIPT_SUFFIX}"));
        if !path.is_file() {
            if self.tails.remove(id).is_some() && !self.summaries.contains(id) {
                self.send(Change::RunRemoved {
                    dir: self.name.clone(),
                    run: id.to_owned(),
                });
            }
            return;
        }
        let dir = self.name.clone();
        let is_new = !self.tails.contains_key(id);
        let tail = self
            .tails
            .entry(id.to_owned())
            .or_insert_with(|| Tail::new(&self.root, id, opts));
        if is_new && !self.summaries.contains(id) {
            let _ = self.tx.send(Change::RunAdded {
                dir: dir.clone(),
                run: id.to_owned(),
            });
        }
        let Ok(update) = tail.poll() else { return };
        if update.reset {
            let _ = self.tx.send(Change::Reset {
                dir: dir.clone(),
                run: id.to_owned(),
                lines: tail.lines(),
            });
        }
        self.report(id, update.events, update.pending_bytes);
    }

    /// Sends the appended events of run `id`, and `finished` when one of them ends a dispatch.
    fn report(&self, id: &str, events: Vec<crate::runs::TimelineEvent>, pending_bytes: u64) {
        if events.is_empty() {
            return;
        }
        let dir = self.name.clone();
        let lines: Vec<LineRef> = events
            .iter()
            .map(|e| LineRef {
                line: e.line,
                kind: e.kind.clone(),
            })
            .collect();
        let finished = events
            .iter()
            .any(|e| e.kind == "run_result" || e.kind == "run_error");
        self.send(Change::Appended {
            dir: dir.clone(),
            run: id.to_owned(),
            lines,
            pending_bytes,
        });
        if finished {
            if let Some(t) = self.tails.get(id) {
                self.send(Change::Finished {
                    dir,
                    run: id.to_owned(),
                    status: t.run().status.as_str().to_owned(),
                });
            }
        }
    }
}
