//! A live session: what a front end (the desktop window, later a browser) keeps while it shows
//! runs directories. One watcher over the directories shown, its changes sent to the front end's
//! sink in order; the list of runs (`listing.rs`: through the index, or from the watcher's models
//! once its first scan is done, rather than reading every transcript twice); and the open run
//! followed, each new event sent once.
//!
//! It knows nothing of any front end: changes and run updates go to sinks (closures), so the
//! desktop shell passes one that sends on its IPC channel, and tests pass one that collects.

mod listing;

use super::watcher::start_kinds;
use super::RunUpdate;
use super::{poll_asked, Change, FirstLook, Tail, WatchHandle};
use crate::error::{Error, ErrorCode, Result};
use crate::model::layout::is_valid_run_id;
use crate::model::{now_ms, Run, RunOptions, SourceKind, TimelineEvent};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Receives every change of the directories shown, in order.
pub type ChangeSink = Box<dyn Fn(Change) + Send + Sync>;
/// Receives the updates of a followed run, in order.
pub type UpdateSink = Box<dyn Fn(RunUpdate) + Send + Sync>;

/// How long a list waits for the watcher's first scan before reading the runs itself.
const FIRST_SCAN_WAIT: Duration = Duration::from_secs(120);

/// The current watcher, or that one is still on its first scan.
#[derive(Default)]
struct Slot {
    handle: Option<Arc<WatchHandle>>,
    scanning: bool,
}

/// The front end's sink, and the `polling` notices of the current watcher (told again to a
/// front end that subscribes after they were sent: the user must know their directory is
/// polled). One lock for both, so a notice is neither lost nor told twice.
#[derive(Default)]
struct Subscriber {
    sink: Option<ChangeSink>,
    notices: Vec<Change>,
}

/// The open run being followed.
struct Follower {
    dir: String,
    run: String,
    tail: Tail,
    /// Last line the view has.
    shown: u64,
    token: u64,
    /// The threshold and running window it reads with.
    threshold: (u64, i64),
    sink: UpdateSink,
}

/// The follower slot holds the follower behind a lock of its own: the slot's lock is only ever
/// held for a moment (to find or swap the follower), while the follower's lock is held while its
/// transcript is read. So ending a follow never waits behind the watcher's reading to find it.
type FollowerCell = Arc<Mutex<Follower>>;

/// The follower with what finds it (kept outside its lock, so finding it never waits for a
/// read): its token, runs directory and run.
struct SlotEntry {
    token: u64,
    dir: String,
    run: String,
    cell: FollowerCell,
}

type FollowerSlot = Option<SlotEntry>;

#[derive(Default)]
struct Shared {
    watcher: (Mutex<Slot>, Condvar),
    /// Bumped by every start: a slow first scan of an older start must not win.
    generation: AtomicU64,
    changes: Mutex<Subscriber>,
    follower: Mutex<FollowerSlot>,
    /// The newest follow token seen, and the newest ended. The front end numbers its follows
    /// in the order the user opens runs; requests may be handled in another order, so a slow
    /// follow of a run the user already left must not replace the follow of the run they look
    /// at, nor outlive its own unfollow.
    latest: AtomicU64,
    ended: AtomicU64,
    threshold: AtomicU64,
    /// How long a run without a terminal event counts as running (set by every start).
    running_window_ms: std::sync::atomic::AtomicI64,
    /// A list was read from disk while the watcher's first scan was going on.
    listed_early: AtomicBool,
    /// The kind of each directory watched, detected once when the watch starts: the watcher,
    /// the list and a follow all read it as that.
    kinds: Mutex<HashMap<String, SourceKind>>,
    /// Changes forwarded since the process started: what was computed from the directories
    /// at one count still holds while it is unchanged (see [`LiveSession::settled`]).
    forwarded: AtomicU64,
}

impl Shared {
    /// The kind of store `dir` is watched as (detected now for a directory not watched).
    fn kind_of(&self, dir: &str) -> SourceKind {
        let known = lock(&self.kinds).get(dir).copied();
        known.unwrap_or_else(|| crate::sources::detect(Path::new(dir)))
    }
}

/// A live session over some runs directories. Cheap to share: clone the `Arc` it lives in.
#[derive(Default)]
pub struct LiveSession {
    shared: Arc<Shared>,
}

