//! Memory follows what is shown: a transcript line too long to hold is streamed, its big strings
//! kept as spans of the file, and every answer is byte for byte the one a whole-line read gives.
//!
//! The test build takes the line bound from `MCTL_TEST_LINE_BOUND`, so each answer is asked
//! three ways of the same files: every line held whole (a bound no line reaches), the shipped
//! bound, and a bound of 4 KiB (nearly every line streamed, strings over 64 KiB as spans).

use crate::support::{mctl_command, stderr, RunFile};
use serde_json::{json, Value};
use std::path::Path;

const WHOLE: &str = "1000000000000";
const STREAMED: &str = "4096";

fn ask(dir: &Path, bound: Option<&str>, args: &[&str]) -> Vec<u8> {
    let mut cmd = mctl_command();
    cmd.arg("--runs-dir").arg(dir).arg("--no-index").args(args);
    if let Some(b) = bound {
        cmd.env("MCTL_TEST_LINE_BOUND", b);
    }
    let out = cmd.output().expect("mctl runs");
    assert!(
        out.status.success(),
        "mctl {args:?} (bound {bound:?}): {}",
        stderr(&out)
    );
    out.stdout
}

/// Every read command of every run of `dir` (and every result over the threshold of each).
fn questions(dir: &Path) -> Vec<Vec<String>> {
    let runs: Value = serde_json::from_slice(&ask(dir, Some(WHOLE), &["runs", "--json"])).unwrap();
    let mut qs = vec![
        vec!["runs".into(), "--json".into()],
        vec!["search".into(), "error".into(), "--json".into()],
    ];
    let ids: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    for id in &ids {
        for q in [
            &["show", "--json"][..],
            &["coverage", "--json"],
            &["resume", "--json"],
            &["export", "--format", "html"],
            &["export", "--format", "md"],
        ] {
            let mut q: Vec<String> = q.iter().map(|s| s.to_string()).collect();
            q.insert(1, id.clone());
            qs.push(q);
        }
        let detail: Value =
            serde_json::from_slice(&ask(dir, Some(WHOLE), &["show", id, "--json"])).unwrap();
        for r in detail["results"].as_array().unwrap() {
            if r["bytes"].as_u64().unwrap() <= 20_480 {
                continue;
            }
            let call = r["toolCallId"].as_str().unwrap().to_owned();
            for tail in [
                &["stub"][..],
                &["full"],
                &["peek", "--lines", "1-60"],
                &["peek", "--query", "error"],
            ] {
                let mut q = vec![tail[0].to_owned(), id.clone(), call.clone()];
                q.extend(tail[1..].iter().map(|s| s.to_string()));
                qs.push(q);
            }
        }
    }
    if ids.len() >= 2 {
        qs.push(vec![
            "diff".into(),
            ids[0].clone(),
            ids[1].clone(),
            "--json".into(),
        ]);
    }
    qs
}

/// An answer as compared: a search's hits come from files searched in parallel, so their order
/// and its time taken are not part of it.
fn answer(dir: &Path, bound: Option<&str>, args: &[&str]) -> Vec<u8> {
    let out = ask(dir, bound, args);
    if args[0] != "search" {
        return out;
    }
    let text = String::from_utf8(out).unwrap();
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("elapsedMs");
            }
            v.to_string()
        })
        .collect();
    lines.sort();
    lines.join("\n").into_bytes()
}

fn same_answers_every_way(dir: &Path) -> usize {
    let qs = questions(dir);
    for q in &qs {
        let args: Vec<&str> = q.iter().map(String::as_str).collect();
        let whole = answer(dir, Some(WHOLE), &args);
        for bound in [None, Some(STREAMED)] {
            let other = answer(dir, bound, &args);
            assert!(
                whole == other,
                "mctl {args:?} answers otherwise with line bound {bound:?}:\n{}\n---\n{}",
                String::from_utf8_lossy(&whole[..whole.len().min(2000)]),
                String::from_utf8_lossy(&other[..other.len().min(2000)]),
            );
        }
    }
    qs.len()
}

/// A build log of about `bytes` bytes: escapes, quotes, tabs, non-ASCII, a format character,
/// and an error line every few hundred.
fn log(bytes: usize, seed: usize) -> String {
    let mut s = String::with_capacity(bytes + 128);
    let mut n = 0;
    while s.len() < bytes {
        n += 1;
        if (n + seed) % 331 == 0 {
            s.push_str(&format!("error[E{n:04}]: mismatched types \"here\"\n"));
        } else {
            s.push_str(&format!(
                "{n:08} compiling crate_{} ok\tété 日本 \u{200B}\\ \u{1}\r\n",
                n % 97
            ));
        }
    }
    s
}

#[test]
fn answers_on_huge_results_are_the_same_streamed_or_held() {
    let dir = tempfile::tempdir().unwrap();
    let big = log(5 << 20, 0);
    let other = log(5 << 20, 7);
    let mut a = RunFile::new(dir.path(), "run_1700000000000_0000big1");
    a.event(json!({"type": "run_started", "cwd": "/w", "provider": "anthropic", "model": "claude-sonnet-4-5"}))
        // A prompt over a placeholder's head: its row and the run's title show its start.
        .user(&format!("fix the build {}", "please ".repeat(20_000)))
        .tool("call_kept", "bash", &big, true)
        .tool("call_lost", "bash", &other, false)
        .event(json!({"type": "tool_call_started", "toolCallId": "p1", "name": "peek_value", "input": {"id": "call_kept", "start": 1, "end": 40}}))
        .event(json!({"type": "tool_call_finished", "toolCallId": "p1", "result": {"ok": true, "content": big.lines().take(40).collect::<Vec<_>>().join("\n")}}))
        .done()
        .write();
    let mut b = RunFile::new(dir.path(), "run_1700000001000_0000big2");
    b.user("fix the build")
        .tool("call_kept", "bash", &big, true)
        .done()
        .write();
    let asked = same_answers_every_way(dir.path());
    assert!(asked >= 20, "{asked} questions");
}

#[test]
fn answers_on_the_demo_are_the_same_streamed_or_held() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let out = mctl_command()
        .args(["demo", "--seed", "1"])
        .arg(&runs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = same_answers_every_way(&runs);
    assert!(asked >= 50, "{asked} questions");
}

#[test]
fn a_huge_line_that_is_not_json_text_is_reported_and_the_rest_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = RunFile::new(dir.path(), "run_1700000000000_00broken");
    r.user("go").tool("c1", "bash", "small", false);
    let path = r.write();
    // A 6 MB result whose string holds a lone surrogate, then a good line after it.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "{{\"schemaVersion\":1,\"seq\":9,\"ts\":1,\"event\":{{\"type\":\"tool_call_finished\",\"toolCallId\":\"c2\",\"result\":{{\"ok\":true,\"content\":\"{}\\ud800\"}}}}}}\n",
        "x".repeat(6 << 20)
    ));
    text.push_str("{\"schemaVersion\":1,\"seq\":10,\"ts\":2,\"event\":{\"type\":\"run_result\",\"result\":{}}}\n");
    std::fs::write(&path, text).unwrap();
    let detail: Value = serde_json::from_slice(&ask(
        dir.path(),
        None,
        &["show", "run_1700000000000_00broken", "--json"],
    ))
    .unwrap();
    let problems = detail["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["line"] == 4 && p["message"].as_str().unwrap().contains("surrogate")),
        "{problems:?}"
    );
    assert_eq!(detail["run"]["status"], "done", "the line after it is read");
}
