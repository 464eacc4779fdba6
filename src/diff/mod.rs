//! Two runs side by side (`mctl diff`, the app's Diff view): say, the same task given to two
//! models. Their events are aligned with user messages as anchors, then, between two anchors,
//! tool calls by tool and input; each side's figures are set against the other's, and a tool
//! call on both sides whose results differ is marked (its texts compared byte for byte, then
//! shown as a text diff by [`diff_results`]). The rules are in `docs/diff.md`.

mod align;
mod text;

use crate::error::{Error, Result};
use crate::model::{ResultInfo, RetentionState, RunDetail, RunStatus, TimelineEvent};
use crate::retained::ValueText;
use crate::runs::RunsDir;
use align::{align, Step};
use serde::Serialize;
use std::collections::HashMap;
use ts_rs::TS;

pub use text::{
    diff_results, unified, DiffLine, DiffLineKind, DiffText, Hunk, TextDiff, TEXT_DIFF_MAX_BYTES,
};

/// Longest text of a message a diff row carries (the comparison uses all of it).
const TEXT_PREVIEW: usize = 2048;

/// What a diff says of one run: its figures.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffSide {
    /// Run id.
    pub run: String,
    /// The run's title: its first user message, whitespace collapsed.
    pub title: String,
    /// How the run's last dispatch ended, or whether it is still running.
    pub status: RunStatus,
    /// Model provider, when the run names one.
    pub provider: Option<String>,
    /// Model, when the run names one.
    pub model: Option<String>,
    /// Prompt tokens over the whole run.
    pub input_tokens: u64,
    /// Completion tokens over the whole run.
    pub output_tokens: u64,
    /// Cost in US dollars over the whole run (`None`: some call has no price).
    pub cost_usd: Option<f64>,
    /// Some of the cost is an estimate from the price table.
    pub cost_estimated: bool,
    /// From the first event's `ts` to the last one's; `null` when no event has one.
    pub duration_ms: Option<i64>,
    /// User messages (dispatches).
    pub user_messages: u64,
    /// Distinct tool calls.
    pub tool_calls: u64,
    /// Tool results that failed (`ok: false`).
    pub failed_results: u64,
    /// Results retained: the model saw their stub.
    pub retained: u64,
    /// Total size in bytes of the retained results' full texts.
    pub retained_bytes: u64,
    /// Bytes the next resume sends for the run's results.
    pub context_bytes: u64,
}

/// What a row of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DiffRowKind {
    /// A user message: an anchor.
    User,
    /// A tool call with its result.
    Tool,
    /// The last text the assistant wrote before the next user message: its answer.
    Answer,
}

/// How the two sides of a row compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum DiffStatus {
    /// On both sides, alike.
    Same,
    /// On both sides, and something differs (`differs` says what).
    Differs,
    /// On side A only.
    OnlyA,
    /// On side B only.
    OnlyB,
}

/// What differs in a row on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DiffField {
    /// A message's text.
    Text,
    /// A tool call's input.
    Input,
    /// A result's text.
    Result,
    /// A result succeeded on one side and failed on the other.
    Outcome,
    /// A result is retained on one side and not the other (its size crossed the threshold, or
    /// its value file is gone or damaged).
    State,
    /// One side's call has no result yet.
    Missing,
}

/// One side of a row.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffItem {
    /// Transcript line of the event (for a tool call, of its start, else of its result).
    pub line: u64,
    /// `ts` of that event, in milliseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub ts: Option<i64>,
    /// A message's text, at most 2 KiB of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// A message's size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_bytes: Option<u64>,
    /// Tool call id of a tool row.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    /// Tool name of a tool row (`tool` when the transcript does not name it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool: Option<String>,
    /// The tool call's own one-line summary of its input, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary: Option<String>,
    /// The tool input as compact JSON (shortened as the timeline shortens it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub input: Option<String>,
    /// The call's last result; absent for a message, or a call without a result yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result: Option<DiffResult>,
}

/// A tool result as a diff shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffResult {
    /// False when the tool reported a failure.
    pub ok: bool,
    /// Size of the full text in bytes.
    pub bytes: u64,
    /// Number of lines in the full text (`None`: unknown, the text is lost).
    pub lines: Option<u64>,
    /// Retention state: what the model got in place of the full text.
    pub state: RetentionState,
    /// Value id, to open the result (with its tool call id) in the compare view.
    pub value_id: String,
}

