//! The live session a front end keeps (`watch::LiveSession`), without any front end: follows,
//! unfollows, lists and row patches, with sinks that collect what a window would receive.

use crate::support::*;
use mission_control::runs::{RunOptions, RunsDir};
use mission_control::watch::{Change, LiveSession, RunKey, RunUpdate};
use serde_json::json;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What a sink received, with a way to wait for it: the tests' readiness signal.
struct Inbox<T> {
    items: Mutex<Vec<T>>,
    arrived: Condvar,
}

impl<T: Clone + Send + 'static> Inbox<T> {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            items: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
        })
    }

    fn sink(self: &Arc<Self>) -> Box<dyn Fn(T) + Send + Sync> {
        let inbox = self.clone();
        Box::new(move |item| {
            inbox.items.lock().unwrap().push(item);
            inbox.arrived.notify_all();
        })
    }

    fn items(&self) -> Vec<T> {
        self.items.lock().unwrap().clone()
    }

    /// Waits (at most 20 s) until `done` holds for what arrived; fails the test otherwise.
    fn wait(&self, what: &str, done: impl Fn(&[T]) -> bool) -> Vec<T> {
        let items = self.items.lock().unwrap();
        let (items, timeout) = self
            .arrived
            .wait_timeout_while(items, Duration::from_secs(20), |i| !done(i))
            .unwrap();
        assert!(!timeout.timed_out(), "waited 20 s for {what}");
        items.clone()
    }
}

fn user_line(run: &str, seq: u64) -> String {
    format!(
        "{}\n",
        json!({"schemaVersion": 1, "runId": run, "seq": seq, "ts": 1_790_000_000_000u64 + seq,
               "event": {"type": "user_message", "messageId": "u", "text": format!("message {seq}"), "attachments": []}})
    )
}

fn append(path: &Path, text: &str) {
    let mut f = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Writes run `id` with `lines` user messages.
fn write_run(root: &Path, id: &str, lines: u64) {
    let text: String = (0..lines).map(|s| user_line(id, s)).collect();
    append(&root.join(format!("{id}.jsonl")), &text);
}

fn lines_of(updates: &[RunUpdate]) -> Vec<u64> {
    updates
        .iter()
        .flat_map(|u| u.events.iter().map(|e| e.line))
        .collect()
}

fn open(root: &Path) -> impl Fn(&str) -> mission_control::Result<RunsDir> + '_ {
    move |d: &str| {
        assert_eq!(Path::new(d), root, "only the directory shown is opened");
        Ok(open_runs_dir(Path::new(d), RunOptions::default()))
    }
}

/// A started session over `root` whose first scan is done, with a change inbox.
fn session(root: &Path) -> (LiveSession, Arc<Inbox<Change>>) {
    let live = LiveSession::new();
    let dirs = [root.display().to_string()];
    live.start(&dirs, 20_480);
    let changes = Inbox::new();
    live.subscribe(changes.sink());
    live.watched_runs(&dirs); // waits for the first scan
    (live, changes)
}

/// Waits until the watcher has handled every change before this call: a line appended to a
/// marker run is reported after them, and the session handles changes one at a time (it
/// forwards a change, then advances the follower, then takes the next).
fn settle(root: &Path, changes: &Inbox<Change>) {
    let path = root.join("marker.jsonl");
    let n = std::fs::read_to_string(&path).map_or(0, |t| t.lines().count()) as u64;
    append(&path, &user_line("marker", n));
    changes.wait("the marker's append", |c| {
        c.iter().any(|c| {
            matches!(c, Change::Appended { run, lines, .. }
                if run == "marker" && lines.iter().any(|l| l.line == n + 1))
        })
    });
}

#[test]
fn a_follow_that_starts_while_lines_land_gets_each_line_once_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "r", 50);
    let (live, _changes) = session(&root);
    let path = root.join("r.jsonl");
    let writer = std::thread::spawn(move || {
        for seq in 50..400 {
            append(&path, &user_line("r", seq));
            if seq % 10 == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    });
    let updates = Inbox::new();
    live.follow(root.display().to_string(), "r".into(), 0, 1, updates.sink())
        .unwrap();
    writer.join().unwrap();
    let got = updates.wait("line 400", |u| lines_of(u).last() == Some(&400));
    assert_eq!(lines_of(&got), (1..=400).collect::<Vec<_>>());
    assert_eq!(got.last().unwrap().run.events, 400);
}

