//! Garbage collection over adversarial runs directories. Every test hashes every file (inside the
//! runs directory and outside it) before and after, and proves that nothing but planned value
//! files was deleted or changed.

use crate::support::*;
use mission_control::gc::{self, GcPolicy, GcReason, GcReport, DEFAULT_IDLE_GUARD_MS};
use mission_control::pins::Pins;
use mission_control::runs::{now_ms, RunOptions, RunsDir};
use serde_json::json;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Every regular file and symbolic link under `dir`, with a hash of its bytes (links: of their
/// target path). Never follows links.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let kind = e.file_type().unwrap();
            let p = e.path();
            if kind.is_dir() {
                stack.push(p.clone());
                out.insert(p, 0);
            } else if kind.is_symlink() {
                let t = fs::read_link(&p).unwrap();
                out.insert(
                    p,
                    mission_control::retained::fnv1a32(t.to_string_lossy().as_bytes()) as u64,
                );
            } else {
                let bytes = fs::read(&p).unwrap();
                out.insert(
                    p,
                    u64::from(mission_control::retained::fnv1a32(&bytes))
                        | (bytes.len() as u64) << 32,
                );
            }
        }
    }
    out
}

/// The adversarial runs directory, and a directory outside it that links point into.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

fn text(n: usize, seed: &str) -> String {
    (0..)
        .map(|i| format!("{seed} {i}\n"))
        .take_while({
            let mut len = 0;
            move |l: &String| {
                len += l.len();
                len <= n
            }
        })
        .collect()
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let outside = tmp.path().join("outside");
    let config = tmp.path().join("config");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("precious.txt"), "not a value file\n").unwrap();

    // An old run with two retained values, a stray, a subdirectory, an unreadable value.
    let mut old = RunFile::new(&root, "old");
    old.user("go")
        .tool("a", "read_file", &text(30_000, "a"), true)
        .tool("b", "bash", &text(40_000, "b"), true)
        .done();
    old.write();
    fs::write(root.join("old.values/stray.txt"), "left over").unwrap();
    fs::create_dir_all(root.join("old.values/sub")).unwrap();
    fs::write(root.join("old.values/sub/deep.txt"), "in a subdirectory").unwrap();
    fs::write(root.join("old.values/notes.md"), "not a value file").unwrap();
    let locked = root.join("old.values/locked.txt");
    fs::write(&locked, "unreadable").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();

    // `foo` keeps its values in `foo.values/`, which is also run `foo.values`'s own folder.
    RunFile::new(&root, "foo")
        .user("go")
        .tool("f1", "read_file", &text(25_000, "f"), true)
        .done()
        .write();
    RunFile::new(&root, "foo.values").user("go").done().write();
    fs::create_dir_all(root.join("foo.values/checkpoints")).unwrap();
    fs::write(root.join("foo.values/checkpoints/c1.json"), "{\"edit\":1}").unwrap();
    // A .txt of run `foo.values`'s own, not a value of `foo`: never GC's to take.
    fs::write(root.join("foo.values/notes.txt"), "the run's own notes").unwrap();
    set_mtime(&root.join("foo.values/notes.txt"), OLD_MS);

    // A value directory that is a symbolic link to a folder outside, and a linked value file.
    RunFile::new(&root, "linked")
        .user("go")
        .tool("l1", "bash", &text(25_000, "l"), false)
        .done()
        .write();
    fs::create_dir_all(outside.join("elsewhere")).unwrap();
    fs::write(outside.join("elsewhere/l1.txt"), text(25_000, "l")).unwrap();
    symlink(outside.join("elsewhere"), root.join("linked.values")).unwrap();
    RunFile::new(&root, "symfile")
        .user("go")
        .tool("s1", "bash", &text(25_000, "s"), false)
        .done()
        .write();
    fs::create_dir_all(root.join("symfile.values")).unwrap();
    symlink(
        outside.join("precious.txt"),
        root.join("symfile.values/s1.txt"),
    )
    .unwrap();

    // A pinned old run, a run still active, an orphan value directory.
    RunFile::new(&root, "keep")
        .user("go")
        .tool("k1", "bash", &text(25_000, "k"), true)
        .done()
        .write();
    let busy = RunFile::new(&root, "busy");
    let mut busy = busy;
    busy.user("go").tool("b1", "bash", &text(25_000, "b"), true);
    let busy_path = busy.write();
    set_mtime(&busy_path, now_ms());
    fs::create_dir_all(root.join("gone.values")).unwrap();
    fs::write(root.join("gone.values/g1.txt"), text(10_000, "g")).unwrap();
    for f in [
        "gone.values/g1.txt",
        "old.values/stray.txt",
        "old.values/locked.txt",
    ] {
        set_mtime(&root.join(f), OLD_MS);
    }
    for f in fs::read_dir(root.join("old.values")).unwrap() {
        let p = f.unwrap().path();
        if p.is_file() {
            set_mtime(&p, OLD_MS);
        }
    }
    for f in ["foo.values", "keep.values", "busy.values"] {
        for e in fs::read_dir(root.join(f)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "txt") {
                set_mtime(&p, OLD_MS);
            }
        }
    }
    let w = World {
        _tmp: tmp,
        root,
        outside,
        config,
    };
    Pins::load_in(Some(&w.config))
        .unwrap()
        .set(&w.root, "keep", true)
        .unwrap();
    w
}

