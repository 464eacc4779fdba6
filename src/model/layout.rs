//! What is in a runs directory (spec A.2): one `read_dir`, each entry classified by its name.
//!
//! A run id is any single path component, dots included, so names are read from the end:
//! `<id>.jsonl` is a transcript, `<id>.summary.json` a summary, `<id>.values/` a value
//! directory, `.<id>.summary.json.klide-tmp` a temp file to ignore. A run may be called
//! `foo.values`: then `foo.values/` is that run's own folder *and* where run `foo`'s values
//! live. [`Layout`] keeps both readings; GC and the run model decide with both in view.

use crate::model::stamp::FileStamp;
use crate::retained::value_file_name;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) const TRANSCRIPT_SUFFIX: &str = ".jsonl";
pub(crate) const SUMMARY_SUFFIX: &str = ".summary.json";
pub(crate) const VALUES_SUFFIX: &str = ".values";
pub(crate) const TEMP_SUFFIX: &str = ".klide-tmp";
/// A value file is `<stem>.txt` directly inside a value directory.
pub(crate) const VALUE_EXT: &str = ".txt";

/// `<id>.jsonl`: the name of run `id`'s transcript.
pub(crate) fn transcript_name(id: &str) -> String {
    format!("{id}{TRANSCRIPT_SUFFIX}")
}

/// `<id>.summary.json`: the name of run `id`'s summary.
pub(crate) fn summary_name(id: &str) -> String {
    format!("{id}{SUMMARY_SUFFIX}")
}

/// `<id>.values`: the name of run `id`'s value directory.
pub(crate) fn value_dir_name(id: &str) -> String {
    format!("{id}{VALUES_SUFFIX}")
}

/// `<stem>.txt`: the name of a file in a value directory, for a stem as found there. A stem
/// read from disk need not be a value id (a stray file), so it is used as it is; for a tool
/// call, [`RunPaths::value_file`] goes through `value_id`.
pub(crate) fn stem_file_name(stem: &str) -> String {
    format!("{stem}{VALUE_EXT}")
}

/// Every path of one run in its runs directory. The names are spelled only here, so the run
/// model, the watcher and GC cannot disagree on where a run's files are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunPaths<'a> {
    root: &'a Path,
    id: &'a str,
}

impl<'a> RunPaths<'a> {
    pub(crate) fn new(root: &'a Path, id: &'a str) -> Self {
        Self { root, id }
    }

    pub(crate) fn transcript(&self) -> PathBuf {
        self.root.join(transcript_name(self.id))
    }

    pub(crate) fn summary(&self) -> PathBuf {
        self.root.join(summary_name(self.id))
    }

    /// The transcript and the summary: the entries whose presence makes `id` a run.
    pub(crate) fn run_files(&self) -> [PathBuf; 2] {
        [self.transcript(), self.summary()]
    }

    pub(crate) fn value_dir(&self) -> PathBuf {
        self.root.join(value_dir_name(self.id))
    }

    /// The value file of a tool call (or of a value id: `value_id` maps one to itself).
    pub(crate) fn value_file(&self, call: &str) -> PathBuf {
        self.value_dir().join(value_file_name(call))
    }
}

/// How a side conversation's lines are told apart from the others' in the file it shares
/// with its session (Claude Code's older builds wrote subagents into the session's file).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SideKey {
    /// Its `agentId`, else the `uuid` of its first line.
    pub key: String,
    /// Whether `key` is an `agentId`.
    pub by_agent: bool,
}

/// Where a line starts in a file: its byte offset, and how many lines come before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineStart {
    /// The offset of the line's first byte.
    pub offset: u64,
    /// The lines before it.
    pub lines: u64,
}

/// Where a read of a run may stop: just past the run's last line (and any line before it a
/// reading of the file warns of), as a scan of the file found them when it had stamp
/// `scanned`. A read stops there only while the file still has that stamp: a file rewritten
/// since, even to the same length, is read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadEnd {
    pub offset: u64,
    pub(crate) scanned: FileStamp,
}

