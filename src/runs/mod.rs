//! A runs directory and its runs: listing, the run model, one run's timeline and results, and
//! finding a result's full text or value file.

pub(crate) mod access;
mod listing;
pub(crate) mod read;
mod spill;

pub use crate::model::*;
pub use access::{
    FoundResult, PeekAnswer, StubAnswer, TextSource, ValueInfo, ValueState, ValueVerdict, Verified,
};
pub use listing::Listing;
pub use read::analyze_run;

use crate::error::{Error, ErrorCode, Result};
use crate::index::ReadRun;
use std::fs;
use std::path::{Path, PathBuf};

/// A runs directory opened with the run model's settings.
#[derive(Debug, Clone)]
pub struct RunsDir {
    root: PathBuf,
    /// How runs are read: threshold, running window, the clock, how value files are checked.
    pub opts: RunOptions,
    /// Mission Control's own config directory (pins, GC journal).
    config: Option<PathBuf>,
    /// Whether listings go through the index (`--no-index`, `MCTL_NO_INDEX=1`).
    indexed: bool,
    /// Where the index is kept (`$MCTL_CACHE_DIR`, else the user's cache directory).
    cache: Option<PathBuf>,
    /// The kind of store the directory is: detected when opened, or forced (`--source`).
    source: crate::model::SourceKind,
}

impl RunsDir {
    /// Opens the runs directory at `root` and detects its kind; fails with `runs-dir` when it is
    /// not a directory. An agent's own folder (`~/.claude`, `~/.codex`) opens as its store one
    /// level down ([`crate::sources::store_root`]).
    pub fn open(root: impl Into<PathBuf>, opts: RunOptions) -> Result<Self> {
        Self::open_with(root.into(), None, opts)
    }

    /// [`open`](Self::open) as a store of kind `source`, already known (a watcher detected it
    /// when it started): nothing is detected again.
    pub fn open_as(
        root: impl Into<PathBuf>,
        source: crate::model::SourceKind,
        opts: RunOptions,
    ) -> Result<Self> {
        Self::open_with(root.into(), Some(source), opts)
    }

