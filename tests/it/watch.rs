//! Live tailing and watching: exact sequences of events, none lost, none duplicated.

use crate::support::*;
use mission_control::runs::{now_ms, RunOptions};
use mission_control::watch::{watch, Change, Tail};
use serde_json::json;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

fn line(seq: u64, event: serde_json::Value) -> String {
    format!(
        "{}\n",
        json!({"schemaVersion": 1, "runId": "r", "seq": seq, "ts": 1_790_000_000_000u64 + seq, "event": event})
    )
}

fn user(seq: u64) -> String {
    line(
        seq,
        json!({"type": "user_message", "messageId": "u", "text": format!("message {seq}"), "attachments": []}),
    )
}

fn append(path: &Path, text: &str) {
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

fn opts() -> RunOptions {
    RunOptions {
        now_ms: now_ms(),
        ..RunOptions::default()
    }
}

fn lines_of(update: &mission_control::watch::TailUpdate) -> Vec<u64> {
    update.events.iter().map(|e| e.line).collect()
}

#[test]
fn lines_appended_one_at_a_time_arrive_once_each_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    fs::write(&path, "").unwrap();
    let mut tail = Tail::new(dir.path(), "r", opts());
    assert!(tail.poll().unwrap().events.is_empty());
    for seq in 0..50 {
        append(&path, &user(seq));
        let u = tail.poll().unwrap();
        assert_eq!(lines_of(&u), [seq + 1]);
        assert!(!u.reset);
    }
    assert!(tail.poll().unwrap().events.is_empty(), "nothing twice");
    assert_eq!(tail.run().events, 50);
    assert_eq!(tail.run().dispatches, 50);
}

#[test]
fn a_burst_of_thousands_arrives_whole_and_updates_the_run_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    let mut tail = Tail::new(dir.path(), "r", opts());
    append(&path, &user(0));
    assert_eq!(lines_of(&tail.poll().unwrap()), [1]);
    let burst: String = (1..=5000)
        .map(|s| {
            line(
                s,
                json!({"type": "assistant_message", "content": [], "usage": {"promptTokens": 1}}),
            )
        })
        .collect();
    append(&path, &burst);
    append(
        &path,
        &line(
            5001,
            json!({"type": "run_result", "result": {"status": "done"}}),
        ),
    );
    let u = tail.poll().unwrap();
    assert_eq!(lines_of(&u), (2..=5002).collect::<Vec<_>>());
    let run = tail.run();
    assert_eq!(run.input_tokens, 5000);
    assert_eq!(run.status.as_str(), "done");
}

#[test]
fn a_line_written_byte_by_byte_waits_for_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    fs::write(&path, user(0)).unwrap();
    let mut tail = Tail::new(dir.path(), "r", opts());
    assert_eq!(lines_of(&tail.poll().unwrap()), [1]);
    let next = user(1);
    for (i, b) in next.bytes().enumerate() {
        append(&path, std::str::from_utf8(&[b]).unwrap());
        let u = tail.poll().unwrap();
        if i + 1 < next.len() {
            assert!(u.events.is_empty(), "torn at byte {i}");
            assert_eq!(u.pending_bytes, i as u64 + 1);
        } else {
            assert_eq!(lines_of(&u), [2]);
            assert_eq!(u.pending_bytes, 0);
        }
    }
    assert_eq!(tail.run().problems, 0, "a torn line is never a problem");
}

#[test]
fn a_line_of_twenty_megabytes_arriving_in_pieces_is_one_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    fs::write(&path, user(0)).unwrap();
    let mut tail = Tail::new(dir.path(), "r", opts());
    tail.poll().unwrap();
    let big = line(
        1,
        json!({"type": "tool_call_finished", "toolCallId": "t", "result": {"ok": true, "content": "x".repeat(20 << 20)}}),
    );
    for piece in big.as_bytes().chunks(1 << 20) {
        append(&path, std::str::from_utf8(piece).unwrap());
        let u = tail.poll().unwrap();
        assert!(u.events.is_empty() || lines_of(&u) == [2]);
    }
    assert_eq!(tail.run().results, 1);
    assert_eq!(tail.run().unretained, 1);
}

