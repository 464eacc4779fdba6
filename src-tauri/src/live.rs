//! Live updates: one watcher over the runs directories shown, its changes forwarded to the UI on
//! an ordered channel, and the open run followed: its new timeline entries and its updated figures
//! go to the run view on a channel of their own, each event exactly once.

use mission_control::runs::{now_ms, Run, RunOptions, TimelineEvent};
use mission_control::watch::{poll_asked, watch, watch_polling, Change, Tail, WatchHandle};
use mission_control::wire::RunUpdate;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tauri::ipc::Channel;

struct Follower {
    dir: String,
    run: String,
    tail: Tail,
    /// Last line the view has.
    shown: u64,
    token: u64,
    threshold: u64,
    channel: Channel<RunUpdate>,
}

/// The current watcher, or that one is still on its first scan.
#[derive(Default)]
struct Slot {
    handle: Option<Arc<WatchHandle>>,
    scanning: bool,
}

/// How long a list waits for the watcher's first scan before reading the runs itself.
const FIRST_SCAN_WAIT: Duration = Duration::from_secs(120);

#[derive(Default)]
pub struct Live {
    watcher: Arc<(Mutex<Slot>, Condvar)>,
    /// Bumped by every start: a slow first scan of an older start must not win.
    generation: Arc<AtomicU64>,
    /// The window's channel, and the `polling` notices of the current watcher (told again to a
    /// window that subscribes after they were sent: the user must know their directory is
    /// polled). One lock for both, so a notice is neither lost nor told twice.
    changes: Arc<Mutex<Subscriber>>,
    follower: Arc<Mutex<Option<Follower>>>,
    /// The newest follow token seen, and the newest ended. The window numbers its follows in
    /// the order the user opens runs; commands may be handled in another order, so a slow
    /// follow of a run the user already left must not replace the follow of the run they look
    /// at, nor outlive its own unfollow.
    latest: AtomicU64,
    ended: AtomicU64,
    threshold: AtomicU64,
}

#[derive(Default)]
struct Subscriber {
    channel: Option<Channel<Change>>,
    notices: Vec<Change>,
}

/// Clears `scanning` however the start thread ends (a panic included): a list must not wait
/// for a scan that will never finish.
struct ScanDone<'a> {
    watcher: &'a (Mutex<Slot>, Condvar),
    generation: &'a AtomicU64,
    mine: u64,
}

impl Drop for ScanDone<'_> {
    fn drop(&mut self) {
        let mut slot = lock(&self.watcher.0);
        if self.generation.load(Ordering::SeqCst) == self.mine {
            slot.scanning = false;
            self.watcher.1.notify_all();
        }
    }
}

impl Live {
    /// (Re)starts watching `dirs`, in the background (the first scan reads every transcript);
    /// changes go to the channel given by [`Live::subscribe`].
    pub fn start(&self, dirs: &[String], threshold: u64) {
        let paths: Vec<PathBuf> = dirs
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        self.threshold.store(threshold, Ordering::SeqCst);
        let opts = RunOptions {
            threshold,
            ..RunOptions::default()
        };
        let watcher = self.watcher.clone();
        let changes = self.changes.clone();
        let follower = self.follower.clone();
        let generation = self.generation.clone();
        let mine = generation.fetch_add(1, Ordering::SeqCst) + 1;
        // The previous watcher stops now; its thread ends when its channel closes.
        *lock(&watcher.0) = Slot {
            handle: None,
            scanning: true,
        };
        lock(&changes).notices.clear();
        std::thread::spawn(move || {
            let done = ScanDone {
                watcher: &watcher,
                generation: &generation,
                mine,
            };
            let started = match poll_asked(false) {
                Some(reason) => watch_polling(&paths, opts, &reason),
                None => watch(&paths, opts),
            };
            let Ok((handle, rx)) = started else {
                return; // lists read the runs themselves
            };
            // What the first scan reported is in the watcher's models, which the list is read
            // from: only the polling notices are news to the window.
            for change in rx.try_iter() {
                if let Change::Polling { .. } = change {
                    forward(&changes, change);
                }
            }
            {
                let mut slot = lock(&watcher.0);
                if generation.load(Ordering::SeqCst) != mine {
                    return; // a newer start took over while this one scanned
                }
                slot.handle = Some(Arc::new(handle));
            }
            drop(done);
            for change in rx {
                if generation.load(Ordering::SeqCst) != mine {
                    return;
                }
                forward(&changes, change.clone());
                let (dir, run) = match &change {
                    Change::Appended { dir, run, .. }
                    | Change::Reset { dir, run, .. }
                    | Change::ValuesRemoved { dir, run }
                    | Change::ValueFilesRemoved { dir, run, .. } => (dir, run),
                    _ => continue,
                };
                let reread = matches!(
                    change,
                    Change::ValuesRemoved { .. } | Change::ValueFilesRemoved { .. }
                );
                let mut f = lock(&follower);
                if let Some(f) = f.as_mut().filter(|f| &f.dir == dir && &f.run == run) {
                    f.advance(reread);
                }
            }
        });
    }

