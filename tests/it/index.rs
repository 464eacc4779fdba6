//! The index: every answer with it equals the answer without it, after every kind of change,
//! and a bad, foreign, newer or unwritable index is set aside or bypassed, never trusted.

use crate::support::*;
use mission_control::runs::{RunOptions, RunsDir, Verify};
use serde_json::{json, Value};
use std::fs::{self, File, FileTimes, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, UNIX_EPOCH};

/// A clock well after every file's time, so no run counts as running unless a test says so.
const NOW: i64 = OLD_MS + 10 * 24 * 3600 * 1000;

fn opts() -> RunOptions {
    RunOptions {
        now_ms: NOW,
        ..RunOptions::default()
    }
}

fn dir(root: &Path, cache: &Path) -> RunsDir {
    RunsDir::open(root, opts()).unwrap().with_cache_dir(cache)
}

/// The listing through the index (`reads`: how many runs it read from their files) and the
/// listing without it, as JSON.
fn both(root: &Path, cache: &Path) -> (Value, Value, usize) {
    let d = dir(root, cache);
    let layout = d.layout().unwrap();
    let reads = AtomicUsize::new(0);
    let sampled = RunOptions {
        verify: Verify::Sampled,
        ..opts()
    };
    let mut index = d.index().expect("an index");
    let mut runs = index.list(
        &layout,
        &sampled,
        |id| {
            reads.fetch_add(1, Ordering::SeqCst);
            use mission_control::index::ReadRun;
            match mission_control::runs::analyze_run(&layout, id, &sampled, false) {
                Ok(detail) => ReadRun::Read(Box::new(detail)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => ReadRun::Gone,
                Err(e) => ReadRun::Unreadable(
                    Box::new(mission_control::runs::Run {
                        id: id.to_owned(),
                        title: format!("(unreadable: {e})"),
                        problems: 1,
                        ..Default::default()
                    }),
                    e.to_string(),
                ),
            }
        },
        |run| run,
    );
    runs.sort_by(|a, b| {
        b.updated_ms
            .cmp(&a.updated_ms)
            .then_with(|| a.id.cmp(&b.id))
    });
    // The public door gives the same, with the figures of each run's children added (the
    // index gives each run's own), and so does the listing `mctl runs` prints, packed.
    let listed = d.list().unwrap();
    assert_eq!(runs.len(), listed.len());
    for (run, listed) in runs.iter_mut().zip(&listed) {
        run.tokens_with_children = listed.tokens_with_children;
        run.cost_with_children_usd = listed.cost_with_children_usd;
    }
    let indexed = serde_json::to_value(&runs).unwrap();
    assert_eq!(serde_json::to_value(&listed).unwrap(), indexed);
    assert_eq!(serde_json::to_value(d.listing().unwrap()).unwrap(), indexed);
    let plain = serde_json::to_value(d.with_index(false).list().unwrap()).unwrap();
    (indexed, plain, reads.load(Ordering::SeqCst))
}

/// A GC plan (every policy, no idle guard) and the storage figures through the index, and
/// the same without it, as JSON.
fn gc_both(root: &Path, cache: &Path) -> (Value, Value) {
    use mission_control::gc::{self, GcPolicy};
    use mission_control::pins::Pins;
    let policy = GcPolicy {
        older_than_ms: Some(0),
        max_bytes: Some(1),
        orphans: true,
        strays: true,
        idle_guard_ms: 0,
        ..Default::default()
    };
    let pins = Pins::load_in(Some(cache)).unwrap();
    let answer = |d: RunsDir| {
        let d = d.with_config_dir(cache);
        json!({
            "plan": gc::plan(&d, &policy, &pins, NOW).unwrap(),
            "storage": gc::storage(&d, &pins, NOW).unwrap(),
        })
    };
    (
        answer(dir(root, cache)),
        answer(dir(root, cache).with_index(false)),
    )
}

/// Sets the time of every file and directory under `root` (and `root`) changed in the last
/// minute to `ms`: as if it had changed long ago, so that only its stamp can tell the index.
pub(crate) fn age(root: &Path, ms: i64) {
    let t = UNIX_EPOCH + Duration::from_millis(ms as u64);
    let times = FileTimes::new().set_modified(t).set_accessed(t);
    let recent = |p: &Path| {
        let modified = fs::symlink_metadata(p).unwrap().modified().unwrap();
        modified
            .elapsed()
            .map_or(true, |e| e < Duration::from_secs(60))
    };
    for entry in fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            age(&path, ms);
        } else if meta.is_file() && recent(&path) {
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_times(times)
                .unwrap();
        }
    }
    if recent(root) {
        File::open(root).unwrap().set_times(times).unwrap();
    }
}