#[test]
fn a_transcript_that_shrinks_or_is_replaced_is_read_again_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    fs::write(&path, format!("{}{}{}", user(0), user(1), user(2))).unwrap();
    let mut tail = Tail::new(dir.path(), "r", opts());
    assert_eq!(lines_of(&tail.poll().unwrap()), [1, 2, 3]);
    // Truncated, then written again.
    fs::write(&path, user(0)).unwrap();
    let u = tail.poll().unwrap();
    assert!(u.reset);
    assert_eq!(lines_of(&u), [1]);
    assert_eq!(
        tail.run().events,
        1,
        "the old events are gone, none counted twice"
    );
    // Replaced by another file (same size or not): a new identity.
    let tmp = dir.path().join("r.jsonl.new");
    fs::write(&tmp, format!("{}{}", user(0), user(1))).unwrap();
    fs::rename(&tmp, &path).unwrap();
    let u = tail.poll().unwrap();
    assert!(u.reset);
    assert_eq!(lines_of(&u), [1, 2]);
    assert_eq!(tail.run().events, 2);
}

fn next(rx: &std::sync::mpsc::Receiver<Change>) -> Change {
    rx.recv_timeout(Duration::from_secs(30))
        .expect("a change within 30 s")
}

#[test]
fn the_watcher_reports_new_runs_appends_and_removed_value_directories() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let name = root.display().to_string();
    let (_handle, rx) = watch(std::slice::from_ref(&root), opts()).unwrap();
    let path = root.join("r.jsonl");
    append(&path, &user(0));
    assert_eq!(
        next(&rx),
        Change::RunAdded {
            dir: name.clone(),
            run: "r".into()
        }
    );
    match next(&rx) {
        Change::Appended { run, lines, .. } => {
            assert_eq!(run, "r");
            assert_eq!(lines.iter().map(|l| l.line).collect::<Vec<_>>(), [1]);
        }
        other => panic!("{other:?}"),
    }
    fs::create_dir(root.join("r.values")).unwrap();
    assert_eq!(
        next(&rx),
        Change::ValuesAdded {
            dir: name.clone(),
            run: "r".into()
        }
    );
    // A hundred appends, each seen exactly once, in order (however the watcher groups them).
    for seq in 1..=100 {
        append(&path, &user(seq));
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut seen = Vec::new();
    while seen.len() < 100 {
        if let Change::Appended { lines, .. } = next(&rx) {
            seen.extend(lines.iter().map(|l| l.line));
        }
    }
    assert_eq!(seen, (2..=101).collect::<Vec<_>>());
    fs::remove_dir(root.join("r.values")).unwrap();
    assert_eq!(
        next(&rx),
        Change::ValuesRemoved {
            dir: name.clone(),
            run: "r".into()
        }
    );
    append(
        &path,
        &line(
            200,
            json!({"type": "run_result", "result": {"status": "done"}}),
        ),
    );
    assert!(matches!(next(&rx), Change::Appended { .. }));
    assert_eq!(
        next(&rx),
        Change::Finished {
            dir: name.clone(),
            run: "r".into(),
            status: "done".into()
        }
    );
    fs::remove_file(&path).unwrap();
    assert_eq!(
        next(&rx),
        Change::RunRemoved {
            dir: name,
            run: "r".into()
        }
    );
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "nothing more"
    );
}

