//! The `peek_value` calls of a transcript, with what each returned, as the transcript recorded
//! it (what the model really got, not a peek run again).

use crate::retained::value_id;
use crate::transcript::event::{Envelope, ToolResult};
use crate::transcript::read_small_lines;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io;
use std::path::Path;

/// The tool the harness gives models for reading a retained value.
pub(super) const PEEK_TOOL: &str = "peek_value";

/// One `peek_value` call and its result.
pub(crate) struct PeekCall {
    pub tool_call_id: String,
    /// Transcript line of its result.
    pub line: u64,
    /// The value id its input's `id` names (through `value_id`), if it names one.
    pub value_id: Option<String>,
    /// The input as given, without its `id`: `start`/`end`, or `query`.
    pub request: Map<String, Value>,
    pub ok: bool,
    pub content: String,
}

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

/// The line numbers a peek's text shows: those of its `N: ` gutter lines (its header and footer
/// never look like one, spec B.4), in order.
pub(super) fn shown_lines(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| {
            let digits = l.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || !l[digits..].starts_with(": ") {
                return None;
            }
            l[..digits].parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gutter_lines_only() {
        let text = "peek_value #v lines 3-4 of 9:\n3: a\n4: 12: b\n--- 2 lines ---\n5 lines\n";
        assert_eq!(shown_lines(text), [3, 4]);
    }
}
