//! A model's read-back of a kept-out value, as its transcript recorded it: the harness's
//! `peek_value` calls, or another agent's reads of the saved file, each answer turned into the
//! harness's `N: text` gutter so one rule counts the lines shown.

use serde_json::{Map, Value};

/// One read-back call and its result.
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
