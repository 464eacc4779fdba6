//! What is in a runs directory (spec A.2): one `read_dir`, each entry classified by its name
//! (the names are spelled in `crate::runs::layout`, shared with the watcher and GC).

use crate::model::layout::{
    is_valid_run_id, strip, value_dir_name, RunPaths, SUMMARY_SUFFIX, TEMP_SUFFIX,
    TRANSCRIPT_SUFFIX, VALUES_SUFFIX,
};
use crate::model::SourceKind;
use crate::model::{Layout, RunFiles};
use std::collections::BTreeMap;
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
                // A file makes a run, whose id its name is; another entry only a name.
                match kind.is_file() {
                    true => files.push((id.to_owned(), is_summary, entry.path())),
                    false => run_names.push(id.to_owned()),
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
        let runs: BTreeMap<String, RunFiles> = runs.into_iter().collect();
        // A link beside a run's file (a summary beside its transcript) names that run again.
        run_names.retain(|name| !runs.contains_key(name));
        Ok(Layout {
            root: root.to_path_buf(),
            source: SourceKind::Klide,
            runs,
            value_dirs: value_dirs.into_iter().collect(),
            linked_value_dirs: linked_value_dirs.into_iter().collect(),
            run_names: run_names.into_iter().collect(),
        })
    }

    /// What [`read`](Self::read) says of run `id` and only of it: its transcript, summary and
    /// value directory, each looked up by name (a link neither a transcript nor a summary), and
    /// whether a run is named after its value directory. Equal to the whole layout with every
    /// other run, value directory and name left out. `None` when a lookup by name cannot tell
    /// how the run is spelled on disk: a file system that ignores case (macOS, a casefolded
    /// ext4, a FAT stick) finds `RUN_A.jsonl` for `run_a.jsonl`, and one may normalise
    /// Unicode; the whole listing says then. An error (a name too long to look up, a denied
    /// `stat`) is the caller's to fall back on too.
    pub fn read_one(root: &Path, id: &str) -> io::Result<Option<Self>> {
        let mut layout = Layout {
            root: root.to_path_buf(),
            source: SourceKind::Klide,
            ..Layout::default()
        };
        if !is_valid_run_id(id) {
            return Ok(Some(layout));
        }
        if !id.is_ascii() {
            return Ok(None);
        }
        let paths = RunPaths::new(root, id);
        let mut files = RunFiles::default();
        for (path, is_summary) in [(paths.transcript(), false), (paths.summary(), true)] {
            let Some(meta) = lstat(&path)? else { continue };
            if !spelled_exactly(root, id, &meta, is_summary)? {
                return Ok(None);
            }
            if meta.is_file() {
                match is_summary {
                    true => files.summary = Some(path),
                    false => files.transcript = Some(path),
                }
            } else {
                layout.run_names.insert(id.to_owned());
            }
        }
        if files.transcript.is_some() || files.summary.is_some() {
            // As in the whole listing: a run's id is not a name beside it.
            layout.run_names.remove(id);
            layout.runs.insert(id.to_owned(), files);
        }
        let kind = |path: &Path| lstat(path).map(|m| m.map(|m| m.file_type()));
        let values = paths.value_dir();
        match kind(&values)? {
            Some(k) if k.is_dir() => drop(layout.value_dirs.insert(id.to_owned(), values)),
            Some(k) if k.is_symlink() => drop(layout.linked_value_dirs.insert(id.to_owned())),
            _ => {}
        }
        // A run called `<id>.values`, whose folder is this run's value directory too.
        let folder_run = value_dir_name(id);
        let named = RunPaths::new(root, &folder_run).run_files();
        for path in named {
            if kind(&path)?.is_some() {
                layout.run_names.insert(folder_run.clone());
            }
        }
        Ok(Some(layout))
    }
}

