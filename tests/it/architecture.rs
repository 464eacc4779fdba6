//! Guards of the layering docs/architecture.md describes: only `src/sources/` knows which
//! stores there are, and the app asks the backend about a store instead of matching its name.
//! A new agent stays one folder because nothing else can come to name one.

use std::fs;
use std::path::{Path, PathBuf};

fn files(dir: &Path, ext: &[&str], out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, ext, out);
        } else if path
            .extension()
            .is_some_and(|e| ext.iter().any(|x| e == *x))
        {
            out.push(path);
        }
    }
}

/// The code of a line, without a `//` comment (a comment may give a store as an example).
fn code(line: &str) -> &str {
    match line.find("//") {
        // A `//` inside a string literal (a URL) is rare here; a line with one is read whole.
        Some(at) if !line[..at].contains('"') => &line[..at],
        _ => line,
    }
}

/// Each `file:line` of `paths` whose code holds one of `needles`.
fn naming(root: &Path, paths: &[PathBuf], needles: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for path in paths {
        let text = fs::read_to_string(path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = code(line);
            if needles.iter().any(|n| code.contains(n.as_str())) {
                let rel = path.strip_prefix(root).unwrap_or(path);
                found.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    found
}

/// The kinds of store, as `src/sources/` spells them (every variant of `SourceKind`).
fn kinds() -> Vec<(&'static str, &'static str)> {
    use mission_control::sources::SourceKind;
    SourceKind::ALL
        .iter()
        .map(|k| {
            let variant = match k.as_str() {
                "klide" => "Klide",
                "claude" => "Claude",
                "codex" => "Codex",
                other => panic!("a new kind `{other}`: add its variant name here"),
            };
            (k.as_str(), variant)
        })
        .collect()
}

#[test]
fn nothing_outside_the_sources_names_a_store() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    files(&root.join("src"), &["rs"], &mut paths);
    files(&root.join("src-tauri/src"), &["rs"], &mut paths);
    let sources = root.join("src/sources");
    paths.retain(|p| !p.starts_with(&sources));
    assert!(paths.len() > 50, "the crate's files are read");
    let mut needles = Vec::new();
    for (name, variant) in kinds() {
        needles.push(format!("{name}::"));
        needles.push(format!("SourceKind::{variant}"));
        needles.push(format!("\"{name}\""));
    }
    let found = naming(root, &paths, &needles);
    assert!(
        found.is_empty(),
        "only src/sources/ may name a kind of store; ask the directory's source or its \
         capabilities instead (docs/architecture.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_app_matches_no_store_by_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ui = root.join("ui/src");
    let mut paths = Vec::new();
    files(&ui, &["ts", "svelte"], &mut paths);
    // Generated types and tests may spell the kinds; nothing else in the app.
    let gen = ui.join("gen");
    paths.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy();
        !p.starts_with(&gen) && !name.contains(".test.") && name != "testing.ts"
    });
    assert!(paths.len() > 20, "the app's files are read");
    let mut needles = Vec::new();
    for (name, _) in kinds() {
        needles.push(format!("'{name}'"));
        needles.push(format!("\"{name}\""));
        needles.push(format!("`{name}`"));
    }
    let found = naming(root, &paths, &needles);
    assert!(
        found.is_empty(),
        "the app asks a store's label and capabilities (settings.storeKinds, lib/sources.ts) \
         instead of matching its name:\n{}",
        found.join("\n")
    );
}
