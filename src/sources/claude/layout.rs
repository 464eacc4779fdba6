//! Which runs a Claude Code store holds (docs/agents.md): a `projects` directory of project
//! folders, or one project folder. In a project folder, `<session>.jsonl` is a session and
//! `<session>/` its folder: `tool-results/` holds its persisted outputs (and its subagents'),
//! `subagents/agent-<id>.jsonl` its subagents. Older builds put `agent-<id>.jsonl` beside the
//! sessions. Links are never followed.

use crate::runs::layout::{Layout, RunFiles};
use crate::sources::SourceKind;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The folder of a session that holds its persisted outputs.
pub(crate) const TOOL_RESULTS: &str = "tool-results";
/// The folder of a session that holds its subagents' transcripts.
pub(crate) const SUBAGENTS: &str = "subagents";

/// Reads a projects directory or a project folder.
pub(crate) fn read(root: &Path) -> io::Result<Layout> {
    let mut found = Found::default();
    let mut projects = Vec::new();
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
            continue;
        };
        if kind.is_dir() && !is_session_folder(&entry.path()) && !has_transcript(root, &name) {
            projects.push(entry.path());
        }
    }
    found.project(root)?;
    // In name order, so that which of two same-named sessions keeps the bare id never changes.
    projects.sort();
    for project in projects {
        // A project folder that vanished or cannot be read holds nothing to show.
        let _ = found.project(&project);
    }
    Ok(found.into_layout(root))
}

fn has_transcript(dir: &Path, name: &str) -> bool {
    crate::runs::layout::is_regular_file(&dir.join(format!("{name}.jsonl")))
}

/// A session's folder: it holds `tool-results/` or `subagents/`.
fn is_session_folder(dir: &Path) -> bool {
    [TOOL_RESULTS, SUBAGENTS]
        .iter()
        .any(|sub| fs::symlink_metadata(dir.join(sub)).is_ok())
}

#[derive(Default)]
struct Found {
    runs: BTreeMap<String, RunFiles>,
    value_dirs: BTreeMap<String, PathBuf>,
    linked: Vec<String>,
    /// Sessions whose transcript is gone but whose subagents still write to their folder: no
    /// orphans.
    owned: Vec<String>,
}

impl Found {
    /// The id a run of `project` gets: its file's stem, or, when another project already has a
    /// run of that name, the stem qualified by the project folder's name.
    fn id_for(&self, stem: &str, project: &Path) -> String {
        if !self.runs.contains_key(stem) && !self.value_dirs.contains_key(stem) {
            return stem.to_owned();
        }
        let folder = project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{stem}@{folder}")
    }

    fn project(&mut self, project: &Path) -> io::Result<()> {
        let mut sessions = Vec::new();
        let mut folders = Vec::new();
        for entry in fs::read_dir(project)? {
            let entry = entry?;
            let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
                continue;
            };
            if kind.is_file() {
                if let Some(stem) = name.strip_suffix(".jsonl").filter(|s| !s.is_empty()) {
                    sessions.push((stem.to_owned(), entry.path()));
                }
            } else if kind.is_dir() {
                folders.push((name, entry.path()));
            }
        }
        sessions.sort();
        folders.sort();
        let mut ids = BTreeMap::new();
        for (stem, path) in sessions {
            let id = self.id_for(&stem, project);
            ids.insert(stem, id.clone());
            self.runs.insert(
                id,
                RunFiles {
                    transcript: Some(path),
                    ..Default::default()
                },
            );
        }
        for (name, folder) in folders {
            if !is_session_folder(&folder) {
                continue;
            }
            let session = match ids.get(&name) {
                Some(id) => id.clone(),
                // A session folder whose transcript is gone: its values are orphans.
                None => self.id_for(&name, project),
            };
            let tool_results = folder.join(TOOL_RESULTS);
            match fs::symlink_metadata(&tool_results) {
                Ok(m) if m.is_dir() => {
                    self.value_dirs
                        .insert(session.clone(), tool_results.clone());
                }
                Ok(m) if m.file_type().is_symlink() => self.linked.push(session.clone()),
                _ => {}
            }
            self.subagents(&folder.join(SUBAGENTS), &session, &tool_results);
        }
        Ok(())
    }

    /// The subagents of `session`: `agent-<id>.jsonl` files, each a run whose parent is the
    /// session and whose values sit in the session's `tool-results/`.
    fn subagents(&mut self, dir: &Path, session: &str, values: &Path) {
        // A link is not followed; symlink_metadata does not follow one.
        if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut agents: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|k| k.is_file()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let stem = name.strip_suffix(".jsonl")?;
                stem.starts_with("agent-")
                    .then(|| (stem.to_owned(), e.path()))
            })
            .collect();
        agents.sort();
        if !agents.is_empty() {
            self.owned.push(session.to_owned());
        }
        for (stem, path) in agents {
            let id = match self.runs.contains_key(&stem) {
                false => stem,
                true => format!("{stem}@{session}"),
            };
            self.runs.insert(
                id,
                RunFiles {
                    transcript: Some(path),
                    summary: None,
                    parent: Some(session.to_owned()),
                    parent_values: Some(values.to_path_buf()),
                },
            );
        }
    }

    fn into_layout(self, root: &Path) -> Layout {
        let run_names = self.runs.keys().chain(&self.owned).cloned().collect();
        Layout {
            root: root.to_path_buf(),
            source: SourceKind::Claude,
            runs: self.runs,
            value_dirs: self.value_dirs,
            linked_value_dirs: self.linked.into_iter().collect(),
            run_names,
        }
    }
}
