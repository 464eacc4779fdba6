//! A Gemini CLI chat's and an opencode session's read-backs of their saved outputs count in the
//! coverage insight as the harness's `peek_value` calls do: the lines each read or grep
//! answered are lines the model saw. Hand-built from the agents' answer formats (no real file
//! holds a saved output).

use super::{gemini, opencode};
use crate::support::mctl_json;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

/// The coverage of value `value` of run `run`.
fn coverage(root: &Path, run: &str, value: &str) -> Value {
    let all = mctl_json(root, &["coverage", run]);
    (all.as_array().unwrap().iter())
        .find(|v| v["valueId"] == value)
        .unwrap_or_else(|| panic!("no coverage of {value}: {all}"))
        .clone()
}

#[test]
fn a_gemini_chats_reads_of_its_saved_file_are_its_peeks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    gemini::store(root);
    let saved = root.join(format!(
        "proj/tool-outputs/session-{}/run_shell_command-1.txt",
        gemini::SESSION
    ));
    let before = coverage(root, gemini::MAIN, "run_shell_command-1");
    assert_eq!(
        (
            before["seenLines"].as_u64(),
            before["neverPeeked"].as_bool()
        ),
        (Some(0), Some(true))
    );

    let read = |id: &str, name: &str, args: Value, output: &str| {
        let mut c = gemini::call(id, output, "success");
        c["name"] = json!(name);
        c["args"] = args;
        c
    };
    let path = saved.display().to_string();
    let cut = "IMPORTANT: The file content has been truncated.\nStatus: Showing lines 101-102 of 3000 total lines.\nAction: To read more of the file, use offset: 102.\n\n--- FILE CONTENT (truncated) ---\ntest 101 ok\ntest 102 ok";
    let grep = "Found 1 matches for pattern \"test 7 \" in path:\n---\nFile: run_shell_command-1.txt\nL7: test 7 ok\n---";
    let answer = json!({"id": "g9", "type": "gemini", "timestamp": "2026-04-23T10:00:20.000Z", "content": "Read it.",
    "model": "gemini-2.5-pro", "tokens": {"input": 10, "output": 1, "cached": 0, "thoughts": 0, "tool": 0, "total": 11},
    "toolCalls": [
        read("r1", "read_file", json!({"file_path": path, "offset": 100, "limit": 2}), cut),
        read("r2", "grep_search", json!({"pattern": "test 7 ", "path": path}), grep),
        read("r3", "read_file", json!({"file_path": "README.md"}), "not a saved file"),
    ]});
    let log = root.join(format!("proj/chats/{}.jsonl", gemini::MAIN));
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    writeln!(f, "{answer}").unwrap();

    let after = coverage(root, gemini::MAIN, "run_shell_command-1");
    assert_eq!(after["peeks"].as_array().unwrap().len(), 2, "{after}");
    assert_eq!(after["seenLines"], 3, "lines 101-102 and 7: {after}");
    assert_eq!(after["neverPeeked"], false);
}

#[test]
fn an_opencode_sessions_reads_of_its_saved_file_are_its_peeks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    opencode::store(root);
    let name = "tool_cadf21750001AAAAAAAAAAAAAA";
    let kept = root.join("tool-output").join(name).display().to_string();
    let before = coverage(root, opencode::MAIN, name);
    assert_eq!(before["seenLines"], 0, "{before}");

    let part = |call: &str, tool: &str, input: Value, output: &str| {
        json!({"type": "tool", "callID": call, "tool": tool, "state": {"status": "completed", "input": input,
            "output": output, "title": tool, "metadata": {}, "time": {"start": 1772444870000i64, "end": 1772444871000i64}}})
    };
    let read = format!("<path>{kept}</path>\n<type>file</type>\n<content>41: test 41 ok\n42: test 42 ok\n\n(File has more lines. Use 'offset' parameter to read beyond line 42)\n</content>");
    let grep = format!("Found 1 matches\n{kept}:\n  Line 7: test 7 ok");
    let parts = [
        part(
            "c_read",
            "read",
            json!({"filePath": kept, "offset": 41, "limit": 2}),
            &read,
        ),
        part(
            "c_grep",
            "grep",
            json!({"pattern": "test 7 ", "path": kept}),
            &grep,
        ),
        part(
            "c_other",
            "read",
            json!({"filePath": "/home/ana/app/README.md"}),
            "<content>1: # app</content>",
        ),
    ];
    let conn = rusqlite::Connection::open(root.join("opencode.db")).unwrap();
    let data = json!({"role": "assistant", "time": {"created": 1772444870000i64, "completed": 1772444872000i64},
        "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "cost": 0, "finish": "stop"});
    conn.execute(
        "INSERT INTO message VALUES ('msg_a9', ?1, 1772444870000, 1772444870000, ?2)",
        rusqlite::params![opencode::MAIN, data.to_string()],
    )
    .unwrap();
    for (i, p) in parts.iter().enumerate() {
        conn.execute(
            "INSERT INTO part VALUES (?1, 'msg_a9', ?2, 1772444870000, 1772444870000, ?3)",
            rusqlite::params![format!("prt_msg_a9_{i:02}"), opencode::MAIN, p.to_string()],
        )
        .unwrap();
    }
    drop(conn);

    let after = coverage(root, opencode::MAIN, name);
    assert_eq!(after["peeks"].as_array().unwrap().len(), 2, "{after}");
    assert_eq!(after["seenLines"], 3, "lines 41-42 and 7: {after}");
}
