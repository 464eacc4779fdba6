//! `mctl diff`: two demo runs of the same task, one per model, aligned and pinned by a golden
//! file; their results' texts as a unified diff; runs of two directories; bad names refused.

use crate::support::*;
use insta::assert_snapshot;
use serde_json::Value;

/// The demo, and its two runs of "The release build is failing…": gpt-5-codex's, then
/// claude-sonnet-4-5's.
fn demo_pair() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = mctl_command()
        .args(["demo"])
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let runs = mctl_json(&dir.path().join("runs"), &["runs"]);
    let id = |model: &str| {
        runs.as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["model"] == model
                    && r["title"]
                        .as_str()
                        .unwrap()
                        .starts_with("The release build")
            })
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .unwrap()
    };
    (dir, id("gpt-5-codex"), id("claude-sonnet-4-5"))
}

fn runs(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("runs")
}

#[test]
fn two_runs_of_the_same_task_align_as_the_golden_file_says() {
    let (dir, a, b) = demo_pair();
    let diff = mctl_json(&runs(&dir), &["diff", &a, &b]);
    // The golden file: every row, every figure.
    assert_snapshot!("demo_pair", serde_json::to_string_pretty(&diff).unwrap());

    // What a reader of the golden file should see at once, said again plainly.
    assert_eq!(diff["a"]["model"], "gpt-5-codex");
    assert_eq!(diff["b"]["model"], "claude-sonnet-4-5");
    let rows = diff["rows"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["kind"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("user", "same"),
            ("tool", "same"), // the same build, the same 65 KiB log, retained on both
            ("tool", "differs"), // peek: the log's end on A, a search on B
            ("tool", "only-a"), // A read the end a second time
            ("tool", "same"), // the same file read
            ("tool", "only-b"), // B grepped for the conversion
            ("tool", "differs"), // another edit
            ("tool", "same"), // the build passes on both
            ("answer", "differs"), // in each model's words
        ]
    );
    assert_eq!(rows[2]["differs"], serde_json::json!(["input", "result"]));
    assert_eq!(rows[6]["differs"], serde_json::json!(["input"]));
    assert_eq!(rows[1]["a"]["result"]["state"], "retained");
    assert_eq!(diff["counts"]["resultsDiffer"], 1);
    assert!(diff["a"]["costUsd"].as_f64() < diff["b"]["costUsd"].as_f64());

    // The same diff the other way round: A and B swap, nothing else.
    let back = mctl_json(&runs(&dir), &["diff", &b, &a]);
    assert_eq!(back["a"], diff["b"]);
    let status = |d: &Value, i: usize| d["rows"][i]["status"].as_str().unwrap().to_owned();
    assert_eq!(status(&back, 3), "only-b");
    assert_eq!(status(&back, 5), "only-a");

    // The text table says the same.
    let text = stdout(&mctl(&runs(&dir), &["diff", &a, &b]));
    assert!(text.contains("4 rows same, 3 differ"), "{text}");
    assert!(text.contains("gpt-5-codex") && text.contains("claude-sonnet-4-5"));
}

#[test]
fn two_results_compare_as_a_unified_diff() {
    let (dir, a, b) = demo_pair();
    let diff = mctl_json(&runs(&dir), &["diff", &a, &b]);
    let call = |side: &str, row: usize| {
        diff["rows"][row][side]["toolCallId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // The two peeks: the log's last lines against the lines holding "error[".
    let (ca, cb) = (call("a", 2), call("b", 2));
    let text = stdout(&mctl(&runs(&dir), &["diff", &a, &b, "--results", &ca, &cb]));
    assert!(
        text.starts_with(&format!("--- {a} {ca}\n+++ {b} {cb}\n@@ -1,")),
        "{text}"
    );
    assert!(
        text.contains("\n 1893: error[E0308]: mismatched types\n"),
        "{text}"
    );
    assert!(text.contains("\n-1907: error: could not compile"), "{text}");

    let json = mctl_json(&runs(&dir), &["diff", &a, &b, "--results", &ca, &cb]);
    assert_eq!(json["identical"], false);
    assert_eq!(json["a"]["tool"], "peek_value");
    assert!(json["removed"].as_u64().unwrap() > json["added"].as_u64().unwrap());
    // The two builds' logs: the same bytes.
    let (la, lb) = (call("a", 1), call("b", 1));
    let same = mctl_json(&runs(&dir), &["diff", &a, &b, "--results", &la, &lb]);
    assert_eq!(same["identical"], true);
    assert_eq!(same["hunks"], serde_json::json!([]));
}

#[test]
fn runs_of_two_directories_and_bad_names() {
    let (dir, a, _) = demo_pair();
    let other = tempfile::tempdir().unwrap();
    RunFile::new(other.path(), "run_other")
        .user("The release build is failing on CI. Find out why and fix it.")
        .tool("c1", "bash", "ok\n", false)
        .done()
        .write();
    let out = mctl_command()
        .arg("--runs-dir")
        .arg(runs(&dir))
        .arg("--runs-dir")
        .arg(other.path())
        .args(["--json", "diff", &a, "run_other"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(diff["b"]["run"], "run_other");
    assert_eq!(
        diff["rows"][0]["status"], "same",
        "the same prompt anchors both"
    );

    for (args, message) in [
        (vec!["diff", &a, "run_nope"], "run_nope"),
        (vec!["diff", &a, "../x"], "../x"),
        (vec!["diff", &a, &a, "--results", "nope", "nope"], "nope"),
    ] {
        let out = mctl(&runs(&dir), &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(message), "{}", stderr(&out));
    }
}
