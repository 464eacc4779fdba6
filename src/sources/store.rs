//! The seam every kind of store is read through. Everything that differs between the harness's
//! runs directory, Claude Code's projects and Codex's sessions is a method of [`Source`]; the
//! run model, the index, GC, search, insights and the watcher ask the directory's source and
//! never name one. Adding an agent is one folder here with one implementation of it
//! (docs/architecture.md, "How to add an agent").

use super::sweep::AgentSweep;
use super::{Piece, SourceKind};
pub(crate) use crate::fold::StoreFold;
use crate::model::recorded::RecordedTexts;
use crate::model::values::ValueFile;
use crate::model::{Layout, PeekCall, ResultInfo, RunFiles, RunOptions};
use crate::retained::Stub;
use crate::transcript::{RawLine, ReadOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// What a kind of store can do, for the views to ask instead of matching its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Results over a byte threshold are kept out of the model's context by the harness's
    /// rule (spec Part B): their stubs are made by that rule, and the what-if applies.
    pub retention_threshold: bool,
    /// The next resume is replayed as spec Part C says (the resume preview applies).
    pub resume_replay: bool,
    /// The agent deletes its own old sessions and outputs (the Storage view forecasts it).
    pub agent_sweep: bool,
    /// Full outputs are kept in value files GC may collect.
    pub value_files: bool,
    /// A run's files are named from its id directly in the store's folder (`<id>.jsonl`), and
    /// a followed run is tailed line by line; otherwise they nest where the layout says.
    pub flat_names: bool,
}

/// A kind of store as the user sees it: sent to the app with each directory.
/// (Its texts are borrowed from the program, and owned once read back from JSON.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    /// The kind of store described.
    pub kind: SourceKind,
    /// What the user calls the store ("Claude Code").
    #[ts(type = "string")]
    pub label: Cow<'static, str>,
    /// What one run of it is called ("Claude Code session").
    #[ts(type = "string")]
    pub noun: Cow<'static, str>,
    /// A short mark for the runs list ("CC").
    #[ts(type = "string")]
    pub mark: Cow<'static, str>,
    /// How the agent's model reads a saved output back ("Read (offset and limit) or Grep");
    /// empty when it saves none.
    #[ts(type = "string")]
    #[serde(default)]
    pub read_tool: Cow<'static, str>,
    /// A colour for the mark (CSS), so two agents' runs are told apart at a glance.
    #[ts(type = "string")]
    pub color: Cow<'static, str>,
    /// What Mission Control can do with a store of this kind.
    pub capabilities: Capabilities,
}

/// Which lines of a shared file are a run's (search and read-backs read lines without the run
/// model).
pub(crate) trait LineFilter: Send {
    fn takes_raw(&mut self, bytes: &[u8]) -> bool;
}

/// Every line: the run has its file to itself.
pub(crate) struct AllLines;

impl LineFilter for AllLines {
    fn takes_raw(&mut self, _: &[u8]) -> bool {
        true
    }
}

/// One kind of store. Implementations are zero-sized and reached through
/// [`SourceKind::store`]: a directory holds its kind once, and every reader asks it.
pub(crate) trait Source: Send + Sync {
    fn info(&self) -> &'static SourceInfo;