    fn open_with(
        root: PathBuf,
        source: Option<crate::model::SourceKind>,
        opts: RunOptions,
    ) -> Result<Self> {
        // Detected from the path as given: a kind declared for `~/.claude` holds for the store
        // inside it.
        let source = source.unwrap_or_else(|| crate::sources::detect(&root));
        let root = crate::sources::store_root(&root);
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => Ok(Self {
                source,
                root,
                opts,
                config: crate::config::config_dir(),
                indexed: !crate::index::disabled_by_env(),
                cache: crate::config::cache_dir(),
            }),
            Ok(_) => Err(Error::new(
                ErrorCode::RunsDir,
                format!("{} is not a directory", root.display()),
            )),
            Err(e) => Err(Error::new(
                ErrorCode::RunsDir,
                format!("runs directory {}: {e}", root.display()),
            )),
        }
    }

    /// The directory's path, as given to [`open`](Self::open).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The kind of store this directory is read as.
    pub fn source(&self) -> crate::model::SourceKind {
        self.source
    }

    /// The same directory read as a store of kind `source`, whatever it looks like.
    pub fn with_source(mut self, source: crate::model::SourceKind) -> Self {
        self.source = source;
        self
    }

    /// Pins (or unpins) the run `run` names: the one check every door shares (`mctl pin`, the
    /// app, `PUT /api/pins/{run}`, `/api/call/set_pinned`). A name that is no run of the
    /// directory (a path, a run that does not exist, a name no run could have) is refused as
    /// an unknown run and nothing is stored; a pin whose run has gone may still be taken off.
    /// Returns the run's id and whether anything changed.
    pub fn set_pinned(&self, run: &str, pinned: bool) -> Result<(String, bool)> {
        let mut pins = crate::pins::Pins::load_in(self.config_dir())?;
        let id = match self.resolve_run(&self.layout()?, run) {
            Ok(id) => id,
            Err(_) if !pinned && pins.list(self.root()).iter().any(|p| p == run) => run.to_owned(),
            Err(e) => return Err(e),
        };
        let changed = pins.set(self.root(), &id, pinned)?;
        Ok((id, changed))
    }

    /// Where Mission Control keeps its own files for this directory (pins, the GC journal).
    pub fn config_dir(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// The same runs directory, listed through the index or not (`--no-index`).
    pub fn with_index(mut self, indexed: bool) -> Self {
        self.indexed = indexed;
        self
    }

    /// Whether listings go through the index.
    pub fn indexed(&self) -> bool {
        self.indexed
    }

    /// The same runs directory with its index in `cache` (tests, a cache of one's own).
    pub fn with_cache_dir(mut self, cache: impl Into<PathBuf>) -> Self {
        self.cache = Some(cache.into());
        self
    }

    /// The index of this runs directory, opened (or made); `None` when it is turned off or
    /// cannot be used now (said on the log).
    pub fn index(&self) -> Option<crate::index::RunIndex> {
        // Another agent's store is stamped where its layout says its files are.
        self.indexed
            .then(|| crate::index::RunIndex::open(self.cache.as_deref(), &self.root))
            .flatten()
    }

    /// The same runs directory with its own config directory (tests, several users).
    pub fn with_config_dir(mut self, config: impl Into<PathBuf>) -> Self {
        self.config = Some(config.into());
        self
    }

    /// Every run of the directory and its files, as its kind of store lays them out.
    pub fn layout(&self) -> Result<Layout> {
        // The session scans are a cache like the index, and bypassed with it.
        let cache = self.cache.as_deref().filter(|_| self.indexed);
        Layout::read_as(&self.root, self.source, cache)
            .map_err(|e| Error::io(format!("reading {}", self.root.display()), &e))
    }

    /// Every run, most recently active first. Value files are compared by size and their
    /// first and last 64 KiB here ([`Verify::Sampled`]); one run's [`detail`](Self::detail)
    /// compares every byte.
    pub fn list(&self) -> Result<Vec<Run>> {
        let mut runs = self.list_as(|run| run)?;
        crate::model::family::add_children(&mut runs);
        sort_runs(&mut runs);
        Ok(runs)
    }

    /// [`list`](Self::list), each run packed as soon as it is read: what a listing of tens of
    /// thousands of runs holds while the others are read and until it is printed.
    pub fn listing(&self) -> Result<Listing> {
        let _span = self.list_span();
        let layout = self.layout()?;
        // A packed run holds no id, only where its id sorts among these.
        let ids: Vec<&str> = layout.runs.keys().map(String::as_str).collect();
        // Runs past the first 2 MiB packed (about 6,000 Claude Code runs) are written to a
        // file in the cache folder until they are printed.
        let packer = listing::Packer::new(self.cache.as_deref(), &ids);
        let runs = self.list_in(&layout, |at, run, packed| packer.pack_at(at, run, packed))?;
        let spill = packer.into_spill();
        // Gone before the runs are ordered: the layout is most of what a listing holds.
        drop(ids);
        drop(layout);
        Ok(Listing::of(runs, spill))
    }

    /// Brings the index up to date as a listing would, keeping nothing of the runs (`mctl
    /// index`): how many runs there are.
    pub fn refresh(&self) -> Result<usize> {
        self.list_as(|_| ()).map(|runs| runs.len())
    }

    /// Every run, each given to `out` as soon as it is read (on the thread that read it), in
    /// the layout's order.
    fn list_as<T: Send>(&self, out: impl Fn(Run) -> T + Sync) -> Result<Vec<T>> {
        let _span = self.list_span();
        self.list_in(&self.layout()?, |_, run, _| out(run))
    }

    /// What a listing's log lines are under: its reading of the layout too.
    fn list_span(&self) -> tracing::span::EnteredSpan {
        tracing::info_span!("runs_list", dir = %self.root.display()).entered()
    }

    /// [`list_as`](Self::list_as) of the runs of `layout`, this directory's, each given to `out`
    /// with its place among the layout's runs (and, for a run taken from the index, its bytes
    /// as the index keeps them: see [`crate::index::Index::list_placed`]).
    fn list_in<T: Send>(
        &self,
        layout: &Layout,
        out: impl Fn(usize, Run, Option<Vec<u8>>) -> T + Sync,
    ) -> Result<Vec<T>> {
        tracing::debug!(runs = layout.runs.len(), "read the runs directory");
        let opts = self.listing_opts(self.opts.now_ms);
        let runs = match self.index() {
            Some(mut index) => {
                index.list_placed(layout, &opts, |id| read_row(layout, id, &opts), out)
            }
            None => {
                // Every run read, on every core; the order stays the layout's.
                use rayon::prelude::*;
                let ids: Vec<(&String, u64)> = (layout.runs.keys())
                    .map(|id| (id, crate::progress::transcript_len(layout, id)))
                    .collect();
                let bytes = ids.iter().map(|(_, len)| len).sum();
                crate::progress::to_read(ids.len() as u64, bytes);
                // Each in its slot, then the runs gone since are taken out: the answer is
                // allocated once.
                let runs: Vec<Option<T>> = ids
                    .par_iter()
                    .enumerate()
                    .map(|(at, (id, len))| {
                        let run = list_row(layout, id, &opts);
                        crate::progress::read_one(*len);
                        run.map(|run| out(at, run, None))
                    })
                    .collect();
                crate::index::in_place(runs)
            }
        };
        tracing::debug!(runs = runs.len(), "listed the runs directory");
        Ok(runs)
    }

    /// The settings a listing reads runs with (and the index keeps them by), at `now_ms`.
    pub(crate) fn listing_opts(&self, now_ms: i64) -> RunOptions {
        RunOptions {
            verify: Verify::Sampled,
            now_ms,
            ..self.opts
        }
    }

    /// Every run that has a value directory, with its results, as a listing at `now_ms` tells
    /// them: from the index (what it cannot vouch for is read, and kept). `None` without an
    /// index: the caller reads the runs itself.
    pub(crate) fn indexed_results(
        &self,
        layout: &Layout,
        now_ms: i64,
    ) -> Option<std::collections::HashMap<String, crate::index::Entry>> {
        let mut index = self.index()?;
        let opts = self.listing_opts(now_ms);
        let entries = index.entries(layout, &opts, crate::index::Want::Results, |id| {
            read_row(layout, id, &opts)
        });
        Some(
            entries
                .into_iter()
                .filter(|(id, _)| layout.value_dirs.contains_key(id))
                .collect(),
        )
    }

    /// Every run read again from its files (the app's Refresh): the index, if any, is emptied
    /// first, so that even a change its stamps cannot see (a value file rewritten in place)
    /// shows.
    pub fn list_again(&self) -> Result<Vec<Run>> {
        if let Some(mut index) = self.index() {
            // A failure is said on the log; the listing reads every run either way.
            let _ = index.clear();
        }
        let cache = self.cache.as_deref().filter(|_| self.indexed);
        self.source.store().forget_scans(&self.root, cache);
        self.list()
    }

    /// Run `id` as [`list`](Self::list) tells it; `None` when there is no such run.
    pub fn list_one(&self, id: &str) -> Result<Option<Run>> {
        let layout = self.layout()?;
        let opts = self.listing_opts(self.opts.now_ms);
        Ok(layout
            .runs
            .contains_key(id)
            .then(|| list_row(&layout, id, &opts))
            .flatten())
    }

    /// The id of the run `query` names: an exact id, else a unique prefix of one. The one check
    /// of a run named by a request, at every door: a path, an empty or over-long name, or a
    /// name no run of the directory has is an unknown run.
    pub fn resolve_run(&self, layout: &Layout, query: &str) -> Result<String> {
        if layout.runs.contains_key(query) {
            return Ok(query.to_owned());
        }
        if !crate::model::layout::is_valid_run_id(query) {
            let message = format!("`{}` is not a run id", clipped(query));
            return Err(Error::new(ErrorCode::UnknownRun, message));
        }
        let matches: Vec<&String> = layout
            .runs
            .keys()
            .filter(|id| id.starts_with(query))
            .collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Error::new(
                ErrorCode::UnknownRun,
                format!(
                    "unknown run `{}` in {}",
                    clipped(query),
                    self.root.display()
                ),
            )),
            many => Err(Error::new(
                ErrorCode::UnknownRun,
                format!(
                    "`{query}` names {} runs ({}, ...): give more of the id",
                    many.len(),
                    many[0]
                ),
            )),
        }
    }

    /// The id of the run `query` names (see [`resolve_run`](Self::resolve_run)).
    pub fn run_id(&self, query: &str) -> Result<String> {
        self.run_layout(query).map(|(_, id)| id)
    }

    /// The run `query` names and a layout that holds it as the whole layout would: when `query`
    /// is a run's exact id and its store can look up one run's files by name, only those (a
    /// few `stat`s, whatever the size of the directory); else the whole layout, the query
    /// resolved in it (a prefix, an unknown run's error).
    pub(crate) fn run_layout(&self, query: &str) -> Result<(Layout, String)> {
        let cache = self.cache.as_deref().filter(|_| self.indexed);
        let store = self.source.store();
        if let Ok(Some(one)) = store.read_run_layout(&self.root, query, cache) {
            if one.runs.contains_key(query) {
                return Ok((one, query.to_owned()));
            }
        }
        let layout = self.layout()?;
        let id = self.resolve_run(&layout, query)?;
        Ok((layout, id))
    }

    /// One run with its timeline, results and problems.
    pub fn detail(&self, query: &str) -> Result<RunDetail> {
        self.detail_verified(query, self.opts.verify)
    }

    /// [`detail`](Self::detail) with its value files compared with the transcript as `verify`
    /// says: the app paints a run from a sampled comparison (each value's size, first and last
    /// 64 KiB), then takes the verdict of every byte, as it does for a value it opens.
    pub fn detail_verified(&self, query: &str, verify: Verify) -> Result<RunDetail> {
        let _span =
            tracing::info_span!("run_detail", dir = %self.root.display(), query, ?verify).entered();
        let (layout, id) = self.run_layout(query)?;
        let opts = RunOptions {
            verify,
            ..self.opts
        };
        let mut detail = analyze_run(&layout, &id, &opts, true)
            .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        // The runs its store nests under it (subagents): their own figures, as listed.
        let opts = self.listing_opts(self.opts.now_ms);
        let children: Vec<Run> = (layout.descendants(&id).iter())
            .filter_map(|child| list_row(&layout, child, &opts))
            .collect();
        crate::model::family::add_children_of(&mut detail.run, &children);
        Ok(detail)
    }
}

