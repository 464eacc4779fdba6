//! The run model as the CLI prints it and the app shows it. Field names are a contract: scripts
//! read them from `mctl ... --json`. Add fields freely; never rename or drop one.

use super::usage::{Timing, Usage};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Done,
    Error,
    Cancelled,
    #[default]
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Error => "error",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// Retention state of one tool result (spec B.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum RetentionState {
    /// At or under the threshold: the model saw it whole.
    Inline,
    /// Over the threshold and its value file holds the same bytes: the model saw the stub.
    Retained,
    /// Over the threshold and no value file: the full text is (or would be) in context.
    Unretained,
    /// A value file exists but its bytes differ from the transcript's.
    Damaged,
    /// Cut in place by its agent (Codex): the model got the cut text and the full output never
    /// reached the disk.
    Truncated,
}

impl RetentionState {
    pub fn as_str(self) -> &'static str {
        match self {
            RetentionState::Inline => "inline",
            RetentionState::Retained => "retained",
            RetentionState::Unretained => "unretained",
            RetentionState::Damaged => "damaged",
            RetentionState::Truncated => "truncated",
        }
    }
}

/// One run: a transcript, a summary, or both.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub id: String,
    /// The kind of store the run was read from: `klide` (the harness), `claude`, `codex`.
    #[serde(default)]
    pub source: crate::model::SourceKind,
    pub status: RunStatus,
    /// First user message, whitespace collapsed, at most [`TITLE_MAX`] characters.
    pub title: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub mode: Option<String>,
    pub cwd: Option<String>,
    /// The parent run of a subagent run, from its summary.
    pub parent_id: Option<String>,
    /// The parent's tool call that started this subagent run, when the store says (Claude
    /// Code's `Task` calls); the harness's subagent runs say it in their id.
    #[serde(default)]
    pub parent_call: Option<String>,
    /// `ts` of the first event.
    pub started_ms: Option<i64>,
    /// Last activity: the later of the transcript's modification time and its last event's `ts`.
    pub updated_ms: Option<i64>,
    /// Readable events.
    pub events: u64,
    /// Unreadable lines (corrupt JSON, not an event, invalid fields).
    pub problems: u64,
    /// Lines that were read but carry something to know (unknown type or keys, newer schema).
    pub warnings: u64,
    /// Dispatches: user messages, each answered by one agent loop.
    pub dispatches: u64,
    pub tool_calls: u64,
    pub results: u64,
    pub inline: u64,
    pub retained: u64,
    /// Total size of the retained results' full texts: bytes kept out of context.
    pub retained_bytes: u64,
    pub unretained: u64,
    /// Total size of the unretained results' full texts.
    pub unretained_bytes: u64,
    pub damaged: u64,
    /// Results their agent cut in place (Codex): the full output never reached the disk.
    #[serde(default)]
    pub truncated: u64,
    /// Lines of subagents' side conversations in this run's file (Claude Code's older sessions
    /// keep them in the session's file): for a session, those read as the subagent runs under
    /// it; for a subagent run, its own.
    #[serde(default)]
    pub sidechain_lines: u64,
    /// Value files that match no result of the run.
    pub strays: u64,
    pub value_files: u64,
    /// Bytes on disk in the run's value directory (`*.txt` files directly inside).
    pub value_bytes: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Model time summed from `assistant_message.timing.modelMs`.
    pub model_ms: f64,
    pub transcript_bytes: u64,
    /// Bytes of a torn last line still waiting for its newline.
    pub pending_bytes: u64,
    /// Some line was written by a newer harness (`schemaVersion` above 1).
    pub newer_schema: bool,
    pub has_transcript: bool,
    pub has_summary: bool,
    /// Code of the run error that ended the last dispatch, if it ended in one.
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    /// Names of the tools the run called, sorted.
    pub tools: Vec<String>,
    /// Line of the last `context_compacted`: a resume replays nothing before it.
    pub compacted_at_line: Option<u64>,
}

pub const TITLE_MAX: usize = 160;

/// The title of a run: its first user message, whitespace collapsed, at most [`TITLE_MAX`]
/// characters. A transcript and a summary give the same title this way.
pub(crate) fn title_of(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= TITLE_MAX {
        return collapsed;
    }
    let mut t: String = collapsed.chars().take(TITLE_MAX - 1).collect();
    t.push('…');
    t
}

