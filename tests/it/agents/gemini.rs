//! Gemini CLI's chats read as runs: every real chat in `../shared/data/agents/gemini` with its
//! counts pinned (counted independently, the `.jsonl` after replaying it as the CLI does), and
//! hand-built chats of the shapes no real file holds (a log with `$set` and `$rewindTo`, saved
//! outputs of the stub generations, one swept by the CLI's cleanup, a subagent's chat), built
//! from the CLI's source rules.

use crate::support::{mctl, mctl_json, set_mtime, stdout, OLD_MS};
use serde_json::{json, Value};
use std::path::Path;

/// Per real chat: prompts, tool calls, failed results, input, cached input, output with
/// thoughts, status.
const REAL: &[(&str, [u64; 6], &str)] = &[
    (
        "jnarowski__agentcmd__session-2025-10-27T19-55-981c87cb.json",
        [3, 13, 2, 102_805, 45_385, 6_456],
        "done",
    ),
    (
        "jnarowski__agentcmd__session-2025-10-29T10-36-453aa339.json",
        [1, 3, 0, 21_694, 4_029, 563],
        "done",
    ),
    (
        "jnarowski__agentcmd__session-2025-10-29T10-39-a63242d9.json",
        [1, 1, 1, 4_657, 0, 151],
        "interrupted",
    ),
    (
        "yoavf__ai-sessions__gemini-cli-pomodoro-timer.json",
        [5, 11, 1, 120_730, 86_702, 6_223],
        "done",
    ),
    (
        "codemie-ai__codemie-code__session-2025-12-01T21-45-5b959dae.json",
        [3, 10, 0, 101_630, 56_538, 4_227],
        "done",
    ),
    (
        "codemie-ai__codemie-code__session-2026-01-16T11-01-file-ops-37b7abef.json",
        [5, 14, 0, 87_418, 62_117, 4_355],
        "done",
    ),
    (
        "Mai0313__VibeCodingTracker__test_conversation_gemini.json",
        [1, 7, 0, 76_348, 39_826, 20_941],
        "done",
    ),
    (
        "Mai0313__VibeCodingTracker__gemini.jsonl",
        [3, 12, 0, 202_586, 48_951, 4_293],
        "cancelled",
    ),
];

#[test]
fn every_real_gemini_chat_reads_with_its_counts() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/agents/gemini");
    if !shared.is_dir() {
        eprintln!(
            "{} is absent: the real Gemini CLI chats are not read here; the hand-built chats \
             below cover the same formats",
            shared.display()
        );
        return;
    }
    for (name, want, status) in REAL {
        let store = tempfile::tempdir().unwrap();
        let chats = store.path().join("proj/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let stored = format!("session-{}", name.replace("__", "-"));
        let path = chats.join(&stored);
        std::fs::copy(shared.join(name), &path).unwrap();
        set_mtime(&path, OLD_MS);
        let runs = mctl_json(store.path(), &["runs"]);
        let runs = runs.as_array().unwrap();
        assert_eq!(runs.len(), 1, "{name}");
        let show = mctl_json(store.path(), &["show", runs[0]["id"].as_str().unwrap()]);
        let run = &show["run"];
        assert_eq!(run["source"], "gemini", "{name}");
        let failed = (show["results"].as_array().unwrap().iter())
            .filter(|r| r["ok"] == false)
            .count() as u64;
        let got = [
            run["dispatches"].as_u64().unwrap(),
            run["toolCalls"].as_u64().unwrap(),
            failed,
            run["inputTokens"].as_u64().unwrap(),
            run["cacheReadTokens"].as_u64().unwrap(),
            run["outputTokens"].as_u64().unwrap(),
        ];
        assert_eq!(got, *want, "{name}");
        assert_eq!(run["status"], *status, "{name}");
        assert_eq!(
            (run["problems"].as_u64(), run["warnings"].as_u64()),
            (Some(0), Some(0)),
            "{name}"
        );
    }
}

pub(super) const MAIN: &str = "session-2026-04-23T10-00-a1b2c3d4";
pub(super) const SESSION: &str = "a1b2c3d4-0000-4000-8000-000000000001";

