//! The searchable strings of a rollout line: user and assistant messages, reasoning summaries,
//! tool call inputs, and the (cut) outputs the model got.

use crate::sources::{Piece, PieceKind};
use serde_json::Value;

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

pub(super) fn pieces(v: &Value) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let Some(p) = v.get("payload") else {
        return out;
    };
    let call = str_of(p, "call_id").map(str::to_owned);
    match (str_of(v, "type"), str_of(p, "type")) {
        (Some("event_msg"), Some("user_message")) => {
            out.extend(str_of(p, "message").map(|s| (PieceKind::Message, None, s)))
        }
        (Some("response_item"), Some("message")) if str_of(p, "role") == Some("assistant") => {
            for b in p
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(str_of(b, "text").map(|s| (PieceKind::Message, None, s)));
            }
        }
        (Some("response_item"), Some("reasoning")) => {
            for b in p
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(str_of(b, "text").map(|s| (PieceKind::Message, None, s)));
            }
        }
        (Some("response_item"), Some(kind)) if kind.ends_with("_output") => {
            if let Some(s) = str_of(p, "output") {
                out.push((PieceKind::Result, call, s));
            }
        }
        (Some("response_item"), Some(_)) => {
            for key in ["arguments", "input"] {
                if let Some(s) = str_of(p, key) {
                    out.push((PieceKind::Input, call.clone(), s));
                }
            }
        }
        _ => {}
    }
    out
}
