//! The resume preview: the provider messages that resuming a run now would replay, built by the
//! harness's rules (spec Part C, `docs/insights.md`), each result over the threshold replaced by
//! its stub exactly when its value file exists now.

use crate::error::{Error, Result};
use crate::fold::Analyzer;
use crate::model::ResultInfo;
use crate::model::{RetentionState, RunOptions, Verify};
use crate::retained::{stub_from_source, ByteSource, ValueText};
use crate::runs::read::analyze_run_observed;
use crate::runs::RunsDir;
use crate::transcript::event::{Attachment, Envelope};
use crate::transcript::spans::{resolve, BigString};
use crate::transcript::RawLine;
use crate::transcript::SpanSource;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use ts_rs::TS;

/// The provider the harness gives the text-fold shape (spec C.1); every other gets structured.
const TEXT_FOLD_PROVIDER: &str = "ollama";
/// The system message a compaction marker leaves (spec C.4), before the summary.
const COMPACTED: &str = "[Earlier conversation compacted to save context]";

/// How results ride in the replayed messages (spec C.2, C.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayShape {
    /// `tool` messages with call ids and names, `tool_calls` on assistant messages.
    Structured,
    /// Results folded into the text of the next assistant message.
    TextFold,
}

/// A tool call as the provider gets it: `{id, type: "function", function: {name, arguments}}`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ProviderToolCall {
    /// The tool call id.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The tool called and its input.
    pub function: ProviderFunction,
}

/// The function part of a provider tool call: the tool and its input.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ProviderFunction {
    /// Name of the tool called (empty when the transcript names none).
    pub name: String,
    /// The call's input as compact JSON.
    pub arguments: String,
}

/// A result replayed as its stub.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StubbedResult {
    /// Tool call id of the result.
    pub tool_call_id: String,
    /// Value id of the result: its value file is `<value id>.txt`.
    pub value_id: String,
    /// The full text's size: what it would send without its value file.
    pub full_bytes: u64,
    /// The stub's size in bytes: what is sent instead.
    pub stub_bytes: u64,
}

/// One replayed message.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResumeMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The content the provider gets, possibly cut for the view (`clipped`).
    pub content: String,
    /// The size of the content the provider gets (`content` may be cut, below).
    pub content_bytes: u64,
    /// Whether `content` is only its first bytes ([`ResumePreview::clip`]).
    pub clipped: bool,
    /// Tool name of a `tool` message (structured shape; `""` when no earlier call named it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub name: Option<String>,
    /// Tool call id a `tool` message answers (structured shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    /// Tool calls of an assistant message (structured shape; unanswered calls are dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_calls: Option<Vec<ProviderToolCall>>,
    /// Image attachments' data URIs.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub images: Option<Vec<String>>,
    /// Transcript line of the event it comes from.
    pub line: u64,
    /// The results in it that ride as their stub.
    pub stubs: Vec<StubbedResult>,
}

/// What resuming a run now would send before the new user turn (`mctl resume --json`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ResumePreview {
    /// How results ride in the messages: the shape asked for, else the provider's.
    pub shape: ReplayShape,
    /// The messages, in the order they would be sent.
    pub messages: Vec<ResumeMessage>,
    /// The bytes of every message's content and of every tool call's name and arguments.
    pub bytes: u64,
    /// `bytes / 4`, as the harness estimates tokens.
    pub estimated_tokens: u64,
    /// The run's provider (which chooses the shape unless one is asked for).
    pub provider: Option<String>,
    /// Whether every value file was taken as gone (what GC of the run would change).
    pub without_values: bool,
    /// Results replayed as their stub.
    pub stubbed: u64,
}

impl ResumePreview {
    /// Cuts each message's content and each tool call's arguments to their first `max` bytes
    /// (on a character boundary), and each image's data URI to its first 64, for a view: the
    /// figures stay those of the whole.
    pub fn clip(&mut self, max: u64) {
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        for m in &mut self.messages {
            m.clipped |= cut(&mut m.content, max);
            for c in m.tool_calls.iter_mut().flatten() {
                m.clipped |= cut(&mut c.function.arguments, max);
            }
            for uri in m.images.iter_mut().flatten() {
                m.clipped |= cut(uri, IMAGE_SHOWN);
            }
        }
    }
}

