//! Claude Code's subagents as runs under their session: the side conversations an older build
//! wrote into the session's own file, and the files of `subagents/` (and beside the sessions),
//! each with the session's call that started it.

use super::{agent_file, Session};
use crate::support::{find, mctl_command, mctl_json, stdout};
use serde_json::{json, Value};
use std::path::Path;

pub(super) const SESSION: &str = "5e551011-0000-4000-8000-000000000001";
const PARSER: &str = "aaaaaaaa-0000-4000-8000-00000000000a";
const TESTS: &str = "bbbbbbbb-0000-4000-8000-00000000000b";

/// A side line of an older build: `isSidechain`, linked to its parent by `parentUuid`.
fn side(uuid: &str, parent: Option<&str>, kind: &str, message: Value) -> Value {
    json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": true,
        "sessionId": SESSION, "cwd": "/home/ana/app", "timestamp": "2026-04-02T10:01:00.000Z",
        "message": message})
}

fn said(text: &str) -> Value {
    json!({"id": format!("msg_{text}"), "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": text}]})
}

/// The parser's side conversation: its first line, the prompt of `toolu_T1`.
fn parser_asked() -> Value {
    let asked = json!({"role": "user", "content": "Write the parser"});
    side(PARSER, None, "user", asked)
}

/// The parser's side conversation calls `toolu_A` to build.
fn parser_builds() -> Value {
    let message = json!({"id": "msg_a2", "role": "assistant", "model": "claude-x",
        "content": [{"type": "tool_use", "id": "toolu_A", "name": "Bash",
        "input": {"command": "cargo build"}}]});
    side("a2", Some(PARSER), "assistant", message)
}

/// A session that started two subagents at once; their side conversations interleave in its
/// file.
pub(super) fn session_with_side_conversations(project: &Path) -> Session {
    let mut s = Session::new(project, SESSION);
    s.prompt("Build the parser and its tests")
        .call("toolu_T1", "Task", json!({"prompt": "Write the parser"}))
        .call("toolu_T2", "Task", json!({"prompt": "Write the tests"}))
        .line(parser_asked())
        .line(side(
            TESTS,
            None,
            "user",
            json!({"role": "user", "content": "Write the tests"}),
        ))
        .line(parser_builds())
        .line(side(
            "b2",
            Some(TESTS),
            "assistant",
            said("tests_done_marker"),
        ))
        .line(side(
            "a3",
            Some("a2"),
            "user",
            json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_A", "content": "Compiling"}]}),
        ))
        .line(side(
            "a4",
            Some("a3"),
            "assistant",
            said("parser_done_marker"),
        ))
        .result("toolu_T1", "The parser is written", None)
        .result("toolu_T2", "The tests are written", None)
        .answer("Both are done");
    s.write();
    s
}