pub(crate) fn user_line(run: &str, seq: u64) -> String {
    json!({"schemaVersion": 1, "runId": run, "seq": seq, "ts": OLD_MS + seq as i64,
           "event": {"type": "user_message", "messageId": "u", "text": format!("message {seq}"), "attachments": []}})
    .to_string()
}

pub(crate) fn append(path: &Path, text: &str) {
    OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

/// A runs directory of several runs: retained, unretained and stray values, a summary.
pub(crate) fn sample(root: &Path) {
    let content = "a line of a long output\n".repeat(2_000);
    let mut a = RunFile::new(root, "a");
    a.user("first")
        .tool("c1", "bash", &content, true)
        .done()
        .write();
    a.value("stray", b"nobody's");
    let mut b = RunFile::new(root, "b");
    b.user("second")
        .tool("c2", "read_file", &content, false)
        .write();
    fs::write(
        root.join("b.summary.json"),
        r#"{"title": "B", "parentId": "a"}"#,
    )
    .unwrap();
    let mut c = RunFile::new(root, "c");
    c.user("third").done().write();
}

/// The threshold what-if (at a byte, the default, one byte over it and a mebibyte) through the
/// index and without it, as JSON.
fn whatif_both(root: &Path, cache: &Path) -> (Value, Value) {
    let thresholds = [1, 20_480, 20_481, 1 << 20];
    let answer = |d: RunsDir| {
        serde_json::to_value(
            mission_control::insights::what_if_runs(&d, &thresholds, None).unwrap(),
        )
        .unwrap()
    };
    (
        answer(dir(root, cache)),
        answer(dir(root, cache).with_index(false)),
    )
}

/// Asserts that the listing, a GC plan, the storage figures and the threshold what-if are the
/// same through the index and without it; how many runs the listing read.
pub(crate) fn assert_same(root: &Path, cache: &Path, what: &str) -> usize {
    let (indexed, plain, reads) = both(root, cache);
    assert_eq!(indexed, plain, "{what}");
    let (indexed, plain) = gc_both(root, cache);
    assert_eq!(indexed, plain, "GC, {what}");
    let (indexed, plain) = whatif_both(root, cache);
    assert_eq!(indexed, plain, "what-if, {what}");
    reads
}

#[test]
fn the_index_answers_as_a_full_read_of_every_fixture_and_the_demo() {
    let demo = tempfile::tempdir().unwrap();
    mission_control::demo::write_demo(demo.path(), 1, OLD_MS).unwrap();
    let fixtures = fixture("tolerant");
    for root in [demo.path(), fixtures.path()] {
        age(root, OLD_MS);
        let cache = tempfile::tempdir().unwrap();
        let cold = assert_same(root, cache.path(), "cold");
        assert!(cold > 0);
        assert_eq!(
            assert_same(root, cache.path(), "warm"),
            0,
            "a warm index reads nothing"
        );
    }
}

#[test]
fn each_kind_of_change_is_seen_and_only_the_changed_run_is_read() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = runs.path();
    sample(root);
    let mut clock = OLD_MS;
    let mut step = |what: &str, change: &dyn Fn(), reads: usize| {
        change();
        clock += 60_000;
        age(root, clock); // as if the change were long ago: only the stamps can tell
        assert_eq!(
            assert_same(root, cache.path(), what),
            reads,
            "runs read after: {what}"
        );
        assert_eq!(
            assert_same(root, cache.path(), what),
            0,
            "read again after: {what}"
        );
    };
    step("the first listing", &|| {}, 3);
    step(
        "an append",
        &|| append(&root.join("c.jsonl"), &format!("{}\n", user_line("c", 9))),
        1,
    );
    step(
        "a torn line",
        &|| append(&root.join("c.jsonl"), &user_line("c", 10)[..20]),
        1,
    );
    step(
        "the torn line completed",
        &|| {
            append(
                &root.join("c.jsonl"),
                &format!("{}\n", &user_line("c", 10)[20..]),
            )
        },
        1,
    );
    step(
        "a transcript replaced by a shorter one",
        &|| {
            let mut c = RunFile::new(root, "c");
            c.user("short").write();
        },
        1,
    );
    step(
        "a value file removed",
        &|| fs::remove_file(root.join("a.values/c1.txt")).unwrap(),
        1,
    );
    step(
        "a value file added",
        &|| {
            fs::write(
                root.join("a.values/c1.txt"),
                "a line of a long output\n".repeat(2_000),
            )
            .unwrap();
        },
        1,
    );
    step(
        "a summary changed",
        &|| {
            fs::write(
                root.join("b.summary.json"),
                r#"{"title": "B2", "parentId": "c"}"#,
            )
            .unwrap();
        },
        1,
    );
    step(
        "a run removed",
        &|| fs::remove_file(root.join("c.jsonl")).unwrap(),
        0,
    );
    step(
        "a run added",
        &|| {
            RunFile::new(root, "d").user("fourth").write();
        },
        1,
    );
}