/// Bytes of an image's data URI a clipped preview keeps (its kind and the start of its data).
const IMAGE_SHOWN: usize = 64;

/// Cuts `s` to at most `max` bytes on a character boundary; whether it cut anything.
fn cut(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let end = (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    s.truncate(end);
    true
}

/// The events a replay reads; every other is ignored (spec C.1). Parsed leniently: a missing
/// or `null` field is empty, and a content block that cannot be read is skipped alone, so that
/// an odd field never drops a whole message from the preview.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Replayed {
    UserMessage {
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        attachments: Option<Vec<Attachment>>,
    },
    AssistantMessage {
        #[serde(default)]
        content: Option<Vec<Value>>,
    },
    ToolCallFinished {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(default)]
        result: Option<ReplayResult>,
    },
    ContextCompacted {
        #[serde(default)]
        summary: Option<String>,
    },
    #[serde(other)]
    Other,
}

impl Replayed {
    /// Puts back, in place of each big string's placeholder, the whole text: a resume sends
    /// messages whole. A result's text stays a placeholder: it is sent as its stub when it has
    /// a value file, which reads only its previews.
    fn expand(&mut self, spans: &[BigString]) {
        let whole = |text: &mut String| {
            if let Some(big) = resolve(text, spans) {
                *text = SpanSource::open(big)
                    .and_then(|src| ValueText::Span(Arc::new(src)).into_string())
                    .unwrap_or_else(|e| format!("[the text cannot be read again: {e}]"));
            }
        };
        match self {
            Replayed::UserMessage { text, attachments } => {
                text.iter_mut().for_each(whole);
                for a in attachments.iter_mut().flatten() {
                    a.content.iter_mut().for_each(whole);
                    a.data_uri.iter_mut().for_each(whole);
                }
            }
            Replayed::AssistantMessage { content } => {
                for block in content.iter_mut().flatten() {
                    expand_value(block, &whole);
                }
            }
            Replayed::ContextCompacted { summary } => summary.iter_mut().for_each(whole),
            Replayed::ToolCallFinished { .. } | Replayed::Other => {}
        }
    }
}

fn expand_value(value: &mut Value, whole: &impl Fn(&mut String)) {
    match value {
        Value::String(s) => whole(s),
        Value::Array(items) => items.iter_mut().for_each(|v| expand_value(v, whole)),
        Value::Object(map) => map.values_mut().for_each(|v| expand_value(v, whole)),
        _ => {}
    }
}

/// A result as replayed: its text only (`ok` is never sent).
#[derive(Deserialize)]
struct ReplayResult {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: Option<String>,
    },
    ToolCall {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        input: Option<Value>,
    },
    #[serde(other)]
    Other,
}

/// Just enough of an event to find the calls that were answered (the structured shape's
/// first pass), without parsing results. A `tool_call_finished` whose `toolCallId` is not a
/// string is no answer here, and no message in the replay either.
#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "toolCallId")]
    tool_call_id: Option<String>,
}

/// What replaying a result sends: its text or its stub.
struct ResultText {
    content: String,
    stub: Option<StubbedResult>,
}

