//! The list a front end shows: every run of its runs directories, from the index or the
//! watcher's models, and the rows it patches in after live changes.

use super::{lock, LiveSession};
use crate::error::Result;
use crate::model::Run;
use crate::runs::RunsDir;
use crate::watch::{DirStatus, RunKey, RunList, RunPatch, RunRow};
use std::sync::atomic::Ordering;

impl LiveSession {
    /// The runs of each of `dirs` as the watcher knows them, waiting for its first scan (so
    /// that at start the transcripts are read once, not by the watcher and the list each): a
    /// `None` for a directory it does not watch (missing, unreadable), or for all while no
    /// watcher runs.
    pub fn watched_runs(&self, dirs: &[String]) -> Vec<Option<Vec<Run>>> {
        self.watch.want_first_look();
        let handle = self.watch.handle(true);
        dirs.iter()
            .map(|d| handle.as_ref().and_then(|h| h.runs(d)))
            .collect()
    }

    /// The list of every run of `dirs`. A directory whose index holds runs is listed through it
    /// (what changed is read, the rest comes from the index), without waiting for the watcher's
    /// first scan; one without (or with an empty index: listing through it would read every
    /// transcript beside the watcher) is listed from the watcher's models, waiting for that
    /// scan so that the transcripts are not read twice, and an empty index is then filled in the
    /// background for the next start. A directory the watcher does not know, or every one when
    /// `reread` asks for it, is read from disk (through `open`). A directory that cannot be read
    /// is in the list with its error, and no runs.
    pub fn list(
        &self,
        dirs: &[String],
        reread: bool,
        open: impl Fn(&str) -> Result<RunsDir>,
    ) -> RunList {
        // Read from disk (through the index when there is one): a directory whose index holds
        // runs, one that cannot be opened (its listing says why), every one when asked to read
        // again. A directory with an empty index is filled after the list is answered.
        let mut to_fill = Vec::new();
        let from_disk: Vec<bool> = dirs
            .iter()
            .map(|d| {
                let Ok(dir) = open(d) else { return true };
                match dir.index().map(|i| i.is_empty()) {
                    Some(false) => true,
                    Some(true) => {
                        to_fill.push(dir);
                        reread
                    }
                    None => reread,
                }
            })
            .collect();
        let watched = if from_disk.iter().all(|d| *d) {
            vec![None; dirs.len()]
        } else {
            self.watched_runs(dirs)
        };
        {
            // What lands before the first scan ends is in the watcher's models but in no change
            // the front end hears of: it is told to list again once the scan is done. Under the
            // slot's lock, so the watcher thread, which clears `scanning` under it too, sees it.
            let slot = lock(&self.watch.watcher.0);
            if slot.scanning {
                self.watch.listed_early.store(true, Ordering::SeqCst);
            }
        }
        let mut list = RunList {
            dirs: Vec::with_capacity(dirs.len()),
            runs: Vec::new(),
        };
        for ((i, path), watched) in dirs.iter().enumerate().zip(watched) {
            let listed = match watched {
                Some(runs) if !from_disk[i] => Ok(runs),
                _ if reread => open(path).and_then(|d| d.list_again()),
                _ => open(path).and_then(|d| d.list()),
            };
            let (runs, error) = match listed {
                Ok(runs) => (runs, None),
                Err(e) => (Vec::new(), Some(e.message)),
            };
            let source = match runs.first() {
                Some(r) => r.source,
                None => self.watch.kind_of(path),
            };
            list.dirs.push(DirStatus {
                path: path.clone(),
                error,
                runs: runs.len() as u64,
                source,
            });
            list.runs
                .extend(runs.into_iter().map(|run| RunRow { dir: i as u32, run }));
        }
        if !reread && !to_fill.is_empty() {
            // Off the answer's path: the next start lists these directories at once.
            std::thread::spawn(move || {
                for dir in to_fill {
                    let _ = dir.list();
                }
            });
        }
        list
    }

    /// The runs named, as they stand now: from the watcher's models (no transcript read again)
    /// or, while it is still on its first scan, read from disk through `open`. A key of a
    /// directory `open` refuses (no longer shown) is left out, not an error.
    pub fn rows(
        &self,
        keys: Vec<RunKey>,
        open: impl Fn(&str) -> Result<RunsDir>,
    ) -> Result<Vec<RunPatch>> {
        let mut patches = Vec::with_capacity(keys.len());
        for key in keys {
            let run = match self.run(&key.dir, &key.run) {
                Some(known) => known,
                None => match open(&key.dir) {
                    Ok(dir) => dir.list_one(&key.run)?,
                    Err(_) => continue,
                },
            };
            patches.push(RunPatch {
                dir: key.dir,
                id: key.run,
                run,
            });
        }
        Ok(patches)
    }
}
