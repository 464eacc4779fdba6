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
mod line;
mod retention;
pub(crate) mod summary;
pub(crate) mod timeline;
mod usage;

pub(crate) use emit::ForeignResult;

pub(crate) use figures::FileFigures;

use crate::model::values::{find_value_file, ValueFile};
use crate::model::{Problem, ProblemKind, ResultInfo, Run, RunOptions, SourceKind, TimelineEvent};
use crate::transcript::RawLine;
use std::collections::{BTreeMap, BTreeSet};

/// The fold's maps of call ids, hashed by foldhash (seeded per process): a cold listing inserts
/// every call's id in several, and SipHash was 1 % of its instructions.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
use std::path::Path;

/// How one store's lines become the run model's events (the harness's envelopes are the
/// model's own, folded by the analyzer itself). Each source gives its own.
pub(crate) trait StoreFold: Send {
    /// Folds one complete line of the store's file into `into`.
    fn line(&mut self, into: &mut Analyzer, line: RawLine<'_>);
    /// Whether the last line folded was the run's (a file may hold several runs' lines).
    fn taken(&self) -> bool {
        true
    }
    /// Whether the places a scan found, by which the fold passed lines over unparsed, still
    /// held when the read ended (the file has the stamp the scan read): when not, the run is
    /// read again with a fold that has forgotten them.
    fn places_held(&self) -> bool {
        true
    }
    /// Reads every line of `transcript` itself, whatever a scan found.
    fn forget_places(&mut self, _transcript: &Path) {}
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminal {
    Done,
    Error,
    Cancelled,
}

/// What a fold builds of each line it reads, besides the run's figures (which are the same
/// whatever it builds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rows {
    /// Each line's timeline row, whole (a message's text, a call's input written out, each
    /// result's state): what a timeline shows.
    Timeline,
    /// Each line's row with its place and kind, and what the fold itself reads of it (a
    /// message's calls and usage), no more: a watcher tells only the place and kind.
    Lines,
    /// No rows: a listing, or a read nobody is told of.
    Nothing,
}

/// The fold over a run's lines.
pub(crate) struct Analyzer {
    opts: RunOptions,
    rows: Rows,
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
    /// Values whose result was classified against a file of another size (a live run's file
    /// listed while it was being written, say): looked at again when their directory changes.
    unsized_values: HashSet<String>,
    newer_versions: BTreeSet<u64>,
    last_user_line: Option<u64>,
    last_terminal: Option<(u64, Terminal)>,
    last_ts: Option<i64>,
    events: Vec<TimelineEvent>,
    results: Vec<ResultInfo>,
    pub(crate) problems: Vec<Problem>,
    /// How the lines of another agent's store become events (`None`: the harness's own).
    foreign: Option<Box<dyn StoreFold>>,
    /// The classification a foreign source made of the result it is about to emit.
    foreign_result: Option<ForeignResult>,
    /// The price the last model priced in this run has, if any: a run's calls name one model
    /// or a few, and a name the table lacks is matched against all of it (`usage.rs`).
    last_price: Option<(String, Option<&'static crate::prices::Price>)>,
    /// A title the store gives the run (Claude Code's `custom-title`), over its first prompt.
    title_override: Option<String>,
    /// The title of a run with no prompt (a session of local commands only: their arguments).
    fallback_title: Option<String>,
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
            // Nothing called yet costs nothing; a call with no price makes it unknown.
            cost_usd: Some(0.0),
            ..Default::default()
        };
        run.value_files = values.len() as u64;
        run.value_bytes = values.values().fold(0u64, |a, v| a.saturating_add(v.bytes));
        Self {
            opts,
            rows: match keep_timeline {
                true => Rows::Timeline,
                false => Rows::Nothing,
            },
            run,
            values,
            values_dir: None,
            names: HashMap::default(),
            block_names: HashMap::default(),
            started_ts: HashMap::default(),
            tool_ids: HashSet::default(),
            tool_names: BTreeSet::new(),
            matched_values: HashSet::default(),
            unsized_values: HashSet::default(),
            newer_versions: BTreeSet::new(),
            last_user_line: None,
            last_terminal: None,
            last_ts: None,
            events: Vec::new(),
            results: Vec::new(),
            problems: Vec::new(),
            foreign: None,
            foreign_result: None,
            last_price: None,
            title_override: None,
            fallback_title: None,
        }
    }

    /// Whether this fold keeps a timeline: what only a timeline shows (a message's text, a
    /// call's input) need not be built otherwise.
    pub(crate) fn keeps_timeline(&self) -> bool {
        self.rows == Rows::Timeline
    }

    /// Whether this fold keeps a row of each line (see [`Rows`]).
    fn keeps_rows(&self) -> bool {
        self.rows != Rows::Nothing
    }

    /// Builds `rows` of the lines folded from now on.
    pub(crate) fn set_rows(&mut self, rows: Rows) {
        self.rows = rows;
    }

    /// The same fold over the lines of another agent's store of kind `kind`, read by `fold`.
    pub(crate) fn with_source(mut self, kind: SourceKind, fold: Box<dyn StoreFold>) -> Self {
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

    /// Whether a value file a result was classified against has another size now (it was
    /// being written): that result's state is stale, and the run must be read again.
    pub(crate) fn value_resized(&self) -> bool {
        let Some(dir) = &self.values_dir else {
            return false;
        };
        self.unsized_values.iter().any(|id| {
            let now = find_value_file(dir, id).map(|f| f.bytes);
            now.is_some_and(|now| self.values.get(id).is_some_and(|f| f.bytes != now))
        })
    }

    /// Whether the store's fold's places held to the end of the read (see
    /// [`StoreFold::places_held`]).
    pub(crate) fn places_held(&self) -> bool {
        self.foreign.as_ref().is_none_or(|f| f.places_held())
    }

    /// Counts a value file that appeared after the directory was listed.
    pub(crate) fn add_value(&mut self, file: ValueFile) {
        if !self.values.contains_key(&file.stem) {
            self.run.value_files += 1;
            self.run.value_bytes = self.run.value_bytes.saturating_add(file.bytes);
            self.values.insert(file.stem.clone(), file);
        }
    }

    /// Says that the run's value directory, `folder` as its store names it, is a symbolic link,
    /// which is never read.
    pub(crate) fn linked_values(&mut self, folder: &str) {
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