/// Runs `mctl watch --json` plus `extra` on a fresh directory while one line is appended to
/// run `r`, and returns what it printed of `r` (and `polling` notices), up to that line's
/// report. Readiness comes from its own output: run `ready` is there before it starts, and its
/// report says the first scan is done, so the append that follows is a change it sees.
fn mctl_watch_json(extra: &[&str]) -> Vec<serde_json::Value> {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    append(&dir.path().join("ready.jsonl"), &user(0));
    let mut child = Killed(
        mctl_command()
            .args([
                "--runs-dir",
                dir.path().to_str().unwrap(),
                "watch",
                "--json",
            ])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let next = || {
        rx.recv_timeout(Duration::from_secs(20))
            .expect("mctl watch printed nothing for 20 s")
    };
    let mut seen = Vec::new();
    loop {
        let v = next();
        let ready = v["run"] == "ready";
        if v["kind"] == "polling" {
            seen.push(v);
        }
        if ready {
            break;
        }
    }
    append(&dir.path().join("r.jsonl"), &user(0));
    loop {
        let v = next();
        if v["run"] == "r" {
            let done = v["kind"] == "appended";
            seen.push(v);
            if done {
                break;
            }
        }
    }
    drop(child);
    seen
}

#[test]
fn mctl_watch_poll_says_so_and_still_reports() {
    let lines = mctl_watch_json(&["--poll"]);
    assert_eq!(lines[0]["kind"], "polling");
    assert_eq!(lines[0]["reason"], "polling was asked for (--poll)");
    assert_eq!(lines[0]["intervalMs"], 500);
    assert_eq!(lines[1]["kind"], "run-added");
    assert_eq!(
        lines[2]["lines"][0],
        json!({"line": 1, "type": "user_message"})
    );
}

#[test]
fn mctl_watch_prints_json_lines() {
    let lines = mctl_watch_json(&[]);
    assert_eq!(lines[0]["kind"], "run-added");
    assert_eq!(lines[1]["kind"], "appended");
    assert_eq!(lines[1]["run"], "r");
    assert_eq!(
        lines[1]["lines"][0],
        json!({"line": 1, "type": "user_message"})
    );
    let _ = OLD_MS;
}

#[test]
fn mctl_watch_of_a_relative_runs_directory_reports_value_files_removed() {
    // The notices name absolute paths; a runs directory given relative to the working directory
    // must still be matched with them.
    use std::io::BufRead;
    let cwd = tempfile::tempdir().unwrap();
    let root = cwd.path().join("runs");
    fs::create_dir(&root).unwrap();
    let content = "a long tool output line\n".repeat(1_000);
    fs::create_dir(root.join("r.values")).unwrap();
    fs::write(root.join("r.values/call-1.txt"), &content).unwrap();
    append(
        &root.join("r.jsonl"),
        &(user(0) + &tool_result(1, "call-1", &content)),
    );
    let mut child = Killed(
        mctl_command()
            .current_dir(cwd.path())
            .args(["--runs-dir", "runs", "watch", "--json"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    let until = |kind: &str| loop {
        let v = (rx.recv_timeout(Duration::from_secs(30)))
            .unwrap_or_else(|_| panic!("no {kind} within 30 s"));
        if v["kind"] == kind {
            return v;
        }
    };
    until("values-added");
    // Watched natively within the first tick; then the removal comes from a notice.
    std::thread::sleep(Duration::from_millis(1_500));
    fs::remove_file(root.join("r.values/call-1.txt")).unwrap();
    let removed = until("value-files-removed");
    assert_eq!(
        (removed["run"].as_str(), removed["values"].clone()),
        (Some("r"), json!(["call-1"]))
    );
}

/// Copies a runs directory one level deep (value directories hold only files), every transcript
/// left out: the test writes those itself.
fn copy_without_transcripts(src: &Path, dst: &Path) {
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            fs::create_dir(&to).unwrap();
            for file in fs::read_dir(entry.path()).unwrap() {
                let file = file.unwrap();
                if file.file_type().unwrap().is_file() {
                    fs::copy(file.path(), to.join(file.file_name())).unwrap();
                }
            }
        } else if kind.is_file() && !entry.file_name().to_string_lossy().ends_with(".jsonl") {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
}

#[test]
fn a_tail_fed_in_pieces_tells_the_same_run_as_a_whole_read() {
    use mission_control::runs::{analyze_run, Layout};
    let demo = tempfile::tempdir().unwrap();
    mission_control::demo::write_demo(demo.path(), 11, now_ms()).unwrap();
    let tolerant = fixture("tolerant");
    let mut compared = 0;
    for src in [tolerant.path(), demo.path()] {
        let live = tempfile::tempdir().unwrap();
        copy_without_transcripts(src, live.path());
        let source = Layout::read(src).unwrap();
        for (id, files) in &source.runs {
            let Some(transcript) = &files.transcript else {
                continue;
            };
            let bytes = fs::read(transcript).unwrap();
            let path = live.path().join(format!("{id}.jsonl"));
            fs::write(&path, "").unwrap();
            let mut tail = Tail::new(live.path(), id, opts());
            // Pieces of every size, so lines are torn everywhere.
            let mut at = 0;
            for size in [1usize, 7, 300, 4096, 65_536].iter().cycle() {
                if at >= bytes.len() {
                    break;
                }
                let end = (at + size).min(bytes.len());
                OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap()
                    .write_all(&bytes[at..end])
                    .unwrap();
                tail.poll().unwrap();
                at = end;
            }
            let layout = Layout::read(live.path()).unwrap();
            let whole = analyze_run(&layout, id, &opts(), false).unwrap().run;
            assert_eq!(
                serde_json::to_value(tail.run()).unwrap(),
                serde_json::to_value(whole).unwrap(),
                "run {id} of {}",
                src.display()
            );
            compared += 1;
        }
    }
    assert!(compared >= 15, "compared {compared} runs");
}

#[test]
fn a_value_file_written_after_the_tail_started_backs_its_retained_result() {
    use mission_control::runs::RetentionState;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    append(&path, &user(0));
    let mut tail = Tail::new(dir.path(), "r", opts());
    assert_eq!(tail.poll().unwrap().events.len(), 1);
    // What the harness does: the value file first, then the line that refers to it.
    let content = "line of a long tool output\n".repeat(1_000);
    fs::create_dir(dir.path().join("r.values")).unwrap();
    fs::write(dir.path().join("r.values/call-1.txt"), &content).unwrap();
    append(
        &path,
        &line(
            1,
            json!({"type": "tool_call_started", "toolCallId": "call-1", "name": "bash", "input": {}}),
        ),
    );
    append(
        &path,
        &line(
            2,
            json!({"type": "tool_call_finished", "toolCallId": "call-1", "result": {"ok": true, "content": content}}),
        ),
    );
    let update = tail.poll().unwrap();
    let result = update
        .events
        .iter()
        .find_map(|e| e.result.clone())
        .expect("the result's event");
    assert_eq!(result.state, RetentionState::Retained);
    let run = tail.run();
    assert_eq!((run.retained, run.unretained), (1, 0));
    assert_eq!(
        (run.value_files, run.value_bytes),
        (1, content.len() as u64)
    );
}

#[test]
fn a_value_file_listed_while_it_was_written_backs_its_result_once_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.jsonl");
    append(&path, &user(0));
    // The tail lists the directory while the harness has the file open, not written yet.
    fs::create_dir(dir.path().join("r.values")).unwrap();
    fs::write(dir.path().join("r.values/call-1.txt"), "").unwrap();
    let mut tail = Tail::new(dir.path(), "r", opts());
    tail.poll().unwrap();
    let content = "line of a long tool output\n".repeat(1_000);
    fs::write(dir.path().join("r.values/call-1.txt"), &content).unwrap();
    append(&path, &tool_result(1, "call-1", &content));
    tail.poll().unwrap();
    let run = tail.run();
    assert_eq!((run.retained, run.damaged), (1, 0));
    assert_eq!(
        (run.value_files, run.value_bytes),
        (1, content.len() as u64)
    );
}

#[test]
fn a_result_read_before_its_value_file_was_written_is_read_again_once_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let name = root.display().to_string();
    let content = "a long tool output line\n".repeat(1_000);
    fs::create_dir(root.join("r.values")).unwrap();
    fs::write(root.join("r.values/call-1.txt"), "").unwrap();
    let path = root.join("r.jsonl");
    append(&path, &user(0));
    let (handle, rx) = watch(std::slice::from_ref(&root), opts()).unwrap();
    eventually("the value directory watched", || handle.value_dirs().0 == 1);
    drain(&rx);
    // The line lands while its file is still empty: the result is damaged, as a resume sees it.
    append(&path, &tool_result(1, "call-1", &content));
    until(&rx, |c| matches!(c, Change::Appended { .. }));
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.retained, run.damaged), (0, 1));
    // Written and closed: the run is read again, with the file as it is now.
    fs::write(root.join("r.values/call-1.txt"), &content).unwrap();
    eventually("the result retained", || {
        let run = handle.run(&name, "r").unwrap();
        (run.retained, run.damaged, run.value_bytes) == (1, 0, content.len() as u64)
    });
}

