//! The value directories of a runs directory. Files removed inside one (by a GC, or by hand)
//! do not touch the runs directory, so each value directory is watched natively where the
//! platform allows it (one inotify watch each, up to a share of the user's limit for the whole
//! process), and only the rest are looked at with a `stat` each: every second when they changed
//! in the last hour, else in turn. An archive of 100,000 runs then costs 0.3 % of a core while
//! nothing changes, where a `stat` of every directory each second cost about a fifth of one.

use super::{stems, DirState, ValueDir, COARSE_TICK_MS};
use crate::model::layout::RunPaths;
use crate::model::stamp::FileStamp;
use crate::sync::lock;
use crate::watch::Change;
use notify::{RecursiveMode, Watcher};
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The share of the user's inotify watches value directories may take: the rest is left to the
/// runs directories and to every other program of the user's (editors watch whole trees).
const SHARE_OF_LIMIT: usize = 2;
/// An unwatched value directory whose time is older than this is looked at every
/// [`SLOW_ROUNDS`] seconds rather than every second.
const WARM_MS: i64 = 3_600_000;
/// In how many per-second looks every cold unwatched value directory is looked at once.
const SLOW_ROUNDS: u64 = 10;
/// The watches taken when the limit cannot be read (the platform has none, or no `/proc`).
const DEFAULT_ROOM: usize = 65_536;

/// Native watches on the value directories of one runs directory, added to the watcher of the
/// runs directory itself (one inotify instance, one thread, whatever the number of runs).
pub(in crate::watch) struct ValueWatch {
    watcher: Arc<Mutex<notify::RecommendedWatcher>>,
    /// Runs whose value directory is watched: the per-second look skips them.
    watched: HashSet<String>,
    /// Value directories met and not watched yet (those beyond the share of watches stay here).
    /// They are watched a batch at a time, after the first look, so that a start is not slowed
    /// by a watch per run; until then they are looked at by `check_values`.
    pending: BTreeSet<String>,
    /// Per-second looks so far: which share of the cold unwatched directories is looked at.
    round: u64,
}

impl ValueWatch {
    pub(in crate::watch) fn new(watcher: Arc<Mutex<notify::RecommendedWatcher>>) -> Self {
        Self {
            watcher,
            watched: HashSet::new(),
            pending: BTreeSet::new(),
            round: 0,
        }
    }

    /// Value directories watched natively.
    pub(in crate::watch) fn watched(&self) -> usize {
        self.watched.len()
    }
}

/// A watch that stops (its runs directory no longer shown, a server's last page gone) gives its
/// watches back to the process.
impl Drop for ValueWatch {
    fn drop(&mut self) {
        room().fetch_add(self.watched.len(), Ordering::AcqRel);
    }
}

/// How many more value-directory watches this process may take, all its watchers together:
/// half the user's inotify limit on Linux, [`DEFAULT_ROOM`] elsewhere, to begin with.
fn room() -> &'static AtomicUsize {
    static ROOM: OnceLock<AtomicUsize> = OnceLock::new();
    ROOM.get_or_init(|| {
        let limit = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        AtomicUsize::new(limit.map_or(DEFAULT_ROOM, |l| l / SHARE_OF_LIMIT))
    })
}

/// Takes one watch from the process's room; `false` when none is left.
fn take_room() -> bool {
    (room().fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| r.checked_sub(1))).is_ok()
}

/// Gives a watch back to the process's room.
fn give_room() {
    room().fetch_add(1, Ordering::AcqRel);
}

impl DirState {
    /// Value directory `id` was met: it will be watched natively (when watches are used).
    pub(super) fn value_dir_met(&mut self, id: &str) {
        if let Some(w) = &mut self.value_watch {
            if !w.watched.contains(id) {
                w.pending.insert(id.to_owned());
            }
        }
    }

    /// The runs directory's notices named value directory `id` itself (made, removed, moved):
    /// whatever its watch was on may be gone, so it is watched anew (adding a watch to the
    /// same directory again changes nothing), and listed again at once.
    pub(in crate::watch) fn value_dir_renamed(&mut self, id: &str) {
        if !self.values.contains_key(id) {
            return;
        }
        self.value_dir_gone(id);
        self.value_dir_met(id);
        self.check_value_dir(id, true);
    }

    /// Value directory `id` went: its watch (gone with it) is forgotten.
    pub(super) fn value_dir_gone(&mut self, id: &str) {
        let root = self.root.clone();
        if let Some(w) = &mut self.value_watch {
            w.pending.remove(id);
            if w.watched.remove(id) {
                give_room();
                let mut watcher = lock(&w.watcher);
                let _ = watcher.unwatch(&RunPaths::new(&root, id).value_dir());
            }
        }
    }

