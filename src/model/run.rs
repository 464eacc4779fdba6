//! The run model as the CLI prints it and the app shows it. Field names are a contract: scripts
//! read them from `mctl ... --json`. Add fields freely; never rename or drop one.

use super::usage::{Timing, Usage};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a run's last dispatch ended, or that it is still going (docs/runs-dir.md, "Run status").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// No terminal event since the last user message, and the transcript changed within the
    /// running window.
    Running,
    /// The last dispatch ended with a result (`run_result`).
    Done,
    /// The last dispatch ended with `run_error` (any code but `aborted`).
    Error,
    /// The last dispatch ended with a `run_error` whose code is `aborted`.
    Cancelled,
    /// No terminal event, and the transcript has not changed within the running window.
    #[default]
    Interrupted,
}

impl RunStatus {
    /// The status as it is spelled in JSON and on the command line (`running`, `done`...).
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
    /// Saved to a file by its agent, the model getting a stub that names it, and the file is
    /// gone (the agent's own cleanup took it, or a GC): the model got the stub, and can no
    /// longer read the output back.
    Swept,
}

impl RetentionState {
    /// The state as it is spelled in JSON and on the command line (`inline`, `retained`...).
    pub fn as_str(self) -> &'static str {
        match self {
            RetentionState::Inline => "inline",
            RetentionState::Retained => "retained",
            RetentionState::Unretained => "unretained",
            RetentionState::Damaged => "damaged",
            RetentionState::Truncated => "truncated",
            RetentionState::Swept => "swept",
        }
    }
}

/// One run: a transcript, a summary, or both.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// The run id: its transcript's name without `.jsonl` (or its summary's); a session id for
    /// other agents.
    pub id: String,
    /// The kind of store the run was read from: `klide` (the harness), `claude`, `codex`.
    #[serde(default)]
    pub source: crate::model::SourceKind,
    /// How the run's last dispatch ended, or whether it is still running.
    pub status: RunStatus,
    /// First user message, whitespace collapsed, at most [`TITLE_MAX`] characters.
    pub title: String,
    /// Model provider named by `run_started` (or the summary); `None` when neither says.
    pub provider: Option<String>,
    /// Model named by `run_started` (or the summary); `None` when neither says.
    pub model: Option<String>,
    /// Agent mode named by `run_started` (or the summary); `None` when neither says.
    pub mode: Option<String>,
    /// Working directory the run started in (`run_started`); `None` when not recorded.
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
    /// Distinct tool calls, by tool call id (started or finished).
    pub tool_calls: u64,
    /// Tool results (`tool_call_finished` events), the sum of the six state counts below.
    pub results: u64,
    /// Results at or under the threshold: the model saw them whole.
    pub inline: u64,
    /// Results over the threshold whose value file holds the same bytes.
    pub retained: u64,
    /// Total size of the retained results' full texts: bytes kept out of context.
    pub retained_bytes: u64,
    /// Results over the threshold without a value file: their full text rides in context.
    pub unretained: u64,
    /// Total size of the unretained results' full texts.
    pub unretained_bytes: u64,
    /// Results whose value file exists but differs from the transcript (or cannot be read).
    pub damaged: u64,
    /// Results their agent cut in place (Codex): the full output never reached the disk.
    #[serde(default)]
    pub truncated: u64,
    /// Results another agent saved to a file that is gone now (its own cleanup, or a GC): the
    /// model got their stubs.
    #[serde(default)]
    pub swept: u64,
    /// Lines of subagents' side conversations in this run's file (Claude Code's older sessions
    /// keep them in the session's file): for a session, those read as the subagent runs under
    /// it; for a subagent run, its own.
    #[serde(default)]
    pub sidechain_lines: u64,
    /// Value files that match no result of the run.
    pub strays: u64,
    /// Value files in the run's value directory (`*.txt` files directly inside).
    pub value_files: u64,
    /// Bytes on disk in the run's value directory (`*.txt` files directly inside).
    pub value_bytes: u64,
    /// Prompt tokens summed over every `assistant_message.usage`: all input, cached or not.
    pub input_tokens: u64,
    /// Completion tokens summed over every `assistant_message.usage` (reasoning included).
    pub output_tokens: u64,
    /// Of the input, the tokens read afresh (`None`: the store does not say how much was
    /// cached).
    pub uncached_input_tokens: Option<u64>,
    /// Of the input, the tokens written to the prompt cache (`None`: the store does not say).
    pub cache_write_tokens: Option<u64>,
    /// Of the input, the tokens read from the prompt cache (`None`: the store does not say).
    pub cache_read_tokens: Option<u64>,
    /// Of the output, the tokens spent reasoning (`None`: the store does not say).
    pub reasoning_tokens: Option<u64>,
    /// Cost in US dollars over every model call: as recorded, else estimated from the price
    /// table (`cost_estimated`). `None` when some call's tokens have no price: unknown, not 0.
    pub cost_usd: Option<f64>,
    /// Some of `cost_usd` is an estimate from the price table (docs/costs.md).
    pub cost_estimated: bool,
    /// Input and output tokens of the run and of every run under it (its subagents', theirs...),
    /// as a listing knows them; its own when it has none.
    pub tokens_with_children: u64,
    /// Cost of the run and of every run under it; `None` when one of them is unknown.
    pub cost_with_children_usd: Option<f64>,
    /// The run's figures per model its calls went to, in the order first used (one entry for
    /// a run of one model; none when no call names a model or spends a token).
    pub models: Vec<crate::model::ModelUsage>,
    /// Model time summed from `assistant_message.timing.modelMs`.
    pub model_ms: f64,
    /// Size of the transcript file in bytes, a torn last line included.
    pub transcript_bytes: u64,
    /// Bytes of a torn last line still waiting for its newline.
    pub pending_bytes: u64,
    /// Some line was written by a newer harness (`schemaVersion` above 1).
    pub newer_schema: bool,
    /// The run has a transcript (`<run>.jsonl`); false for a run known by its summary alone.
    pub has_transcript: bool,
    /// The run has a summary (`<run>.summary.json`).
    pub has_summary: bool,
    /// Code of the run error that ended the last dispatch, if it ended in one.
    pub error_code: Option<String>,
    /// Message of the run error that ended the last dispatch, if it ended in one.
    pub error_message: Option<String>,
    /// Names of the tools the run called, sorted.
    pub tools: Vec<String>,
    /// Line of the last `context_compacted`: a resume replays nothing before it.
    pub compacted_at_line: Option<u64>,
}

