//! The resume preview (`mctl resume`): both replay shapes of spec Part C pinned by golden files,
//! on a hand-built run with attachments, thinking, an unanswered call, a compaction marker with a
//! result whose call came before it, a retained result (stub) and one whose value file is gone.

use crate::support::*;
use insta::assert_snapshot;
use mission_control::insights::{ReplayShape, ResumePreview};
use mission_control::runs::{RunOptions, RunsDir};
use serde_json::json;

/// The threshold of these runs: small, so that the golden files stay readable.
const THRESHOLD: u64 = 200;

fn lines(n: usize, word: &str) -> String {
    (1..=n).map(|i| format!("{word} {i}\n")).collect()
}

fn call(id: &str, name: &str, input: serde_json::Value) -> serde_json::Value {
    json!({"type": "tool_call", "toolCallId": id, "name": name, "input": input})
}

fn assistant(r: &mut RunFile, content: serde_json::Value) {
    r.event(json!({"type": "assistant_message", "messageId": "a", "content": content, "usage": {"promptTokens": 10, "completionTokens": 5}}));
}

fn finished(r: &mut RunFile, id: &str, content: &str) {
    r.event(json!({"type": "tool_call_finished", "toolCallId": id, "result": {"ok": true, "content": content, "metadata": null}}));
}

fn run(root: &std::path::Path, provider: &str) {
    let mut r = RunFile::new(root, "r");
    r.event(json!({"type": "run_started", "cwd": "/w", "mode": "goal", "provider": provider, "model": "m"}));
    r.user("Fix the build.");
    assistant(
        &mut r,
        json!([
            {"type": "thinking", "text": "never replayed"},
            {"type": "text", "text": "Reading "},
            {"type": "text", "text": "first."},
            call("c1", "read_file", json!({"path": "Makefile", "lines": {"to": 9, "from": 1}})),
            call("unanswered", "bash", json!({"cmd": "ls"}))
        ]),
    );
    r.tool("c1", "read_file", "all: build\n", false);
    assistant(
        &mut r,
        json!([call("before", "bash", json!({"cmd": "make test"}))]),
    );
    r.event(
        json!({"type": "context_compacted", "summary": "Read the Makefile; running the tests."}),
    );
    // Its call came before the marker: its name is forgotten.
    finished(&mut r, "before", "tests: 3 passed\n");
    // Pending when the user speaks: text-fold drops it.
    finished(&mut r, "orphan", "dropped by text-fold\n");
    r.event(json!({"type": "user_message", "messageId": "u2", "text": "Now the full build log, please.", "attachments": [
        {"path": "notes.md", "content": "use make", "mime": "text/markdown"},
        {"path": "ci.yml", "content": "jobs: {}", "mime": "text/yaml"},
        {"path": "shot.png", "mime": "image/png", "dataUri": "data:image/png;base64,iVBORw0KGgo="}
    ]}));
    assistant(
        &mut r,
        json!([
            {"type": "thinking", "text": "never replayed"},
            {"type": "text", "text": "Building."},
            call("big", "bash", json!({"cmd": "make all", "env": {"Z": "1", "A": "2"}})),
            call("unanswered2", "bash", json!({"cmd": "ls"})),
            call("gone", "read_file", json!({"path": "build.log"}))
        ]),
    );
    r.tool("big", "bash", &lines(400, "compiling"), true);
    r.tool("gone", "read_file", &lines(30, "warning"), false);
    assistant(
        &mut r,
        json!([{"type": "text", "text": "The build is green."}]),
    );
    // Pending at the end: text-fold drops it.
    finished(&mut r, "late", "late result\n");
    r.done();
    r.write();
}

fn preview(
    root: &std::path::Path,
    shape: Option<ReplayShape>,
    without_values: bool,
) -> ResumePreview {
    let opts = RunOptions {
        threshold: THRESHOLD,
        ..RunOptions::default()
    };
    let dir = RunsDir::open(root, opts).unwrap().with_index(false);
    mission_control::insights::resume(&dir, "r", shape, without_values).unwrap()
}

fn pretty(p: &ResumePreview) -> String {
    serde_json::to_string_pretty(p).unwrap()
}

#[test]
fn structured_shape() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "anthropic");
    let p = preview(dir.path(), None, false);
    assert_eq!(p.shape, ReplayShape::Structured);
    assert_snapshot!("structured", pretty(&p));
}

#[test]
fn text_fold_shape_for_ollama() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "ollama");
    let p = preview(dir.path(), None, false);
    assert_eq!(p.shape, ReplayShape::TextFold);
    assert_snapshot!("text_fold", pretty(&p));
}