    /// What the user calls the store.
    fn label(&self) -> &'static str {
        self.info().label.as_ref()
    }

    fn capabilities(&self) -> Capabilities {
        self.info().capabilities
    }

    /// Whether its transcripts are the harness's envelopes, the run model's own events: the
    /// analyzer folds them itself and search reads them event by event.
    fn envelopes(&self) -> bool {
        false
    }

    /// Every run of the store at `root` with its files. What reading a file told of the runs
    /// inside it may be kept between processes in `cache`, when given.
    fn read_layout(&self, root: &Path, cache: Option<&Path>) -> io::Result<Layout>;

    /// Run `id`'s part of [`read_layout`](Self::read_layout) without reading the whole store: its
    /// own files, looked up by name, and what else of the store decides how they read (a run
    /// named after its value folder). `None` (the default) when the store cannot tell one run's
    /// files apart from the rest's without the rest (runs nested in other runs' folders): the
    /// caller reads the whole layout. Opening one run of 50,000 then costs a few `stat`s, not a
    /// listing of the directory.
    fn read_run_layout(
        &self,
        _root: &Path,
        _id: &str,
        _cache: Option<&Path>,
    ) -> io::Result<Option<Layout>> {
        Ok(None)
    }

    /// Every record of the transcript at `path`, as lines: a store of JSON lines gives its lines
    /// as they are (the default); one whose session is one JSON document, or a log replayed
    /// into one (Gemini's chats), gives each record it holds as a line of its own.
    /// `run` is the run's id: a store whose runs share one file (a database) reads its own.
    fn read_records(
        &self,
        path: &Path,
        _run: &str,
        each: &mut dyn FnMut(RawLine<'_>),
    ) -> io::Result<ReadOutcome> {
        super::read_store_lines(path, each)
    }

    /// Forgets what the layout kept in `cache` (a Refresh reads everything again).
    fn forget_scans(&self, _root: &Path, _cache: Option<&Path>) {}

    /// The fold run `id` is read with; `None` for the harness's envelopes, which the analyzer
    /// folds itself.
    fn fold(
        &self,
        layout: &Layout,
        id: &str,
        opts: &RunOptions,
    ) -> io::Result<Option<Box<dyn StoreFold>>>;

    // The value-file methods below default to a store that keeps no value files of its own
    // (its saved outputs, if any, are named by its results: `recorded_texts`): nothing to list,
    // nothing GC may take. A store with value folders overrides every one of them.

    /// The value files run `id` can name, by stem.
    fn run_values(&self, _layout: &Layout, _id: &str) -> io::Result<BTreeMap<String, ValueFile>> {
        Ok(BTreeMap::new())
    }

    /// The value files of one value folder, by stem (what search reads).
    fn list_values(&self, _dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        Ok(BTreeMap::new())
    }

    /// The texts the store recorded for result `info` of run `id`: what the model got and
    /// where the full text is. `None` for a store whose stubs are made by the retention rule
    /// (the harness's): the transcript holds the full text, and the stub is made from it.
    fn recorded_texts(
        &self,
        _layout: &Layout,
        _id: &str,
        _info: &ResultInfo,
    ) -> Option<io::Result<RecordedTexts>> {
        None
    }

    /// The value file of result `value_id` of run `id`, when it is a regular file where the
    /// store keeps it.
    fn value_file(&self, _layout: &Layout, _id: &str, _value_id: &str) -> Option<PathBuf> {
        None
    }

    /// The stub the model got, from the text the store recorded in the result's place.
    fn stub_of_seen(&self, _seen: &str) -> Option<Stub> {
        None
    }

    /// Which lines of its transcript run `files` reads.
    fn line_filter(&self, _files: &RunFiles) -> Box<dyn LineFilter> {
        Box::new(AllLines)
    }

    /// What the model of run `run` (of `files`) read back of its values: the harness's
    /// `peek_value` calls, another agent's reads of a saved file.
    fn read_backs(
        &self,
        _transcript: &Path,
        _run: &str,
        _files: &RunFiles,
    ) -> io::Result<Vec<PeekCall>> {
        Ok(Vec::new())
    }

    /// The searchable strings of one parsed line of another agent's store; `None` for the
    /// harness, whose transcripts search reads by their events.
    fn search_pieces<'v>(&self, _line: &'v Value) -> Option<Vec<Piece<'v>>> {
        None
    }

    /// What the agent's own cleanup deletes of this store, when it has one.
    fn sweep(
        &self,
        _layout: &Layout,
        _now_ms: i64,
        _title: &dyn Fn(&str) -> String,
    ) -> Option<AgentSweep> {
        None
    }

    /// Where each run's value folder is, which files in it GC may take, and what proves the
    /// run untouched.
    fn value_folders(&self, _layout: &Layout) -> Box<dyn ValueFolders> {
        Box::new(NoValueFolders)
    }

    /// How the value folder of run `id` is named in a problem report.
    fn value_folder_name(&self, id: &str) -> String {
        id.to_owned()
    }
}

