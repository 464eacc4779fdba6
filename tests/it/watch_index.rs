//! A watcher whose first look takes the runs from a warm index: nothing of theirs is read or
//! reported but `run-added`, its runs are the listing's, and what changes afterwards is read and
//! reported as without the index.

use crate::index::{age, append, sample, user_line};
use crate::support::*;
use mission_control::runs::{RunOptions, RunsDir};
use mission_control::watch::{watch_with, Change, FirstLook, WatchHandle};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The changes until one matches `want` (at most 30 s).
fn until(rx: &Receiver<Change>, want: impl Fn(&Change) -> bool) -> Vec<Change> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(change) = rx.recv_timeout(left) else {
            break;
        };
        let done = want(&change);
        seen.push(change);
        if done {
            return seen;
        }
    }
    panic!("no such change; saw {seen:?}");
}

/// Appends a line to run `b` and checks that the watcher tells that line, and only it.
fn append_one_line_to_b(root: &Path, rx: &Receiver<Change>) {
    let b = root.join("b.jsonl");
    let lines = fs::read_to_string(&b).unwrap().lines().count() as u64;
    append(&b, &format!("{}\n", user_line("b", 90)));
    let seen = until(
        rx,
        |c| matches!(c, Change::Appended { run, .. } if run == "b"),
    );
    let Some(Change::Appended { lines: got, .. }) = seen.last() else {
        unreachable!()
    };
    let got: Vec<u64> = got.iter().map(|l| l.line).collect();
    assert_eq!(got, [lines + 1], "only the line appended is news");
}

/// Removes one of run `a`'s value files and waits until the watcher tells it.
fn remove_a_value_of_a(root: &Path, rx: &Receiver<Change>) {
    let values: Vec<_> = fs::read_dir(root.join("a.values"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    fs::remove_file(&values[0]).unwrap();
    until(
        rx,
        |c| matches!(c, Change::ValueFilesRemoved { run, .. } if run == "a"),
    );
}

/// The demo's runs and the index tests' sample, all written long ago (settled).
fn settled_runs(root: &Path) {
    mission_control::demo::write_demo(root, 1, OLD_MS).unwrap();
    sample(root);
    age(root, OLD_MS);
}

/// The runs the watcher holds for directory `name`, as JSON.
fn watched(handle: &WatchHandle, name: &str) -> Value {
    serde_json::to_value(handle.runs(name).unwrap()).unwrap()
}

fn plain_list(root: &Path) -> Value {
    let dir = RunsDir::open(root, RunOptions::default())
        .unwrap()
        .with_index(false);
    serde_json::to_value(dir.list().unwrap()).unwrap()
}

#[test]
fn a_first_look_through_a_warm_index_reads_nothing_then_follows_what_changes() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = runs.path();
    settled_runs(root);
    let indexed = RunsDir::open(root, RunOptions::default())
        .unwrap()
        .with_cache_dir(cache.path());
    indexed.list().unwrap(); // the index is warm now

    let first = FirstLook::Index(Some(cache.path().to_path_buf()));
    let dirs = [root.to_path_buf()];
    let (handle, rx) = watch_with(&dirs, RunOptions::default(), None, first).unwrap();
    let name = root.display().to_string();
    let at_start: Vec<Change> = rx.try_iter().collect();
    assert!(
        !at_start
            .iter()
            .any(|c| matches!(c, Change::Appended { .. })),
        "nothing was read, nothing is told as appended: {at_start:?}"
    );
    let added = at_start
        .iter()
        .filter(|c| matches!(c, Change::RunAdded { .. }))
        .count();
    let listed = plain_list(root);
    assert_eq!(added, listed.as_array().unwrap().len());
    assert_eq!(
        watched(&handle, &name),
        listed,
        "the watcher's runs are the listing's"
    );

    // One line appended to a run taken from the index: that line, and only it, is news.
    append_one_line_to_b(root, &rx);

    // A summary written for another: the run shows it.
    let summary =
        r#"{"title": "Renamed", "parentId": "a", "error": {"code": "E", "message": "m"}}"#;
    fs::write(root.join("c.summary.json"), summary).unwrap();
    until(
        &rx,
        |c| matches!(c, Change::Summarised { run, .. } if run == "c"),
    );
    let c = handle.run(&name, "c").unwrap();
    assert_eq!(c.parent_id.as_deref(), Some("a"), "{c:?}");
    assert_eq!(watched(&handle, &name), plain_list(root));

    // A value file removed from a third: its states change, as a whole read tells them.
    remove_a_value_of_a(root, &rx);
    assert_eq!(watched(&handle, &name), plain_list(root));
}

#[test]
fn a_transcript_replaced_under_a_run_from_the_index_is_a_reset() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = runs.path();
    sample(root);
    age(root, OLD_MS);
    RunsDir::open(root, RunOptions::default())
        .unwrap()
        .with_cache_dir(cache.path())
        .list()
        .unwrap();
    let first = FirstLook::Index(Some(cache.path().to_path_buf()));
    let dirs = [root.to_path_buf()];
    let (handle, rx) = watch_with(&dirs, RunOptions::default(), None, first).unwrap();
    let name = root.display().to_string();
    rx.try_iter().for_each(drop);
    let mut other = RunFile::new(&root.join("tmp"), "c");
    fs::create_dir_all(root.join("tmp")).unwrap();
    other.user("one").user("two").done().write();
    fs::rename(root.join("tmp/c.jsonl"), root.join("c.jsonl")).unwrap();
    let lines = fs::read_to_string(root.join("c.jsonl"))
        .unwrap()
        .lines()
        .count() as u64;
    let seen = until(
        &rx,
        |c| matches!(c, Change::Reset { run, .. } if run == "c"),
    );
    assert!(
        matches!(seen.last(), Some(Change::Reset { lines: n, .. }) if *n == lines),
        "{seen:?}"
    );
    assert_eq!(watched(&handle, &name), plain_list(root));
}