#[test]
fn a_listing_of_more_runs_than_one_write_keeps_every_run_and_reads_none_again() {
    // The index keeps what a listing reads a batch of 256 rows at a time, while the reads go
    // on: 600 runs are three writes, and every row must be there for the next listing.
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for i in 0..600 {
        let mut run = RunFile::new(runs.path(), &format!("r{i:03}"));
        run.user(&format!("task {i}"));
        let usage = json!({"promptTokens": 10 + i, "completionTokens": 5});
        run.event(
            json!({"type": "assistant_message", "messageId": "a", "content": [], "usage": usage}),
        );
        run.done().write();
    }
    // Children counted into their parent, as each listing shows them.
    for child in ["r001", "r002"] {
        let summary = r#"{"title": "child", "parentId": "r000"}"#;
        let path = runs.path().join(format!("{child}.summary.json"));
        fs::write(&path, summary).unwrap();
        set_mtime(&path, OLD_MS);
    }
    let (cold, plain, reads) = both(runs.path(), cache.path());
    assert_eq!(reads, 600, "a cold index reads every run");
    assert_eq!(cold, plain);
    assert_eq!(cold.as_array().unwrap().len(), 600);
    let parent = find(&cold, "r000");
    assert_eq!(parent["inputTokens"], 10, "{parent}");
    assert_eq!(parent["tokensWithChildren"], 15 + 16 + 17, "{parent}");
    let (warm, _, reads) = both(runs.path(), cache.path());
    assert_eq!(reads, 0, "every row was kept");
    assert_eq!(warm, cold);
}

#[test]
fn a_file_changed_within_the_last_moments_is_read_again_whatever_its_stamp() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    sample(runs.path());
    // Run `c` is only its transcript, dated long ago; `a`'s value directory and `b`'s summary
    // were written just now: a second change in the same clock tick would keep their stamps,
    // so they are read again until they have been left alone for a moment.
    assert_eq!(assert_same(runs.path(), cache.path(), "fresh"), 3);
    assert_eq!(assert_same(runs.path(), cache.path(), "fresh again"), 2);
    assert_eq!(assert_same(runs.path(), cache.path(), "and again"), 2);
}