/// Longest run title, in characters; a longer first message is cut and ends with `…`.
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
    /// Id of the tool call this result answers.
    pub tool_call_id: String,
    /// Name of the tool called (`tool` when the transcript does not name it).
    pub tool: String,
    /// False when the tool reported a failure.
    pub ok: bool,
    /// Size of the full text in bytes (UTF-8).
    pub bytes: u64,
    /// Number of lines in the full text (`\n`-separated, a final `\n` starts no new line);
    /// `None` when the full text is lost and its store never said (unknown is not zero).
    pub lines: Option<u64>,
    /// Invisible format characters in it (bidirectional controls, zero-width characters): a
    /// text that holds any can be shown as other than what the model got.
    pub format_chars: u64,
    /// Retention state: what the model got in place of the full text.
    pub state: RetentionState,
    /// Value id of the result: its value file is `<value id>.txt` (another agent's store may name
    /// its files otherwise, or keep none).
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
    /// `ts` of the `tool_call_finished` event.
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
    /// Tool names, each once; results refer to them by index.
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
    /// File name in the value directory (`<stem>.txt`).
    pub name: String,
    /// Size on disk in bytes.
    pub bytes: u64,
}

/// What is wrong or unusual about a transcript line, or about the run as a whole.
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
    /// Several complete JSON values on one line (a lost newline, `}{`): each is read, in order,
    /// as a line of its own.
    Glued,
    /// A usage whose figures cannot be counted (negative, not a number, past any model call's):
    /// the line is read without it.
    BadUsage,
}

impl ProblemKind {
    /// True when the line could not be read at all.
    pub fn is_unreadable(self) -> bool {
        matches!(self, ProblemKind::Corrupt | ProblemKind::Invalid)
    }
}

/// Something a reader should know about a line of the transcript or about the run.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// Transcript line (1-based); 0 for a problem of the run as a whole.
    pub line: u64,
    /// What kind of problem it is; `corrupt` and `invalid` lines were not read.
    pub kind: ProblemKind,
    /// What happened, for a person to read.
    pub message: String,
}