fn dir(w: &World) -> RunsDir {
    RunsDir::open(&w.root, RunOptions::default())
        .unwrap()
        .with_config_dir(&w.config)
}

fn policy() -> GcPolicy {
    GcPolicy {
        older_than_ms: Some(24 * 3600 * 1000),
        orphans: true,
        strays: true,
        idle_guard_ms: DEFAULT_IDLE_GUARD_MS,
        ..Default::default()
    }
}

fn plan(w: &World, p: &GcPolicy) -> GcReport {
    gc::plan(
        &dir(w),
        p,
        &Pins::load_in(Some(&w.config)).unwrap(),
        now_ms(),
    )
    .unwrap()
}

fn apply(w: &World, plan: &GcReport, p: &GcPolicy) -> GcReport {
    gc::apply(&dir(w), plan, p, now_ms(), &AtomicBool::new(false), |_| {}).unwrap()
}

/// Everything not deleted by `report` is byte for byte what it was, and everything deleted was
/// planned.
fn assert_only_planned_deleted(
    before: &BTreeMap<PathBuf, u64>,
    after: &BTreeMap<PathBuf, u64>,
    w: &World,
    plan: &GcReport,
    report: &GcReport,
) {
    let planned: Vec<PathBuf> = plan.files.iter().map(|f| w.root.join(&f.path)).collect();
    let deleted: Vec<PathBuf> = report.files.iter().map(|f| w.root.join(&f.path)).collect();
    let removed_dirs: Vec<PathBuf> = report.removed_dirs.iter().map(|d| w.root.join(d)).collect();
    for (path, hash) in before {
        if deleted.contains(path) {
            assert!(
                planned.contains(path),
                "{} deleted but not planned",
                path.display()
            );
            assert!(
                !after.contains_key(path),
                "{} reported deleted but still there",
                path.display()
            );
        } else if removed_dirs.contains(path) {
            assert!(!after.contains_key(path));
        } else {
            assert_eq!(
                after.get(path),
                Some(hash),
                "{} changed or vanished",
                path.display()
            );
        }
    }
}

fn snap_all(w: &World) -> BTreeMap<PathBuf, u64> {
    let mut s = snapshot(&w.root);
    s.extend(snapshot(&w.outside));
    s
}

/// Bytes of every regular `*.txt` directly in a `*.values` directory (links not followed).
fn txt_bytes_in_value_dirs(root: &Path) -> u64 {
    snapshot(root)
        .keys()
        .filter(|p| {
            let in_values = p
                .parent()
                .and_then(|d| d.file_name())
                .is_some_and(|n| n.to_string_lossy().ends_with(".values"));
            p.extension().is_some_and(|x| x == "txt")
                && fs::symlink_metadata(p).unwrap().is_file()
                && in_values
        })
        .map(|p| fs::metadata(p).unwrap().len())
        .sum()
}

