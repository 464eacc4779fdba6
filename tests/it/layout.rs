//! The test binary itself: every file in `tests/it/` is one of its modules (a file left out of
//! `main.rs` would never run, and nobody would notice).

use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_file_in_tests_it_is_compiled_into_the_test_binary() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod "))
        .map(|m| m.trim_end_matches(';').trim().to_owned())
        .collect();
    // A module is a file, or a folder with its `mod.rs`.
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            if p.join("mod.rs").is_file() {
                return Some(name);
            }
            name.strip_suffix(".rs").map(str::to_owned)
        })
        .filter(|name| name != "main")
        .collect();
    assert_eq!(
        declared, files,
        "tests/it/*.rs and the `mod` lines of tests/it/main.rs"
    );
}
