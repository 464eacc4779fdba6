//! A model's read-back of a kept-out value, as its transcript recorded it: the harness's
//! `peek_value` calls, or another agent's reads of the saved file, each answer turned into the
//! harness's `N: text` gutter so one rule counts the lines shown.

use serde_json::{Map, Value};

/// The lines of `text` that `numbered` matches, in the `N: text` gutter: its first group is the
/// line's number, its second the line (another agent's read or grep answer, whatever its own
/// numbering).
pub(crate) fn gutter_of(text: &str, numbered: &regex::Regex) -> String {
    let mut out = String::new();
    for l in text.lines() {
        if let Some(c) = numbered.captures(l) {
            out.push_str(&format!("{}: {}\n", &c[1], &c[2]));
        }
    }
    out
}

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
