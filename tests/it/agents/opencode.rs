//! opencode's sessions read as runs: the real data folder in `../shared/data/agents/opencode`
//! (its database: two sessions, one migrated from the JSON era) with its counts pinned, and a
//! hand-built store of the shapes no real file holds (an output opencode cut and saved to
//! `tool-output/`, one its sweep took, a failed call, a child session, a session only in the
//! JSON tree), built from opencode's source rules.

use crate::support::{mctl, mctl_json, set_mtime, stdout, OLD_MS};
use serde_json::{json, Value};
use std::path::Path;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
            let mut perms = std::fs::metadata(&dest).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&dest, perms).unwrap();
            set_mtime(&dest, OLD_MS);
        }
    }
}

/// Per real session: prompts, tool calls, failed results, input (cache reads and writes in),
/// cache reads, output, status, title.
const REAL: &[(&str, [u64; 6], &str, &str)] = &[
    (
        "ses_3a8ef361affe3Qr05TZvm9q4uU",
        [1, 9, 0, 74_662, 35_648, 2_241],
        "done",
        "Htmx Demo: 现有首页重写与引入实现",
    ),
    (
        "ses_3520e0b48ffeYkk02CKdPV1gUd",
        [1, 1, 0, 29_929, 11_136, 548],
        "done",
        "Filecoin 价格历史查询与链接分析",
    ),
];

#[test]
fn the_real_opencode_store_reads_with_its_counts() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/agents/opencode/linchen1987__opencode-project-manager__opencode");
    if !shared.is_dir() {
        eprintln!(
            "{} is absent: the real opencode store is not read here; the hand-built store below \
             covers the same formats",
            shared.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("opencode");
    copy_tree(&shared, &root);
    let runs = mctl_json(&root, &["runs"]);
    assert_eq!(runs.as_array().unwrap().len(), REAL.len(), "{runs}");
    for (id, want, status, title) in REAL {
        let show = mctl_json(&root, &["show", id]);
        let run = &show["run"];
        assert_eq!(run["source"], "opencode", "{id}");
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
        assert_eq!(got, *want, "{id}");
        assert_eq!(
            (run["status"].as_str(), run["title"].as_str()),
            (Some(*status), Some(*title)),
            "{id}"
        );
        assert_eq!(run["model"], "glm-5");
        assert_eq!(
            run["costUsd"], 0.0,
            "{id}: opencode recorded its cost, 0 here"
        );
        assert_eq!(
            (run["problems"].as_u64(), run["warnings"].as_u64()),
            (Some(0), Some(0)),
            "{id}"
        );
    }
}

const SCHEMA: &str = "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
 directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);";

pub(super) const MAIN: &str = "ses_3000000000001aaaaaaaaaaaaa";
const CHILD: &str = "ses_2fffffffffffebbbbbbbbbbbbb";

fn tool(call: &str, status: &str, output: &str, metadata: Value) -> Value {
    let mut state = json!({"status": status, "input": {"command": "cargo test"}, "title": "Run the tests",
        "metadata": metadata, "time": {"start": 1_772_444_842_000i64, "end": 1_772_444_850_000i64}});
    match status {
        "error" => state["error"] = json!(output),
        _ => state["output"] = json!(output),
    }
    json!({"type": "tool", "callID": call, "tool": "bash", "state": state})
}

