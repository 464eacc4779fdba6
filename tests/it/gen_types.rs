//! The TypeScript wire types in `ui/src/gen/` are generated from the Rust DTOs (ts-rs) and
//! committed. This test fails when they are stale; `UPDATE_GEN=1 cargo test gen_types` rewrites
//! them.

use mission_control::gc::{GcPolicy, GcReport, Progress, StorageStats};
use mission_control::retained::open::LinesPage;
use mission_control::retained::{Peek, PeekRequest};
use mission_control::runs::RunDetail;
use mission_control::watch::Change;
use mission_control::wire::{ResultRef, RunKey, RunList, RunPatch, RunUpdate, Settings, ValueInfo};
use mission_control::{Error, ErrorCode};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use ts_rs::{Config, TS};

fn generate(out: &Path) {
    let cfg = Config::new().with_large_int("number").with_out_dir(out);
    RunDetail::export_all(&cfg).unwrap();
    RunList::export_all(&cfg).unwrap();
    Peek::export_all(&cfg).unwrap();
    PeekRequest::export_all(&cfg).unwrap();
    LinesPage::export_all(&cfg).unwrap();
    ValueInfo::export_all(&cfg).unwrap();
    ResultRef::export_all(&cfg).unwrap();
    Settings::export_all(&cfg).unwrap();
    Error::export_all(&cfg).unwrap();
    ErrorCode::export_all(&cfg).unwrap();
    GcPolicy::export_all(&cfg).unwrap();
    GcReport::export_all(&cfg).unwrap();
    Progress::export_all(&cfg).unwrap();
    StorageStats::export_all(&cfg).unwrap();
    Change::export_all(&cfg).unwrap();
    RunUpdate::export_all(&cfg).unwrap();
    RunKey::export_all(&cfg).unwrap();
    RunPatch::export_all(&cfg).unwrap();
}

fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".ts"))
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn generated_typescript_types_are_up_to_date() {
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path());
    let committed_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/src/gen");
    let want = read_dir(fresh.path());
    if std::env::var_os("UPDATE_GEN").is_some() {
        let _ = fs::remove_dir_all(&committed_dir);
        fs::create_dir_all(&committed_dir).unwrap();
        for (name, text) in &want {
            fs::write(committed_dir.join(name), text).unwrap();
        }
    }
    let have = read_dir(&committed_dir);
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&have),
        names(&want),
        "ui/src/gen is stale: run UPDATE_GEN=1 cargo test gen_types"
    );
    for (name, text) in &want {
        assert_eq!(
            &have[name], text,
            "ui/src/gen/{name} is stale: run UPDATE_GEN=1 cargo test gen_types"
        );
    }
}
