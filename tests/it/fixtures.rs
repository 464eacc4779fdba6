//! Tolerant reading of the checked-in `tests/fixtures/tolerant` runs directory: torn and corrupt
//! lines, unknown events and keys, a newer schema, CRLF, summaries without transcripts, and a run
//! called `foo.values` beside a run `foo`.

use crate::support::*;

#[test]
fn every_run_is_listed_with_the_status_of_spec_a4() {
    let dir = fixture("tolerant");
    let runs = mctl_json(dir.path(), &["runs"]);
    let ids: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [
            "corrupt",
            "crlf",
            "errored",
            "foo",
            "foo.values",
            "only-summary",
            "redispatched",
            "torn"
        ]
    );
    let status = |id: &str| find(&runs, id)["status"].as_str().unwrap().to_owned();
    assert_eq!(status("corrupt"), "done");
    assert_eq!(
        status("crlf"),
        "cancelled",
        "run_error `aborted` means cancelled"
    );
    assert_eq!(
        status("errored"),
        "error",
        "the last dispatch ended in run_error"
    );
    assert_eq!(
        status("redispatched"),
        "interrupted",
        "no terminal event after the last user message, old file"
    );
    assert_eq!(status("torn"), "interrupted");
    assert_eq!(status("only-summary"), "done");
}

#[test]
fn a_recent_run_without_terminal_event_is_running() {
    let dir = fixture("tolerant");
    set_mtime(
        &dir.path().join("torn.jsonl"),
        mission_control::runs::now_ms() - 60_000,
    );
    let runs = mctl_json(dir.path(), &["runs"]);
    assert_eq!(find(&runs, "torn")["status"], "running");
    let runs = mctl_json(dir.path(), &["runs", "--running-window", "30s"]);
    assert_eq!(
        find(&runs, "torn")["status"],
        "interrupted",
        "the window is a setting"
    );
}

#[test]
fn a_torn_last_line_is_pending_not_a_problem() {
    let dir = fixture("tolerant");
    let show = mctl_json(dir.path(), &["show", "torn"]);
    assert_eq!(show["run"]["events"], 3);
    assert_eq!(show["run"]["problems"], 0);
    assert!(show["run"]["pendingBytes"].as_u64().unwrap() > 0);
    assert_eq!(show["problems"].as_array().unwrap().len(), 0);
    assert_eq!(
        show["run"]["title"], "Hello there",
        "trimmed, whitespace collapsed"
    );
    assert_eq!(show["run"]["inputTokens"], 100);
    assert_eq!(show["run"]["model"], "claude-sonnet-4-5");
}

#[test]
fn corrupt_unknown_and_newer_lines_are_reported_with_line_numbers_and_the_rest_is_shown() {
    let dir = fixture("tolerant");
    let show = mctl_json(dir.path(), &["show", "corrupt"]);
    let problems: Vec<(u64, String)> = show["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["line"].as_u64().unwrap(),
                p["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        (2, "corrupt"),
        (3, "corrupt"),
        (4, "unknown-event"),
        (5, "unknown-keys"),
        (6, "newer-schema"),
        (8, "invalid"),
    ];
    assert_eq!(problems, expected.map(|(l, k)| (l, k.to_owned())));
    assert!(show["problems"][3]["message"]
        .as_str()
        .unwrap()
        .contains("shiny"));
    assert!(show["problems"][3]["message"]
        .as_str()
        .unwrap()
        .contains("mood"));
    let run = &show["run"];
    assert_eq!(run["problems"], 3, "unreadable lines");
    assert_eq!(run["warnings"], 3);
    assert_eq!(run["newerSchema"], true);
    assert_eq!(run["status"], "done");
    // Every line has its place in the timeline, in file order.
    let lines: Vec<u64> = show["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, (1..=9).collect::<Vec<_>>());
    let types: Vec<&str> = show["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types[1], "unreadable");
    assert_eq!(types[3], "hologram_beamed");
    assert_eq!(show["results"][0]["toolCallId"], "t1");
    assert_eq!(show["results"][0]["lines"], 2);
}

#[test]
fn a_crlf_transcript_reads_like_an_lf_one() {
    let dir = fixture("tolerant");
    let show = mctl_json(dir.path(), &["show", "crlf"]);
    assert_eq!(show["run"]["events"], 2);
    assert_eq!(show["run"]["problems"], 0);
    assert_eq!(show["run"]["errorCode"], "aborted");
}

#[test]
fn a_summary_without_transcript_is_shown_and_the_temp_file_ignored() {
    let dir = fixture("tolerant");
    let show = mctl_json(dir.path(), &["show", "only-summary"]);
    assert_eq!(show["run"]["hasTranscript"], false);
    assert_eq!(show["run"]["title"], "A run whose transcript is gone");
    assert_eq!(show["problems"][0]["line"], 0);
}

#[test]
fn foo_values_is_both_the_folder_of_run_foo_values_and_the_value_dir_of_foo() {
    let dir = fixture("tolerant");
    let runs = mctl_json(dir.path(), &["runs"]);
    let foo = find(&runs, "foo");
    assert_eq!(
        foo["valueFiles"], 1,
        "only *.txt files directly inside count"
    );
    assert_eq!(foo["strays"], 1);
    let own = find(&runs, "foo.values");
    assert_eq!(
        own["valueFiles"], 0,
        "its own checkpoints are not value files"
    );
    assert_eq!(own["status"], "done");
}

#[test]
fn runs_dir_comes_from_the_flag_before_or_after_the_subcommand_or_the_environment() {
    let dir = fixture("tolerant");
    let before = mctl_command()
        .arg("--runs-dir")
        .arg(dir.path())
        .args(["runs", "--json"])
        .output()
        .unwrap();
    let after = mctl_command()
        .args(["runs", "--json", "--runs-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let env = mctl_command()
        .args(["runs", "--json"])
        .env("MCTL_RUNS_DIR", dir.path())
        .output()
        .unwrap();
    for out in [&before, &after, &env] {
        assert!(out.status.success(), "{}", stderr(out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 8);
    }
}
