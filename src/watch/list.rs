//! What a live session sends a front end: the list of runs, patches to it, and the updates of
//! a followed run. Plain data, generated into TypeScript for the UI.

use crate::model::{Run, TimelineEvent};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One runs directory and whether it could be read.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirStatus {
    pub path: String,
    pub error: Option<String>,
    pub runs: u64,
    /// The kind of store it is read as.
    pub source: crate::model::SourceKind,
}

/// A run and the runs directory it is in (an index into [`RunList::dirs`]).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    pub dir: u32,
    pub run: Run,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunList {
    pub dirs: Vec<DirStatus>,
    pub runs: Vec<RunRow>,
}

/// What the run view receives while it follows a live run.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunUpdate {
    /// The transcript was replaced or shrank: reload the run.
    pub reset: bool,
    /// New timeline entries, in file order, each sent once.
    pub events: Vec<TimelineEvent>,
    /// The run's figures now, folded from the new lines alone.
    pub run: Run,
}

/// Names one run: a runs directory (by path) and a run id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunKey {
    pub dir: String,
    pub run: String,
}

/// A run of the list as it stands now (`run`), or gone from it (`None`): what the list patches
/// in after live changes, instead of reading every transcript again.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunPatch {
    pub dir: String,
    pub id: String,
    pub run: Option<Run>,
}
