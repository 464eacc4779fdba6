//! Watching another agent's store (`crate::sources`). Its files nest (project folders, session
//! folders, `YYYY/MM/DD`), so the runs directory's flat names say nothing of them: each look
//! reads the store's layout again, stamps every run's files, and reads again only the runs
//! whose stamp moved. The watcher looks on every notice and every second, but a look costs
//! what the store holds and the changed runs it reads whole: looks are spaced so that they
//! take at most a tenth of a core ([`LOOK_SHARE`]). The first look takes the runs the index
//! vouches for from it.

use super::packed::HeldRun;
use super::{Change, FirstLook};
use crate::model::stamp::FileStamp;
use crate::model::SourceKind;
use crate::model::{Layout, Run, RunFiles, RunOptions, RunStatus};
use crate::runs::{sort_runs, unreadable_run, RunsDir};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Sizes and times of a run's transcript and value folders (any write moves it), and what the
/// layout says of the run beyond its files (a subagent's call named later).
#[derive(PartialEq, Eq)]
struct Stamp {
    files: [Option<FileStamp>; 3],
    links: Box<str>,
}

/// A run as the last look read it: held packed, a store of tens of thousands of runs holds one
/// each for as long as it is watched.
struct Seen {
    stamp: Stamp,
    run: HeldRun,
}

/// At most a tenth (`1 / LOOK_SHARE`) of one core goes to looking at a store: after a look
/// that took `d` (its layout, its stamps, and the runs it read again whole because they
/// moved), the next waits `(LOOK_SHARE - 1) * d`: nothing to speak of for a store of a few
/// thousand runs, whose look takes tens of milliseconds; a few seconds for one of tens of
/// thousands, or while a long session is written (each look reads it whole).
const LOOK_SHARE: u32 = 10;

/// The longest wait between two looks, however long the last one took.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

pub(super) struct ForeignWatch {
    source: SourceKind,
    runs: BTreeMap<String, Seen>,
    /// Whether the first look was made: it takes the runs the index vouches for from it.
    started: bool,
    /// The index the looks use (of the default cache directory, or of the one given); `None`
    /// when the first look reads every run (`mctl watch`, `--no-index`).
    index: Option<Option<PathBuf>>,
    /// When the next look may be made (see [`LOOK_SHARE`]).
    next_look: Option<Instant>,
}

/// The stamp of run `id`. A value folder several runs share (a session's, which its
/// subagents' values go to) is stamped once a look, in `folders`.
fn stamp_of<'l>(
    layout: &'l Layout,
    id: &str,
    folders: &mut HashMap<&'l Path, Option<FileStamp>>,
) -> Stamp {
    let files = layout.runs.get(id);
    let mut folder =
        |p: Option<&'l Path>| p.and_then(|p| *folders.entry(p).or_insert_with(|| FileStamp::of(p)));
    Stamp {
        files: [
            files.and_then(RunFiles::transcript_stamp),
            folder(layout.value_dir(id)),
            folder(files.and_then(|f| f.parent_values())),
        ],
        links: layout.links(id).into_boxed_str(),
    }
}

impl ForeignWatch {
    /// A watch of `root`, a store of kind `source`, when it is another agent's store (its
    /// files nest where its layout says), its first look taken as `first` says.
    pub(super) fn of(source: SourceKind, first: &FirstLook) -> Option<Self> {
        let index = first.index();
        (!source.capabilities().flat_names).then(|| Self {
            source,
            runs: BTreeMap::new(),
            started: false,
            index,
            next_look: None,
        })
    }

