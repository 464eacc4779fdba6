//! Peek coverage and missed errors (`mctl coverage`) on hand-built runs: the peeks are written
//! as the harness records them, each the exact answer the core's peek gives.

use crate::support::*;
use mission_control::insights::{ErrorPattern, ValueCoverage};
use mission_control::retained::{peek_text, value_id, PeekRequest};
use mission_control::runs::{RunOptions, RunsDir};
use serde_json::{json, Value};
use std::fs;

/// 3,000 lines; error-looking ones at 2 (in the stub's head), 1,500 (in the elided middle, never
/// shown) and 2,000 (found by a query peek).
fn log() -> String {
    (1..=3000)
        .map(|i| match i {
            2 => "ERROR: config not found, using defaults\n".to_owned(),
            1500 => "thread 'main' panicked at disk full\n".to_owned(),
            2000 => "step 2000 failed: timeout\n".to_owned(),
            _ => format!("line {i} ok\n"),
        })
        .collect()
}

/// A `peek_value` call with `input` and the answer the model got for it (an error message for
/// a request it cannot answer).
fn peek(run: &mut RunFile, call: &str, input: Value, text: &str) {
    let id = input["id"].as_str().unwrap().to_owned();
    let request = match (input.get("query"), input.get("start")) {
        (Some(q), _) => PeekRequest::Query {
            text: q.as_str().unwrap().to_owned(),
        },
        (None, Some(s)) => PeekRequest::Range {
            start: s.as_u64().unwrap(),
            end: input.get("end").and_then(Value::as_u64),
        },
        _ => unreachable!(),
    };
    let (ok, content) = match peek_text(&value_id(&id), text, &request) {
        Ok(p) => (true, p.text),
        Err(e) => (false, e.to_string()),
    };
    run.event(json!({"type": "tool_call_started", "toolCallId": call, "name": "peek_value", "input": input, "summary": "peek"}));
    run.event(json!({"type": "tool_call_finished", "toolCallId": call, "result": {"ok": ok, "content": content, "metadata": null}}));
}

fn coverage(root: &std::path::Path, call: Option<&str>) -> Vec<ValueCoverage> {
    let dir = RunsDir::open(root, RunOptions::default())
        .unwrap()
        .with_index(false);
    mission_control::insights::coverage(&dir, "r", call, &ErrorPattern::default()).unwrap()
}

fn by_call<'a>(values: &'a [ValueCoverage], call: &str) -> &'a ValueCoverage {
    values.iter().find(|v| v.tool_call_id == call).unwrap()
}