fn tool_result(seq: u64, call: &str, content: &str) -> String {
    line(
        seq,
        json!({"type": "tool_call_started", "toolCallId": call, "name": "bash", "input": {}}),
    ) + &line(
        seq + 1,
        json!({"type": "tool_call_finished", "toolCallId": call, "result": {"ok": true, "content": content}}),
    )
}

#[test]
fn the_watcher_reports_value_files_removed_inside_a_value_directory() {
    use mission_control::runs::{analyze_run, Layout, Verify};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let name = root.display().to_string();
    let content = "a long tool output line\n".repeat(1_000);
    fs::create_dir(root.join("r.values")).unwrap();
    fs::write(root.join("r.values/call-1.txt"), &content).unwrap();
    fs::write(root.join("r.values/call-2.txt"), &content).unwrap();
    let path = root.join("r.jsonl");
    append(&path, &(user(0) + &tool_result(1, "call-1", &content)));
    append(&path, &tool_result(3, "call-2", &content));
    let (handle, rx) = watch(std::slice::from_ref(&root), opts()).unwrap();
    assert_eq!(
        next(&rx),
        Change::RunAdded {
            dir: name.clone(),
            run: "r".into()
        }
    );
    assert!(matches!(next(&rx), Change::Appended { lines, .. } if lines.len() == 5));
    assert!(matches!(next(&rx), Change::ValuesAdded { .. }));
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.retained, run.unretained, run.value_files), (2, 0, 2));

    // A GC (or a hand) removes one file; the directory stays.
    fs::remove_file(root.join("r.values/call-1.txt")).unwrap();
    assert_eq!(
        next(&rx),
        Change::ValueFilesRemoved {
            dir: name.clone(),
            run: "r".into(),
            values: vec!["call-1".into()]
        }
    );
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.retained, run.unretained, run.value_files), (1, 1, 1));

    // A file no result refers to (yet) is a stray.
    fs::write(root.join("r.values/extra.txt"), "x").unwrap();
    assert_eq!(
        next(&rx),
        Change::ValueFilesAdded {
            dir: name.clone(),
            run: "r".into(),
            values: vec!["extra".into()]
        }
    );
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.value_files, run.strays), (2, 1));
    let sampled = RunOptions {
        verify: Verify::Sampled,
        ..opts()
    };
    let whole = analyze_run(&Layout::read(&root).unwrap(), "r", &sampled, false).unwrap();
    assert_eq!(
        serde_json::to_value(&run).unwrap(),
        serde_json::to_value(&whole.run).unwrap(),
        "the watcher's run is the run a whole read gives"
    );
    assert!(handle.run(&name, "nope").is_none());
    assert!(
        rx.recv_timeout(Duration::from_millis(1_500)).is_err(),
        "nothing more"
    );
}

