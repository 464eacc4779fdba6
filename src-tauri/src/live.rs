//! Live updates: one watcher over the runs directories shown, its changes forwarded to the UI on
//! an ordered channel, and the open run followed: its new timeline entries and its updated figures
//! go to the run view on a channel of their own, each event exactly once.

use mission_control::runs::{now_ms, RunOptions, TimelineEvent};
use mission_control::watch::{watch, Change, Tail, WatchHandle};
use mission_control::wire::RunUpdate;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tauri::ipc::Channel;

struct Follower {
    dir: String,
    run: String,
    tail: Tail,
    /// Last line the view has.
    shown: u64,
    channel: Channel<RunUpdate>,
}

#[derive(Default)]
pub struct Live {
    watcher: Arc<Mutex<Option<WatchHandle>>>,
    /// Bumped by every start: a slow first scan of an older start must not win.
    generation: Arc<std::sync::atomic::AtomicU64>,
    changes: Arc<Mutex<Option<Channel<Change>>>>,
    follower: Arc<Mutex<Option<Follower>>>,
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
        let opts = RunOptions {
            threshold,
            ..RunOptions::default()
        };
        let watcher = self.watcher.clone();
        let changes = self.changes.clone();
        let follower = self.follower.clone();
        let generation = self.generation.clone();
        let mine = generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        // The previous watcher stops now; its thread ends when its channel closes.
        *watcher.lock().expect("watcher lock") = None;
        std::thread::spawn(move || {
            let Ok((handle, rx)) = watch(&paths, opts) else {
                return;
            };
            {
                let mut slot = watcher.lock().expect("watcher lock");
                if generation.load(std::sync::atomic::Ordering::SeqCst) != mine {
                    return; // a newer start took over while this one scanned
                }
                *slot = Some(handle);
            }
            for change in rx {
                if let Some(ch) = changes.lock().expect("changes lock").as_ref() {
                    let _ = ch.send(change.clone());
                }
                let (dir, run) = match &change {
                    Change::Appended { dir, run, .. }
                    | Change::Reset { dir, run, .. }
                    | Change::ValuesRemoved { dir, run } => (dir, run),
                    _ => continue,
                };
                let mut f = follower.lock().expect("follower lock");
                if let Some(f) = f.as_mut().filter(|f| &f.dir == dir && &f.run == run) {
                    f.advance(matches!(change, Change::ValuesRemoved { .. }));
                }
            }
        });
    }

    pub fn subscribe(&self, channel: Channel<Change>) {
        *self.changes.lock().expect("changes lock") = Some(channel);
    }

    /// Follows `run` of `dir` from after line `shown` (what the view already has).
    pub fn follow(&self, dir: String, run: String, shown: u64, channel: Channel<RunUpdate>) {
        let opts = RunOptions {
            now_ms: now_ms(),
            ..RunOptions::default()
        };
        let tail = Tail::new(std::path::Path::new(&dir), &run, opts);
        let mut f = Follower {
            dir,
            run,
            tail,
            shown,
            channel,
        };
        f.advance(false);
        *self.follower.lock().expect("follower lock") = Some(f);
    }

    pub fn unfollow(&self) {
        *self.follower.lock().expect("follower lock") = None;
    }
}

impl Follower {
    /// Reads what was appended and sends what the view does not have yet.
    fn advance(&mut self, reread: bool) {
        if reread {
            // Value files were removed: retention states changed; read the run again.
            self.tail = Tail::new(
                std::path::Path::new(&self.dir),
                &self.run,
                RunOptions {
                    now_ms: now_ms(),
                    ..RunOptions::default()
                },
            );
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
        if !events.is_empty() || reset || reread {
            let _ = self.channel.send(RunUpdate {
                reset,
                events,
                run: self.tail.run(),
            });
        }
    }
}
