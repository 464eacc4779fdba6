//! Opening a big retained value: from its file alone after a sampled check, its stub the same
//! as the transcript's, and the verdict of every byte after.

use crate::support::*;
use mission_control::runs::{RunOptions, RunsDir, ValueState, Verified};
use std::fs;

/// About 200 KB: more than the 64 KiB a sampled check compares at each end, twice.
fn big_text() -> String {
    (0..20_000).map(|i| format!("log line {i}\n")).collect()
}

#[test]
fn a_retained_value_opens_from_its_file_then_every_byte_is_checked() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = runs.path();
    let mut run = RunFile::new(root, "r");
    run.user("go")
        .tool("c1", "bash", &big_text(), true)
        .done()
        .write();
    let dir = |indexed: bool| {
        RunsDir::open(root, RunOptions::default())
            .unwrap()
            .with_cache_dir(cache.path())
            .with_index(indexed)
    };
    for indexed in [true, true, false] {
        let d = dir(indexed);
        let (info, value) = d.open_value("r", "c1").unwrap();
        assert_eq!(info.state, ValueState::Retained);
        assert_eq!(info.verified, Verified::Sampled, "indexed: {indexed}");
        assert_eq!(info.lines, 20_000);
        assert_eq!(value.index.lines(), 20_000);
        // The stub made from the file is the one made from the transcript's text.
        let stub = d.stub("r", "c1").unwrap().stub;
        assert_eq!(info.stub.as_ref(), Some(&stub));
        let verdict = d.verify_value("r", "c1").unwrap();
        assert_eq!(verdict.state, ValueState::Retained);
        assert_eq!(verdict.verified, Verified::Full);
        assert_eq!(verdict.stub.as_ref(), Some(&stub));
        assert_eq!(verdict.context_bytes, info.context_bytes);
    }

    // A byte changed in the middle, the size and both ends kept: the sampled check cannot see
    // it, the check of every byte does.
    let path = d_value_path(root);
    let mut bytes = fs::read(&path).unwrap();
    bytes[100_000] = b'#';
    fs::write(&path, &bytes).unwrap();
    for indexed in [true, false] {
        let d = dir(indexed);
        let (info, _) = d.open_value("r", "c1").unwrap();
        assert_eq!(
            (info.state, info.verified),
            (ValueState::Retained, Verified::Sampled)
        );
        let verdict = d.verify_value("r", "c1").unwrap();
        assert_eq!(
            (verdict.state, verdict.verified),
            (ValueState::Damaged, Verified::Full)
        );
        // The model saw the stub of the transcript's text, whatever the file holds now.
        assert_eq!(verdict.stub, Some(d.stub("r", "c1").unwrap().stub));
    }
}

#[test]
fn other_results_open_with_every_byte_checked_at_once() {
    let runs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = runs.path();
    let mut run = RunFile::new(root, "r");
    run.user("go")
        .tool("kept", "bash", &big_text(), false)
        .tool("small", "bash", "ok", false)
        .done()
        .write();
    run.value("stray", b"nobody names me");
    let d = RunsDir::open(root, RunOptions::default())
        .unwrap()
        .with_cache_dir(cache.path());
    for (call, state) in [
        ("kept", ValueState::Unretained),
        ("small", ValueState::Inline),
        ("stray", ValueState::Stray),
    ] {
        let (info, _) = d.open_value("r", call).unwrap();
        assert_eq!(
            (info.state, info.verified),
            (state, Verified::Full),
            "{call}"
        );
        assert_eq!(d.verify_value("r", call).unwrap().state, state, "{call}");
    }
}

fn d_value_path(root: &std::path::Path) -> std::path::PathBuf {
    root.join("r.values")
        .join(format!("{}.txt", mission_control::retained::value_id("c1")))
}

/// The app's run view: a run read with its values sampled (what it paints first) and then with
/// every byte compared (the verdict it shows after), through the service as the app asks it.
#[test]
fn a_run_opens_from_a_sample_of_its_values_and_the_verdict_of_every_byte_follows() {
    use mission_control::model::RetentionState;
    use mission_control::service::{Allowed, Service};
    use mission_control::wire::{DetailVerify, DirsSource, RunDetailRequest};
    let runs = tempfile::tempdir().unwrap();
    let root = runs.path();
    let mut run = RunFile::new(root, "r");
    run.user("go")
        .tool("c1", "bash", &big_text(), true)
        .done()
        .write();
    let path = d_value_path(root);
    let mut bytes = fs::read(&path).unwrap();
    bytes[100_000] = b'#';
    fs::write(&path, &bytes).unwrap();
    let dir = root.to_string_lossy().into_owned();
    let settings = mission_control::service::settings(vec![dir.clone()], DirsSource::Cli, 20_480);
    let svc = Service::new(settings, Allowed::ALL);
    let read = |verify| {
        let req = RunDetailRequest {
            dir: dir.clone(),
            run: "r".into(),
            verify,
        };
        svc.run_detail(req).unwrap().results[0].state
    };
    assert_eq!(read(Some(DetailVerify::Sampled)), RetentionState::Retained);
    assert_eq!(read(Some(DetailVerify::Full)), RetentionState::Damaged);
    // Asked as before (scripts over `mctl serve`): every byte.
    assert_eq!(read(None), RetentionState::Damaged);
}
