//! What a run cost when its store records tokens but no cost: estimated from the price table
//! and said to be an estimate, unknown (never $0) for a model with no price, and a user's own
//! prices over the shipped ones.

use super::Session;
use crate::support::{mctl, mctl_command, mctl_json, stdout};
use serde_json::{json, Value};

const SESSION: &str = "c0575e55-0000-4000-8000-000000000001";

/// A session of two calls to `model`: 1,000 fresh input, 2,000 written to the cache (500 of
/// them for an hour), 50,000 read from it and 300 output; then 10 + 40,000 read and 20 out.
fn session(dir: &std::path::Path, model: &str) {
    let mut s = Session::new(&dir.join("-home-ana-app"), SESSION);
    s.prompt("Explain the build");
    for (id, usage) in [
        (
            "msg_1",
            json!({"input_tokens": 1000, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 50000, "output_tokens": 300,
            "cache_creation": {"ephemeral_5m_input_tokens": 1500, "ephemeral_1h_input_tokens": 500}}),
        ),
        (
            "msg_2",
            json!({"input_tokens": 10, "cache_read_input_tokens": 40000, "output_tokens": 20}),
        ),
    ] {
        s.line(json!({"type": "assistant", "uuid": id, "sessionId": SESSION, "timestamp": "2026-04-02T10:00:05.000Z",
            "message": {"id": id, "role": "assistant", "model": model, "usage": usage,
                "content": [{"type": "text", "text": "It links twice."}]}}));
    }
    s.write();
}

fn run_of(dir: &std::path::Path) -> Value {
    mctl_json(dir, &["show", SESSION])["run"].clone()
}

#[test]
fn a_priced_model_gets_an_estimate_with_its_tokens_split() {
    let store = tempfile::tempdir().unwrap();
    session(store.path(), "claude-sonnet-4-5-20250929");
    let run = run_of(store.path());
    assert_eq!(run["inputTokens"], 1000 + 2000 + 50000 + 10 + 40000);
    assert_eq!(
        (
            &run["uncachedInputTokens"],
            &run["cacheWriteTokens"],
            &run["cacheReadTokens"]
        ),
        (&json!(1010), &json!(2000), &json!(90000))
    );
    assert!(run["reasoningTokens"].is_null(), "Claude Code does not say");
    // $3 fresh, $3.75 a 5-minute write, $6 an hour's write, $0.30 a read, $15 out, per million.
    let want = (1010.0 * 3.0 + 1500.0 * 3.75 + 500.0 * 6.0 + 90000.0 * 0.3 + 320.0 * 15.0) / 1e6;
    let cost = run["costUsd"].as_f64().unwrap();
    assert!((cost - want).abs() < 1e-9, "{cost} vs {want}");
    assert_eq!(run["costEstimated"], true);
    let text = stdout(&mctl(store.path(), &["show", SESSION]));
    // One rule for a cost everywhere (tests/fixtures/format/cases.json): ≈$0.04 here.
    let shown = mission_control::model::cost_text(Some(want), true);
    assert_eq!(shown, format!("≈${want:.2}"));
    assert!(text.contains(&format!("cost {shown}")), "{text}");
    assert!(
        text.contains("(1010 fresh, 2000 cache write, 90000 cache read)"),
        "{text}"
    );
    let list = stdout(&mctl(store.path(), &["runs"]));
    assert!(list.contains(&shown), "{list}");
}

#[test]
fn a_model_with_no_price_has_an_unknown_cost_never_zero() {
    let store = tempfile::tempdir().unwrap();
    session(store.path(), "local-llama-70b");
    let run = run_of(store.path());
    assert!(run["costUsd"].is_null(), "{run}");
    assert!(stdout(&mctl(store.path(), &["show", SESSION])).contains("cost —"));
    assert!(!stdout(&mctl(store.path(), &["runs"])).contains("$0.00"));
}

#[test]
fn a_users_price_file_wins_and_a_broken_one_is_said() {
    let store = tempfile::tempdir().unwrap();
    session(store.path(), "local-llama-70b");
    let config = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("prices.json"),
        r#"{"models": {"local-llama": {"input": 1, "output": 2}}}"#,
    )
    .unwrap();
    let out = mctl_command()
        .env("MCTL_CONFIG_DIR", config.path())
        .args([
            "--runs-dir",
            store.path().to_str().unwrap(),
            "show",
            SESSION,
            "--json",
        ])
        .output()
        .unwrap();
    let show: Value = serde_json::from_slice(&out.stdout).unwrap();
    // No cache rates given: cached input at the input rate (an hour's write at twice it).
    let want = (92_510.0 * 1.0 + 500.0 * 2.0 + 320.0 * 2.0) / 1e6;
    let cost = show["run"]["costUsd"].as_f64().unwrap();
    assert!((cost - want).abs() < 1e-9, "{cost} vs {want}");

    std::fs::write(config.path().join("prices.json"), "{not json").unwrap();
    let out = mctl_command()
        .env("MCTL_CONFIG_DIR", config.path())
        .args([
            "--runs-dir",
            store.path().to_str().unwrap(),
            "runs",
            "--no-index",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("price file left out") && err.contains("prices.json"),
        "{err}"
    );
}

