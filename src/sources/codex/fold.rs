//! A Codex rollout's lines folded into the run model (docs/agents.md). `event_msg` user
//! messages are the prompts; `response_item`s give the answers, reasoning and tool calls, each
//! call paired with its output by `call_id`. An output Codex cut in place is `truncated`: the
//! rollout keeps only what the model got. Other `event_msg`s repeat what `response_item`s say
//! and are folded away; an unknown line type is counted and shown.

use super::items::{self, Completed};
use super::output_line::OutputLine;
use super::reasoning::ReasoningLine;
use super::tokens::{Info, TokenCounts};
use crate::fold::{Analyzer, ForeignResult, Terminal};
use crate::model::{ProblemKind, RetentionState};
use crate::retained::{count_format_chars, count_lines};
use crate::sources::lax::{present, LaxStr, ObjectOr};
use crate::transcript::borrowed::opt_str;
use crate::transcript::event::Attachment;
use crate::transcript::event::{ContentBlock, Event, RunErrorBody};
use crate::transcript::RawLine;
use regex::Regex;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

/// The marks Codex leaves where it cut an output: `…N tokens truncated…`, `…N chars
/// truncated…`, and the older `[... omitted N of M lines ...]` and `[... output truncated to
/// fit N bytes ...]`.
static CUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"…\d+ (?:tokens|chars) truncated…|\[\.\.\. omitted \d+ of \d+ lines \.\.\.\]|\[\.\.\. output truncated to fit \d+ bytes \.\.\.\]|Warning: truncated output \(original token count: \d+\)",
    )
    .expect("valid regex")
});

/// `Total output lines: M`: how long the output was before the cut.
static TOTAL_LINES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^Total output lines: (\d+)\s*$").expect("valid regex"));

/// `Exit code: N` (freeform) or `Process exited with code N` (unified exec).
static EXIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?:Exit code:|Process exited with code)\s*(-?\d+)\s*$").expect("valid regex")
});

/// The cut mark in `text`, if Codex cut it.
pub(crate) fn cut_mark(text: &str) -> Option<&str> {
    CUT.find(text).map(|m| m.as_str())
}

/// Where the IDE extension's prompt says what the user asked, after its context.
const IDE_REQUEST: &str = "## My request for Codex:";

#[derive(Default)]
pub(crate) struct CodexFold {
    model_seen: bool,
    titled: bool,
    /// The last prompt, until the model answers: Codex may say one prompt twice (as a
    /// `user_message` event and as a completed item), and it is one prompt.
    last_prompt: Option<String>,
    /// Calls an `item_completed` said failed before their output was read.
    failed: HashSet<String>,
    tokens: TokenCounts,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow, deserialize_with = "opt_str")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default, rename = "type", borrow, deserialize_with = "opt_str")]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    payload: ObjectOr<Payload<'a>>,
}

/// The fields of a line's payload that the fold reads, each as it comes (a field of an
/// unexpected type reads as absent, as it did when the payload was a whole JSON value). The
/// others are passed over unparsed: the outputs `exec_command_end` repeats and the encrypted
/// reasoning are most of a rollout's bytes, and none of them is allocated.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    kind: LaxStr<'a>,
    #[serde(borrow)]
    role: LaxStr<'a>,
    #[serde(borrow)]
    id: LaxStr<'a>,
    #[serde(borrow)]
    call_id: LaxStr<'a>,
    #[serde(borrow)]
    name: LaxStr<'a>,
    #[serde(borrow)]
    message: LaxStr<'a>,
    #[serde(borrow)]
    reason: LaxStr<'a>,
    #[serde(borrow)]
    cwd: LaxStr<'a>,
    #[serde(borrow)]
    originator: LaxStr<'a>,
    #[serde(borrow)]
    model_provider: LaxStr<'a>,
    #[serde(borrow)]
    model: LaxStr<'a>,
    /// A message's blocks: read only for the assistant's (a user or developer item is the
    /// context Codex injects, often long).
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    summary: Option<Value>,
    /// A call's input: parsed only for a timeline (a listing needs only the call).
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    action: Option<&'a RawValue>,
    /// A tool's output: decoded apart (most of a rollout's text is outputs).
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    #[serde(borrow)]
    info: ObjectOr<Info<'a>>,
    item: Option<Value>,
}