/// One tool result of a run, with its retention state.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResultInfo {
    pub tool_call_id: String,
    pub tool: String,
    pub ok: bool,
    /// Size of the full text in bytes (UTF-8).
    pub bytes: u64,
    pub lines: u64,
    /// Invisible format characters in it (bidirectional controls, zero-width characters): a
    /// text that holds any can be shown as other than what the model got.
    pub format_chars: u64,
    pub state: RetentionState,
    pub value_id: String,
    /// Transcript line of the `tool_call_finished` event.
    pub line: u64,
    /// Size of the value file on disk, when there is one.
    pub value_file_bytes: Option<u64>,
    /// Bytes the model gets for this result on the next resume: the stub's size when retained,
    /// else the full text's.
    pub context_bytes: u64,
    /// Size of the stub the core builds for this result: what it costs (or would cost, were it
    /// retained) in context. Measured for a result whose value file exists, and for every
    /// result when the threshold what-if asks; else `null`.
    pub stub_bytes: Option<u64>,
    /// `ts` of the matching `tool_call_started`, for durations.
    pub started_ms: Option<i64>,
    pub finished_ms: Option<i64>,
    /// Byte offset of that line in the transcript, to read the full text back on demand.
    #[serde(skip)]
    pub offset: u64,
}

/// What the threshold what-if needs of a run's results: each one's tool, size and stub size,
/// kept compact (a tool name once per run, not once per result: the index keeps this for
/// every run, and the what-if reads it all).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, Serialize)]
pub struct ResultSizes {
    pub tools: Vec<String>,
    /// Each result: its tool (an index in `tools`), its bytes and its stub's bytes.
    pub results: Vec<(u32, u64, u64)>,
}

impl ResultSizes {
    /// The sizes of `results`; `None` unless every stub was measured.
    pub fn of(results: &[ResultInfo]) -> Option<Self> {
        let mut sizes = Self::default();
        for r in results {
            let tool = match sizes.tools.iter().position(|t| *t == r.tool) {
                Some(i) => i,
                None => {
                    sizes.tools.push(r.tool.clone());
                    sizes.tools.len() - 1
                }
            };
            sizes.results.push((tool as u32, r.bytes, r.stub_bytes?));
        }
        Some(sizes)
    }
}

/// A value file that matches no result of its run.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StrayFile {
    pub name: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// Not JSON, or not an envelope with an `event` object: the line is skipped.
    Corrupt,
    /// A known event type whose fields could not be read: the line is skipped.
    Invalid,
    /// An event type this reader does not know: shown by its type only.
    UnknownEvent,
    /// Keys this reader does not know: the event is read without them.
    UnknownKeys,
    /// Written by a newer harness.
    NewerSchema,
    /// A run without a transcript, a value directory that is a link, and the like.
    Run,
}

impl ProblemKind {
    /// True when the line could not be read at all.
    pub fn is_unreadable(self) -> bool {
        matches!(self, ProblemKind::Corrupt | ProblemKind::Invalid)
    }
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// Transcript line (1-based); 0 for a problem of the run as a whole.
    pub line: u64,
    pub kind: ProblemKind,
    pub message: String,
}

/// A tool call named by an assistant message.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRef {
    pub tool_call_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentInfo {
    pub path: Option<String>,
    pub mime: Option<String>,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    pub code: Option<String>,
    pub message: Option<String>,
    pub detail: Option<String>,
    pub retryable: Option<bool>,
}

/// One line of the timeline: every event in file order, plus unreadable lines at their place
/// (with `type` = `"unreadable"`). Only the fields of its type are present.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEvent {
    pub line: u64,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ts: Option<i64>,
    /// Message text, question, answer, advice, compaction summary, steering reason...
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// Size of the whole text when `text` was shortened to [`TEXT_MAX`] bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub thinking: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    pub tool_calls: Vec<ToolCallRef>,
    pub attachments: Vec<AttachmentInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub timing: Option<Timing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool: Option<String>,
    /// The tool call's own one-line summary of its input.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary: Option<String>,
    /// The tool input (or request, proposal, decision) as compact JSON, shortened.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub input_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<ResultInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub estimated_tokens: Option<u64>,
    /// Why the line could not be read, or what about it is unusual.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
}

/// Longest message text carried by a timeline event; longer texts are shortened.
pub const TEXT_MAX: usize = 64 * 1024;
/// Longest JSON input preview carried by a timeline event.
pub const INPUT_MAX: usize = 4 * 1024;

/// Everything `mctl show` prints about one run.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunDetail {
    pub run: Run,
    pub events: Vec<TimelineEvent>,
    pub results: Vec<ResultInfo>,
    pub problems: Vec<Problem>,
    pub strays: Vec<StrayFile>,
}
