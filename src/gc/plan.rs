//! Planning: which value files each policy selects, what that costs each run's next resume.
//! Planning reads and never writes.

use super::{journal, GcFile, GcPolicy, GcReason, GcReport, GcSkip};
use crate::error::{Error, ErrorCode, Result};
use crate::pins::Pins;
use crate::retained::DEFAULT_THRESHOLD;
use crate::runs::analyze::analyze_run_with;
use crate::runs::layout::{SUMMARY_SUFFIX, TRANSCRIPT_SUFFIX};
use crate::runs::values::{list_value_files, mtime_ns, ValueFile};
use crate::runs::{RunOptions, RunStatus, RunsDir, Verify};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// What planning knows of one run that has a value directory.
struct RunValues {
    id: String,
    last_activity: i64,
    /// Running, or changed within the idle guard: never touched.
    active: bool,
    pinned: bool,
    /// The value files GC may take from this run's directory. In a directory that is also a run
    /// `<id>.values`'s own folder, only the files that back one of this run's results.
    files: BTreeMap<String, ValueFile>,
    /// Value id -> bytes the next resume carries again without the file (spec B.5).
    backs: HashMap<String, u64>,
    /// Stems of files that match no result of the run (never in a shared directory).
    strays: HashSet<String>,
    stamp: String,
}

/// The state of a run's transcript and summary: sizes and modification times. Any write by the
/// harness changes it.
pub(crate) fn run_stamp(root: &Path, id: &str) -> String {
    [TRANSCRIPT_SUFFIX, SUMMARY_SUFFIX]
        .iter()
        .map(
            |s| match std::fs::symlink_metadata(root.join(format!("{id}{s}"))) {
                Ok(m) => format!("{}:{}", m.len(), mtime_ns(&m)),
                Err(_) => "-".to_owned(),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// The plan for `policy` over `dir`. Nothing is deleted.
pub fn plan(dir: &RunsDir, policy: &GcPolicy, pins: &Pins, now_ms: i64) -> Result<GcReport> {
    if policy.idle_guard_ms < 0 {
        return Err(Error::new(
            ErrorCode::Invalid,
            "the idle guard cannot be negative",
        ));
    }
    let layout = dir.layout()?;
    let root = dir.root();
    // Sizes are enough here: GC needs to know which files back which results, not whether
    // their bytes still match.
    let opts = RunOptions {
        verify: Verify::Size,
        now_ms,
        ..dir.opts
    };
    let mut report = GcReport::default();
    let mut runs: Vec<RunValues> = Vec::new();
    for (id, vdir) in &layout.value_dirs {
        if !layout.runs.contains_key(id) {
            continue; // an orphan, or another run's own folder: below
        }
        let listed = list_value_files(vdir).and_then(|files| {
            let detail = analyze_run_with(&layout, id, &opts, false, files.clone())?;
            Ok((files, detail))
        });
        let (mut files, detail) = match listed {
            Ok(x) => x,
            Err(e) => {
                // One unreadable run is left alone, not a reason to collect nothing.
                report.skipped.push(GcSkip {
                    path: format!("{id}.values/"),
                    reason: format!("cannot be read: {e}"),
                });
                continue;
            }
        };
        let replayed_from = detail.run.compacted_at_line.unwrap_or(0);
        let mut backs: HashMap<String, u64> = HashMap::new();
        for r in &detail.results {
            // What the harness stubs: results over its threshold, after the last compaction
            // (a resume replays nothing before it). A repeated call id shares one file.
            if r.bytes > DEFAULT_THRESHOLD && r.line > replayed_from {
                *backs.entry(r.value_id.clone()).or_default() += r.bytes;
            }
        }
        let matched: HashSet<&str> = detail.results.iter().map(|r| r.value_id.as_str()).collect();
        let shared = layout.is_shared(id);
        let strays: HashSet<String> = if shared {
            files.retain(|stem, _| matched.contains(stem.as_str()));
            HashSet::new()
        } else {
            files
                .keys()
                .filter(|k| !matched.contains(k.as_str()))
                .cloned()
                .collect()
        };
        runs.push(RunValues {
            id: id.clone(),
            last_activity: detail.run.updated_ms.unwrap_or(0),
            active: detail.run.status == RunStatus::Running
                || now_ms.saturating_sub(detail.run.updated_ms.unwrap_or(0)) < policy.idle_guard_ms,
            pinned: pins.is_pinned(root, id),
            files,
            backs,
            strays,
            stamp: run_stamp(root, id),
        });
    }

    let mut selected: BTreeMap<String, GcFile> = BTreeMap::new();
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
            run_stamp: run.stamp.clone(),
        });
    };
    let eligible = |r: &RunValues| !r.active && !r.pinned;
    if any_run_policy(policy) {
        for r in runs.iter().filter(|r| !eligible(r) && !r.files.is_empty()) {
            let reason = if r.pinned {
                "pinned"
            } else {
                "active: running or changed within the idle guard"
            };
            report.skipped.push(GcSkip {
                path: format!("{}.values/", r.id),
                reason: reason.into(),
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
            .skip(usize::try_from(keep).unwrap_or(usize::MAX))
            .filter(|r| eligible(r))
        {
            r.files
                .values()
                .for_each(|f| take(r, f, GcReason::KeepLast, &mut selected));
        }
    }
    let mut orphan_bytes = 0u64;
    for (id, d) in layout.orphan_value_dirs() {
        let files = match list_value_files(d) {
            Ok(f) => f,
            Err(e) => {
                report.skipped.push(GcSkip {
                    path: format!("{id}.values/"),
                    reason: format!("cannot be read: {e}"),
                });
                continue;
            }
        };
        orphan_bytes += files.values().map(|f| f.bytes).sum::<u64>();
        if !policy.orphans {
            continue;
        }
        if pins.is_pinned(root, id) {
            report.skipped.push(GcSkip {
                path: format!("{id}.values/"),
                reason: "pinned".into(),
            });
            continue;
        }
        let r = RunValues {
            id: id.to_owned(),
            last_activity: 0,
            active: false,
            pinned: false,
            files: BTreeMap::new(),
            backs: HashMap::new(),
            strays: HashSet::new(),
            stamp: run_stamp(root, id),
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
    if policy.strays {
        for r in runs.iter().filter(|r| eligible(r)) {
            for f in r.files.values().filter(|f| r.strays.contains(&f.stem)) {
                take(r, f, GcReason::Stray, &mut selected);
            }
        }
    }
    let resumed = journal::carry_over(dir.config_dir(), root, &mut selected)?;
    // The budget comes last: what the other policies already take counts toward it.
    if let Some(max) = policy.max_bytes {
        let all: u64 = runs
            .iter()
            .flat_map(|r| r.files.values())
            .map(|f| f.bytes)
            .sum::<u64>()
            + orphan_bytes;
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
        if left > max {
            report.skipped.push(GcSkip {
                path: String::new(),
                reason: format!("budget: {left} bytes would remain, over the {max}-byte budget; the rest belongs to pinned or active runs, or to orphans (--orphans)"),
            });
        }
    }

    report.resumed = resumed;
    report.files = selected.into_values().collect();
    report.total();
    Ok(report)
}

fn any_run_policy(p: &GcPolicy) -> bool {
    p.older_than_ms.is_some() || p.keep_last.is_some() || p.max_bytes.is_some() || p.strays
}
