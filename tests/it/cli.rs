//! The CLI over generated runs directories: retention states at the threshold, odd call ids,
//! exact bytes out of `full`, `stub` and `peek`, exit codes, and a 30 MB transcript line.

use crate::support::*;
use mission_control::retained::{stub_for, value_id};
use serde_json::json;
use std::fs;

fn big(len: usize, seed: &str) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < len {
        s.push_str(&format!("{seed} line {i}\n"));
        i += 1;
    }
    s.truncate(len);
    s
}

#[test]
fn exactly_20480_bytes_stays_inline_and_20481_is_retained() {
    let dir = tempfile::tempdir().unwrap();
    let at = big(20_480, "at");
    let over = big(20_481, "over");
    assert_eq!((at.len(), over.len()), (20_480, 20_481));
    RunFile::new(dir.path(), "r")
        .user("go")
        .tool("at", "read_file", &at, false)
        .tool("over", "read_file", &over, true)
        .done()
        .write();
    let show = mctl_json(dir.path(), &["show", "r"]);
    assert_eq!(show["results"][0]["state"], "inline");
    assert_eq!(show["results"][1]["state"], "retained");
    assert_eq!(show["run"]["retained"], 1);
    assert_eq!(show["run"]["retainedBytes"], 20_481);
    assert_eq!(show["run"]["valueBytes"], 20_481);

    let out = mctl(dir.path(), &["stub", "r", "at"]);
    assert_eq!(out.status.code(), Some(1), "no stub for an inline result");
    assert!(stderr(&out).contains("20480 bytes"));
    let out = mctl(dir.path(), &["stub", "r", "over"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out), stub_for("over", "read_file", &over));

    // The threshold is a setting: at 8 KiB the first result would have been retained too.
    let show = mctl_json(dir.path(), &["show", "r", "--threshold", "8192"]);
    assert_eq!(show["results"][0]["state"], "unretained");
    // And `$MCTL_THRESHOLD` sets it, as it does for the app, unless the flag is given.
    let with_env = |args: &[&str]| {
        let out = mctl_command()
            .env("MCTL_THRESHOLD", "8KiB")
            .arg("--runs-dir")
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(
        with_env(&["--json", "show", "r"])["results"][0]["state"],
        "unretained"
    );
    let flag = with_env(&["--json", "show", "r", "--threshold", "20480"]);
    assert_eq!(flag["results"][0]["state"], "inline");
}

#[test]
fn unretained_and_damaged_results_and_strays() {
    let dir = tempfile::tempdir().unwrap();
    let a = big(30_000, "a");
    let b = big(30_000, "b");
    let mut run = RunFile::new(dir.path(), "r");
    run.user("go")
        .tool("a", "bash", &a, false)
        .tool("b", "bash", &b, true);
    let mut damaged = b.clone().into_bytes();
    damaged[100] ^= 1;
    run.value("b", &damaged);
    run.value("nobody", b"stray");
    run.done().write();
    let show = mctl_json(dir.path(), &["show", "r"]);
    assert_eq!(show["results"][0]["state"], "unretained");
    assert_eq!(show["results"][1]["state"], "damaged");
    assert_eq!(show["run"]["strays"], 1);
    assert_eq!(show["strays"][0]["name"], "nobody.txt");
    assert_eq!(
        show["results"][0]["contextBytes"], 30_000,
        "an unretained result rides along whole"
    );
}

/// One rule for where a peek reads, in the core, for every front end: the value file by
/// `value_id(call)` (a damaged or stray one too, as the model's `peek_value` reads it), else the
/// result's text in the transcript.
#[test]
fn a_peek_reads_by_one_rule_for_the_cli_and_the_app_alike() {
    use mission_control::retained::PeekRequest;
    use mission_control::runs::{RunOptions, RunsDir};
    let dir = tempfile::tempdir().unwrap();
    let a = big(30_000, "a");
    let b = big(30_000, "b");
    let mut run = RunFile::new(dir.path(), "r");
    run.user("go")
        .tool("a", "bash", &a, false)
        .tool("b", "bash", &b, true);
    let mut damaged = b.clone().into_bytes();
    damaged[0] = b'#';
    run.value("b", &damaged);
    run.value("nobody", b"stray line one\nstray x line two\n");
    run.done().write();
    // The app's peek console calls this very function.
    let core = RunsDir::open(dir.path(), RunOptions::default()).unwrap();
    let query = |text: &str| PeekRequest::Query { text: text.into() };
    for (call, text, source) in [
        ("nobody", "x", "file"),
        ("b", "#", "file"),
        ("a", "a", "transcript"),
    ] {
        let app = serde_json::to_value(core.peek("r", call, &query(text)).unwrap()).unwrap();
        let cli = mctl_json(dir.path(), &["peek", "r", call, "--query", text]);
        assert_eq!(cli, app, "peek of {call}");
        assert_eq!(cli["source"], source, "peek of {call}");
    }
    let stray = mctl_json(dir.path(), &["peek", "r", "nobody", "--query", "x"]);
    assert_eq!(stray["lines"], json!([2]));
    // The app opens a stray value file for viewing by the same rule.
    let (info, value) = core.open_value("r", "nobody").unwrap();
    assert_eq!(info.state, mission_control::runs::ValueState::Stray);
    assert_eq!((info.bytes, info.lines, info.stub.is_none()), (32, 2, true));
    assert_eq!(value.page(2, 1).unwrap().lines[0].text, "stray x line two");
    // A call with neither a file nor a result is unknown to both.
    let err = core.peek("r", "nobody-else", &query("x")).unwrap_err();
    assert_eq!(err.code, mission_control::ErrorCode::UnknownCall);
    let out = mctl(dir.path(), &["peek", "r", "nobody-else", "--query", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no result for tool call `nobody-else`"));
}

#[test]
fn odd_call_ids_map_to_safe_value_files_and_work_by_call_or_value_id() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(100);
    let ids = [
        "a/../b",
        "call.1",
        "調べる",
        long.as_str(),
        "tool call",
        "../../etc/passwd",
    ];
    let mut run = RunFile::new(dir.path(), "r");
    run.user("go");
    let texts: Vec<String> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| format!("{}needle-{i}\n", big(25_000, id)))
        .collect();
    for (id, text) in ids.iter().zip(&texts) {
        run.tool(id, "read_file", text, true);
    }
    run.done().write();
    let vdir = dir.path().join("r.values");
    let mut names: Vec<String> = fs::read_dir(&vdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert!(names.contains(&"a____b-eab86698.txt".to_owned()));
    assert!(names.contains(&"___-05ac777f.txt".to_owned()));
    assert_eq!(
        names.len(),
        ids.len(),
        "every value sits directly in r.values"
    );

    let show = mctl_json(dir.path(), &["show", "r"]);
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(show["results"][i]["state"], "retained", "{id}");
        assert_eq!(show["results"][i]["valueId"], value_id(id));
        for call in [id.to_string(), value_id(id)] {
            let full = mctl(dir.path(), &["full", "r", &call]);
            assert!(full.status.success(), "{}", stderr(&full));
            assert_eq!(full.stdout, texts[i].as_bytes(), "full {call}");
            let peek = mctl_json(
                dir.path(),
                &["peek", "r", &call, "--query", &format!("needle-{i}")],
            );
            assert_eq!(peek["matches"], 1, "peek {call}");
            assert_eq!(peek["source"], "file");
        }
    }
}

#[test]
fn errors_are_one_line_with_exit_1_and_usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    RunFile::new(dir.path(), "r")
        .user("go")
        .tool("t", "bash", "one\ntwo\n", false)
        .done()
        .write();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["show", "nope"], 1, "unknown run"),
        (&["full", "r", "missing"], 1, "no result"),
        (&["peek", "r", "t", "--lines", "5-6"], 1, "past the end"),
        (&["peek", "r", "t", "--lines", "0-1"], 1, "numbered from 1"),
        (&["peek", "r", "t", "--lines", "2-1"], 1, "after end"),
        (&["peek", "r", "t", "--query", ""], 1, "empty"),
        (&["peek", "r", "t", "--lines", "x-y"], 2, "not a line range"),
        (&["peek", "r", "t"], 2, ""),
        (&["frobnicate"], 2, ""),
    ];
    for (args, code, text) in cases {
        let out = mctl(dir.path(), args);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {}", stderr(&out));
        if *code == 1 {
            let err = stderr(&out);
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(err.contains(text), "{args:?}: {err}");
        }
    }
    let missing = dir.path().join("missing");
    let out = mctl(&missing, &["runs"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("runs directory"));
}

