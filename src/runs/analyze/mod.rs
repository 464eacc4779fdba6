//! Reading one run: every transcript line in file order, folded into the run model (status,
//! totals, retention states), the timeline and the list of problems. The fold works one line at
//! a time, so a live run can be updated from its appended lines alone.
//!
//! [`Analyzer`] holds the fold's state. `fold` reads one line and applies its event,
//! `retention` classifies a result against its value file, and `figures` tells what needs all
//! the lines so far (status, strays) and what the run's files add. [`analyze_run`] reads a run
//! whole; the watcher feeds an [`Analyzer`] the lines of a followed run as they land.

mod emit;
mod figures;
mod fold;
mod retention;

pub(crate) use emit::ForeignResult;

pub(crate) use figures::FileFigures;

use super::layout::Layout;
use super::model::{Problem, ProblemKind, ResultInfo, Run, RunDetail, TimelineEvent};
use super::options::{modified_ms, RunOptions};
use super::values::ValueFile;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminal {
    Done,
    Error,
    Cancelled,
}

/// The fold over a run's lines.
pub(crate) struct Analyzer {
    opts: RunOptions,
    keep_timeline: bool,
    run: Run,
    values: BTreeMap<String, ValueFile>,
    /// Where value files written after the fold started are looked up (a live run).
    values_dir: Option<std::path::PathBuf>,
    names: HashMap<String, String>,
    block_names: HashMap<String, String>,
    started_ts: HashMap<String, i64>,
    tool_ids: HashSet<String>,
    tool_names: BTreeSet<String>,
    matched_values: HashSet<String>,
    newer_versions: BTreeSet<u64>,
    last_user_line: Option<u64>,
    last_terminal: Option<(u64, Terminal)>,
    last_ts: Option<i64>,
    events: Vec<TimelineEvent>,
    results: Vec<ResultInfo>,
    problems: Vec<Problem>,
    /// How the lines of another agent's store become events (`None`: the harness's own).
    foreign: Option<Box<dyn crate::sources::StoreFold>>,
    /// The classification a foreign source made of the result it is about to emit.
    foreign_result: Option<ForeignResult>,
    /// A title the store gives the run (Claude Code's `custom-title`), over its first prompt.
    title_override: Option<String>,
}

impl Analyzer {
    pub(crate) fn new(
        id: &str,
        values: BTreeMap<String, ValueFile>,
        opts: RunOptions,
        keep_timeline: bool,
    ) -> Self {
        let mut run = Run {
            id: id.to_owned(),
            ..Default::default()
        };
        run.value_files = values.len() as u64;
        run.value_bytes = values.values().fold(0u64, |a, v| a.saturating_add(v.bytes));
        Self {
            opts,
            keep_timeline,
            run,
            values,
            values_dir: None,
            names: HashMap::new(),
            block_names: HashMap::new(),
            started_ts: HashMap::new(),
            tool_ids: HashSet::new(),
            tool_names: BTreeSet::new(),
            matched_values: HashSet::new(),
            newer_versions: BTreeSet::new(),
            last_user_line: None,
            last_terminal: None,
            last_ts: None,
            events: Vec::new(),
            results: Vec::new(),
            problems: Vec::new(),
            foreign: None,
            foreign_result: None,
            title_override: None,
        }
    }

    /// The same fold over the lines of another agent's store of kind `kind`, read by `fold`.
    pub(crate) fn with_source(
        mut self,
        kind: crate::sources::SourceKind,
        fold: Box<dyn crate::sources::StoreFold>,
    ) -> Self {
        self.run.source = kind;
        self.foreign = Some(fold);
        self
    }

    /// A live fold: the harness writes a value file just before the line that refers to it, so
    /// a result whose file was not there when the directory was listed is looked up in `dir`.
    pub(crate) fn look_up_values_in(&mut self, dir: &Path) {
        self.values_dir = Some(dir.to_path_buf());
    }

    /// Whether a result folded so far names value `id` and was classified without its file
    /// (restored, or written after the result's line): its state is stale.
    pub(crate) fn missed_value(&self, id: &str) -> bool {
        self.matched_values.contains(id) && !self.values.contains_key(id)
    }

