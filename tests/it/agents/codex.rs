//! A hand-built Codex store: a compressed rollout read like a plain one, its cut output
//! `truncated`, and the doors that have nothing more to give saying so.

use crate::support::{mctl, mctl_json, stderr, stdout};
use serde_json::json;
use std::io::Write;

const THREAD: &str = "019e1625-789d-76c0-80ab-3724b5ddb799";

fn rollout() -> String {
    let cut = "Exit code: 101\nWall time: 41.2 seconds\nTotal output lines: 5210\nOutput:\n   Compiling app v0.1.0\n…38211 tokens truncated…\ntest result: FAILED. 212 passed; 3 failed";
    let lines = [
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": THREAD, "cwd": "/home/ana/app", "originator": "codex_cli_rs", "model_provider": "openai"}}),
        json!({"timestamp": "2026-07-01T10:00:00.001Z", "type": "turn_context", "payload": {"cwd": "/home/ana/app", "model": "gpt-5-codex"}}),
        json!({"timestamp": "2026-07-01T10:00:00.002Z", "type": "event_msg", "payload": {"type": "user_message", "message": "Run the tests"}}),
        json!({"timestamp": "2026-07-01T10:00:01.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell_command", "arguments": "{\"command\":\"cargo test\"}", "call_id": "call_7f"}}),
        json!({"timestamp": "2026-07-01T10:00:41.300Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_7f", "output": cut}}),
        json!({"timestamp": "2026-07-01T10:00:41.310Z", "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 51234, "output_tokens": 88}}}}),
        json!({"timestamp": "2026-07-01T10:00:42.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell_command", "arguments": "{\"command\":\"ls\"}", "call_id": "call_8"}}),
        json!({"timestamp": "2026-07-01T10:00:42.100Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_8", "output": "{\"output\":\"Cargo.toml\\n\",\"metadata\":{\"exit_code\":0}}"}}),
        json!({"timestamp": "2026-07-01T10:00:43.000Z", "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Three tests fail."}]}}),
        json!({"timestamp": "2026-07-01T10:00:43.100Z", "type": "future_item", "payload": {}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_compressed_rollout_reads_like_a_plain_one_and_its_cut_is_truncated() {
    let store = tempfile::tempdir().unwrap();
    let day = store.path().join("sessions/2026/07/01");
    std::fs::create_dir_all(&day).unwrap();
    let name = format!("rollout-2026-07-01T10-00-00-{THREAD}.jsonl");
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.write_all(rollout().as_bytes()).unwrap();
    std::fs::write(day.join(format!("{name}.zst")), enc.finish().unwrap()).unwrap();
    let dir = store.path().join("sessions");

    let show = mctl_json(&dir, &["show", THREAD]);
    let run = &show["run"];
    assert_eq!(run["source"], "codex");
    assert_eq!(run["model"], "gpt-5-codex");
    assert_eq!(run["title"], "Run the tests");
    assert_eq!(
        (run["inputTokens"].as_u64(), run["outputTokens"].as_u64()),
        (Some(51234), Some(88))
    );
    assert_eq!(
        (
            run["toolCalls"].as_u64(),
            run["truncated"].as_u64(),
            run["inline"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    assert_eq!(
        run["warnings"], 1,
        "an unknown line type is counted, not fatal"
    );
    let cut = &show["results"][0];
    assert_eq!(
        (
            cut["state"].as_str(),
            cut["ok"].as_bool(),
            cut["lines"].as_u64()
        ),
        (Some("truncated"), Some(false), Some(5210))
    );
    assert_eq!(
        show["results"][1]["ok"], true,
        "the exit code in the JSON output"
    );

    // The cut text is all there is: `full` prints it, with Codex's own mark; no stub.
    let full = stdout(&mctl(&dir, &["full", THREAD, "call_7f"]));
    assert!(full.contains("…38211 tokens truncated…"), "{full}");
    assert_eq!(
        stdout(&mctl(&dir, &["full", THREAD, "call_8"])),
        "Cargo.toml\n"
    );
    let out = mctl(&dir, &["stub", THREAD, "call_7f"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("cut in place"), "{}", stderr(&out));

    // A plain sibling wins over the compressed copy.
    std::fs::write(
        day.join(&name),
        rollout().replace("Run the tests", "Plain wins"),
    )
    .unwrap();
    assert_eq!(
        mctl_json(&dir, &["show", THREAD])["run"]["title"],
        "Plain wins"
    );
}

#[test]
fn the_harness_only_insights_say_so_for_another_agent() {
    let store = tempfile::tempdir().unwrap();
    let day = store.path().join("sessions/2026/07/01");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join(format!("rollout-2026-07-01T10-00-00-{THREAD}.jsonl")),
        rollout(),
    )
    .unwrap();
    let out = mctl(&store.path().join("sessions"), &["resume", THREAD]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Codex resumes its own sessions"),
        "{}",
        stderr(&out)
    );
    // The what-if answers (nothing counted), and says why.
    let out = mctl(
        &store.path().join("sessions"),
        &["whatif", "--threshold", "1024", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(answer[0]["results"], 0);
    assert!(
        stderr(&out).contains("is a Codex store: the what-if is about the harness's retention"),
        "{}",
        stderr(&out)
    );
}

/// A rollout as Codex 0.15x writes it: `ordinal`s, a `world_state` line, the prompt only as a
/// completed `UserMessage` item, the `exec` tool's output as content blocks, and its failure
/// said by the completed item (after the output for one call, before it for the other).
fn newest_rollout() -> String {
    let at = |s: u32| format!("2026-11-20T09:00:{s:02}.000Z");
    let ide = "# Context from my IDE setup:\n\n## Open tabs:\n- package.json\n\n## My request for Codex:\nWhy does lint fail?";
    let lines = [
        json!({"timestamp": at(0), "ordinal": 0, "type": "session_meta", "payload": {"id": THREAD, "cwd": "/home/ana/web", "originator": "codex_vscode", "cli_version": "0.154.0", "model_provider": "openai"}}),
        json!({"timestamp": at(0), "ordinal": 1, "type": "world_state", "payload": {"cwd": "/home/ana/web"}}),
        json!({"timestamp": at(0), "ordinal": 2, "type": "turn_context", "payload": {"model": "gpt-5.3-codex"}}),
        json!({"timestamp": at(1), "ordinal": 3, "type": "event_msg", "payload": {"type": "item_completed", "thread_id": THREAD, "turn_id": "t1",
            "item": {"type": "UserMessage", "id": "u1", "content": [{"type": "text", "text": ide, "text_elements": []}]}}}),
        json!({"timestamp": at(2), "ordinal": 4, "type": "response_item", "payload": {"type": "custom_tool_call", "name": "exec", "call_id": "call_lint", "input": "await sh('npm run lint')"}}),
        json!({"timestamp": at(3), "ordinal": 5, "type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "call_lint",
            "output": [{"type": "input_text", "text": "npm ERR! missing script: lint"}]}}),
        json!({"timestamp": at(3), "ordinal": 6, "type": "event_msg", "payload": {"type": "item_completed", "thread_id": THREAD, "turn_id": "t1",
            "item": {"type": "CommandExecution", "id": "call_lint", "status": "failed", "exitCode": 7}}}),
        json!({"timestamp": at(4), "ordinal": 7, "type": "response_item", "payload": {"type": "custom_tool_call", "name": "exec", "call_id": "call_ls", "input": "await sh('ls')"}}),
        json!({"timestamp": at(5), "ordinal": 8, "type": "event_msg", "payload": {"type": "item_completed", "thread_id": THREAD, "turn_id": "t1",
            "item": {"type": "DynamicToolCall", "id": "call_ls", "status": "failed", "success": false}}}),
        json!({"timestamp": at(5), "ordinal": 9, "type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "call_ls",
            "output": [{"type": "input_text", "text": "ls: cannot access"}]}}),
        json!({"timestamp": at(6), "ordinal": 10, "type": "token_usage_record", "payload": {"input_tokens": 900, "output_tokens": 40}}),
        json!({"timestamp": at(6), "ordinal": 11, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "There is no lint script."}]}}),
        json!({"timestamp": at(7), "ordinal": 12, "type": "event_msg", "payload": {"type": "item_completed", "thread_id": THREAD, "turn_id": "t1",
            "item": {"type": "AgentMessage", "id": "a1", "content": [{"type": "Text", "text": "There is no lint script."}]}}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn the_newest_rollouts_prompts_and_failed_calls_are_read() {
    let store = tempfile::tempdir().unwrap();
    let day = store.path().join("sessions/2026/11/20");
    std::fs::create_dir_all(&day).unwrap();
    let name = format!("rollout-2026-11-20T09-00-00-{THREAD}.jsonl");
    std::fs::write(day.join(name), newest_rollout()).unwrap();
    let dir = store.path().join("sessions");

    let show = mctl_json(&dir, &["show", THREAD]);
    let run = &show["run"];
    assert_eq!(run["title"], "Why does lint fail?");
    assert_eq!(run["dispatches"], 1, "{run}");
    assert_eq!(run["status"], "done");
    assert_eq!(
        run["warnings"], 0,
        "world_state and token_usage_record are known"
    );
    let users: Vec<&serde_json::Value> = (show["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == "user_message")
        .collect();
    assert_eq!(users.len(), 1);
    let text = users[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Why does lint fail?\n\n# Context from my IDE setup"),
        "the preview shows the request first: {text}"
    );
    let results = show["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert!(
        results.iter().all(|r| r["ok"] == false),
        "failed after and before the output: {results:?}"
    );
    let failed_rows = (show["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == "tool_call_finished" && e["result"]["ok"] == false)
        .count();
    assert_eq!(failed_rows, 2, "the timeline shows both as failed");
    assert_eq!(
        stdout(&mctl(&dir, &["full", THREAD, "call_lint"])),
        "npm ERR! missing script: lint"
    );

    let out = mctl(&dir, &["search", "missing script", "--json"]);
    let hits: Vec<serde_json::Value> = (stdout(&out).lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|h: &serde_json::Value| h["kind"] == "result")
        .collect();
    assert_eq!(hits.len(), 1, "a content-block output is searched");
    let out = mctl(&dir, &["search", "lint fail", "--json"]);
    assert!(
        stdout(&out).contains("\"kind\":\"message\""),
        "a completed user message is searched: {}",
        stdout(&out)
    );
}