pub(super) fn call(id: &str, output: &str, status: &str) -> Value {
    let response = match status {
        "success" => json!({"output": output}),
        _ => json!({"error": output}),
    };
    json!({"id": id, "name": "run_shell_command", "args": {"command": "make test"},
        "result": [{"functionResponse": {"id": id, "name": "run_shell_command", "response": response}}],
        "status": status, "timestamp": "2026-04-23T10:00:05.000Z"})
}

/// A project folder with a chat log of every shape, and its saved outputs.
pub(super) fn store(dir: &Path) {
    let project = dir.join("proj");
    let chats = project.join("chats");
    let saved = project.join(format!("tool-outputs/session-{SESSION}"));
    std::fs::create_dir_all(&saved).unwrap();
    std::fs::create_dir_all(chats.join(SESSION)).unwrap();
    let full = (1..=3000)
        .map(|i| format!("test {i} ok\n"))
        .collect::<String>();
    std::fs::write(saved.join("run_shell_command-1.txt"), &full).unwrap();
    std::fs::write(
        saved.join("run_shell_command_c3_x.txt"),
        serde_json::to_string_pretty(&json!({"output": "masked but whole"})).unwrap(),
    )
    .unwrap();
    let at = |name: &str| saved.join(name).display().to_string();
    let new_stub = format!("Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {}\ntest 1 ok\n\n... [30,000 characters omitted] ...\n\ntest 3000 ok", at("run_shell_command-1.txt"));
    let swept = format!("Output too large. Showing the last 100 of 9,000 lines. For full output see: {}\n...\nlast line", at("gone.txt"));
    let masked = format!("<tool_output_masked>\nmasked\n\nOutput too large. Full output available at: {}\n</tool_output_masked>", at("run_shell_command_c3_x.txt"));
    let answer = json!({"id": "g1", "type": "gemini", "timestamp": "2026-04-23T10:00:06.000Z", "content": "",
        "thoughts": [{"subject": "Testing", "description": "Run the suite.", "timestamp": "2026-04-23T10:00:04.000Z"}],
        "toolCalls": [call("run_shell_command-1", &new_stub, "success"), call("c2", &swept, "success"),
            call("run_shell_command_c3", &masked, "success"), call("c4", "[Operation Cancelled] Reason: User cancelled the operation.", "cancelled")],
        "model": "gemini-2.5-pro", "tokens": {"input": 1000, "output": 10, "cached": 400, "thoughts": 5, "tool": 0, "total": 1015}});
    let lines = [
        json!({"sessionId": SESSION, "projectHash": "ab14fe39", "startTime": "2026-04-23T10:00:00.000Z", "kind": "main"}),
        json!({"id": "u1", "type": "user", "timestamp": "2026-04-23T10:00:01.000Z", "content": [{"text": "Run the tests"}]}),
        json!({"id": "g1", "type": "gemini", "timestamp": "2026-04-23T10:00:02.000Z", "content": "", "tokens": null}),
        json!({"$set": {"lastUpdated": "2026-04-23T10:00:06.000Z"}}),
        answer,
        json!({"id": "u2", "type": "user", "timestamp": "2026-04-23T10:00:07.000Z", "content": "Delete everything"}),
        json!({"id": "g2", "type": "gemini", "timestamp": "2026-04-23T10:00:08.000Z", "content": "Deleting.", "model": "gemini-2.5-pro",
            "tokens": {"input": 50, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 55}}),
        json!({"$rewindTo": "u2"}),
        json!({"id": "g3", "type": "gemini", "timestamp": "2026-04-23T10:00:09.000Z", "content": "All tests pass.", "model": "gemini-2.5-pro",
            "tokens": {"input": 60, "output": 6, "cached": 0, "thoughts": 0, "tool": 0, "total": 66}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(chats.join(format!("{MAIN}.jsonl")), text).unwrap();
    // The document it was resumed from: the log wins.
    std::fs::write(chats.join(format!("{MAIN}.json")), "{}").unwrap();
    let sub = json!({"sessionId": "e5f6a7b8-0000-4000-8000-000000000002", "projectHash": "ab14fe39", "kind": "subagent",
        "messages": [{"id": "s1", "type": "user", "content": "Find the flaky test"},
            {"id": "s2", "type": "gemini", "content": "test 7 is flaky", "model": "gemini-2.5-pro",
             "tokens": {"input": 30, "output": 3, "cached": 0, "thoughts": 0, "tool": 0, "total": 33}}]});
    std::fs::write(
        chats
            .join(SESSION)
            .join("e5f6a7b8-0000-4000-8000-000000000002.json"),
        sub.to_string(),
    )
    .unwrap();
    for f in walk(dir) {
        set_mtime(&f, OLD_MS);
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_chat_log_is_replayed_and_its_saved_outputs_are_retained_values() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let root = dir.path();
    let runs = mctl_json(root, &["runs"]);
    let ids: Vec<&str> = (runs.as_array().unwrap().iter())
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.len(),
        2,
        "the log and the subagent's chat; the document it came from is not a run: {ids:?}"
    );
    let show = mctl_json(root, &["show", MAIN]);
    let run = &show["run"];
    assert_eq!(run["source"], "gemini");
    assert_eq!(run["title"], "Run the tests");
    assert_eq!(run["dispatches"], 1, "the rewound prompt is gone");
    assert_eq!(run["status"], "done");
    // g1 once (its later copy), g3; g2 was rewound away. Thoughts are output.
    assert_eq!(
        (run["inputTokens"].as_u64(), run["outputTokens"].as_u64()),
        (Some(1060), Some(21))
    );
    assert_eq!(
        (
            run["cacheReadTokens"].as_u64(),
            run["reasoningTokens"].as_u64()
        ),
        (Some(400), Some(5))
    );
    let rewinds: Vec<&Value> = (show["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == "rewind")
        .collect();
    assert_eq!(rewinds.len(), 1);
    assert_eq!(
        rewinds[0]["text"],
        "Rewound: 2 later messages dropped from the chat"
    );

    let result = |id: &str| {
        (show["results"].as_array().unwrap().iter())
            .find(|r| r["toolCallId"] == id)
            .unwrap()
            .clone()
    };
    let kept = result("run_shell_command-1");
    assert_eq!(
        (kept["state"].as_str(), kept["lines"].as_u64()),
        (Some("retained"), Some(3000))
    );
    let gone = result("c2");
    assert_eq!(gone["state"], "swept", "taken by the CLI's cleanup");
    assert_eq!(gone["lines"], 9000, "the length its stub states");
    assert_eq!(gone["valueId"], "gone", "named by its file");
    assert_eq!(
        result("run_shell_command_c3")["state"],
        "retained",
        "a masked output"
    );
    assert_eq!(result("c4")["ok"], false, "a cancelled call failed");

    let full = stdout(&mctl(root, &["full", MAIN, "run_shell_command-1"]));
    assert_eq!(full.lines().count(), 3000);
    assert!(stdout(&mctl(root, &["stub", MAIN, "run_shell_command-1"]))
        .starts_with("Output too large."));
    assert_eq!(
        stdout(&mctl(root, &["full", MAIN, "run_shell_command_c3"])),
        "masked but whole"
    );
    let peek = mctl_json(
        root,
        &["peek", MAIN, "run_shell_command-1", "--lines", "2999-3000"],
    );
    assert!(
        peek["text"]
            .as_str()
            .unwrap()
            .ends_with("2999: test 2999 ok\n3000: test 3000 ok\n"),
        "{peek}"
    );

    let child = (runs.as_array().unwrap().iter())
        .find(|r| r["id"] != MAIN)
        .unwrap();
    assert_eq!(
        child["parentId"], MAIN,
        "a subagent's chat is under its session"
    );
    assert_eq!(run["tokensWithChildren"], 1060 + 21 + 33);
}

/// A legacy chat document with one call per generation of saved output, each file where that
/// generation put it: v0.5–v0.25 `<tmp>/<call id>.output`, v0.26–v0.28
/// `<tmp>/tool_output/<tool>_<call id>.txt`, v0.29+ `tool-outputs/session-<id>/<tool>_<call
/// id>.txt`. (Built from the CLI's source rules: no real chat holds a saved output.)
#[test]
fn each_generation_of_saved_output_opens_with_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    let temp = dir.path().join("system-tmp");
    let session = "c0ffee00-0000-4000-8000-000000000003";
    let new_dir = project.join(format!("tool-outputs/session-{session}"));
    let files = [
        (temp.join("g5.output"), "five\n".repeat(3000)),
        (
            temp.join("tool_output/run_shell_command_g26.txt"),
            "twenty-six\n".repeat(2000),
        ),
        (
            new_dir.join("run_shell_command_g29.txt"),
            "twenty-nine\n".repeat(1000),
        ),
    ];
    for (path, text) in &files {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let at = |i: usize| files[i].0.display().to_string();
    let stubs = [
        format!("Tool output was too large and has been truncated.\nThe full output has been saved to: {}\nTo read the complete output, use the read_file tool with the absolute file path above. For large files, you can use the offset and limit parameters to read specific sections:\n- offset: 0, limit: 100\n\nTruncated part of the output:\nfive\n... [CONTENT TRUNCATED] ...\nfive", at(0)),
        format!("Output too large. Showing the last 10 of 2,000 lines. For full output see: {}\n...\ntwenty-six", at(1)),
        format!("Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {}\ntwenty-nine\n\n... [1,000 characters omitted] ...\n\ntwenty-nine", at(2)),
    ];
    let calls: Vec<Value> = ["g5", "g26", "g29"]
        .iter()
        .zip(&stubs)
        .map(|(id, stub)| call(id, stub, "success"))
        .collect();
    let chat = json!({"sessionId": session, "projectHash": "ab14fe39", "startTime": "2026-04-23T10:00:00.000Z",
        "lastUpdated": "2026-04-23T10:00:09.000Z", "messages": [
            {"id": "u1", "type": "user", "timestamp": "2026-04-23T10:00:01.000Z", "content": "Build it"},
            {"id": "g1", "type": "gemini", "timestamp": "2026-04-23T10:00:08.000Z", "content": "Built.",
             "model": "gemini-2.5-pro", "toolCalls": calls}]});
    let name = "session-2026-04-23T10-00-c0ffee00";
    std::fs::create_dir_all(project.join("chats")).unwrap();
    std::fs::write(project.join(format!("chats/{name}.json")), chat.to_string()).unwrap();

    let show = mctl_json(dir.path(), &["show", name]);
    for (i, (call, lines, value)) in [
        ("g5", 3000, "g5"),
        ("g26", 2000, "run_shell_command_g26"),
        ("g29", 1000, "run_shell_command_g29"),
    ]
    .into_iter()
    .enumerate()
    {
        let r = (show["results"].as_array().unwrap().iter())
            .find(|r| r["toolCallId"] == call)
            .unwrap();
        assert_eq!(
            (
                r["state"].as_str(),
                r["lines"].as_u64(),
                r["valueId"].as_str()
            ),
            (Some("retained"), Some(lines), Some(value)),
            "{call}"
        );
        let full = stdout(&mctl(dir.path(), &["full", name, call]));
        assert_eq!(full, files[i].1, "{call}: the full text is its file's");
        let stub = stdout(&mctl(dir.path(), &["stub", name, call]));
        assert_eq!(
            stub.trim_end(),
            stubs[i],
            "{call}: the stub is what the model got"
        );
    }
    // Only the session's own folder is collected: the older generations' files, in the
    // system's temp folder, are read and never taken.
    // Its saved outputs as old as it: a file written within the idle guard keeps its run.
    set_mtime(&project.join(format!("chats/{name}.json")), OLD_MS);
    for (path, _) in &files {
        set_mtime(path, OLD_MS);
    }
    let plan = mctl_json(dir.path(), &["gc", "--older-than", "1d"]);
    let paths: Vec<&str> = (plan["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [format!(
            "proj/tool-outputs/session-{session}/run_shell_command_g29.txt"
        )]
    );
}