/// The lines of a transcript that are other runs' (a session's side lines, for the session),
/// as a scan read them when the file had stamp `scanned`: ranges of lines back to back, each
/// from its first line's offset to just past its last. A read of the run passes over them
/// unparsed while the file still has that stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OthersLines {
    pub ranges: Vec<(u64, u64)>,
    pub(crate) scanned: FileStamp,
}

/// Where a run's files are.
#[derive(Debug, Clone, Default)]
pub struct RunFiles {
    /// The transcript, when the run has one.
    pub transcript: Option<PathBuf>,
    /// The summary (`<run>.summary.json`), when the run has one.
    pub summary: Option<PathBuf>,
    /// How many bytes at the start of the transcript the store's scan found no line in that
    /// rewrites what the model got of an earlier result (Claude Code's `content-replacement`):
    /// a fold reads ahead for such lines only past them (0: the whole file).
    pub unreplaced_len: u64,
    /// The transcript's stamp as the store's listing met it, for a store whose listing stats
    /// each transcript anyway (Claude Code's session files): what stamps the run's transcript
    /// for the index and the watch then, instead of a stat of its own per run. Taken before
    /// anything of the run is read, it proves what a stat taken then would. (Boxed: the runs of
    /// other stores have none, and a layout of 100,000 runs holds this for each.)
    pub(crate) stamp: Option<Box<FileStamp>>,
    /// What only some runs have (a nested run, a side conversation, a run of a shared file),
    /// apart: a layout holds one of these per run, most runs have none of it, and a listing of
    /// tens of thousands of runs holds the layout while it reads.
    pub nesting: Option<Box<Nesting>>,
}

/// The files and places only some runs have: those a store nests under another run, or keeps
/// inside a file it shares with others. (About 70 bytes: a store of thousands of subagents
/// holds one per subagent while a listing reads, and what a subagent shares with its
/// session's other subagents, the session's id and value folder, is shared.)
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nesting {
    /// The run this one is a subagent of, when the store's layout says so (Claude Code's
    /// `<session>/subagents/`).
    pub parent: Option<Arc<str>>,
    /// Where the run's values are when they sit in its parent's folder (a Claude Code
    /// subagent's persisted outputs go to its session's `tool-results/`).
    pub parent_values: Option<Arc<Path>>,
    /// The tool call of the parent that started this run, when the store says (Claude Code's
    /// `Task` calls).
    pub parent_call: Option<String>,
    /// The lines of the run's transcript that are other runs' (a session file's side lines).
    pub others: Option<Arc<OthersLines>>,
    /// What only a run inside a shared file has, apart again.
    pub inside: Option<Box<Inside>>,
}

/// Where a run is inside a file it shares with other runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inside {
    /// The side conversation this run is inside its transcript, which it shares with its
    /// session (Claude Code's older builds wrote subagents into the session's file).
    pub side: Option<SideKey>,
    /// What a store whose runs share one file (opencode's database) says of the run's last
    /// change: the index reads the run again when this changes, not when the file does.
    pub revision: Option<String>,
    /// Where the run's own lines start in its transcript, when that is not its first line: a
    /// side conversation's first line in its session's file (a read of the run starts there:
    /// no line before it is the run's). Set only by a store whose records are its file's
    /// lines.
    pub start: Option<LineStart>,
    /// Where a read of the run may stop, when that is not the file's end (a side
    /// conversation's last line in its session's file).
    pub end: Option<ReadEnd>,
}

impl Nesting {
    /// Boxed for a [`RunFiles`], or nothing when it says nothing.
    pub fn boxed(self) -> Option<Box<Self>> {
        (self != Self::default()).then(|| Box::new(self))
    }
}

impl Inside {
    /// Boxed for a [`Nesting`], or nothing when it says nothing.
    pub fn boxed(self) -> Option<Box<Self>> {
        (self != Self::default()).then(|| Box::new(self))
    }
}

