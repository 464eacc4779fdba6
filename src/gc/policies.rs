//! The policies, one function each. Each adds the files it selects to a [`Selection`]; a file
//! keeps the reason of the first policy that took it, so the order in which [`super::plan`]
//! applies them decides the reason a report gives.

use super::candidates::{unreadable, OrphanDir, PlanInput, RunValues};
use super::{GcFile, GcReason, GcSkip};
use crate::model::values::ValueFile;
use std::collections::BTreeMap;
use std::path::Path;

/// The files a plan takes so far, by their path relative to the runs directory.
pub(super) struct Selection<'a> {
    root: &'a Path,
    /// Public to the planner so the journal can add the files an interrupted apply left.
    pub files: BTreeMap<String, GcFile>,
}

impl<'a> Selection<'a> {
    pub(super) fn new(root: &'a Path) -> Self {
        Self {
            root,
            files: BTreeMap::new(),
        }
    }

    /// A value file's path relative to the runs directory: how a plan names it, and what the
    /// apply resolves again under its own handle on the directory.
    fn rel(&self, f: &ValueFile) -> String {
        f.path
            .strip_prefix(self.root)
            .unwrap_or(&f.path)
            .to_string_lossy()
            .into_owned()
    }

    fn contains(&self, f: &ValueFile) -> bool {
        self.files.contains_key(&self.rel(f))
    }

    /// Takes a file of `run`, charged with what its loss costs the run's next resume.
    fn take(&mut self, run: &RunValues, f: &ValueFile, reason: GcReason) {
        let context_bytes = run.backs.get(&f.stem).copied().unwrap_or(0);
        self.take_as(f, &run.id, &run.stamp, context_bytes, reason);
    }

    fn take_as(&mut self, f: &ValueFile, run: &str, stamp: &str, context_bytes: u64, r: GcReason) {
        let path = self.rel(f);
        self.files.entry(path.clone()).or_insert_with(|| GcFile {
            path,
            run: run.to_owned(),
            bytes: f.bytes,
            reason: r,
            context_bytes,
            mtime_ns: f.mtime_ns.clone(),
            run_stamp: stamp.to_owned(),
        });
    }

    fn bytes(&self) -> u64 {
        self.files.values().map(|f| f.bytes).sum()
    }

    /// The files, in path order.
    pub(super) fn into_files(self) -> Vec<GcFile> {
        self.files.into_values().collect()
    }
}

/// Reports once each run with value files that no policy may touch (pinned, or active), so a
/// user sees why its files stay.
pub(super) fn report_held_runs(runs: &[RunValues], skipped: &mut Vec<GcSkip>) {
    for r in runs.iter().filter(|r| !r.eligible() && !r.files.is_empty()) {
        let reason = if r.pinned {
            "pinned"
        } else {
            "active: running or changed within the idle guard"
        };
        skipped.push(GcSkip {
            path: r.label.clone(),
            reason: reason.into(),
        });
    }
}

/// `--older-than`: every file of the runs idle for longer than `age_ms`.
pub(super) fn older_than(sel: &mut Selection<'_>, runs: &[RunValues], age_ms: i64, now_ms: i64) {
    for r in runs
        .iter()
        .filter(|r| r.eligible() && now_ms.saturating_sub(r.last_activity) > age_ms)
    {
        r.files.values().for_each(|f| sel.take(r, f, GcReason::Age));
    }
}

/// `--keep-last`: every file of the runs with values other than the newest `keep`. Held runs
/// count among the newest, so pinning a run never makes another lose its values.
pub(super) fn keep_last(sel: &mut Selection<'_>, runs: &[RunValues], keep: u64) {
    let mut newest: Vec<&RunValues> = runs.iter().filter(|r| !r.files.is_empty()).collect();
    newest.sort_by(|a, b| {
        b.last_activity
            .cmp(&a.last_activity)
            .then_with(|| a.id.cmp(&b.id))
    });
    for r in newest
        .into_iter()
        .skip(usize::try_from(keep).unwrap_or(usize::MAX))
        .filter(|r| r.eligible())
    {
        r.files
            .values()
            .for_each(|f| sel.take(r, f, GcReason::KeepLast));
    }
}

/// `--orphans`: the files of value directories whose run is gone, except a pinned directory
/// and a file written within the idle guard (it may belong to a run being created). Orphan
/// directories that cannot be read are reported whatever the policy.
pub(super) fn orphans(
    sel: &mut Selection<'_>,
    orphans: &[OrphanDir],
    input: &PlanInput<'_>,
    skipped: &mut Vec<GcSkip>,
) {
    for o in orphans {
        let files = match &o.files {
            Ok(f) => f,
            Err(e) => {
                skipped.push(unreadable(&o.label, e));
                continue;
            }
        };
        if !input.policy.orphans {
            continue;
        }
        if input.pinned.contains(&o.id) {
            skipped.push(GcSkip {
                path: o.label.clone(),
                reason: "pinned".into(),
            });
            continue;
        }
        let stamp = input.owners.stamp(&o.id);
        for f in files.values() {
            let recent = f
                .modified_ms
                .is_some_and(|m| input.now_ms.saturating_sub(m) < input.policy.idle_guard_ms);
            if recent {
                skipped.push(GcSkip {
                    path: sel.rel(f),
                    reason: "orphan changed within the idle guard".into(),
                });
                continue;
            }
            // An orphan backs no result any run will resume: it costs no context.
            sel.take_as(f, &o.id, &stamp, 0, GcReason::Orphan);
        }
    }
}

/// `--strays`: the files of eligible runs that match none of their results.
pub(super) fn strays(sel: &mut Selection<'_>, runs: &[RunValues]) {
    for r in runs.iter().filter(|r| r.eligible()) {
        for f in r.files.values().filter(|f| r.strays.contains(&f.stem)) {
            sel.take(r, f, GcReason::Stray);
        }
    }
}

/// `--max-bytes`: the files of the oldest eligible runs until the value bytes left are within
/// `max`. It runs last, so what the other policies and the journal already take counts toward
/// it; what it cannot free (pinned or active runs, orphans not collected) is reported.
pub(super) fn budget(
    sel: &mut Selection<'_>,
    runs: &[RunValues],
    orphans: &[OrphanDir],
    max: u64,
    skipped: &mut Vec<GcSkip>,
) {
    let orphan_bytes: u64 = orphans
        .iter()
        .filter_map(|o| o.files.as_ref().ok())
        .flat_map(|files| files.values())
        .map(|f| f.bytes)
        .sum();
    let all: u64 = runs
        .iter()
        .flat_map(|r| r.files.values())
        .map(|f| f.bytes)
        .sum::<u64>()
        + orphan_bytes;
    let mut left = all.saturating_sub(sel.bytes());
    let mut oldest: Vec<&RunValues> = runs.iter().filter(|r| r.eligible()).collect();
    oldest.sort_by(|a, b| {
        a.last_activity
            .cmp(&b.last_activity)
            .then_with(|| a.id.cmp(&b.id))
    });
    for r in oldest {
        if left <= max {
            break;
        }
        for f in r.files.values() {
            if !sel.contains(f) {
                left = left.saturating_sub(f.bytes);
                sel.take(r, f, GcReason::Budget);
            }
        }
    }
    if left > max {
        skipped.push(GcSkip {
            path: String::new(),
            reason: format!("budget: {left} bytes would remain, over the {max}-byte budget; the rest belongs to pinned or active runs, or to orphans (--orphans)"),
        });
    }
}
