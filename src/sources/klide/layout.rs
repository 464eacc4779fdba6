//! What is in a runs directory (spec A.2): one `read_dir`, each entry classified by its name
//! (the names are spelled in `crate::runs::layout`, shared with the watcher and GC).

use crate::model::layout::{strip, SUMMARY_SUFFIX, TEMP_SUFFIX, TRANSCRIPT_SUFFIX, VALUES_SUFFIX};
use crate::model::SourceKind;
use crate::model::{Layout, RunFiles};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

impl Layout {
    /// Reads `root` as the harness's runs directory.
    pub fn read(root: &Path) -> io::Result<Self> {
        // Gathered in vectors and sorted once, then made maps in one pass (a map built from
        // sorted keys is built in bulk): a directory of 100,000 runs is read in a fraction of
        // the time inserting each entry into the maps took.
        let mut files: Vec<(String, bool, PathBuf)> = Vec::new(); // (id, is summary, path)
        let mut value_dirs = Vec::new();
        let mut linked_value_dirs = Vec::new();
        let mut run_names = Vec::new();
        for entry in fs::read_dir(root)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue; // Not UTF-8: no harness run id looks like that.
            };
            // file_type() does not follow symbolic links.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name.ends_with(TEMP_SUFFIX) {
                continue;
            }
            let summary = strip(&name, SUMMARY_SUFFIX);
            if let Some((id, is_summary)) = summary
                .map(|id| (id, true))
                .or_else(|| strip(&name, TRANSCRIPT_SUFFIX).map(|id| (id, false)))
            {
                run_names.push(id.to_owned());
                if kind.is_file() {
                    files.push((id.to_owned(), is_summary, entry.path()));
                }
            } else if let Some(id) = strip(&name, VALUES_SUFFIX) {
                if kind.is_dir() {
                    value_dirs.push((id.to_owned(), entry.path()));
                } else if kind.is_symlink() {
                    linked_value_dirs.push(id.to_owned());
                }
            }
        }
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut runs: Vec<(String, RunFiles)> = Vec::with_capacity(files.len());
        for (id, is_summary, path) in files {
            if runs.last().is_none_or(|(last, _)| *last != id) {
                runs.push((id, RunFiles::default()));
            }
            let (_, run) = runs.last_mut().expect("pushed above");
            match is_summary {
                true => run.summary = Some(path),
                false => run.transcript = Some(path),
            }
        }
        Ok(Layout {
            root: root.to_path_buf(),
            source: SourceKind::Klide,
            runs: runs.into_iter().collect(),
            value_dirs: value_dirs.into_iter().collect(),
            linked_value_dirs: linked_value_dirs.into_iter().collect(),
            run_names: run_names.into_iter().collect(),
        })
    }
}
