//! Planning: which value files each policy selects, what that costs each run's next resume.
//! Planning reads and never writes. It goes in steps: gather the candidates
//! ([`super::candidates`]), apply each policy in turn ([`super::policies`]), carry over what an
//! interrupted apply left ([`super::journal`]), then total the cost per run.

use super::candidates::{gather_orphans, gather_runs, PlanInput};
use super::owners::Owners;
use super::policies::{self, Selection};
use super::{journal, GcPolicy, GcReport};
use crate::error::{Error, ErrorCode, Result};
use crate::pins::Pins;
use crate::runs::RunsDir;

/// The plan for `policy` over `dir`. Nothing is deleted.
pub fn plan(dir: &RunsDir, policy: &GcPolicy, pins: &Pins, now_ms: i64) -> Result<GcReport> {
    let _span = tracing::info_span!("gc_plan", dir = %dir.root().display(), ?policy).entered();
    if policy.idle_guard_ms < 0 {
        return Err(Error::new(
            ErrorCode::Invalid,
            "the idle guard cannot be negative",
        ));
    }
    // A negative age would select every run: refused as the guard is, not read as 0.
    if policy.older_than_ms.is_some_and(|ms| ms < 0) {
        return Err(Error::new(
            ErrorCode::Invalid,
            "the age of runs to collect (olderThanMs) cannot be negative",
        ));
    }
    let layout = dir.layout()?;
    let owners = Owners::of(&layout);
    let input = PlanInput {
        root: dir.root(),
        owners: &owners,
        policy,
        pinned: pins.of_dir(dir.root()),
        now_ms,
    };
    let mut report = GcReport::default();
    let runs = gather_runs(dir, &layout, &input, &mut report.skipped);
    let orphans = gather_orphans(&layout, &owners);
    tracing::debug!(
        runs = runs.len(),
        orphans = orphans.len(),
        "gathered the candidates"
    );

    // The order matters: a file keeps the reason of the first policy that takes it.
    let mut selection = Selection::new(input.root);
    if any_run_policy(policy) {
        policies::report_held_runs(&runs, &mut report.skipped);
    }
    if let Some(age) = policy.older_than_ms {
        policies::older_than(&mut selection, &runs, age, now_ms);
    }
    if let Some(keep) = policy.keep_last {
        policies::keep_last(&mut selection, &runs, keep);
    }
    policies::orphans(&mut selection, &orphans, &input, &mut report.skipped);
    if policy.strays {
        policies::strays(&mut selection, &runs);
    }
    report.resumed =
        journal::carry_over(dir.config_dir(), input.root, &owners, &mut selection.files)?;
    // The budget comes last: what the other policies already take counts toward it.
    if let Some(max) = policy.max_bytes {
        policies::budget(&mut selection, &runs, &orphans, max, &mut report.skipped);
    }

    report.files = selection.into_files();
    report.agent_sweep = super::storage::agent_sweep(dir, &layout, now_ms);
    tracing::debug!(files = report.files.len(), "selected");
    // Each file carries what its loss costs its run's next resume; totalling them tells each
    // run's cost and the plan's.
    report.total();
    let titles: std::collections::HashMap<&str, &str> = (runs.iter())
        .map(|r| (r.id.as_str(), r.title.as_str()))
        .collect();
    for r in &mut report.runs {
        r.title = titles.get(r.run.as_str()).copied().unwrap_or("").to_owned();
    }
    // Freeing the records of every value file takes a while, and nothing waits for it.
    std::thread::spawn(move || drop((runs, orphans, layout)));
    Ok(report)
}

/// Whether a policy that selects among runs is asked for: only then is a held run worth
/// reporting.
fn any_run_policy(p: &GcPolicy) -> bool {
    p.older_than_ms.is_some() || p.keep_last.is_some() || p.max_bytes.is_some() || p.strays
}
