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
                "gemini" => "Gemini",
                "opencode" => "Opencode",
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

/// The layers of the library, lowest first (docs/architecture.md): a module may use its own
/// layer and those below, never one above. `Error` and `Result` (crate root, `error.rs`) are
/// everyone's.
const LAYERS: &[&[&str]] = &[
    &["error", "retained", "model", "config", "elsewhere", "sync"],
    &["prices", "transcript", "pins", "progress"],
    &["fold"],
    &["sources"],
    &["index"],
    &["runs"],
    &[
        "gc", "search", "insights", "diff", "export", "watch", "demo", "remote",
    ],
    &["wire"],
    &["service"],
];

/// Each top-level module of the library and the modules its code names (`crate::<module>`).
fn library_graph(root: &Path) -> std::collections::BTreeMap<String, Vec<(String, String)>> {
    let src = root.join("src");
    let mut paths = Vec::new();
    files(&src, &["rs"], &mut paths);
    let bin = src.join("bin");
    let mut graph: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    let modules: Vec<String> = LAYERS
        .iter()
        .flat_map(|l| l.iter().map(|m| m.to_string()))
        .collect();
    for path in paths.iter().filter(|p| !p.starts_with(&bin)) {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_owned();
        if module == "lib" {
            continue;
        }
        let edges = graph.entry(module.clone()).or_default();
        let text = fs::read_to_string(path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = code(line);
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name != module && modules.contains(&name) {
                    edges.push((name, format!("{}:{}", rel.display(), i + 1)));
                }
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one (names in order, the first repeated at the end).
fn find_cycle(graph: &std::collections::BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_library_is_layered_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = library_graph(root);
    let rank = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    let mut upward = Vec::new();
    for (module, edges) in &graph {
        let Some(own) = rank(module) else {
            panic!("src/{module} is in no layer: give it one in LAYERS and docs/architecture.md");
        };
        for (used, at) in edges {
            if rank(used).is_some_and(|r| r > own) {
                upward.push(format!("{module} uses {used} above it: {at}"));
            }
        }
    }
    assert!(upward.is_empty(), "{}", upward.join("\n"));
    let plain = graph
        .iter()
        .map(|(m, e)| (m.clone(), e.iter().map(|(u, _)| u.clone()).collect()))
        .collect();
    assert_eq!(find_cycle(&plain), None, "the modules' uses form a cycle");
    // The run model stands alone: only the spec's pure functions under it.
    let model: Vec<&String> = graph["model"].iter().map(|(u, _)| u).collect();
    assert!(
        model.iter().all(|u| *u == "retained"),
        "model uses {model:?}"
    );
}

#[test]
fn the_command_line_files_use_each_other_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = root.join("src/bin/mctl");
    let mut paths = Vec::new();
    files(&bin, &["rs"], &mut paths);
    // A folder's `mod.rs` (and `main.rs`) is its parent: children name it by nature.
    let node = |p: &Path| -> Option<String> {
        let name = p.file_name()?.to_str()?;
        (name != "mod.rs" && name != "main.rs").then(|| {
            p.strip_prefix(&bin)
                .unwrap()
                .with_extension("")
                .display()
                .to_string()
        })
    };
    let known: Vec<String> = paths.iter().filter_map(|p| node(p)).collect();
    let mut graph = std::collections::BTreeMap::new();
    for path in &paths {
        let Some(me) = node(path) else { continue };
        let folder = Path::new(&me).parent().unwrap().to_path_buf();
        let mut uses = Vec::new();
        for line in fs::read_to_string(path).unwrap().lines() {
            let code = code(line);
            for (prefix, base) in [("super::", folder.clone()), ("crate::", PathBuf::new())] {
                for (at, _) in code.match_indices(prefix) {
                    let name: String = code[at + prefix.len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let target = base.join(&name).display().to_string();
                    if target != me && known.contains(&target) {
                        uses.push(target);
                    }
                }
            }
        }
        graph.insert(me, uses);
    }
    assert!(graph.len() > 10, "the command line's files are read");
    assert_eq!(
        find_cycle(&graph),
        None,
        "files of src/bin/mctl use each other in a cycle"
    );
}