#[test]
fn a_running_run_from_the_index_turns_interrupted_by_the_clock() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let transcript = RunFile::new(runs.path(), "r").user("working").write();
    set_mtime(&transcript, NOW - 60_000); // changed a minute before NOW: running
    let d = |now: i64| {
        let opts = RunOptions {
            now_ms: now,
            ..RunOptions::default()
        };
        RunsDir::open(runs.path(), opts)
            .unwrap()
            .with_cache_dir(cache.path())
    };
    let status = |d: RunsDir| d.list().unwrap()[0].status;
    assert_eq!(status(d(NOW)), mission_control::runs::RunStatus::Running);
    assert_eq!(
        status(d(NOW)),
        mission_control::runs::RunStatus::Running,
        "from the index"
    );
    // An hour later nothing changed on disk: the index's row, told again by the clock.
    let later = NOW + 3_600_000;
    assert_eq!(
        status(d(later)),
        mission_control::runs::RunStatus::Interrupted
    );
    assert_eq!(
        status(d(later).with_index(false)),
        mission_control::runs::RunStatus::Interrupted
    );
}

/// The index file of `root` in `cache`, after a first listing made it.
fn index_file(root: &Path, cache: &Path) -> std::path::PathBuf {
    assert_same(root, cache, "made");
    let d = dir(root, cache);
    let status = d.index().unwrap().status(root).unwrap();
    std::path::PathBuf::from(status.path)
}

fn set_aside_files(cache: &Path) -> usize {
    fs::read_dir(cache)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".bad-")
        })
        .count()
}

/// A way to spoil an index file.
type Spoil<'a> = &'a dyn Fn(&Path);

#[test]
fn garbage_a_truncated_file_a_newer_schema_and_a_foreign_index_are_set_aside_and_rebuilt() {
    let runs = tempfile::tempdir().unwrap();
    sample(runs.path());
    age(runs.path(), OLD_MS);
    let spoil: [(&str, Spoil); 5] = [
        ("a damaged page", &|p| {
            use std::io::{Seek, SeekFrom};
            let len = fs::metadata(p).unwrap().len();
            let mut f = OpenOptions::new().write(true).open(p).unwrap();
            f.seek(SeekFrom::Start(len / 2 / 4096 * 4096)).unwrap();
            f.write_all(&[0xff; 4096]).unwrap();
        }),
        ("garbage", &|p| fs::write(p, vec![0x5a; 70_000]).unwrap()),
        ("truncated", &|p| {
            let len = fs::metadata(p).unwrap().len();
            OpenOptions::new()
                .write(true)
                .open(p)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        }),
        ("newer schema", &|p| {
            let c = rusqlite_free_set_user_version(p, 99);
            assert!(c, "set the schema");
        }),
        ("foreign", &|p| {
            let other = tempfile::tempdir().unwrap();
            sample(other.path());
            let cache = p.parent().unwrap();
            let theirs = index_file(other.path(), cache);
            fs::copy(theirs, p).unwrap();
        }),
    ];
    for (what, spoil) in spoil {
        let cache = tempfile::tempdir().unwrap();
        let path = index_file(runs.path(), cache.path());
        // Nothing else may hold it open while it is spoiled: drop the write-ahead log first.
        for ext in ["-wal", "-shm"] {
            let _ = fs::remove_file(format!("{}{ext}", path.display()));
        }
        spoil(&path);
        let reads = assert_same(runs.path(), cache.path(), what);
        assert_eq!(reads, 3, "{what}: every run read again");
        assert_eq!(
            set_aside_files(cache.path()),
            1,
            "{what}: the bad file set aside"
        );
        assert_eq!(
            assert_same(runs.path(), cache.path(), what),
            0,
            "{what}: rebuilt"
        );
    }
}

/// Sets `PRAGMA user_version` in an SQLite file by hand (offset 60, big-endian), as a newer
/// Mission Control's index would have it.
fn rusqlite_free_set_user_version(path: &Path, version: u32) -> bool {
    let mut bytes = fs::read(path).unwrap();
    if bytes.len() < 100 || &bytes[..16] != b"SQLite format 3\0" {
        return false;
    }
    bytes[60..64].copy_from_slice(&version.to_be_bytes());
    fs::write(path, bytes).unwrap();
    true
}