#[test]
fn peek_of_an_inline_result_reads_the_transcript_and_crlf_is_not_part_of_a_line() {
    let dir = tempfile::tempdir().unwrap();
    RunFile::new(dir.path(), "r")
        .user("go")
        .tool("t", "bash", "alpha\r\nbeta\r\ngamma", false)
        .done()
        .write();
    let out = mctl(dir.path(), &["peek", "r", "t", "--lines", "2-3"]);
    assert_eq!(
        stdout(&out),
        "[peek #t: lines 2-3 of 3]\n2: beta\n3: gamma\n"
    );
    let json = mctl_json(dir.path(), &["peek", "r", "t", "--lines", "1"]);
    assert_eq!(json["source"], "transcript");
    assert_eq!(json["lines"], json!([1, 2, 3]));
}

#[test]
fn a_crlf_value_file_peeks_without_carriage_returns() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=3000).map(|i| format!("row {i}\r\n")).collect();
    RunFile::new(dir.path(), "r")
        .user("go")
        .tool("t", "bash", &text, true)
        .done()
        .write();
    let out = mctl(dir.path(), &["peek", "r", "t", "--lines", "2999-"]);
    assert_eq!(
        stdout(&out),
        "[peek #t: lines 2999-3000 of 3000]\n2999: row 2999\n3000: row 3000\n"
    );
    let show = mctl_json(dir.path(), &["show", "r"]);
    assert_eq!(show["results"][0]["lines"], 3000);
}