/// Clears `scanning` however the start thread ends (a panic included): a list must not wait
/// for a scan that will never finish.
struct ScanDone<'a> {
    shared: &'a Shared,
    mine: u64,
}

impl Drop for ScanDone<'_> {
    fn drop(&mut self) {
        let mut slot = lock(&self.shared.watcher.0);
        if self.shared.generation.load(Ordering::SeqCst) == self.mine {
            slot.scanning = false;
            self.shared.watcher.1.notify_all();
        }
    }
}

impl LiveSession {
    /// Where the watch of `dir` stands, when it is watched and its first scan is over: a key
    /// that changes with every change the watcher reports (and every start), so that what was
    /// computed from the directory under one key holds until the key changes. `None` when the
    /// directory is not watched, or not yet.
    pub fn settled(&self, dir: &str) -> Option<(u64, u64)> {
        let shared = &self.shared;
        // The handle and its start, read together: a handle is set only by the watcher of the
        // start in effect, under this lock, and a new start clears it under it.
        let generation = {
            let slot = lock(&shared.watcher.0);
            slot.handle.as_ref()?;
            shared.generation.load(Ordering::SeqCst)
        };
        if !lock(&shared.kinds).contains_key(dir) {
            return None;
        }
        Some((generation, shared.forwarded.load(Ordering::SeqCst)))
    }

    /// A session watching nothing yet: [`start`](Self::start) it.
    pub fn new() -> Self {
        Self::default()
    }

    /// (Re)starts watching `dirs`, in the background (the first scan reads every transcript);
    /// changes go to the sink given to [`LiveSession::subscribe`].
    pub fn start(&self, dirs: &[String], threshold: u64) {
        self.start_with(dirs, threshold, RunOptions::default().running_window_ms);
    }

    /// [`start`](Self::start) with a running window of `running_window_ms` rather than the
    /// default (the app's setting, `mctl serve --running-window`).
    pub fn start_with(&self, dirs: &[String], threshold: u64, running_window_ms: i64) {
        let paths: Vec<PathBuf> = dirs
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        let shared = self.shared.clone();
        shared.threshold.store(threshold, Ordering::SeqCst);
        shared
            .running_window_ms
            .store(running_window_ms, Ordering::SeqCst);
        let opts = RunOptions {
            threshold,
            running_window_ms,
            ..RunOptions::default()
        };
        lock(&shared.kinds).clear();
        // The previous watcher stops now; its thread ends when its channel closes. The start
        // is counted under the slot's lock, so that a handle and the start it belongs to are
        // read together (`settled`).
        let mine = {
            let mut slot = lock(&shared.watcher.0);
            *slot = Slot {
                handle: None,
                scanning: true,
            };
            shared.generation.fetch_add(1, Ordering::SeqCst) + 1
        };
        lock(&shared.changes).notices.clear();
        std::thread::spawn(move || {
            // Detected here, off the caller's thread: a slow folder holds up no command.
            let kinds: Vec<(PathBuf, SourceKind)> = (paths.iter())
                .map(|p| (p.clone(), crate::sources::detect(p)))
                .collect();
            if shared.generation.load(Ordering::SeqCst) == mine {
                *lock(&shared.kinds) = (kinds.iter())
                    .map(|(p, k)| (p.display().to_string(), *k))
                    .collect();
            }
            shared.run_watcher(&kinds, opts, mine)
        });
    }

    /// Stops watching (the front end is gone): the watcher ends, the followed run is no longer
    /// followed, and nothing more is sent to the sink, which is dropped.
    pub fn stop(&self) {
        let shared = &self.shared;
        shared.generation.fetch_add(1, Ordering::SeqCst);
        *lock(&shared.watcher.0) = Slot::default();
        shared.watcher.1.notify_all();
        lock(&shared.changes).sink = None;
        let follower = lock(&shared.follower).take();
        shared.ended.store(u64::MAX, Ordering::SeqCst);
        // Wait for a read in progress: it checks `ended` before it sends.
        if let Some(entry) = follower {
            drop(lock(&entry.cell));
        }
    }

    /// Sends every change to `sink` from now on, after the `polling` notices already sent. A
    /// new front end numbers its follows from 1 again.
    pub fn subscribe(&self, sink: ChangeSink) {
        let mut sub = lock(&self.shared.changes);
        for notice in &sub.notices {
            sink(notice.clone());
        }
        sub.sink = Some(sink);
        self.shared.latest.store(0, Ordering::SeqCst);
        self.shared.ended.store(0, Ordering::SeqCst);
    }

