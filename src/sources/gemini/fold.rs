//! A Gemini CLI chat's records (`records.rs`) folded into the run model (docs/agents.md).
//!
//! - `user` messages are prompts: what the UI showed (`displayContent`) when it says, else what
//!   the model got; a prompt that is only a function response (a continuation) is no prompt.
//! - `gemini` messages are answers: their `thoughts` the thinking, their `tokens` the usage
//!   (`input` holds the cached part; `thoughts` are output), and each of their `toolCalls` a call
//!   and its result in one (`result[].functionResponse.response.output`, or `.error` for a
//!   failed or cancelled call).
//! - `info`, `warning` and `error` messages are the CLI's own notes, never sent to the model:
//!   "Request cancelled." ends the turn cancelled, an `error` is a run error.
//! - A rewind is a divider where it happened.

use super::saved::saved_stub;
use crate::fold::{Analyzer, ForeignResult, Terminal};
use crate::model::{ProblemKind, TimelineEvent, Usage};
use crate::transcript::event::{ContentBlock, Event, RunErrorBody};
use crate::transcript::RawLine;
use serde_json::Value;

#[derive(Default)]
pub(crate) struct GeminiFold;

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// The text of a message's content: a string, or the texts of its parts.
pub(crate) fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| str_of(p, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// What a tool call's result says: its text, and whether the call succeeded.
pub(crate) fn call_output(call: &Value) -> (String, bool) {
    let ok = str_of(call, "status").is_none_or(|s| s == "success");
    let mut texts = Vec::new();
    for r in call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let response = r.pointer("/functionResponse/response");
        let text = response.and_then(|resp| {
            (resp.get("output").or_else(|| resp.get("error")))
                .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned))
        });
        texts.extend(text);
    }
    (texts.join("\n"), ok)
}

fn time_of(v: &Value) -> Option<i64> {
    str_of(v, "timestamp").and_then(crate::sources::parse_time)
}

impl GeminiFold {
    pub(crate) fn line(&mut self, into: &mut Analyzer, line: RawLine<'_>) {
        let n = line.number;
        let Ok(record) = serde_json::from_slice::<Value>(line.bytes) else {
            return into.problem(n, ProblemKind::Corrupt, "not a chat record".to_owned());
        };
        if let Some(meta) = record.get("meta") {
            return self.meta(into, n, meta);
        }
        if let Some(rewind) = record.get("rewind") {
            let dropped = rewind.get("dropped").and_then(Value::as_u64).unwrap_or(0);
            let item = TimelineEvent {
                kind: "rewind".to_owned(),
                text: Some(format!(
                    "Rewound: {dropped} later message{} dropped from the chat",
                    if dropped == 1 { "" } else { "s" }
                )),
                ..Default::default()
            };
            return into.emit_aside(n, None, item);
        }
        let Some(m) = record.get("message") else {
            return into.problem(n, ProblemKind::Corrupt, "not a chat record".to_owned());
        };
        let ts = time_of(m);
        match str_of(m, "type").unwrap_or("") {
            "user" => self.user(into, n, ts, m),
            "gemini" => self.answer(into, n, ts, m),
            "error" => {
                let e = Event::RunError {
                    error: Some(RunErrorBody {
                        code: Some("error".into()),
                        message: Some(content_text(m.get("content"))),
                        detail: None,
                        retryable: None,
                    }),
                };
                into.emit(n, 0, ts, "run_error", &e, None);
                into.set_terminal(Some((n, Terminal::Error)));
            }
            kind @ ("info" | "warning") => {
                let text = content_text(m.get("content"));
                if text.trim() == "Request cancelled." {
                    into.set_terminal(Some((n, Terminal::Cancelled)));
                }
                let item = TimelineEvent {
                    kind: format!("cli_{kind}"),
                    text: Some(text),
                    ..Default::default()
                };
                into.emit_aside(n, ts, item);
            }
            other => into.emit_unknown(n, ts, other),
        }
    }

    fn meta(&mut self, into: &mut Analyzer, n: u64, meta: &Value) {
        if let Some(e) = str_of(meta, "error") {
            return into.problem(n, ProblemKind::Corrupt, e.to_owned());
        }
        let cwd = (meta.get("directories").and_then(Value::as_array))
            .and_then(|d| d.first())
            .and_then(Value::as_str)
            .map(str::to_owned);
        let e = Event::RunStarted {
            cwd,
            mode: str_of(meta, "kind").map(str::to_owned),
            provider: Some("google".into()),
            model: None,
        };
        into.emit(
            n,
            0,
            str_of(meta, "startTime").and_then(crate::sources::parse_time),
            "run_started",
            &e,
            None,
        );
        if let Some(summary) = str_of(meta, "summary").filter(|s| !s.trim().is_empty()) {
            into.title_if_no_prompt(summary.to_owned());
        }
    }