#[test]
fn a_30_mb_line_reads_and_its_full_text_comes_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::with_capacity(31 << 20);
    while text.len() < 30 << 20 {
        text.push_str("{\"k\":\"v\\u00e9\",\"n\":[1,2,3]},");
    }
    text.push_str("\"THE-END\"");
    RunFile::new(dir.path(), "big")
        .user("go")
        .tool("t", "read_file", &text, true)
        .done()
        .write();
    assert!(fs::metadata(dir.path().join("big.jsonl")).unwrap().len() > 30 << 20);
    let show = mctl_json(dir.path(), &["show", "big"]);
    assert_eq!(show["results"][0]["state"], "retained");
    assert_eq!(show["results"][0]["lines"], 1);
    assert_eq!(show["results"][0]["bytes"], text.len());
    let full = mctl(dir.path(), &["full", "big", "t"]);
    assert!(full.stdout == text.as_bytes());
    let peek = mctl_json(dir.path(), &["peek", "big", "t", "--query", "THE-END"]);
    assert_eq!(peek["matches"], 1);
    assert!(peek["text"]
        .as_str()
        .unwrap()
        .contains("\"THE-END\" [cut: bytes"));
    let stub = stdout(&mctl(dir.path(), &["stub", "big", "t"]));
    assert!(stub.len() <= 3072);
    assert!(stub.contains("cut to its last"));
}