    /// Counts a value file that appeared after the directory was listed.
    pub(crate) fn add_value(&mut self, file: ValueFile) {
        if !self.values.contains_key(&file.stem) {
            self.run.value_files += 1;
            self.run.value_bytes = self.run.value_bytes.saturating_add(file.bytes);
            self.values.insert(file.stem.clone(), file);
        }
    }

    /// Says that the run's value directory is a symbolic link, which is never read.
    pub(crate) fn linked_values(&mut self) {
        let folder = self.run.source.store().value_folder_name(&self.run.id);
        let message = format!("{folder} is a symbolic link: it is not read and never collected");
        self.problems.push(Problem {
            line: 0,
            kind: ProblemKind::Run,
            message,
        });
    }

    /// The timeline entries folded since the last call (a live view sends only those).
    pub(crate) fn take_events(&mut self) -> Vec<TimelineEvent> {
        std::mem::take(&mut self.events)
    }

    /// Drops the results and problems folded so far: a live fold of every run of a directory
    /// needs only the run's figures (the events carry their own results), and keeping every
    /// result of every run would grow without end.
    pub(crate) fn forget_details(&mut self) {
        self.results.clear();
        self.problems.clear();
    }
}

/// Reads run `id` of a runs directory.
pub fn analyze_run(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
) -> io::Result<RunDetail> {
    let values = layout.store().run_values(layout, id)?;
    analyze_run_with(layout, id, opts, keep_timeline, values)
}

/// [`analyze_run`] with the run's value files already listed (GC lists them anyway).
pub(crate) fn analyze_run_with(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
    values: BTreeMap<String, ValueFile>,
) -> io::Result<RunDetail> {
    let files = layout.runs.get(id).cloned().unwrap_or_default();
    let mut analyzer = Analyzer::new(id, values, *opts, keep_timeline);
    if let Some(fold) = layout.store().fold(layout, id, opts)? {
        analyzer = analyzer.with_source(layout.source, fold);
        // Several runs share a Claude Code session's folder: none can call a file a stray.
        analyzer.no_strays();
        analyzer.run_mut().parent_id = files.parent.clone();
        analyzer.run_mut().parent_call = files.parent_call.clone();
    }
    if layout.linked_value_dirs.contains(id) {
        analyzer.linked_values();
    }
    let mut mtime = None;
    let mut transcript_bytes = 0;
    let mut pending = 0;
    // A side conversation shares its session's file: its own lines are its size, and its last
    // line's time (not the file's, which its session moves) is its last activity.
    let side = files.side.is_some();
    if let Some(path) = &files.transcript {
        let mut own_bytes = 0u64;
        let outcome = crate::sources::read_store_lines(path, |line| {
            let len = line.bytes.len() as u64;
            if analyzer.line_taken(line) {
                own_bytes += 1 + len;
            }
        })?;
        transcript_bytes = if side { own_bytes } else { outcome.file_len };
        // A torn last line is its session's until it is whole.
        pending = if side { 0 } else { outcome.pending_bytes };
        if !side {
            mtime = fs::metadata(path).ok().as_ref().and_then(modified_ms);
        }
    } else {
        analyzer.problems.push(Problem {
            line: 0,
            kind: ProblemKind::Run,
            message: "no transcript: only a summary file".to_owned(),
        });
    }
    let mut detail = analyzer.finish(mtime);
    if files.parent_values.is_some() && layout.value_dir(id).is_none() {
        // Its values sit in its session's folder beside the session's and its siblings': its
        // own are the files its results name.
        shared_folder_figures(&mut detail);
    }
    let files = FileFigures {
        transcript: files.transcript.as_deref(),
        summary: files.summary.as_deref(),
        transcript_bytes,
        pending_bytes: pending,
    };
    files.complete(&mut detail.run, opts);
    Ok(detail)
}

/// The value files and bytes of a run whose values share a folder with other runs': those its
/// retained and damaged results name, each once.
fn shared_folder_figures(detail: &mut RunDetail) {
    let mut named = std::collections::HashMap::new();
    for r in &detail.results {
        if let Some(bytes) = r.value_file_bytes {
            named.insert(r.value_id.as_str(), bytes);
        }
    }
    detail.run.value_files = named.len() as u64;
    detail.run.value_bytes = named.values().fold(0u64, |a, b| a.saturating_add(*b));
}