/// `line` as a tool that writes JSON again may write it: a blank after each key's colon (as
/// Python's `json.dumps` does).
fn spaced(line: &Value) -> String {
    struct Spaced;
    impl serde_json::ser::Formatter for Spaced {
        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
        ) -> std::io::Result<()> {
            w.write_all(b": ")
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    serde::Serialize::serialize(line, &mut ser).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_session_file_written_again_with_blanks_has_the_same_runs() {
    let store = tempfile::tempdir().unwrap();
    let s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    let figures = |runs: &Value| -> Vec<Value> {
        let mut runs: Vec<Value> = (runs.as_array().unwrap().iter())
            .map(|r| {
                json!([
                    r["id"],
                    r["parentId"],
                    r["parentCall"],
                    r["toolCalls"],
                    r["sidechainLines"],
                    r["tokensIn"],
                    r["tokensOut"],
                    r["problems"]
                ])
            })
            .collect();
        runs.sort_by_key(|r| r[0].to_string());
        runs
    };
    let compact = figures(&mctl_json(store.path(), &["--no-index", "runs"]));
    assert_eq!(compact.len(), 3, "{compact:?}");
    let text = std::fs::read_to_string(&s.path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let written: String = lines.iter().map(|l| format!("{}\n", spaced(l))).collect();
    assert!(written.contains("\"isSidechain\": true"));
    std::fs::write(&s.path, written).unwrap();
    crate::support::set_mtime(&s.path, crate::support::OLD_MS);
    for args in [&["--no-index", "runs"][..], &["runs"]] {
        assert_eq!(figures(&mctl_json(store.path(), args)), compact, "{args:?}");
    }
}

#[test]
fn side_conversations_in_a_session_file_are_runs_under_it() {
    let store = tempfile::tempdir().unwrap();
    session_with_side_conversations(&store.path().join("-home-ana-app"));
    let dir = store.path();
    let runs = mctl_json(dir, &["runs"]);
    assert_eq!(runs.as_array().unwrap().len(), 3, "{runs}");
    let session = find(&runs, SESSION);
    assert_eq!(
        (
            session["toolCalls"].as_u64(),
            session["sidechainLines"].as_u64()
        ),
        (Some(2), Some(6)),
        "the session keeps its own lines"
    );
    assert_eq!(session["parentId"], Value::Null);
    for (id, call, title, calls, lines) in [
        ("sidechain-aaaaaaaa", "toolu_T1", "Write the parser", 1, 4),
        ("sidechain-bbbbbbbb", "toolu_T2", "Write the tests", 0, 2),
    ] {
        let run = find(&runs, id);
        assert_eq!(run["parentId"], SESSION, "{id}");
        assert_eq!(
            run["parentCall"], call,
            "{id}: the Task call that started it"
        );
        assert_eq!(run["title"], title, "{id}");
        assert_eq!(run["toolCalls"], calls, "{id}");
        assert_eq!(run["sidechainLines"], lines, "{id}");
        assert_eq!(run["status"], "done", "{id}");
        assert_eq!(run["problems"], 0, "{id}");
    }

    // Its timeline is its own lines, and a search names it, not the session.
    let show = mctl_json(dir, &["show", "sidechain-aaaaaaaa"]);
    let kinds: Vec<&str> = (show["events"].as_array().unwrap().iter())
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message",
            "assistant_message",
            "tool_call_started",
            "tool_call_finished",
            "assistant_message"
        ]
    );
    for (needle, run) in [
        ("parser_done_marker", "sidechain-aaaaaaaa"),
        ("tests_done_marker", "sidechain-bbbbbbbb"),
        ("Both are done", SESSION),
    ] {
        let out = mctl_command()
            .args(["--runs-dir"])
            .arg(dir)
            .args(["search", needle, "--json"])
            .output()
            .unwrap();
        let found: Vec<String> = (stdout(&out).lines())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|h| h["kind"] != "summary")
            .map(|h| h["run"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(found, [run], "{needle}");
        // Asked of the run alone: found there, and its session's folder (not made yet) is
        // nothing skipped.
        let out = mctl_command()
            .args(["--runs-dir"])
            .arg(dir)
            .args(["search", needle, "--run", run, "--json"])
            .output()
            .unwrap();
        let lines: Vec<Value> = (stdout(&out).lines())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        let summary = lines.iter().find(|h| h["kind"] == "summary").unwrap();
        assert_eq!(summary["skipped"], json!([]), "{needle}: {summary}");
        assert_eq!(lines.len(), 2, "{needle}: one hit and the summary");
    }
}

#[test]
fn a_damaged_side_line_is_its_own_conversations_problem() {
    let store = tempfile::tempdir().unwrap();
    let mut s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    // Its links read, its message does not: the parser's line, damaged.
    s.line(side("a5", Some("a4"), "assistant", json!(5)));
    s.write();
    for extra in [&[][..], &["--no-index"]] {
        let runs = mctl_json(store.path(), &[&["runs"], extra].concat());
        let problems = |id: &str| find(&runs, id)["problems"].as_u64();
        assert_eq!(problems("sidechain-aaaaaaaa"), Some(1), "{runs}");
        assert_eq!(
            (problems(SESSION), problems("sidechain-bbbbbbbb")),
            (Some(0), Some(0)),
            "said once, by the run the line is of"
        );
        assert_eq!(find(&runs, SESSION)["sidechainLines"], 7);
    }
    let show = mctl_json(store.path(), &["show", "sidechain-aaaaaaaa"]);
    let said = show.to_string();
    assert!(said.contains("not a Claude Code line"), "{said}");
}

#[test]
fn subagent_files_know_the_call_that_started_them() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    // A newer build: the agent's file under the session's folder, named by a progress line.
    let mut s = Session::new(&project, SESSION);
    s.prompt("Look around")
        .call("toolu_S", "Task", json!({"prompt": "Survey the code"}))
        .line(
            json!({"type": "progress", "parentToolUseID": "toolu_S", "sessionId": SESSION,
            "data": {"type": "agent_progress", "agentId": "a11"}}),
        )
        .result("toolu_S", "Surveyed", None);
    s.write();
    agent_file(
        &project.join(SESSION).join("subagents"),
        "a11",
        SESSION,
        "Survey the code",
    );
    // An older build: the agent's file beside the sessions, named by the Task call's result.
    let older = "01de0000-0000-4000-8000-000000000002";
    let mut q = Session::new(&project, older);
    q.prompt("Edit the file")
        .call("toolu_Q", "Task", json!({"prompt": "Add a section"}))
        .result(
            "toolu_Q",
            "Added",
            Some(json!({"status": "completed", "agentId": "a22"})),
        );
    q.write();
    agent_file(&project, "a22", older, "Add a section");

    let runs = mctl_json(store.path(), &["runs"]);
    assert_eq!(runs.as_array().unwrap().len(), 4, "{runs}");
    for (id, parent, call) in [
        ("agent-a11", SESSION, "toolu_S"),
        ("agent-a22", older, "toolu_Q"),
    ] {
        let run = find(&runs, id);
        assert_eq!(
            (&run["parentId"], &run["parentCall"]),
            (&json!(parent), &json!(call))
        );
    }
}

/// The session scans kept in `cache`.
fn kept_scans(cache: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| p.to_string_lossy().contains("claude-sessions-"))
                .collect()
        })
        .unwrap_or_default()
}