/// Takes every change until none comes for 300 ms (a watcher that never goes quiet fails it
/// within 30 s).
fn drain(rx: &std::sync::mpsc::Receiver<Change>) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while rx.recv_timeout(Duration::from_millis(300)).is_ok() {
        assert!(
            std::time::Instant::now() < until,
            "the watcher never went quiet"
        );
    }
}

/// Waits (up to 30 s) until `ok` holds.
fn eventually(what: &str, ok: impl Fn() -> bool) {
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while !ok() {
        assert!(std::time::Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn value_directories_are_watched_natively_not_looked_at_each_second() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let name = root.display().to_string();
    let content = "a long tool output line\n".repeat(1_000);
    for run in ["a", "b", "c"] {
        fs::create_dir(root.join(format!("{run}.values"))).unwrap();
        fs::write(root.join(format!("{run}.values/call-1.txt")), &content).unwrap();
        let path = root.join(format!("{run}.jsonl"));
        append(&path, &(user(0) + &tool_result(1, "call-1", &content)));
    }
    let (handle, rx) = watch(std::slice::from_ref(&root), opts()).unwrap();
    eventually("every value directory watched", || {
        handle.value_dirs().0 == 3
    });
    drain(&rx);

    // Nothing changing: no value directory is looked at, and nothing wakes the watcher.
    let (looks, wakeups) = (handle.value_dirs().1, handle.wakeups());
    std::thread::sleep(Duration::from_millis(2_500));
    assert_eq!(handle.value_dirs().1, looks, "looked at while watched");
    assert_eq!(handle.wakeups(), wakeups, "woken while nothing changed");

    // A file removed inside one is told, and the run model follows.
    fs::remove_file(root.join("b.values/call-1.txt")).unwrap();
    let removed = Change::ValueFilesRemoved {
        dir: name.clone(),
        run: "b".into(),
        values: vec!["call-1".into()],
    };
    assert_eq!(
        until(&rx, |c| matches!(c, Change::ValueFilesRemoved { .. })),
        removed
    );
    let run = handle.run(&name, "b").unwrap();
    assert_eq!((run.retained, run.unretained, run.value_files), (0, 1, 0));
    // Reading a value file is no change.
    fs::read(root.join("a.values/call-1.txt")).unwrap();
    fs::write(root.join("b.values/call-1.txt"), &content).unwrap();
    assert_eq!(
        until(&rx, |c| matches!(c, Change::ValueFilesAdded { .. })),
        Change::ValueFilesAdded {
            dir: name.clone(),
            run: "b".into(),
            values: vec!["call-1".into()],
        }
    );

    // A value directory removed and made again is watched again.
    fs::remove_dir_all(root.join("c.values")).unwrap();
    until(
        &rx,
        |c| matches!(c, Change::ValuesRemoved { run, .. } if run == "c"),
    );
    fs::create_dir(root.join("c.values")).unwrap();
    fs::write(root.join("c.values/call-1.txt"), &content).unwrap();
    until(
        &rx,
        |c| matches!(c, Change::ValuesAdded { run, .. } if run == "c"),
    );
    eventually("the new directory watched", || handle.value_dirs().0 == 3);
    fs::write(root.join("c.values/extra.txt"), "x").unwrap();
    until(
        &rx,
        |c| matches!(c, Change::ValueFilesAdded { run, values, .. } if run == "c" && values == &["extra"]),
    );
    assert_eq!(
        handle.value_dirs().1,
        looks,
        "every change came from a notice"
    );
    let run = handle.run(&name, "c").unwrap();
    assert_eq!((run.retained, run.value_files, run.strays), (1, 2, 1));

    // Moved away and back at once (the same directory, whose watch went with the move): it is
    // watched again, and a removal in it is still told.
    fs::rename(root.join("c.values"), root.join("c.moved")).unwrap();
    fs::rename(root.join("c.moved"), root.join("c.values")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    eventually("watched again", || handle.value_dirs().0 == 3);
    fs::remove_file(root.join("c.values/extra.txt")).unwrap();
    until(
        &rx,
        |c| matches!(c, Change::ValueFilesRemoved { run, values, .. } if run == "c" && values == &["extra"]),
    );
}

#[test]
fn the_watcher_polls_when_asked_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let name = root.display().to_string();
    let (_handle, rx) =
        mission_control::watch::watch_polling(std::slice::from_ref(&root), opts(), "asked")
            .unwrap();
    assert_eq!(
        next(&rx),
        Change::Polling {
            dir: name.clone(),
            reason: "asked".into(),
            interval_ms: 500
        }
    );
    let path = root.join("r.jsonl");
    append(&path, &user(0));
    assert_eq!(
        next(&rx),
        Change::RunAdded {
            dir: name,
            run: "r".into()
        }
    );
    let mut seen = Vec::new();
    for seq in 1..=20 {
        append(&path, &user(seq));
        std::thread::sleep(Duration::from_millis(40));
    }
    while seen.len() < 21 {
        if let Change::Appended { lines, .. } = next(&rx) {
            seen.extend(lines.iter().map(|l| l.line));
        }
    }
    assert_eq!(seen, (1..=21).collect::<Vec<_>>());
}

#[test]
fn the_watchers_list_is_the_list_a_whole_read_gives() {
    let demo = tempfile::tempdir().unwrap();
    mission_control::demo::write_demo(demo.path(), 5, now_ms()).unwrap();
    let tolerant = fixture("tolerant");
    for root in [tolerant.path(), demo.path()] {
        let (handle, _rx) = watch(&[root.to_path_buf()], opts()).unwrap();
        let watched = handle.runs(&root.display().to_string()).unwrap();
        let listed = open_runs_dir(root, opts()).list().unwrap();
        assert!(listed.len() >= 8, "{} runs", listed.len());
        assert_eq!(
            serde_json::to_value(&watched).unwrap(),
            serde_json::to_value(&listed).unwrap(),
            "{}",
            root.display()
        );
        assert!(handle.runs("/elsewhere").is_none());
    }
}

/// The first look reads the transcripts on every core, the most recently written first, and
/// tells each run once, its lines after it: the same changes a read one by one tells.
#[test]
fn the_first_look_tells_each_run_once_the_newest_first() {
    let demo = tempfile::tempdir().unwrap();
    mission_control::demo::write_demo(demo.path(), 5, now_ms()).unwrap();
    let mut by_age: Vec<(u128, String)> = fs::read_dir(demo.path())
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let id = name.strip_suffix(".jsonl")?.to_owned();
            let modified = e.metadata().unwrap().modified().unwrap();
            let ms = modified
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis();
            Some((ms, id))
        })
        .collect();
    by_age.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let (handle, rx) = watch(&[demo.path().to_path_buf()], opts()).unwrap();
    let name = demo.path().display().to_string();
    let listed = handle.runs(&name).unwrap();
    let mut added = Vec::new();
    let mut lines: std::collections::HashMap<String, u64> = Default::default();
    while let Ok(change) = rx.recv_timeout(Duration::from_millis(500)) {
        match change {
            Change::RunAdded { run, .. } => added.push(run),
            Change::Appended { run, lines: l, .. } => {
                assert!(added.contains(&run), "{run}: lines before the run");
                *lines.entry(run).or_default() += l.len() as u64;
            }
            _ => {}
        }
    }
    let mut once = added.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), added.len(), "a run told twice: {added:?}");
    // Every run listed, a run of a summary only too.
    once.sort();
    let mut ids: Vec<String> = listed.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    assert_eq!(once, ids);
    assert_eq!(added[0], by_age[0].1, "the newest run first");
    // Each run's lines, as many as the timeline a whole read gives (unreadable lines too).
    let dir = open_runs_dir(demo.path(), opts());
    for run in &listed {
        let timeline = dir.detail(&run.id).unwrap().events.len() as u64;
        assert_eq!(
            lines.get(&run.id).copied().unwrap_or(0),
            timeline,
            "{}",
            run.id
        );
    }
}

