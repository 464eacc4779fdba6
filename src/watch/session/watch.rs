//! The watch behind live sessions: one watcher over some runs directories, its first scan,
//! its models, and the front ends it tells of every change. A desktop window has one of its
//! own; the pages and event streams of `mctl serve` share one ([`SharedWatch`]), so that
//! twenty browser tabs watch a directory once, not twenty times. It runs while some front end
//! is started on it, and stops when the last one stops.

use super::{lock, Front};
use crate::model::{RunOptions, SourceKind};
use crate::watch::watcher::start_kinds;
use crate::watch::{poll_asked, Change, FirstLook, WatchHandle};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

/// How long a list waits for the watcher's first scan before reading the runs itself.
const FIRST_SCAN_WAIT: Duration = Duration::from_secs(120);
/// How long the first look of a process's first watch waits for a front end to paint its list
/// (see [`Watch::hold_first_look`]).
const FIRST_LOOK_HOLD: Duration = Duration::from_secs(3);

/// A watch that several live sessions share (see [`super::LiveSession::sharing`]).
#[derive(Clone, Default)]
pub struct SharedWatch(pub(super) Arc<Watch>);

impl SharedWatch {
    /// A watch watching nothing yet: the first session started on it starts it.
    pub fn new() -> Self {
        Self::default()
    }
}

/// The current watcher, or that one is still on its first scan.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) handle: Option<Arc<WatchHandle>>,
    pub(super) scanning: bool,
}

/// What a watch was started on (the folders of those asked for that were there, the threshold
/// and the running window): a start with the same again changes nothing.
type Started = (Vec<String>, u64, i64);

/// The front ends on the watch and what it was started on, under one lock: a front end that
/// joins as the last one leaves either keeps the watch going or starts it again, never finds
/// it stopped under it.
#[derive(Default)]
struct Members {
    fronts: Vec<Weak<Front>>,
    /// What the running watch was started on; `None` while it is stopped.
    started: Option<Started>,
}

#[derive(Default)]
pub(super) struct Watch {
    pub(super) watcher: (Mutex<Slot>, Condvar),
    /// Bumped by every start and stop: a slow first scan of an older start must not win.
    pub(super) generation: AtomicU64,
    members: Mutex<Members>,
    /// The `polling` notices of the current watcher, told again to a front end that subscribes
    /// after they were sent (the user must know their directory is polled).
    notices: Mutex<Vec<Change>>,
    /// Held while a change is told, and while a front end subscribes: a notice is neither lost
    /// nor told twice. Joining and leaving never wait for it (a page slow to take its changes
    /// holds up no new page).
    pub(super) telling: Mutex<()>,
    pub(super) threshold: AtomicU64,
    /// How long a run without a terminal event counts as running (set by every start).
    pub(super) running_window_ms: AtomicI64,
    /// A list was read from disk while the watcher's first scan was going on.
    pub(super) listed_early: AtomicBool,
    /// The kind of each directory watched, detected once when the watch starts: the watcher,
    /// the list and a follow all read it as that.
    pub(super) kinds: Mutex<HashMap<String, SourceKind>>,
    /// Changes forwarded since the process started: what was computed from the directories
    /// at one count still holds while it is unchanged (see [`super::LiveSession::settled`]).
    pub(super) forwarded: AtomicU64,
    /// Set for a desktop window's watch until it has painted its list: its first look waits
    /// for the paint (see [`Watch::hold_first_look`]). Never set for a served watch, whose
    /// event streams never paint.
    pub(super) hold_for_paint: AtomicBool,
}

/// Clears `scanning` however the start thread ends (a panic included): a list must not wait
/// for a scan that will never finish.
struct ScanDone<'a> {
    watch: &'a Watch,
    mine: u64,
}

impl Drop for ScanDone<'_> {
    fn drop(&mut self) {
        let mut slot = lock(&self.watch.watcher.0);
        if self.watch.generation.load(Ordering::SeqCst) == self.mine {
            slot.scanning = false;
            self.watch.watcher.1.notify_all();
        }
    }
}

impl Watch {
    /// The kind of store `dir` is watched as (detected now for a directory not watched).
    pub(super) fn kind_of(&self, dir: &str) -> SourceKind {
        let known = lock(&self.kinds).get(dir).copied();
        known.unwrap_or_else(|| crate::sources::detect(Path::new(dir)))
    }