fn run_ids(dir: &Path, cache: &Path, extra: &[&str]) -> Vec<String> {
    let out = mctl_command()
        .env("MCTL_CACHE_DIR", cache)
        .args(["--runs-dir"])
        .arg(dir)
        .args(extra)
        .args(["--json", "runs"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let runs: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut ids: Vec<String> = (runs.as_array().unwrap().iter())
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn what_a_session_file_holds_is_kept_by_its_stamp_and_never_trusted_over_it() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    let dir = store.path();
    let three = [SESSION, "sidechain-aaaaaaaa", "sidechain-bbbbbbbb"];

    assert_eq!(run_ids(dir, cache.path(), &["--no-index"]), three);
    assert!(
        kept_scans(cache.path()).is_empty(),
        "--no-index keeps nothing"
    );
    assert_eq!(run_ids(dir, cache.path(), &[]), three);
    let kept = kept_scans(cache.path());
    assert_eq!(kept.len(), 1, "one file for the store");

    // A side conversation appended later is seen: the file's stamp moved.
    s.line(side(
        "cccccccc-1",
        None,
        "user",
        json!({"role": "user", "content": "Review"}),
    ));
    s.write();
    let four = [
        SESSION,
        "sidechain-aaaaaaaa",
        "sidechain-bbbbbbbb",
        "sidechain-cccccccc",
    ];
    assert_eq!(run_ids(dir, cache.path(), &[]), four);

    // A damaged cache file is read past, and written again.
    std::fs::write(&kept[0], "{not json").unwrap();
    assert_eq!(run_ids(dir, cache.path(), &[]), four);
    let again = std::fs::read(&kept[0]).unwrap();
    assert!(holds(&again, "cccccccc-1"), "{}", again.escape_ascii());
}

/// Whether the bytes of a cache file hold `text`.
fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

#[test]
fn the_kept_scans_serve_any_spelling_of_the_stores_path() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    session_with_side_conversations(&store.path().join("-home-ana-app"));
    let three = [SESSION, "sidechain-aaaaaaaa", "sidechain-bbbbbbbb"];
    assert_eq!(run_ids(store.path(), cache.path(), &[]), three);
    let kept = kept_scans(cache.path());
    assert_eq!(kept.len(), 1, "one file for the store");
    let bytes = std::fs::read(&kept[0]).unwrap();
    let root = store.path().to_string_lossy().into_owned();
    assert!(holds(&bytes, "-home-ana-app/"), "{}", bytes.escape_ascii());
    assert!(
        !holds(&bytes, &root),
        "paths under the store's root: {}",
        bytes.escape_ascii()
    );
    let written = std::fs::metadata(&kept[0]).unwrap().modified().unwrap();

    // The same store through a link: its sessions are known, none is scanned again, and the
    // file is not written again.
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("store");
    std::os::unix::fs::symlink(store.path(), &link).unwrap();
    assert_eq!(run_ids(&link, cache.path(), &[]), three);
    assert_eq!(kept_scans(cache.path()), kept);
    let again = std::fs::metadata(&kept[0]).unwrap().modified().unwrap();
    assert_eq!(again, written, "nothing new was found");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), bytes);
}