/// The texts of a message's or a reasoning's blocks.
fn block_texts(v: Option<&Value>) -> String {
    let Some(Value::Array(blocks)) = v else {
        return String::new();
    };
    blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl CodexFold {
    pub(crate) fn line(&mut self, into: &mut Analyzer, line: RawLine<'_>) {
        let n = line.number;
        let Ok(text) = simdutf8::basic::from_utf8(line.bytes) else {
            return into.problem(n, ProblemKind::Corrupt, "not UTF-8 text".to_owned());
        };
        if text.trim().is_empty() {
            return;
        }
        if !into.keeps_timeline() {
            if let Some(r) = ReasoningLine::of(text) {
                return self.reasoning_line(into, (n, line.offset), r);
            }
        }
        if let Some(out) = OutputLine::of(text) {
            if self.output_line(into, (n, line.offset), out) {
                return;
            }
        }
        let l: Line<'_> = match serde_json::from_str(text) {
            Ok(l) => l,
            Err(e) => {
                let msg = format!("not a Codex rollout line: {e}");
                return into.problem(n, ProblemKind::Corrupt, msg);
            }
        };
        let ts = l.timestamp.as_deref().and_then(super::super::parse_time);
        let p = &l.payload.0;
        let item = p.kind.as_deref().unwrap_or("");
        let emit = |into: &mut Analyzer, kind: &str, e: &Event, r: Option<ForeignResult>| {
            into.emit(n, line.offset, ts, kind, e, r)
        };
        let role = p.role.as_deref();
        if l.kind.as_deref() == Some("response_item") && !matches!(role, Some("user" | "developer"))
        {
            // The model answered: a prompt said again from here on is a new one.
            self.last_prompt = None;
        }
        match (l.kind.as_deref().unwrap_or(""), item) {
            ("session_meta", _) => {
                let e = Event::RunStarted {
                    cwd: p.cwd.owned(),
                    mode: p.originator.owned(),
                    provider: p.model_provider.owned().or_else(|| Some("openai".into())),
                    model: p.model.owned(),
                };
                emit(into, "run_started", &e, None);
            }
            ("turn_context", _) => {
                if let Some(model) = p.model.owned() {
                    if !self.model_seen {
                        into.run_mut().model = Some(model.clone());
                        self.model_seen = true;
                    }
                    // Calls go to the model of their turn: a `/model` switch prices by it.
                    self.tokens.model = Some(model);
                }
            }
            ("event_msg", "user_message") => {
                let text = p.message.owned().unwrap_or_default();
                self.prompt(into, (n, line.offset, ts), text, Vec::new());
            }
            ("event_msg", "item_completed") => {
                match items::completed(p.item.as_ref().unwrap_or(&Value::Null)) {
                    Completed::Prompt { text, attachments } => {
                        self.prompt(into, (n, line.offset, ts), text, attachments)
                    }
                    Completed::Failed(id) => {
                        if !into.mark_failed(&id) {
                            self.failed.insert(id);
                        }
                    }
                    Completed::Other => {}
                }
            }
            ("event_msg", "token_count") => match self.tokens.count(&p.info.0) {
                Ok(Some(usage)) => into.add_tokens(n, &usage),
                Ok(None) => {}
                Err(_) => {
                    let msg = "a token count with a figure that is not a count: left out";
                    into.problem(n, ProblemKind::BadUsage, msg.to_owned());
                }
            },
            ("event_msg", "task_complete") => into.set_terminal(Some((n, Terminal::Done))),
            ("event_msg", "turn_aborted") => {
                let e = Event::RunError {
                    error: Some(RunErrorBody {
                        code: Some("aborted".into()),
                        message: p.reason.owned(),
                        detail: None,
                        retryable: None,
                    }),
                };
                emit(into, "run_error", &e, None);
            }
            // The other events repeat what the response items say, or report progress.
            ("event_msg", _) => {}
            ("response_item", "message") => {
                if role == Some("assistant") {
                    // Its text is only a timeline's to show.
                    let blocks = (p.content.filter(|_| into.keeps_timeline()))
                        .and_then(|c| serde_json::from_str(c.get()).ok());
                    let text = block_texts(blocks.as_ref());
                    let e = Event::AssistantMessage {
                        message_id: p.id.owned(),
                        content: vec![ContentBlock::Text { text }],
                        usage: None,
                        timing: None,
                    };
                    emit(into, "assistant_message", &e, None);
                    into.set_terminal(Some((n, Terminal::Done)));
                }
                // User and developer items are the context Codex injects; the prompts are the
                // `user_message` events.
            }
            ("response_item", "reasoning") => {
                let text = block_texts(p.summary.as_ref());
                if !text.is_empty() {
                    let e = Event::AssistantMessage {
                        message_id: None,
                        content: vec![ContentBlock::Thinking { text }],
                        usage: None,
                        timing: None,
                    };
                    emit(into, "assistant_message", &e, None);
                }
            }
            ("response_item", "function_call" | "custom_tool_call" | "local_shell_call") => {
                let id = p
                    .call_id
                    .owned()
                    .or_else(|| p.id.owned())
                    .unwrap_or_default();
                let name = p.name.owned().unwrap_or_else(|| item.to_owned());
                let input = (p.arguments.or(p.input).or(p.action))
                    .filter(|_| into.keeps_timeline())
                    .and_then(|raw| match serde_json::from_str(raw.get()).ok()? {
                        // Arguments are a JSON document in a string.
                        Value::String(s) => {
                            Some(serde_json::from_str(&s).unwrap_or(Value::String(s)))
                        }
                        other => Some(other),
                    });
                let call = Event::AssistantMessage {
                    message_id: None,
                    content: vec![ContentBlock::ToolCall {
                        tool_call_id: id.clone(),
                        name: Some(name.clone()),
                    }],
                    usage: None,
                    timing: None,
                };
                emit(into, "assistant_message", &call, None);
                let started = Event::ToolCallStarted {
                    tool_call_id: id,
                    name: Some(name),
                    input,
                    summary: None,
                    capability: None,
                };
                emit(into, "tool_call_started", &started, None);
                into.set_terminal(None);
            }
            ("response_item", "function_call_output" | "custom_tool_call_output") => {
                let id = p.call_id.owned().unwrap_or_default();
                let output = output_of(p.output);
                let class = classify(&id, &output.0);
                self.finished(into, (n, line.offset, ts), id, output, class);
            }
            // Web searches and other items carry no output the model read back.
            ("response_item", _) => {}
            ("compacted", _) => {
                let e = Event::ContextCompacted {
                    summary: p.message.owned(),
                };
                emit(into, "context_compacted", &e, None);
            }
            // Newer rollouts' records of the thread's state and of token use: nothing the run
            // shows reads them (the tokens come from `token_count`).
            ("world_state" | "token_usage_record", _) => {}
            ("", _) => into.problem(n, ProblemKind::Corrupt, "a line without a type".to_owned()),
            (other, _) => into.emit_unknown(n, ts, other),
        }
    }
}