#[test]
fn a_follow_sends_only_what_the_view_does_not_have() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "r", 10);
    let (live, changes) = session(&root);
    let updates = Inbox::new();
    live.follow(
        root.display().to_string(),
        "r".into(),
        10,
        1,
        updates.sink(),
    )
    .unwrap();
    append(&root.join("r.jsonl"), &user_line("r", 10));
    let got = updates.wait("line 11", |u| !lines_of(u).is_empty());
    settle(&root, &changes);
    assert_eq!(lines_of(&got), vec![11]);
    assert_eq!(lines_of(&updates.items()), vec![11]);
}

#[test]
fn two_follows_in_a_row_leave_only_the_second_and_an_older_token_never_wins() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "a", 3);
    write_run(&root, "b", 3);
    let (live, changes) = session(&root);
    let name = root.display().to_string();
    let (a, b, late) = (Inbox::new(), Inbox::new(), Inbox::new());
    live.follow(name.clone(), "a".into(), 3, 1, a.sink())
        .unwrap();
    live.follow(name.clone(), "b".into(), 3, 2, b.sink())
        .unwrap();
    // Follow 1 handled after follow 2 (requests can be reordered): it must not take over.
    live.follow(name, "a".into(), 3, 1, late.sink()).unwrap();
    append(&root.join("a.jsonl"), &user_line("a", 3));
    append(&root.join("b.jsonl"), &user_line("b", 3));
    b.wait("b's line 4", |u| lines_of(u) == [4]);
    settle(&root, &changes);
    assert!(
        a.items().is_empty(),
        "the first follow ended with the second"
    );
    assert!(
        late.items().is_empty(),
        "an older follow never replaces a newer one"
    );
}

#[test]
fn nothing_is_sent_after_unfollow_returns_even_while_the_run_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    // A run long enough that reading it again takes a while, with a retained value whose
    // removal makes the follower read the run again.
    let content = "a line of a long tool output\n".repeat(2_000);
    let mut run = RunFile::new(&root, "r");
    for i in 0..3_000 {
        run.user(&format!("message {i}"));
    }
    run.tool("call_1", "bash", &content, true);
    run.write();
    let value = root.join("r.values/call_1.txt");
    let (live, changes) = session(&root);
    let name = root.display().to_string();
    let count = |c: &[Change], added: bool| {
        c.iter()
            .filter(|c| match c {
                Change::ValueFilesAdded { run, .. } => added && run == "r",
                Change::ValueFilesRemoved { run, .. } => !added && run == "r",
                _ => false,
            })
            .count()
    };
    for round in 0..4u64 {
        if round > 0 {
            let before = count(&changes.items(), true);
            std::fs::write(&value, &content).unwrap();
            changes.wait("the value file back", |c| count(c, true) > before);
        }
        let removed = count(&changes.items(), false);
        let updates = Inbox::new();
        let token = round + 1;
        live.follow(name.clone(), "r".into(), 3_002, token, updates.sink())
            .unwrap();
        std::fs::remove_file(&value).unwrap();
        // The removal is seen within a second and makes the follower read the run again:
        // unfollow at different moments of that.
        std::thread::sleep(Duration::from_millis(300 * round));
        live.unfollow(token);
        let after = updates.items().len();
        changes.wait("the removal", |c| count(c, false) > removed);
        settle(&root, &changes);
        assert_eq!(
            updates.items().len(),
            after,
            "round {round}: sent after unfollow"
        );
    }
}

/// 1,500 runs of 20 lines each: enough that a first scan takes a while.
fn many_runs(root: &Path) {
    for i in 0..1_500 {
        write_run(root, &format!("run_{i:04}"), 20);
    }
}

fn ids(runs: impl Iterator<Item = String>) -> Vec<String> {
    runs.collect()
}

#[test]
fn without_an_index_a_list_asked_for_before_the_first_scan_ends_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    many_runs(&root);
    let live = LiveSession::new();
    let dirs = [root.display().to_string()];
    live.start(&dirs, 20_480);
    // Asked at once: the scan has barely begun. The list must not read the transcripts a
    // second time: it waits for the watcher's models.
    let listed = AtomicUsize::new(0);
    let list = live.list(&dirs, false, |d| {
        let dir = RunsDir::open(d, RunOptions::default())?.with_index(false);
        listed.fetch_add(1, Ordering::SeqCst);
        Ok(dir)
    });
    assert_eq!(
        listed.load(Ordering::SeqCst),
        1,
        "opened once, to see it has no index"
    );
    assert_eq!(list.dirs[0].runs, 1_500);
    assert_eq!(list.dirs[0].error, None);
    let from_disk = RunsDir::open(&root, RunOptions::default())
        .unwrap()
        .with_index(false)
        .list()
        .unwrap();
    assert_eq!(
        ids(list.runs.iter().map(|r| r.run.id.clone())),
        ids(from_disk.iter().map(|r| r.id.clone()))
    );
    assert_eq!(list.runs[0].run.events, from_disk[0].events);
}