    /// Run `run` of `dir` as the watcher knows it, without reading its transcript again:
    /// `None` when the watcher is still on its first scan (or does not watch `dir`), `Some(None)`
    /// when there is no such run.
    pub fn run(&self, dir: &str, run: &str) -> Option<Option<Run>> {
        let handle = self.shared.handle(false)?;
        handle.watches(dir).then(|| handle.run(dir, run))
    }

    /// Follows `run` of `dir` from after line `shown` (what the view already has): its new
    /// timeline entries and figures go to `sink`, each event once, until
    /// [`unfollow`](Self::unfollow) of `token` or a newer follow. Reads the transcript up to
    /// where the view is, so call it off any thread that must not wait.
    pub fn follow(
        &self,
        dir: String,
        run: String,
        shown: u64,
        token: u64,
        sink: UpdateSink,
    ) -> Result<()> {
        self.follow_from(dir, run, shown, None, token, sink)
    }

    /// [`follow`](Self::follow) by a view that read `bytes` of complete lines: when the index
    /// vouches for exactly those, the follow starts from it and reads nothing until the
    /// transcript changes (the view has just read a transcript that may be hundreds of
    /// megabytes). Else, or without `bytes`, the transcript is read again.
    pub fn follow_from(
        &self,
        dir: String,
        run: String,
        shown: u64,
        bytes: Option<u64>,
        token: u64,
        sink: UpdateSink,
    ) -> Result<()> {
        // A name like `../x` is no run: nothing outside the directory is read.
        if !is_valid_run_id(&run) {
            let message = format!("{run:?} is not a run id");
            return Err(Error::new(ErrorCode::UnknownRun, message));
        }
        let shared = &self.shared;
        if shared.latest.fetch_max(token, Ordering::SeqCst) > token || shared.stale(token) {
            return Ok(()); // a newer follow came first, or this one already ended
        }
        let threshold = (
            shared.threshold.load(Ordering::SeqCst),
            shared.running_window_ms.load(Ordering::SeqCst),
        );
        // The view has just read the run whole: when the index vouches for exactly what it read,
        // nothing is read again until it changes (hundreds of megabytes would take seconds).
        let opts = follow_opts(threshold);
        let root = Path::new(&dir);
        let kind = shared.kind_of(&dir);
        if !kind.capabilities().flat_names {
            // Another agent's run is not tailed line by line: the watch reads it again when it
            // changes, and the list says so.
            return Ok(());
        }
        let kept = bytes.and_then(|b| Tail::from_index(root, kind, &run, opts, b));
        let tail = kept.unwrap_or_else(|| Tail::new(root, &run, opts));
        let cell = Arc::new(Mutex::new(Follower {
            dir: dir.clone(),
            run: run.clone(),
            tail,
            shown,
            token,
            threshold,
            sink,
        }));
        // The follower is in the slot before its first read, and its lock is held through that
        // read: a change of this run the watcher handles meanwhile waits for it and then finds
        // nothing left to send (each event once, in order); an unfollow meanwhile waits for it
        // too, and nothing is sent after the unfollow returns. Changes of other runs do not
        // wait: they find the follower by the run named beside it.
        let mut f = lock(&cell);
        {
            let mut slot = lock(&shared.follower);
            if shared.stale(token) {
                return Ok(());
            }
            *slot = Some(SlotEntry {
                token,
                dir,
                run,
                cell: cell.clone(),
            });
        }
        f.advance(false, shared);
        Ok(())
    }

    /// Ends follow `token` (not a newer one), also when it is still starting. When it returns,
    /// the follow sends nothing more; it may wait for a read of the followed run in progress,
    /// so call it off any thread that must not wait.
    pub fn unfollow(&self, token: u64) {
        let shared = &self.shared;
        shared.ended.fetch_max(token, Ordering::SeqCst);
        let ended = {
            let mut slot = lock(&shared.follower);
            match slot.take() {
                Some(entry) if entry.token == token => Some(entry.cell),
                other => {
                    *slot = other;
                    None
                }
            }
        };
        // Wait for a read in progress: it checks `ended` before it sends.
        if let Some(cell) = ended {
            drop(lock(&cell));
        }
    }
}

