//! The contract every source keeps: the same tests over one hand-built store per kind (the
//! harness's runs directory, Claude Code, Codex). Listing, detail, stub and full text, peek,
//! search, GC plan and apply, watching and the index answer alike for every kind, each by its
//! own rule for what was kept out of context. Adding a source means adding its store to
//! [`stores`] (docs/architecture.md, "How to add an agent").

use crate::agents::{stub, Session};
use crate::support::{mctl, mctl_command, mctl_json, stdout, RunFile, OLD_MS};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The word every store's run holds in its prompt and in its big output.
const NEEDLE: &str = "zebrafish";

/// One store, with what its run must answer.
struct Store {
    /// Which store this is, in a failure's message.
    kind: &'static str,
    /// The kind the store is told to be (`source` of its runs).
    source: &'static str,
    _dir: tempfile::TempDir,
    /// What `--runs-dir` names.
    root: PathBuf,
    run: String,
    /// The result kept out of the model's context (retained, persisted or cut in place).
    call: String,
    /// Its full text as the store has it.
    full: String,
    /// Whether the model got a stub in its place (a cut-in-place output has none).
    stubbed: bool,
    /// The value file GC may take, relative to `root`; `None` when the store keeps none.
    value: Option<String>,
    /// Writes one more run into the store; its id.
    add_run: fn(&Path) -> String,
}

fn big_output() -> String {
    (1..=900)
        .map(|i| format!("line {i}: compiling module {i} {NEEDLE}\n"))
        .collect()
}

fn harness() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let full = big_output();
    RunFile::new(&root, "run_contract")
        .user(&format!("Build it and look for the {NEEDLE}"))
        .tool("call_big", "bash", &full, true)
        .done()
        .write();
    let value = format!(
        "run_contract.values/{}.txt",
        mission_control::retained::value_id("call_big")
    );
    set_tree_old(&root);
    fn add_run(root: &Path) -> String {
        RunFile::new(root, "run_added").user("more").done().write();
        "run_added".into()
    }
    Store {
        kind: "klide",
        source: "klide",
        _dir: dir,
        root,
        run: "run_contract".into(),
        call: "call_big".into(),
        full,
        stubbed: true,
        value: Some(value),
        add_run,
    }
}

const SESSION: &str = "5e55c0de-0000-4000-8000-00000000c0de";

fn claude() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let project = root.join("-home-ana-app");
    let mut s = Session::new(&project, SESSION);
    let values = s.tool_results();
    let full = big_output();
    let saved =
        format!("/home/ana/.claude/projects/-home-ana-app/{SESSION}/tool-results/toolu_B.txt");
    s.prompt(&format!("Build it and look for the {NEEDLE}"))
        .call("toolu_B", "Bash", json!({"command": "make"}))
        .result("toolu_B", &stub("40KB", &saved, "line 1"), None)
        .answer("Built.");
    s.write();
    std::fs::write(values.join("toolu_B.txt"), &full).unwrap();
    set_tree_old(&root);
    fn add_run(root: &Path) -> String {
        let id = "5e55c0de-0000-4000-8000-0000000000ad";
        let mut s = Session::new(&root.join("-home-ana-app"), id);
        s.prompt("more").answer("ok");
        s.write();
        id.into()
    }
    Store {
        kind: "claude",
        source: "claude",
        _dir: dir,
        root,
        run: SESSION.into(),
        call: "toolu_B".into(),
        full,
        stubbed: true,
        value: Some(format!("-home-ana-app/{SESSION}/tool-results/toolu_B.txt")),
        add_run,
    }
}

const THREAD: &str = "019e1625-0000-7000-8000-00000000c0de";