#[test]
fn a_first_look_keeps_only_the_figures_of_runs_past_their_running_window() {
    let runs = tempfile::tempdir().unwrap();
    let root = runs.path();
    settled_runs(root);
    let mut live = RunFile::new(root, "live");
    live.user("still going").write();
    let dirs = [root.to_path_buf()];
    // No index: every transcript is read, and told as appended.
    let (handle, rx) = watch_with(&dirs, RunOptions::default(), None, FirstLook::Read).unwrap();
    let name = root.display().to_string();
    let at_start: Vec<Change> = rx.try_iter().collect();
    let listed = plain_list(root);
    let told = |c: &Change, id: &str| matches!(c, Change::Appended { run, .. } if run == id);
    for id in ["a", "b", "c", "live"] {
        assert!(at_start.iter().any(|c| told(c, id)), "{id} was read");
    }
    assert_eq!(
        handle.reading(&name),
        Some(1),
        "only the run written within its window reads on"
    );
    assert_eq!(
        watched(&handle, &name),
        listed,
        "the settled runs' figures are kept"
    );

    // A line appended to a settled run: that line, and only it, is news, and the run reads on.
    append_one_line_to_b(root, &rx);
    assert_eq!(handle.reading(&name), Some(2));
    assert_eq!(watched(&handle, &name), plain_list(root));

    // A value file removed from another settled run: its states change, as a whole read tells.
    remove_a_value_of_a(root, &rx);
    assert_eq!(watched(&handle, &name), plain_list(root));
}

#[test]
fn an_untold_first_look_holds_every_run_and_tells_only_what_changes_after_it() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = runs.path();
    settled_runs(root);
    // A run still written to: the first look reads it and goes on reading it after.
    let live = root.join("live.jsonl");
    fs::write(&live, format!("{}\n", user_line("live", 1))).unwrap();
    // No index in the cache folder: every transcript is read, and none of it is told.
    let first = FirstLook::Untold(Some(cache.path().to_path_buf()));
    let dirs = [root.to_path_buf()];
    let (handle, rx) = watch_with(&dirs, RunOptions::default(), None, first).unwrap();
    let name = root.display().to_string();
    let at_start: Vec<Change> = rx.try_iter().collect();
    assert!(at_start.is_empty(), "the first look told {at_start:?}");
    let runs = watched(&handle, &name);
    assert_eq!(
        runs,
        plain_list(root),
        "the watcher's runs are the listing's"
    );

    // After the look, changes are told as ever: of a run read again whole (a settled one)...
    append_one_line_to_b(root, &rx);
    let runs = watched(&handle, &name);
    assert_eq!(runs, plain_list(root));
    // ...and of the live run, read on from where the look left it (which told none of the
    // lines it read, and built no rows of them).
    append(&live, &format!("{}\n", user_line("live", 2)));
    let seen = until(
        &rx,
        |c| matches!(c, Change::Appended { run, .. } if run == "live"),
    );
    let Some(Change::Appended { lines, .. }) = seen.last() else {
        unreachable!()
    };
    let told: Vec<(u64, &str)> = lines.iter().map(|l| (l.line, l.kind.as_str())).collect();
    assert_eq!(
        told,
        [(2, "user_message")],
        "the line appended, and only it"
    );
    assert_eq!(watched(&handle, &name), plain_list(root));

    // Another agent's store, looked at whole: its first look tells nothing either, and a
    // session written after it is told.
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let mut first_session =
        crate::agents::Session::new(&project, "0f0f0f0f-0000-4000-8000-000000000001");
    first_session.prompt("Already there").answer("Yes").write();
    let first = FirstLook::Untold(Some(cache.path().to_path_buf()));
    let dirs = [store.path().to_path_buf()];
    let (handle, rx) = watch_with(&dirs, RunOptions::default(), None, first).unwrap();
    let name = store.path().display().to_string();
    let at_start: Vec<Change> = rx.try_iter().collect();
    assert!(at_start.is_empty(), "the first look told {at_start:?}");
    let ids = |h: &mission_control::watch::WatchHandle| -> Vec<String> {
        h.runs(&name).unwrap().into_iter().map(|r| r.id).collect()
    };
    assert_eq!(ids(&handle), ["0f0f0f0f-0000-4000-8000-000000000001"]);
    let later = "0f0f0f0f-0000-4000-8000-000000000002";
    crate::agents::Session::new(&project, later)
        .prompt("New")
        .write();
    until(
        &rx,
        |c| matches!(c, Change::RunAdded { run, .. } if run == later),
    );
    assert_eq!(ids(&handle).len(), 2);
}