fn paths(r: &GcReport) -> Vec<&str> {
    r.files.iter().map(|f| f.path.as_str()).collect()
}

#[test]
fn only_recognised_value_files_of_idle_unpinned_runs_are_planned() {
    let w = world();
    let p = plan(&w, &policy());
    let mut got = paths(&p);
    got.sort();
    assert_eq!(
        got,
        [
            "foo.values/f1.txt",
            "gone.values/g1.txt",
            "old.values/a.txt",
            "old.values/b.txt",
            "old.values/locked.txt",
            "old.values/stray.txt",
        ]
    );
    let reason = |path: &str| p.files.iter().find(|f| f.path == path).unwrap().reason;
    assert_eq!(reason("gone.values/g1.txt"), GcReason::Orphan);
    assert_eq!(reason("old.values/a.txt"), GcReason::Age);
    // Context cost: the next resume of `old` carries both full texts again.
    let old = p.runs.iter().find(|r| r.run == "old").unwrap();
    assert_eq!(
        old.context_bytes,
        (text(30_000, "a").len() + text(40_000, "b").len()) as u64
    );
    assert_eq!(old.context_tokens, old.context_bytes / 4);
    assert!(p
        .skipped
        .iter()
        .any(|s| s.path == "keep.values/" && s.reason == "pinned"));
    assert!(p
        .skipped
        .iter()
        .any(|s| s.path == "busy.values/" && s.reason.starts_with("active")));
}

#[test]
fn a_negative_age_or_guard_is_refused() {
    let w = world();
    for p in [
        GcPolicy {
            older_than_ms: Some(-1),
            ..Default::default()
        },
        GcPolicy {
            strays: true,
            idle_guard_ms: -1,
            ..Default::default()
        },
    ] {
        let refused = gc::plan(
            &dir(&w),
            &p,
            &Pins::load_in(Some(&w.config)).unwrap(),
            now_ms(),
        );
        let code = refused.map(|_| ()).unwrap_err().code;
        assert_eq!(code, mission_control::ErrorCode::Invalid, "{p:?}");
    }
}

#[test]
fn a_value_written_within_the_guard_in_a_quiet_run_is_no_stray() {
    // A long tool call: its transcript quiet for hours, its value file just written (the
    // harness writes it before the line that names it).
    let w = world();
    let mut long = RunFile::new(&w.root, "long");
    long.user("build")
        .event(json!({"type": "tool_call_started", "toolCallId": "c2",
        "name": "bash", "input": {}, "summary": "make"}));
    long.write();
    let value = long.value("c2", text(30_000, "c").as_bytes());
    let strays = GcPolicy {
        strays: true,
        idle_guard_ms: DEFAULT_IDLE_GUARD_MS,
        ..Default::default()
    };
    let p = plan(&w, &strays);
    assert!(
        !paths(&p).contains(&"long.values/c2.txt"),
        "{:?}",
        paths(&p)
    );
    assert!(
        (p.skipped.iter()).any(|s| s.path == "long.values/" && s.reason.starts_with("active")),
        "{:?}",
        p.skipped
    );
    let r = apply(&w, &p, &strays);
    assert!(value.exists(), "{:?}", r.files);
    // Written before the guard, it is a stray like any other; so is one dated days ahead (a
    // wrong clock says nothing of when it was written).
    for ms in [OLD_MS, now_ms() + 2 * 86_400_000] {
        set_mtime(&value, ms);
        assert!(
            paths(&plan(&w, &strays)).contains(&"long.values/c2.txt"),
            "{ms}"
        );
    }
}