/// A tool call named by an assistant message.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRef {
    /// Id of the tool call, to match with its `tool_call_started` and result.
    pub tool_call_id: String,
    /// Name of the tool called (`tool` when the message does not name it).
    pub name: String,
}

/// An attachment of a user message, described (its content is not carried).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentInfo {
    /// Path the attachment came from, when it has one.
    pub path: Option<String>,
    /// MIME type, when given.
    pub mime: Option<String>,
    /// Size of its inline content plus its data URI, in bytes.
    pub bytes: u64,
}

/// The error a `run_error` event reports.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    /// Error code (`aborted` means the run was cancelled), when given.
    pub code: Option<String>,
    /// Error message, when given.
    pub message: Option<String>,
    /// Further detail as text (JSON when not a string), shortened to [`INPUT_MAX`] bytes.
    pub detail: Option<String>,
    /// Whether the harness said the error may pass on a retry, when it said.
    pub retryable: Option<bool>,
}

/// One line of the timeline: every event in file order, plus unreadable lines at their place
/// (with `type` = `"unreadable"`). Only the fields of its type are present.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEvent {
    /// Transcript line (1-based).
    pub line: u64,
    /// Event type (`user_message`, `tool_call_finished`...), or `unreadable`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `seq` of the envelope, when it has one (it may repeat after a torn line).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seq: Option<u64>,
    /// `ts` of the envelope, in milliseconds since the Unix epoch.
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
    /// An assistant message's thinking, shortened to [`TEXT_MAX`] bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub thinking: Option<String>,
    /// Id of the user or assistant message.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message_id: Option<String>,
    /// Tool calls an assistant message asks for, in order; empty for other events.
    pub tool_calls: Vec<ToolCallRef>,
    /// Attachments of a user message; empty for other events.
    pub attachments: Vec<AttachmentInfo>,
    /// Token counts and cost of an assistant message.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<Usage>,
    /// Model timings of an assistant message.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub timing: Option<Timing>,
    /// Tool call id of a `tool_call_started` or `tool_call_finished`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    /// Tool name of a tool call or permission request; the subagent of a `subagent_requested`.
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
    /// Size in bytes of the whole input as compact JSON, before shortening.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub input_bytes: Option<u64>,
    /// The result of a `tool_call_finished`, classified (its text is read on demand).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<ResultInfo>,
    /// Working directory of a `run_started`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cwd: Option<String>,
    /// Agent mode of a `run_started`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<String>,
    /// Model provider of a `run_started`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provider: Option<String>,
    /// Model of a `run_started`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    /// Id of the permission request, question, subagent, advisor request or diff proposal.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub request_id: Option<String>,
    /// Decision of a permission or diff resolution (`allow (session)`, or its JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decision: Option<String>,
    /// File of a `file_changed` or diff proposal; workspace root of a `context_snapshot`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub path: Option<String>,
    /// Hash of the file before a `file_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub old_hash: Option<String>,
    /// Hash of the file after a `file_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub new_hash: Option<String>,
    /// Status of a `run_result` (`done` when it names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub status: Option<String>,
    /// The error of a `run_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ErrorInfo>,
    /// Estimated tokens in context, from a `context_snapshot`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub estimated_tokens: Option<u64>,
    /// Why the line could not be read, or what about it is unusual.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub problem: Option<String>,
    /// Lines of a type no reader knows, back to back, folded into this one row (its `type`
    /// is theirs, `text` says how many).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unknown_lines: Option<u64>,
}

/// Longest message text carried by a timeline event; longer texts are shortened.
pub const TEXT_MAX: usize = 64 * 1024;
/// Longest JSON input preview carried by a timeline event.
pub const INPUT_MAX: usize = 4 * 1024;

/// Everything `mctl show` prints about one run.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunDetail {
    /// The run's figures: status, counts, sizes, tokens and cost.
    pub run: Run,
    /// Every event and unreadable line, in file order.
    pub events: Vec<TimelineEvent>,
    /// Every tool result, in file order.
    pub results: Vec<ResultInfo>,
    /// Every problem found while reading, in file order.
    pub problems: Vec<Problem>,
    /// Value files that match no result of the run.
    pub strays: Vec<StrayFile>,
}