/// One row of a diff: a user message, a tool call or an answer, on one side or both.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffRow {
    /// What the row is.
    pub kind: DiffRowKind,
    /// Whether the row is on both sides, and alike.
    pub status: DiffStatus,
    /// What differs, for a row on both sides that differs; empty otherwise.
    pub differs: Vec<DiffField>,
    /// Run A's side of the row; absent for `only-b`.
    pub a: Option<DiffItem>,
    /// Run B's side of the row; absent for `only-a`.
    pub b: Option<DiffItem>,
}

/// How many rows of each status a diff has.
#[derive(Debug, Clone, Copy, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffCounts {
    /// Rows alike on both sides.
    pub same: u64,
    /// Rows on both sides that differ.
    pub differs: u64,
    /// Rows on side A only.
    pub only_a: u64,
    /// Rows on side B only.
    pub only_b: u64,
    /// Tool calls on both sides whose results' texts differ.
    pub results_differ: u64,
}

/// Two runs aligned (`mctl diff --json`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RunDiff {
    /// Run A's figures.
    pub a: DiffSide,
    /// Run B's figures.
    pub b: DiffSide,
    /// Rows of each status.
    pub counts: DiffCounts,
    /// The aligned rows, in the runs' order.
    pub rows: Vec<DiffRow>,
}

/// Run `run_a` of `dir_a` and run `run_b` of `dir_b` (which may be the same directory) aligned.
pub fn diff_runs(dir_a: &RunsDir, run_a: &str, dir_b: &RunsDir, run_b: &str) -> Result<RunDiff> {
    let _span = tracing::info_span!("diff_runs", run_a, run_b).entered();
    let a = Side::read(dir_a, run_a)?;
    let b = Side::read(dir_b, run_b)?;
    let mut rows = Vec::new();
    // Segments of each side: what precedes the first user message, then one per user message.
    let users = |s: &Side| -> Vec<String> {
        s.segments[1..]
            .iter()
            .map(|seg| seg.user.as_ref().map_or(String::new(), |u| norm(&u.text)))
            .collect()
    };
    let (ua, ub) = (users(&a), users(&b));
    // User messages pair only when equal: two different prompts are two anchors, not one.
    let mut steps = vec![Step::Both(0, 0)];
    steps.extend(align(&ua, &ub, &ua, &ub).into_iter().map(|s| match s {
        Step::Both(i, j) => Step::Both(i + 1, j + 1),
        Step::OnlyA(i) => Step::OnlyA(i + 1),
        Step::OnlyB(j) => Step::OnlyB(j + 1),
    }));
    for step in steps {
        let (sa, sb) = match step {
            Step::Both(i, j) => (Some(&a.segments[i]), Some(&b.segments[j])),
            Step::OnlyA(i) => (Some(&a.segments[i]), None),
            Step::OnlyB(j) => (None, Some(&b.segments[j])),
        };
        segment_rows(&a, sa, &b, sb, &mut rows)?;
    }
    let mut counts = DiffCounts::default();
    for row in &rows {
        match row.status {
            DiffStatus::Same => counts.same += 1,
            DiffStatus::Differs => counts.differs += 1,
            DiffStatus::OnlyA => counts.only_a += 1,
            DiffStatus::OnlyB => counts.only_b += 1,
        }
        counts.results_differ += u64::from(row.differs.contains(&DiffField::Result));
    }
    Ok(RunDiff {
        a: a.figures,
        b: b.figures,
        counts,
        rows,
    })
}

/// The rows of two segments (either may be missing: a user message on one side only).
fn segment_rows(
    a: &Side,
    sa: Option<&Segment>,
    b: &Side,
    sb: Option<&Segment>,
    rows: &mut Vec<DiffRow>,
) -> Result<()> {
    let (ua, ub) = (
        sa.and_then(|s| s.user.as_ref()),
        sb.and_then(|s| s.user.as_ref()),
    );
    rows.extend(message_row(DiffRowKind::User, ua, ub));
    let empty = Vec::new();
    let tools_a = sa.map_or(&empty, |s| &s.tools);
    let tools_b = sb.map_or(&empty, |s| &s.tools);
    let keys = |t: &[Call]| {
        t.iter()
            .map(|c| (c.tool.clone(), c.input.clone()))
            .collect::<Vec<_>>()
    };
    let names = |t: &[Call]| t.iter().map(|c| c.tool.clone()).collect::<Vec<_>>();
    for step in align(
        &keys(tools_a),
        &keys(tools_b),
        &names(tools_a),
        &names(tools_b),
    ) {
        let (x, y) = match step {
            Step::Both(i, j) => (Some(&tools_a[i]), Some(&tools_b[j])),
            Step::OnlyA(i) => (Some(&tools_a[i]), None),
            Step::OnlyB(j) => (None, Some(&tools_b[j])),
        };
        let mut differs = Vec::new();
        if let (Some(x), Some(y)) = (x, y) {
            differs = call_differs(a, x, b, y)?;
        }
        rows.push(row(
            DiffRowKind::Tool,
            x.map(Call::item),
            y.map(Call::item),
            differs,
        ));
    }
    let (aa, ab) = (
        sa.and_then(|s| s.answer.as_ref()),
        sb.and_then(|s| s.answer.as_ref()),
    );
    rows.extend(message_row(DiffRowKind::Answer, aa, ab));
    Ok(())
}