fn rollout(thread: &str, output: &str) -> String {
    let lines = [
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": thread, "cwd": "/home/ana/app", "originator": "codex_cli_rs", "model_provider": "openai"}}),
        json!({"timestamp": "2026-07-01T10:00:00.001Z", "type": "turn_context", "payload": {"cwd": "/home/ana/app", "model": "gpt-5-codex"}}),
        json!({"timestamp": "2026-07-01T10:00:00.002Z", "type": "event_msg", "payload": {"type": "user_message", "message": format!("Build it and look for the {NEEDLE}")}}),
        json!({"timestamp": "2026-07-01T10:00:01.000Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell_command", "arguments": "{\"command\":\"make\"}", "call_id": "call_cut"}}),
        json!({"timestamp": "2026-07-01T10:00:41.300Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "call_cut", "output": output}}),
        json!({"timestamp": "2026-07-01T10:00:43.000Z", "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Built."}]}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The same rollout as Codex 0.15x writes it: `ordinal`s, a `world_state` line, the prompt
/// only as a completed `UserMessage` item, the output as content blocks.
fn newest_rollout(thread: &str, output: &str) -> String {
    let lines = [
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "ordinal": 0, "type": "session_meta", "payload": {"id": thread, "cwd": "/home/ana/app", "originator": "codex_cli_rs", "cli_version": "0.154.0", "model_provider": "openai"}}),
        json!({"timestamp": "2026-07-01T10:00:00.000Z", "ordinal": 1, "type": "world_state", "payload": {}}),
        json!({"timestamp": "2026-07-01T10:00:00.001Z", "ordinal": 2, "type": "turn_context", "payload": {"cwd": "/home/ana/app", "model": "gpt-5.3-codex"}}),
        json!({"timestamp": "2026-07-01T10:00:00.002Z", "ordinal": 3, "type": "event_msg", "payload": {"type": "item_completed", "turn_id": "t1",
            "item": {"type": "UserMessage", "id": "u1", "content": [{"type": "text", "text": format!("Build it and look for the {NEEDLE}")}]}}}),
        json!({"timestamp": "2026-07-01T10:00:01.000Z", "ordinal": 4, "type": "response_item", "payload": {"type": "custom_tool_call", "name": "exec", "input": "await sh('make')", "call_id": "call_cut"}}),
        json!({"timestamp": "2026-07-01T10:00:41.300Z", "ordinal": 5, "type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "call_cut",
            "output": [{"type": "input_text", "text": output}]}}),
        json!({"timestamp": "2026-07-01T10:00:43.000Z", "ordinal": 6, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Built."}]}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn codex() -> Store {
    codex_store("codex", rollout)
}

fn codex_newest() -> Store {
    codex_store("codex 0.15x", newest_rollout)
}

fn codex_store(kind: &'static str, rollout: fn(&str, &str) -> String) -> Store {
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("sessions/2026/07/01");
    std::fs::create_dir_all(&day).unwrap();
    // Codex cuts a big output in place: the cut text is all there is.
    let full = format!(
        "Exit code: 0\nWall time: 40 seconds\nTotal output lines: 5210\nOutput:\nline 1: {NEEDLE}\n…38211 tokens truncated…\nline 5210: done"
    );
    let name = format!("rollout-2026-07-01T10-00-00-{THREAD}.jsonl");
    std::fs::write(day.join(name), rollout(THREAD, &full)).unwrap();
    let root = dir.path().join("sessions");
    set_tree_old(&root);
    // The run added while watching is of the newest shape for both.
    fn add_run(root: &Path) -> String {
        let id = "019e1625-0000-7000-8000-0000000000ad";
        let name = format!("2026/07/01/rollout-2026-07-01T11-00-00-{id}.jsonl");
        std::fs::write(root.join(name), newest_rollout(id, "ok")).unwrap();
        id.into()
    }
    Store {
        kind,
        source: "codex",
        _dir: dir,
        root,
        run: THREAD.into(),
        call: "call_cut".into(),
        full,
        stubbed: false,
        value: None,
        add_run,
    }
}

const CHAT: &str = "session-2026-07-01T10-00-5e55c0de";

/// A Gemini CLI chat (v0.29+) whose big output was saved to a file: the model got the stub.
fn gemini_chat(id: &str, prompt: &str, stub: &str) -> String {
    let user = json!({"id": format!("{id}-u"), "timestamp": "2026-07-01T10:00:01.000Z", "type": "user", "content": prompt});
    let call = json!({"id": "run_shell_command-1", "name": "run_shell_command", "args": {"command": "make"},
        "result": [{"functionResponse": {"id": "run_shell_command-1", "name": "run_shell_command", "response": {"output": stub}}}],
        "status": "success", "timestamp": "2026-07-01T10:00:40.000Z"});
    let answer = json!({"id": format!("{id}-g"), "timestamp": "2026-07-01T10:00:41.000Z", "type": "gemini", "content": "Built.",
        "toolCalls": [call], "model": "gemini-2.5-pro", "tokens": {"input": 900, "output": 20, "cached": 0, "thoughts": 5, "tool": 0, "total": 925}});
    json!({"sessionId": format!("{id}-session"), "projectHash": "ab14fe39", "startTime": "2026-07-01T10:00:00.000Z",
        "lastUpdated": "2026-07-01T10:00:41.000Z", "messages": [user, answer]})
    .to_string()
}

fn gemini() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("tmp/ab14fe39");
    let chats = project.join("chats");
    let saved = project.join("tool-outputs/session-5e55c0de-session");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::create_dir_all(&saved).unwrap();
    let full = big_output();
    let file = saved.join("run_shell_command-1.txt");
    std::fs::write(&file, &full).unwrap();
    let stub = format!(
        "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {}\nline 1: compiling module 1 {NEEDLE}\n\n... [1,234 characters omitted] ...\n\nline 900: compiling module 900",
        file.display()
    );
    let prompt = format!("Build it and look for the {NEEDLE}");
    std::fs::write(
        chats.join(format!("{CHAT}.json")),
        gemini_chat(CHAT, &prompt, &stub),
    )
    .unwrap();
    let root = dir.path().join("tmp");
    set_tree_old(&root);
    fn add_run(root: &Path) -> String {
        let id = "session-2026-07-01T11-00-000000ad";
        let chats = root.join("ab14fe39/chats");
        std::fs::write(
            chats.join(format!("{id}.json")),
            gemini_chat(id, "more", "ok"),
        )
        .unwrap();
        id.into()
    }
    Store {
        kind: "gemini",
        source: "gemini",
        _dir: dir,
        root,
        run: CHAT.into(),
        call: "run_shell_command-1".into(),
        full,
        stubbed: true,
        // A session's saved outputs folder holds its value files.
        value: Some(
            "ab14fe39/tool-outputs/session-5e55c0de-session/run_shell_command-1.txt".into(),
        ),
        add_run,
    }
}

const OC_SESSION: &str = "ses_3000000000001c0c0c0c0c0c0c";

/// Session `id` of an opencode database at `db` (made when missing): a prompt and one call
/// whose output opencode cut, saying where it saved the whole.
fn opencode_session(db: &Path, id: &str, prompt: &str, output: &str, saved: Option<&Path>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
         CREATE TABLE IF NOT EXISTS message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
         CREATE TABLE IF NOT EXISTS part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
    )
    .unwrap();
    conn.execute(
        "INSERT INTO session VALUES (?1, 'p', NULL, 's', '/home/ana/app', ?2, '1.2.15', 1772444841143, 1772444863151)",
        rusqlite::params![id, prompt],
    )
    .unwrap();
    let metadata = match saved {
        Some(p) => json!({"truncated": true, "outputPath": p.display().to_string()}),
        None => json!({"truncated": false}),
    };
    let rows = [
        (
            format!("{id}_m1"),
            json!({"role": "user", "time": {"created": 1}}),
            vec![json!({"type": "text", "text": prompt})],
        ),
        (
            format!("{id}_m2"),
            json!({"role": "assistant", "time": {"created": 2, "completed": 3}, "modelID": "glm-5", "providerID": "zai", "cost": 0, "finish": "stop"}),
            vec![
                json!({"type": "tool", "callID": "call_oc", "tool": "bash", "state": {"status": "completed", "input": {"command": "make"}, "output": output, "title": "make", "metadata": metadata, "time": {"start": 2, "end": 3}}}),
                json!({"type": "text", "text": "Built."}),
                json!({"type": "step-finish", "cost": 0, "tokens": {"input": 10, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}}}),
            ],
        ),
    ];
    for (i, (mid, data, parts)) in rows.into_iter().enumerate() {
        conn.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![mid, id, i as i64 + 1, data.to_string()],
        )
        .unwrap();
        for (j, p) in parts.into_iter().enumerate() {
            conn.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, 1, 1, ?4)",
                rusqlite::params![format!("{mid}_{j}"), mid, id, p.to_string()],
            )
            .unwrap();
        }
    }
}

