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