/// What resuming run `run` now would replay, in `shape` (else the one its provider gets);
/// `without_values` takes every value file as gone.
pub fn resume(
    dir: &RunsDir,
    run: &str,
    shape: Option<ReplayShape>,
    without_values: bool,
) -> Result<ResumePreview> {
    if !dir.source().capabilities().resume_replay {
        let message = format!(
            "the resume preview replays the harness's transcripts; {} resumes its own \
             sessions from what they hold (the stub of each persisted output included)",
            dir.source().label()
        );
        return Err(Error::new(crate::error::ErrorCode::Invalid, message));
    }
    let (layout, id) = dir.run_layout(run)?;
    // Which results have a value file now: a size comparison tells that (a damaged file
    // rides as a stub too, spec B.5), without reading every value.
    let opts = RunOptions {
        verify: Verify::Size,
        ..dir.opts
    };
    let reading = |e: std::io::Error| Error::io(format!("reading run {id}"), &e);
    let values = layout.store().run_values(&layout, &id).map_err(reading)?;
    // One read: the run model takes each line, and the replay the same line right after, with
    // the state the model gave its result. The shape comes from the provider, which the run's
    // first line names; one named only later may ask for another shape than the replay took
    // at its first line, and is then replayed again in its own.
    let mut taken: Option<Replay> = shape.map(Replay::new);
    let mut observe = |line: RawLine<'_>, model: &Analyzer| {
        let replay =
            taken.get_or_insert_with(|| Replay::new(shape_of(model.run().provider.as_deref())));
        let stub = stub_of(model.results(), line.number, without_values);
        replay_line(replay, line, stub);
    };
    let detail =
        analyze_run_observed(&layout, &id, &opts, false, values, &mut observe).map_err(reading)?;
    let provider = detail.run.provider.clone();
    let wanted = shape.unwrap_or_else(|| shape_of(provider.as_deref()));
    let replay = match taken {
        Some(replay) if replay.shape == wanted => replay,
        // Its provider named late (or no line at all): replayed in the shape it asks for.
        _ => replay_again(&layout, &id, &detail, wanted, without_values)?,
    };
    Ok(replay.finish(provider, without_values))
}

/// The shape of the replay a provider gets.
fn shape_of(provider: Option<&str>) -> ReplayShape {
    match provider {
        Some(TEXT_FOLD_PROVIDER) => ReplayShape::TextFold,
        _ => ReplayShape::Structured,
    }
}

/// Replays one line the run model took. A line of several JSON values glued together is one
/// the harness's replay cannot read (it parses each line whole), and is skipped, as is any
/// line it cannot read; the calls it names are not answered.
fn replay_line(replay: &mut Replay, line: RawLine<'_>, stubbed: Option<(String, String)>) {
    if line.glued.is_some() {
        return;
    }
    let Ok(env) = serde_json::from_slice::<Envelope>(line.bytes) else {
        return; // unreadable lines are skipped, as the run model skips them
    };
    if let Ok(Kind {
        kind,
        tool_call_id: Some(id),
    }) = serde_json::from_str::<Kind>(env.event.get())
    {
        if kind == "tool_call_finished" {
            replay.answered.insert(id);
        }
    }
    let Ok(mut event) = serde_json::from_str::<Replayed>(env.event.get()) else {
        return;
    };
    if !line.spans.is_empty() {
        event.expand(line.spans);
    }
    replay.event(line.number, event, line.spans, stubbed.as_ref());
}

/// The value id and tool of the result of line `number` among `results` (the last, as a line
/// has one), when a resume sends its stub: it has a value file now (a damaged one rides as a
/// stub too, spec B.5), and the preview is not of a resume without values.
/// `results` are in the order of their lines (a run model's are), so the line's own are found
/// from its place, not by a walk over all of them.
fn stub_of(results: &[ResultInfo], number: u64, without_values: bool) -> Option<(String, String)> {
    if without_values {
        return None;
    }
    let end = results.partition_point(|r| r.line <= number);
    (results[..end].iter().rev())
        .take_while(|r| r.line == number)
        .find(|r| matches!(r.state, RetentionState::Retained | RetentionState::Damaged))
        .map(|r| (r.value_id.clone(), r.tool.clone()))
}

/// The replay of run `id` in `shape`, from a second read of its transcript, with the states of
/// its results as `detail` gives them.
fn replay_again(
    layout: &crate::model::Layout,
    id: &str,
    detail: &crate::model::RunDetail,
    shape: ReplayShape,
    without_values: bool,
) -> Result<Replay> {
    let mut replay = Replay::new(shape);
    let Some(path) = layout.runs[id].transcript.clone() else {
        return Ok(replay);
    };
    let reading = |e: std::io::Error| Error::io(format!("reading {}", path.display()), &e);
    layout
        .store()
        .read_records(&path, id, &mut |line| {
            let stub = stub_of(&detail.results, line.number, without_values);
            replay_line(&mut replay, line, stub);
        })
        .map_err(reading)?;
    Ok(replay)
}