#[test]
fn apply_deletes_exactly_the_plan_and_keeps_a_runs_own_folder() {
    let w = world();
    let pol = policy();
    let before = snap_all(&w);
    let p = plan(&w, &pol);
    assert_eq!(snap_all(&w), before, "planning deletes nothing");
    let r = apply(&w, &p, &pol);
    assert_eq!(paths(&r), paths(&p), "{:?}", r.skipped);
    assert!(r.skipped.is_empty());
    let after = snap_all(&w);
    assert_only_planned_deleted(&before, &after, &w, &p, &r);
    // `foo.values/` is run `foo.values`'s folder: emptied of foo's values, never removed.
    assert!(w.root.join("foo.values/checkpoints/c1.json").exists());
    assert!(r.removed_dirs.contains(&"gone.values".to_owned()));
    assert!(!r.removed_dirs.contains(&"foo.values".to_owned()));
    assert!(
        w.root.join("old.values/sub/deep.txt").exists(),
        "a subdirectory is not a value file"
    );
    assert!(
        w.root.join("old.values").exists(),
        "old.values still holds what GC does not recognise"
    );
    assert!(w.outside.join("elsewhere/l1.txt").exists() && w.outside.join("precious.txt").exists());
    // The run shows its results as unretained now.
    let show = mctl_json_in(&w, &["show", "old"]);
    assert_eq!(show["results"][0]["state"], "unretained");
}

/// What a bucket's mirror does while GC deletes: each object goes, and the mirror's own look,
/// finding it gone, takes the local copy before GC does.
struct MirrorLooksFirst {
    root: PathBuf,
    deleted: std::sync::Mutex<Vec<String>>,
}

impl gc::DeleteElsewhere for MirrorLooksFirst {
    fn delete(&self, f: &gc::GcFile) -> Result<(), String> {
        self.deleted.lock().unwrap().push(f.path.clone());
        fs::remove_file(self.root.join(&f.path)).map_err(|e| e.to_string())
    }
}

#[test]
fn a_file_whose_object_went_and_whose_copy_the_mirror_took_first_is_collected() {
    let w = world();
    let pol = policy();
    let before = snap_all(&w);
    let p = plan(&w, &pol);
    assert!(!p.files.is_empty());
    let mirror = std::sync::Arc::new(MirrorLooksFirst {
        root: w.root.clone(),
        deleted: Default::default(),
    });
    gc::delete_elsewhere(w.root.clone(), mirror.clone());
    let r = apply(&w, &p, &pol);
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    assert_eq!(paths(&r), paths(&p));
    let mut deleted = mirror.deleted.lock().unwrap().clone();
    deleted.sort();
    let mut planned = paths(&p);
    planned.sort();
    assert_eq!(deleted, planned, "each object went first");
    assert_only_planned_deleted(&before, &snap_all(&w), &w, &p, &r);
}

fn mctl_json_in(w: &World, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--runs-dir", w.root.to_str().unwrap()];
    all.extend_from_slice(args);
    all.push("--json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mctl"))
        .args(&all)
        .env("MCTL_CONFIG_DIR", &w.config)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_file_that_grows_or_a_run_that_wakes_up_between_plan_and_apply_is_skipped() {
    let w = world();
    let pol = policy();
    let p = plan(&w, &pol);
    let before = snap_all(&w);
    fs::OpenOptions::new()
        .append(true)
        .open(w.root.join("foo.values/f1.txt"))
        .unwrap();
    use std::io::Write;
    fs::OpenOptions::new()
        .append(true)
        .open(w.root.join("foo.values/f1.txt"))
        .unwrap()
        .write_all(b"more")
        .unwrap();
    let mut old = fs::OpenOptions::new()
        .append(true)
        .open(w.root.join("old.jsonl"))
        .unwrap();
    old.write_all(b"\n").unwrap();
    drop(old);
    let before = {
        let mut b = before;
        b.extend(snap_all(&w));
        b
    };
    let r = apply(&w, &p, &pol);
    let skipped: BTreeMap<&str, &str> = r
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect();
    assert!(
        skipped["foo.values/f1.txt"].starts_with("size changed"),
        "{skipped:?}"
    );
    assert_eq!(
        skipped["old.values/a.txt"],
        "run became active since the plan"
    );
    assert_eq!(paths(&r), ["gone.values/g1.txt"]);
    assert_only_planned_deleted(&before, &snap_all(&w), &w, &p, &r);
}