impl RunFiles {
    /// A run of `transcript` with what only some runs have.
    pub fn nested(transcript: PathBuf, nesting: Nesting) -> Self {
        Self {
            transcript: Some(transcript),
            nesting: nesting.boxed(),
            ..Default::default()
        }
    }

    /// The stamp of the transcript: the one its store's listing met ([`Self::stamp`]), else
    /// one taken now; `None` without a transcript.
    pub(crate) fn transcript_stamp(&self) -> Option<FileStamp> {
        let transcript = self.transcript.as_deref()?;
        self.stamp
            .as_deref()
            .copied()
            .or_else(|| FileStamp::of(transcript))
    }

    /// See [`Nesting::parent`].
    pub fn parent(&self) -> Option<&str> {
        self.nesting.as_ref()?.parent.as_deref()
    }

    /// See [`Nesting::parent_values`].
    pub fn parent_values(&self) -> Option<&Path> {
        self.nesting.as_ref()?.parent_values.as_deref()
    }

    /// See [`Nesting::parent_call`].
    pub fn parent_call(&self) -> Option<&str> {
        self.nesting.as_ref()?.parent_call.as_deref()
    }

    /// See [`Inside::side`].
    pub fn side(&self) -> Option<&SideKey> {
        self.inside()?.side.as_ref()
    }

    /// See [`Inside::revision`].
    pub fn revision(&self) -> Option<&str> {
        self.inside()?.revision.as_deref()
    }

    /// See [`Inside::start`].
    pub fn start(&self) -> Option<LineStart> {
        self.inside()?.start
    }

    /// See [`Inside::end`].
    pub fn end(&self) -> Option<ReadEnd> {
        self.inside()?.end
    }

    fn inside(&self) -> Option<&Inside> {
        self.nesting.as_ref()?.inside.as_deref()
    }

    /// See [`Nesting::others`].
    pub fn others(&self) -> Option<&Arc<OthersLines>> {
        self.nesting.as_ref()?.others.as_ref()
    }

    /// What only some runs have, to change (made when the run had none).
    pub fn nesting_mut(&mut self) -> &mut Nesting {
        self.nesting.get_or_insert_with(Default::default)
    }
}

/// Every run of a directory and its files, as its kind of store lays them out.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// The directory read.
    pub root: PathBuf,
    /// The kind of store this is.
    pub source: crate::model::SourceKind,
    /// Every run id, with its files.
    pub runs: BTreeMap<String, RunFiles>,
    /// Names `<x>.values` of real directories (never symbolic links), by `x`.
    pub value_dirs: BTreeMap<String, PathBuf>,
    /// `<x>.values` entries that are symbolic links: never read through, never collected.
    pub linked_value_dirs: BTreeSet<String>,
    /// The other ids with an entry named `<id>.jsonl` or `<id>.summary.json`, of any kind (a
    /// link too), beside the runs' own (each run's id is one): a value directory of such an id
    /// is never an orphan. See [`has_run_name`](Self::has_run_name). (Not every run's id again:
    /// a layout of tens of thousands of runs would hold each twice.)
    pub run_names: BTreeSet<String>,
}

impl Layout {
    /// Reads `root` as a store of kind `source`. What reading a session file told of the runs
    /// inside it is kept between processes in `cache`, when given.
    pub fn read_as(
        root: &Path,
        source: crate::model::SourceKind,
        cache: Option<&Path>,
    ) -> io::Result<Self> {
        let mut layout = source.store().read_layout(root, cache)?;
        // Built a run at a time in the store's order, the map's nodes are about two thirds
        // full; built again from its runs in order, they are full: about 55 bytes a run less
        // while a listing reads the runs (1.6 MB at 28,884 Claude Code runs).
        layout.runs = std::mem::take(&mut layout.runs).into_iter().collect();
        Ok(layout)
    }

