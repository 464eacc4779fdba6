//! Where each run's value folder lies in its store, which files in it GC may take, and what
//! proves the run untouched: the one place GC learns what kind of store it collects from.
//!
//! - A runs directory: `<run>.values/*.txt`, the run's stamp its transcript and summary.
//! - Claude Code: a session's `tool-results/`, its `*.txt` and `*.json` files directly inside or
//!   one folder below; never a `.jsonl`, never `subagents/`, never anything else. The session's
//!   stamp is its transcript and its subagents' transcripts: any of them may still write there.
//! - Codex keeps no values: there is nothing to collect.

use super::stamp::run_stamp;
use crate::runs::layout::{is_valid_run_id, value_dir_name, Layout, RunPaths, VALUE_EXT};
use crate::runs::options::mtime_ns;
use crate::runs::values::{list_value_files, value_file_of, ValueFile};
use crate::sources::SourceKind;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) struct Owners {
    root: PathBuf,
    source: SourceKind,
    /// Each value folder of another agent's store, by the run (or orphan) it belongs to.
    dirs: BTreeMap<String, PathBuf>,
    /// The other runs whose values are in each folder (a Claude Code session's subagents and
    /// side conversations), by the folder's run, with their transcripts.
    sharers: BTreeMap<String, Vec<(String, Option<PathBuf>)>>,
}

/// A component a path may hold: not empty, not `.` or `..`, no separator.
fn plain(s: &str) -> bool {
    is_valid_run_id(s)
}

impl Owners {
    pub(crate) fn of(layout: &Layout) -> Self {
        let dirs = match layout.source {
            SourceKind::Klide => BTreeMap::new(),
            _ => layout.value_dirs.clone(),
        };
        let by_dir: BTreeMap<&PathBuf, &String> = dirs.iter().map(|(id, d)| (d, id)).collect();
        let mut sharers: BTreeMap<String, Vec<(String, Option<PathBuf>)>> = BTreeMap::new();
        for (id, files) in &layout.runs {
            let owner = (files.parent_values.as_ref()).and_then(|d| by_dir.get(d));
            if let Some(owner) = owner.filter(|o| **o != id) {
                let sharer = (id.clone(), files.transcript.clone());
                sharers.entry((*owner).clone()).or_default().push(sharer);
            }
        }
        Self {
            root: layout.root.clone(),
            source: layout.source,
            dirs,
            sharers,
        }
    }

    /// Whether `id`'s value folder is pinned: its run is, or (another agent's store) a run
    /// whose values share the folder.
    pub(crate) fn pinned(&self, id: &str, pinned: &std::collections::HashSet<String>) -> bool {
        pinned.contains(id)
            || (self.sharers.get(id).into_iter().flatten()).any(|(run, _)| pinned.contains(run))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn source(&self) -> SourceKind {
        self.source
    }

    /// The value folder of `id`, relative to the store's root.
    fn rel(&self, id: &str) -> String {
        match self.source {
            SourceKind::Klide => value_dir_name(id),
            _ => match self.dirs.get(id) {
                Some(d) => d
                    .strip_prefix(&self.root)
                    .unwrap_or(d)
                    .to_string_lossy()
                    .into_owned(),
                None => format!("{id}/tool-results"),
            },
        }
    }

    /// How a report names the value folder of `id`.
    pub(crate) fn label(&self, id: &str) -> String {
        format!("{}/", self.rel(id))
    }

    /// A Claude Code session's transcript: `<project>/<session>.jsonl` beside its folder.
    fn session_transcript(&self, id: &str) -> Option<PathBuf> {
        let session = self.dirs.get(id)?.parent()?;
        let name = session.file_name()?.to_str()?;
        Some(session.with_file_name(format!("{name}.jsonl")))
    }

    /// The transcripts that write to `id`'s value folder: a session's, and its subagents'
    /// (those of `subagents/` now, and those the layout linked to it).
    fn writers(&self, id: &str) -> Vec<PathBuf> {
        if self.source == SourceKind::Klide {
            return vec![RunPaths::new(&self.root, id).transcript()];
        }
        let mut files: Vec<PathBuf> = self.session_transcript(id).into_iter().collect();
        if let Some(agents) = self
            .dirs
            .get(id)
            .and_then(|d| d.parent())
            .map(|s| s.join("subagents"))
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

    /// When anything that writes to `id`'s value folder last changed (the idle guard).
    pub(crate) fn changed_ms(&self, id: &str) -> Option<i64> {
        self.writers(id)
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .filter_map(|m| crate::runs::options::modified_ms(&m))
            .max()
    }

    /// The state of the run's files: any write changes it.
    pub(crate) fn stamp(&self, id: &str) -> String {
        if self.source == SourceKind::Klide {
            return run_stamp(&self.root, id);
        }
        self.writers(id)
            .iter()
            .map(|p| match fs::symlink_metadata(p) {
                Ok(m) => format!("{}:{}", m.len(), mtime_ns(&m)),
                Err(_) => "-".to_owned(),
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// Whether a run owns `id`'s folder now (an orphan that got its transcript back, or a
    /// session whose subagents still write there).
    pub(crate) fn has_run(&self, id: &str) -> bool {
        match self.source {
            SourceKind::Klide => RunPaths::new(&self.root, id)
                .run_files()
                .iter()
                .any(|p| fs::symlink_metadata(p).is_ok()),
            _ => self
                .writers(id)
                .iter()
                .any(|t| fs::symlink_metadata(t).is_ok()),
        }
    }

    /// The files of value folder `dir` GC may take.
    pub(crate) fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        match self.source {
            SourceKind::Klide => list_value_files(dir),
            _ => list_tool_results(dir),
        }
    }

    /// The components of a planned file's path, checked to be a value file of run `run`'s
    /// folder: `<run>.values/<name>.txt`, or under a session's `tool-results/` one or two
    /// plain components ending `.txt` or `.json`.
    pub(crate) fn check_path(&self, path: &str, run: &str) -> Result<Vec<String>, String> {
        let bad = || Err(format!("not a value file path of run {run}"));
        // Only a folder the store's layout names is collected from (a journal's path too); a
        // Codex store has none.
        let known = match self.source {
            SourceKind::Klide => plain(run),
            SourceKind::Claude => self.dirs.contains_key(run),
            SourceKind::Codex => false,
        };
        if !known {
            return bad();
        }
        let parts: Vec<&str> = path.split('/').collect();
        if !parts.iter().all(|p| plain(p)) {
            return bad();
        }
        let dir: Vec<String> = self.rel(run).split('/').map(str::to_owned).collect();
        let Some(rest) = parts.strip_prefix(
            dir.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
        ) else {
            return bad();
        };
        let Some(name) = rest.last() else {
            return bad();
        };
        let ok = match self.source {
            SourceKind::Klide => rest.len() == 1 && name.ends_with(VALUE_EXT),
            _ => {
                dir.last().map(String::as_str) == Some(crate::sources::claude::TOOL_RESULTS)
                    && (1..=2).contains(&rest.len())
                    && (name.ends_with(".txt") || name.ends_with(".json"))
            }
        };
        match ok {
            true => Ok(parts.iter().map(|s| (*s).to_owned()).collect()),
            false => bad(),
        }
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
        let o = Owners::of(&layout);
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
        assert_eq!(o.label("s1"), "-p/s1/tool-results/");
        assert_eq!(o.writers("s1"), [root.join("-p/s1.jsonl")]);
        // A run the layout does not name has no folder to collect from (a journal's path).
        assert!(o.check_path("-p/s9/tool-results/x.txt", "s9").is_err());
        let codex = Owners::of(&Layout {
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
