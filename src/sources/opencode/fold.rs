//! An opencode session's records (`records.rs`) folded into the run model (docs/agents.md).
//!
//! - The session gives the title (unless opencode's default `New session - …`), the folder and
//!   the version.
//! - A user message's text parts (less the `synthetic` ones opencode adds) are the prompt.
//! - An assistant message's parts are the answer: `text`, `reasoning` as thinking, each `tool`
//!   part a call and its result (`completed`: its output; `error`: a failed result; one still
//!   `pending` or `running` has no result yet), `compaction` a compaction. Its `step-finish`
//!   parts give the tokens and cost each step spent (the message's own `tokens` are only its
//!   last step's); its `finish` and `error` how the turn ended.
//! - A tool output opencode cut and saved (`metadata.truncated` with `metadata.outputPath`) is
//!   a retained value while the file is there (its value id the file's name, `tool_…`), swept
//!   once its 7-day cleanup (or a GC) took it, as long as the cut text says. An
//!   output pruned from the model's context (`time.compacted`) stays whole in the store.

use crate::fold::{Analyzer, ForeignResult, Terminal};
use crate::model::{ProblemKind, TimelineEvent, Usage};
use crate::transcript::event::{ContentBlock, Event, RunErrorBody};
use crate::transcript::RawLine;
use serde_json::Value;
use std::path::Path;