#[test]
fn a_side_conversation_started_while_watched_is_added() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut s = session_with_side_conversations(&project);
    // An older build's agent file, which the session names only later.
    agent_file(&project, "a22", SESSION, "Add a section");
    let dir = store.path();
    let mut watch = crate::support::WatchLines::start(dir);
    // The first look has met the agent's file before the session names it.
    watch.wait_for("\"run\":\"agent-a22\"");
    let review = json!({"role": "user", "content": "Review"});
    s.line(side("dddddddd-1", None, "user", review)).result(
        "toolu_T3",
        "Added",
        Some(json!({"status": "completed", "agentId": "a22"})),
    );
    s.write();
    watch.wait_for(&format!(
        "\"kind\":\"run-added\",\"dir\":\"{}\",\"run\":\"sidechain-dddddddd\"",
        dir.display()
    ));
    // The agent's file did not change; what the layout says of it did.
    let reset = format!(
        "\"kind\":\"reset\",\"dir\":\"{}\",\"run\":\"agent-a22\"",
        dir.display()
    );
    watch.wait_for(&reset);
}

#[test]
fn a_side_conversation_has_figures_of_its_own() {
    let store = tempfile::tempdir().unwrap();
    let mut s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    // A third one, asked and never answered.
    s.line(side(
        "cccccccc-1",
        None,
        "user",
        json!({"role": "user", "content": "Review it"}),
    ));
    let path = s.write();
    // The session is live: its file was written just now.
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let dir = store.path();
    let runs = mctl_json(dir, &["runs"]);
    let parser = find(&runs, "sidechain-aaaaaaaa");
    let text = std::fs::read_to_string(&path).unwrap();
    let own: u64 = (text.lines())
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            [PARSER, "a2", "a3", "a4"].contains(&v["uuid"].as_str().unwrap_or(""))
        })
        .map(|l| l.len() as u64 + 1)
        .sum();
    assert_eq!(parser["transcriptBytes"], own, "its own lines' bytes");
    // 2026-04-02T10:01:00Z, its last line's time, not its session's file's.
    assert_eq!(parser["updatedMs"], 1_775_124_060_000_i64);
    let now = mission_control::runs::now_ms();
    assert!(find(&runs, SESSION)["updatedMs"].as_i64().unwrap() > now - 60_000);
    // Left unanswered long ago: interrupted, though its session's file is live.
    assert_eq!(find(&runs, "sidechain-cccccccc")["status"], "interrupted");
}

/// How the runs of a store's session files were read as their scans allow.
#[derive(Debug, PartialEq)]
pub(super) struct ScannedReads {
    /// Side conversations read from past their file's start,
    pub started: usize,
    /// and up to before its end.
    pub ended: usize,
    /// Sessions that passed over their side lines unparsed.
    pub passed_over: usize,
}

/// Reads every run of store `root` as its session's scan lets it (a side conversation from
/// its first line to where it may stop, a session passing over its side lines unparsed), and
/// every line of its file as a whole, and checks that both read the same, timeline and all.
pub(super) fn reads_as_scanned(root: &Path) -> ScannedReads {
    let dir = unindexed(root);
    let layout = dir.layout().unwrap();
    let mut whole = layout.clone();
    (whole.runs.values_mut())
        .filter_map(|f| f.nesting.as_mut())
        .for_each(|n| {
            n.others = None;
            if let Some(inside) = n.inside.as_mut() {
                (inside.start, inside.end) = (None, None);
            }
        });
    let mut reads = ScannedReads {
        started: 0,
        ended: 0,
        passed_over: 0,
    };
    for (id, files) in &layout.runs {
        let file_len = std::fs::metadata(files.transcript.as_ref().unwrap())
            .unwrap()
            .len();
        reads.started += usize::from(files.start().is_some());
        let ended = files.start().is_some() && files.end().is_some_and(|e| e.offset < file_len);
        reads.ended += usize::from(ended);
        reads.passed_over += usize::from(files.others().is_some());
        let read = |layout: &mission_control::runs::Layout| {
            let detail = mission_control::runs::analyze_run(layout, id, &dir.opts, true);
            serde_json::to_value(detail.unwrap()).unwrap()
        };
        assert_eq!(read(&layout), read(&whole), "{id} in {}", root.display());
    }
    reads
}