#[test]
fn with_an_index_a_list_comes_from_it_without_waiting_for_the_first_scan() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    many_runs(&root);
    let open = |d: &str| Ok(RunsDir::open(d, RunOptions::default())?.with_cache_dir(cache.path()));
    let dirs = [root.display().to_string()];
    // A first list makes the index; a second session's list reads it.
    let first = LiveSession::new().list(&dirs, false, open);
    let live = LiveSession::new();
    live.start(&dirs, 20_480);
    let changes = Inbox::new();
    live.subscribe(changes.sink());
    let list = live.list(&dirs, false, open);
    let from_disk = RunsDir::open(&root, RunOptions::default())
        .unwrap()
        .with_index(false)
        .list()
        .unwrap();
    // The list did not wait for the scan: once the scan is done, the front end is told to
    // list again, so that nothing that landed meanwhile is missed.
    changes.wait("the scan's end", |c| {
        c.iter()
            .any(|c| matches!(c, Change::Scanned { dir } if dir == &dirs[0]))
    });
    for l in [&first, &list] {
        assert_eq!(l.dirs[0].runs, 1_500);
        assert_eq!(
            serde_json::to_value(l.runs.iter().map(|r| &r.run).collect::<Vec<_>>()).unwrap(),
            serde_json::to_value(&from_disk).unwrap()
        );
    }
}

#[test]
fn rows_come_from_the_watcher_and_a_removed_run_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "a", 2);
    write_run(&root, "b", 2);
    let (live, changes) = session(&root);
    let name = root.display().to_string();
    append(&root.join("a.jsonl"), &user_line("a", 2));
    std::fs::remove_file(root.join("b.jsonl")).unwrap();
    changes.wait("b removed", |c| {
        c.iter()
            .any(|c| matches!(c, Change::RunRemoved { run, .. } if run == "b"))
    });
    let key = |run: &str| RunKey {
        dir: name.clone(),
        run: run.into(),
    };
    let rows = live.rows(vec![key("a"), key("b")], open(&root)).unwrap();
    assert_eq!(rows[0].run.as_ref().map(|r| r.events), Some(3));
    assert!(rows[1].run.is_none());
    // A directory the front end no longer shows is left out.
    let other = RunKey {
        dir: "/elsewhere".into(),
        run: "a".into(),
    };
    let rows = live
        .rows(vec![other], |_| {
            Err(mission_control::Error::new(
                mission_control::ErrorCode::Invalid,
                "not shown",
            ))
        })
        .unwrap();
    assert!(rows.is_empty());
}

#[test]
fn a_follow_of_a_name_outside_the_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (live, _) = session(dir.path());
    let err = live
        .follow(
            dir.path().display().to_string(),
            "../x".into(),
            0,
            1,
            Box::new(|_| {}),
        )
        .unwrap_err();
    assert_eq!(err.code, mission_control::ErrorCode::UnknownRun);
}

#[test]
fn a_follow_from_the_index_misses_nothing_the_view_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "r", 5);
    crate::index::age(&root, OLD_MS);
    // The index (of the default cache directory, as the app's) vouches for 5 lines.
    RunsDir::open(&root, RunOptions::default())
        .unwrap()
        .list()
        .unwrap();
    let (live, changes) = session(&root);
    let name = root.display().to_string();
    let path = root.join("r.jsonl");
    let all = std::fs::metadata(&path).unwrap().len();
    let three: u64 = (0..3).map(|s| user_line("r", s).len() as u64).sum();

    // A view that read 3 lines: the index is ahead of it, so the follow reads, and sends 4, 5.
    let behind = Inbox::new();
    live.follow_from(name.clone(), "r".into(), 3, Some(three), 1, behind.sink())
        .unwrap();
    let got = behind.wait("lines 4 and 5", |u| lines_of(u).len() >= 2);
    assert_eq!(lines_of(&got), [4, 5]);

    // A view that read all 5: nothing until the transcript grows, then line 6 only.
    let current = Inbox::new();
    live.follow_from(name, "r".into(), 5, Some(all), 2, current.sink())
        .unwrap();
    append(&path, &user_line("r", 5));
    current.wait("line 6", |u| !lines_of(u).is_empty());
    settle(&root, &changes);
    let got = current.items();
    assert_eq!(lines_of(&got), [6]);
    assert_eq!(got.last().unwrap().run.events, 6);
}

