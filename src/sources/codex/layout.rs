//! Which runs a Codex store holds (docs/agents.md): rollouts under
//! `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, or `.jsonl.zst` once Codex
//! compressed an idle one (a plain sibling wins). A directory of rollouts at any of those levels
//! opens too. Links are never followed.

use crate::model::layout::{Layout, RunFiles};
use crate::model::SourceKind;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// `sessions/YYYY/MM/DD/`: rollouts are three folders down.
const MAX_DEPTH: usize = 3;

pub(crate) fn read(root: &Path) -> io::Result<Layout> {
    let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
    walk(root, 0, &mut found)?;
    let runs: BTreeMap<String, RunFiles> = found
        .into_iter()
        .map(|(id, path)| {
            let files = RunFiles {
                transcript: Some(path),
                ..Default::default()
            };
            (id, files)
        })
        .collect();
    Ok(Layout {
        root: root.to_path_buf(),
        source: SourceKind::Codex,
        runs,
        ..Default::default()
    })
}

fn walk(dir: &Path, depth: usize, found: &mut BTreeMap<String, PathBuf>) -> io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        // Below the top, a folder that vanished or cannot be read holds nothing to show.
        Err(e) if depth == 0 => return Err(e),
        Err(_) => return Ok(()),
    };
    for entry in entries.filter_map(Result::ok) {
        let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
            continue;
        };
        if kind.is_dir() && depth < MAX_DEPTH {
            walk(&entry.path(), depth + 1, found)?;
        } else if kind.is_file() {
            let Some((id, compressed)) = rollout_id(&name) else {
                continue;
            };
            // A plain rollout wins over its compressed copy.
            let keep = match found.get(&id) {
                Some(old) => compressed_path(old) && !compressed,
                None => true,
            };
            if keep {
                found.insert(id, entry.path());
            }
        }
    }
    Ok(())
}

fn compressed_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// The run id of a rollout file name: its thread id (the last 36 characters of its stem, a
/// UUID), else its whole stem; and whether it is compressed.
pub(crate) fn rollout_id(name: &str) -> Option<(String, bool)> {
    if !name.starts_with("rollout-") {
        return None;
    }
    let (stem, compressed) = match name.strip_suffix(".jsonl.zst") {
        Some(stem) => (stem, true),
        None => (name.strip_suffix(".jsonl")?, false),
    };
    let tail = stem.len().checked_sub(36).and_then(|at| stem.get(at..));
    let id = match tail {
        Some(uuid) if is_uuid(uuid) => uuid,
        _ => stem,
    };
    Some((id.to_owned(), compressed))
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollout_is_named_by_its_thread_id() {
        assert_eq!(
            rollout_id("rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"),
            Some(("01997e76-d124-7592-9cac-2ec05abbca08".into(), false))
        );
        assert_eq!(
            rollout_id("rollout-x.jsonl.zst"),
            Some(("rollout-x".into(), true))
        );
        assert_eq!(rollout_id("notes.jsonl"), None);
        assert_eq!(rollout_id("rollout-a.json"), None);
    }

    #[test]
    fn plain_rollouts_win_and_days_are_walked() {
        let dir = tempfile::tempdir().unwrap();
        let day = dir.path().join("2026/05/11");
        fs::create_dir_all(&day).unwrap();
        let id = "019e1625-789d-76c0-80ab-3724b5ddb799";
        fs::write(
            day.join(format!("rollout-2026-05-11T11-26-55-{id}.jsonl.zst")),
            b"",
        )
        .unwrap();
        fs::write(
            day.join(format!("rollout-2026-05-11T11-26-55-{id}.jsonl")),
            b"",
        )
        .unwrap();
        fs::write(dir.path().join("rollout-flat.jsonl"), b"").unwrap();
        let layout = read(dir.path()).unwrap();
        let ids: Vec<&str> = layout.runs.keys().map(String::as_str).collect();
        assert_eq!(ids, [id, "rollout-flat"]);
        let path = layout.runs[id].transcript.as_ref().unwrap();
        assert!(path.to_string_lossy().ends_with(".jsonl"));
    }
}
