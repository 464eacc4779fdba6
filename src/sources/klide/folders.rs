//! GC's view of a runs directory: `<run>.values/*.txt`, each folder its run's alone, the run's
//! stamp its transcript and summary.

use crate::model::layout::{is_valid_run_id, value_dir_name, RunPaths, VALUE_EXT};
use crate::model::stamp::files_stamp;
use crate::model::values::{list_value_files, ValueFile};
use crate::sources::ValueFolders;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) struct HarnessFolders {
    pub(crate) root: PathBuf,
}

impl ValueFolders for HarnessFolders {
    fn rel(&self, id: &str) -> String {
        value_dir_name(id)
    }

    fn writers(&self, id: &str) -> Vec<PathBuf> {
        vec![RunPaths::new(&self.root, id).transcript()]
    }

    fn stamp(&self, id: &str) -> String {
        files_stamp(&RunPaths::new(&self.root, id).run_files())
    }

    fn has_run(&self, id: &str) -> bool {
        self.is_run_folder(id)
    }

    fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        list_value_files(dir)
    }

    fn collects(&self, run: &str) -> bool {
        is_valid_run_id(run)
    }

    fn takes(&self, _run: &str, rest: &[&str]) -> bool {
        matches!(rest, [name] if name.ends_with(VALUE_EXT))
    }

    fn owned_alone(&self) -> bool {
        true
    }

    /// A transcript or summary of any kind (a link too) names a run `id`.
    fn is_run_folder(&self, id: &str) -> bool {
        let files = RunPaths::new(&self.root, id).run_files();
        files.iter().any(|p| std::fs::symlink_metadata(p).is_ok())
    }
}