#[test]
fn a_watcher_with_nothing_changing_stays_idle() {
    // Reading a transcript opens it; those notices must not wake the watcher to read it again.
    let demo = tempfile::tempdir().unwrap();
    mission_control::demo::write_demo(demo.path(), 3, now_ms()).unwrap();
    let (handle, rx) = watch(&[demo.path().to_path_buf()], opts()).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    while rx.try_recv().is_ok() {}
    let settled = handle.wakeups();
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(handle.wakeups(), settled, "woken while nothing changed");
    assert!(rx.try_recv().is_err(), "nothing reported");
    // And it still wakes for a real change.
    append(&demo.path().join("fresh.jsonl"), &user(0));
    assert!(matches!(next(&rx), Change::RunAdded { .. }));
    assert!(handle.wakeups() > settled);
}

/// Waits for the first change `pick` accepts, skipping others (figures are checked after).
fn until(rx: &std::sync::mpsc::Receiver<Change>, pick: impl Fn(&Change) -> bool) -> Change {
    loop {
        let c = next(rx);
        if pick(&c) {
            return c;
        }
    }
}

#[test]
fn the_watchers_runs_follow_files_coming_and_going() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let name = root.display().to_string();
    let content = "a long tool output line\n".repeat(1_000);
    let path = root.join("r.jsonl");
    append(&path, &(user(0) + &tool_result(1, "call-1", &content)));
    fs::write(
        root.join("r.summary.json"),
        r#"{"parentId": "p", "status": "running"}"#,
    )
    .unwrap();
    let (handle, rx) = watch(std::slice::from_ref(&root), opts()).unwrap();
    drain(&rx);
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.unretained, run.parent_id.as_deref()), (1, Some("p")));

    // The value directory comes after the run began, with the file already in it.
    fs::create_dir(root.join("r.tmp-values")).unwrap();
    fs::write(root.join("r.tmp-values/call-1.txt"), &content).unwrap();
    fs::write(root.join("r.tmp-values/stray.txt"), "x").unwrap();
    fs::rename(root.join("r.tmp-values"), root.join("r.values")).unwrap();
    until(&rx, |c| matches!(c, Change::ValuesAdded { .. }));
    let run = handle.run(&name, "r").unwrap();
    assert_eq!(
        (run.value_files, run.strays, run.retained, run.unretained),
        (2, 1, 1, 0),
        "files of a new directory count, and back the results they name"
    );

    // A file restored for a result already counted makes it retained again.
    fs::remove_file(root.join("r.values/call-1.txt")).unwrap();
    until(&rx, |c| matches!(c, Change::ValueFilesRemoved { .. }));
    // Written whole and renamed into place, as the harness writes value files: a look at the
    // directory between a plain write's create and its last byte would see a short file.
    fs::write(root.join("call-1.tmp"), &content).unwrap();
    fs::rename(root.join("call-1.tmp"), root.join("r.values/call-1.txt")).unwrap();
    until(&rx, |c| matches!(c, Change::ValueFilesAdded { .. }));
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.retained, run.unretained), (1, 0));

    // The summary goes, the transcript stays: the run changed.
    fs::remove_file(root.join("r.summary.json")).unwrap();
    assert_eq!(
        until(&rx, |c| matches!(c, Change::Summarised { .. })),
        Change::Summarised {
            dir: name.clone(),
            run: "r".into()
        }
    );
    assert_eq!(handle.run(&name, "r").unwrap().parent_id, None);

    // The transcript goes, a summary is back: a run of a summary only.
    fs::write(root.join("r.summary.json"), r#"{"title": "kept"}"#).unwrap();
    until(&rx, |c| matches!(c, Change::Summarised { .. }));
    fs::remove_file(&path).unwrap();
    assert_eq!(
        until(&rx, |c| matches!(c, Change::Reset { .. })),
        Change::Reset {
            dir: name.clone(),
            run: "r".into(),
            lines: 0
        }
    );
    let run = handle.run(&name, "r").unwrap();
    assert_eq!((run.has_transcript, run.title.as_str()), (false, "kept"));

    // A link named like a transcript is no run (a listing does not count it either).
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.join("r.summary.json"), root.join("l.jsonl")).unwrap();
        // A real run made after the link is reported after the link's notice was handled.
        append(&root.join("z.jsonl"), &user(0));
        until(
            &rx,
            |c| matches!(c, Change::RunAdded { run, .. } if run == "z"),
        );
        assert!(handle.run(&name, "l").is_none());
        assert!(handle.run(&name, "z").is_some());
    }
}