impl Shared {
    /// Whether follow `token` is no longer the one to keep.
    fn stale(&self, token: u64) -> bool {
        self.latest.load(Ordering::SeqCst) != token || self.ended.load(Ordering::SeqCst) >= token
    }

    /// The current watcher, once its first scan is done (waiting for it with `wait`).
    fn handle(&self, wait: bool) -> Option<Arc<WatchHandle>> {
        let (slot, scanned) = &self.watcher;
        let mut slot = lock(slot);
        if wait {
            slot = scanned
                .wait_timeout_while(slot, FIRST_SCAN_WAIT, |s| s.scanning)
                .map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
        slot.handle.clone()
    }

    /// The watcher thread of start `mine`: first scan, then every change forwarded and the
    /// followed run advanced, until a newer start takes over.
    fn run_watcher(&self, paths: &[(PathBuf, SourceKind)], opts: RunOptions, mine: u64) {
        let done = ScanDone { shared: self, mine };
        // The list comes from the index or the watcher's models, never from the first scan's
        // changes: the runs the index vouches for need not be read to watch them.
        let started = start_kinds(paths, opts, poll_asked(false), FirstLook::Index(None));
        let (handle, rx) = match started {
            Ok(started) => started,
            Err(e) => {
                tracing::warn!("watching {paths:?} failed: {e}; lists read the runs themselves");
                return;
            }
        };
        // What the first scan reported is in the watcher's models, which the list is read
        // from: only the polling notices are news to the front end.
        for change in rx.try_iter() {
            if let Change::Polling { .. } = change {
                self.forward(change);
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
                self.forward(Change::Scanned {
                    dir: dir.display().to_string(),
                });
            }
        }
        for change in rx {
            if self.generation.load(Ordering::SeqCst) != mine {
                return;
            }
            self.forward(change.clone());
            self.advance_follower(&change);
        }
    }

    /// Sends `change` to the front end, and keeps it when it is a polling notice.
    fn forward(&self, change: Change) {
        self.forwarded.fetch_add(1, Ordering::SeqCst);
        let mut sub = lock(&self.changes);
        if let Change::Polling { .. } = change {
            sub.notices.push(change.clone());
        }
        if let Some(sink) = sub.sink.as_ref() {
            sink(change);
        }
    }

    /// Reads the followed run's new lines when `change` is about it.
    fn advance_follower(&self, change: &Change) {
        let (dir, run) = match change {
            Change::Appended { dir, run, .. }
            | Change::Reset { dir, run, .. }
            | Change::ValuesRemoved { dir, run }
            | Change::ValueFilesRemoved { dir, run, .. } => (dir, run),
            _ => return,
        };
        let reread = matches!(
            change,
            Change::ValuesRemoved { .. } | Change::ValueFilesRemoved { .. }
        );
        // Found under the slot's lock, read under the follower's own.
        let cell = lock(&self.follower)
            .as_ref()
            .filter(|e| &e.dir == dir && &e.run == run)
            .map(|e| e.cell.clone());
        if let Some(cell) = cell {
            lock(&cell).advance(reread, self);
        }
    }
}

/// What a follow reads with: the session's threshold and running window, and the clock now.
fn follow_opts((threshold, running_window_ms): (u64, i64)) -> RunOptions {
    RunOptions {
        threshold,
        running_window_ms,
        now_ms: now_ms(),
        ..RunOptions::default()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // What a panicking holder leaves is plain data: go on with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Follower {
    /// Reads what was appended and sends what the view does not have yet, unless the follow
    /// ended meanwhile.
    fn advance(&mut self, reread: bool, shared: &Shared) {
        if reread {
            // Value files were removed: retention states changed; read the run again.
            self.tail = Tail::new(Path::new(&self.dir), &self.run, follow_opts(self.threshold));
        }
        let Ok(update) = self.tail.poll() else { return };
        let events: Vec<TimelineEvent> = update
            .events
            .into_iter()
            .filter(|e| e.line > self.shown)
            .collect();
        if let Some(last) = events.last() {
            self.shown = last.line;
        }
        // A replaced transcript, or values gone (retention states changed): the view reloads.
        let reset = update.reset || reread;
        if reset {
            self.shown = self.tail.lines();
        }
        if (!events.is_empty() || reset) && !shared.stale(self.token) {
            (self.sink)(RunUpdate {
                reset,
                events,
                run: self.tail.run(),
            });
        }
    }
}