/// Two front ends on one shared watch (two pages of a server): each hears every change and
/// gets only the run it follows; one stopping leaves the other watching, and the watch stops
/// with the last.
#[test]
fn sessions_sharing_a_watch_each_follow_their_own_run() {
    use mission_control::watch::SharedWatch;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "a", 3);
    write_run(&root, "b", 3);
    let watch = SharedWatch::new();
    let dirs = [root.display().to_string()];
    type Front = (LiveSession, Arc<Inbox<Change>>, Arc<Inbox<RunUpdate>>);
    let sessions: Vec<Front> = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let live = LiveSession::sharing(&watch);
            live.start(&dirs, 20_480);
            let changes = Inbox::new();
            live.subscribe(changes.sink());
            live.watched_runs(&dirs);
            let updates = Inbox::new();
            live.follow(
                dirs[0].clone(),
                run.to_string(),
                3,
                i as u64 + 1,
                updates.sink(),
            )
            .unwrap();
            (live, changes, updates)
        })
        .collect();
    append(&root.join("a.jsonl"), &user_line("a", 3));
    append(&root.join("b.jsonl"), &user_line("b", 3));
    for (live, changes, updates) in &sessions {
        settle(&root, changes);
        let got = updates.wait("its run's new line", |u| !lines_of(u).is_empty());
        assert_eq!(lines_of(&got), vec![4]);
        assert!(live.watching());
    }
    let runs_of = |u: &[RunUpdate]| -> Vec<String> { u.iter().map(|u| u.run.id.clone()).collect() };
    assert_eq!(runs_of(&sessions[0].2.items()), vec!["a"]);
    assert_eq!(runs_of(&sessions[1].2.items()), vec!["b"]);

    // The first goes; the second still hears every change.
    let (first, first_changes, _) = &sessions[0];
    first.stop();
    let told = first_changes.items().len();
    let (second, second_changes, _) = &sessions[1];
    assert!(second.watching());
    append(&root.join("a.jsonl"), &user_line("a", 4));
    settle(&root, second_changes);
    assert_eq!(
        first_changes.items().len(),
        told,
        "a stopped session hears nothing"
    );
    second.stop();
    assert!(!second.watching(), "the last one out stops the watch");
}

/// Polls `done` every 20 ms for at most `limit`; the time it took when it came true.
fn within(limit: Duration, done: impl Fn() -> bool) -> Option<Duration> {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

#[test]
fn a_windows_first_look_waits_for_its_list_painted_and_misses_nothing_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    write_run(&root, "r", 3);
    // A warm index, where the watcher looks (a user's earlier start made it).
    let open = |d: &str| RunsDir::open(d, RunOptions::default());
    assert_eq!(
        open(&root.display().to_string())
            .unwrap()
            .list()
            .unwrap()
            .len(),
        1
    );
    let dirs = [root.display().to_string()];
    let live = LiveSession::new();
    live.hold_first_look_for_paint();
    live.start(&dirs, 20_480);
    let changes = Inbox::new();
    live.subscribe(changes.sink());
    // The list comes from the index at once, while the first look is held.
    let list = live.list(&dirs, false, open);
    assert_eq!(list.runs.first().map(|r| r.run.events), Some(3));
    std::thread::sleep(Duration::from_millis(800));
    assert!(live.settled(&dirs[0]).is_none(), "the first look waits");
    // Written while it waits: the first look finds it, and the front end is told to list again.
    append(&root.join("r.jsonl"), &user_line("r", 3));
    live.painted();
    changes.wait("the first look's end", |c| {
        c.iter()
            .any(|c| matches!(c, Change::Scanned { dir } if dir == &dirs[0]))
    });
    assert_eq!(live.run(&dirs[0], "r").flatten().map(|r| r.events), Some(4));
    let again = live.list(&dirs, false, open);
    assert_eq!(again.runs.first().map(|r| r.run.events), Some(4));
    live.stop();

    // A window that never says it painted: the first look starts within 3 s anyway.
    let other = LiveSession::new();
    other.hold_first_look_for_paint();
    other.start(&dirs, 20_480);
    let took = within(Duration::from_secs(20), || {
        other.settled(&dirs[0]).is_some()
    });
    assert!(
        took.is_some_and(|t| t >= Duration::from_millis(2_500)),
        "{took:?}"
    );
    other.stop();

    // A list that needs the watcher's runs does not wait for a paint that follows it.
    let third = LiveSession::new();
    third.hold_first_look_for_paint();
    third.start(&dirs, 20_480);
    let start = std::time::Instant::now();
    let runs = third.watched_runs(&dirs);
    assert!(start.elapsed() < Duration::from_millis(2_500));
    assert_eq!(runs[0].as_ref().map(Vec::len), Some(1));
    third.stop();
}