#[test]
fn a_unique_prefix_names_a_run_and_an_ambiguous_one_says_so() {
    let dir = tempfile::tempdir().unwrap();
    RunFile::new(dir.path(), "run_1_aaa")
        .user("a")
        .done()
        .write();
    RunFile::new(dir.path(), "run_1_bbb")
        .user("b")
        .done()
        .write();
    assert_eq!(
        mctl_json(dir.path(), &["show", "run_1_a"])["run"]["id"],
        "run_1_aaa"
    );
    let out = mctl(dir.path(), &["show", "run_1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("2 runs"));
}

#[test]
fn value_id_command_prints_the_spec_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let out = mctl(
        dir.path(),
        &["value-id", "toolu_01Xy7Qk", "call.1", "a/../b", ""],
    );
    assert_eq!(
        stdout(&out),
        "toolu_01Xy7Qk\ncall_1-2945fb5c\na____b-eab86698\n-811c9dc5\n"
    );
}

#[test]
fn human_output_strips_terminal_escapes_from_transcript_text() {
    let dir = tempfile::tempdir().unwrap();
    let esc = "\u{1b}]0;pwned\u{7}\u{1b}[2J";
    RunFile::new(dir.path(), "r")
        .event(
            json!({"type": "run_started", "cwd": null, "mode": esc, "provider": esc,
            "model": format!("m{esc}")}),
        )
        .user("\u{1b}]0;pwned\u{7}\u{1b}[31mred")
        .tool(esc, esc, "out", false)
        .event(json!({"type": format!("odd{esc}")}))
        .event(
            json!({"type": "run_error", "error": {"code": esc, "message": esc,
            "detail": null, "retryable": false}}),
        )
        .write();
    // Each of those fields reaches each command's text.
    let show = stdout(&mctl(dir.path(), &["show", "r"]));
    for said in ["m ]0;pwned", "odd ]0;pwned", "[2J: "] {
        assert!(show.contains(said), "{said:?} in {show}");
    }
    for args in [
        &["runs"][..],
        &["show", "r"],
        &["coverage", "r"],
        &["whatif", "r"],
    ] {
        let out = mctl(dir.path(), args);
        let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert!(!text.contains(['\u{1b}', '\u{7}']), "{args:?}: {text}");
    }
}

#[test]
fn a_value_file_of_invalid_utf8_never_peeks_over_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(dir.path(), "r");
    run.user("go")
        .tool("c1", "bash", &"a".repeat(30_000), false);
    run.value("c1", &[0xFF; 16_000]);
    run.done().write();
    let peek = mctl_json(dir.path(), &["peek", "r", "c1", "--lines", "1"]);
    assert_eq!(
        peek["source"], "file",
        "a peek reads the value file, as the harness does"
    );
    assert!(peek["bytes"].as_u64().unwrap() <= 16_384);
    assert_eq!(peek["cut"], true);
    let show = mctl_json(dir.path(), &["show", "r"]);
    assert_eq!(show["results"][0]["state"], "damaged");
    // A resume sends the stub whenever the value file exists, damaged or not (spec B.5).
    assert!(show["results"][0]["contextBytes"].as_u64().unwrap() < 3072);
}

#[test]
fn json_into_a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..200 {
        RunFile::new(dir.path(), &format!("run{i}"))
            .user(&"x".repeat(500))
            .done()
            .write();
    }
    let mut child = mctl_command()
        .arg("--runs-dir")
        .arg(dir.path())
        .args(["runs", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty());
}

#[test]
fn hostile_token_counts_are_left_out_and_never_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(dir.path(), "r");
    run.user("go");
    for _ in 0..2 {
        run.event(json!({"type": "assistant_message", "messageId": "a", "content": [], "usage": {"promptTokens": u64::MAX}}));
    }
    // At the bound: counted.
    let most = 1_000_000_000_000u64;
    run.event(json!({"type": "assistant_message", "messageId": "b", "content": [], "usage": {"promptTokens": most}}));
    run.done().write();
    let listed = &mctl_json(dir.path(), &["runs"])[0];
    assert_eq!(listed["inputTokens"], most, "no call spends 2^64 tokens");
    assert_eq!(listed["warnings"], 2, "each said");
}

#[test]
fn the_list_samples_value_files_and_one_run_compares_every_byte() {
    let dir = tempfile::tempdir().unwrap();
    let text = big(300_000, "v");
    let mut run = RunFile::new(dir.path(), "r");
    run.user("go").tool("t", "read_file", &text, true);
    let mut middle = text.clone().into_bytes();
    middle[150_000] ^= 1;
    run.value("t", &middle);
    run.done().write();
    assert_eq!(
        mctl_json(dir.path(), &["runs"])[0]["retained"],
        1,
        "sampled: size, head and tail match"
    );
    assert_eq!(
        mctl_json(dir.path(), &["show", "r"])["results"][0]["state"],
        "damaged"
    );
}