#[test]
fn a_side_conversation_is_read_from_its_first_line_as_from_its_files_start() {
    let store = tempfile::tempdir().unwrap();
    let mut s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    // A subagent's side conversation whose first line the scan cannot read (its `data` is no
    // progress record), though the run's own reading takes it.
    let agent = "a9f00d1";
    let line = |uuid: &str, parent: Option<&str>, kind: &str, message: Value| {
        let mut l = side(uuid, parent, kind, message);
        l["agentId"] = json!(agent);
        l
    };
    let mut early = line(
        "c1",
        None,
        "user",
        json!({"role": "user", "content": "early_marker"}),
    );
    early["data"] = json!(5);
    s.line(early)
        .line(line("c2", Some("c1"), "assistant", said("late_marker")));
    let path = s.write();
    // The parser's and the tests' reads stop past the agent's unread first line (after their
    // own last lines); the agent's last line is the file's.
    let reads = reads_as_scanned(store.path());
    assert_eq!((reads.started, reads.ended), (3, 2));
    let layout = unindexed(store.path()).layout().unwrap();
    let start = |id: &str| layout.runs[id].start().map(|s| s.lines);
    let text = std::fs::read_to_string(&path).unwrap();
    let line_of = |marker: &str| text.lines().position(|l| l.contains(marker)).unwrap() as u64;
    assert_eq!(
        (start("sidechain-aaaaaaaa"), start("sidechain-bbbbbbbb")),
        (
            Some(line_of(&format!("\"uuid\":\"{PARSER}\""))),
            Some(line_of(&format!("\"uuid\":\"{TESTS}\"")))
        ),
        "each at its first line"
    );
    assert_eq!(
        start(&format!("agent-{agent}")),
        Some(line_of("early_marker")),
        "at the line the scan could not read"
    );
    let show = mctl_json(store.path(), &["show", &format!("agent-{agent}")]).to_string();
    assert!(
        show.contains("early_marker") && show.contains("late_marker"),
        "{show}"
    );
}

#[test]
fn a_side_conversations_read_stops_past_its_last_line_and_past_any_glued_one() {
    let store = tempfile::tempdir().unwrap();
    let s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    let path = s.write();
    // After both conversations: two of the session's lines glued into one (each run read past
    // it warns of it), then one more.
    let said_later = |text: &str| {
        json!({"type": "assistant", "uuid": text, "sessionId": SESSION,
            "timestamp": "2026-04-02T10:05:00.000Z", "message": said(text)})
    };
    let glued = format!("{}{}", said_later("g1"), said_later("g2"));
    let tail = format!("{glued}\n{}\n", said_later("g3"));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, tail.as_bytes()).unwrap();
    crate::support::set_mtime(&path, crate::support::OLD_MS);
    let reads = reads_as_scanned(store.path());
    assert_eq!(
        reads,
        ScannedReads {
            started: 2,
            ended: 2,
            passed_over: 1
        }
    );
    let dir = unindexed(store.path());
    let layout = dir.layout().unwrap();
    let parser = "sidechain-aaaaaaaa";
    let text = std::fs::read_to_string(&path).unwrap();
    let glued_end = (text.find(&glued).unwrap() + glued.len() + 1) as u64;
    assert_eq!(layout.runs[parser].end().map(|e| e.offset), Some(glued_end));
    let detail = mission_control::runs::analyze_run(&layout, parser, &dir.opts, false).unwrap();
    let glued_warnings = (detail.problems.iter())
        .filter(|p| p.message.contains("JSON values on one line"))
        .count();
    assert_eq!(glued_warnings, 1, "{:?}", detail.problems);

    // The file grew after the scan found where the parser's lines end: the read goes on to the
    // file's end, and takes the parser's new line.
    let more = side("a5", Some("a4"), "assistant", said("parser_more_marker"));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("{more}\n").as_bytes()).unwrap();
    let detail = mission_control::runs::analyze_run(&layout, parser, &dir.opts, true).unwrap();
    let shown = serde_json::to_string(&detail).unwrap();
    assert!(shown.contains("parser_more_marker"), "{shown}");
    // The session reads its file line by line: it counts the new side line too.
    let mut whole = layout.clone();
    (whole.runs.values_mut())
        .filter_map(|f| f.nesting.as_mut())
        .for_each(|n| n.others = None);
    let session = |layout: &mission_control::runs::Layout| {
        let detail = mission_control::runs::analyze_run(layout, SESSION, &dir.opts, true);
        serde_json::to_value(detail.unwrap()).unwrap()
    };
    assert!(layout.runs[SESSION].others().is_some());
    let read = session(&layout);
    assert_eq!(read, session(&whole));
    assert_eq!(read["run"]["sidechainLines"], 7, "{}", read["run"]);
}

