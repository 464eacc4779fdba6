//! Which runs a Gemini CLI store holds (docs/agents.md): chats under
//! `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.json` (a JSON document, up to v0.38) or
//! `.jsonl` (a log, from v0.39; a resumed `.json` gets a `.jsonl` copy beside it, which wins),
//! and from v0.37 each subagent's chat in `chats/<parent session id>/<session id>.json[l]`, a
//! run under its parent. `tmp`, one project folder or one `chats` folder opens alike. Links
//! are never followed.

use crate::model::layout::{Layout, Nesting, RunFiles};
use crate::model::SourceKind;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The folder of a project's chats.
pub(crate) const CHATS: &str = "chats";

/// The run id of a chat file's name (`session-2025-10-27T19-55-981c87cb.json` → its stem),
/// whether it is a log (`.jsonl`); `None` for any other file.
pub(crate) fn chat_id(name: &str) -> Option<(&str, bool)> {
    if let Some(stem) = name.strip_suffix(".jsonl") {
        return Some((stem, true));
    }
    name.strip_suffix(".json").map(|stem| (stem, false))
}

/// Whether `name` is a main chat's file name.
pub(crate) fn is_session_file(name: &str) -> bool {
    name.starts_with("session-") && chat_id(name).is_some()
}

pub(crate) fn read(root: &Path) -> io::Result<Layout> {
    let mut runs: BTreeMap<String, RunFiles> = BTreeMap::new();
    let folders = chat_folders(root)?;
    for chats in &folders {
        read_chats(chats, &mut runs);
    }
    let mut layout = Layout {
        root: root.to_path_buf(),
        source: SourceKind::Gemini,
        runs,
        ..Default::default()
    };
    // A project's saved outputs are beside its chats (only under the folder opened).
    let projects: Vec<PathBuf> = (folders.iter())
        .filter_map(|c| c.parent().map(Path::to_path_buf))
        .collect();
    super::folders::value_dirs(root, &projects, &mut layout);
    Ok(layout)
}

/// The `chats` folders of the store at `root`: itself (a folder of chat files), its own
/// `chats`, or each project folder's.
fn chat_folders(root: &Path) -> io::Result<Vec<PathBuf>> {
    let names = folder_names(root)?;
    if names.iter().any(|(n, file)| *file && is_session_file(n)) {
        return Ok(vec![root.to_path_buf()]);
    }
    if names.iter().any(|(n, file)| !file && n == CHATS) {
        return Ok(vec![root.join(CHATS)]);
    }
    Ok((names.iter())
        .filter(|(_, file)| !file)
        .map(|(n, _)| root.join(n).join(CHATS))
        .filter(|c| c.is_dir())
        .collect())
}

/// The names in `dir`, each with whether it is a file (links left out).
fn folder_names(dir: &Path) -> io::Result<Vec<(String, bool)>> {
    Ok(fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let kind = e.file_type().ok()?;
            let name = e.file_name().into_string().ok()?;
            (kind.is_file() || kind.is_dir()).then_some((name, kind.is_file()))
        })
        .collect())
}

/// The chats of one `chats` folder, and its subagents' chats.
fn read_chats(chats: &Path, runs: &mut BTreeMap<String, RunFiles>) {
    let Ok(names) = folder_names(chats) else {
        return;
    };
    let mut mains: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (name, _) in names.iter().filter(|(n, file)| *file && is_session_file(n)) {
        let Some((id, log)) = chat_id(name) else {
            continue;
        };
        // A resumed chat's log holds all of it: it wins over the document it came from.
        if log || !mains.contains_key(id) {
            mains.insert(id.to_owned(), chats.join(name));
        }
    }
    for (name, _) in names.iter().filter(|(_, file)| !file) {
        // `chats/<parent session id>/`: its chats are the parent's subagents.
        let parent = mains
            .keys()
            .find(|id| {
                name.get(..8)
                    .is_some_and(|short| id.ends_with(&format!("-{short}")))
            })
            .cloned();
        read_subagents(&chats.join(name), parent, runs);
    }
    for (id, path) in mains {
        runs.entry(id).or_insert(RunFiles {
            transcript: Some(path),
            ..Default::default()
        });
    }
}

fn read_subagents(dir: &Path, parent: Option<String>, runs: &mut BTreeMap<String, RunFiles>) {
    let parent: Option<std::sync::Arc<str>> = parent.map(Into::into);
    let Ok(names) = folder_names(dir) else {
        return;
    };
    let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (name, _) in names.iter().filter(|(_, file)| *file) {
        let Some((id, log)) = chat_id(name) else {
            continue;
        };
        if log || !found.contains_key(id) {
            found.insert(id.to_owned(), dir.join(name));
        }
    }
    for (id, path) in found {
        let nesting = Nesting {
            parent: parent.clone(),
            ..Default::default()
        };
        runs.entry(id).or_insert(RunFiles::nested(path, nesting));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_wins_over_its_document_and_subagents_nest_under_their_session() {
        let dir = tempfile::tempdir().unwrap();
        let chats = dir.path().join("proj").join(CHATS);
        let sub = chats.join("981c87cb-1111-4000-8000-000000000000");
        fs::create_dir_all(&sub).unwrap();
        for f in [
            "session-2025-10-27T19-55-981c87cb.json",
            "session-2025-10-27T19-55-981c87cb.jsonl",
            "notes.txt",
        ] {
            fs::write(chats.join(f), "{}").unwrap();
        }
        fs::write(sub.join("aa11bb22-0000-4000-8000-000000000000.jsonl"), "{}").unwrap();
        let layout = read(dir.path()).unwrap();
        let ids: Vec<&String> = layout.runs.keys().collect();
        assert_eq!(
            ids,
            [
                "aa11bb22-0000-4000-8000-000000000000",
                "session-2025-10-27T19-55-981c87cb"
            ]
        );
        let main = &layout.runs["session-2025-10-27T19-55-981c87cb"];
        assert!(main
            .transcript
            .as_ref()
            .unwrap()
            .to_string_lossy()
            .ends_with(".jsonl"));
        let child = &layout.runs["aa11bb22-0000-4000-8000-000000000000"];
        assert_eq!(child.parent(), Some("session-2025-10-27T19-55-981c87cb"));
        // The project folder and its chats folder open alike.
        assert_eq!(read(&dir.path().join("proj")).unwrap().runs.len(), 2);
        assert_eq!(read(&chats).unwrap().runs.len(), 2);
    }
}
