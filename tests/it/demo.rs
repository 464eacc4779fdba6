//! `mctl demo`: deterministic, and it holds what the docs promise.

use crate::support::*;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if entry.file_type().unwrap().is_dir() {
            for (n, b) in tree(&entry.path()) {
                out.push((format!("{name}/{n}"), b));
            }
        } else {
            out.push((name, fs::read(entry.path()).unwrap()));
        }
    }
    out.sort();
    out
}

fn demo(seed: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = mctl_command()
        .args(["demo", "--seed", seed])
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    dir
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = demo("7");
    let b = demo("7");
    let c = demo("8");
    let ta = tree(&a.path().join("runs"));
    assert_eq!(ta, tree(&b.path().join("runs")));
    assert_ne!(ta, tree(&c.path().join("runs")));
}

#[test]
fn the_demo_refuses_a_directory_that_is_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("mine.jsonl"), "{}\n").unwrap();
    let out = mctl(dir.path(), &["demo", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(fs::read(dir.path().join("mine.jsonl")).unwrap(), b"{}\n");
}

#[test]
fn the_demo_has_every_status_retention_state_and_a_torn_line() {
    let dir = demo("1");
    let runs_dir = dir.path().join("runs");
    let runs = mctl_json(&runs_dir, &["runs"]);
    let runs = runs.as_array().unwrap();
    let statuses: BTreeSet<&str> = runs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        BTreeSet::from(["cancelled", "done", "error", "interrupted", "running"])
    );
    let models: BTreeSet<&str> = runs.iter().filter_map(|r| r["model"].as_str()).collect();
    assert!(models.len() >= 4, "{models:?}");
    let sum = |k: &str| runs.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert!(sum("retained") >= 5);
    assert!(sum("unretained") >= 1 && sum("damaged") >= 1 && sum("strays") >= 1);
    assert!(
        runs.iter().any(|r| r["pendingBytes"].as_u64().unwrap() > 0),
        "a torn line"
    );
    assert!(
        runs.iter().any(|r| r["problems"].as_u64().unwrap() > 0),
        "a corrupt line"
    );
    assert!(
        runs.iter().any(|r| r["parentId"].is_string()),
        "a subagent run"
    );
    let running = runs.iter().find(|r| r["status"] == "running").unwrap();
    assert!(running["pendingBytes"].as_u64().unwrap() > 0);

    // The peek conversation found what it looked for in a retained value.
    let lock = runs
        .iter()
        .find(|r| r["title"].as_str().unwrap().contains("left-pad"))
        .unwrap();
    let show = mctl_json(&runs_dir, &["show", lock["id"].as_str().unwrap()]);
    let results = show["results"].as_array().unwrap();
    let read = results.iter().find(|r| r["tool"] == "read_file").unwrap();
    assert_eq!(read["state"], "retained");
    let peeked = results.iter().find(|r| r["tool"] == "peek_value").unwrap();
    let out = mctl(
        &runs_dir,
        &[
            "full",
            lock["id"].as_str().unwrap(),
            peeked["toolCallId"].as_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "[peek #{}: 1 of",
            read["valueId"].as_str().unwrap()
        )),
        "{text}"
    );
    assert!(text.contains("node_modules/left-pad"));
}

/// The demo's coloured build log: its escape sequences are bytes like any other, so its line
/// numbers, its stub's gutter and its peek answers are those of its real text.
#[test]
fn a_coloured_log_keeps_its_line_numbers_and_peek_answers() {
    use mission_control::retained::PeekRequest;
    use mission_control::runs::{RunOptions, RunsDir};
    let dir = demo("1");
    let runs = RunsDir::open(dir.path().join("runs"), RunOptions::default())
        .unwrap()
        .with_index(false);
    let detail = runs.detail("run_hostile_markup").unwrap();
    let log = detail.results.iter().find(|r| r.tool == "bash").unwrap();
    assert_eq!(log.state.as_str(), "retained");
    let full = runs
        .find_result("run_hostile_markup", &log.tool_call_id)
        .unwrap();
    let text = full.content.into_string().unwrap();
    assert!(text.contains("\u{1b}[1;31mFAILED\u{1b}[0m"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(log.lines, Some(lines.len() as u64));
    let range = PeekRequest::Range {
        start: 5,
        end: Some(7),
    };
    let peek = runs
        .peek("run_hostile_markup", &log.tool_call_id, &range)
        .unwrap();
    for n in 5..=7 {
        let shown = format!("{n}: {}\n", lines[n - 1]);
        assert!(
            peek.peek.text.contains(&shown),
            "line {n} as is: {}",
            peek.peek.text
        );
    }
    let query = PeekRequest::Query {
        text: "FAILED".to_owned(),
    };
    let found = runs
        .peek("run_hostile_markup", &log.tool_call_id, &query)
        .unwrap();
    let expected: Vec<u64> = (1..=lines.len() as u64)
        .filter(|&n| lines[n as usize - 1].contains("FAILED"))
        .collect();
    assert_eq!(found.peek.lines, expected);
    assert_eq!(expected.len(), 2, "the failing test and the summary");
}
