//! Hand-built Claude Code stores for what the real files lack: a `.json` value, a
//! `content-replacement` record, a Bash value named by its task id, a subagent's value in its
//! session's folder, a stub that points elsewhere, an empty session, an orphaned folder.

use super::{stub, Session};
use crate::support::{mctl, mctl_json, stderr, stdout};
use serde_json::{json, Value};

const SESSION: &str = "9e0c5a1e-0000-4000-8000-000000000001";

fn result<'a>(show: &'a Value, call: &str) -> &'a Value {
    show["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["toolCallId"] == call)
        .unwrap_or_else(|| panic!("no result {call}"))
}

fn saved(session: &str, name: &str) -> String {
    format!("/home/ana/.claude/projects/-home-ana-app/{session}/tool-results/{name}")
}

#[test]
fn each_kind_of_persisted_output_is_found_and_classified() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut s = Session::new(&project, SESSION);
    let values = s.tool_results();
    let grep = "src/a.ts:3: TODO x\n".repeat(3000);
    let bash_full = format!("{}tail\n", "build line\n".repeat(6000));
    let bash_head = &bash_full[..30_000];
    // A Grep result persisted as .txt, with its raw output recorded; a .json value (an MCP
    // tool's blocks); a Bash output named by its task id, its `stdout` only the start; a Read
    // whose stub names another session's folder; a result persisted at send time
    // (content-replacement); one whose file is gone.
    s.prompt("Find the TODOs and build")
        .call("toolu_G", "Grep", json!({"pattern": "TODO"}))
        .result("toolu_G", &stub("53.0KB", &saved(SESSION, "toolu_G.txt"), "src/a.ts:3"), Some(json!({"mode": "content", "content": grep})))
        .call("toolu_J", "mcp__docs__fetch", json!({"url": "x"}))
        .result("toolu_J", &stub("60KB", &saved(SESSION, "toolu_J.json"), "one"), None)
        .call("toolu_B", "Bash", json!({"command": "make"}))
        .result("toolu_B", &stub("60.3KB", &saved(SESSION, "bk3f9x2qa.txt"), "build line"),
            Some(json!({"stdout": bash_head, "stderr": "", "interrupted": false,
                "persistedOutputPath": saved(SESSION, "bk3f9x2qa.txt"), "persistedOutputSize": bash_full.len()})))
        .call("toolu_X", "Read", json!({"file_path": "/etc/passwd"}))
        .result("toolu_X", &stub("20KB", &saved("another-session", "toolu_X.txt"), "root"), None)
        .call("toolu_R", "WebFetch", json!({"url": "y"}))
        .result("toolu_R", &"page text\n".repeat(9000), None)
        .line(json!({"type": "content-replacement", "sessionId": SESSION, "replacements": [
            {"kind": "tool-result", "toolUseId": "toolu_R",
             "replacement": stub("88KB", &saved(SESSION, "toolu_R.txt"), "page text")}]}))
        .call("toolu_L", "Grep", json!({"pattern": "gone"}))
        .result("toolu_L", &stub("40KB", &saved(SESSION, "toolu_L.txt"), "x"), Some(json!({"content": "lost text"})))
        .answer("Done.");
    s.write();
    std::fs::write(values.join("toolu_G.txt"), &grep).unwrap();
    let blocks = json!([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]);
    std::fs::write(
        values.join("toolu_J.json"),
        serde_json::to_string_pretty(&blocks).unwrap(),
    )
    .unwrap();
    std::fs::write(values.join("bk3f9x2qa.txt"), &bash_full).unwrap();
    std::fs::write(values.join("toolu_X.txt"), "must not be read").unwrap();
    std::fs::write(values.join("toolu_R.txt"), "page text\n".repeat(9000)).unwrap();
    let dir = store.path();

    let show = mctl_json(dir, &["show", SESSION]);
    assert_eq!(show["run"]["source"], "claude");
    assert_eq!(
        show["run"]["status"], "done",
        "answered and called nothing after"
    );
    assert_eq!(show["run"]["title"], "Find the TODOs and build");
    let state = |c: &str| result(&show, c)["state"].as_str().unwrap().to_owned();
    assert_eq!(state("toolu_G"), "retained");
    assert_eq!(result(&show, "toolu_G")["bytes"], grep.len());
    assert_eq!(state("toolu_J"), "retained");
    assert_eq!(
        result(&show, "toolu_J")["bytes"],
        "one\ntwo".len(),
        "a .json value is its text"
    );
    assert_eq!(state("toolu_B"), "retained");
    assert_eq!(
        result(&show, "toolu_B")["valueId"],
        "bk3f9x2qa",
        "named by its task id"
    );
    assert_eq!(
        state("toolu_X"),
        "unretained",
        "another session's path is refused"
    );
    assert_eq!(
        state("toolu_R"),
        "retained",
        "the content-replacement record is what it saw"
    );
    assert_eq!(state("toolu_L"), "swept", "its file is gone");
    let problems = show["problems"].to_string();
    assert!(
        problems.contains("toolu_X: the stub names a file of session another-session"),
        "{problems}"
    );

    // What each door gives.
    assert_eq!(
        stdout(&mctl(dir, &["full", SESSION, "toolu_J"])),
        "one\ntwo"
    );
    assert_eq!(stdout(&mctl(dir, &["full", SESSION, "toolu_B"])), bash_full);
    assert_eq!(
        stdout(&mctl(dir, &["full", SESSION, "toolu_L"])),
        "lost text",
        "recovered"
    );
    let x = stdout(&mctl(dir, &["full", SESSION, "toolu_X"]));
    assert!(
        x.starts_with("<persisted-output>") && !x.contains("must not be read"),
        "{x}"
    );
    let r_stub = mctl_json(dir, &["stub", SESSION, "toolu_R"]);
    assert!(r_stub["text"]
        .as_str()
        .unwrap()
        .contains("Output too large (88KB)"));
    let peek = mctl_json(dir, &["peek", SESSION, "toolu_B", "--query", "tail"]);
    assert_eq!(peek["source"], "file");
    assert!(
        peek["text"].as_str().unwrap().contains("6001: tail"),
        "{peek}"
    );

    // The Bash file that does not start with the recorded stdout is damaged.
    std::fs::write(
        values.join("bk3f9x2qa.txt"),
        bash_full.replace("build", "BUILD"),
    )
    .unwrap();
    let show = mctl_json(dir, &["show", SESSION]);
    assert_eq!(result(&show, "toolu_B")["state"], "damaged");

    // A result the model saw whole has no stub.
    let out = mctl(dir, &["stub", SESSION, "toolu_nope"]);
    assert!(!out.status.success() && stderr(&out).contains("toolu_nope"));
}

