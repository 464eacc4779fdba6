//! Where each run's value folder lies in its store, which files in it GC may take, and what
//! proves the run untouched: GC asks the store's source ([`ValueFolders`]) and checks every
//! planned path here, the same way for every store.

use crate::runs::layout::{is_valid_run_id, Layout};
use crate::runs::values::ValueFile;
use crate::sources::ValueFolders;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) struct Owners {
    root: PathBuf,
    folders: Box<dyn ValueFolders>,
}

/// A component a path may hold: not empty, not `.` or `..`, no separator.
fn plain(s: &str) -> bool {
    is_valid_run_id(s)
}

impl Owners {
    pub(crate) fn of(layout: &Layout) -> Self {
        Self {
            root: layout.root.clone(),
            folders: layout.store().value_folders(layout),
        }
    }

    /// Whether `id`'s value folder is pinned: its run is, or a run whose values share the
    /// folder (a session's subagents).
    pub(crate) fn pinned(&self, id: &str, pinned: &std::collections::HashSet<String>) -> bool {
        pinned.contains(id)
            || (self.folders.sharing_runs(id).iter()).any(|run| pinned.contains(*run))
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether each folder is its run's alone (see [`ValueFolders::owned_alone`]).
    pub(crate) fn owned_alone(&self) -> bool {
        self.folders.owned_alone()
    }

    /// Whether folder `d` is also a run's own folder.
    pub(crate) fn is_run_folder(&self, d: &str) -> bool {
        self.folders.is_run_folder(d)
    }

    /// How a report names the value folder of `id`.
    pub(crate) fn label(&self, id: &str) -> String {
        format!("{}/", self.folders.rel(id))
    }

    #[cfg(test)]
    pub(crate) fn writers(&self, id: &str) -> Vec<PathBuf> {
        self.folders.writers(id)
    }

    /// When anything that writes to `id`'s value folder last changed (the idle guard).
    pub(crate) fn changed_ms(&self, id: &str) -> Option<i64> {
        self.folders
            .writers(id)
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .filter_map(|m| crate::runs::options::modified_ms(&m))
            .max()
    }

    /// The state of the run's files: any write changes it.
    pub(crate) fn stamp(&self, id: &str) -> String {
        self.folders.stamp(id)
    }

    /// Whether a run owns `id`'s folder now (an orphan that got its transcript back, or a
    /// session whose subagents still write there).
    pub(crate) fn has_run(&self, id: &str) -> bool {
        self.folders.has_run(id)
    }

    /// The files of value folder `dir` GC may take.
    pub(crate) fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        self.folders.list(dir)
    }

    /// The components of a planned file's path, checked to be a value file of run `run`'s
    /// folder: plain components, under the folder the store names for `run`, and a file the
    /// store says GC may take there (`<run>.values/<name>.txt`; under a Claude Code session's
    /// `tool-results/` one or two components ending `.txt` or `.json`).
    pub(crate) fn check_path(&self, path: &str, run: &str) -> Result<Vec<String>, String> {
        let bad = || Err(format!("not a value file path of run {run}"));
        // Only a folder the store's layout names is collected from (a journal's path too).
        if !self.folders.collects(run) {
            return bad();
        }
        let parts: Vec<&str> = path.split('/').collect();
        if !parts.iter().all(|p| plain(p)) {
            return bad();
        }
        let rel = self.folders.rel(run);
        let dir: Vec<&str> = rel.split('/').collect();
        let Some(rest) = parts.strip_prefix(dir.as_slice()) else {
            return bad();
        };
        match !rest.is_empty() && self.folders.takes(run, rest) {
            true => Ok(parts.iter().map(|s| (*s).to_owned()).collect()),
            false => bad(),
        }
    }
}