#[test]
fn a_codex_token_event_said_twice_counts_once_and_is_priced_by_its_turns_model() {
    let store = tempfile::tempdir().unwrap();
    let day = store.path().join("sessions/2026/07/01");
    std::fs::create_dir_all(&day).unwrap();
    let thread = "019e1625-789d-76c0-80ab-3724b5ddb799";
    let count = |input: u64, cached: u64, out: u64, total: [u64; 3]| {
        json!({"timestamp": "2026-07-01T10:00:02.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": input, "cached_input_tokens": cached, "output_tokens": out, "reasoning_output_tokens": 4},
            "total_token_usage": {"input_tokens": total[0], "cached_input_tokens": total[1], "output_tokens": total[2]}}}})
    };
    let lines = [
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": thread, "cwd": "/w"}}),
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}}),
        json!({"timestamp": "2026-07-01T10:00:01.000Z", "type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}),
        count(10_000, 8_000, 500, [10_000, 8_000, 500]),
        count(10_000, 8_000, 500, [10_000, 8_000, 500]),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        day.join(format!("rollout-2026-07-01T10-00-00-{thread}.jsonl")),
        text,
    )
    .unwrap();
    let run = mctl_json(&store.path().join("sessions"), &["show", thread])["run"].clone();
    assert_eq!(
        (run["inputTokens"].as_u64(), run["outputTokens"].as_u64()),
        (Some(10_000), Some(500))
    );
    assert_eq!(
        (
            run["cacheReadTokens"].as_u64(),
            run["reasoningTokens"].as_u64()
        ),
        (Some(8_000), Some(4))
    );
    // 2,000 × $1.25 + 8,000 × $0.125 + 500 × $10, per million.
    assert!(
        (run["costUsd"].as_f64().unwrap() - 0.0085).abs() < 1e-12,
        "{run}"
    );
}

#[test]
fn a_damaged_usage_is_left_out_with_a_warning_and_its_message_kept() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.prompt("Count");
    for (id, usage) in [
        ("msg_1", json!({"input_tokens": 100, "output_tokens": 10})),
        ("msg_2", json!({"input_tokens": 100, "output_tokens": -5})),
        ("msg_3", json!({"input_tokens": "lots", "output_tokens": 1})),
        (
            "msg_4",
            json!({"input_tokens": 10_000_000_000_000u64, "output_tokens": 1}),
        ),
    ] {
        s.line(json!({"type": "assistant", "uuid": id, "sessionId": SESSION, "timestamp": "2026-04-02T10:00:05.000Z",
            "message": {"id": id, "role": "assistant", "model": "claude-sonnet-4-5-20250929", "usage": usage,
                "content": [{"type": "text", "text": format!("answer {id}")}]}}));
    }
    s.write();
    let show = mctl_json(store.path(), &["show", SESSION]);
    let run = &show["run"];
    assert_eq!(
        (run["inputTokens"].as_u64(), run["outputTokens"].as_u64()),
        (Some(100), Some(10))
    );
    assert_eq!(run["warnings"], 3, "{:?}", show["problems"]);
    let answers = (show["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == "assistant_message")
        .count();
    assert_eq!(answers, 4, "every message is kept");
    assert!(
        (show["problems"].as_array().unwrap().iter()).all(|p| p["kind"] == "bad-usage"),
        "{:?}",
        show["problems"]
    );
}

#[test]
fn a_session_says_its_figures_with_its_subagents_and_per_model() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    session(store.path(), "claude-sonnet-4-5-20250929");
    // A third call of the session, to another model.
    let path = project.join(format!("{SESSION}.jsonl"));
    let line = json!({"type": "assistant", "uuid": "h1", "sessionId": SESSION, "timestamp": "2026-04-02T10:00:09.000Z",
        "message": {"id": "msg_h", "role": "assistant", "model": "claude-haiku-4-5-20251001",
            "usage": {"input_tokens": 1000, "output_tokens": 100}, "content": [{"type": "text", "text": "Short."}]}});
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{line}\n"));
    std::fs::write(&path, text).unwrap();
    crate::support::set_mtime(&path, crate::support::OLD_MS);
    // Its subagent spent 500 in and 50 out on the session's model.
    let agents = project.join(SESSION).join("subagents");
    std::fs::create_dir_all(&agents).unwrap();
    let mut a = Session::new(&agents, "agent-a1");
    a.line(json!({"type": "user", "uuid": "a1-1", "isSidechain": true, "agentId": "a1", "sessionId": SESSION,
        "message": {"role": "user", "content": "Look it up"}}));
    a.line(json!({"type": "assistant", "uuid": "a1-2", "isSidechain": true, "agentId": "a1", "sessionId": SESSION,
        "timestamp": "2026-04-02T10:00:07.000Z", "message": {"id": "msg_a1", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
            "usage": {"input_tokens": 500, "output_tokens": 50}, "content": [{"type": "text", "text": "Found."}]}}));
    a.write();

    let listed = mctl_json(store.path(), &["runs"]);
    let parent = (listed.as_array().unwrap().iter())
        .find(|r| r["id"] == SESSION)
        .unwrap();
    let own = parent["inputTokens"].as_u64().unwrap() + parent["outputTokens"].as_u64().unwrap();
    assert_eq!(parent["tokensWithChildren"], own + 550, "{parent}");
    let with = parent["costWithChildrenUsd"].as_f64().unwrap();
    let child_cost = (500.0 * 3.0 + 50.0 * 15.0) / 1e6;
    assert!((with - parent["costUsd"].as_f64().unwrap() - child_cost).abs() < 1e-9);
    let show = mctl_json(store.path(), &["show", SESSION]);
    assert_eq!(
        show["run"]["tokensWithChildren"], parent["tokensWithChildren"],
        "show agrees"
    );
    let models: Vec<&str> = (show["run"]["models"].as_array().unwrap().iter())
        .map(|m| m["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"]
    );
    let haiku = &show["run"]["models"][1];
    assert_eq!(
        (
            haiku["inputTokens"].as_u64(),
            haiku["outputTokens"].as_u64()
        ),
        (Some(1000), Some(100))
    );
    let text = stdout(&mctl(store.path(), &["show", SESSION]));
    assert!(text.contains("with subagents"), "{text}");
    assert!(text.contains("claude-haiku-4-5-20251001"), "{text}");
}