    /// Reads the store's layout again and each run whose files moved, telling what changed.
    /// `false` when the store could not be read.
    pub(super) fn look(&mut self, root: &Path, opts: RunOptions, send: impl Fn(Change)) -> bool {
        let started = Instant::now();
        let Ok(dir) = RunsDir::open_as(root, self.source, opts) else {
            return false;
        };
        let indexed = dir.indexed() && self.index.is_some();
        let mut dir = dir.with_index(indexed);
        if let Some(Some(cache)) = &self.index {
            dir = dir.with_cache_dir(cache);
        }
        let Ok(layout) = dir.layout() else {
            return false;
        };
        // Stamped before anything is read: a write meanwhile moves the stamp again.
        let mut folders = HashMap::new();
        let stamps: BTreeMap<&String, Stamp> = (layout.runs.keys())
            .map(|id| (id, stamp_of(&layout, id, &mut folders)))
            .collect();
        drop(folders);
        // The first look costs what changed since the index last looked; the later ones read
        // only what moved since then.
        let mut indexed = HashMap::new();
        let first = !std::mem::replace(&mut self.started, true);
        if first {
            if let Some(mut index) = dir.index() {
                let listing = dir.listing_opts(opts.now_ms);
                let read = |id: &str| crate::runs::read_row(&layout, id, &listing);
                // Each packed as it comes: the look holds every run of the store at once.
                let held = |r: Run| (r.id.clone(), (r.events, HeldRun::new(r)));
                let runs = index.list(&layout, &listing, read, held);
                indexed = runs.into_iter().collect();
            }
        }
        let name = root.display().to_string();
        let gone: Vec<String> = self
            .runs
            .keys()
            .filter(|id| !layout.runs.contains_key(*id))
            .cloned()
            .collect();
        for id in gone {
            self.runs.remove(&id);
            send(Change::RunRemoved {
                dir: name.clone(),
                run: id,
            });
        }
        for (id, stamp) in stamps {
            let known = self.runs.get(id).map(|seen| &seen.stamp);
            if known == Some(&stamp) {
                continue;
            }
            let (events, run) = match indexed.remove(id) {
                Some(held) => held,
                None => {
                    let run = match crate::runs::analyze_run(&layout, id, &opts, false) {
                        Ok(detail) => detail.run,
                        Err(e) => unreadable_run(id, &e),
                    };
                    (run.events, HeldRun::new(run))
                }
            };
            let change = match known {
                None => Change::RunAdded {
                    dir: name.clone(),
                    run: id.clone(),
                },
                // Read again whole: the list and an open run fetch it anew.
                Some(_) => Change::Reset {
                    dir: name.clone(),
                    run: id.clone(),
                    lines: events,
                },
            };
            self.runs.insert(id.clone(), Seen { stamp, run });
            send(change);
        }
        // Not after the first look: it scanned every session file and read every run the index
        // could not vouch for, which later looks take from what they kept.
        if !first {
            self.space_looks(started.elapsed());
        }
        true
    }

    /// Whether a look may be made now (see [`LOOK_SHARE`]).
    pub(super) fn due(&self) -> bool {
        self.next_look.is_none_or(|at| Instant::now() >= at)
    }

    /// Spaces the next look after one that took `took`: never longer than [`LONGEST_WAIT`]
    /// (a look whose time was stretched, the process stopped or the machine asleep, says
    /// nothing of the next).
    fn space_looks(&mut self, took: Duration) {
        let wait = took.saturating_mul(LOOK_SHARE - 1).min(LONGEST_WAIT);
        self.next_look = Some(Instant::now() + wait);
    }

    /// A run as last read, its status told by the clock now: a run left alone for longer than
    /// the running window is interrupted, though nothing of it changed.
    pub(super) fn run(&self, id: &str, opts: &RunOptions) -> Option<Run> {
        let mut run = self.runs.get(id)?.run.run(id);
        if run.status == RunStatus::Running {
            run.status = opts.status_by_clock(run.updated_ms.unwrap_or(0));
        }
        Some(run)
    }

    pub(super) fn runs(&self, opts: &RunOptions) -> Vec<Run> {
        let mut runs: Vec<Run> = self
            .runs
            .keys()
            .filter_map(|id| self.run(id, opts))
            .collect();
        sort_runs(&mut runs);
        crate::model::family::add_children(&mut runs);
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_are_spaced_by_what_the_last_one_cost() {
        let mut watch = ForeignWatch {
            source: SourceKind::default(),
            runs: BTreeMap::new(),
            started: true,
            index: None,
            next_look: None,
        };
        assert!(watch.due(), "the first look is due at once");
        watch.space_looks(Duration::ZERO);
        assert!(
            watch.due(),
            "after a look that cost nothing the next is due"
        );
        watch.space_looks(Duration::from_secs(1));
        assert!(!watch.due(), "after a second's look the next waits nine");
        let nine = watch.next_look.expect("spaced") - Instant::now();
        assert!(nine > Duration::from_secs(8) && nine <= Duration::from_secs(9));
        watch.space_looks(Duration::from_secs(3600));
        let wait = watch.next_look.expect("spaced") - Instant::now();
        assert!(
            wait <= LONGEST_WAIT,
            "an hour's look holds the next 30 s at most"
        );
    }
}