#[test]
fn a_cache_directory_that_cannot_be_written_falls_back_to_reading_the_files() {
    let runs = tempfile::tempdir().unwrap();
    sample(runs.path());
    let blocked = tempfile::tempdir().unwrap();
    // A file where the cache directory should be: nothing can be created under it (a
    // read-only directory would not stop the root user the tests may run as).
    let cache = blocked.path().join("cache");
    fs::write(&cache, "not a directory").unwrap();
    let d = dir(runs.path(), &cache.join("mission-control"));
    assert!(d.index().is_none());
    let listed = serde_json::to_value(d.list().unwrap()).unwrap();
    let plain = serde_json::to_value(d.with_index(false).list().unwrap()).unwrap();
    assert_eq!(listed, plain);
    // The command line says so in one line and still answers.
    let out = mctl_command()
        .env("MCTL_CACHE_DIR", cache.join("mission-control"))
        .args([
            "--runs-dir",
            runs.path().to_str().unwrap(),
            "runs",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let notice = stderr(&out);
    assert_eq!(notice.lines().count(), 1, "{notice}");
    assert!(
        notice.contains("reading the runs without an index"),
        "{notice}"
    );
}

#[test]
fn two_processes_refreshing_one_index_at_once_both_answer_right() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for i in 0..300 {
        let mut r = RunFile::new(runs.path(), &format!("r{i:03}"));
        r.user(&format!("run {i}")).done().write();
    }
    let want = mctl_json(runs.path(), &["runs", "--no-index"]);
    let start = || {
        mctl_command()
            .env("MCTL_CACHE_DIR", cache.path())
            .args([
                "--runs-dir",
                runs.path().to_str().unwrap(),
                "runs",
                "--json",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "",
            "no notice: neither process gave up on the index"
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn mctl_index_tells_where_it_is_and_what_it_holds_and_rebuilds() {
    let runs = tempfile::tempdir().unwrap();
    sample(runs.path());
    let cache = tempfile::tempdir().unwrap();
    let index = |args: &[&str]| {
        let out = mctl_command()
            .env("MCTL_CACHE_DIR", cache.path())
            .args([
                "--runs-dir",
                runs.path().to_str().unwrap(),
                "index",
                "--json",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let status = index(&[]);
    assert!(status["path"]
        .as_str()
        .unwrap()
        .starts_with(cache.path().to_str().unwrap()));
    assert_eq!(status["runs"], 3);
    // Three transcripts, a summary, two value files (one of them stray).
    assert_eq!(status["files"], 6);
    assert!(status["bytes"].as_u64().unwrap() > 0);
    assert!(status["updatedMs"].as_i64().unwrap() > OLD_MS);
    let rebuilt = index(&["--rebuild"]);
    assert_eq!(rebuilt["runs"], 3);
    // A rebuild is what a damaged index needs, and it works on one.
    let path = std::path::PathBuf::from(status["path"].as_str().unwrap());
    fs::write(&path, vec![0x5a; 70_000]).unwrap();
    let rebuilt = index(&["--rebuild"]);
    assert_eq!(
        (rebuilt["runs"].clone(), rebuilt["path"].clone()),
        (json!(3), status["path"].clone())
    );
    let off = mctl_command()
        .env("MCTL_NO_INDEX", "1")
        .args(["--runs-dir", runs.path().to_str().unwrap(), "index"])
        .output()
        .unwrap();
    assert_eq!(off.status.code(), Some(1));
    assert!(stderr(&off).contains("turned off"));
}

/// One change a property test makes to a runs directory of runs `r0`..`r3`.
#[derive(Debug, Clone)]
enum Change {
    Append(u8),
    Torn(u8),
    Complete(u8),
    Replace(u8),
    Remove(u8),
    Add(u8),
    RemoveValue(u8),
    AddValue(u8),
    Summary(u8),
}

fn apply(root: &Path, change: &Change) {
    let id = |n: &u8| format!("r{}", n % 4);
    let transcript = |n: &u8| root.join(format!("{}.jsonl", id(n)));
    let exists = |n: &u8| transcript(n).exists();
    let output = "a line of a long output\n".repeat(1_000);
    match change {
        Change::Append(n) if exists(n) => {
            append(&transcript(n), &format!("{}\n", user_line(&id(n), 50)))
        }
        Change::Torn(n) if exists(n) => append(&transcript(n), &user_line(&id(n), 51)[..30]),
        Change::Complete(n) if exists(n) => append(&transcript(n), "\n"),
        Change::Replace(n) if exists(n) => {
            RunFile::new(root, &id(n)).user("replaced").write();
        }
        Change::Remove(n) => {
            let _ = fs::remove_file(transcript(n));
        }
        Change::Add(n) if !exists(n) => {
            let mut r = RunFile::new(root, &id(n));
            r.user("new")
                .tool(&format!("call{n}"), "bash", &output, true)
                .done()
                .write();
        }
        Change::RemoveValue(n) => {
            let _ = fs::remove_file(root.join(format!("{}.values/call{}.txt", id(n), n % 4)));
        }
        Change::AddValue(n) => {
            let dir = root.join(format!("{}.values", id(n)));
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join(format!("call{}.txt", n % 4)), &output).unwrap();
        }
        Change::Summary(n) => {
            let summary = format!(r#"{{"title": "t{n}", "parentId": "r{}"}}"#, (n + 1) % 4);
            fs::write(root.join(format!("{}.summary.json", id(n))), summary).unwrap();
        }
        _ => {}
    }
}

fn change() -> impl proptest::strategy::Strategy<Value = Change> {
    use proptest::prelude::*;
    let n = 0u8..8;
    prop_oneof![
        n.clone().prop_map(Change::Append),
        n.clone().prop_map(Change::Torn),
        n.clone().prop_map(Change::Complete),
        n.clone().prop_map(Change::Replace),
        n.clone().prop_map(Change::Remove),
        n.clone().prop_map(Change::Add),
        n.clone().prop_map(Change::RemoveValue),
        n.clone().prop_map(Change::AddValue),
        n.prop_map(Change::Summary),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Any sequence of changes, each dated long ago or left fresh: after each, the listing
    /// through the index is the listing without it.
    #[test]
    fn after_any_sequence_of_changes_the_index_answers_as_without_it(
        steps in proptest::collection::vec((change(), proptest::bool::ANY), 1..10)
    ) {
        let runs = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        for n in 0..3u8 {
            apply(runs.path(), &Change::Add(n));
        }
        let mut clock = OLD_MS;
        for (i, (change, dated)) in steps.iter().enumerate() {
            apply(runs.path(), change);
            if *dated {
                clock += 60_000;
                age(runs.path(), clock);
            }
            let (indexed, plain, _) = both(runs.path(), cache.path());
            proptest::prop_assert_eq!(indexed, plain, "after step {} ({:?})", i, change);
            let (indexed, plain) = gc_both(runs.path(), cache.path());
            proptest::prop_assert_eq!(indexed, plain, "GC after step {} ({:?})", i, change);
            let (indexed, plain) = whatif_both(runs.path(), cache.path());
            proptest::prop_assert_eq!(indexed, plain, "what-if after step {} ({:?})", i, change);
        }
    }
}

#[test]
fn a_gc_plan_over_a_warm_index_reads_no_transcript_and_plans_as_without_it() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    mission_control::demo::write_demo(runs.path(), 1, OLD_MS).unwrap();
    age(runs.path(), OLD_MS);
    let mctl = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = mctl_command();
        cmd.env("MCTL_CACHE_DIR", cache.path())
            .env("MCTL_CONFIG_DIR", config.path())
            .args(["--runs-dir", runs.path().to_str().unwrap()])
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    mctl(&["runs", "--json"], &[]);
    let gc = [
        "gc",
        "--older-than",
        "1d",
        "--orphans",
        "--strays",
        "--json",
    ];
    let warm = mctl(&gc, &[("MCTL_LOG", "mission_control::index=debug")]);
    let log = stderr(&warm);
    assert!(log.contains("listed through the index"), "{log}");
    assert!(log.contains("read=0"), "every run from the index: {log}");
    let plain = mctl(&gc, &[("MCTL_NO_INDEX", "1")]);
    let files = |out: &std::process::Output| {
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!v["files"].as_array().unwrap().is_empty(), "{v}");
        json!([v["files"], v["runs"], v["totalBytes"]])
    };
    assert_eq!(files(&warm), files(&plain));
}