/// A name as an error message repeats it: a name of any length was sent, a short one is said.
pub fn clipped(name: &str) -> String {
    const SAID: usize = 80;
    if name.len() <= SAID {
        return name.to_string();
    }
    let mut end = SAID;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &name[..end], name.len())
}

/// The order of a listing: most recently active first, then by id.
pub(crate) fn sort_runs(runs: &mut [Run]) {
    runs.sort_by(|a, b| by_recency((a.updated_ms, &a.id), (b.updated_ms, &b.id)));
}

/// A listing's order of two runs by their last activity and id: most recently active first
/// (a run with no time last), then by id.
fn by_recency(a: (Option<i64>, &str), b: (Option<i64>, &str)) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1))
}

/// A run that could not be read, as a listing shows it (rather than failing the whole list).
pub(crate) fn unreadable_run(id: &str, error: &dyn std::fmt::Display) -> Run {
    Run {
        id: id.to_owned(),
        title: format!("(unreadable: {error})"),
        problems: 1,
        ..Default::default()
    }
}

/// One run of a listing. A run deleted while we list it is simply gone; anything else is shown
/// as a run we could not read rather than failing the whole list.
fn list_row(layout: &Layout, id: &str, opts: &RunOptions) -> Option<Run> {
    match read_row(layout, id, opts) {
        ReadRun::Read(detail) => Some(detail.run),
        ReadRun::Unreadable(run, _) => Some(*run),
        ReadRun::Gone => None,
    }
}

/// [`list_row`], telling a run read whole from one shown as unreadable (the index keeps only
/// the first).
pub(crate) fn read_row(layout: &Layout, id: &str, opts: &RunOptions) -> ReadRun {
    match analyze_run(layout, id, opts, false) {
        Ok(detail) => ReadRun::Read(Box::new(detail)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ReadRun::Gone,
        Err(e) => ReadRun::Unreadable(Box::new(unreadable_run(id, &e)), e.to_string()),
    }
}
