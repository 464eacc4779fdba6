//! The searchable strings of a chat record: prompts, answers and thoughts, tool call inputs,
//! and the results the model got.

use crate::sources::{Piece, PieceKind};
use serde_json::Value;

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn texts<'v>(v: Option<&'v Value>, out: &mut Vec<&'v str>) {
    match v {
        Some(Value::String(s)) => out.push(s),
        Some(Value::Array(parts)) => out.extend(parts.iter().filter_map(|p| str_of(p, "text"))),
        _ => {}
    }
}

pub(super) fn pieces(v: &Value) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let Some(m) = v.get("message") else {
        return out;
    };
    let mut messages = Vec::new();
    texts(m.get("content"), &mut messages);
    for t in m
        .get("thoughts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        messages.extend(str_of(t, "subject"));
        messages.extend(str_of(t, "description"));
    }
    out.extend(messages.into_iter().map(|s| (PieceKind::Message, None, s)));
    for c in m
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let call = str_of(c, "id").map(str::to_owned);
        let mut inputs = Vec::new();
        crate::sources::strings(c.get("args").unwrap_or(&Value::Null), &mut inputs);
        out.extend(
            inputs
                .into_iter()
                .map(|s| (PieceKind::Input, call.clone(), s)),
        );
        for r in c
            .get("result")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let response = r.pointer("/functionResponse/response");
            for key in ["output", "error"] {
                if let Some(s) = response.and_then(|resp| str_of(resp, key)) {
                    out.push((PieceKind::Result, call.clone(), s));
                }
            }
        }
    }
    out
}