impl CodexFold {
    /// A tool's output line read by [`OutputLine`]: what the whole line's parse gives. A
    /// listing only measures the output (a listing keeps no text); `false` when the output does
    /// not read so, and the line is to be parsed whole.
    fn output_line(
        &mut self,
        into: &mut Analyzer,
        (n, offset): (u64, u64),
        l: OutputLine<'_>,
    ) -> bool {
        let measured = (!into.keeps_timeline()).then(|| l.measured()).flatten();
        let (content, ok, class) = match measured {
            Some((class, ok)) => (String::new(), ok, class),
            None => match l.output() {
                Some((content, ok)) => {
                    let class = classify(l.call_id, &content);
                    (content, ok, class)
                }
                None => return false,
            },
        };
        let ts = super::super::parse_time(l.timestamp);
        // The model answered: a prompt said again from here on is a new one.
        self.last_prompt = None;
        self.finished(
            into,
            (n, offset, ts),
            l.call_id.to_owned(),
            (content, ok),
            class,
        );
        true
    }

    /// A reasoning line read by [`ReasoningLine`] for a listing: what the whole line's parse
    /// gives, but the summary's text (a listing keeps none).
    fn reasoning_line(
        &mut self,
        into: &mut Analyzer,
        (n, offset): (u64, u64),
        r: ReasoningLine<'_>,
    ) {
        // The model answered: a prompt said again from here on is a new one.
        self.last_prompt = None;
        if r.summarized {
            let e = Event::AssistantMessage {
                message_id: None,
                content: vec![ContentBlock::Thinking {
                    text: String::new(),
                }],
                usage: None,
                timing: None,
            };
            let ts = super::super::parse_time(r.timestamp);
            into.emit(n, offset, ts, "assistant_message", &e, None);
        }
    }