#[test]
fn a_rollout_resumed_three_times_ends_at_its_agents_own_totals() {
    let store = tempfile::tempdir().unwrap();
    let day = store.path().join("sessions/2026/07/02");
    std::fs::create_dir_all(&day).unwrap();
    let thread = "019e1625-789d-76c0-80ab-3724b5dd0003";
    let meta = json!({"timestamp": "2026-07-02T10:00:00.000Z", "type": "session_meta", "payload": {"id": thread, "cwd": "/w"}});
    let turn = json!({"timestamp": "2026-07-02T10:00:00.000Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}});
    let count = |last: u64, total: u64| {
        json!({"timestamp": "2026-07-02T10:00:02.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": last, "output_tokens": 10},
            "total_token_usage": {"input_tokens": total, "output_tokens": total / 10}}}})
    };
    // Each resume writes its session_meta again and says the totals so far once more before
    // the next call.
    let mut lines = vec![meta.clone(), turn.clone(), count(100, 100)];
    for total in [200u64, 300, 400] {
        lines.extend([
            meta.clone(),
            turn.clone(),
            count(100, total - 100),
            count(100, total),
        ]);
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        day.join(format!("rollout-2026-07-02T10-00-00-{thread}.jsonl")),
        text,
    )
    .unwrap();
    let run = mctl_json(&store.path().join("sessions"), &["show", thread])["run"].clone();
    assert_eq!(
        (run["inputTokens"].as_u64(), run["outputTokens"].as_u64()),
        (Some(400), Some(40)),
        "the last totals, not every event summed: {run}"
    );
}

#[test]
fn a_streamed_claude_message_counts_once_at_its_largest() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.prompt("Stream it");
    // One API message written as three lines, one per block; the last holds the final output.
    for (i, (out, block)) in [
        (1, json!({"type": "thinking", "thinking": "hm"})),
        (1, json!({"type": "text", "text": "Part one."})),
        (
            250,
            json!({"type": "tool_use", "id": "toolu_S", "name": "Read", "input": {}}),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        s.line(json!({"type": "assistant", "uuid": format!("s{i}"), "sessionId": SESSION, "requestId": "req_1",
            "timestamp": "2026-04-02T10:00:05.000Z",
            "message": {"id": "msg_stream", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                "usage": {"input_tokens": 3, "cache_read_input_tokens": 20000, "output_tokens": out},
                "content": [block]}}));
    }
    s.write();
    let run = mctl_json(store.path(), &["show", SESSION])["run"].clone();
    assert_eq!(
        (
            run["inputTokens"].as_u64(),
            run["cacheReadTokens"].as_u64(),
            run["outputTokens"].as_u64()
        ),
        (Some(20_003), Some(20_000), Some(250)),
        "{run}"
    );
}
