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
    /// Paths of the runs directories, in the order to show them; blank entries are dropped.
    pub dirs: Vec<String>,
}

/// The list of runs: from the watcher's models, or with `reread` every transcript read again.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ListRunsRequest {
    /// Read every transcript again instead of answering from the live models.
    pub reread: bool,
}

/// One run of a runs directory shown, read as `verify` says.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunDetailRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Run id (or a unique prefix of one).
    pub run: String,
    /// How its value files are compared with the transcript: every byte (`full`, when left
    /// out), or their size and first and last 64 KiB (`sampled`: the run of a 200 MB value
    /// opens without that value file being compared whole, and the verdict of every byte comes
    /// after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub verify: Option<DetailVerify>,
}

/// How closely a run's value files are compared with its transcript when it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum DetailVerify {
    /// Every byte.
    Full,
    /// Each value's size, first and last 64 KiB.
    Sampled,
}

/// Names one runs directory shown.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
}

/// A page of a result's full text: `count` lines from line `first` (1-based).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueLinesRequest {
    /// The result whose full text is read.
    pub r: ResultRef,
    /// First line of the page, 1-based.
    #[ts(type = "number")]
    pub first: u64,
    /// Number of lines wanted; fewer come back at the end of the text.
    #[ts(type = "number")]
    pub count: u64,
}

/// Lines `first..=last` of a result's full text, for the clipboard.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueTextRequest {
    /// The result whose full text is read.
    pub r: ResultRef,
    /// First line wanted, 1-based.
    #[ts(type = "number")]
    pub first: u64,
    /// Last line wanted, 1-based and included.
    #[ts(type = "number")]
    pub last: u64,
}

/// A peek of a result (or a stray value file), as `peek_value` answers the model.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PeekValueRequest {
    /// The result (or stray value file) to peek at.
    pub r: ResultRef,
    /// The line range or query, as the model would send it to `peek_value`.
    pub request: PeekRequest,
}

/// Plans a garbage collection of `dir` with `policy`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct GcPlanRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Which value files to collect.
    pub policy: GcPolicy,
}

/// Pins (or unpins) a run.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SetPinnedRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Id of the run to pin or unpin.
    pub run: String,
    /// True to pin the run, false to unpin it.
    pub pinned: bool,
}

/// Follows a run from after line `shown`; `token` numbers the follows of a window in the order
/// the user opened them.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FollowRunRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Id of the run to follow.
    pub run: String,
    /// Transcript line the view already shows up to; entries after it are sent.
    #[ts(type = "number")]
    pub shown: u64,
    /// Bytes of complete lines the view read (the run's `transcriptBytes - pendingBytes`): when
    /// the index vouches for exactly these, the follow starts from it and reads nothing again.
    #[serde(default)]
    #[ts(type = "number | null", optional)]
    pub bytes: Option<u64>,
    /// Number of this follow, rising with each one the window opens; an unfollow names it.
    #[ts(type = "number")]
    pub token: u64,
}

/// Ends follow `token`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UnfollowRunRequest {
    /// Number of the follow to end, as given to `follow_run`.
    #[ts(type = "number")]
    pub token: u64,
}

/// The runs named, as they stand now.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunRowsRequest {
    /// The runs wanted, each by directory and id.
    pub runs: Vec<RunKey>,
}

/// Peek coverage of a run's values, or of the one `call` names.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CoverageRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Run id (or a unique prefix of one).
    pub run: String,
    /// Tool call id or value id of one result; every value of the run when absent.
    #[serde(default)]
    #[ts(optional)]
    pub call: Option<String>,
}

/// The threshold what-if of a runs directory (or one run) at each of `thresholds`.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WhatIfRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Thresholds to try, in bytes; one answer each.
    #[ts(type = "number[]")]
    pub thresholds: Vec<u64>,
    /// One run (an id or a unique prefix of one); every run of the directory when absent.
    #[serde(default)]
    #[ts(optional)]
    pub run: Option<String>,
}

/// What resuming a run would replay; each message's content cut to `maxContent` bytes when
/// given (a view pages nothing of it: an unretained value can be hundreds of megabytes).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResumeRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Run id (or a unique prefix of one).
    pub run: String,
    /// How results ride in the replay; absent for the shape the run's provider gets.
    #[serde(default)]
    #[ts(optional)]
    pub shape: Option<ReplayShape>,
    /// Take every value file of the run as gone: what the resume would send after a GC.
    pub without_values: bool,
    /// Cut each message's content to this many bytes for the view; absent for the whole.
    #[serde(default)]
    #[ts(type = "number | null", optional)]
    pub max_content: Option<u64>,
}

/// A search of every runs directory in `dirs` (`mctl search`), streaming its hits.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchRequest {
    /// Paths of the runs directories to search, each one of those shown.
    pub dirs: Vec<String>,
    /// What to look for: a literal substring, or a regex when `regex`.
    pub pattern: String,
    /// Read `pattern` as a Rust regex instead of a literal substring.
    #[serde(default)]
    pub regex: bool,
    /// Match without regard to letter case.
    #[serde(default)]
    pub ignore_case: bool,
    /// One run (an id or a unique prefix of one); every run when absent.
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
    /// Path of the runs directory the hits are in, as the request named it.
    pub dir: String,
    /// The hits, in the order found.
    pub hits: Vec<crate::search::SearchHit>,
}

/// Exports a run of a runs directory shown (`mctl export`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportRequest {
    /// Path of the runs directory, one of those shown.
    pub dir: String,
    /// Run id (or a unique prefix of one).
    pub run: String,
    /// Format, what of each result goes in, and whether secrets are redacted.
    pub options: ExportOptions,
}

/// Two runs to diff, each of a runs directory shown (`mctl diff`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffRunsRequest {
    /// Path of the runs directory of run A, one of those shown.
    pub dir_a: String,
    /// Run A: an id or a unique prefix of one.
    pub run_a: String,
    /// Path of the runs directory of run B, one of those shown.
    pub dir_b: String,
    /// Run B: an id or a unique prefix of one.
    pub run_b: String,
}

/// Two tool results to compare as text, one of each run (`mctl diff --results`).
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffResultsRequest {
    /// Result A, of run A.
    pub a: ResultRef,
    /// Result B, of run B.
    pub b: ResultRef,
}