    /// A call's output, as `classify` reads it: the call failed when its exit code says so or
    /// an `item_completed` said so before.
    fn finished(
        &mut self,
        into: &mut Analyzer,
        (n, offset, ts): (u64, u64, Option<i64>),
        id: String,
        (content, ok): (String, bool),
        class: ForeignResult,
    ) {
        let ok = ok && !self.failed.remove(&id);
        into.emit_finished((n, offset, ts), (id, ok), content, class);
    }

    /// One prompt, said once: the IDE extension's context comes after the request it
    /// carries, which names the run.
    fn prompt(
        &mut self,
        into: &mut Analyzer,
        (n, offset, ts): (u64, u64, Option<i64>),
        text: String,
        attachments: Vec<Attachment>,
    ) {
        if self.last_prompt.as_deref() == Some(text.as_str()) {
            return;
        }
        self.last_prompt = Some(text.clone());
        let shown = match text.split_once(IDE_REQUEST) {
            Some((context, request)) => {
                let request = request.trim();
                if !self.titled {
                    into.set_title(request.to_owned());
                }
                format!("{request}\n\n{}", context.trim())
            }
            None => text,
        };
        self.titled = true;
        let e = Event::UserMessage {
            message_id: None,
            text: shown,
            attachments,
        };
        into.emit(n, offset, ts, "user_message", &e, None);
    }
}

/// The output text of a rollout line holding a tool's output.
pub(crate) fn output_on_line(line: &[u8]) -> Option<String> {
    let l: Line<'_> = serde_json::from_slice(line).ok()?;
    let kind = l.payload.0.kind.as_deref()?;
    kind.ends_with("_output")
        .then(|| output_of(l.payload.0.output).0)
}

/// An output that is a JSON document (`{"output": ..., "metadata": {"exit_code": ...}}`), read
/// for those fields only: an exit code present in `metadata` is the one, whatever its type.
#[derive(Deserialize)]
struct OutputDoc<'a> {
    #[serde(default, borrow)]
    output: LaxStr<'a>,
    #[serde(default)]
    metadata: ObjectOr<ExitCode>,
    #[serde(default, deserialize_with = "present")]
    exit_code: Option<Value>,
}

#[derive(Deserialize, Default)]
struct ExitCode {
    #[serde(default, deserialize_with = "present")]
    exit_code: Option<Value>,
}

/// The text of an output and whether it succeeded: a JSON document `{"output", "metadata":
/// {"exit_code"}}` in a string is unwrapped; else the exit code the text states decides.
pub(super) fn output_of(v: Option<&RawValue>) -> (String, bool) {
    let text = v.map(RawValue::get).unwrap_or("");
    // A string (what Codex writes) is decoded at once; anything else is read as a value.
    match output_leading(text) {
        Some((read, len)) if len == text.len() => read,
        _ => output_text(match serde_json::from_str::<Value>(text).ok() {
            Some(Value::String(s)) => s,
            Some(v @ Value::Array(_)) => block_texts(Some(&v)),
            Some(other) => other.to_string(),
            None => String::new(),
        }),
    }
}

