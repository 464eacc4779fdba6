//! The `peek_value` calls of a harness transcript, with what each returned, as the transcript
//! recorded it (what the model really got, not a peek run again).

use crate::model::PeekCall;
use crate::retained::value_id;
use crate::transcript::event::{Envelope, ToolResult};
use crate::transcript::read_small_lines;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io;
use std::path::Path;

/// The tool the harness gives models for reading a retained value.
const PEEK_TOOL: &str = "peek_value";

/// What a line says of a tool call, its result left unread (it may be hundreds of megabytes).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Light {
    #[serde(rename = "type")]
    kind: String,
    tool_call_id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

#[derive(Deserialize)]
struct Finished {
    result: ToolResult,
}

/// The longest transcript line a `peek_value` call or answer can be: an answer is at most 16
/// KiB of text, a few times that once escaped in JSON. Longer lines (big results) are passed
/// over unread.
const PEEK_LINE_MAX: usize = 1 << 20;

/// Every `peek_value` call of transcript `path` that has a result, in file order. Lines that
/// cannot be read are skipped, as the run model skips them.
pub(crate) fn peek_calls(path: &Path) -> io::Result<Vec<PeekCall>> {
    let mut inputs: HashMap<String, Map<String, Value>> = HashMap::new();
    let mut calls = Vec::new();
    read_small_lines(path, PEEK_LINE_MAX, |line| {
        let Ok(env) = serde_json::from_slice::<Envelope>(line.bytes) else {
            return;
        };
        let Ok(event) = serde_json::from_str::<Light>(env.event.get()) else {
            return;
        };
        let Some(call) = event.tool_call_id else {
            return;
        };
        match event.kind.as_str() {
            "tool_call_started" if event.name.as_deref() == Some(PEEK_TOOL) => {
                let input = match event.input {
                    Some(Value::Object(map)) => map,
                    _ => Map::new(),
                };
                inputs.insert(call, input);
            }
            // A repeated call id pairs with the input of the call just before it.
            "tool_call_finished" => {
                let Some(mut request) = inputs.remove(&call) else {
                    return;
                };
                let Ok(finished) = serde_json::from_str::<Finished>(env.event.get()) else {
                    return;
                };
                let named = request.remove("id");
                calls.push(PeekCall {
                    tool_call_id: call,
                    line: line.number,
                    value_id: named.as_ref().and_then(Value::as_str).map(value_id),
                    request,
                    ok: finished.result.ok,
                    content: finished.result.content,
                });
            }
            _ => {}
        }
    })?;
    Ok(calls)
}