/// A data folder with a database of two sessions (one the other's child) and a JSON-era
/// session, and the saved output of one cut call.
pub(super) fn store(root: &Path) {
    let saved = root.join("tool-output");
    std::fs::create_dir_all(&saved).unwrap();
    let full: String = (1..=3000).map(|i| format!("test {i} ok\n")).collect();
    let kept = saved.join("tool_cadf21750001AAAAAAAAAAAAAA");
    std::fs::write(&kept, &full).unwrap();
    let stub = |path: &Path| {
        format!("test 1 ok\n\n...2,950 lines truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: {}\nUse Grep to search the full content or Read with offset/limit to view specific sections.", path.display())
    };
    let conn = rusqlite::Connection::open(root.join("opencode.db")).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    let session = |id: &str, parent: Option<&str>, title: &str| {
        conn.execute(
            "INSERT INTO session VALUES (?1, 'p', ?2, 'slug', '/home/ana/app', ?3, '1.2.15', 1772444841143, 1772444863151)",
            rusqlite::params![id, parent, title],
        )
        .unwrap();
    };
    session(MAIN, None, "Fix the tests");
    session(CHILD, Some(MAIN), "Find the flaky test (@explore subagent)");
    let message = |sid: &str, mid: &str, t: i64, data: Value, parts: Vec<Value>| {
        conn.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![mid, sid, t, data.to_string()],
        )
        .unwrap();
        for (i, p) in parts.into_iter().enumerate() {
            conn.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![format!("prt_{mid}_{i:02}"), mid, sid, t, p.to_string()],
            )
            .unwrap();
        }
    };
    let step = |input: u64, read: u64, output: u64, cost: f64| {
        json!({"type": "step-finish", "reason": "stop", "cost": cost,
            "tokens": {"total": input + read + output, "input": input, "output": output, "reasoning": 0, "cache": {"read": read, "write": 0}}})
    };
    let assistant = |finish: &str| {
        json!({"role": "assistant", "time": {"created": 1772444842000i64, "completed": 1772444860000i64},
        "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "cost": 0.02, "finish": finish,
        "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}})
    };
    message(
        MAIN,
        "msg_a1",
        1772444841172,
        json!({"role": "user", "time": {"created": 1772444841172i64}}),
        vec![
            json!({"type": "text", "text": "Fix the failing tests"}),
            json!({"type": "text", "text": "<file contents>", "synthetic": true}),
        ],
    );
    message(
        MAIN,
        "msg_a2",
        1772444842000,
        assistant("tool-calls"),
        vec![
            json!({"type": "step-start"}),
            json!({"type": "reasoning", "text": "Run them first."}),
            tool(
                "call_kept",
                "completed",
                &stub(&kept),
                json!({"truncated": true, "outputPath": kept.display().to_string()}),
            ),
            tool(
                "call_swept",
                "completed",
                &stub(&saved.join("tool_swept")),
                json!({"truncated": true, "outputPath": saved.join("tool_swept").display().to_string()}),
            ),
            tool("call_failed", "error", "Tool execution aborted", json!({})),
            {
                let mut pruned = tool(
                    "call_pruned",
                    "completed",
                    "old output",
                    json!({"truncated": false}),
                );
                pruned["state"]["time"]["compacted"] = json!(1_772_444_900_000i64);
                pruned
            },
            step(1000, 4000, 50, 0.015),
            step(200, 5000, 30, 0.005),
        ],
    );
    message(
        MAIN,
        "msg_a3",
        1772444861000,
        assistant("stop"),
        vec![
            json!({"type": "text", "text": "All tests pass."}),
            step(100, 100, 10, 0.001),
        ],
    );
    message(
        CHILD,
        "msg_c1",
        1772444843000,
        json!({"role": "user", "time": {"created": 1772444843000i64}}),
        vec![json!({"type": "text", "text": "Find the flaky test"})],
    );
    message(
        CHILD,
        "msg_c2",
        1772444844000,
        assistant("stop"),
        vec![
            json!({"type": "text", "text": "test 7"}),
            step(10, 0, 5, 0.0001),
        ],
    );
    drop(conn);
    // A session of the JSON era that the database never took in.
    let storage = root.join("storage");
    let old = "ses_4000000000001ccccccccccccc";
    std::fs::create_dir_all(storage.join("session/p")).unwrap();
    std::fs::write(storage.join(format!("session/p/{old}.json")), json!({"id": old, "projectID": "p", "directory": "/home/ana/old",
        "title": "Old work", "version": "1.1.60", "time": {"created": 1760000000000i64, "updated": 1760000100000i64}}).to_string()).unwrap();
    std::fs::create_dir_all(storage.join(format!("message/{old}"))).unwrap();
    std::fs::write(storage.join(format!("message/{old}/msg_o1.json")), json!({"id": "msg_o1", "sessionID": old, "role": "user", "time": {"created": 1760000000001i64}}).to_string()).unwrap();
    std::fs::create_dir_all(storage.join("part/msg_o1")).unwrap();
    std::fs::write(
        storage.join("part/msg_o1/prt_1.json"),
        json!({"id": "prt_1", "messageID": "msg_o1", "type": "text", "text": "What changed?"})
            .to_string(),
    )
    .unwrap();
    for p in [root.join("opencode.db"), kept] {
        set_mtime(&p, OLD_MS);
    }
}

#[test]
fn a_hand_built_store_reads_its_sessions_saved_outputs_and_children() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("opencode");
    store(&root);
    let runs = mctl_json(&root, &["runs"]);
    let ids: Vec<&str> = (runs.as_array().unwrap().iter())
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.len(),
        3,
        "two in the database, one in the JSON tree: {ids:?}"
    );
    let show = mctl_json(&root, &["show", MAIN]);
    let run = &show["run"];
    assert_eq!(
        (
            run["source"].as_str(),
            run["title"].as_str(),
            run["status"].as_str()
        ),
        (Some("opencode"), Some("Fix the tests"), Some("done"))
    );
    assert_eq!(run["dispatches"], 1, "the synthetic part is no prompt");
    // Every step's tokens, not the message's own (its last step's only).
    assert_eq!(
        (
            run["inputTokens"].as_u64(),
            run["cacheReadTokens"].as_u64(),
            run["outputTokens"].as_u64()
        ),
        (Some(10_400), Some(9_100), Some(90))
    );
    assert!(
        (run["costUsd"].as_f64().unwrap() - 0.021).abs() < 1e-12,
        "recorded, summed over steps"
    );
    assert_eq!(run["costEstimated"], false);
    let result = |id: &str| {
        (show["results"].as_array().unwrap().iter())
            .find(|r| r["toolCallId"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (
            result("call_kept")["state"].as_str(),
            result("call_kept")["lines"].as_u64()
        ),
        (Some("retained"), Some(3000))
    );
    assert_eq!(
        result("call_swept")["state"],
        "swept",
        "taken by opencode's sweep"
    );
    assert_eq!(result("call_swept")["valueId"], "tool_swept");
    assert_eq!(
        result("call_swept")["lines"],
        2951,
        "the preview's line and the 2,950 its cut text says it left out"
    );
    assert_eq!(result("call_failed")["ok"], false);
    let pruned: Vec<&Value> = (show["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == "output_pruned")
        .collect();
    assert_eq!(
        pruned.len(),
        1,
        "a pruned output is marked where it was pruned"
    );
    assert_eq!(pruned[0]["toolCallId"], "call_pruned");
    assert_eq!(
        stdout(&mctl(&root, &["full", MAIN, "call_pruned"])),
        "old output",
        "kept whole"
    );
    assert_eq!(
        stdout(&mctl(&root, &["full", MAIN, "call_kept"]))
            .lines()
            .count(),
        3000
    );
    assert!(
        stdout(&mctl(&root, &["stub", MAIN, "call_kept"])).contains("...2,950 lines truncated...")
    );
    let child = (runs.as_array().unwrap().iter())
        .find(|r| r["id"] == CHILD)
        .unwrap();
    assert_eq!(child["parentId"], MAIN);
    let old = mctl_json(&root, &["show", "ses_4000000000001ccccccccccccc"]);
    assert_eq!(old["run"]["title"], "Old work");
    assert_eq!(old["run"]["dispatches"], 1);
    let out = mctl(&root, &["search", "flaky", "--json"]);
    assert!(stdout(&out).contains(CHILD), "{}", stdout(&out));
}
