//! Searching another agent's session file (`crate::sources`): each line that may hold a match
//! is parsed and its strings searched by what they are, as a harness transcript's are: message
//! and thinking text, tool call inputs, and what the model got of each result (a persisted
//! output's full text is searched in its value file).

use super::hit::{HitKind, SearchHit};
use super::scan::Ctx;
use super::transcript::{hits_of, origin, Transcript};
use crate::sources::claude::threads::Lines;
use crate::sources::SourceKind;
use serde_json::Value;
use std::io;

/// One searchable string of a line: its kind, the call it belongs to, its place in the event.
type Piece<'v> = (HitKind, Option<String>, &'v str);

/// Searches one session file of kind `source`, the lines of it that are the run's (`lines`:
/// a Claude Code session's side conversations are runs of their own). Returns the bytes read.
pub(crate) fn search_foreign(
    ctx: &Ctx<'_>,
    t: &Transcript<'_>,
    source: SourceKind,
    mut lines: Lines,
) -> io::Result<u64> {
    let mut pending: Vec<SearchHit> = Vec::new();
    let outcome = crate::sources::read_store_lines(t.path, |line| {
        // Every line is looked at, so that a side conversation knows its lines' links.
        if ctx.stopped() || !lines.takes_raw(line.bytes) {
            return;
        }
        if !ctx.matcher.may_match_json(line.bytes) {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return; // the run model reports an unreadable line
        };
        let pieces = match source {
            SourceKind::Claude => claude_pieces(&v),
            _ => codex_pieces(&v),
        };
        for (i, (kind, call, text)) in pieces.into_iter().enumerate() {
            if !t.kinds.has(kind) {
                continue;
            }
            let o = origin(t, line.number, call.as_deref());
            pending.extend(hits_of(ctx.search_slice(text.as_bytes()), &o, kind, i));
        }
    })?;
    ctx.emit_charged(pending);
    Ok(outcome.file_len)
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Every string inside `v`, in order.
fn strings<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fn claude_pieces(v: &Value) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let Some(content) = v.pointer("/message/content") else {
        return out;
    };
    if let Some(text) = content.as_str() {
        out.push((HitKind::Message, None, text));
        return out;
    }
    for b in content.as_array().into_iter().flatten() {
        match str_of(b, "type") {
            Some("text") => out.extend(str_of(b, "text").map(|s| (HitKind::Message, None, s))),
            Some("thinking") => {
                out.extend(str_of(b, "thinking").map(|s| (HitKind::Message, None, s)))
            }
            Some("tool_use") => {
                let call = str_of(b, "id").map(str::to_owned);
                let mut found = Vec::new();
                if let Some(input) = b.get("input") {
                    strings(input, &mut found);
                }
                out.extend(found.into_iter().map(|s| (HitKind::Input, call.clone(), s)));
            }
            Some("tool_result") => {
                let call = str_of(b, "tool_use_id").map(str::to_owned);
                let mut found = Vec::new();
                match b.get("content") {
                    Some(Value::String(s)) => found.push(s.as_str()),
                    Some(Value::Array(items)) => {
                        found.extend(items.iter().filter_map(|i| str_of(i, "text")))
                    }
                    _ => {}
                }
                out.extend(
                    found
                        .into_iter()
                        .map(|s| (HitKind::Result, call.clone(), s)),
                );
            }
            _ => {}
        }
    }
    out
}

fn codex_pieces(v: &Value) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let Some(p) = v.get("payload") else {
        return out;
    };
    let call = str_of(p, "call_id").map(str::to_owned);
    match (str_of(v, "type"), str_of(p, "type")) {
        (Some("event_msg"), Some("user_message")) => {
            out.extend(str_of(p, "message").map(|s| (HitKind::Message, None, s)))
        }
        (Some("response_item"), Some("message")) if str_of(p, "role") == Some("assistant") => {
            for b in p
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(str_of(b, "text").map(|s| (HitKind::Message, None, s)));
            }
        }
        (Some("response_item"), Some("reasoning")) => {
            for b in p
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(str_of(b, "text").map(|s| (HitKind::Message, None, s)));
            }
        }
        (Some("response_item"), Some(kind)) if kind.ends_with("_output") => {
            if let Some(s) = str_of(p, "output") {
                out.push((HitKind::Result, call, s));
            }
        }
        (Some("response_item"), Some(_)) => {
            for key in ["arguments", "input"] {
                if let Some(s) = str_of(p, key) {
                    out.push((HitKind::Input, call.clone(), s));
                }
            }
        }
        _ => {}
    }
    out
}