/// The replay's state as it goes through the transcript.
struct Replay {
    shape: ReplayShape,
    messages: Vec<ResumeMessage>,
    /// Calls answered somewhere in the transcript (of those read so far; the structured shape's
    /// calls are kept in `finish` only when answered by then).
    answered: HashSet<String>,
    /// Tool names learned from replayed tool call blocks (structured shape).
    names: HashMap<String, String>,
    /// Results waiting for the next assistant message (text-fold shape).
    pending: Vec<ResultText>,
}

impl Replay {
    fn new(shape: ReplayShape) -> Self {
        Self {
            shape,
            messages: Vec::new(),
            answered: HashSet::new(),
            names: HashMap::new(),
            pending: Vec::new(),
        }
    }

    fn push(&mut self, role: &str, content: String, line: u64) -> &mut ResumeMessage {
        self.messages.push(ResumeMessage {
            role: role.to_owned(),
            content,
            content_bytes: 0,
            clipped: false,
            name: None,
            tool_call_id: None,
            tool_calls: None,
            images: None,
            line,
            stubs: Vec::new(),
        });
        self.messages.last_mut().expect("just pushed")
    }

    fn event(
        &mut self,
        line: u64,
        event: Replayed,
        spans: &[BigString],
        stubbed: Option<&(String, String)>,
    ) {
        match event {
            Replayed::UserMessage { text, attachments } => {
                self.pending.clear();
                let attachments = attachments.unwrap_or_default();
                let (content, images) = user_content(text.unwrap_or_default(), attachments);
                self.push("user", content, line).images = images;
            }
            Replayed::AssistantMessage { content } => {
                let blocks = content.unwrap_or_default().into_iter();
                self.assistant(line, blocks.filter_map(|b| serde_json::from_value(b).ok()));
            }
            Replayed::ToolCallFinished {
                tool_call_id,
                result,
            } => {
                let content = result.and_then(|r| r.content).unwrap_or_default();
                let text = match resolve(&content, spans) {
                    Some(big) => SpanSource::open(big).map(|s| ValueText::Span(Arc::new(s))),
                    None => Ok(ValueText::Memory(Arc::new(content))),
                };
                let text = result_text(&tool_call_id, text, stubbed);
                match self.shape {
                    ReplayShape::TextFold => self.pending.push(text),
                    ReplayShape::Structured => {
                        let name = self.names.get(&tool_call_id).cloned().unwrap_or_default();
                        let m = self.push("tool", text.content, line);
                        m.name = Some(name);
                        m.tool_call_id = Some(tool_call_id);
                        m.stubs.extend(text.stub);
                    }
                }
            }
            Replayed::ContextCompacted { summary } => {
                self.messages.clear();
                self.pending.clear();
                self.names.clear();
                let summary = summary.unwrap_or_default();
                self.push("system", format!("{COMPACTED}\n{summary}"), line);
            }
            Replayed::Other => {}
        }
    }