/// The row of two messages, either missing; none when both are.
fn message_row(kind: DiffRowKind, a: Option<&Message>, b: Option<&Message>) -> Option<DiffRow> {
    let differs = match (a, b) {
        (None, None) => return None,
        // The text as the timeline carries it (its first 64 KiB) and its whole size, not the
        // row's 2 KiB preview.
        (Some(x), Some(y)) if x.text != y.text || x.bytes != y.bytes => vec![DiffField::Text],
        _ => Vec::new(),
    };
    Some(row(kind, a.map(message_item), b.map(message_item), differs))
}

fn row(
    kind: DiffRowKind,
    a: Option<DiffItem>,
    b: Option<DiffItem>,
    differs: Vec<DiffField>,
) -> DiffRow {
    let status = match (&a, &b) {
        (Some(_), None) => DiffStatus::OnlyA,
        (None, Some(_)) => DiffStatus::OnlyB,
        _ if differs.is_empty() => DiffStatus::Same,
        _ => DiffStatus::Differs,
    };
    DiffRow {
        kind,
        status,
        differs,
        a,
        b,
    }
}

/// What differs between two tool calls paired by their tool.
fn call_differs(a: &Side, x: &Call, b: &Side, y: &Call) -> Result<Vec<DiffField>> {
    let mut fields = Vec::new();
    if x.input != y.input || x.input_bytes != y.input_bytes {
        fields.push(DiffField::Input);
    }
    match (&x.result, &y.result) {
        (Some(rx), Some(ry)) => {
            if rx.ok != ry.ok {
                fields.push(DiffField::Outcome);
            }
            let retained = |r: &ResultInfo| r.state == RetentionState::Retained;
            if retained(rx) != retained(ry) {
                fields.push(DiffField::State);
            }
            if !same_content(a, rx, b, ry)? {
                fields.push(DiffField::Result);
            }
        }
        (None, None) => {}
        _ => fields.push(DiffField::Missing),
    }
    Ok(fields)
}

/// Whether two results hold the same text: by size first, then by a hash of every byte (each
/// result read back from its transcript when the sizes agree, one at a time, so that two big
/// results are never held together).
fn same_content(a: &Side, x: &ResultInfo, b: &Side, y: &ResultInfo) -> Result<bool> {
    if x.bytes != y.bytes || x.lines != y.lines {
        return Ok(false);
    }
    if x.bytes == 0 {
        return Ok(true);
    }
    // Two texts are compared same-sized or not at all, so each side is hashed as it streams.
    let digest = |side: &Side, r: &ResultInfo| -> Result<[u8; 32]> {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        let text = side.content(r)?;
        text.write_to(&mut hasher)
            .map_err(|e| Error::io(format!("reading the result of {}", r.tool_call_id), &e))?;
        Ok(hasher.finalize().into())
    };
    Ok(digest(a, x)? == digest(b, y)?)
}