    /// Sends every change to `channel` from now on, after the `polling` notices already sent.
    /// A new window numbers its follows from 1 again.
    pub fn subscribe(&self, channel: Channel<Change>) {
        let mut sub = lock(&self.changes);
        for notice in &sub.notices {
            let _ = channel.send(notice.clone());
        }
        sub.channel = Some(channel);
        self.latest.store(0, Ordering::SeqCst);
        self.ended.store(0, Ordering::SeqCst);
    }

    /// The current watcher, once its first scan is done (waiting for it with `wait`).
    fn handle(&self, wait: bool) -> Option<Arc<WatchHandle>> {
        let (slot, scanned) = &*self.watcher;
        let mut slot = lock(slot);
        if wait {
            slot = scanned
                .wait_timeout_while(slot, FIRST_SCAN_WAIT, |s| s.scanning)
                .map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
        slot.handle.clone()
    }

    /// Run `run` of `dir` as the watcher knows it, without reading its transcript again:
    /// `None` when the watcher is still on its first scan (or does not watch `dir`), `Some(None)`
    /// when there is no such run.
    pub fn run(&self, dir: &str, run: &str) -> Option<Option<Run>> {
        let handle = self.handle(false)?;
        handle.watches(dir).then(|| handle.run(dir, run))
    }

    /// The runs of each of `dirs` as the watcher knows them, waiting for its first scan (so
    /// that at start the transcripts are read once, not by the watcher and the list each): a
    /// `None` for a directory it does not watch (missing, unreadable), or for all while no
    /// watcher runs.
    pub fn list(&self, dirs: &[String]) -> Vec<Option<Vec<Run>>> {
        let handle = self.handle(true);
        dirs.iter()
            .map(|d| handle.as_ref().and_then(|h| h.runs(d)))
            .collect()
    }

    /// Follows `run` of `dir` from after line `shown` (what the view already has).
    pub fn follow(
        &self,
        dir: String,
        run: String,
        shown: u64,
        token: u64,
        channel: Channel<RunUpdate>,
    ) {
        let stale = || {
            self.latest.load(Ordering::SeqCst) != token
                || self.ended.load(Ordering::SeqCst) >= token
        };
        if self.latest.fetch_max(token, Ordering::SeqCst) > token || stale() {
            return; // a newer follow came first, or this one already ended
        }
        let threshold = self.threshold.load(Ordering::SeqCst);
        let tail = Tail::new(Path::new(&dir), &run, follow_opts(threshold));
        let mut f = Follower {
            dir,
            run,
            tail,
            shown,
            token,
            threshold,
            channel,
        };
        // Read up to where the view is outside the lock: the watcher's changes keep flowing.
        f.advance(false);
        let mut slot = lock(&self.follower);
        if !stale() {
            // Lines that landed since the read above, whose changes found no follower yet.
            f.advance(false);
            *slot = Some(f);
        }
    }

    /// Ends follow `token` (not a newer one), also when it is still starting.
    pub fn unfollow(&self, token: u64) {
        self.ended.fetch_max(token, Ordering::SeqCst);
        let mut slot = lock(&self.follower);
        if slot.as_ref().is_some_and(|f| f.token == token) {
            *slot = None;
        }
    }
}

/// Sends `change` to the window, and keeps it when it is a polling notice.
fn forward(changes: &Mutex<Subscriber>, change: Change) {
    let mut sub = lock(changes);
    if let Change::Polling { .. } = change {
        sub.notices.push(change.clone());
    }
    if let Some(ch) = sub.channel.as_ref() {
        let _ = ch.send(change);
    }
}

fn follow_opts(threshold: u64) -> RunOptions {
    RunOptions {
        threshold,
        now_ms: now_ms(),
        ..RunOptions::default()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // What a panicking holder leaves is plain data: go on with it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Follower {
    /// Reads what was appended and sends what the view does not have yet.
    fn advance(&mut self, reread: bool) {
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
        if !events.is_empty() || reset {
            let _ = self.channel.send(RunUpdate {
                reset,
                events,
                run: self.tail.run(),
            });
        }
    }
}