#[test]
fn a_file_rewritten_to_its_length_after_its_scan_is_read_to_its_end() {
    let store = tempfile::tempdir().unwrap();
    let s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    let path = s.write();
    // A line of the session's after both conversations, long enough to become one of the
    // parser's below.
    let filler = json!({"type": "assistant", "uuid": "f1", "sessionId": SESSION,
        "timestamp": "2026-04-02T10:06:00.000Z", "message": said(&"f".repeat(300))})
    .to_string();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("{filler}\n").as_bytes()).unwrap();
    crate::support::set_mtime(&path, crate::support::OLD_MS);
    let dir = unindexed(store.path());
    let layout = dir.layout().unwrap();
    let parser = "sidechain-aaaaaaaa";
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find(&filler).unwrap() as u64;
    assert!(layout.runs[parser].end().is_some_and(|e| e.offset <= at));
    assert!(layout.runs[SESSION].others().is_some());

    // The file rewritten since the listing, to the same length: the filler is now the
    // parser's last line. A read with the listing's places goes on to the file's end.
    let more = |pad: usize| {
        let text = format!("parser_same_length_marker{}", "p".repeat(pad));
        let message = json!({"id": "msg_more", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": text}]});
        side("a5", Some("a4"), "assistant", message).to_string()
    };
    let more = more(filler.len() - more(0).len());
    assert_eq!(more.len(), filler.len());
    std::fs::write(&path, text.replace(&filler, &more)).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), text.len() as u64);
    let read = |layout: &mission_control::runs::Layout, id: &str| {
        let detail = mission_control::runs::analyze_run(layout, id, &dir.opts, true);
        serde_json::to_value(detail.unwrap()).unwrap()
    };
    let shown = read(&layout, parser);
    assert!(
        shown.to_string().contains("parser_same_length_marker"),
        "{shown}"
    );
    // As a listing made now reads both runs.
    let now = dir.layout().unwrap();
    assert_eq!(shown, read(&now, parser));
    assert_eq!(read(&layout, SESSION), read(&now, SESSION));
}

#[test]
fn reads_stop_early_only_where_the_scan_can_say_whose_lines_follow() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    std::fs::create_dir_all(&project).unwrap();
    let main = |uuid: &str, text: &str| {
        json!({"type": "assistant", "uuid": uuid, "sessionId": SESSION,
            "timestamp": "2026-04-02T10:05:00.000Z", "message": said(text)})
    };
    let asked = |text: &str| json!({"role": "user", "content": text});
    let lines = [
        main("m1", "hello"),
        side("r", None, "user", asked("first root")),
        // The same uuid again, under a line of the session: a conversation of its own for the
        // scan, though the first one's fold takes it too.
        side("r", Some("m1"), "user", asked("second root")),
        main("m2", "between"),
        side("k", Some("r"), "assistant", said("child_marker")),
        main("m3", "after"),
    ];
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    // A side line written with a space after its colon (as a tool that writes the JSON again
    // may), whose message is no object: its own conversation reports it damaged, as it does a
    // line Claude Code wrote.
    text.push_str(r#"{"type":"user","uuid":"u","isSidechain": true,"agentId":"a1","message":5}"#);
    text.push('\n');
    text.push_str(&format!("{}\n", main("m4", "last")));
    let path = project.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, text).unwrap();
    crate::support::set_mtime(&path, crate::support::OLD_MS);
    let reads = reads_as_scanned(store.path());
    assert_eq!(
        reads.ended, 0,
        "a uuid on two side lines: no read stops early"
    );
    assert_eq!(
        reads.passed_over, 1,
        "the session passes over the side lines it can"
    );
    let dir = unindexed(store.path());
    let layout = dir.layout().unwrap();
    let damaged = |id: &str| {
        let run = mission_control::runs::analyze_run(&layout, id, &dir.opts, false).unwrap();
        (run.problems.iter()).filter(|p| p.line == 7).count()
    };
    assert_eq!((damaged(SESSION), damaged("agent-a1")), (0, 1));
}

