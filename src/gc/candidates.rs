//! What a plan chooses from: every run that has a value directory, with the value files GC may
//! take from it, what losing each costs the run's next resume, and which files match no result;
//! and the orphan value directories. Gathering reads and never writes.

use super::owners::Owners;
use super::{GcPolicy, GcSkip};
use crate::model::layout::Layout;
use crate::model::values::ValueFile;
use crate::model::{ResultInfo, Run, RunOptions, RunStatus, Verify};
use crate::retained::DEFAULT_THRESHOLD;
use crate::runs::read::analyze_run_with;
use crate::runs::RunsDir;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::Path;

/// What every step of a plan reads and none changes.
pub(super) struct PlanInput<'a> {
    pub root: &'a Path,
    /// Where each run's value folder is, and what proves the run untouched.
    pub owners: &'a Owners,
    pub policy: &'a GcPolicy,
    /// The pinned runs of this directory.
    pub pinned: HashSet<String>,
    pub now_ms: i64,
}

/// What planning knows of one run that has a value directory.
pub(super) struct RunValues {
    pub id: String,
    /// How a report names its value folder.
    pub label: String,
    /// The run's title, for the plan's table.
    pub title: String,
    pub last_activity: i64,
    /// Running, or changed within the idle guard: never touched.
    pub active: bool,
    pub pinned: bool,
    /// The value files GC may take from this run's directory. In a directory that is also a run
    /// `<id>.values`'s own folder, only the files that back one of this run's results.
    pub files: BTreeMap<String, ValueFile>,
    /// Value id -> bytes the next resume carries again without the file (spec B.5).
    pub backs: HashMap<String, u64>,
    /// Stems of files that match no result of the run (never in a shared directory).
    pub strays: HashSet<String>,
    pub stamp: String,
}

impl RunValues {
    /// Whether any policy may take this run's files: a run in use or pinned is never touched.
    pub(super) fn eligible(&self) -> bool {
        !self.active && !self.pinned
    }
}

/// A value directory whose run is gone, with its files, or why they could not be listed.
pub(super) struct OrphanDir {
    pub id: String,
    pub label: String,
    pub files: io::Result<BTreeMap<String, ValueFile>>,
}

/// A value directory left alone because it could not be read: one unreadable run or orphan is
/// reported, not a reason to collect nothing.
pub(super) fn unreadable(label: &str, e: &io::Error) -> GcSkip {
    GcSkip {
        path: label.to_owned(),
        reason: format!("cannot be read: {e}"),
    }
}

/// Every run that has a value directory, in id order; the runs that cannot be read go to
/// `skipped`.
pub(super) fn gather_runs(
    dir: &RunsDir,
    layout: &Layout,
    input: &PlanInput<'_>,
    skipped: &mut Vec<GcSkip>,
) -> Vec<RunValues> {
    use rayon::prelude::*;
    let (runs, unread): (Vec<_>, Vec<_>) = runs_with_results(dir, layout, input.now_ms)
        .into_par_iter()
        .partition_map(|(id, listed)| match listed {
            Ok((files, run, results)) => {
                rayon::iter::Either::Left(run_values(layout, input, &id, files, &run, &results))
            }
            Err(e) => rayon::iter::Either::Right(unreadable(&input.owners.label(&id), &e)),
        });
    skipped.extend(unread);
    runs
}

/// A run with a value directory: its value files as they are now, the run and its results.
pub(crate) type WithResults = (BTreeMap<String, ValueFile>, Run, Vec<ResultInfo>);

/// Every run that has a value directory (in id order) with its value files listed now (a
/// `stat` of each) and its results: from the index when it holds them (its stamps prove the
/// transcript unchanged), else read from the transcript. Which file backs which result is
/// never taken on trust for a deletion: the apply checks each file again just before.
pub(crate) fn runs_with_results(
    dir: &RunsDir,
    layout: &Layout,
    now_ms: i64,
) -> Vec<(String, io::Result<WithResults>)> {
    let mut indexed = dir.indexed_results(layout, now_ms).unwrap_or_default();
    let owners = Owners::of(layout);
    // Sizes are enough here: GC needs to know which files back which results, not whether
    // their bytes still match.
    let opts = RunOptions {
        verify: Verify::Size,
        now_ms,
        ..dir.opts
    };
    let dirs: Vec<_> = layout
        .value_dirs
        .iter()
        // The others are orphans, or another run's own folder: see `gather_orphans`.
        .filter(|(id, _)| layout.runs.contains_key(*id))
        .map(|(id, vdir)| (id, vdir, indexed.remove(id)))
        .collect();
    // Listing the value files is a `stat` of each, which waits on the file system: on every
    // core at once.
    use rayon::prelude::*;
    dirs.into_par_iter()
        .map(|(id, vdir, entry)| {
            let listed = owners.list(vdir).and_then(|files| match entry {
                Some(entry) => match (entry.error, entry.results) {
                    (Some(why), _) => Err(io::Error::other(why)),
                    (None, Some(results)) => Ok((files, entry.run, results)),
                    (None, None) => Err(io::Error::other("its results are not known")),
                },
                None => {
                    let detail = analyze_run_with(layout, id, &opts, false, files.clone())?;
                    Ok((files, detail.run, detail.results))
                }
            });
            let listed = match owners.named_only() {
                true => listed.map(|(files, run, results)| {
                    let mut files = named(files, &results);
                    // A file another run names too is neither's to lose.
                    files.retain(|stem, _| owners.owns(id, stem));
                    (files, run, results)
                }),
                false => listed,
            };
            (id.clone(), listed)
        })
        .collect()
}

