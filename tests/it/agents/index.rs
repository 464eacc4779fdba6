//! The index over another agent's store: a listing, a GC plan, the storage figures and the
//! what-if answer as without it, and a warm listing reads only the runs whose files (or whose
//! links in the layout) changed.

use super::subagents::{session_with_side_conversations, SESSION};
use super::{agent_file, stub};
use crate::index::{age, append, assert_same};
use crate::support::OLD_MS;
use serde_json::json;

#[test]
fn a_claude_code_store_is_read_again_only_where_it_changed() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = store.path();
    let project = root.join("-home-ana-app");
    // A session with two side conversations in its file, a value, and a subagent's own file.
    let mut s = session_with_side_conversations(&project);
    let values = s.tool_results();
    let saved =
        format!("/home/ana/.claude/projects/-home-ana-app/{SESSION}/tool-results/toolu_L.txt");
    s.call("toolu_L", "Bash", json!({"command": "make"}))
        .result("toolu_L", &stub("40KB", &saved, "head"), None);
    s.write();
    std::fs::write(values.join("toolu_L.txt"), "head\n".repeat(8_000)).unwrap();
    let agents = project.join(SESSION).join("subagents");
    agent_file(&agents, "a11", SESSION, "Survey the code");

    let mut clock = OLD_MS;
    let mut step = |what: &str, change: &dyn Fn(), reads: usize| {
        change();
        clock += 60_000;
        age(root, clock);
        let got = assert_same(root, cache.path(), what);
        assert_eq!(got, reads, "runs read after: {what}");
        assert_eq!(assert_same(root, cache.path(), what), 0, "again: {what}");
    };
    step("the first listing", &|| {}, 4);
    // The session's file holds its side conversations: all three are read again.
    let line = json!({"type": "user", "uuid": "m9", "sessionId": SESSION,
        "message": {"role": "user", "content": "And the docs?"}});
    step(
        "a prompt appended",
        &|| append(&s.path, &format!("{line}\n")),
        3,
    );
    // The session's folder holds its subagents' values too: each of them is read again.
    step(
        "a value file added",
        &|| std::fs::write(values.join("toolu_M.txt"), "x\n".repeat(9_000)).unwrap(),
        4,
    );
    // The subagent's file did not change, but the layout now names the call that started it.
    let progress = json!({"type": "progress", "parentToolUseID": "toolu_T9", "sessionId": SESSION,
        "data": {"type": "agent_progress", "agentId": "a11"}});
    step(
        "the subagent linked to its call",
        &|| append(&s.path, &format!("{progress}\n")),
        4,
    );
    step(
        "the subagent's file removed",
        &|| std::fs::remove_file(agents.join("agent-a11.jsonl")).unwrap(),
        0,
    );
}

fn rollout_line(kind: &str, payload: serde_json::Value) -> String {
    format!(
        "{}\n",
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "type": kind, "payload": payload})
    )
}

#[test]
fn a_codex_store_is_read_again_only_where_it_changed() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = store.path();
    let day = root.join("2026/07/01");
    std::fs::create_dir_all(&day).unwrap();
    let rollout = |thread: &str, prompt: &str| -> std::path::PathBuf {
        let path = day.join(format!("rollout-2026-07-01T10-00-00-{thread}.jsonl"));
        let text = rollout_line("session_meta", json!({"id": thread, "cwd": "/w"}))
            + &rollout_line(
                "event_msg",
                json!({"type": "user_message", "message": prompt}),
            );
        std::fs::write(&path, text).unwrap();
        path
    };
    let first = rollout("019e1625-789d-76c0-80ab-3724b5ddb799", "one");
    rollout("019e1695-0522-7c83-8b39-0dd379793f80", "two");
    let mut clock = OLD_MS;
    let mut step = |what: &str, change: &dyn Fn(), reads: usize| {
        change();
        clock += 60_000;
        age(root, clock);
        assert_eq!(assert_same(root, cache.path(), what), reads, "{what}");
        assert_eq!(assert_same(root, cache.path(), what), 0, "again: {what}");
    };
    step("the first listing", &|| {}, 2);
    let answer = json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "Done"}]});
    step(
        "an answer appended",
        &|| append(&first, &rollout_line("response_item", answer.clone())),
        1,
    );
}

#[test]
fn an_opencode_json_era_session_is_read_again_when_its_parts_or_messages_change() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = store.path();
    super::opencode::store(root);
    let storage = root.join("storage");
    let old = "ses_4000000000001ccccccccccccc";
    let mut clock = OLD_MS;
    let mut step = |what: &str, change: &dyn Fn(), reads: usize| {
        change();
        clock += 60_000;
        age(root, clock);
        let got = assert_same(root, cache.path(), what);
        assert_eq!(got, reads, "runs read after: {what}");
        assert_eq!(assert_same(root, cache.path(), what), 0, "again: {what}");
    };
    step("the first listing", &|| {}, 3);
    // A part added to a message the session had: its message folder does not change.
    let part = json!({"id": "prt_2", "messageID": "msg_o1", "type": "text", "text": "And why?"});
    step(
        "a part added",
        &|| std::fs::write(storage.join("part/msg_o1/prt_2.json"), part.to_string()).unwrap(),
        1,
    );
    // A message rewritten in place (its turn ended): no folder changes.
    let message = json!({"id": "msg_o1", "sessionID": old, "role": "user",
        "time": {"created": 1760000000001i64, "completed": 1760000000900i64}});
    step(
        "a message rewritten in place",
        &|| {
            let file = storage.join(format!("message/{old}/msg_o1.json"));
            std::fs::write(file, message.to_string()).unwrap()
        },
        1,
    );
    step("nothing", &|| {}, 0);
}

#[test]
fn an_opencode_saved_file_reads_again_only_the_sessions_of_its_time() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = store.path();
    super::opencode::store(root);
    let mut clock = OLD_MS;
    let mut step = |what: &str, change: &dyn Fn(), reads: usize| {
        change();
        clock += 60_000;
        age(root, clock);
        let got = assert_same(root, cache.path(), what);
        assert_eq!(got, reads, "runs read after: {what}");
        assert_eq!(assert_same(root, cache.path(), what), 0, "again: {what}");
    };
    step("the first listing", &|| {}, 3);
    // Saved at a time no session's span holds (January 2025, and no time 795 days from it
    // either: an id holds its time's low 36 bits): no session of this store is read again.
    let other = format!(
        "tool_{:012x}QwErTyUiOpAsDf",
        (1_737_986_918_400u64 << 12 | 1) & ((1 << 48) - 1)
    );
    step(
        "a file saved at another time",
        &|| std::fs::write(root.join("tool-output").join(&other), "x").unwrap(),
        0,
    );
    // The session's own file swept: it reads as swept, and so is read again, with the two
    // sessions whose spans hold the same time (the child, and the JSON-era session, created
    // before it and last changed after it).
    step(
        "its saved file deleted",
        &|| std::fs::remove_file(root.join("tool-output/tool_cadf21750001AAAAAAAAAAAAAA")).unwrap(),
        3,
    );
}