    fn assistant(&mut self, line: u64, blocks: impl Iterator<Item = Block>) {
        let mut text = String::new();
        let mut calls = Vec::new();
        for block in blocks {
            match block {
                Block::Text { text: Some(t) } => text.push_str(&t),
                Block::ToolCall {
                    tool_call_id,
                    name,
                    input,
                } if self.shape == ReplayShape::Structured => {
                    let name = name.unwrap_or_default();
                    self.names.insert(tool_call_id.clone(), name.clone());
                    // A call without a result anywhere is dropped at the end (`finish`):
                    // provider APIs reject unanswered calls.
                    let input = input.unwrap_or_else(|| Value::Object(Default::default()));
                    calls.push(ProviderToolCall {
                        id: tool_call_id,
                        kind: "function".to_owned(),
                        function: ProviderFunction {
                            name,
                            arguments: input.to_string(),
                        },
                    });
                }
                // Thinking is dropped; so are text-fold's tool call blocks.
                _ => {}
            }
        }
        let mut stubs = Vec::new();
        if !self.pending.is_empty() {
            let mut folded = String::new();
            for r in self.pending.drain(..) {
                folded.push_str("\n[tool_result]\n");
                folded.push_str(&r.content);
                folded.push_str("\n[tool_result]\n:end");
                stubs.extend(r.stub);
            }
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&folded);
        }
        let m = self.push("assistant", text, line);
        m.tool_calls = (!calls.is_empty()).then_some(calls);
        m.stubs = stubs;
    }

    fn finish(mut self, provider: Option<String>, without_values: bool) -> ResumePreview {
        for m in &mut self.messages {
            m.content_bytes = m.content.len() as u64;
            // Calls answered nowhere in the transcript are dropped, known only once it is read.
            if let Some(calls) = &mut m.tool_calls {
                calls.retain(|c| self.answered.contains(&c.id));
                if calls.is_empty() {
                    m.tool_calls = None;
                }
            }
        }
        // Text-fold results still pending at the end are dropped (spec C.3).
        let bytes: u64 = self
            .messages
            .iter()
            .map(|m| {
                let calls = m.tool_calls.iter().flatten();
                m.content.len() as u64
                    + calls
                        .map(|c| (c.function.name.len() + c.function.arguments.len()) as u64)
                        .sum::<u64>()
            })
            .sum();
        let stubbed = self.messages.iter().map(|m| m.stubs.len() as u64).sum();
        ResumePreview {
            shape: self.shape,
            messages: self.messages,
            bytes,
            estimated_tokens: bytes / 4,
            provider,
            without_values,
            stubbed,
        }
    }
}

/// A user message's content and images (spec C.1): the text, then its text attachments.
fn user_content(text: String, attachments: Vec<Attachment>) -> (String, Option<Vec<String>>) {
    let mut files = Vec::new();
    let mut images = Vec::new();
    for a in attachments {
        match a.data_uri {
            Some(uri) => images.push(uri),
            None => files.push(format!(
                "File: {}\n```\n{}\n```",
                a.path.unwrap_or_default(),
                a.content.unwrap_or_default()
            )),
        }
    }
    let mut content = text;
    if !files.is_empty() {
        content.push_str("\n\n[Files attached for context]\n");
        content.push_str(&files.join("\n\n"));
    }
    (content, (!images.is_empty()).then_some(images))
}

/// What a result sends: its stub when it has a value file now (`stubbed` names its value id
/// and tool), else its text. A text too big to hold is read again from its transcript: a stub
/// reads only its previews; a text sent whole is read whole (it is what the resume would send).
fn result_text(
    call: &str,
    text: std::io::Result<ValueText>,
    stubbed: Option<&(String, String)>,
) -> ResultText {
    let sent = text.and_then(|text| match stubbed {
        Some((value_id, tool)) => {
            let stub = stub_from_source(value_id, tool, &text, &text.line_index()?)?;
            Ok(ResultText {
                stub: Some(StubbedResult {
                    tool_call_id: call.to_owned(),
                    value_id: value_id.clone(),
                    full_bytes: text.len(),
                    stub_bytes: stub.text.len() as u64,
                }),
                content: stub.text,
            })
        }
        None => Ok(ResultText {
            content: text.into_string()?,
            stub: None,
        }),
    });
    sent.unwrap_or_else(|e| ResultText {
        content: format!("[the result's text cannot be read again: {e}]"),
        stub: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_on_a_character_boundary_and_keeps_the_figures() {
        let mut replay = Replay::new(ReplayShape::Structured);
        replay.push("user", "é".repeat(10), 1);
        replay.push("user", "short".to_owned(), 2);
        let mut p = replay.finish(None, false);
        p.clip(5);
        assert_eq!(p.messages[0].content, "éé");
        assert!(p.messages[0].clipped);
        assert_eq!(p.messages[0].content_bytes, 20);
        assert_eq!(p.messages[1].content, "short");
        assert!(!p.messages[1].clipped);
        assert_eq!(p.bytes, 25);
    }
}