fn opencode() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("opencode");
    let saved = root.join("tool-output");
    std::fs::create_dir_all(&saved).unwrap();
    let full = big_output();
    let file = saved.join("tool_cadf217500010000000000");
    std::fs::write(&file, &full).unwrap();
    let cut = format!(
        "line 1: compiling module 1 {NEEDLE}\n\n...899 lines truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: {}\nUse Grep to search the full content or Read with offset/limit to view specific sections.",
        file.display()
    );
    let prompt = format!("Build it and look for the {NEEDLE}");
    opencode_session(
        &root.join("opencode.db"),
        OC_SESSION,
        &prompt,
        &cut,
        Some(&file),
    );
    set_tree_old(&root);
    fn add_run(root: &Path) -> String {
        let id = "ses_2000000000001c0c0c0c0c0cad";
        opencode_session(&root.join("opencode.db"), id, "more", "ok", None);
        id.into()
    }
    Store {
        kind: "opencode",
        source: "opencode",
        _dir: dir,
        root,
        run: OC_SESSION.into(),
        call: "call_oc".into(),
        full,
        stubbed: true,
        // The file of the global folder this session's result names.
        value: Some("tool-output/tool_cadf217500010000000000".into()),
        add_run,
    }
}

/// One store per source. A new source adds its own here, and every test below runs on it.
fn stores() -> Vec<Store> {
    vec![
        harness(),
        claude(),
        codex(),
        codex_newest(),
        gemini(),
        opencode(),
    ]
}