/// Whitespace collapsed: two prompts that differ only in spacing are the same anchor.
fn norm(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn message_item(m: &Message) -> DiffItem {
    let (text, _) = crate::fold::timeline::shorten(&m.text, TEXT_PREVIEW);
    DiffItem {
        line: m.line,
        ts: m.ts,
        text: Some(text),
        text_bytes: Some(m.bytes),
        tool_call_id: None,
        tool: None,
        summary: None,
        input: None,
        result: None,
    }
}

/// One run read for a diff: its figures and its events cut into segments.
struct Side {
    figures: DiffSide,
    segments: Vec<Segment>,
    layout: crate::model::Layout,
    id: String,
}

/// A user message (none for what precedes the first) and what followed it.
#[derive(Default)]
struct Segment {
    user: Option<Message>,
    tools: Vec<Call>,
    answer: Option<Message>,
}

struct Message {
    line: u64,
    ts: Option<i64>,
    text: String,
    bytes: u64,
}

struct Call {
    line: u64,
    ts: Option<i64>,
    id: String,
    tool: String,
    summary: Option<String>,
    input: String,
    input_bytes: u64,
    result: Option<ResultInfo>,
}

impl Call {
    fn item(&self) -> DiffItem {
        DiffItem {
            line: self.line,
            ts: self.ts,
            text: None,
            text_bytes: None,
            tool_call_id: Some(self.id.clone()),
            tool: Some(self.tool.clone()),
            summary: self.summary.clone(),
            input: Some(self.input.clone()),
            result: self.result.as_ref().map(|r| DiffResult {
                ok: r.ok,
                bytes: r.bytes,
                lines: r.lines,
                state: r.state,
                value_id: r.value_id.clone(),
            }),
        }
    }
}

impl Side {
    fn read(dir: &RunsDir, run: &str) -> Result<Self> {
        let detail = dir.detail(run)?;
        Ok(Side {
            figures: figures(&detail),
            segments: segments(&detail),
            layout: dir.layout()?,
            id: detail.run.id,
        })
    }

    /// A result's full text: the transcript's copy (which holds every result whole), or another
    /// agent's value file.
    fn content(&self, r: &ResultInfo) -> Result<ValueText> {
        crate::runs::access::result_source(&self.layout, &self.id, r)
            .map_err(|e| Error::io(format!("reading the result of {}", r.tool_call_id), &e))
    }
}

fn figures(d: &RunDetail) -> DiffSide {
    let r = &d.run;
    let ts = d.events.iter().filter_map(|e| e.ts);
    let duration_ms = ts
        .clone()
        .min()
        .zip(ts.max())
        .map(|(lo, hi)| hi.saturating_sub(lo));
    DiffSide {
        run: r.id.clone(),
        title: r.title.clone(),
        status: r.status,
        provider: r.provider.clone(),
        model: r.model.clone(),
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cost_usd: r.cost_usd,
        cost_estimated: r.cost_estimated,
        duration_ms,
        user_messages: r.dispatches,
        tool_calls: r.tool_calls,
        failed_results: d.results.iter().filter(|x| !x.ok).count() as u64,
        retained: r.retained,
        retained_bytes: r.retained_bytes,
        context_bytes: d.results.iter().map(|x| x.context_bytes).sum(),
    }
}

/// The run's events cut at each user message: the tool calls in the order they started (a call
/// seen only by its result, at the result's place), each with its last result.
fn segments(d: &RunDetail) -> Vec<Segment> {
    let mut segments = vec![Segment::default()];
    // Where each call is: (segment, index), to attach its result when it comes.
    let mut calls: HashMap<String, (usize, usize)> = HashMap::new();
    for e in &d.events {
        let last = segments.len() - 1;
        match e.kind.as_str() {
            "user_message" => segments.push(Segment {
                user: Some(message(e)),
                ..Default::default()
            }),
            "assistant_message" if e.text.as_deref().is_some_and(|t| !t.trim().is_empty()) => {
                segments[last].answer = Some(message(e));
            }
            "tool_call_started" | "tool_call_finished" => {
                let Some(id) = e.tool_call_id.clone() else {
                    continue;
                };
                // A start always begins a call (a harness may use an id again in a later
                // turn); a result goes to the last call of its id, or is a call of its own.
                let known = calls.get(&id).copied();
                let (s, i) = match known {
                    Some(at) if e.kind == "tool_call_finished" => at,
                    _ => {
                        segments[last].tools.push(Call {
                            line: e.line,
                            ts: e.ts,
                            id: id.clone(),
                            tool: e.tool.clone().unwrap_or_else(|| "tool".to_owned()),
                            summary: e.summary.clone(),
                            input: e.input.clone().unwrap_or_default(),
                            input_bytes: e.input_bytes.unwrap_or(0),
                            result: None,
                        });
                        let at = (last, segments[last].tools.len() - 1);
                        calls.insert(id, at);
                        at
                    }
                };
                if let Some(r) = &e.result {
                    segments[s].tools[i].result = Some(r.clone());
                }
            }
            _ => {}
        }
    }
    segments
}

fn message(e: &TimelineEvent) -> Message {
    let text = e.text.clone().unwrap_or_default();
    Message {
        line: e.line,
        ts: e.ts,
        bytes: e.text_bytes.unwrap_or(text.len() as u64),
        text,
    }
}