    fn user(&mut self, into: &mut Analyzer, n: u64, ts: Option<i64>, m: &Value) {
        let shown = content_text(m.get("displayContent"));
        let text = match shown.trim().is_empty() {
            true => content_text(m.get("content")),
            false => shown,
        };
        // A continuation the CLI sent (a function response alone) is no prompt of the user's.
        if text.trim().is_empty() {
            return;
        }
        let e = Event::UserMessage {
            message_id: str_of(m, "id").map(str::to_owned),
            text,
            attachments: Vec::new(),
        };
        into.emit(n, 0, ts, "user_message", &e, None);
    }

    fn answer(&mut self, into: &mut Analyzer, n: u64, ts: Option<i64>, m: &Value) {
        let model = str_of(m, "model").map(str::to_owned);
        if let Some(model) = &model {
            let run = into.run_mut();
            run.model.get_or_insert_with(|| model.clone());
        }
        let mut blocks = Vec::new();
        let thoughts: Vec<String> = (m.get("thoughts").and_then(Value::as_array).into_iter())
            .flatten()
            .map(|t| {
                let subject = str_of(t, "subject").unwrap_or("");
                let description = str_of(t, "description").unwrap_or("");
                match subject.is_empty() {
                    true => description.to_owned(),
                    false => format!("**{subject}** {description}"),
                }
            })
            .collect();
        if !thoughts.is_empty() {
            blocks.push(ContentBlock::Thinking {
                text: thoughts.join("\n\n"),
            });
        }
        let text = content_text(m.get("content"));
        let answered = !text.trim().is_empty();
        if answered {
            blocks.push(ContentBlock::Text { text });
        }
        let calls: Vec<&Value> = (m.get("toolCalls").and_then(Value::as_array).into_iter())
            .flatten()
            .collect();
        for c in &calls {
            blocks.push(ContentBlock::ToolCall {
                tool_call_id: str_of(c, "id").unwrap_or("").to_owned(),
                name: str_of(c, "name").map(str::to_owned),
            });
        }
        let e = Event::AssistantMessage {
            message_id: str_of(m, "id").map(str::to_owned),
            content: blocks,
            usage: m.get("tokens").and_then(|t| usage(t, model)),
            timing: None,
        };
        into.emit(n, 0, ts, "assistant_message", &e, None);
        for c in calls {
            let id = str_of(c, "id").unwrap_or("").to_owned();
            let started = Event::ToolCallStarted {
                tool_call_id: id.clone(),
                name: str_of(c, "name").map(str::to_owned),
                input: c.get("args").cloned(),
                // (`description` describes the tool, not the call: the input says what it did.)
                summary: None,
                capability: None,
            };
            into.emit(n, 0, time_of(c).or(ts), "tool_call_started", &started, None);
            let (content, ok) = call_output(c);
            let class = classify(&id, &content);
            into.emit_finished((n, 0, time_of(c).or(ts)), (id, ok), content, class);
        }
        // A turn that answered ends; one that only called tools goes on with the model's next.
        into.set_terminal(answered.then_some((n, Terminal::Done)));
    }
}

/// A message's `tokens` as a call's usage: `input` holds the cached part, `thoughts` are output
/// beside `output`. (`null` while the CLI had not yet written them.)
fn usage(t: &Value, model: Option<String>) -> Option<Usage> {
    let t = t.as_object()?;
    let get = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (input, cached, thoughts) = (get("input"), get("cached"), get("thoughts"));
    Some(Usage {
        prompt_tokens: Some(input),
        completion_tokens: Some(get("output").saturating_add(thoughts)),
        cache_write_tokens: Some(0),
        cache_read_tokens: Some(cached.min(input)),
        reasoning_tokens: Some(thoughts),
        model,
        ..Usage::default()
    })
}

/// A result as Gemini CLI kept it: the model got a stub when the output was saved to a file
/// (retained while the file is there, swept once the CLI's cleanup or a GC took it), else the
/// output itself.
fn classify(id: &str, seen: &str) -> ForeignResult {
    let Some(saved) = saved_stub(seen) else {
        return ForeignResult::inline(id, seen);
    };
    let full = std::fs::read(&saved.path).ok().map(|b| {
        let size = b.len() as u64;
        let text = super::saved::saved_text(String::from_utf8_lossy(&b).into_owned(), saved.json);
        (text, size)
    });
    let value_id = super::saved::value_id(&saved, id);
    let full = full.as_ref().map(|(t, size)| (t.as_str(), *size));
    ForeignResult::saved(&value_id, seen, full).stated(None, super::saved::stated_lines(seen))
}
