//! An opencode session's read-backs of its saved outputs: `read` of a file of `tool-output/`
//! (with `offset` and `limit`) and `grep` on it. They are the session's peeks for the coverage
//! insight, each answer turned into the harness's `N: text` gutter so one rule counts the
//! lines shown. `read` numbers its lines `N: text` inside `<content>` (v1.2; before, `00042|
//! text` inside `<file>`); `grep` answers `  Line N: text` under the file's path.

use super::folders::{file_name, saved_path};
use super::records;
use crate::model::PeekCall;
use regex::Regex;
use serde_json::Value;
use std::collections::HashSet;
use std::io;
use std::path::Path;
use std::sync::LazyLock;

/// A numbered line of a `read` answer: `12: text` or `00012| text`.
static READ_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:<content>)?0*(\d+)(?:: |\| )(.*)$").expect("valid regex"));
/// A line of a `grep` answer.
static GREP_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*Line (\d+): (.*)$").expect("valid regex"));

/// Every `read` or `grep` of a saved output by session `run` of store file `path` that has a
/// result, in order.
pub(crate) fn read_backs(path: &Path, run: &str) -> io::Result<Vec<PeekCall>> {
    // The saved files met so far, by name (`tool_…`, their value ids).
    let mut saved: HashSet<String> = HashSet::new();
    let mut calls = Vec::new();
    records::read(path, run, &mut |line| {
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return;
        };
        let parts = v.get("parts").and_then(Value::as_array);
        for p in parts.into_iter().flatten() {
            if p.get("type").and_then(Value::as_str) != Some("tool") {
                continue;
            }
            let state = p.get("state").unwrap_or(&Value::Null);
            if let Some(name) = saved_path(state).and_then(file_name) {
                saved.insert(name.to_owned());
                continue;
            }
            let tool = p.get("tool").and_then(Value::as_str).unwrap_or("");
            let key = match tool {
                "read" => "filePath",
                "grep" => "path",
                _ => continue,
            };
            let mut request = (state.get("input").and_then(Value::as_object))
                .cloned()
                .unwrap_or_default();
            let named = (request.get(key).and_then(Value::as_str))
                .and_then(file_name)
                .filter(|n| saved.contains(*n))
                .map(str::to_owned);
            let Some(value_id) = named else { continue };
            let (text, ok) = match state.get("status").and_then(Value::as_str) {
                Some("completed") => (state.get("output"), true),
                Some("error") => (state.get("error"), false),
                _ => continue,
            };
            let text = text.and_then(Value::as_str).unwrap_or("");
            request.remove(key);
            calls.push(PeekCall {
                tool_call_id: (p.get("callID").and_then(Value::as_str))
                    .unwrap_or("")
                    .to_owned(),
                line: line.number,
                value_id: Some(value_id),
                request,
                ok,
                content: gutter(tool, text),
            });
        }
    })?;
    Ok(calls)
}

/// A `read` or `grep` answer's numbered lines in the `N: text` gutter.
fn gutter(tool: &str, text: &str) -> String {
    let numbered = match tool {
        "read" => &READ_LINE,
        _ => &GREP_LINE,
    };
    crate::model::peek_call::gutter_of(text, numbered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_greps_become_gutter_lines() {
        let new = "<path>/d/tool-output/tool_1</path>\n<type>file</type>\n<content>41: FAIL a\n42: ok\n\n(File has more lines. Use 'offset' parameter to read beyond line 42)\n</content>";
        assert_eq!(gutter("read", new), "41: FAIL a\n42: ok\n");
        let old = "<file>\n00041| FAIL a\n00042| ok\n</file>";
        assert_eq!(gutter("read", old), "41: FAIL a\n42: ok\n");
        let grep = "Found 2 matches\n/d/tool-output/tool_1:\n  Line 12: FAIL a\n  Line 90: FAIL b";
        assert_eq!(gutter("grep", grep), "12: FAIL a\n90: FAIL b\n");
    }
}