    /// Adds `front` to those told of every change (once), and (re)starts watching `dirs` in
    /// the background unless it already watches exactly them so and `again` is false.
    pub(super) fn join(
        self: &Arc<Self>,
        front: &Arc<Front>,
        dirs: &[String],
        threshold: u64,
        running_window_ms: i64,
        again: bool,
    ) {
        let mut members = lock(&self.members);
        members.fronts.retain(|f| f.strong_count() > 0);
        if !(members.fronts.iter()).any(|f| f.as_ptr() == Arc::as_ptr(front)) {
            members.fronts.push(Arc::downgrade(front));
        }
        // The folders there now: one made since the watch started starts it again (a page
        // opened after it appears watches it).
        let present = (dirs.iter()).filter(|d| Path::new(d).is_dir()).cloned();
        let key = (present.collect(), threshold, running_window_ms);
        if again || members.started.as_ref() != Some(&key) {
            members.started = Some(key);
            self.start(dirs, threshold, running_window_ms);
        }
    }

    /// Removes `front`; stops watching when no front end is left.
    pub(super) fn leave(&self, front: &Arc<Front>) {
        let mut members = lock(&self.members);
        let gone = |f: &Weak<Front>| f.strong_count() == 0 || f.as_ptr() == Arc::as_ptr(front);
        members.fronts.retain(|f| !gone(f));
        if members.fronts.is_empty() && members.started.take().is_some() {
            // The watcher's thread ends when its handle goes and its channel closes.
            self.generation.fetch_add(1, Ordering::SeqCst);
            *lock(&self.watcher.0) = Slot::default();
            self.watcher.1.notify_all();
        }
    }

