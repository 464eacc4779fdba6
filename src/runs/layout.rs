//! What is in a runs directory (spec A.2): one `read_dir`, each entry classified by its name.
//!
//! A run id is any single path component, dots included, so names are read from the end:
//! `<id>.jsonl` is a transcript, `<id>.summary.json` a summary, `<id>.values/` a value
//! directory, `.<id>.summary.json.klide-tmp` a temp file to ignore. A run may be called
//! `foo.values`: then `foo.values/` is that run's own folder *and* where run `foo`'s values
//! live. [`Layout`] keeps both readings; GC and the run model decide with both in view.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub const TRANSCRIPT_SUFFIX: &str = ".jsonl";
pub const SUMMARY_SUFFIX: &str = ".summary.json";
pub const VALUES_SUFFIX: &str = ".values";
pub const TEMP_SUFFIX: &str = ".klide-tmp";

#[derive(Debug, Clone, Default)]
pub struct RunFiles {
    pub transcript: Option<PathBuf>,
    pub summary: Option<PathBuf>,
}

#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub root: PathBuf,
    /// Every run id, with its files.
    pub runs: BTreeMap<String, RunFiles>,
    /// Names `<x>.values` of real directories (never symbolic links), by `x`.
    pub value_dirs: BTreeMap<String, PathBuf>,
    /// `<x>.values` entries that are symbolic links: never read through, never collected.
    pub linked_value_dirs: BTreeSet<String>,
    /// Every id with an entry named `<id>.jsonl` or `<id>.summary.json` of any kind (a link
    /// too): a value directory of such an id is never an orphan.
    pub run_names: BTreeSet<String>,
}

impl Layout {
    pub fn read(root: &Path) -> io::Result<Self> {
        let mut layout = Layout {
            root: root.to_path_buf(),
            ..Default::default()
        };
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
            if let Some(id) =
                strip(&name, SUMMARY_SUFFIX).or_else(|| strip(&name, TRANSCRIPT_SUFFIX))
            {
                layout.run_names.insert(id.to_owned());
            }
            if kind.is_file() {
                if let Some(id) = strip(&name, SUMMARY_SUFFIX) {
                    layout.runs.entry(id.to_owned()).or_default().summary = Some(entry.path());
                } else if let Some(id) = strip(&name, TRANSCRIPT_SUFFIX) {
                    layout.runs.entry(id.to_owned()).or_default().transcript = Some(entry.path());
                }
            } else if let Some(id) = strip(&name, VALUES_SUFFIX) {
                if kind.is_dir() {
                    layout.value_dirs.insert(id.to_owned(), entry.path());
                } else if kind.is_symlink() {
                    layout.linked_value_dirs.insert(id.to_owned());
                }
            }
        }
        Ok(layout)
    }

    /// Whether `<id>.values/` is also the own folder of a run called `<id>.values`.
    pub fn is_shared(&self, id: &str) -> bool {
        self.run_names.contains(&format!("{id}{VALUES_SUFFIX}"))
    }

    /// The value directory of run `id`, if it is a real directory.
    pub fn value_dir(&self, id: &str) -> Option<&Path> {
        self.value_dirs.get(id).map(PathBuf::as_path)
    }

    /// Value directories whose run is gone (spec B.6): no run `x` and no run `x.values`.
    pub fn orphan_value_dirs(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.value_dirs.iter().filter_map(|(id, path)| {
            let own_folder = format!("{id}{VALUES_SUFFIX}");
            (!self.run_names.contains(id) && !self.run_names.contains(&own_folder))
                .then_some((id.as_str(), path.as_path()))
        })
    }
}

/// `name` without `suffix`, when what remains is a non-empty run id.
fn strip<'a>(name: &'a str, suffix: &str) -> Option<&'a str> {
    name.strip_suffix(suffix).filter(|id| !id.is_empty())
}

/// A regular file, not a link to one: what a listing counts as a transcript or summary.
pub fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// A symbolic link (a linked value directory is never read through).
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether `id` can name a run: one path component, not `.` or `..`.
pub fn is_valid_run_id(id: &str) -> bool {
    !id.is_empty() && id != "." && id != ".." && !id.contains(['/', '\\', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_suffix_and_keeps_both_readings_of_dot_values() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "foo.jsonl",
            "foo.values.jsonl",
            "bar.summary.json",
            ".bar.summary.json.klide-tmp",
            "notes.md",
        ] {
            fs::write(root.join(f), b"").unwrap();
        }
        fs::create_dir_all(root.join("foo.values/checkpoints")).unwrap();
        fs::create_dir_all(root.join("gone.values")).unwrap();
        fs::create_dir_all(root.join("foo/checkpoints")).unwrap();
        let layout = Layout::read(root).unwrap();
        let ids: Vec<&str> = layout.runs.keys().map(String::as_str).collect();
        assert_eq!(ids, ["bar", "foo", "foo.values"]);
        assert!(layout.runs["bar"].transcript.is_none() && layout.runs["bar"].summary.is_some());
        assert!(layout.value_dir("foo").is_some());
        let orphans: Vec<&str> = layout.orphan_value_dirs().map(|(id, _)| id).collect();
        assert_eq!(orphans, ["gone"]);
    }

    #[test]
    fn run_ids_are_single_components() {
        assert!(is_valid_run_id("run_1755868370123_1b3f2a9c"));
        assert!(is_valid_run_id(".hidden run.v2"));
        for bad in ["", ".", "..", "a/b", "a\\b"] {
            assert!(!is_valid_run_id(bad), "{bad:?}");
        }
    }
}