/// The files of a folder every run shares that a saved result of this run names (a result
/// the model saw whole names none, whatever its id).
fn named(
    mut files: BTreeMap<String, ValueFile>,
    results: &[ResultInfo],
) -> BTreeMap<String, ValueFile> {
    use crate::model::RetentionState;
    let saved: HashSet<&str> = (results.iter())
        .filter(|r| !matches!(r.state, RetentionState::Inline | RetentionState::Truncated))
        .map(|r| r.value_id.as_str())
        .collect();
    files.retain(|stem, _| saved.contains(stem.as_str()));
    files
}

/// One run's candidates, told from its detail: which files are strays, which back a result,
/// and whether the run may be touched at all.
fn run_values(
    layout: &Layout,
    input: &PlanInput<'_>,
    id: &str,
    mut files: BTreeMap<String, ValueFile>,
    run: &Run,
    results: &[ResultInfo],
) -> RunValues {
    let matched: HashSet<&str> = results.iter().map(|r| r.value_id.as_str()).collect();
    // A directory that is also another run's own folder holds that run's files too: only the
    // files that back this run's results are its, and none of the rest is a stray of it.
    let strays: HashSet<String> = if !input.owners.owned_alone() {
        // A folder several runs write to (a Claude Code session's holds its subagents' values
        // too): no file in it can be called a stray of the session.
        HashSet::new()
    } else if layout.is_shared(id) {
        files.retain(|stem, _| matched.contains(stem.as_str()));
        HashSet::new()
    } else {
        files
            .keys()
            .filter(|k| !matched.contains(k.as_str()))
            .cloned()
            .collect()
    };
    // A Claude Code session's folder is also written by its subagents.
    let updated = run
        .updated_ms
        .unwrap_or(0)
        .max(input.owners.changed_ms(id).unwrap_or(0));
    // The harness writes a value file before the line that names it: a file written within
    // the guard, in a run whose transcript is quiet (a long tool call), is a result the model
    // is about to get as a stub, not a stray.
    // (A file dated further ahead than the guard, from a clock that is wrong, says nothing:
    // it would keep its run from every policy until that date.)
    let guard = input.policy.idle_guard_ms;
    let written_within = |ms: i64| (-guard..guard).contains(&input.now_ms.saturating_sub(ms));
    let fresh_file = (files.values()).any(|f| f.modified_ms.is_some_and(written_within));
    RunValues {
        id: id.to_owned(),
        label: input.owners.label(id),
        title: run.title.clone(),
        last_activity: updated,
        active: run.status == RunStatus::Running
            || input.now_ms.saturating_sub(updated) < guard
            || fresh_file,
        pinned: input.owners.pinned(id, &input.pinned),
        files,
        // A Claude Code transcript keeps the stub of a persisted output: without its file the
        // next resume sends the same stub, and the model can no longer read the output back.
        backs: match layout.store().capabilities().resume_replay {
            true => resume_cost(run, results),
            false => HashMap::new(),
        },
        strays,
        stamp: input.owners.stamp(id),
    }
}

/// What deleting each value file costs the run's next resume, by value id: the full text of
/// the results the harness stubs, which a resume must then carry whole. Those are the results
/// over its threshold after the last compaction (a resume replays nothing before it); a
/// repeated call id shares one file, so its results add up.
fn resume_cost(run: &Run, results: &[ResultInfo]) -> HashMap<String, u64> {
    let replayed_from = run.compacted_at_line.unwrap_or(0);
    let mut backs: HashMap<String, u64> = HashMap::new();
    for r in results {
        if r.bytes > DEFAULT_THRESHOLD && r.line > replayed_from {
            *backs.entry(r.value_id.clone()).or_default() += r.bytes;
        }
    }
    backs
}

/// The value directories whose run is gone, listed whatever the policy: their bytes count
/// toward the budget even when orphans are not collected.
pub(super) fn gather_orphans(layout: &Layout, owners: &Owners) -> Vec<OrphanDir> {
    layout
        .orphan_value_dirs()
        .map(|(id, d)| OrphanDir {
            id: id.to_owned(),
            label: owners.label(id),
            files: owners.list(d),
        })
        .collect()
}