/// Store `root`, read without an index (each listing reads its layout again).
fn unindexed(root: &Path) -> mission_control::runs::RunsDir {
    use mission_control::runs::{RunOptions, RunsDir};
    RunsDir::open(root, RunOptions::default())
        .unwrap()
        .with_index(false)
}

/// The ids of the runs of `dir`'s layout, in order.
fn layout_ids(dir: &mission_control::runs::RunsDir) -> Vec<String> {
    let mut ids: Vec<String> = dir.layout().unwrap().runs.into_keys().collect();
    ids.sort();
    ids
}

/// Rewrites session file `path` with `from` replaced by `to` in it (an edit in its middle), and
/// a new side conversation appended: its first line, uuid `root`, saying `text`.
fn edit_and_start_side(path: &Path, (from, to): (&str, &str), root: &str, text: &str) {
    let edited = std::fs::read_to_string(path).unwrap().replace(from, to);
    let first = side(root, None, "user", json!({"role": "user", "content": text}));
    std::fs::write(path, format!("{edited}{first}\n")).unwrap();
}

#[test]
fn a_scan_kept_in_the_process_is_read_on_only_when_the_file_grew_in_place() {
    let store = tempfile::tempdir().unwrap();
    let mut s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    let dir = unindexed(store.path());
    let ids = layout_ids;
    assert_eq!(
        ids(&dir),
        [SESSION, "sidechain-aaaaaaaa", "sidechain-bbbbbbbb"]
    );
    // Appended: read on.
    s.line(side(
        "cccccccc-1",
        None,
        "user",
        json!({"role": "user", "content": "Review"}),
    ));
    s.write();
    assert_eq!(
        ids(&dir),
        [
            SESSION,
            "sidechain-aaaaaaaa",
            "sidechain-bbbbbbbb",
            "sidechain-cccccccc"
        ]
    );
    // Rewritten in place, as long as before: scanned again whole.
    let text = std::fs::read_to_string(&s.path).unwrap();
    std::fs::write(&s.path, text.replace("bbbbbbbb-", "dddddddd-")).unwrap();
    assert_eq!(
        ids(&dir),
        [
            SESSION,
            "sidechain-aaaaaaaa",
            "sidechain-cccccccc",
            "sidechain-dddddddd"
        ]
    );
    // Replaced by a longer file whose end differs: scanned again whole, not read on.
    let text = std::fs::read_to_string(&s.path).unwrap();
    let longer = (text.replace("aaaaaaaa-", "eeeeeeee-")).replace("Review", "Review it all");
    std::fs::write(&s.path, longer).unwrap();
    assert_eq!(
        ids(&dir),
        [
            SESSION,
            "sidechain-cccccccc",
            "sidechain-dddddddd",
            "sidechain-eeeeeeee"
        ]
    );
    // Edited in its middle and appended to: the bytes where the scan stopped are in place, so
    // it is read on, and the edit is not seen. The app's Refresh forgets what was kept, and
    // reads the file again whole.
    edit_and_start_side(&s.path, ("dddddddd-", "ffffffff-"), "gggggggg-1", "More");
    let read_on = [
        SESSION,
        "sidechain-cccccccc",
        "sidechain-dddddddd",
        "sidechain-eeeeeeee",
        "sidechain-gggggggg",
    ];
    assert_eq!(ids(&dir), read_on);
    dir.list_again().unwrap();
    let whole = [
        SESSION,
        "sidechain-cccccccc",
        "sidechain-eeeeeeee",
        "sidechain-ffffffff",
        "sidechain-gggggggg",
    ];
    assert_eq!(ids(&dir), whole);
}