    /// The front ends on the watch now.
    pub(super) fn fronts(&self) -> Vec<Arc<Front>> {
        (lock(&self.members).fronts.iter())
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// The `polling` notices sent so far by the current watcher.
    pub(super) fn notices(&self) -> Vec<Change> {
        lock(&self.notices).clone()
    }

    /// Starts watching `dirs` in the background, the watcher before it stopped (under the
    /// members' lock, with what it is started on already set).
    fn start(self: &Arc<Self>, dirs: &[String], threshold: u64, running_window_ms: i64) {
        let paths: Vec<PathBuf> = dirs
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        self.threshold.store(threshold, Ordering::SeqCst);
        (self.running_window_ms).store(running_window_ms, Ordering::SeqCst);
        let opts = RunOptions {
            threshold,
            running_window_ms,
            ..RunOptions::default()
        };
        lock(&self.kinds).clear();
        // The previous watcher stops now; its thread ends when its channel closes. The start
        // is counted under the slot's lock, so that a handle and the start it belongs to are
        // read together (`settled`).
        let mine = {
            let mut slot = lock(&self.watcher.0);
            *slot = Slot {
                handle: None,
                scanning: true,
            };
            let mine = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
            // A first look held for the start before ends its wait.
            self.watcher.1.notify_all();
            mine
        };
        lock(&self.notices).clear();
        let watch = self.clone();
        std::thread::spawn(move || {
            // Detected here, off the caller's thread: a slow folder holds up no command.
            let kinds: Vec<(PathBuf, SourceKind)> = (paths.iter())
                .map(|p| (p.clone(), crate::sources::detect(p)))
                .collect();
            if watch.generation.load(Ordering::SeqCst) == mine {
                *lock(&watch.kinds) = (kinds.iter())
                    .map(|(p, k)| (p.display().to_string(), *k))
                    .collect();
            }
            watch.run_watcher(&kinds, opts, mine)
        });
    }

    /// Holds the first look of start `mine` of a window's watch back until the window has
    /// painted its list, a list needs the watcher's models, the watch is started again or
    /// stopped, or [`FIRST_LOOK_HOLD`] has passed; once, for the first start. With a warm
    /// index the list is answered from the index without the watcher, and the first look
    /// (about 1.5 s of work on 50,000 runs) would otherwise share the cores with the webview
    /// painting it. Changes made meanwhile are not lost: the first look compares every file
    /// with what the index knows, and a list answered meanwhile is read again after it.
    fn hold_first_look(&self, mine: u64) {
        let (slot, started_or_wanted) = &self.watcher;
        let held = |_: &mut Slot| {
            self.hold_for_paint.load(Ordering::SeqCst)
                && self.generation.load(Ordering::SeqCst) == mine
        };
        let slot = lock(slot);
        let slot = started_or_wanted.wait_timeout_while(slot, FIRST_LOOK_HOLD, held);
        // Held once: a later start looks at once. (A start that replaced this one while it
        // waited keeps the hold for itself.)
        if self.generation.load(Ordering::SeqCst) == mine {
            self.hold_for_paint.store(false, Ordering::SeqCst);
        }
        drop(slot);
    }

    /// Lets first looks start at once, a held one included: the list is painted, or a list
    /// waits for the watcher's models.
    pub(super) fn want_first_look(&self) {
        self.hold_for_paint.store(false, Ordering::SeqCst);
        // Told under the slot's lock: a first look about to wait sees the flag or the notice.
        let _slot = lock(&self.watcher.0);
        self.watcher.1.notify_all();
    }

    /// Whether a watcher runs (or is starting).
    pub(super) fn running(&self) -> bool {
        lock(&self.members).started.is_some()
    }

    /// The current watcher, once its first scan is done (waiting for it with `wait`).
    pub(super) fn handle(&self, wait: bool) -> Option<Arc<WatchHandle>> {
        let (slot, scanned) = &self.watcher;
        let mut slot = lock(slot);
        if wait {
            slot = scanned
                .wait_timeout_while(slot, FIRST_SCAN_WAIT, |s| s.scanning)
                .map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
        slot.handle.clone()
    }

    /// The watcher thread of start `mine`: first scan, then every change told to every front
    /// end and their followed runs advanced, until a newer start (or a stop) takes over.
    fn run_watcher(&self, paths: &[(PathBuf, SourceKind)], opts: RunOptions, mine: u64) {
        let done = ScanDone { watch: self, mine };
        self.hold_first_look(mine);
        if self.generation.load(Ordering::SeqCst) != mine {
            return; // stopped or started again while held
        }
        // The list comes from the index or the watcher's models, never from the first scan's
        // changes: the runs the index vouches for need not be read to watch them.
        let first_look = tracing::info_span!("watch_first_look", dirs = paths.len()).entered();
        let started = start_kinds(paths, opts, poll_asked(false), FirstLook::Untold(None));
        if started.is_ok() {
            tracing::info!(
                since_start_ms = crate::since_start_ms(),
                "the watch is up: its first look is done"
            );
        }
        drop(first_look);
        let (handle, rx) = match started {
            Ok(started) => started,
            Err(e) => {
                tracing::warn!("watching {paths:?} failed: {e}; lists read the runs themselves");
                // The next start tries again.
                let mut members = lock(&self.members);
                if self.generation.load(Ordering::SeqCst) == mine {
                    members.started = None;
                }
                return;
            }
        };
        // What the first scan reported is in the watcher's models, which the list is read
        // from: only the polling notices are news to the front ends.
        for change in rx.try_iter() {
            if self.generation.load(Ordering::SeqCst) != mine {
                return; // a newer start took over: its own notices are the ones that hold
            }
            if let Change::Polling { .. } = change {
                self.forward(change, mine);
            }
        }
        {
            let mut slot = lock(&self.watcher.0);
            if self.generation.load(Ordering::SeqCst) != mine {
                return; // a newer start took over while this one scanned
            }
            slot.handle = Some(Arc::new(handle));
        }
        drop(done);
        if self.listed_early.swap(false, Ordering::SeqCst) {
            for (dir, _) in paths {
                let scanned = Change::Scanned {
                    dir: dir.display().to_string(),
                };
                self.forward(scanned, mine);
            }
        }
        for change in rx {
            if self.generation.load(Ordering::SeqCst) != mine {
                return;
            }
            self.forward(change.clone(), mine);
            for front in self.fronts() {
                front.advance_follower(&change);
            }
        }
    }

    /// Tells `change` of start `mine` to every front end, and keeps it when it is a polling
    /// notice; nothing of a start a newer one replaced (checked under the notices' lock, which
    /// a start clears them under after it is counted: no stale notice is kept).
    fn forward(&self, change: Change, mine: u64) {
        let _telling = lock(&self.telling);
        {
            let mut notices = lock(&self.notices);
            if self.generation.load(Ordering::SeqCst) != mine {
                return;
            }
            if let Change::Polling { .. } = change {
                notices.push(change.clone());
            }
        }
        self.forwarded.fetch_add(1, Ordering::SeqCst);
        for front in self.fronts() {
            if let Some(sink) = lock(&front.changes).as_ref() {
                sink(change.clone());
            }
        }
    }
}
