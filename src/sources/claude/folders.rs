//! GC's view of a Claude Code store: a session's `tool-results/`, its `*.txt` and `*.json` files
//! directly inside or one folder below; never a `.jsonl`, never `subagents/`, never anything
//! else. The session's stamp is its transcript and its subagents' transcripts: any of them may
//! still write there.

use crate::model::stamp::files_stamp;
use crate::model::values::{value_file_of, ValueFile};
use crate::model::Layout;
use crate::sources::ValueFolders;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) struct SessionFolders {
    root: PathBuf,
    /// Each value folder, by the run (or orphan) it belongs to.
    dirs: BTreeMap<String, PathBuf>,
    /// The other runs whose values are in each folder (a session's subagents and side
    /// conversations), by the folder's run, with their transcripts.
    sharers: BTreeMap<String, Vec<(String, Option<PathBuf>)>>,
}

impl SessionFolders {
    pub(crate) fn of(layout: &Layout) -> Self {
        let dirs = layout.value_dirs.clone();
        let by_dir: BTreeMap<&Path, &String> =
            dirs.iter().map(|(id, d)| (d.as_path(), id)).collect();
        let mut sharers: BTreeMap<String, Vec<(String, Option<PathBuf>)>> = BTreeMap::new();
        for (id, files) in &layout.runs {
            let owner = (files.parent_values()).and_then(|d| by_dir.get(d));
            if let Some(owner) = owner.filter(|o| **o != id) {
                let sharer = (id.clone(), files.transcript.clone());
                sharers.entry((*owner).clone()).or_default().push(sharer);
            }
        }
        Self {
            root: layout.root.clone(),
            dirs,
            sharers,
        }
    }

    /// A session's transcript: `<project>/<session>.jsonl` beside its folder.
    fn session_transcript(&self, id: &str) -> Option<PathBuf> {
        let session = self.dirs.get(id)?.parent()?;
        let name = session.file_name()?.to_str()?;
        Some(session.with_file_name(format!("{name}.jsonl")))
    }
}

impl ValueFolders for SessionFolders {
    fn rel(&self, id: &str) -> String {
        match self.dirs.get(id) {
            Some(d) => d
                .strip_prefix(&self.root)
                .unwrap_or(d)
                .to_string_lossy()
                .into_owned(),
            None => format!("{id}/{}", super::TOOL_RESULTS),
        }
    }

    /// A session's, and its subagents' (those of `subagents/` now, and those the layout
    /// linked to it).
    fn writers(&self, id: &str) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.session_transcript(id).into_iter().collect();
        if let Some(agents) = self
            .dirs
            .get(id)
            .and_then(|d| d.parent())
            .map(|s| s.join(super::SUBAGENTS))
        {
            if let Ok(entries) = fs::read_dir(agents) {
                let mut found: Vec<PathBuf> = entries
                    .filter_map(|e| Some(e.ok()?.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                    .collect();
                found.sort();
                files.extend(found);
            }
        }
        // And what the layout says writes there: an older build's agent file beside the
        // sessions, linked to its session.
        let shared = (self.sharers.get(id).into_iter().flatten()).filter_map(|(_, t)| t.clone());
        for t in shared {
            if !files.contains(&t) {
                files.push(t);
            }
        }
        files
    }

    fn stamp(&self, id: &str) -> String {
        files_stamp(&self.writers(id))
    }

    /// A session whose subagents still write there owns its folder, its transcript gone or not.
    fn has_run(&self, id: &str) -> bool {
        self.writers(id)
            .iter()
            .any(|t| fs::symlink_metadata(t).is_ok())
    }

    fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        list_tool_results(dir)
    }

    /// Only a folder the layout names is collected from (a journal's path too).
    fn collects(&self, run: &str) -> bool {
        self.dirs.contains_key(run)
    }

    fn takes(&self, run: &str, rest: &[&str]) -> bool {
        let Some(name) = rest.last() else {
            return false;
        };
        self.rel(run).rsplit('/').next() == Some(super::TOOL_RESULTS)
            && (1..=2).contains(&rest.len())
            && (name.ends_with(".txt") || name.ends_with(".json"))
    }

    fn owned_alone(&self) -> bool {
        false
    }

    fn is_run_folder(&self, _: &str) -> bool {
        false
    }

    fn sharing_runs(&self, id: &str) -> Vec<&str> {
        (self.sharers.get(id).into_iter().flatten())
            .map(|(run, _)| run.as_str())
            .collect()
    }
}

/// The files of a `tool-results/` folder GC may take: regular `*.txt` and `*.json` files
/// directly inside, and in its real folders one level below (`<dir>/<name>` by stem). Links are
/// never followed, nor counted.
fn list_tool_results(dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
    let mut out = BTreeMap::new();
    add_files(dir, "", &mut out)?;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type().is_ok_and(|k| k.is_dir()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // A folder that cannot be listed is left alone.
        let _ = add_files(&entry.path(), &format!("{name}/"), &mut out);
    }
    Ok(out)
}

fn add_files(dir: &Path, prefix: &str, out: &mut BTreeMap<String, ValueFile>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type().is_ok_and(|k| k.is_file()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(stem) = name
            .strip_suffix(".txt")
            .or_else(|| name.strip_suffix(".json"))
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        let key = format!("{prefix}{stem}");
        // A `.txt` and a `.json` of one stem are both files to count: the second by its name.
        let key = match out.contains_key(&key) {
            true => format!("{prefix}{name}"),
            false => key,
        };
        out.insert(key.clone(), value_file_of(&key, entry.path(), &meta));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SourceKind;
    use crate::sources::store::CheckPath;

    #[test]
    fn only_files_of_the_runs_own_tool_results_pass() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let values = root.join("-p/s1/tool-results");
        fs::create_dir_all(&values).unwrap();
        let layout = Layout {
            root: root.to_path_buf(),
            source: SourceKind::Claude,
            value_dirs: [("s1".to_owned(), values)].into_iter().collect(),
            ..Default::default()
        };
        let o = SourceKind::Claude.store().value_folders(&layout);
        assert!(o.check_path("-p/s1/tool-results/toolu_1.txt", "s1").is_ok());
        assert!(o.check_path("-p/s1/tool-results/sub/x.json", "s1").is_ok());
        for bad in [
            "-p/s1.jsonl",
            "-p/s1/subagents/agent-a.jsonl",
            "-p/s1/tool-results/a/b/c.txt",
            "-p/s1/tool-results/../../s2.jsonl",
            "-p/s1/tool-results/x.sh",
            "-p/s2/tool-results/x.txt",
            "-p/s1/tool-results/x.jsonl",
        ] {
            assert!(o.check_path(bad, "s1").is_err(), "{bad}");
        }
        // How a report names the folder (GC's label is the folder and a slash).
        assert_eq!(format!("{}/", o.rel("s1")), "-p/s1/tool-results/");
        assert_eq!(o.writers("s1"), [root.join("-p/s1.jsonl")]);
        // A run the layout does not name has no folder to collect from (a journal's path).
        assert!(o.check_path("-p/s9/tool-results/x.txt", "s9").is_err());
        let codex = SourceKind::Codex.store().value_folders(&Layout {
            source: SourceKind::Codex,
            ..Default::default()
        });
        assert!(codex.check_path("s1/tool-results/x.txt", "s1").is_err());
        // A session whose transcript is gone still owns its folder while a subagent writes.
        fs::create_dir_all(root.join("-p/s1/subagents")).unwrap();
        fs::write(root.join("-p/s1/subagents/agent-a.jsonl"), "{}").unwrap();
        assert!(o.has_run("s1"));
    }
}