#[test]
fn only_a_live_sessions_scan_is_kept_to_be_read_on() {
    let store = tempfile::tempdir().unwrap();
    let s = session_with_side_conversations(&store.path().join("-home-ana-app"));
    // Last written an hour ago: a session that is over.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let file = std::fs::File::options().append(true).open(&s.path).unwrap();
    file.set_modified(hour_ago).unwrap();
    let dir = unindexed(store.path());
    let ids = layout_ids;
    assert_eq!(
        ids(&dir),
        [SESSION, "sidechain-aaaaaaaa", "sidechain-bbbbbbbb"]
    );
    // Resumed: edited in its middle and appended to. What was kept of a live session would be
    // read on (the edit unseen, as above); this one's was not kept, so it is scanned whole.
    edit_and_start_side(&s.path, ("bbbbbbbb-", "ffffffff-"), "gggggggg-1", "More");
    let whole = [
        SESSION,
        "sidechain-aaaaaaaa",
        "sidechain-ffffffff",
        "sidechain-gggggggg",
    ];
    assert_eq!(ids(&dir), whole);
    // Live now: appended to again, it is read on.
    edit_and_start_side(&s.path, ("aaaaaaaa-", "eeeeeeee-"), "hhhhhhhh-1", "Again");
    let read_on = [
        SESSION,
        "sidechain-aaaaaaaa",
        "sidechain-ffffffff",
        "sidechain-gggggggg",
        "sidechain-hhhhhhhh",
    ];
    assert_eq!(ids(&dir), read_on);
}

#[test]
fn pinning_a_subagent_keeps_its_sessions_folder() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let s = session_with_side_conversations(&project);
    let values = s.tool_results();
    std::fs::write(values.join("toolu_A.txt"), "x\n".repeat(30_000)).unwrap();
    crate::support::set_mtime(&values.join("toolu_A.txt"), crate::support::OLD_MS);
    let dir = store.path();
    let planned = |dir: &Path| {
        let plan = mctl_json(dir, &["gc", "--older-than", "1d"]);
        plan["files"].as_array().unwrap().len()
    };
    assert_eq!(planned(dir), 1, "an idle session's value is collected");
    let out = crate::support::mctl(dir, &["pin", "sidechain-bbbbbbbb"]);
    assert!(out.status.success(), "{}", crate::support::stderr(&out));
    assert_eq!(
        planned(dir),
        0,
        "a pinned side conversation keeps the folder"
    );
}

/// The hits of `mctl search PATTERN ARGS...` in values, as (run, text line, seen).
fn value_hits(dir: &Path, pattern: &str, args: &[&str]) -> Vec<(String, u64, bool)> {
    let out = mctl_command()
        .args(["--runs-dir"])
        .arg(dir)
        .args(["search", pattern, "--in", "values", "--json"])
        .args(args)
        .output()
        .unwrap();
    (stdout(&out).lines())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|h| h["kind"] == "value")
        .map(|h| {
            let run = h["run"].as_str().unwrap().to_owned();
            (run, h["textLine"].as_u64().unwrap(), h["seen"] == true)
        })
        .collect()
}

#[test]
fn a_side_conversations_value_is_searched_as_its_own() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut s = Session::new(&project, SESSION);
    let values = s.tool_results();
    let saved =
        format!("/home/ana/.claude/projects/-home-ana-app/{SESSION}/tool-results/toolu_A.txt");
    let stub = super::stub("40KB", &saved, "needle one");
    s.prompt("Build it")
        .call("toolu_T1", "Task", json!({"prompt": "Write the parser"}));
    s.line(parser_asked())
        .line(parser_builds())
        .line(side(
            "a3",
            Some("a2"),
            "user",
            json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_A", "content": stub}]}),
        ))
        .result("toolu_T1", "Written", None)
        // The session, not the side conversation, reads line 5 of its value back.
        .call(
            "toolu_R",
            "Read",
            json!({"file_path": saved, "offset": 5, "limit": 1}),
        )
        .result("toolu_R", "     5→needle five", None)
        .answer("Done");
    s.write();
    let mut text: Vec<String> = (1..=4000).map(|i| format!("line {i}")).collect();
    text[0] = "needle one".into();
    text[4] = "needle five".into();
    std::fs::write(values.join("toolu_A.txt"), text.join("\n") + "\n").unwrap();
    let dir = store.path();
    let side_run = "sidechain-aaaaaaaa".to_owned();
    // Its preview showed line 1; line 5 was read back by another run.
    let want = vec![(side_run.clone(), 1, true), (side_run.clone(), 5, false)];
    assert_eq!(value_hits(dir, "needle", &[]), want);
    assert_eq!(value_hits(dir, "needle", &["--run", &side_run]), want);
    assert_eq!(value_hits(dir, "needle", &["--run", SESSION]), []);
}
