//! What a live session sends a front end: the list of runs, patches to it, and the updates of
//! a followed run. Plain data, generated into TypeScript for the UI.

use crate::model::{Run, TimelineEvent};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One runs directory and whether it could be read.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirStatus {
    /// Path of the runs directory.
    pub path: String,
    /// Why the directory could not be read; `null` when it could.
    pub error: Option<String>,
    /// Runs listed from it.
    pub runs: u64,
    /// The kind of store it is read as.
    pub source: crate::model::SourceKind,
}

/// A run and the runs directory it is in (an index into [`RunList::dirs`]).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    /// Index of the run's directory in [`RunList::dirs`].
    pub dir: u32,
    /// The run's figures.
    pub run: Run,
}

/// Every run of the directories shown (`list_runs`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunList {
    /// Each runs directory shown, in order, with whether it could be read.
    pub dirs: Vec<DirStatus>,
    /// Every run of those directories.
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
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Run id.
    pub run: String,
}

/// A run of the list as it stands now (`run`), or gone from it (`None`): what the list patches
/// in after live changes, instead of reading every transcript again.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunPatch {
    /// Path of the runs directory, as the request named it.
    pub dir: String,
    /// Run id, as the request named it.
    pub id: String,
    /// The run as it stands now; `null` when it is gone.
    pub run: Option<Run>,
}
