//! The searchable strings of a rollout line: user and assistant messages, reasoning summaries,
//! tool call inputs, and the (cut) outputs the model got.

use crate::sources::{Piece, PieceKind};
use serde_json::Value;

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn blocks(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).into_iter().flatten()
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
            for b in blocks(p.get("content")) {
                out.extend(str_of(b, "text").map(|s| (PieceKind::Message, None, s)));
            }
        }
        (Some("response_item"), Some("reasoning")) => {
            for b in blocks(p.get("summary")) {
                out.extend(str_of(b, "text").map(|s| (PieceKind::Message, None, s)));
            }
        }
        (Some("event_msg"), Some("item_completed")) => {
            let item = &p["item"];
            let kind = str_of(item, "type").unwrap_or("");
            if kind.replace('_', "").eq_ignore_ascii_case("usermessage") {
                for input in blocks(item.get("content")) {
                    out.extend(str_of(input, "text").map(|s| (PieceKind::Message, None, s)));
                }
            }
        }
        (Some("response_item"), Some(kind)) if kind.ends_with("_output") => match p.get("output") {
            Some(Value::String(s)) => out.push((PieceKind::Result, call, s)),
            // An output given as content blocks (`input_text`): each block's text.
            output => {
                for b in blocks(output) {
                    out.extend(str_of(b, "text").map(|s| (PieceKind::Result, call.clone(), s)));
                }
            }
        },
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