    /// Watches up to `max` of the value directories met since the last call. Each is listed
    /// again once it is watched, so a file that came or went just before is not missed. When
    /// the share of watches is used up, the rest stay with the per-second look.
    pub(in crate::watch) fn watch_pending(&mut self, max: usize) {
        let Some(w) = &mut self.value_watch else {
            return;
        };
        let mut taken = Vec::new();
        let mut failed = Vec::new();
        let mut watcher = lock(&w.watcher);
        while taken.len() < max && !w.pending.is_empty() && take_room() {
            let Some(id) = w.pending.pop_first() else {
                break;
            };
            let path = RunPaths::new(&self.root, &id).value_dir();
            match watcher.watch(&path, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    w.watched.insert(id.clone());
                    taken.push(id);
                }
                Err(e) if matches!(e.kind, notify::ErrorKind::MaxFilesWatch) => {
                    tracing::info!(
                        dir = %self.root.display(),
                        watched = w.watched.len(),
                        "no inotify watches left: the other value directories are looked at \
                         with a stat"
                    );
                    room().store(0, Ordering::Release);
                    w.pending.insert(id);
                    break;
                }
                // Gone, or not to be watched now (its permissions): still looked at with a
                // stat, and tried again at the next tick while it is known.
                Err(_) => {
                    give_room();
                    failed.push(id);
                }
            }
        }
        w.pending.extend(failed);
        drop(watcher);
        for id in taken {
            self.check_value_dir(&id, true);
        }
    }

    /// Lists again each value directory that is not watched and whose time changed (or that
    /// changed within a coarse clock's tick), and reports the value files that appeared or went.
    pub(in crate::watch) fn check_values(&mut self) {
        if self.look_foreign(false) {
            return;
        }
        // Those not watched are the ones waiting for a watch: only they are walked, so a second
        // of 100,000 watched directories costs nothing. Of those, the ones that changed in the
        // last hour are looked at every second, the others in turn, a tenth each second.
        let now_ms = crate::model::now_ms();
        let ids: Vec<String> = match &mut self.value_watch {
            Some(w) => {
                w.round = w.round.wrapping_add(1);
                let round = w.round % SLOW_ROUNDS;
                (w.pending.iter().enumerate())
                    .filter_map(|(i, id)| Some((i, id, self.values.get(id)?)))
                    .filter(|(i, _, dir)| {
                        let age_ms = now_ms.saturating_sub(dir.stamp.mtime_ms());
                        age_ms < WARM_MS || *i as u64 % SLOW_ROUNDS == round
                    })
                    .map(|(_, id, _)| id.clone())
                    .collect()
            }
            None => self.values.keys().cloned().collect(),
        };
        self.value_looks += ids.len() as u64;
        for id in ids {
            self.check_value_dir(&id, false);
        }
    }

    /// The value directories the native notices name changed: each is listed again.
    pub(in crate::watch) fn value_dirs_changed(&mut self, ids: &BTreeSet<String>) {
        self.wakeups += 1;
        for id in ids {
            if self.values.contains_key(id) {
                self.check_value_dir(id, true);
            }
        }
    }

    /// Lists value directory `id` again when its time changed (always, with `force`), reports
    /// the value files that appeared or went, and reads the run again when its files went
    /// (its retention states changed).
    pub(super) fn check_value_dir(&mut self, id: &str, force: bool) {
        let path = RunPaths::new(&self.root, id).value_dir();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return; // gone: the runs directory's watcher reports it
        };
        let Some(seen) = self.values.get(id) else {
            return;
        };
        let stamp = FileStamp::from_meta(&meta);
        // A time in the future (a share with a clock ahead) is not "recent": it would be
        // listed every second.
        let age_ms = crate::model::now_ms().saturating_sub(stamp.mtime_ms());
        let recent = (0..COARSE_TICK_MS).contains(&age_ms);
        if !meta.is_dir() || (stamp == seen.stamp && !recent && !force) {
            return;
        }
        // A listing that fails says nothing of the files: look again next time.
        let Some(files) = stems(&path) else { return };
        self.apply_listing(id, stamp, files);
    }

    /// What a new listing of value directory `id` tells, against the one before.
    fn apply_listing(&mut self, id: &str, stamp: FileStamp, files: BTreeSet<String>) {
        let Some(seen) = self.values.get(id) else {
            return;
        };
        let added: Vec<String> = files.difference(&seen.files).cloned().collect();
        let removed: Vec<String> = seen.files.difference(&files).cloned().collect();
        self.values.insert(id.to_owned(), ValueDir { stamp, files });
        // A file listed while it was being written, its result classified against what was
        // there then, is read again once written (its close tells the directory's watch).
        let mut reread =
            !removed.is_empty() || (self.tails.get(id)).is_some_and(|t| t.value_resized());
        if !added.is_empty() {
            if let Some(tail) = self.tails.get_mut(id) {
                // A file for a result already classified without it (restored, or written
                // after its line) changes that result's state: read the run again. A file its
                // result's line found when it landed (the usual order) needs nothing.
                reread |= added.iter().any(|v| tail.missed_value(v));
                tail.add_values(&added);
            }
            self.send(Change::ValueFilesAdded {
                dir: self.name.clone(),
                run: id.to_owned(),
                values: added,
            });
        }
        if !removed.is_empty() {
            self.send(Change::ValueFilesRemoved {
                dir: self.name.clone(),
                run: id.to_owned(),
                values: removed,
            });
        }
        if reread {
            self.reread(id);
        }
    }
}