/// `path`'s own metadata (a link's, not its target's); `None` when there is no such entry.
fn lstat(path: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Whether the file `found` under run `id`'s name (its summary's or transcript's) is spelled
/// so on disk: false when the name with its letters' case swapped finds the same file (a file
/// system that ignores case). An id of ASCII with no letters is spelled one way only.
fn spelled_exactly(root: &Path, id: &str, found: &fs::Metadata, summary: bool) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let swapped: String = id
        .chars()
        .map(|c| match c.is_ascii_uppercase() {
            true => c.to_ascii_lowercase(),
            false => c.to_ascii_uppercase(),
        })
        .collect();
    if swapped == id {
        return Ok(true);
    }
    let other = RunPaths::new(root, &swapped);
    let other = if summary {
        other.summary()
    } else {
        other.transcript()
    };
    Ok(match lstat(&other)? {
        Some(m) => (m.dev(), m.ino()) != (found.dev(), found.ino()),
        None => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole layout with only what concerns run `id` kept.
    fn restricted(whole: &Layout, id: &str) -> String {
        let names: Vec<String> = [id.to_owned(), value_dir_name(id)]
            .into_iter()
            .filter(|n| whole.has_run_name(n))
            .collect();
        format!(
            "{:?} {:?} {:?} {:?}",
            whole.runs.get(id).map(|f| (&f.transcript, &f.summary)),
            whole.value_dirs.get(id),
            whole.linked_value_dirs.contains(id),
            names
        )
    }

    #[test]
    fn a_value_directory_is_an_orphan_only_when_no_entry_is_named_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in ["run.jsonl", "shared.jsonl", "shared.values.jsonl"] {
            fs::write(root.join(f), b"{}\n").unwrap();
        }
        for d in [
            "run.values",
            "shared.values",
            "linked.values",
            "gone.values",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        // A link named as a transcript is no run, but its name keeps its values.
        std::os::unix::fs::symlink(root.join("run.jsonl"), root.join("linked.jsonl")).unwrap();
        let layout = Layout::read(root).unwrap();
        let orphans: Vec<&str> = layout.orphan_value_dirs().map(|(id, _)| id).collect();
        assert_eq!(orphans, ["gone"]);
        // `shared.values/` is run `shared`'s value directory and run `shared.values`'s folder.
        assert!(layout.is_shared("shared"));
        assert!(!layout.is_shared("run"));
        // Only the name that is no run's is held apart: a run's id is not held twice.
        assert_eq!(layout.run_names.iter().collect::<Vec<_>>(), ["linked"]);
        assert!(layout.has_run_name("run") && layout.has_run_name("linked"));
        assert!(!layout.has_run_name("gone"));
        // What says nothing is not held apart.
        let plain = RunFiles::nested(root.join("run.jsonl"), Default::default());
        assert!(plain.nesting.is_none() && plain.parent().is_none());
    }

    #[test]
    fn one_run_reads_as_the_whole_directory_tells_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "plain.jsonl",
            "both.jsonl",
            "both.summary.json",
            "summary-only.summary.json",
            "foo.jsonl",
            "foo.values.jsonl",
            ".foo.summary.json.klide-tmp",
            "linked.jsonl",
        ] {
            fs::write(root.join(f), b"{}\n").unwrap();
        }
        fs::create_dir_all(root.join("foo.values")).unwrap();
        fs::create_dir_all(root.join("both.values")).unwrap();
        fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join("linked.values")).unwrap();
        std::os::unix::fs::symlink(root.join("plain.jsonl"), root.join("alias.jsonl")).unwrap();
        let whole = Layout::read(root).unwrap();
        let long = "x".repeat(240);
        fs::write(root.join(format!("{long}.jsonl")), b"{}\n").unwrap();
        let whole_long = Layout::read(root).unwrap();
        for id in [
            "plain",
            "both",
            "summary-only",
            "foo",
            "foo.values",
            "linked",
            "alias",
            "missing",
            "elsewhere",
            "..",
        ] {
            let one = Layout::read_one(root, id)
                .unwrap()
                .expect("an ASCII name, spelled once");
            assert_eq!(
                restricted(&one, id),
                restricted(&whole, id),
                "run {id}: {one:?}"
            );
            assert!(one.runs.len() <= 1 && one.value_dirs.len() <= 1);
        }
        // A name whose value folder's run names would be over the longest file name: the
        // lookup fails, and the caller reads the whole listing (which has the run).
        assert!(Layout::read_one(root, &long).is_err());
        assert!(whole_long.runs.contains_key(&long));
    }

    #[test]
    fn a_name_a_file_system_may_spell_otherwise_is_left_to_the_listing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("Mixed.jsonl"), b"{}\n").unwrap();
        fs::write(root.join("lower.jsonl"), b"{}\n").unwrap();
        fs::write(root.join("LOWER.jsonl"), b"{}\n").unwrap();
        fs::write(root.join("123-456.jsonl"), b"{}\n").unwrap();
        fs::write(root.join("été.jsonl"), b"{}\n").unwrap();
        // A file system that ignores case finds the file under the other case too: a hard link
        // is what that looks like from here.
        fs::hard_link(root.join("Mixed.jsonl"), root.join("mIXED.jsonl")).unwrap();
        assert!(Layout::read_one(root, "Mixed").unwrap().is_none());
        // Two runs whose names differ in case only, on a file system that tells them apart.
        let lower = Layout::read_one(root, "lower").unwrap().unwrap();
        assert!(lower.runs.contains_key("lower") && lower.runs.len() == 1);
        // No letters: one spelling. Not ASCII: the listing says how it is normalised.
        assert!(
            Layout::read_one(root, "123-456")
                .unwrap()
                .unwrap()
                .runs
                .len()
                == 1
        );
        assert!(Layout::read_one(root, "été").unwrap().is_none());
    }
}