#[test]
fn a_run_pinned_between_plan_and_apply_is_skipped() {
    let w = world();
    let pol = policy();
    let p = plan(&w, &pol);
    Pins::load_in(Some(&w.config))
        .unwrap()
        .set(&w.root, "old", true)
        .unwrap();
    let before = snap_all(&w);
    let r = apply(&w, &p, &pol);
    assert!(r
        .skipped
        .iter()
        .filter(|s| s.path.starts_with("old.values/"))
        .all(|s| s.reason == "run pinned since the plan"));
    assert!(!paths(&r).iter().any(|p| p.starts_with("old.values/")));
    assert_only_planned_deleted(&before, &snap_all(&w), &w, &p, &r);
}

#[test]
fn keep_last_and_budget_take_the_oldest_runs_first() {
    let w = world();
    for (i, id) in ["r1", "r2", "r3"].iter().enumerate() {
        let mut run = RunFile::new(&w.root, id);
        run.user("go")
            .tool("t", "bash", &text(30_000, id), true)
            .done();
        let path = run.write();
        set_mtime(&path, OLD_MS + (i as i64 + 1) * 3_600_000);
        set_mtime(&w.root.join(format!("{id}.values/t.txt")), OLD_MS);
    }
    let keep = GcPolicy {
        keep_last: Some(2),
        idle_guard_ms: DEFAULT_IDLE_GUARD_MS,
        ..Default::default()
    };
    let p = plan(&w, &keep);
    let runs: Vec<&str> = p.runs.iter().map(|r| r.run.as_str()).collect();
    // Newest with values: busy (active) and r3; keep (pinned) and the active run are never taken.
    assert!(
        !runs.contains(&"r3") && !runs.contains(&"keep") && !runs.contains(&"busy"),
        "{runs:?}"
    );
    assert!(runs.contains(&"r1") && runs.contains(&"old"));

    let total = txt_bytes_in_value_dirs(&w.root);
    // foo.values/notes.txt belongs to run `foo.values`: it is not a value file GC counts.
    let notes = fs::metadata(w.root.join("foo.values/notes.txt"))
        .unwrap()
        .len();
    let budget = GcPolicy {
        max_bytes: Some(total - notes - 1),
        idle_guard_ms: DEFAULT_IDLE_GUARD_MS,
        ..Default::default()
    };
    let p = plan(&w, &budget);
    assert!(p.files.iter().all(|f| f.reason == GcReason::Budget));
    assert_eq!(p.runs.len(), 1, "one run is enough to get under the budget");
    // Every fixture transcript has the same old mtime; `foo` has the fewest events, so its
    // last `ts` (its last activity) is the earliest.
    assert_eq!(p.runs[0].run, "foo", "the oldest run goes first");
}