/// `root`: the data folder, where a saved output is looked for when the path the part names
/// is not there (a store copied from another machine or user).
pub(crate) struct OpencodeFold {
    pub root: std::path::PathBuf,
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn ms(v: &Value, pointer: &str) -> Option<i64> {
    v.pointer(pointer).and_then(Value::as_i64)
}

impl OpencodeFold {
    pub(crate) fn line(&mut self, into: &mut Analyzer, line: RawLine<'_>) {
        let n = line.number;
        let Ok(record) = serde_json::from_slice::<Value>(line.bytes) else {
            return into.problem(n, ProblemKind::Corrupt, "not a session record".to_owned());
        };
        if let Some(s) = record.get("session") {
            return session(into, n, s);
        }
        let (Some(m), parts) = (record.get("message"), record.get("parts")) else {
            return into.problem(n, ProblemKind::Corrupt, "not a session record".to_owned());
        };
        let parts: Vec<&Value> = parts
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        match str_of(m, "role") {
            Some("user") => user(into, n, m, &parts),
            Some("assistant") => assistant(into, n, m, &parts, &self.root),
            other => into.emit_unknown(n, ms(m, "/time/created"), other.unwrap_or("message")),
        }
    }
}

fn session(into: &mut Analyzer, n: u64, s: &Value) {
    let e = Event::RunStarted {
        cwd: str_of(s, "directory").map(str::to_owned),
        mode: str_of(s, "version").map(|v| format!("opencode {v}")),
        provider: None,
        model: None,
    };
    into.emit(n, 0, ms(s, "/time/created"), "run_started", &e, None);
    let title = str_of(s, "title").unwrap_or("");
    let default = title.starts_with("New session - ") || title.starts_with("Child session - ");
    if !title.trim().is_empty() && !default {
        into.set_title(title.to_owned());
    }
}

fn user(into: &mut Analyzer, n: u64, m: &Value, parts: &[&Value]) {
    let text = parts
        .iter()
        .filter(|p| {
            str_of(p, "type") == Some("text") && p.get("synthetic") != Some(&Value::Bool(true))
        })
        .filter_map(|p| str_of(p, "text"))
        .collect::<Vec<_>>()
        .join("\n\n");
    if text.trim().is_empty() {
        return;
    }
    let e = Event::UserMessage {
        message_id: str_of(m, "id").map(str::to_owned),
        text,
        attachments: Vec::new(),
    };
    into.emit(n, 0, ms(m, "/time/created"), "user_message", &e, None);
}

fn assistant(into: &mut Analyzer, n: u64, m: &Value, parts: &[&Value], root: &Path) {
    let ts = ms(m, "/time/created");
    let model = str_of(m, "modelID").map(str::to_owned);
    {
        let run = into.run_mut();
        if run.model.is_none() {
            run.model = model.clone();
            run.provider = str_of(m, "providerID").map(str::to_owned);
        }
    }
    let mut blocks = Vec::new();
    let mut answered = false;
    for p in parts {
        match str_of(p, "type") {
            Some("reasoning") => blocks
                .extend(str_of(p, "text").map(|t| ContentBlock::Thinking { text: t.to_owned() })),
            Some("text") => {
                if let Some(t) = str_of(p, "text").filter(|t| !t.trim().is_empty()) {
                    answered = true;
                    blocks.push(ContentBlock::Text { text: t.to_owned() });
                }
            }
            Some("tool") => blocks.push(ContentBlock::ToolCall {
                tool_call_id: str_of(p, "callID").unwrap_or("").to_owned(),
                name: str_of(p, "tool").map(str::to_owned),
            }),
            _ => {}
        }
    }
    let e = Event::AssistantMessage {
        message_id: str_of(m, "id").map(str::to_owned),
        content: blocks,
        usage: None,
        timing: None,
    };
    into.emit(n, 0, ts, "assistant_message", &e, None);
    let mut calls = false;
    for p in parts {
        match str_of(p, "type") {
            Some("tool") => {
                calls = true;
                tool(into, n, ts, p, root);
            }
            Some("step-finish") => {
                if let Some(u) = step_usage(p, model.clone()) {
                    into.add_tokens(n, &u);
                }
            }
            Some("compaction") => {
                let e = Event::ContextCompacted { summary: None };
                into.emit(n, 0, ts, "context_compacted", &e, None);
            }
            _ => {}
        }
    }
    let terminal = match (m.get("error"), str_of(m, "finish")) {
        (Some(err), _) => {
            let name = str_of(err, "name").unwrap_or("Error");
            let message = err
                .pointer("/data/message")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let e = Event::RunError {
                error: Some(RunErrorBody {
                    code: Some(name.to_owned()),
                    message,
                    detail: None,
                    retryable: None,
                }),
            };
            into.emit(n, 0, ts, "run_error", &e, None);
            Some(match name {
                "MessageAbortedError" => Terminal::Cancelled,
                _ => Terminal::Error,
            })
        }
        // A step that ended calling tools goes on with the next.
        (None, Some("tool-calls")) => None,
        (None, Some(_)) if answered || !calls => Some(Terminal::Done),
        _ => None,
    };
    into.set_terminal(terminal.map(|t| (n, t)));
}

fn tool(into: &mut Analyzer, n: u64, ts: Option<i64>, p: &Value, root: &Path) {
    let id = str_of(p, "callID").unwrap_or("").to_owned();
    let state = p.get("state").unwrap_or(&Value::Null);
    let started = Event::ToolCallStarted {
        tool_call_id: id.clone(),
        name: str_of(p, "tool").map(str::to_owned),
        input: state.get("input").cloned(),
        summary: str_of(state, "title").map(str::to_owned),
        capability: None,
    };
    let start = ms(state, "/time/start").or(ts);
    into.emit(n, 0, start, "tool_call_started", &started, None);
    let (content, ok) = match str_of(state, "status") {
        Some("completed") => (str_of(state, "output").unwrap_or("").to_owned(), true),
        Some("error") => (str_of(state, "error").unwrap_or("").to_owned(), false),
        // Still pending or running: no result yet.
        _ => return,
    };
    let class = classify(&id, &content, state, root);
    let end = ms(state, "/time/end").or(ts);
    into.emit_finished((n, 0, end), (id, ok), content, class);
    // Pruned later: the model was sent "[Old tool result content cleared]" in its place from
    // then on, while the store kept the whole output.
    if let Some(at) = ms(state, "/time/compacted") {
        let item = TimelineEvent {
            kind: "output_pruned".to_owned(),
            tool_call_id: str_of(p, "callID").map(str::to_owned),
            text: Some(
                "Cleared from the model's context by opencode's prune (it was sent \"[Old tool result content cleared]\" from then on); the store keeps the whole output".to_owned(),
            ),
            ..Default::default()
        };
        into.emit_aside(n, Some(at), item);
    }
}

/// A step's tokens and cost: `input` is the fresh input alone (cache reads and writes apart);
/// reasoning is output.
fn step_usage(p: &Value, model: Option<String>) -> Option<Usage> {
    let t = p.get("tokens")?;
    let get = |ptr: &str| t.pointer(ptr).and_then(Value::as_u64).unwrap_or(0);
    let (read, write) = (get("/cache/read"), get("/cache/write"));
    let reasoning = get("/reasoning");
    Some(Usage {
        prompt_tokens: Some(get("/input").saturating_add(read).saturating_add(write)),
        completion_tokens: Some(get("/output").saturating_add(reasoning)),
        cache_write_tokens: Some(write),
        cache_read_tokens: Some(read),
        reasoning_tokens: Some(reasoning),
        cost_usd: p.get("cost").and_then(Value::as_f64),
        model,
        ..Usage::default()
    })
}

/// A result as opencode kept it: cut and saved to a file (retained while the file is there),
/// else whole.
fn classify(id: &str, seen: &str, state: &Value, root: &Path) -> ForeignResult {
    let Some(path) = super::folders::saved_path(state) else {
        return ForeignResult::inline(id, seen);
    };
    let file = super::folders::saved_file(root, path);
    let full = file.and_then(|f| std::fs::read(f).ok());
    let full = full
        .as_ref()
        .map(|b| (String::from_utf8_lossy(b), b.len() as u64));
    let value_id = super::folders::file_name(path).unwrap_or(id);
    let full = full.as_ref().map(|(t, size)| (t.as_ref(), *size));
    let (bytes, lines) = stated(seen);
    ForeignResult::saved(value_id, seen, full).stated(bytes, lines)
}

/// How long the whole output was, as the cut text says: `...<N> lines truncated...` after a
/// preview of whole lines (the whole had the preview's lines and N more), or `...<N> bytes
/// truncated...` (the preview's bytes and N more). A `tail` cut puts the marker first.
fn stated(seen: &str) -> (Option<u64>, Option<u64>) {
    static MARK: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\n?\n?\.\.\.([\d,]+) (lines|bytes) truncated\.\.\.\n?\n?")
            .expect("valid regex")
    });
    // A tail cut starts with its marker; a head cut's is its last (the output may hold one).
    let m = match MARK.captures(seen) {
        Some(first) if first.get(0).is_some_and(|a| a.start() == 0) => Some(first),
        _ => MARK.captures_iter(seen).last(),
    };
    let Some(m) = m else {
        return (None, None);
    };
    let (Some(all), Some(n), Some(unit)) = (m.get(0), m.get(1), m.get(2)) else {
        return (None, None);
    };
    let Ok(n) = n.as_str().replace(',', "").parse::<u64>() else {
        return (None, None);
    };
    // The preview is the text before the marker (head) or after the hint that follows it
    // (tail): the hint is the last paragraph of a head cut, the first of a tail cut.
    let preview = match all.start() {
        0 => seen[all.end()..].split_once("\n\n").map_or("", |(_, p)| p),
        s => &seen[..s],
    };
    match unit.as_str() {
        "lines" => (
            None,
            Some(crate::retained::count_lines(preview.as_bytes()).saturating_add(n)),
        ),
        _ => (Some((preview.len() as u64).saturating_add(n)), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_text_states_the_whole_outputs_length() {
        let hint = "The tool call succeeded but the output was truncated. Full output saved to: /d/tool-output/tool_1\nUse Grep to search the full content or Read with offset/limit to view specific sections.";
        let head = format!("a\nb\nc\n\n...97 lines truncated...\n\n{hint}");
        assert_eq!(stated(&head), (None, Some(100)));
        let tail = format!("...10 bytes truncated...\n\n{hint}\n\nxyz");
        assert_eq!(stated(&tail), (Some(13), None));
        // An output that itself says so is not taken for the mark.
        let quoting =
            format!("log: ...5 lines truncated...\nb\n\n...8 lines truncated...\n\n{hint}");
        assert_eq!(stated(&quoting), (None, Some(10)));
        assert_eq!(stated("plain output"), (None, None));
    }
}
