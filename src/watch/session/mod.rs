//! A live session: what a front end (the desktop window, a browser page) keeps while it shows
//! runs directories. One watcher over the directories shown (`watch.rs`: the window's own, or
//! one shared by every page of a server), its changes sent to the front end's sink in order; the list of runs (`listing.rs`: through the index, or from the watcher's models
//! once its first scan is done, rather than reading every transcript twice); and the open run
//! followed, each new event sent once.
//!
//! It knows nothing of any front end: changes and run updates go to sinks (closures), so the
//! desktop shell passes one that sends on its IPC channel, and tests pass one that collects.

mod listing;
mod watch;

pub use watch::SharedWatch;

use super::RunUpdate;
use super::{Change, Tail};
use crate::error::{Error, ErrorCode, Result};
use crate::model::layout::is_valid_run_id;
use crate::model::{now_ms, Run, RunOptions, TimelineEvent};
use crate::sync::lock;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use watch::Watch;

/// Receives every change of the directories shown, in order.
pub type ChangeSink = Box<dyn Fn(Change) + Send + Sync>;
/// Receives the updates of a followed run, in order.
pub type UpdateSink = Box<dyn Fn(RunUpdate) + Send + Sync>;

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

/// What one front end keeps of a live session: where its changes go, and the run it follows.
#[derive(Default)]
pub(super) struct Front {
    changes: Mutex<Option<ChangeSink>>,
    follower: Mutex<FollowerSlot>,
    /// The newest follow token seen, and the newest ended. The front end numbers its follows
    /// in the order the user opens runs; requests may be handled in another order, so a slow
    /// follow of a run the user already left must not replace the follow of the run they look
    /// at, nor outlive its own unfollow.
    latest: AtomicU64,
    ended: AtomicU64,
}

/// A live session over some runs directories: one front end's view of a watch, its own or
/// one it shares with others ([`LiveSession::sharing`]).
pub struct LiveSession {
    watch: Arc<Watch>,
    front: Arc<Front>,
}

impl Default for LiveSession {
    fn default() -> Self {
        Self::sharing(&SharedWatch::new())
    }
}

impl LiveSession {
    /// A session watching nothing yet, with a watch of its own: [`start`](Self::start) it.
    pub fn new() -> Self {
        Self::default()
    }

    /// A session on `watch`, which other sessions share: started, it is one more front end
    /// told of the watch's changes (the watch starts with the first and stops with the last);
    /// its sink and its followed run are its own.
    pub fn sharing(watch: &SharedWatch) -> Self {
        Self {
            watch: watch.0.clone(),
            front: Arc::default(),
        }
    }

    /// Where the watch of `dir` stands, when it is watched and its first scan is over: a key
    /// that changes with every change the watcher reports (and every start), so that what was
    /// computed from the directory under one key holds until the key changes. `None` when the
    /// directory is not watched, or not yet.
    pub fn settled(&self, dir: &str) -> Option<(u64, u64)> {
        let watch = &self.watch;
        // The handle and its start, read together: a handle is set only by the watcher of the
        // start in effect, under this lock, and a new start clears it under it.
        let generation = {
            let slot = lock(&watch.watcher.0);
            slot.handle.as_ref()?;
            watch.generation.load(Ordering::SeqCst)
        };
        if !lock(&watch.kinds).contains_key(dir) {
            return None;
        }
        Some((generation, watch.forwarded.load(Ordering::SeqCst)))
    }

    /// (Re)starts watching `dirs`, in the background (the first scan reads every transcript);
    /// changes go to the sink given to [`LiveSession::subscribe`].
    pub fn start(&self, dirs: &[String], threshold: u64) {
        let window = RunOptions::default().running_window_ms;
        self.start_with(dirs, threshold, window);
    }

    /// [`start`](Self::start) with a running window of `running_window_ms` rather than the
    /// default (the app's setting, `mctl serve --running-window`). A shared watch already
    /// watching exactly so goes on as it is.
    pub fn start_with(&self, dirs: &[String], threshold: u64, running_window_ms: i64) {
        (self.watch).join(&self.front, dirs, threshold, running_window_ms, false);
    }