fn set_tree_old(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            set_tree_old(&path);
        } else {
            crate::support::set_mtime(&path, OLD_MS);
        }
    }
}

fn result<'a>(show: &'a Value, call: &str) -> &'a Value {
    (show["results"].as_array().unwrap().iter())
        .find(|r| r["toolCallId"] == call)
        .unwrap_or_else(|| panic!("no result {call}"))
}

#[test]
fn every_source_lists_and_shows_its_run() {
    for s in stores() {
        let k = s.kind;
        let runs = mctl_json(&s.root, &["runs"]);
        let runs = runs.as_array().unwrap();
        assert_eq!(runs.len(), 1, "{k}: one run");
        let run = &runs[0];
        assert_eq!(run["id"], s.run.as_str(), "{k}");
        assert_eq!(
            run["source"], s.source,
            "{k}: the kind is told from the store"
        );
        assert_eq!(run["status"], "done", "{k}");
        assert!(
            run["title"].as_str().unwrap().contains(NEEDLE),
            "{k}: titled by its prompt"
        );
        assert_eq!(run["toolCalls"], 1, "{k}");
        let show = mctl_json(&s.root, &["show", &s.run]);
        assert_eq!(show["run"], *run, "{k}: show and the list agree");
        let r = result(&show, &s.call);
        let state = r["state"].as_str().unwrap();
        let kept_out = if s.stubbed { "retained" } else { "truncated" };
        assert_eq!(
            state, kept_out,
            "{k}: its big output is kept out of context"
        );
    }
}

#[test]
fn every_source_gives_stub_full_and_peek_by_its_rule() {
    for s in stores() {
        let k = s.kind;
        let full = mctl(&s.root, &["full", &s.run, &s.call]);
        assert!(full.status.success(), "{k}: full");
        assert_eq!(stdout(&full), s.full, "{k}: the full text, byte for byte");
        let stub = mctl(&s.root, &["stub", &s.run, &s.call, "--json"]);
        if s.stubbed {
            assert!(stub.status.success(), "{k}: a stub");
            let stub: Value = serde_json::from_slice(&stub.stdout).unwrap();
            let text = stub["text"].as_str().unwrap();
            assert!(text.len() < s.full.len(), "{k}: the stub is shorter");
            assert!(
                text.contains("line 1"),
                "{k}: its preview shows the first line"
            );
        } else {
            assert_eq!(stub.status.code(), Some(1), "{k}: no stub of a cut output");
            assert!(
                crate::support::stderr(&stub).contains("cut in place"),
                "{k}"
            );
        }
        let peek = mctl_json(&s.root, &["peek", &s.run, &s.call, "--lines", "1-2"]);
        assert!(
            peek["text"]
                .as_str()
                .unwrap()
                .contains(s.full.lines().next().unwrap()),
            "{k}: a peek reads the full text from its first line: {peek}"
        );
        let found = mctl_json(&s.root, &["peek", &s.run, &s.call, "--query", NEEDLE]);
        assert!(
            found["text"].as_str().unwrap().contains(NEEDLE),
            "{k}: a query finds the needle"
        );
    }
}