#[test]
fn without_values_every_result_rides_in_full() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "anthropic");
    let with = preview(dir.path(), Some(ReplayShape::Structured), false);
    let without = preview(dir.path(), Some(ReplayShape::Structured), true);
    assert_eq!(with.stubbed, 1);
    assert_eq!(without.stubbed, 0);
    let big = |p: &ResumePreview| {
        p.messages
            .iter()
            .find(|m| m.tool_call_id.as_deref() == Some("big"))
            .unwrap()
            .content
            .clone()
    };
    assert!(big(&with).starts_with("[retained #big]"));
    assert_eq!(big(&without), lines(400, "compiling"));
    let stub = &with
        .messages
        .iter()
        .find(|m| !m.stubs.is_empty())
        .unwrap()
        .stubs[0];
    assert_eq!(
        without.bytes - with.bytes,
        stub.full_bytes - stub.stub_bytes,
        "GC of the value costs the difference"
    );
    // The shape can be asked for whatever the provider.
    let folded = preview(dir.path(), Some(ReplayShape::TextFold), false);
    assert_eq!(folded.shape, ReplayShape::TextFold);
    assert!(folded.messages.iter().all(|m| m.role != "tool"));
}

#[test]
fn mctl_resume_prints_the_same_json() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path(), "anthropic");
    let threshold = THRESHOLD.to_string();
    let cli = mctl_json(
        dir.path(),
        &[
            "resume",
            "r",
            "--shape",
            "text-fold",
            "--threshold",
            &threshold,
        ],
    );
    let core = preview(dir.path(), Some(ReplayShape::TextFold), false);
    assert_eq!(cli, serde_json::to_value(&core).unwrap());
    let text = stdout(&mctl(
        dir.path(),
        &["resume", "r", "--without-values", "--threshold", &threshold],
    ));
    assert!(
        text.contains("structured shape, without value files; 0 stubbed"),
        "{text}"
    );
    let out = mctl(dir.path(), &["resume", "nope"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn odd_fields_drop_no_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = RunFile::new(dir.path(), "r");
    r.event(json!({"type": "user_message", "messageId": "u", "text": "go", "attachments": null}));
    assistant(
        &mut r,
        json!([
            {"type": "text", "text": "Calling."},
            {"type": "tool_call", "name": "no id"},
            "not a block",
            call("c1", "bash", json!({"cmd": "ls"}))
        ]),
    );
    r.event(json!({"type": "tool_call_finished", "toolCallId": "c1"}));
    r.event(json!({"type": "assistant_message", "messageId": "a2", "content": null}));
    r.write();
    let p = preview(dir.path(), Some(ReplayShape::Structured), false);
    let roles: Vec<&str> = p.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(p.messages[1].content, "Calling.");
    let calls = p.messages[1].tool_calls.as_ref().unwrap();
    assert_eq!(calls.len(), 1, "the block without an id is skipped, alone");
    assert_eq!(
        p.messages[2].content, "",
        "a result without content replays empty"
    );
}

#[test]
fn a_line_of_glued_values_is_skipped_whole_as_the_harness_replays_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = RunFile::new(dir.path(), "r");
    r.user("go");
    assistant(
        &mut r,
        json!([
            {"type": "text", "text": "Calling."},
            call("c1", "bash", json!({"cmd": "ls"})),
            call("c2", "bash", json!({"cmd": "pwd"})),
            call("c3", "bash", json!({"cmd": "id"}))
        ]),
    );
    finished(&mut r, "c1", "a\n");
    finished(&mut r, "c2", "/w\n");
    finished(&mut r, "c3", "root\n");
    let path = r.write();
    // The results of c1 and c2 written on one line, as a writer that lost a newline leaves them.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let glued = format!("{}{}", lines[2], lines[3]);
    lines.splice(2..4, [glued.as_str()]);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let p = preview(dir.path(), Some(ReplayShape::Structured), false);
    let roles: Vec<&str> = p.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    let calls = p.messages[1].tool_calls.as_ref().unwrap();
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        ["c3"],
        "the calls answered only on the glued line are dropped"
    );
    assert_eq!(
        (p.messages[2].tool_call_id.as_deref(), p.messages[2].line),
        (Some("c3"), 4)
    );
}

#[test]
fn a_provider_named_late_gets_its_own_shape() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = RunFile::new(dir.path(), "r");
    r.user("Fix the build.");
    assistant(
        &mut r,
        json!([{"type": "text", "text": "Reading."}, call("c1", "read_file", json!({}))]),
    );
    r.tool("c1", "read_file", "all: build\n", false);
    r.event(json!({"type": "run_started", "cwd": "/w", "mode": "goal", "provider": "ollama", "model": "m"}));
    assistant(&mut r, json!([{"type": "text", "text": "Done."}]));
    r.write();
    let asked = preview(dir.path(), Some(ReplayShape::TextFold), false);
    let given = preview(dir.path(), None, false);
    assert_eq!(given.shape, ReplayShape::TextFold);
    assert_eq!(pretty(&given), pretty(&asked));
    assert!(given.messages[2]
        .content
        .contains("[tool_result]\nall: build"));
}