#[test]
fn a_subagent_finds_its_values_in_its_sessions_folder() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut s = Session::new(&project, SESSION);
    s.prompt("Explore").answer("Explored.").write();
    let values = s.tool_results();
    let agents = project.join(SESSION).join("subagents");
    let mut a = Session::new(&agents, "agent-a1b2c3d");
    a.id = SESSION.to_owned(); // a subagent's lines name its session
    let mut lines: Vec<String> = (1..=9000).map(|i| format!("entry {i}")).collect();
    lines[499] = "needle_read".to_owned();
    lines[799] = "needle_unread".to_owned();
    let text = lines.join("\n") + "\n";
    a.prompt("List the files")
        .call("toolu_S", "Bash", json!({"command": "find"}))
        .result(
            "toolu_S",
            &stub("52.7KB", &saved(SESSION, "toolu_S.txt"), "entry 1"),
            None,
        )
        // The model reads line 500 of the value back.
        .call(
            "toolu_R",
            "Read",
            json!({"file_path": saved(SESSION, "toolu_S.txt"), "offset": 500, "limit": 1}),
        )
        .result("toolu_R", "   500→needle_read", None)
        .answer("Listed.");
    a.write();
    std::fs::write(values.join("toolu_S.txt"), &text).unwrap();
    let dir = store.path();
    let runs = mctl_json(dir, &["runs"]);
    let sub = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "agent-a1b2c3d")
        .unwrap();
    assert_eq!(sub["parentId"], SESSION);
    assert_eq!(sub["retained"], 1);
    let main = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == SESSION)
        .unwrap();
    assert_eq!(
        main["strays"], 0,
        "its subagent's value is no stray of the session"
    );
    assert_eq!(
        stdout(&mctl(dir, &["full", "agent-a1b2c3d", "toolu_S"])),
        text
    );
    // A search hit in the value names the subagent that got it, and whether its model saw the
    // line: read back, or only in the file.
    let out = mctl(dir, &["search", "needle_", "--in", "values", "--json"]);
    let hits: Vec<Value> = (stdout(&out).lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|h| h["kind"] == "value")
        .collect();
    let got: Vec<(&str, u64, bool, bool)> = (hits.iter())
        .map(|h| {
            let run = h["run"].as_str().unwrap();
            (
                run,
                h["textLine"].as_u64().unwrap(),
                h["stray"] == true,
                h["seen"] == true,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("agent-a1b2c3d", 500, false, true),
            ("agent-a1b2c3d", 800, false, false)
        ],
        "{hits:?}"
    );
}

