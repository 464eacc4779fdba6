//! Run summary files (`<id>.summary.json`). They describe only the latest dispatch and do not
//! move mid-run, so the run model takes its figures from the transcript; a summary adds what a
//! transcript does not say (a subagent's `parentId`) and stands in for a missing transcript.

use crate::model::options::modified_ms;
use crate::model::RunOptions;
use crate::model::{title_of, Run, RunStatus};
use serde::Deserialize;
use std::fs;
use std::path::Path;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Summary {
    parent_id: Option<String>,
    title: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    mode: Option<String>,
    status: Option<String>,
    created_ms: Option<i64>,
    updated_ms: Option<i64>,
}

/// Adds what the summary at `path` tells to `run`. An unreadable summary is ignored: the
/// transcript is the source of truth.
pub(crate) fn apply_summary(path: &Path, run: &mut Run, no_transcript: bool, opts: &RunOptions) {
    let Ok(bytes) = fs::read(path) else { return };
    let Ok(summary) = serde_json::from_slice::<Summary>(&bytes) else {
        return;
    };
    run.parent_id = summary.parent_id;
    if !no_transcript {
        return;
    }
    run.title = summary.title.map(|t| title_of(&t)).unwrap_or_default();
    run.provider = summary.provider;
    run.model = summary.model;
    run.mode = summary.mode;
    run.started_ms = summary.created_ms;
    let mtime = fs::metadata(path).ok().as_ref().and_then(modified_ms);
    run.updated_ms = summary.updated_ms.max(mtime);
    run.status = match summary.status.as_deref() {
        Some("done") => RunStatus::Done,
        Some("error") => RunStatus::Error,
        Some("cancelled" | "aborted") => RunStatus::Cancelled,
        Some("running") => {
            (run.updated_ms).map_or(RunStatus::Interrupted, |u| opts.status_by_clock(u))
        }
        _ => RunStatus::Interrupted,
    };
}