#[test]
fn what_the_model_was_shown_of_each_value() {
    let runs = tempfile::tempdir().unwrap();
    let root = runs.path();
    let text = log();
    let wide: String = (1..=1000)
        .map(|i| format!("{i} {}\n", "w".repeat(100)))
        .collect();
    let mut r = RunFile::new(root, "r");
    r.user("read the logs")
        .tool("c1", "bash", &text, true)
        .tool("call.7", "read_file", &text, true)
        .tool("wide", "bash", &wide, true)
        .tool("gone", "bash", &text, true)
        .tool("never", "bash", &text, true)
        .tool("small", "bash", "ok\n", false);
    peek(
        &mut r,
        "p1",
        json!({"id": "c1", "start": 100, "end": 199}),
        &text,
    );
    peek(
        &mut r,
        "p2",
        json!({"id": "c1", "start": 150, "end": 250}),
        &text,
    );
    peek(
        &mut r,
        "p3",
        json!({"id": "c1", "start": 100, "end": 199}),
        &text,
    );
    peek(&mut r, "p4", json!({"id": "c1", "query": "failed"}), &text);
    peek(&mut r, "p5", json!({"id": "c1", "start": 5000}), &text);
    // By tool call id and by value id alike.
    peek(
        &mut r,
        "p6",
        json!({"id": "call.7", "start": 1, "end": 30}),
        &text,
    );
    peek(
        &mut r,
        "p7",
        json!({"id": value_id("call.7"), "start": 20, "end": 40}),
        &text,
    );
    // 400 lines of 100 bytes asked: the 16 KiB cap cuts the answer.
    peek(
        &mut r,
        "p8",
        json!({"id": "wide", "start": 1, "end": 400}),
        &wide,
    );
    peek(
        &mut r,
        "p9",
        json!({"id": "gone", "start": 10, "end": 19}),
        &text,
    );
    r.done();
    // A later dispatch, after a compaction: its peek counts too.
    r.event(json!({"type": "context_compacted", "summary": "earlier work"}));
    r.user("and the end?");
    peek(&mut r, "p10", json!({"id": "c1", "start": 2990}), &text);
    r.done().write();
    fs::remove_file(
        root.join("r.values")
            .join(format!("{}.txt", value_id("gone"))),
    )
    .unwrap();

    let values = coverage(root, None);
    let calls: Vec<&str> = values.iter().map(|v| v.tool_call_id.as_str()).collect();
    // Every result over the threshold, whatever its state; not the small one, nor the peeks.
    assert_eq!(calls, ["c1", "call.7", "wide", "gone", "never"]);

    let c1 = by_call(&values, "c1");
    let stub = mission_control::retained::stub_layout("c1", "bash", &text);
    let (head, tail) = (stub.head.unwrap(), stub.tail.unwrap());
    assert_eq!(c1.stub_lines, [[head.0, head.1], [tail.0, tail.1]]);
    assert_eq!(c1.total_lines, Some(3000));
    let peeks: Vec<(&str, Vec<[u64; 2]>, bool)> = c1
        .peeks
        .iter()
        .map(|p| (p.tool_call_id.as_str(), p.lines.clone(), p.ok))
        .collect();
    assert_eq!(
        peeks,
        [
            ("p1", vec![[100, 199]], true),
            ("p2", vec![[150, 250]], true),
            ("p3", vec![[100, 199]], true),
            ("p4", vec![[2000, 2000]], true),
            ("p5", vec![], false),
            ("p10", vec![[2990, 3000]], true),
        ]
    );
    assert_eq!(
        c1.peeks[0].request,
        *json!({"start": 100, "end": 199}).as_object().unwrap()
    );
    assert_eq!(
        c1.peeks[3].request,
        *json!({"query": "failed"}).as_object().unwrap()
    );
    assert!(c1.peeks[0].line < c1.peeks[5].line);
    // Distinct lines: the stub's, 100-250 and 2000 (the tail covers 2990-3000).
    let stub_count = (head.1 - head.0 + 1) + (tail.1 - tail.0 + 1);
    let tail_in_peek = (2990..=3000)
        .filter(|n| (tail.0..=tail.1).contains(n))
        .count() as u64;
    assert_eq!(c1.seen_lines, stub_count + 151 + 1 + (11 - tail_in_peek));
    // Showings: the stub's, 100 + 101 + 100 + 1 + 11 from the peeks.
    assert_eq!(c1.reread_lines, stub_count + 313 - c1.seen_lines);
    assert!((c1.coverage.unwrap() - c1.seen_lines as f64 / 3000.0).abs() < 1e-12);
    assert_eq!(c1.peek_bytes, c1.peeks.iter().map(|p| p.bytes).sum::<u64>());
    assert!(!c1.never_peeked);
    // Line 2 is in the stub, 2,000 was peeked: only 1,500 was never shown.
    assert_eq!(
        (c1.missed_errors.count, c1.missed_errors.lines.clone()),
        (1, vec![1500])
    );

    let c7 = by_call(&values, "call.7");
    assert_eq!(c7.value_id, value_id("call.7"));
    assert_eq!(c7.peeks.len(), 2, "by call id and by value id");
    assert_eq!(c7.missed_errors.lines, [1500, 2000]);

    let wide_cov = by_call(&values, "wide");
    let cut = peek_text(
        "wide",
        &wide,
        &PeekRequest::Range {
            start: 1,
            end: Some(400),
        },
    )
    .unwrap();
    assert!(cut.cut && cut.lines.len() < 400);
    assert_eq!(wide_cov.peeks[0].lines, [[1, *cut.lines.last().unwrap()]]);

    let gone = by_call(&values, "gone");
    assert_eq!(gone.state.as_str(), "unretained");
    assert_eq!(gone.peeks[0].lines, [[10, 19]]);

    let never = by_call(&values, "never");
    assert!(never.never_peeked && never.peeks.is_empty());
    assert_eq!(never.seen_lines, stub_count);
    assert_eq!(never.reread_lines, 0);

    // One value, by call id or by value id; an unknown one is an error.
    assert_eq!(coverage(root, Some("call.7"))[0].tool_call_id, "call.7");
    assert_eq!(
        coverage(root, Some(&value_id("call.7")))[0].tool_call_id,
        "call.7"
    );
    let dir = RunsDir::open(root, RunOptions::default()).unwrap();
    let err =
        mission_control::insights::coverage(&dir, "r", Some("nope"), &ErrorPattern::default())
            .unwrap_err();
    assert_eq!(err.code, mission_control::ErrorCode::UnknownCall);
    // A result the model saw whole has no coverage to tell: said, not an empty answer.
    let err =
        mission_control::insights::coverage(&dir, "r", Some("small"), &ErrorPattern::default())
            .unwrap_err();
    assert_eq!(err.code, mission_control::ErrorCode::NotRetained);
    assert!(err.message.contains("saw it whole"), "{}", err.message);
}