/// `--jobs` (and `$MCTL_JOBS`) limits how many files are read at once; the answer is the same
/// on one thread as on every core, with the index being built or without it: on the demo, and
/// on the real Claude Code sessions and Codex rollouts laid out as their stores (when
/// `../shared` is there).
#[test]
fn jobs_change_the_pace_not_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let out = mctl_command()
        .args(["demo", "--seed", "3"])
        .arg(&runs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let one = same_every_way(&runs, None, &dir.path().join("cache"));
    assert!(one.len() > 1000);
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/agents");
    if shared.is_dir() {
        for (agent, source, layout) in [
            ("claude-code", "claude", "projects/-home-user-app"),
            ("codex", "codex", "sessions/2026/01/01"),
        ] {
            let store = dir.path().join(agent);
            let folder = store.join(layout);
            fs::create_dir_all(&folder).unwrap();
            for file in fs::read_dir(shared.join(agent)).unwrap() {
                let file = file.unwrap().path();
                let name = file.file_name().unwrap().to_string_lossy().into_owned();
                if let Some(stem) = name.rsplit("__").next().filter(|n| n.ends_with(".jsonl")) {
                    fs::copy(&file, folder.join(stem)).unwrap();
                }
            }
            let root = store.join(layout.split('/').next().unwrap());
            let cache = dir.path().join(format!("cache-{agent}"));
            let answer = same_every_way(&root, Some(source), &cache);
            assert!(
                answer.len() > 1000,
                "{agent}: {}",
                String::from_utf8_lossy(&answer)
            );
        }
    } else {
        eprintln!(
            "{} is absent: the same answers are checked on the demo only",
            shared.display()
        );
    }
    for bad in ["0", "many"] {
        let out = mctl_command()
            .arg("--runs-dir")
            .arg(&runs)
            .arg("runs")
            .env("MCTL_JOBS", bad)
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("is not a number of jobs"),
            "{}",
            stderr(&out)
        );
    }
}

/// The listing of `runs` read on one core without the index, checked to be byte for byte the
/// listing on every core, with `$MCTL_JOBS`, and through a cold index built on every core and on
/// one.
fn same_every_way(
    runs: &std::path::Path,
    source: Option<&str>,
    cache: &std::path::Path,
) -> Vec<u8> {
    let listing = |extra: &[&str], env: Option<&str>| {
        let mut cmd = mctl_command();
        cmd.arg("--runs-dir").arg(runs);
        if let Some(source) = source {
            cmd.args(["--source", source]);
        }
        cmd.args(["runs", "--json"]).args(extra);
        cmd.env("MCTL_CACHE_DIR", cache);
        if let Some(n) = env {
            cmd.env("MCTL_JOBS", n);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    let one = listing(&["--no-index", "--jobs", "1"], None);
    assert_eq!(listing(&["--no-index"], None), one);
    assert_eq!(listing(&["--no-index"], Some("1")), one);
    // A cold index on every core, then on one (its files removed in between).
    let _ = fs::remove_dir_all(cache);
    assert_eq!(listing(&[], None), one);
    fs::remove_dir_all(cache).unwrap();
    assert_eq!(listing(&["--jobs", "1"], None), one);
    one
}

/// On a terminal, a listing that reads runs says how far it has come on stderr, and then what
/// it read; into a pipe or a file it says nothing.
#[test]
fn a_listing_shows_its_progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let out = mctl_command().arg("demo").arg(&runs).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let count = mctl_json(&runs, &["runs"]).as_array().unwrap().len();
    let listing = format!(
        "{} --runs-dir {} --no-index runs >/dev/null",
        env!("CARGO_BIN_EXE_mctl"),
        runs.display()
    );
    // `script` gives the command a terminal; the test hook shows progress from the start.
    let out = std::process::Command::new("script")
        .args(["-qec", &listing, "/dev/null"])
        .env("MCTL_TEST_PROGRESS_MS", "0")
        .env("MCTL_CACHE_DIR", dir.path().join("cache"))
        .env("MCTL_CONFIG_DIR", dir.path().join("config"))
        .output()
        .expect("script (util-linux) runs");
    let said = stdout(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains(&format!("read {count} runs (")), "{said:?}");
    let piped = mctl_command()
        .arg("--runs-dir")
        .arg(&runs)
        .args(["--no-index", "runs"])
        .env("MCTL_TEST_PROGRESS_MS", "0")
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert!(!stderr(&piped).contains("read "), "{}", stderr(&piped));
}

/// `mctl runs` prints every id whole, however long, so that it can be pasted into the next
/// command; the title is what gets cut.
#[test]
fn the_runs_table_never_cuts_an_id() {
    let dir = fixture("tolerant");
    let long = "run_1793527200000_with_a_name_much_longer_than_the_column";
    let first = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    fs::copy(&first, dir.path().join(format!("{long}.jsonl"))).unwrap();
    let out = mctl(dir.path(), &["--no-index", "runs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some(long)),
        "{table}"
    );
    // Every row keeps the columns lined up: the AGE column starts at the same place.
    let header = table.lines().next().unwrap();
    let at = header.find("AGE").unwrap();
    assert!(at > long.len(), "{header}");
}
