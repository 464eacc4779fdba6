//! The threshold what-if (`mctl whatif`) on hand-built runs: the threshold itself stays inline,
//! one byte over is retained, and each retained result costs exactly the stub the core builds.

use crate::support::*;
use mission_control::retained::{stub_for, value_id};
use serde_json::Value;

/// `n` bytes of text in lines of 80 bytes.
fn text(n: usize) -> String {
    let line = format!("{}\n", "x".repeat(79));
    let mut s = line.repeat(n / 80 + 1);
    s.truncate(n);
    s
}

fn runs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut a = RunFile::new(dir.path(), "a");
    a.user("go")
        .tool("at", "read_file", &text(20_480), false)
        .tool("over", "read_file", &text(20_481), true)
        .tool("small", "bash", "ok\n", false)
        .done()
        .write();
    let mut b = RunFile::new(dir.path(), "b");
    b.user("go")
        .tool("big", "bash", &text(100_000), false)
        .done()
        .write();
    dir
}

fn whatif(root: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["whatif"];
    all.extend_from_slice(args);
    mctl_json(root, &all)
}

#[test]
fn at_the_threshold_and_one_byte_over() {
    let dir = runs();
    let answers = whatif(dir.path(), &["--threshold", "20480,20KiB,1MiB"]);
    let [at, same, huge] = answers.as_array().unwrap().as_slice() else {
        panic!("three answers: {answers}");
    };
    assert_eq!(at["threshold"], 20_480);
    assert_eq!(same, at, "20KiB is 20,480 bytes");
    assert_eq!(at["results"], 4);
    assert_eq!(at["totalBytes"], 20_480 + 20_481 + 3 + 100_000);
    // Only `over` (20,481 bytes) and `big`: the one at exactly 20,480 stays inline.
    assert_eq!(at["retained"], 2);
    assert_eq!(at["valueBytes"], 20_481 + 100_000);
    let stubs = stub_for(&value_id("over"), "read_file", &text(20_481)).len()
        + stub_for(&value_id("big"), "bash", &text(100_000)).len();
    assert_eq!(at["contextBytes"], 20_480 + 3 + stubs as u64);
    let saved = 20_481 + 100_000 - stubs as i64;
    assert_eq!(at["savedBytes"], saved);
    assert_eq!(at["savedTokens"], saved / 4);
    assert_eq!(at["perTool"]["read_file"]["retained"], 1);
    assert_eq!(at["perTool"]["bash"]["retained"], 1);
    assert_eq!(at["perTool"]["bash"]["results"], 2);
    // Sizes per power of two: 3 → 4, 20,480 and 20,481 → 32,768, 100,000 → 131,072.
    let histogram: Vec<(u64, u64)> = at["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["le"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(histogram, [(4, 1), (32_768, 2), (131_072, 1)]);
    assert_eq!(huge["retained"], 0);
    assert_eq!(huge["savedBytes"], 0);
    assert_eq!(huge["contextBytes"], huge["totalBytes"]);

    // One byte lower retains the one at 20,480 too.
    let lower = whatif(dir.path(), &["--threshold", "20479"]);
    assert_eq!(lower[0]["retained"], 3);
}

#[test]
fn one_run_and_the_default_threshold() {
    let dir = runs();
    let one = whatif(dir.path(), &["--run", "b"]);
    assert_eq!(one[0]["threshold"], 20_480);
    assert_eq!(one[0]["results"], 1);
    assert_eq!(one[0]["perTool"].as_object().unwrap().len(), 1);
    let text = stdout(&mctl(dir.path(), &["whatif", "--threshold", "8KiB"]));
    assert!(
        text.contains("threshold 8.0 KiB (8192 B): 3 of 4 results retained"),
        "{text}"
    );
}

#[test]
fn several_thresholds_are_for_whatif_only() {
    let dir = runs();
    let out = mctl(dir.path(), &["runs", "--threshold", "1,2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("several only for `whatif`"),
        "{}",
        stderr(&out)
    );
    let out = mctl(dir.path(), &["whatif", "--threshold", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    // A size is taken everywhere a threshold is.
    let runs = mctl_json(dir.path(), &["runs", "--threshold", "1MiB"]);
    assert_eq!(find(&runs, "b")["retained"], 0);
}

/// The app's what-if keeps the result sizes it read while the watcher reports no change, and
/// reads them again once it reports one: a run written after the first answer is counted.
#[test]
fn the_apps_what_if_follows_what_the_watcher_sees() {
    use mission_control::service::{Allowed, Service};
    use mission_control::wire::{DirsSource, WhatIfRequest};
    let dir = runs();
    let root = dir.path().to_string_lossy().into_owned();
    let settings = mission_control::service::settings(vec![root.clone()], DirsSource::Cli, 20_480);
    let svc = Service::new(settings, Allowed::ALL);
    svc.start();
    let ask = || {
        let req = WhatIfRequest {
            dir: root.clone(),
            thresholds: vec![20_480],
            run: None,
        };
        let [answer] = svc.what_if(req).unwrap().try_into().unwrap();
        serde_json::to_value(answer).unwrap()
    };
    // Once the watch has settled, the sizes read are kept, and answer alike from memory.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut first = ask();
    while !svc.what_if_kept(&root) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        first = ask();
    }
    assert!(
        svc.what_if_kept(&root),
        "the sizes kept once the watch settled"
    );
    assert_eq!(first["retained"], 2, "{first}");
    assert_eq!(ask(), first);
    assert!(svc.what_if_kept(&root), "still kept: nothing changed");
    // A run written now, with one more result over the threshold.
    let mut c = RunFile::new(dir.path(), "c");
    c.user("go")
        .tool("more", "bash", &text(50_000), false)
        .done()
        .write();
    let mut now = ask();
    while now["retained"] == 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
        now = ask();
    }
    assert_eq!(
        now["retained"], 3,
        "the new run counted once the watcher saw it: {now}"
    );
    svc.stop();
}
