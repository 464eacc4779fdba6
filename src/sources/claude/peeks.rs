//! A Claude Code session's read-backs of its persisted outputs: `Read` of a value file (with
//! `offset` and `limit`) and `Grep` on it. They are the session's peeks for the coverage insight,
//! each answer turned into the harness's `N: text` gutter so one rule counts the lines shown.

use super::content::value_text;
use super::persisted::target_of;
use super::threads::Lines;
use crate::model::PeekCall;
use crate::retained::Stub;
use crate::transcript::read_small_lines;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io;
use std::path::Path;

/// A read-back answer is small; a line longer than this (a big result) is passed over.
const LINE_MAX: usize = 4 << 20;

/// Every `Read` or `Grep` of a value file in session file `path` that has a result, in the
/// lines that are the run's (`lines`: a session's file also holds its side conversations').
pub(crate) fn read_backs(path: &Path, mut lines: Lines) -> io::Result<Vec<PeekCall>> {
    let mut asked: HashMap<String, (String, String, Map<String, Value>)> = HashMap::new();
    let mut calls = Vec::new();
    // A side conversation is told by the links of all its lines, big ones too; only small
    // ones are parsed whole.
    let cap = match lines {
        Lines::Side(..) => usize::MAX,
        _ => LINE_MAX,
    };
    read_small_lines(path, cap, |line| {
        if !lines.takes_raw(line.bytes) || line.bytes.len() > LINE_MAX {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return;
        };
        let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                    let input = b
                        .get("input")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    let file = match name {
                        "Read" => input.get("file_path"),
                        "Grep" => input.get("path"),
                        _ => None,
                    };
                    let Some(stem) = file
                        .and_then(Value::as_str)
                        .and_then(|p| target_of(p).ok())
                        .map(|t| t.stem)
                    else {
                        continue;
                    };
                    let id = b.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
                    asked.insert(id, (name.to_owned(), stem, input));
                }
                Some("tool_result") => {
                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
                    let Some((tool, stem, mut request)) = asked.remove(id) else {
                        continue;
                    };
                    request.remove("file_path");
                    request.remove("path");
                    let text = b.get("content").and_then(value_text).unwrap_or_default();
                    calls.push(PeekCall {
                        tool_call_id: id.to_owned(),
                        line: line.number,
                        value_id: Some(stem),
                        request,
                        ok: !b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                        content: gutter(&tool, &text),
                    });
                }
                _ => {}
            }
        }
    })?;
    Ok(calls)
}

/// A read-back's answer in the `N: text` gutter: `Read` numbers its lines `   N→text`, `Grep`
/// with line numbers `N:text` (or `path:N:text`).
fn gutter(tool: &str, text: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        let numbered = match tool {
            "Read" => l.trim_start().split_once('→'),
            _ => {
                let l = l
                    .rsplit_once(".txt:")
                    .or_else(|| l.rsplit_once(".json:"))
                    .map_or(l, |(_, r)| r);
                l.split_once(':')
            }
        };
        if let Some((n, rest)) =
            numbered.filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            out.push_str(&format!("{n}: {rest}\n"));
        }
    }
    out
}

/// The stub a persisted output's model got, with the lines its preview shows: the first ones,
/// as many as the preview holds whole.
pub(crate) fn stub_of(seen: &str) -> Stub {
    let preview = seen
        .split_once("Preview (first 2KB):\n")
        .map(|(_, p)| p)
        .unwrap_or("");
    let preview = preview
        .strip_suffix("</persisted-output>")
        .unwrap_or(preview)
        .trim_end_matches('\n');
    let preview = preview.strip_suffix("\n...").unwrap_or(preview);
    let lines = if preview.is_empty() {
        0
    } else {
        preview.lines().count() as u64
    };
    Stub {
        text: seen.to_owned(),
        head: (lines > 0).then_some((1, lines)),
        tail: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_backs_become_gutter_lines() {
        assert_eq!(
            gutter("Read", "  2411→FAIL a\n  2412→ok\nnot a line"),
            "2411: FAIL a\n2412: ok\n"
        );
        assert_eq!(
            gutter("Grep", "/x/s/tool-results/t.txt:7:error here\n9:also"),
            "7: error here\n9: also\n"
        );
    }

    #[test]
    fn a_stub_shows_the_lines_of_its_preview() {
        let stub = stub_of("<persisted-output>\nOutput too large (5KB). Full output saved to: /p\n\nPreview (first 2KB):\na\nb\nc\n...\n</persisted-output>");
        assert_eq!((stub.head, stub.tail), (Some((1, 3)), None));
        assert_eq!(stub_of("no preview").head, None);
    }
}
