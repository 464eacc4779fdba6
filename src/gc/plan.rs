//! Planning: which value files each policy selects, what that costs each run's next resume.
//! Planning reads and never writes.

use super::journal;
use super::{GcFile, GcPolicy, GcReason, GcReport, GcSkip};
use crate::error::{Error, Result};
use crate::pins::Pins;
use crate::runs::analyze::analyze_run_with;
use crate::runs::values::{list_value_files, ValueFile};
use crate::runs::{RunOptions, RunStatus, RunsDir, Verify};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What planning knows of one run that has a value directory.
pub(crate) struct RunValues {
    pub id: String,
    pub last_activity: i64,
    /// Running, or changed within the idle guard: never touched.
    pub active: bool,
    pub pinned: bool,
    pub files: BTreeMap<String, ValueFile>,
    /// Value id -> full size of the result it backs, for results over the threshold.
    pub backs: HashMap<String, u64>,
    /// Stems of the files that match no result of the run.
    pub strays: HashSet<String>,
}

/// The plan for `policy` over `dir`. Nothing is deleted.
pub fn plan(dir: &RunsDir, policy: &GcPolicy, pins: &Pins, now_ms: i64) -> Result<GcReport> {
    let layout = dir.layout()?;
    let root = dir.root();
    // Sizes are enough here: GC needs to know which files back which results, not whether
    // their bytes still match.
    let opts = RunOptions {
        verify: Verify::Size,
        now_ms,
        ..dir.opts
    };
    let mut runs: Vec<RunValues> = Vec::new();
    for (id, vdir) in &layout.value_dirs {
        if !layout.runs.contains_key(id) {
            continue; // an orphan, or another run's own folder: below
        }
        let files = list_value_files(vdir)
            .map_err(|e| Error::io(format!("reading {}", vdir.display()), &e))?;
        let detail = analyze_run_with(&layout, id, &opts, false, files.clone())
            .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        let last_activity = detail.run.updated_ms.unwrap_or(0);
        let backs = detail
            .results
            .iter()
            .filter(|r| r.bytes > dir.opts.threshold)
            .map(|r| (r.value_id.clone(), r.bytes))
            .collect();
        let matched: HashSet<&str> = detail.results.iter().map(|r| r.value_id.as_str()).collect();
        let strays = files
            .keys()
            .filter(|k| !matched.contains(k.as_str()))
            .cloned()
            .collect();
        runs.push(RunValues {
            id: id.clone(),
            last_activity,
            active: detail.run.status == RunStatus::Running
                || now_ms.saturating_sub(last_activity) < policy.idle_guard_ms,
            pinned: pins.is_pinned(root, id),
            files,
            backs,
            strays,
        });
    }

    let mut selected: BTreeMap<String, GcFile> = BTreeMap::new();
    let mut report = GcReport::default();
    let rel = |f: &ValueFile| {
        f.path
            .strip_prefix(root)
            .unwrap_or(&f.path)
            .to_string_lossy()
            .into_owned()
    };
    let take = |run: &RunValues,
                f: &ValueFile,
                reason: GcReason,
                selected: &mut BTreeMap<String, GcFile>| {
        let path = rel(f);
        selected.entry(path.clone()).or_insert_with(|| GcFile {
            path,
            run: run.id.clone(),
            bytes: f.bytes,
            reason,
            context_bytes: run.backs.get(&f.stem).copied().unwrap_or(0),
            mtime_ns: f.mtime_ns.clone(),
        });
    };
    let eligible = |r: &RunValues| !r.active && !r.pinned;
    for r in runs.iter().filter(|r| !eligible(r) && !r.files.is_empty()) {
        if r.pinned && any_policy(policy) {
            report.skipped.push(GcSkip {
                path: format!("{}.values/", r.id),
                reason: "pinned".into(),
            });
        } else if r.active && any_policy(policy) {
            report.skipped.push(GcSkip {
                path: format!("{}.values/", r.id),
                reason: "active: running or changed within the idle guard".into(),
            });
        }
    }

    if let Some(age) = policy.older_than_ms {
        for r in runs
            .iter()
            .filter(|r| eligible(r) && now_ms.saturating_sub(r.last_activity) > age)
        {
            r.files
                .values()
                .for_each(|f| take(r, f, GcReason::Age, &mut selected));
        }
    }
    if let Some(keep) = policy.keep_last {
        let mut newest: Vec<&RunValues> = runs.iter().filter(|r| !r.files.is_empty()).collect();
        newest.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then_with(|| a.id.cmp(&b.id))
        });
        for r in newest
            .into_iter()
            .skip(keep as usize)
            .filter(|r| eligible(r))
        {
            r.files
                .values()
                .for_each(|f| take(r, f, GcReason::KeepLast, &mut selected));
        }
    }
    let orphans: Vec<(String, BTreeMap<String, ValueFile>)> = layout
        .orphan_value_dirs()
        .map(|(id, d)| {
            Ok((
                id.to_owned(),
                list_value_files(d)
                    .map_err(|e| Error::io(format!("reading {}", d.display()), &e))?,
            ))
        })
        .collect::<Result<_>>()?;
    if let Some(max) = policy.max_bytes {
        let all: u64 = runs
            .iter()
            .flat_map(|r| r.files.values())
            .chain(orphans.iter().flat_map(|(_, f)| f.values()))
            .map(|f| f.bytes)
            .sum();
        let mut left = all.saturating_sub(selected.values().map(|f| f.bytes).sum());
        let mut oldest: Vec<&RunValues> = runs.iter().filter(|r| eligible(r)).collect();
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
                if !selected.contains_key(&rel(f)) {
                    left = left.saturating_sub(f.bytes);
                    take(r, f, GcReason::Budget, &mut selected);
                }
            }
        }
    }
    if policy.orphans {
        for (id, files) in &orphans {
            let r = RunValues {
                id: id.clone(),
                last_activity: 0,
                active: false,
                pinned: false,
                files: BTreeMap::new(),
                backs: HashMap::new(),
                strays: HashSet::new(),
            };
            for f in files.values() {
                // A file written within the idle guard may belong to a run being created.
                if f.modified_ms
                    .is_some_and(|m| now_ms.saturating_sub(m) < policy.idle_guard_ms)
                {
                    report.skipped.push(GcSkip {
                        path: rel(f),
                        reason: "orphan changed within the idle guard".into(),
                    });
                    continue;
                }
                take(&r, f, GcReason::Orphan, &mut selected);
            }
        }
    }
    if policy.strays {
        for r in runs.iter().filter(|r| eligible(r)) {
            for f in r.files.values().filter(|f| r.strays.contains(&f.stem)) {
                take(r, f, GcReason::Stray, &mut selected);
            }
        }
    }

    let resumed = journal::carry_over(dir.config_dir(), root, &mut selected)?;
    report.resumed = resumed;
    report.files = selected.into_values().collect();
    report.total();
    Ok(report)
}

fn any_policy(p: &GcPolicy) -> bool {
    p.older_than_ms.is_some() || p.keep_last.is_some() || p.max_bytes.is_some() || p.strays
}