#[test]
fn the_cli_plans_without_apply_and_prints_the_contract_json() {
    let w = world();
    let before = snap_all(&w);
    let j = mctl_json_in(&w, &["gc", "--older-than", "1d", "--orphans", "--strays"]);
    assert_eq!(snap_all(&w), before);
    assert_eq!(j["applied"], false);
    for k in ["files", "totalBytes", "runs", "contextBytes", "skipped"] {
        assert!(!j[k].is_null(), "{k}");
    }
    let f = &j["files"][0];
    for k in ["path", "run", "bytes", "reason"] {
        assert!(!f[k].is_null(), "{k}");
    }
    let j = mctl_json_in(
        &w,
        &[
            "gc",
            "--older-than",
            "1d",
            "--orphans",
            "--strays",
            "--apply",
        ],
    );
    assert_eq!(j["applied"], true);
    assert_eq!(j["files"].as_array().unwrap().len(), 6);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mctl"))
        .args(["--runs-dir", w.root.to_str().unwrap(), "gc"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a policy is required");
    let pins = mctl_json_in(&w, &["pins"]);
    assert_eq!(pins, serde_json::json!(["keep"]));
}

/// Needs the `test-hooks` feature: `MCTL_GC_PAUSE_MS` slows the apply down enough to kill it.
#[cfg(feature = "test-hooks")]
#[test]
fn an_apply_killed_half_way_is_finished_by_the_next_one() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let config = tmp.path().join("config");
    fs::create_dir_all(root.join("gone.values")).unwrap();
    let mut run = RunFile::new(&root, "keepme");
    run.user("go").done();
    run.write();
    for i in 0..60 {
        let p = root.join(format!("gone.values/v{i:02}.txt"));
        fs::write(&p, format!("value {i}")).unwrap();
        set_mtime(&p, OLD_MS);
    }
    let before = snapshot(&root);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mctl"))
        .args([
            "--runs-dir",
            root.to_str().unwrap(),
            "gc",
            "--orphans",
            "--apply",
        ])
        .env("MCTL_CONFIG_DIR", &config)
        // (Slow enough that a loaded machine still kills it with files left: 8 s from 40.)
        .env("MCTL_GC_PAUSE_MS", "200")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL) once some files are gone and some are left.
    let left = || {
        fs::read_dir(root.join("gone.values"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let start = std::time::Instant::now();
    while left() > 40 && start.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let remaining = left();
    assert!(
        remaining > 0 && remaining < 60,
        "killed half-way: {remaining} left"
    );
    let journal: Vec<_> = fs::read_dir(&config)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("gc-journal"))
        .collect();
    assert_eq!(journal.len(), 1, "the journal survives the kill");
    // Each line is written as its file goes: the killed apply left one per file it deleted
    // (less one, should the kill fall between a delete and its line).
    let deleted = 60 - remaining;
    let lines = audit_lines(&config);
    assert!(
        lines.len() == deleted || lines.len() + 1 == deleted,
        "{} audit lines for {deleted} files deleted",
        lines.len()
    );
    assert!(lines
        .iter()
        .all(|l| !root.join(l["path"].as_str().unwrap()).exists()));

    // The next plan reports the rest even for a policy that would not select it by itself.
    let dir = RunsDir::open(&root, RunOptions::default())
        .unwrap()
        .with_config_dir(&config);
    let none = GcPolicy {
        strays: true,
        idle_guard_ms: DEFAULT_IDLE_GUARD_MS,
        ..Default::default()
    };
    let p = gc::plan(
        &dir,
        &none,
        &Pins::load_in(Some(&config)).unwrap(),
        now_ms(),
    )
    .unwrap();
    assert_eq!(p.resumed, remaining as u64);
    assert_eq!(p.files.len(), remaining);
    let r = gc::apply(&dir, &p, &none, now_ms(), &AtomicBool::new(false), |_| {}).unwrap();
    assert_eq!(r.files.len(), remaining);
    assert!(
        !root.join("gone.values").exists(),
        "finished: the empty orphan directory is gone"
    );
    let after = snapshot(&root);
    for (path, hash) in &before {
        if !path.starts_with(root.join("gone.values")) {
            assert_eq!(after.get(path), Some(hash), "{}", path.display());
        }
    }
    assert!(
        fs::read_dir(&config).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("gc-journal")),
        "journal removed"
    );
}

/// The lines of the GC audit log in `config`, parsed.
fn audit_lines(config: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(config.join(gc::AUDIT_FILE)).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).expect("each audit line is JSON"))
        .collect()
}