/// How an output document's text opens, as a string literal spells it.
pub(super) const DOC_HEAD: &str = r#"{\"output\":\""#;

/// The output string literal `literal` starts with, read as [`output_text`] reads its text,
/// and the literal's length. An output document's output (most of its bytes) is decoded in
/// the same pass as the literal ([`decode_nested_leading`]): the document's text is never
/// made. Any other output, and a document whose rest says it is none, is decoded and then
/// read.
///
/// [`decode_nested_leading`]: crate::retained::json_string::decode_nested_leading
pub(super) fn output_leading(literal: &str) -> Option<((String, bool), usize)> {
    use crate::retained::json_string::{decode_leading, decode_nested_leading};
    if let Some(doc) = decode_nested_leading(literal, DOC_HEAD) {
        if let Some(ok) = doc_rest(&doc.rest) {
            return Some(((doc.inner, ok), doc.len));
        }
    }
    let (raw, len) = decode_leading(literal)?;
    Some((output_text(raw), len))
}

/// [`output_of`] for an output that is a string, decoded.
fn output_text(raw: String) -> (String, bool) {
    match output_doc_first(&raw) {
        Some(read) => read,
        None => output_text_parsed(raw),
    }
}

/// [`output_text`] of any output, its document (if it is one) parsed whole.
fn output_text_parsed(raw: String) -> (String, bool) {
    if raw.starts_with('{') {
        if let Ok(doc) = serde_json::from_str::<OutputDoc<'_>>(&raw) {
            let code = (doc.metadata.0.exit_code)
                .or(doc.exit_code)
                .and_then(|c| c.as_i64());
            let ok = code.is_none_or(|c| c == 0);
            if let Some(out) = doc.output.0 {
                return (out.into_owned(), ok);
            }
            if code.is_some() {
                return (raw, ok);
            }
        }
    }
    // The exit code is stated in the header, before the output: a line of the output that
    // looks like one says nothing.
    let header = raw
        .split_once(OUTPUT_AFTER)
        .map_or(raw.as_str(), |(h, _)| h);
    let ok = header_says_ok(header);
    (raw, ok)
}

/// What ends an output's header: the output follows.
const OUTPUT_AFTER: &str = "\nOutput:";

/// Whether an output's header (all of an output without one) says its command succeeded: it
/// states no exit code, or 0.
pub(super) fn header_says_ok(header: &str) -> bool {
    let code = EXIT.captures(header).and_then(|c| c[1].parse::<i64>().ok());
    code.is_none_or(|c| c == 0)
}

