//! Where each run's value folder lies in its store, which files in it GC may take, and what
//! proves the run untouched: GC asks the store's source ([`ValueFolders`]) and checks every
//! planned path here, the same way for every store.

use crate::model::values::ValueFile;
use crate::model::Layout;
use crate::sources::store::CheckPath;
use crate::sources::ValueFolders;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) struct Owners {
    root: PathBuf,
    folders: Box<dyn ValueFolders>,
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

    /// Whether a run's files are only those its results name (see
    /// [`ValueFolders::named_only`]).
    pub(crate) fn named_only(&self) -> bool {
        self.folders.named_only()
    }

    /// Whether file `stem` of `run`'s folder is the run's alone (see [`ValueFolders::owns`]).
    pub(crate) fn owns(&self, run: &str, stem: &str) -> bool {
        self.folders.owns(run, stem)
    }

    /// Whether folder `d` is also a run's own folder.
    pub(crate) fn is_run_folder(&self, d: &str) -> bool {
        self.folders.is_run_folder(d)
    }

    /// How a report names the value folder of `id`.
    pub(crate) fn label(&self, id: &str) -> String {
        format!("{}/", self.folders.rel(id))
    }

    /// When anything that writes to `id`'s value folder last changed (the idle guard).
    pub(crate) fn changed_ms(&self, id: &str) -> Option<i64> {
        self.folders
            .writers(id)
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .filter_map(|m| crate::model::options::modified_ms(&m))
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

    /// The components of a planned file's path, checked by the store to be a value file of
    /// run `run`'s folder ([`ValueFolders::check_path`]).
    pub(crate) fn check_path(&self, path: &str, run: &str) -> Result<Vec<String>, String> {
        self.folders.check_path(path, run)
    }
}