#[test]
fn the_audit_log_names_every_file_an_apply_deleted() {
    let w = world();
    let args = [
        "gc",
        "--older-than",
        "1d",
        "--orphans",
        "--strays",
        "--apply",
    ];
    let report = mctl_json_in(&w, &args);
    let deleted = report["files"].as_array().unwrap();
    assert!(!deleted.is_empty());
    let lines = audit_lines(&w.config);
    let key = |v: &serde_json::Value| {
        (
            v["path"].as_str().unwrap().to_owned(),
            v["run"].as_str().unwrap().to_owned(),
            v["bytes"].as_u64().unwrap(),
            v["reason"].as_str().unwrap().to_owned(),
        )
    };
    let mut want: Vec<_> = deleted.iter().map(key).collect();
    let mut got: Vec<_> = lines.iter().map(key).collect();
    want.sort();
    got.sort();
    assert_eq!(
        got, want,
        "one line per deleted file, with its run, size and reason"
    );
    let runs_dir = fs::canonicalize(&w.root).unwrap();
    for l in &lines {
        assert_eq!(l["runsDir"].as_str().unwrap(), runs_dir.to_str().unwrap());
        let time = l["time"].as_str().unwrap();
        let at = humantime::parse_rfc3339(time).expect("an RFC 3339 time");
        let ms = at
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        assert_eq!(l["timeMs"].as_u64().unwrap() as u128, ms, "{time}");
        assert!((now_ms() - l["timeMs"].as_i64().unwrap()).abs() < 60_000);
    }

    // The log is appended to: a later apply adds its lines after these, and a plan adds none.
    let mut run = RunFile::new(&w.root, "later");
    run.user("go")
        .tool("t", "bash", &text(30_000, "later"), true)
        .done();
    set_mtime(&run.write(), OLD_MS);
    set_mtime(&w.root.join("later.values/t.txt"), OLD_MS);
    mctl_json_in(&w, &args[..args.len() - 1]);
    assert_eq!(
        audit_lines(&w.config).len(),
        lines.len(),
        "a plan deletes nothing"
    );
    let report = mctl_json_in(&w, &args);
    assert_eq!(paths_json(&report), ["later.values/t.txt"]);
    let all = audit_lines(&w.config);
    assert_eq!(all[..lines.len()], lines[..]);
    assert_eq!(all.len(), lines.len() + 1);
    assert_eq!(all[lines.len()]["path"], "later.values/t.txt");
}

fn paths_json(report: &serde_json::Value) -> Vec<&str> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect()
}