#[test]
fn a_runs_directory_that_cannot_be_read_is_left_to_a_listing_to_explain() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("runs");
    fs::create_dir(&root).unwrap();
    let (handle, _rx) = watch(std::slice::from_ref(&root), opts()).unwrap();
    let name = root.display().to_string();
    assert_eq!(handle.runs(&name).map(|r| r.len()), Some(0));
    fs::remove_dir(&root).unwrap();
    fs::write(&root, "not a directory").unwrap();
    // Whatever the notices, a look at everything finds it unreadable.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while handle.runs(&name).is_some() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(handle.runs(&name).is_none());
}

#[test]
fn one_watcher_follows_several_runs_directories() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let dirs = [a.path().to_path_buf(), b.path().to_path_buf()];
    let (handle, rx) = watch(&dirs, opts()).unwrap();
    append(&a.path().join("r.jsonl"), &user(0));
    append(&b.path().join("r.jsonl"), &(user(0) + &user(1)));
    let mut added = Vec::new();
    let mut lines = std::collections::BTreeMap::new();
    while added.len() < 2 || lines.values().sum::<usize>() < 3 {
        match next(&rx) {
            Change::RunAdded { dir, run } => added.push((dir, run)),
            Change::Appended { dir, lines: l, .. } => *lines.entry(dir).or_insert(0) += l.len(),
            other => panic!("{other:?}"),
        }
    }
    let (na, nb) = (
        a.path().display().to_string(),
        b.path().display().to_string(),
    );
    added.sort();
    let mut want = vec![(na.clone(), "r".to_string()), (nb.clone(), "r".to_string())];
    want.sort();
    assert_eq!(added, want);
    assert_eq!((lines[&na], lines[&nb]), (1, 2));
    assert_eq!(handle.run(&na, "r").unwrap().events, 1);
    assert_eq!(handle.run(&nb, "r").unwrap().events, 2);
}