#[test]
fn an_empty_session_and_an_orphaned_folder_are_shown_not_fatal() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    std::fs::create_dir_all(project.join("gone-session/tool-results")).unwrap();
    std::fs::write(
        project.join("gone-session/tool-results/toolu_O.txt"),
        "orphan",
    )
    .unwrap();
    std::fs::write(project.join("empty.jsonl"), b"").unwrap();
    let mut s = Session::new(&project, SESSION);
    s.prompt("hello")
        .line(json!({"type": "brand-new-line", "sessionId": SESSION}));
    s.line(json!("not an object"));
    s.write();
    let dir = store.path();
    let runs = mctl_json(dir, &["--source", "claude", "runs"]);
    let ids: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"empty") && ids.contains(&SESSION) && !ids.contains(&"gone-session"),
        "{ids:?}"
    );
    let show = mctl_json(dir, &["show", SESSION]);
    assert_eq!(
        show["run"]["warnings"], 1,
        "an unknown line type is counted"
    );
    assert_eq!(
        show["run"]["problems"], 1,
        "a line that is no Claude Code line"
    );
    let kinds: Vec<&str> = show["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user_message", "brand-new-line", "unreadable"]);
    let layout = mission_control::runs::Layout::read_as(
        dir,
        mission_control::sources::SourceKind::Claude,
        None,
    )
    .unwrap();
    let orphans: Vec<&str> = layout.orphan_value_dirs().map(|(id, _)| id).collect();
    assert_eq!(orphans, ["gone-session"]);
}

#[test]
fn search_and_watch_read_a_claude_code_store_as_they_read_runs() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut s = Session::new(&project, SESSION);
    let values = s.tool_results();
    s.prompt("Where is the flaky needle test?")
        .call("toolu_N", "Grep", json!({"pattern": "needle_input"}))
        .result(
            "toolu_N",
            &stub("50KB", &saved(SESSION, "toolu_N.txt"), "head"),
            None,
        )
        .answer("In needle_answer.rs");
    s.write();
    std::fs::write(
        values.join("toolu_N.txt"),
        "a\n".repeat(100) + "needle_value here\n",
    )
    .unwrap();
    let dir = store.path();
    let out = mctl(dir, &["search", "needle", "--json"]);
    let hits: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = hits
        .iter()
        .filter(|h| h["kind"] != "summary")
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "message").count(),
        2,
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&"input") && kinds.contains(&"value"),
        "{kinds:?}"
    );
    let value = hits.iter().find(|h| h["kind"] == "value").unwrap();
    assert_eq!(
        (value["line"].as_u64(), value["textLine"].as_u64()),
        (Some(3), Some(101))
    );

    // A line appended to the session is seen by the watch.
    // The append follows the first look, however slow.
    let mut watch = crate::support::WatchLines::start(dir);
    watch.wait_for(&format!(
        "\"kind\":\"run-added\",\"dir\":\"{}\",\"run\":\"{SESSION}\"",
        dir.display()
    ));
    s.prompt("And now?").write();
    // The appended line is seen.
    watch.wait_for("\"kind\":\"reset\"");
}

