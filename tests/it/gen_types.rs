//! The TypeScript wire types in `ui/src/gen/` are generated from the command contract and the
//! Rust DTOs it names (ts-rs), and committed. This test fails when they are stale; `UPDATE_GEN=1 cargo test gen_types` rewrites
//! them.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Every type comes from the command contract (`src/wire/commands.rs`): what a command takes,
/// answers or streams is exported with all it depends on, and nothing else is.
fn generate(out: &Path) {
    mission_control::wire::export_typescript(out).unwrap();
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
