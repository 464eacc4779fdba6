//! The request of each app command that takes more than a [`ResultRef`](super::ResultRef): one
//! struct per command, so that renaming a field here renames it in the generated TypeScript and
//! every caller that still uses the old name fails the type check.

use crate::export::ExportOptions;
use crate::gc::GcPolicy;
use crate::insights::ReplayShape;
use crate::retained::PeekRequest;
use crate::watch::RunKey;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::ResultRef;

/// Shows these runs directories from now on (and remembers them).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetRunsDirsRequest {
    pub dirs: Vec<String>,
}

/// The list of runs: from the watcher's models, or with `reread` every transcript read again.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListRunsRequest {
    pub reread: bool,
}

/// Names one run of a runs directory shown.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunRequest {
    pub dir: String,
    pub run: String,
}

/// Names one runs directory shown.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirRequest {
    pub dir: String,
}

/// A page of a result's full text: `count` lines from line `first` (1-based).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueLinesRequest {
    pub r: ResultRef,
    #[ts(type = "number")]
    pub first: u64,
    #[ts(type = "number")]
    pub count: u64,
}

/// Lines `first..=last` of a result's full text, for the clipboard.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueTextRequest {
    pub r: ResultRef,
    #[ts(type = "number")]
    pub first: u64,
    #[ts(type = "number")]
    pub last: u64,
}

/// A peek of a result (or a stray value file), as `peek_value` answers the model.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PeekValueRequest {
    pub r: ResultRef,
    pub request: PeekRequest,
}

/// Plans a garbage collection of `dir` with `policy`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GcPlanRequest {
    pub dir: String,
    pub policy: GcPolicy,
}

/// Pins (or unpins) a run.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetPinnedRequest {
    pub dir: String,
    pub run: String,
    pub pinned: bool,
}

/// Follows a run from after line `shown`; `token` numbers the follows of a window in the order
/// the user opened them.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FollowRunRequest {
    pub dir: String,
    pub run: String,
    #[ts(type = "number")]
    pub shown: u64,
    /// Bytes of complete lines the view read (the run's `transcriptBytes - pendingBytes`): when
    /// the index vouches for exactly these, the follow starts from it and reads nothing again.
    #[serde(default)]
    #[ts(type = "number | null", optional)]
    pub bytes: Option<u64>,
    #[ts(type = "number")]
    pub token: u64,
}

/// Ends follow `token`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UnfollowRunRequest {
    #[ts(type = "number")]
    pub token: u64,
}

/// The runs named, as they stand now.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunRowsRequest {
    pub runs: Vec<RunKey>,
}

/// Peek coverage of a run's values, or of the one `call` names.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CoverageRequest {
    pub dir: String,
    pub run: String,
    #[serde(default)]
    #[ts(optional)]
    pub call: Option<String>,
}

/// The threshold what-if of a runs directory (or one run) at each of `thresholds`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WhatIfRequest {
    pub dir: String,
    #[ts(type = "number[]")]
    pub thresholds: Vec<u64>,
    #[serde(default)]
    #[ts(optional)]
    pub run: Option<String>,
}

/// What resuming a run would replay; each message's content cut to `maxContent` bytes when
/// given (a view pages nothing of it: an unretained value can be hundreds of megabytes).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResumeRequest {
    pub dir: String,
    pub run: String,
    #[serde(default)]
    #[ts(optional)]
    pub shape: Option<ReplayShape>,
    pub without_values: bool,
    #[serde(default)]
    #[ts(type = "number | null", optional)]
    pub max_content: Option<u64>,
}

/// A search of every runs directory in `dirs` (`mctl search`), streaming its hits.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    pub dirs: Vec<String>,
    pub pattern: String,
    #[serde(default)]
    pub regex: bool,
    #[serde(default)]
    pub ignore_case: bool,
    #[serde(default)]
    #[ts(optional)]
    pub run: Option<String>,
    /// Where to look (every kind when absent).
    #[serde(default)]
    #[ts(optional)]
    pub kinds: Option<Vec<crate::search::HitKind>>,
    /// Stop after this many hits, over all the directories.
    #[serde(default)]
    #[ts(type = "number | null", optional)]
    pub max: Option<u64>,
}

/// Hits of a search found in runs directory `dir`, as they come.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchBatch {
    pub dir: String,
    pub hits: Vec<crate::search::SearchHit>,
}

/// Exports a run of a runs directory shown (`mctl export`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportRequest {
    pub dir: String,
    pub run: String,
    pub options: ExportOptions,
}

/// Two runs to diff, each of a runs directory shown (`mctl diff`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffRunsRequest {
    pub dir_a: String,
    pub run_a: String,
    pub dir_b: String,
    pub run_b: String,
}

/// Two tool results to compare as text, one of each run (`mctl diff --results`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffResultsRequest {
    pub a: ResultRef,
    pub b: ResultRef,
}