#[test]
fn every_source_is_searched_in_prompts_and_outputs() {
    for s in stores() {
        let k = s.kind;
        let out = mctl(&s.root, &["search", NEEDLE, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{k}: hits");
        let hits: Vec<Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|h: &Value| h["kind"] != "summary")
            .collect();
        assert!(hits.iter().all(|h| h["run"] == s.run.as_str()), "{k}");
        assert!(
            hits.iter().any(|h| h["kind"] == "message"),
            "{k}: the prompt"
        );
        let in_output = hits
            .iter()
            .any(|h| h["kind"] == "value" || h["kind"] == "result");
        assert!(
            in_output,
            "{k}: the output, in its value file or as the model got it"
        );
    }
}

#[test]
fn every_source_collects_only_what_it_keeps_as_values() {
    for s in stores() {
        let k = s.kind;
        let plan = mctl_json(&s.root, &["gc", "--older-than", "1d"]);
        let files: Vec<&str> = (plan["files"].as_array().unwrap().iter())
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        let want: Vec<&str> = s.value.iter().map(String::as_str).collect();
        assert_eq!(files, want, "{k}: the plan names exactly its value file");
        let applied = mctl_json(&s.root, &["gc", "--older-than", "1d", "--apply"]);
        assert_eq!(
            applied["files"].as_array().unwrap().len(),
            want.len(),
            "{k}"
        );
        if let Some(v) = &s.value {
            assert!(!s.root.join(v).exists(), "{k}: the value file is gone");
        }
        // The run itself is untouched, and still reads.
        let runs = mctl_json(&s.root, &["runs"]);
        assert_eq!(runs.as_array().unwrap().len(), 1, "{k}: the run is kept");
        let again = mctl_json(&s.root, &["gc", "--older-than", "1d"]);
        assert!(
            again["files"].as_array().unwrap().is_empty(),
            "{k}: nothing left"
        );
    }
}

#[test]
fn every_source_reads_the_same_with_and_without_its_index() {
    for s in stores() {
        let k = s.kind;
        let cache = tempfile::tempdir().unwrap();
        let listed = |extra: &[&str]| {
            let mut cmd = mctl_command();
            cmd.env("MCTL_CACHE_DIR", cache.path())
                .arg("--runs-dir")
                .arg(&s.root)
                .args(extra)
                .args(["--json", "runs"]);
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{k}");
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        };
        let cold = listed(&[]);
        let warm = listed(&[]);
        let read = listed(&["--no-index"]);
        assert_eq!(
            cold, read,
            "{k}: the index's first listing equals a full read"
        );
        assert_eq!(warm, read, "{k}: its warm listing too");
        let added = (s.add_run)(&s.root);
        let after = listed(&[]);
        let ids: Vec<&str> = (after.as_array().unwrap().iter())
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&added.as_str()), "{k}: a new run is listed");
        assert_eq!(after, listed(&["--no-index"]), "{k}: and read the same");
    }
}

#[test]
fn every_source_is_watched_live() {
    for s in stores() {
        let k = s.kind;
        let mut child = mctl_command()
            .arg("--runs-dir")
            .arg(&s.root)
            .args(["--json", "watch", "--poll"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                if tx.send(line.unwrap_or_default()).is_err() {
                    break;
                }
            }
        });
        // The watch first reports what is there, then what comes.
        let seen = |id: &str, rx: &std::sync::mpsc::Receiver<String>| {
            let until = Instant::now() + Duration::from_secs(20);
            while Instant::now() < until {
                if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
                    let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    if v["run"] == id {
                        return true;
                    }
                }
            }
            false
        };
        assert!(seen(&s.run, &rx), "{k}: the run there is reported");
        let added = (s.add_run)(&s.root);
        let reported = seen(&added, &rx);
        let _ = child.kill();
        let _ = child.wait();
        assert!(reported, "{k}: a run written meanwhile is reported");
    }
}