    /// [`start_with`](Self::start_with), starting the watch again even when it watches exactly
    /// so (the kinds of the directories changed: they are detected again).
    pub fn restart_with(&self, dirs: &[String], threshold: u64, running_window_ms: i64) {
        (self.watch).join(&self.front, dirs, threshold, running_window_ms, true);
    }

    /// Whether the watch this session is on runs (another session sharing it may keep it so).
    pub fn watching(&self) -> bool {
        self.watch.running()
    }

    /// Stops (the front end is gone): nothing more is sent to its sink, which is dropped, and
    /// its followed run is no longer followed. The watch stops with the last session on it.
    pub fn stop(&self) {
        let front = &self.front;
        *lock(&front.changes) = None;
        let follower = lock(&front.follower).take();
        front.ended.store(u64::MAX, Ordering::SeqCst);
        // Wait for a read in progress: it checks `ended` before it sends.
        if let Some(entry) = follower {
            drop(lock(&entry.cell));
        }
        self.watch.leave(front);
    }

    /// Sends every change to `sink` from now on, after the `polling` notices already sent. A
    /// new front end numbers its follows from 1 again.
    pub fn subscribe(&self, sink: ChangeSink) {
        // Under the lock a change is told under: no notice lost or told twice.
        let telling = lock(&self.watch.telling);
        for notice in self.watch.notices() {
            sink(notice);
        }
        *lock(&self.front.changes) = Some(sink);
        drop(telling);
        self.front.latest.store(0, Ordering::SeqCst);
        self.front.ended.store(0, Ordering::SeqCst);
    }

    /// Holds the watcher's first look back until [`painted`](Self::painted) (or a list that
    /// needs the watcher's runs, or 3 s): a desktop window, whose list a warm index answers
    /// without the watcher, paints it first with both cores. Call it before starting.
    pub fn hold_first_look_for_paint(&self) {
        (self.watch.hold_for_paint).store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The front end painted its first list: the watcher's first look, held back meanwhile
    /// so as not to share the cores with the paint, starts now.
    pub fn painted(&self) {
        self.watch.want_first_look();
    }

    /// Run `run` of `dir` as the watcher knows it, without reading its transcript again:
    /// `None` when the watcher is still on its first scan (or does not watch `dir`), `Some(None)`
    /// when there is no such run.
    pub fn run(&self, dir: &str, run: &str) -> Option<Option<Run>> {
        let handle = self.watch.handle(false)?;
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
        let (watch, front) = (&self.watch, &self.front);
        if front.latest.fetch_max(token, Ordering::SeqCst) > token || front.stale(token) {
            return Ok(()); // a newer follow came first, or this one already ended
        }
        let threshold = (
            watch.threshold.load(Ordering::SeqCst),
            watch.running_window_ms.load(Ordering::SeqCst),
        );
        // The view has just read the run whole: when the index vouches for exactly what it read,
        // nothing is read again until it changes (hundreds of megabytes would take seconds).
        let opts = follow_opts(threshold);
        let root = Path::new(&dir);
        let kind = watch.kind_of(&dir);
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
            let mut slot = lock(&front.follower);
            if front.stale(token) {
                return Ok(());
            }
            *slot = Some(SlotEntry {
                token,
                dir,
                run,
                cell: cell.clone(),
            });
        }
        f.advance(false, front);
        Ok(())
    }

    /// Ends follow `token` (not a newer one), also when it is still starting. When it returns,
    /// the follow sends nothing more; it may wait for a read of the followed run in progress,
    /// so call it off any thread that must not wait.
    pub fn unfollow(&self, token: u64) {
        let front = &self.front;
        front.ended.fetch_max(token, Ordering::SeqCst);
        let ended = {
            let mut slot = lock(&front.follower);
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

impl Front {
    /// Whether follow `token` is no longer the one to keep.
    fn stale(&self, token: u64) -> bool {
        self.latest.load(Ordering::SeqCst) != token || self.ended.load(Ordering::SeqCst) >= token
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

impl Follower {
    /// Reads what was appended and sends what the view does not have yet, unless the follow
    /// ended meanwhile.
    fn advance(&mut self, reread: bool, front: &Front) {
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
        if (!events.is_empty() || reset) && !front.stale(self.token) {
            (self.sink)(RunUpdate {
                reset,
                events,
                run: self.tail.run(),
            });
        }
    }
}