/// An output document as Codex writes it, its output first (`{"output":"…","metadata":{…}}`),
/// read as [`output_text`] reads it, with its output decoded once (it is most of the document,
/// dense with escapes) and only the rest parsed. `None` (and read whole) for any other
/// spelling: an output that does not decode, or anything after it that could be a second
/// `output` key (its name in the bytes, or any escape).
fn output_doc_first(raw: &str) -> Option<(String, bool)> {
    let literal = raw.strip_prefix(r#"{"output":"#)?;
    let (output, len) = crate::retained::json_string::decode_leading(literal)?;
    Some((output, doc_rest(&literal[len..])?))
}

/// Whether an output document says its command succeeded, by `rest`, its text after its
/// output: `None` when it is not read as a document's rest ([`output_doc_first`]).
pub(super) fn doc_rest(rest: &str) -> Option<bool> {
    if rest == "}" {
        return Some(true);
    }
    let fields = rest.strip_prefix(',')?;
    // After its comma a field must follow (`{"output":"x",}` is no document, `{}` is).
    let closes = fields.trim_start().starts_with('}');
    if closes || fields.contains('\\') || fields.contains(r#""output""#) {
        return None;
    }
    let rest_doc = format!("{{{fields}");
    let doc = serde_json::from_str::<OutputDoc<'_>>(&rest_doc).ok()?;
    let code = (doc.metadata.0.exit_code)
        .or(doc.exit_code)
        .and_then(|c| c.as_i64());
    Some(code.is_none_or(|c| c == 0))
}

/// A Codex output is what the model got, cut or not: `truncated` when it carries a cut mark
/// (its line count then the one Codex states, when it states one), else `inline`.
pub(super) fn classify(id: &str, content: &str) -> ForeignResult {
    let bytes = content.len() as u64;
    let cut = cut_mark(content).is_some();
    // Looked for only in a cut output: an uncut one (most) is not searched twice.
    let lines = (cut.then(|| TOTAL_LINES.captures(content)).flatten())
        .and_then(|c| c[1].parse().ok())
        .unwrap_or_else(|| count_lines(content.as_bytes()));
    let class = ForeignResult::inline_measured(id, bytes, lines, count_format_chars(content));
    match cut {
        true => ForeignResult {
            state: RetentionState::Truncated,
            ..class
        },
        false => class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cut_mark_is_known() {
        for cut in [
            "head…38211 tokens truncated…tail",
            "head…5549 chars truncated…tail",
            "a\n[... omitted 288 of 544 lines ...]\nb",
            "[... output truncated to fit 10240 bytes ...]",
            "Warning: truncated output (original token count: 9000)\nTotal output lines: 12",
        ] {
            assert!(cut_mark(cut).is_some(), "{cut}");
        }
        assert_eq!(cut_mark("tokens truncated in prose"), None);
    }

    #[test]
    fn outputs_are_unwrapped_and_their_exit_codes_read() {
        let out = |v: serde_json::Value| {
            let raw = serde_json::value::to_raw_value(&v).unwrap();
            output_of(Some(&raw))
        };
        let v = |s: &str| Value::String(s.to_owned());
        assert_eq!(
            out(v(r#"{"output":"done\n","metadata":{"exit_code":1}}"#)),
            ("done\n".to_owned(), false)
        );
        assert!(!out(v("Exit code: 101\nWall time: 4 seconds\nOutput:\nx")).1);
        assert!(out(v("Process exited with code 0\nOutput:\n")).1);
        assert_eq!(out(v("plain \u{1} é")), ("plain \u{1} é".to_owned(), true));
        // The `exec` tool's own shape, and an output given as content blocks.
        assert!(!out(v(r#"{"exit_code":7,"stdout":"x"}"#)).1);
        // An exit code in `metadata` is the one, whatever its type; a field of another type
        // reads as absent.
        let doc = r#"{"output":"o","metadata":{"exit_code":"x"},"exit_code":3}"#;
        assert_eq!(out(v(doc)), ("o".to_owned(), true));
        let doc = r#"{"output":"o","metadata":[1],"exit_code":3}"#;
        assert_eq!(out(v(doc)), ("o".to_owned(), false));
        let doc = r#"{"output":5,"metadata":{"exit_code":0},"extra":{"k":[1]}}"#;
        assert_eq!(out(v(doc)), (doc.to_owned(), true));
        let blocks = serde_json::json!([{"type": "input_text", "text": "Cargo.toml"}]);
        assert_eq!(out(blocks), ("Cargo.toml".to_owned(), true));
        // Anything else reads as its JSON text; no output is empty.
        assert_eq!(out(serde_json::json!({"a": 1})).0, r#"{"a":1}"#);
        assert_eq!(output_of(None), (String::new(), true));
    }

    #[test]
    fn an_output_document_reads_with_its_output_first_as_whole() {
        let docs = [
            r#"{"output":"done\n\u00e9 \"q\"","metadata":{"exit_code":1,"duration_seconds":0.5}}"#,
            r#"{"output":"ok","metadata":{"exit_code":0}}"#,
            r#"{"output":"ok"}"#,
            r#"{"output":"ok","exit_code":3}"#,
            r#"{"output":"o","metadata":{"exit_code":"x"},"exit_code":3}"#,
            r#"{"output":"o","metadata":[1],"exit_code":3}"#,
            r#"{"output":"o","metadata":{"exit_code":2,"exit_code":0}}"#,
        ];
        for doc in docs {
            let whole = output_text_parsed(doc.to_owned());
            match output_doc_first(doc) {
                Some(read) => assert_eq!(read, whole, "{doc}"),
                // A document whose rest the parse refuses is read whole, as no document.
                None => assert_eq!(whole, (doc.to_owned(), true), "{doc}"),
            }
        }
        assert_eq!(
            output_doc_first(docs[0]),
            Some(("done\né \"q\"".to_owned(), false))
        );
        // A second `output` (in its bytes or behind an escape), another order, spaces, an
        // output that does not decode: read whole.
        for doc in [
            r#"{"output":"a","output":"b"}"#,
            r#"{"output":"a","outp\u0075t":"b"}"#,
            r#"{"metadata":{"exit_code":1},"output":"a"}"#,
            r#"{"output": "a"}"#,
            r#"{"output":"\ud800","metadata":{}}"#,
            r#"{"output":"a",}"#,
            r#"{"output":"a", }"#,
        ] {
            assert_eq!(output_doc_first(doc), None, "{doc}");
            assert_eq!(
                output_text(doc.to_owned()),
                output_text_parsed(doc.to_owned())
            );
        }
    }

    #[test]
    fn an_output_literal_reads_in_one_pass_as_its_decoded_text_does() {
        let docs = [
            r#"{"output":"done\n\u00e9 \ud83e\udd80 \"q\" \\ \/","metadata":{"exit_code":1}}"#,
            r#"{"output":"ok"}"#,
            r#"{"output":"ok","exit_code":3}"#,
            r#"{"output":"a","output":"b"}"#,
            r#"{"output":"a",}"#,
            r#"{"output":"\ud800","metadata":{}}"#,
            r#"{"output":"a\qb"}"#,
            r#"{"output": "a"}"#,
            "{\"output\":\"raw \u{1} control\"}",
            "Exit code: 2\nOutput:\n{\"output\":\"x\"}",
        ];
        for doc in docs {
            let literal = serde_json::to_string(doc).unwrap();
            let read = output_leading(&format!("{literal}}}}}"));
            assert_eq!(
                read,
                Some((output_text(doc.to_owned()), literal.len())),
                "{doc}"
            );
        }
        let literal = serde_json::to_string(docs[0]).unwrap();
        assert_eq!(
            output_leading(&literal).unwrap().0,
            ("done\né 🦀 \"q\" \\ /".to_owned(), false)
        );
    }

    #[test]
    fn a_payload_of_any_shape_reads() {
        // Not an object: a line that holds no fields, never a damaged one.
        for payload in [
            r#""text""#,
            "null",
            "7",
            "true",
            "-1.5",
            r#"[1, {"type": "x"}]"#,
        ] {
            let json = format!(r#"{{"type":"event_msg","payload":{payload}}}"#);
            let l: Line<'_> = serde_json::from_str(&json).expect(payload);
            assert_eq!(l.kind.as_deref(), Some("event_msg"));
            assert!(
                l.payload.0.kind.0.is_none() && l.payload.0.output.is_none(),
                "{payload}"
            );
        }
        // A field of an unexpected type reads as absent; the others are passed over.
        let json = r#"{"payload":{"type":"function_call_output","call_id":5,
            "aggregated_output":"x\ny","output":"ok\n"}}"#;
        let l: Line<'_> = serde_json::from_str(json).unwrap();
        assert_eq!(l.payload.0.kind.as_deref(), Some("function_call_output"));
        assert_eq!(l.payload.0.call_id.owned(), None);
        assert_eq!(output_of(l.payload.0.output).0, "ok\n");
    }

    #[test]
    fn a_cut_output_states_its_lines() {
        let r = classify(
            "c",
            "Total output lines: 5210\nOutput:\na\n…38211 tokens truncated…\nb",
        );
        assert_eq!((r.state, r.lines), (RetentionState::Truncated, Some(5210)));
        assert_eq!(classify("c", "short").state, RetentionState::Inline);
    }
}