#[test]
fn pins_made_by_many_mctl_at_once_are_all_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let config = tmp.path().join("config");
    fs::create_dir_all(&root).unwrap();
    let ids: Vec<String> = (0..12).map(|i| format!("run_{i:02}")).collect();
    for id in &ids {
        RunFile::new(&root, id).user("go").done().write();
    }
    let children: Vec<_> = ids
        .iter()
        .map(|id| {
            std::process::Command::new(env!("CARGO_BIN_EXE_mctl"))
                .args(["--runs-dir", root.to_str().unwrap(), "pin", id])
                .env("MCTL_CONFIG_DIR", &config)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let mut pinned = Pins::load_in(Some(&config)).unwrap().list(&root);
    pinned.sort();
    assert_eq!(pinned, ids, "no pin is lost");
}

#[test]
fn cancelling_stops_between_files_and_reports_the_rest() {
    let w = world();
    let pol = policy();
    let p = plan(&w, &pol);
    let cancel = AtomicBool::new(false);
    let mut seen = Vec::new();
    let r = gc::apply(&dir(&w), &p, &pol, now_ms(), &cancel, |prog| {
        seen.push(prog.done);
        if prog.done == 2 {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    })
    .unwrap();
    assert!(r.cancelled);
    assert_eq!(r.files.len(), 2);
    assert_eq!(r.skipped.len(), p.files.len() - 2);
    assert!(r.skipped.iter().all(|s| s.reason == "cancelled"));
    assert_eq!(seen, [1, 2]);
}

#[test]
fn a_value_directory_swapped_for_a_link_after_the_plan_is_left_alone() {
    let w = world();
    let pol = policy();
    let p = plan(&w, &pol);
    // Replace old.values by a link to a folder outside holding files of the same names.
    fs::rename(w.root.join("old.values"), w.outside.join("moved")).unwrap();
    symlink(w.outside.join("moved"), w.root.join("old.values")).unwrap();
    let before = snap_all(&w);
    let r = apply(&w, &p, &pol);
    assert!(
        r.skipped
            .iter()
            .filter(|s| s.path.starts_with("old.values/"))
            .count()
            >= 3,
        "{:?}",
        r.skipped
    );
    assert!(!paths(&r).iter().any(|p| p.starts_with("old.values/")));
    assert!(
        w.outside.join("moved/a.txt").exists(),
        "nothing deleted through the link"
    );
    assert_only_planned_deleted(&before, &snap_all(&w), &w, &p, &r);
}

#[test]
fn a_journal_left_by_a_killed_apply_is_not_carried_over_once_its_run_is_resumed() {
    let w = world();
    let pol = GcPolicy {
        older_than_ms: Some(24 * 3600 * 1000),
        ..GcPolicy::default()
    };
    let p = plan(&w, &pol);
    assert!(paths(&p).contains(&"old.values/a.txt"));
    // Simulate a kill right after the journal was written: apply with everything cancelled.
    let cancel = AtomicBool::new(true);
    let r = gc::apply(&dir(&w), &p, &pol, now_ms(), &cancel, |_| {}).unwrap();
    assert!(r.files.is_empty());
    // (A cancelled apply ends its journal; write one as a killed apply would have left it.)
    let journal = serde_json::json!({"runsDir": w.root.canonicalize().unwrap().to_string_lossy(), "createdMs": now_ms(), "files": p.files});
    let name = format!(
        "gc-journal-{:08x}.json",
        mission_control::retained::fnv1a32(
            w.root.canonicalize().unwrap().to_string_lossy().as_bytes()
        )
    );
    fs::write(w.config.join(&name), serde_json::to_vec(&journal).unwrap()).unwrap();
    let strays_only = GcPolicy {
        strays: true,
        ..GcPolicy::default()
    };
    let with_journal = plan(&w, &strays_only);
    assert!(
        with_journal.resumed >= 1 && paths(&with_journal).contains(&"old.values/a.txt"),
        "the killed apply's files are carried over"
    );
    // The user resumes `old`: its transcript grows. Its values are needed again.
    use std::io::Write;
    fs::OpenOptions::new()
        .append(true)
        .open(w.root.join("old.jsonl"))
        .unwrap()
        .write_all(b"\n")
        .unwrap();
    set_mtime(&w.root.join("old.jsonl"), OLD_MS + 1);
    let again = plan(&w, &strays_only);
    assert_eq!(
        again.resumed,
        1,
        "only foo's file is carried over: {:?}",
        paths(&again)
    );
    assert!(
        !paths(&again).contains(&"old.values/a.txt")
            && !paths(&again).contains(&"old.values/b.txt")
    );
}

#[test]
fn budget_counts_what_orphans_and_strays_already_free() {
    let w = world();
    let all = plan(
        &w,
        &GcPolicy {
            older_than_ms: Some(0),
            orphans: true,
            strays: true,
            ..GcPolicy::default()
        },
    );
    let orphan_and_strays: u64 = all
        .files
        .iter()
        .filter(|f| matches!(f.reason, GcReason::Orphan))
        .map(|f| f.bytes)
        .sum();
    let total_before: u64 = plan(
        &w,
        &GcPolicy {
            max_bytes: Some(0),
            orphans: true,
            ..GcPolicy::default()
        },
    )
    .files
    .iter()
    .map(|f| f.bytes)
    .sum();
    assert!(total_before > 0);
    // A budget that the orphan alone meets takes no run.
    let everything = txt_bytes_in_value_dirs(&w.root);
    let p = plan(
        &w,
        &GcPolicy {
            max_bytes: Some(everything - orphan_and_strays),
            orphans: true,
            ..GcPolicy::default()
        },
    );
    assert!(
        p.files.iter().all(|f| f.reason == GcReason::Orphan),
        "{:?}",
        paths(&p)
    );
    // A budget nothing can reach says so.
    let p = plan(
        &w,
        &GcPolicy {
            max_bytes: Some(1),
            ..GcPolicy::default()
        },
    );
    assert!(p.skipped.iter().any(|s| s.reason.starts_with("budget:")));
}