    /// The runs the store nests under run `id` (its subagents, theirs...), nearest first. The
    /// harness's children name their parent in their summaries, which a layout does not read.
    pub fn descendants(&self, id: &str) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let mut next = 0;
        let mut parent = id.to_owned();
        loop {
            let children = (self.runs.iter())
                .filter(|(child, f)| f.parent() == Some(&parent) && child.as_str() != id)
                .map(|(child, _)| child.clone());
            for child in children {
                if !found.contains(&child) {
                    found.push(child);
                }
            }
            let Some(p) = found.get(next) else {
                return found;
            };
            parent = p.clone();
            next += 1;
        }
    }

    /// Whether `<id>.values/` is also the own folder of a run called `<id>.values`.
    pub fn is_shared(&self, id: &str) -> bool {
        self.has_run_name(&value_dir_name(id))
    }

    /// Whether `name` names a run or an entry that a run's file would be named after (see
    /// [`run_names`](Self::run_names)): a value directory of such a name is no orphan.
    pub fn has_run_name(&self, name: &str) -> bool {
        self.runs.contains_key(name) || self.run_names.contains(name)
    }

    /// The value directory of run `id`, if it is a real directory.
    pub fn value_dir(&self, id: &str) -> Option<&Path> {
        self.value_dirs.get(id).map(PathBuf::as_path)
    }

    /// What another agent's store's layout says of run `id` beyond its files, in one string:
    /// its parent, the call that started it, the side conversation it is, whether its values
    /// folder is a link. A run whose links changed reads differently though no file of it did.
    pub(crate) fn links(&self, id: &str) -> String {
        let files = self.runs.get(id);
        let side = files.and_then(|f| f.side()).map(|s| s.key.as_str());
        let linked = self.linked_value_dirs.contains(id).then_some("linked");
        let parts = [
            files.and_then(|f| f.parent()),
            files.and_then(|f| f.parent_call()),
            side,
            linked,
            files.and_then(|f| f.revision()),
        ];
        parts.map(|p| p.unwrap_or("-")).join("|")
    }

    /// Value directories whose run is gone (spec B.6): no run `x` and no run `x.values`.
    pub fn orphan_value_dirs(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.value_dirs.iter().filter_map(|(id, path)| {
            let own_folder = value_dir_name(id);
            (!self.has_run_name(id) && !self.has_run_name(&own_folder))
                .then_some((id.as_str(), path.as_path()))
        })
    }
}

/// `name` without `suffix`, when what remains is a non-empty run id.
pub(crate) fn strip<'a>(name: &'a str, suffix: &str) -> Option<&'a str> {
    name.strip_suffix(suffix).filter(|id| !id.is_empty())
}

/// A regular file, not a link to one: what a listing counts as a transcript or summary.
pub(crate) fn is_regular_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

/// A symbolic link (a linked value directory is never read through).
pub(crate) fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether `id` can name a run: one path component, not `.` or `..`.
pub(crate) fn is_valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_RUN_ID
        && id != "."
        && id != ".."
        && !id.contains(['/', '\\', '\0'])
}

/// The longest run id: a file name is at most 255 bytes on the file systems in use; an id
/// qualified by its session or project (`agent-<id>@<session>`) stays well within this.
pub(crate) const MAX_RUN_ID: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
    fn every_path_of_a_run_is_named_from_its_id() {
        let root = Path::new("/runs");
        let p = RunPaths::new(root, "r.v2");
        assert_eq!(p.transcript(), root.join("r.v2.jsonl"));
        assert_eq!(p.summary(), root.join("r.v2.summary.json"));
        assert_eq!(p.run_files(), [p.transcript(), p.summary()]);
        assert_eq!(p.value_dir(), root.join("r.v2.values"));
        // A tool call goes through its value id; a value id is its own.
        assert_eq!(
            p.value_file("call.1"),
            root.join("r.v2.values/call_1-2945fb5c.txt")
        );
        assert_eq!(p.value_file("call_1-2945fb5c"), p.value_file("call.1"));
        // A stem found on disk is used as it is, even when it is no value id.
        assert_eq!(stem_file_name("notes.v2"), "notes.v2.txt");
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
