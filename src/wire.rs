//! The desktop app's wire contract: request and response types of every command that are not
//! already run-model types. Plain data, no Tauri: the shell passes them through, and their
//! TypeScript twins are generated into `ui/src/gen/` (checked by `tests/it/gen_types.rs`).

use crate::retained::Stub;
use crate::runs::{RetentionState, Run, TimelineEvent};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where the runs directories came from, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DirsSource {
    /// `--runs-dir` on the command line.
    Cli,
    /// `$MCTL_RUNS_DIR`.
    Env,
    /// Chosen in the app and remembered.
    Saved,
    /// The harness's own directory.
    Default,
}

#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub runs_dirs: Vec<String>,
    pub source: DirsSource,
    pub threshold: u64,
}

/// One runs directory and whether it could be read.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DirStatus {
    pub path: String,
    pub error: Option<String>,
    pub runs: u64,
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

/// Names one tool result: a runs directory (by path), a run id, a tool call id or value id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResultRef {
    pub dir: String,
    pub run: String,
    pub call: String,
}

/// Where a value's full text is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum TextSource {
    /// The value file (what `peek_value` reads).
    File,
    /// The transcript's copy of the result.
    Transcript,
}

/// A tool result opened for the compare view.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueInfo {
    pub tool_call_id: String,
    pub tool: String,
    pub value_id: String,
    pub state: RetentionState,
    pub ok: bool,
    pub bytes: u64,
    pub lines: u64,
    pub source: TextSource,
    /// The value file, when there is one.
    pub value_path: Option<String>,
    /// The stub the model saw (or would see, for a result over the threshold).
    pub stub: Option<Stub>,
    /// What the next resume sends for this result.
    pub context_bytes: u64,
    pub threshold: u64,
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