/// GC's view of a store's value folders: the one place GC learns what it collects from.
pub(crate) trait ValueFolders: Send + Sync {
    /// The value folder of `id`, relative to the store's root.
    fn rel(&self, id: &str) -> String;
    /// The transcripts that write to `id`'s value folder.
    fn writers(&self, id: &str) -> Vec<PathBuf>;
    /// The state of the run's files: any write changes it.
    fn stamp(&self, id: &str) -> String;
    /// Whether a run owns `id`'s folder now.
    fn has_run(&self, id: &str) -> bool;
    /// The files of value folder `dir` GC may take.
    fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>>;
    /// Whether GC may collect from `run`'s folder at all (a journal's run too).
    fn collects(&self, run: &str) -> bool;
    /// Whether `rest`, the components of a path below `run`'s folder, names a file GC may take.
    fn takes(&self, run: &str, rest: &[&str]) -> bool;
    /// Whether the folder is the run's alone: a file no result names is a stray, the folder
    /// may be removed once empty, and what deleting a file costs the next resume is the
    /// harness's. A folder several runs write to (a Claude Code session's) is none of these.
    fn owned_alone(&self) -> bool;
    /// Whether the folder `d` is also another run's own folder (a run named `<x>.values`).
    fn is_run_folder(&self, d: &str) -> bool;
    /// The other runs whose values are in `id`'s folder (a session's subagents).
    fn sharing_runs(&self, _id: &str) -> Vec<&str> {
        Vec::new()
    }
    /// Whether one folder holds every run's files, told apart only by the results that name
    /// them (opencode's `tool-output/`): a run's value files are then the files its saved
    /// results name, and no other.
    fn named_only(&self) -> bool {
        false
    }
    /// Whether file `stem` of `run`'s folder is the run's alone to lose: in a folder every
    /// run shares, no other run names it too (a forked opencode session names its origin's).
    fn owns(&self, _run: &str, _stem: &str) -> bool {
        true
    }
}

impl SourceKind {
    /// The implementation of this kind of store.
    pub(crate) fn store(self) -> &'static dyn Source {
        super::store_of(self)
    }

    /// What the user calls it.
    pub fn label(self) -> &'static str {
        self.store().label()
    }

    /// What the user and the app are told of this kind of store.
    pub fn info(self) -> &'static SourceInfo {
        self.store().info()
    }

    /// What this kind of store can do.
    pub fn capabilities(self) -> Capabilities {
        self.store().capabilities()
    }
}

impl Layout {
    /// The implementation of the kind of store this layout was read from.
    pub(crate) fn store(&self) -> &'static dyn Source {
        self.source.store()
    }
}

/// The one check of a path GC is about to delete, for every store: a blanket implementation,
/// so that no store can weaken it (each store says only which folders it collects from, where
/// they are, and which files in them are values).
pub(crate) trait CheckPath {
    /// The components of a planned file's path, checked to be a value file of run `run`'s
    /// folder: plain components, under the folder the store names for `run`, and a file the
    /// store says GC may take there (`<run>.values/<name>.txt`; under a Claude Code session's
    /// `tool-results/` one or two components ending `.txt` or `.json`). GC checks every path
    /// of a plan or a journal with it before deleting.
    fn check_path(&self, path: &str, run: &str) -> Result<Vec<String>, String>;
}

impl<F: ValueFolders + ?Sized> CheckPath for F {
    fn check_path(&self, path: &str, run: &str) -> Result<Vec<String>, String> {
        let bad = || Err(format!("not a value file path of run {run}"));
        // Only a folder the store's layout names is collected from (a journal's path too).
        if !self.collects(run) {
            return bad();
        }
        let parts: Vec<&str> = path.split('/').collect();
        // Each component plain: not empty, not `.` or `..`, no separator.
        if !parts
            .iter()
            .all(|p| crate::model::layout::is_valid_run_id(p))
        {
            return bad();
        }
        let rel = self.rel(run);
        let dir: Vec<&str> = rel.split('/').collect();
        let Some(rest) = parts.strip_prefix(dir.as_slice()) else {
            return bad();
        };
        match !rest.is_empty() && self.takes(run, rest) {
            true => Ok(parts.iter().map(|s| (*s).to_owned()).collect()),
            false => bad(),
        }
    }
}

/// The value folders of a store that keeps none (Codex cuts outputs in place): nothing to
/// collect, nothing to check.
pub(crate) struct NoValueFolders;

impl ValueFolders for NoValueFolders {
    fn rel(&self, id: &str) -> String {
        id.to_owned()
    }
    fn writers(&self, _: &str) -> Vec<PathBuf> {
        Vec::new()
    }
    fn stamp(&self, _: &str) -> String {
        String::new()
    }
    fn has_run(&self, _: &str) -> bool {
        false
    }
    fn list(&self, _: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        Ok(BTreeMap::new())
    }
    fn collects(&self, _: &str) -> bool {
        false
    }
    fn takes(&self, _: &str, _: &[&str]) -> bool {
        false
    }
    fn owned_alone(&self) -> bool {
        false
    }
    fn is_run_folder(&self, _: &str) -> bool {
        false
    }
}