#[test]
fn mctl_coverage_prints_json_and_a_bar_per_value() {
    let runs = tempfile::tempdir().unwrap();
    let root = runs.path();
    let text = log();
    let mut r = RunFile::new(root, "r");
    r.user("go").tool("c1", "bash", &text, true);
    peek(
        &mut r,
        "p1",
        json!({"id": "c1", "start": 1490, "end": 1510}),
        &text,
    );
    r.done().write();
    let mctl = |args: &[&str]| {
        let out = mctl_command()
            .args(["--runs-dir", root.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Value = serde_json::from_str(&mctl(&["--json", "coverage", "r"])).unwrap();
    let v = &json[0];
    for field in [
        "toolCallId",
        "valueId",
        "tool",
        "state",
        "totalLines",
        "stubLines",
        "peeks",
        "seenLines",
        "coverage",
        "rereadLines",
        "peekBytes",
        "neverPeeked",
        "missedErrors",
    ] {
        assert!(v.get(field).is_some(), "{field} in {v}");
    }
    assert_eq!(v["peeks"][0]["lines"], json!([[1490, 1510]]));
    assert_eq!(v["missedErrors"], json!({"count": 1, "lines": [2000]}));
    let text_out = mctl(&["coverage", "r"]);
    assert!(
        text_out.contains("c1") && text_out.contains('█') && text_out.contains("1 peek"),
        "{text_out}"
    );
    assert!(
        text_out.contains("1 error-looking line never shown"),
        "{text_out}"
    );
    // Another pattern: only lines that start with "line 7".
    let custom: Value = serde_json::from_str(&mctl(&[
        "--json",
        "coverage",
        "r",
        "c1",
        "--error-pattern",
        "^line 7",
    ]))
    .unwrap();
    let stub = mission_control::retained::stub_layout("c1", "bash", &text);
    let shown = |n: u64| {
        [stub.head, stub.tail, Some((1490, 1510))]
            .into_iter()
            .flatten()
            .any(|(a, b)| (a..=b).contains(&n))
    };
    let want = text
        .lines()
        .zip(1u64..)
        .filter(|(l, n)| l.starts_with("line 7") && !shown(*n))
        .count();
    assert!(want > 100);
    assert_eq!(custom[0]["missedErrors"]["count"], want);
}