#[test]
fn a_kind_given_to_a_directory_holds_for_every_reader() {
    use mission_control::sources::{detect, force_kinds, SourceKind};
    let _declaring = crate::support::declared_kinds_lock();
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.prompt("hello").write();
    let dir = store.path();
    let opts = mission_control::runs::RunOptions::default();
    assert_eq!(detect(dir), SourceKind::Claude);
    force_kinds([(dir.to_str().unwrap(), SourceKind::Klide)]);
    assert_eq!(detect(dir), SourceKind::Klide, "the declared kind wins");
    let runs = crate::support::open_runs_dir(dir, opts).list().unwrap();
    assert!(runs.is_empty(), "read as a runs directory, it holds no run");
    force_kinds(std::iter::empty());
    assert_eq!(
        detect(dir),
        SourceKind::Claude,
        "detected again once the kind is dropped"
    );
    assert_eq!(
        crate::support::open_runs_dir(dir, opts)
            .list()
            .unwrap()
            .len(),
        1
    );
}

/// A `content-replacement` record written after the layout's scan of the file (between a
/// listing's look at the store and its read of the session) still rewrites what the model got:
/// the fold reads ahead past where the scan stopped.
#[test]
fn a_replacement_written_after_the_scan_is_read_ahead() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut s = Session::new(&project, SESSION);
    let values = s.tool_results();
    s.prompt("Fetch the page")
        .call("toolu_R", "WebFetch", json!({"url": "y"}))
        .result("toolu_R", &"page text\n".repeat(9000), None)
        .answer("Done.");
    let path = s.write();
    std::fs::write(values.join("toolu_R.txt"), "page text\n".repeat(9000)).unwrap();
    let opts = mission_control::runs::RunOptions {
        now_ms: crate::support::OLD_MS + 86_400_000,
        ..Default::default()
    };
    let dir = mission_control::runs::RunsDir::open_as(
        store.path(),
        mission_control::runs::SourceKind::Claude,
        opts,
    )
    .unwrap()
    .with_index(false);
    let layout = dir.layout().unwrap();
    let read = |layout: &mission_control::runs::Layout| {
        let detail = mission_control::runs::analyze_run(layout, SESSION, &opts, false).unwrap();
        let r = detail
            .results
            .iter()
            .find(|r| r.tool_call_id == "toolu_R")
            .unwrap();
        format!("{:?}", r.state)
    };
    assert_eq!(read(&layout), "Inline", "nothing replaced it yet");
    let record = json!({"type": "content-replacement", "sessionId": SESSION, "replacements": [
        {"kind": "tool-result", "toolUseId": "toolu_R",
         "replacement": stub("88KB", &saved(SESSION, "toolu_R.txt"), "page text")}]});
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("{record}\n").as_bytes()).unwrap();
    assert_eq!(
        read(&layout),
        "Retained",
        "the layout read before the record was written"
    );
    assert_eq!(read(&dir.layout().unwrap()), "Retained");
}

/// A result's content is passed over unread by a listing (measured), yet a line holding one no
/// JSON parse reads (half a surrogate pair, a block with a field twice) is still unreadable,
/// said once, in the listing as in `show`: the line's other blocks are not taken either.
#[test]
fn a_result_whose_content_does_not_parse_makes_its_line_unreadable() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.prompt("Look")
        .call("toolu_A", "Bash", json!({"command": "ls"}))
        .result("toolu_A", "BAD_STRING", None)
        .call("toolu_B", "Read", json!({"file_path": "a"}))
        .result("toolu_B", "BAD_BLOCKS", None)
        .call("toolu_C", "Bash", json!({"command": "pwd"}))
        .result("toolu_C", "/home/ana/app\n", None)
        .answer("Done");
    let path = s.write();
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text
        .replace(r#""BAD_STRING""#, r#""out \ud800 half a pair\n""#)
        .replace(
            r#""BAD_BLOCKS""#,
            r#"[{"type":"text","type":"text","text":"twice"}]"#,
        );
    std::fs::write(&path, text).unwrap();
    crate::support::set_mtime(&path, crate::support::OLD_MS);
    for extra in [&[][..], &["--no-index"]] {
        let runs = mctl_json(store.path(), &[&["runs"], extra].concat());
        let run = &runs[0];
        assert_eq!(run["problems"], 2, "{run}");
        assert_eq!(run["results"], 1, "only the readable line's result: {run}");
        let show = mctl_json(store.path(), &[&["show", SESSION], extra].concat());
        assert_eq!(show["run"], *run, "the listing and `show` agree");
        let said = show.to_string();
        assert!(said.contains("not a Claude Code line"), "{said}");
        assert!(said.contains("hex escape"), "half a pair: {said}");
        assert!(said.contains("duplicate field"), "{said}");
    }
}
