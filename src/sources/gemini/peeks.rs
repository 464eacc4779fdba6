//! A Gemini CLI chat's read-backs of its saved outputs: `read_file` of a saved file (with
//! `offset`/`limit`, or `start_line`/`end_line`) and a grep of it (`grep_search`, earlier
//! `search_file_content`). They are the chat's peeks for the coverage insight, each answer
//! turned into the harness's `N: text` gutter so one rule counts the lines shown.
//!
//! `read_file` answers with the lines themselves, unnumbered: a cut read says `Status: Showing
//! lines A-B of N total lines.` and then `--- FILE CONTENT (truncated) ---`; a whole read is
//! the text. Its grep answers `L<n>: text` under `File: <name>`.

use super::records;
use super::saved::{saved_stub, value_id};
use crate::model::PeekCall;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::LazyLock;

/// Where a cut read says its lines start.
static SHOWING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Showing lines (\d+)-").expect("valid regex"));
/// A grep answer's line.
static GREP_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^L(\d+): (.*)$").expect("valid regex"));

/// The keys of a read's or a grep's input that name the file.
const PATH_KEYS: [&str; 3] = ["file_path", "absolute_path", "path"];

/// The name of the file at `path` (the last component): what a read names a saved file by.
fn name_of(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Every `read_file` or grep of a saved output in chat `path` that has a result, in order.
pub(crate) fn read_backs(path: &Path) -> io::Result<Vec<PeekCall>> {
    // Saved files met so far (by name), with their value ids.
    let mut saved: HashMap<String, String> = HashMap::new();
    let mut calls = Vec::new();
    records::read(path, &mut |line| {
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return;
        };
        let tool_calls = v.pointer("/message/toolCalls").and_then(Value::as_array);
        for c in tool_calls.into_iter().flatten() {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("");
            let (output, ok) = super::fold::call_output(c);
            if let Some(stub) = saved_stub(&output) {
                let name = stub.path.file_name().and_then(|n| n.to_str());
                if let Some(name) = name {
                    saved.insert(name.to_owned(), value_id(&stub, id));
                }
                continue;
            }
            let tool = c.get("name").and_then(Value::as_str).unwrap_or("");
            let grep = matches!(tool, "grep_search" | "search_file_content");
            if tool != "read_file" && !grep {
                continue;
            }
            let args = c.get("args").and_then(Value::as_object).cloned();
            let mut request = args.unwrap_or_default();
            let named = PATH_KEYS
                .iter()
                .find_map(|k| request.get(*k).and_then(Value::as_str))
                .map(name_of)
                .and_then(|n| saved.get(n))
                .cloned();
            let Some(value_id) = named else { continue };
            let content = match grep {
                true => grep_gutter(&output),
                false => read_gutter(&request, &output),
            };
            PATH_KEYS.iter().for_each(|k| {
                request.remove(*k);
            });
            calls.push(PeekCall {
                tool_call_id: id.to_owned(),
                line: line.number,
                value_id: Some(value_id),
                request,
                ok,
                content,
            });
        }
    })?;
    Ok(calls)
}

/// A `read_file` answer in the `N: text` gutter: its lines numbered from where the answer says
/// they start, else from the request's `offset` (0-based) or `start_line`, else from 1.
fn read_gutter(request: &Map<String, Value>, output: &str) -> String {
    let num = |k: &str| request.get(k).and_then(Value::as_u64);
    let (start, body) = match output.split_once("--- FILE CONTENT (truncated) ---\n") {
        Some((head, body)) => {
            let said = SHOWING
                .captures(head)
                .and_then(|c| c[1].parse::<u64>().ok());
            (said, body)
        }
        None => (None, output),
    };
    let start = start
        .or_else(|| num("offset").map(|o| o.saturating_add(1)))
        .or_else(|| num("start_line"))
        .unwrap_or(1);
    let mut out = String::new();
    for (i, l) in body.lines().enumerate() {
        out.push_str(&format!("{}: {l}\n", start.saturating_add(i as u64)));
    }
    out
}

/// A grep answer's `L<n>: text` lines in the `N: text` gutter.
fn grep_gutter(output: &str) -> String {
    crate::model::peek_call::gutter_of(output, &GREP_LINE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_greps_become_gutter_lines() {
        let cut = "IMPORTANT: The file content has been truncated.\nStatus: Showing lines 101-102 of 5000 total lines.\nAction: ...\n\n--- FILE CONTENT (truncated) ---\nFAIL a\nok\n";
        let req = json!({"offset": 100, "limit": 2});
        assert_eq!(
            read_gutter(req.as_object().unwrap(), cut),
            "101: FAIL a\n102: ok\n"
        );
        let req = json!({"start_line": 7});
        assert_eq!(
            read_gutter(req.as_object().unwrap(), "x\ny"),
            "7: x\n8: y\n"
        );
        let grep = "Found 2 matches for pattern \"FAIL\" in path \"/t\":\n---\nFile: shell_c1.txt\nL12: FAIL a\nL90: FAIL b\n---";
        assert_eq!(grep_gutter(grep), "12: FAIL a\n90: FAIL b\n");
    }
}
