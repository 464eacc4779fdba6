//! Watching another agent's store (`crate::sources`). Its files nest (project folders, session
//! folders, `YYYY/MM/DD`), so the runs directory's flat names say nothing of them: each look
//! reads the store's layout again, stamps every run's files, and reads again only the runs
//! whose stamp moved. The watcher looks on every notice and every second; the first look takes
//! the runs the index vouches for from it.

use super::{Change, FirstLook};
use crate::model::stamp::FileStamp;
use crate::model::SourceKind;
use crate::model::{Layout, Run, RunOptions, RunStatus};
use crate::runs::{sort_runs, unreadable_run, RunsDir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Sizes and times of a run's transcript and value folders (any write moves it), and what the
/// layout says of the run beyond its files (a subagent's call named later).
type Stamp = (Vec<Option<FileStamp>>, String);

pub(super) struct ForeignWatch {
    source: SourceKind,
    runs: BTreeMap<String, (Stamp, Run)>,
    /// Whether the first look was made: it takes the runs the index vouches for from it.
    started: bool,
    /// The index the looks use (of the default cache directory, or of the one given); `None`
    /// when the first look reads every run (`mctl watch`, `--no-index`).
    index: Option<Option<PathBuf>>,
}

fn stamp_of(layout: &Layout, id: &str) -> Stamp {
    let files = layout.runs.get(id);
    let paths = [
        files.and_then(|f| f.transcript.as_deref()),
        layout.value_dir(id),
        files.and_then(|f| f.parent_values()),
    ];
    let sizes = paths.iter().map(|p| p.and_then(FileStamp::of)).collect();
    (sizes, layout.links(id))
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
        })
    }

    /// Reads the store's layout again and each run whose files moved, telling what changed.
    /// `false` when the store could not be read.
    pub(super) fn look(&mut self, root: &Path, opts: RunOptions, send: impl Fn(Change)) -> bool {
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
        let stamps: BTreeMap<&String, Stamp> = (layout.runs.keys())
            .map(|id| (id, stamp_of(&layout, id)))
            .collect();
        // The first look costs what changed since the index last looked; the later ones read
        // only what moved since then.
        let mut indexed = std::collections::HashMap::new();
        if !std::mem::replace(&mut self.started, true) {
            if let Some(mut index) = dir.index() {
                let listing = dir.listing_opts(opts.now_ms);
                let read = |id: &str| crate::runs::read_row(&layout, id, &listing);
                let runs = index.list(&layout, &listing, read, |r| (r.id.clone(), r));
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
            let known = self.runs.get(id).map(|(s, _)| s);
            if known == Some(&stamp) {
                continue;
            }
            let run = match indexed.remove(id) {
                Some(run) => run,
                None => match crate::runs::analyze_run(&layout, id, &opts, false) {
                    Ok(detail) => detail.run,
                    Err(e) => unreadable_run(id, &e),
                },
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
                    lines: run.events,
                },
            };
            self.runs.insert(id.clone(), (stamp, run));
            send(change);
        }
        true
    }

    /// A run as last read, its status told by the clock now: a run left alone for longer than
    /// the running window is interrupted, though nothing of it changed.
    pub(super) fn run(&self, id: &str, opts: &RunOptions) -> Option<Run> {
        let mut run = self.runs.get(id)?.1.clone();
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
