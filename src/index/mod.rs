//! The index: what listing a runs directory derives from its files, kept between runs of
//! Mission Control so that opening it costs what changed, not what exists (`docs/index.md`).
//!
//! For each run it keeps the run's row (the figures `mctl runs` prints) with the stamps of the
//! run's files (size, modification and change times, inode of the transcript, the summary and the
//! value directory). A listing stats those files; a run whose stamps match, and whose files had
//! been left alone for a moment when it was read, is taken from the index; every other run is
//! read as without an index, and the index is brought up to date. A run whose status is told
//! by the clock (running until its transcript has been quiet for the running window) keeps that
//! instant, and its status is told again by the clock now.
//!
//! The index is a cache, never the source of truth: any answer with it equals the answer
//! without it, deleting it is always safe, and `--no-index` (or `MCTL_NO_INDEX=1`) bypasses it.

mod files;
mod lookup;
mod results;
mod stamp;
mod store;

use crate::model::layout::Layout;
use crate::model::{ResultInfo, ResultSizes, Run, RunDetail, RunOptions};
use crate::sync::lock;
use files::{open_store, set_aside};
use lookup::{look_up, to_row, Found, Merge};
use serde::Serialize;
use stamp::RunStamp;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use store::{Row, Store, Unusable};

pub use files::index_path;

pub use store::SCHEMA;

/// The index of one runs directory.
pub struct RunIndex {
    /// `None` once the file turned out damaged and no new one could be made: this listing
    /// reads the runs, and writes nothing.
    store: Option<Store>,
    path: PathBuf,
    /// The runs directory, canonical, as the index names it.
    runs_dir: String,
}

/// What reading one run's files gave, for the index to keep or not.
pub enum ReadRun {
    /// The run and its results (no timeline), read whole: kept.
    Read(Box<RunDetail>),
    /// A run shown as unreadable (a transcript that could not be read), and why: shown, never
    /// kept, so it is read again once the cause is gone.
    Unreadable(Box<Run>, String),
    /// Gone since the runs directory was listed.
    Gone,
}

/// What a walk through the index reads of each run besides its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// The run alone (a listing).
    Runs,
    /// The results of a run that has a value directory (GC planning, storage figures).
    Results,
    /// The sizes of every result of every run (the threshold what-if). The runs themselves are
    /// not read back: an entry from the index has an empty `run`.
    Sizes,
}

/// One run of a listing through the index.
pub struct Entry {
    /// The run's figures (empty in an entry a [`Want::Sizes`] listing takes from the index).
    pub run: Run,
    /// Its results, when asked for and the run has a value directory (a run read now always
    /// has them).
    pub results: Option<Vec<ResultInfo>>,
    /// The sizes of all its results, when asked for (a run read now has them when it was read
    /// with every stub measured).
    pub sizes: Option<ResultSizes>,
    /// Why the run could not be read (it is shown as unreadable).
    pub error: Option<String>,
    /// The stamp of its transcript the index vouches for (a run taken from the index): up to
    /// its length the run is what `run` says. Another file under its name, or the file written
    /// since, even in place to the same length, is another transcript.
    pub(crate) transcript_stamp: Option<crate::model::stamp::FileStamp>,
    /// For a run whose status is told by the clock: the instant its running window starts.
    pub clock_since_ms: Option<i64>,
    /// The run in `postcard`'s form, as its row keeps it, when a listing took it from the index
    /// and those bytes say all `run` says: the listing holds the run packed, and packs it by
    /// them rather than encoding it again.
    pub(crate) packed: Option<Vec<u8>>,
}

impl Entry {
    /// The run with its status told by the clock of `opts` (a run taken from the index whose
    /// status depends on it).
    pub fn run_at(&self, opts: &RunOptions) -> Run {
        let mut run = self.run.clone();
        if let Some(since) = self.clock_since_ms {
            run.status = opts.status_by_clock(since);
        }
        run
    }

    fn read(run: Run, results: Option<Vec<ResultInfo>>, error: Option<String>) -> Self {
        Self {
            run,
            sizes: results.as_deref().and_then(ResultSizes::of),
            results,
            error,
            transcript_stamp: None,
            clock_since_ms: None,
            packed: None,
        }
    }
}

/// What `mctl index` prints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    /// The index file.
    pub path: String,
    /// The runs directory it is the index of (canonical).
    pub runs_dir: String,
    /// Runs it holds.
    pub runs: u64,
    /// Files it stands for: the runs' transcripts, summaries and value files.
    pub files: u64,
    /// Size of the index on disk (its write-ahead log included).
    pub bytes: u64,
    /// When it was last brought up to date, in epoch milliseconds (`null`: never).
    pub updated_ms: Option<i64>,
    /// Version of the index's tables: an index of another version is built again.
    pub schema: i64,
}

/// Whether indexes are turned off for this process (`MCTL_NO_INDEX=1`).
pub fn disabled_by_env() -> bool {
    std::env::var("MCTL_NO_INDEX").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The answers of a listing, the runs gone since taken out, in the memory they were read into
/// (`flatten` would copy them into another: a listing of 100,000 runs holds its answer twice).
#[allow(clippy::filter_map_identity)]
pub(crate) fn in_place<T>(answers: Vec<Option<T>>) -> Vec<T> {
    answers.into_iter().filter_map(|a| a).collect()
}

/// The bytes of a run's transcript a read of it counts as done. A side conversation's file is
/// its session's, and counted once, there.
fn transcript_len(files: &crate::model::RunFiles, stamp: &RunStamp) -> u64 {
    match (&stamp.transcript, files.side()) {
        (Some(t), None) => t.len,
        _ => 0,
    }
}

/// How many rows a listing writes in one transaction.
const ROWS_PER_WRITE: usize = 256;

/// Keeps the rows a listing's reads give, a batch at a time: the reading thread that fills a
/// batch writes it, while the others read on. (Handing each row to a writer thread woke it
/// once per row: 22,000 more system calls for 7,000 runs, 4 % of a cold listing.)
struct Keeper<'s> {
    batch: Mutex<Vec<(String, Row)>>,
    writer: Mutex<Writer<'s>>,
}

/// The index as the rows are written to it: after the first failure nothing more is written
/// (the next listing reads those runs again).
struct Writer<'s> {
    store: Option<&'s mut Store>,
    kept: usize,
    failed: Option<rusqlite::Error>,
}

impl<'s> Keeper<'s> {
    fn new(store: Option<&'s mut Store>) -> Self {
        Self {
            batch: Mutex::new(Vec::with_capacity(ROWS_PER_WRITE)),
            writer: Mutex::new(Writer {
                store,
                kept: 0,
                failed: None,
            }),
        }
    }

    /// Keeps `row`, and writes the batch it fills.
    fn keep(&self, id: String, row: Row) {
        let full = {
            let mut batch = lock(&self.batch);
            batch.push((id, row));
            (batch.len() >= ROWS_PER_WRITE)
                .then(|| std::mem::replace(&mut *batch, Vec::with_capacity(ROWS_PER_WRITE)))
        };
        if let Some(rows) = full {
            let mut writer = lock(&self.writer);
            writer.write(&rows, &[], false);
        }
    }

    /// Writes the last batch and forgets the runs that are gone; at the end of a whole
    /// listing, stamps the index as brought up to date (one that held no row yet even when
    /// nothing was read). The number of rows kept, or the first failure.
    fn finish(self, rest: &Rest) -> rusqlite::Result<usize> {
        let rows = self
            .batch
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut writer = self
            .writer
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        // After any write too: only a listing's last says the index is up to date (a run
        // read alone, as opening it does, is no listing of the directory).
        let done = rest.listing;
        if !rows.is_empty() || !rest.gone.is_empty() || done && (rest.empty || writer.kept > 0) {
            writer.write(&rows, &rest.gone, done);
        }
        match writer.failed {
            Some(e) => Err(e),
            None => Ok(writer.kept),
        }
    }
}

impl Writer<'_> {
    /// Writes `rows` and forgets `gone`; `done`: the listing is over (its last write).
    fn write(&mut self, rows: &[(String, Row)], gone: &[String], done: bool) {
        let Some(store) = self.store.as_deref_mut() else {
            return;
        };
        match store.update(rows, gone, done.then(crate::model::now_ms)) {
            Ok(()) => self.kept += rows.len(),
            Err(e) => {
                self.store = None;
                self.failed = Some(e);
            }
        }
    }
}

/// What settling a look-up needs besides its runs: the runs gone since, whether the index held
/// no row before, and the clock the runs read are judged by.
struct Rest {
    gone: Vec<String>,
    empty: bool,
    clock_ms: i64,
    /// The threshold the runs are read with (part of each stamp).
    threshold: u64,
    /// Whether these are every run of the directory (a listing), not one run read alone.
    listing: bool,
}

impl RunIndex {
    /// The index of `root`, opened or made. `None` when it cannot be used now (no cache
    /// directory, one that cannot be written, a file another process holds too long): the
    /// caller reads the runs itself. A bad file is set aside and built again. Each case is told
    /// in one line (a warning on the log, which `mctl` prints on stderr).
    pub fn open(cache: Option<&Path>, root: &Path) -> Option<Self> {
        let Some(cache) = cache else {
            tracing::warn!("index: no cache directory; reading the runs without an index");
            return None;
        };
        let runs_dir = crate::config::dir_key(root);
        let path = index_path(cache, &runs_dir);
        if let Err(e) = std::fs::create_dir_all(cache) {
            tracing::warn!(
                "index: cannot create {}: {e}; reading the runs without an index",
                cache.display()
            );
            return None;
        }
        let store = match open_store(&path, &runs_dir) {
            Ok(store) => store,
            Err(Unusable::Unavailable(why) | Unusable::Busy(why)) => {
                tracing::warn!("index: {why}; reading the runs without an index");
                return None;
            }
            Err(Unusable::Bad(why)) => {
                // The failed open holds no connection to the file any more.
                let aside = set_aside(&path);
                tracing::warn!(
                    "index: {} {why}; set aside as {} and built again",
                    path.display(),
                    aside.display()
                );
                match open_store(&path, &runs_dir) {
                    Ok(store) => store,
                    Err(Unusable::Bad(why) | Unusable::Unavailable(why) | Unusable::Busy(why)) => {
                        tracing::warn!("index: {why}; reading the runs without an index");
                        return None;
                    }
                }
            }
        };
        Some(Self {
            store: Some(store),
            path,
            runs_dir,
        })
    }

    /// Every run of `layout`, each from the index when its files prove it unchanged, else
    /// read by `read` (as a listing without index reads it), and given to `out` (on the thread
    /// that read it: a listing of 100,000 runs holds what `out` makes of each, never a run's
    /// whole reading); the index is brought up to date. The order is the layout's; the caller
    /// sorts and adds the children's figures.
    pub fn list<T: Send>(
        &mut self,
        layout: &Layout,
        opts: &RunOptions,
        read: impl Fn(&str) -> ReadRun + Sync,
        out: impl Fn(Run) -> T + Sync,
    ) -> Vec<T> {
        self.list_placed(layout, opts, read, |_, run, _| out(run))
    }

    /// [`list`](Self::list), each run given to `out` with its place in the layout (the order
    /// of its id among the layout's) and, for a run taken from the index, its bytes in
    /// `postcard`'s form when they say all the run says.
    pub fn list_placed<T: Send>(
        &mut self,
        layout: &Layout,
        opts: &RunOptions,
        read: impl Fn(&str) -> ReadRun + Sync,
        out: impl Fn(usize, Run, Option<Vec<u8>>) -> T + Sync,
    ) -> Vec<T> {
        self.walk(layout, opts, Want::Runs, read, |at, _, e| {
            out(at, e.run, e.packed)
        })
    }

    /// [`list`](Self::list), each run with its id and what `want` asks for: the results of the
    /// runs that have a value directory (what GC planning and the storage figures need), or the
    /// sizes of every result (the threshold what-if).
    pub fn entries(
        &mut self,
        layout: &Layout,
        opts: &RunOptions,
        want: Want,
        read: impl Fn(&str) -> ReadRun + Sync,
    ) -> Vec<(String, Entry)> {
        self.walk(layout, opts, want, read, |_, id, e| (id.clone(), e))
    }

    /// [`entries`](Self::entries), each given to `out` as soon as it is had, with its place
    /// among the layout's runs.
    fn walk<T: Send>(
        &mut self,
        layout: &Layout,
        opts: &RunOptions,
        want: Want,
        read: impl Fn(&str) -> ReadRun + Sync,
        out: impl Fn(usize, &String, Entry) -> T + Sync,
    ) -> Vec<T> {
        // The rows are read as the runs are looked up, a chunk at a time.
        let look = |rows: &mut dyn Iterator<Item = (String, Row)>| {
            let mut had_rows = false;
            let rows = rows.inspect(|_| had_rows = true);
            let mut pairs = Merge::new(layout, rows);
            let looked = look_up(layout, pairs.by_ref(), opts, want, &out);
            let gone = pairs.gone();
            (looked, gone, had_rows)
        };
        let ((looked, gone, had_rows), failure) = match self.store.as_ref() {
            Some(store) => store.with_rows(want, look),
            None => (look(&mut std::iter::empty()), None),
        };
        // A failure part way leaves the runs vouched for before it as they were found; the
        // others are read. Those found may have no row in the index now (a damaged file is
        // set aside for a new one): the listing then does not say the index is up to date, so
        // that the next one fills it as a first listing does.
        let partial = failure.is_some() && had_rows;
        if let Some(e) = failure {
            self.failed(&e);
        }
        tracing::debug!(runs = looked.len(), had_rows, "looked the runs up");
        let rest = Rest {
            gone,
            empty: !had_rows,
            clock_ms: opts.now_ms,
            threshold: opts.threshold,
            listing: !partial,
        };
        self.settle(layout, looked, rest, want, read, out)
    }

    /// Run `id` of `layout` with its results: from the index when its files prove it unchanged,
    /// else read by `read` (and kept). `None` when the run is gone.
    pub fn one(
        &mut self,
        layout: &Layout,
        id: &str,
        opts: &RunOptions,
        read: impl Fn(&str) -> ReadRun + Sync,
    ) -> Option<Entry> {
        let (key, files) = layout.runs.get_key_value(id)?;
        let row = match self.store.as_ref().map(|s| s.row(id)) {
            Some(Ok(row)) => row,
            Some(Err(e)) => {
                self.failed(&e);
                None
            }
            None => None,
        };
        let entry = |_: usize, _: &String, e: Entry| e;
        // Looked up alone: the only pair, at place 0.
        let pair = std::iter::once((0, key, files, row));
        let looked = look_up(layout, pair, opts, Want::Results, &entry);
        let rest = Rest {
            gone: Vec::new(),
            empty: false,
            clock_ms: opts.now_ms,
            threshold: opts.threshold,
            listing: false,
        };
        let mut entries = self.settle(layout, looked, rest, Want::Results, read, entry);
        entries.pop()
    }

    /// Reads the runs the index could not vouch for, keeps what they gave (a batch at a time,
    /// as they are read) and forgets the runs that are gone.
    fn settle<T: Send>(
        &mut self,
        layout: &Layout,
        looked: Vec<lookup::Looked<'_, T>>,
        rest: Rest,
        want: Want,
        read: impl Fn(&str) -> ReadRun + Sync,
        out: impl Fn(usize, &String, Entry) -> T + Sync,
    ) -> Vec<T> {
        // Read now: a file changed while it is read has a later time, and is read again next
        // time. (Never later than the clock the read judged the run by: a torn last line it
        // judged still pending is read again once the file is idle.)
        let read_ms = crate::model::now_ms().min(rest.clock_ms);
        let changed = looked.iter().filter_map(|(_, _, _, f)| match f {
            Found::Changed { len } => Some(*len),
            Found::Kept(_) => None,
        });
        let to_read = changed.clone().count();
        crate::progress::to_read(to_read as u64, changed.sum());
        // The runs the index cannot vouch for are read on every core (the reads are
        // independent). Each read becomes its row and what `out` makes of it at once, on its
        // thread: no run's whole reading waits for the others. The rows are written a batch
        // at a time while the reads go on: what is held is bounded, whatever the number of
        // runs.
        let keeper = Keeper::new(self.store.as_mut());
        let stamper = lookup::Stamper::open(layout);
        let read_one = |(at, id, files, found): lookup::Looked<'_, T>| {
            let len = match found {
                Found::Kept(kept) => return Some(*kept),
                Found::Changed { len } => len,
            };
            // Stamped before it is read: a file changed while it is read is read again next
            // time.
            let stamp = stamper.stamp(id, files, rest.threshold);
            let read = read(id);
            crate::progress::read_one(len);
            match read {
                ReadRun::Read(detail) => {
                    if let Some(row) = to_row(layout, id, &detail, &stamp, read_ms) {
                        keeper.keep(id.clone(), row);
                    }
                    let RunDetail { run, results, .. } = *detail;
                    let mut entry = Entry::read(run, Some(results), None);
                    // What the caller did not ask for is not kept while the others are read
                    // (a listing of thousands of runs needs none of it).
                    match want {
                        Want::Runs => (entry.results, entry.sizes) = (None, None),
                        Want::Sizes => entry.results = None,
                        Want::Results => {}
                    }
                    Some(out(at, id, entry))
                }
                ReadRun::Unreadable(run, why) => {
                    Some(out(at, id, Entry::read(*run, None, Some(why))))
                }
                // Gone since the directory was listed.
                ReadRun::Gone => None,
            }
        };
        // Collected in place, each in its slot (the runs gone since are taken out after): a
        // listing of 100,000 runs allocates its answer once.
        let entries: Vec<Option<T>> = {
            use rayon::prelude::*;
            looked.into_par_iter().map(read_one).collect()
        };
        let entries = in_place(entries);
        let written = keeper.finish(&rest);
        if let Err(e) = &written {
            // The answer stands; the next listing reads these runs again.
            self.failed(e);
        }
        tracing::debug!(
            runs = entries.len(),
            read = to_read,
            kept = written.unwrap_or(0),
            "listed through the index"
        );
        entries
    }

    /// Says why the index could not be read or written. A damaged file is set aside (after
    /// this process's connection to it is closed) and a new one started in its place.
    fn failed(&mut self, e: &rusqlite::Error) {
        if !store::is_bad(e) {
            tracing::warn!(
                "index: {}: {e}; read the runs from their files",
                self.path.display()
            );
            return;
        }
        self.store = None;
        let aside = set_aside(&self.path);
        tracing::warn!(
            "index: {} is damaged ({e}); set aside as {} and built again",
            self.path.display(),
            aside.display()
        );
        match open_store(&self.path, &self.runs_dir) {
            Ok(store) => self.store = Some(store),
            Err(Unusable::Bad(why) | Unusable::Unavailable(why) | Unusable::Busy(why)) => {
                tracing::warn!("index: {why}; read the runs from their files");
            }
        }
    }

    /// Empties the index: the next listing reads every run again. A damaged file is set aside
    /// and a new one started instead.
    pub fn clear(&mut self) -> crate::Result<()> {
        let cleared = self.store.as_mut().map(Store::clear);
        if let Some(Err(e)) = cleared {
            self.failed(&e);
        }
        self.store.as_ref().map(|_| ()).ok_or_else(|| {
            crate::Error::new(crate::ErrorCode::Io, "the index could not be made again")
        })
    }

    /// Whether the index holds no run yet, as far as a listing can use it: a new or rebuilt
    /// index, one whose first listing stopped half way (its rows cover only some runs: a
    /// listing through it would read the others beside the watcher), or one that cannot be
    /// read.
    pub fn is_empty(&self) -> bool {
        let usable = |s: &Store| Ok::<_, rusqlite::Error>(s.has_runs()? && s.was_completed()?);
        self.store
            .as_ref()
            .and_then(|s| usable(s).ok())
            .is_none_or(|usable| !usable)
    }

    /// What the index holds.
    pub fn status(&self, runs_dir: &Path) -> crate::Result<IndexStatus> {
        let io = |e: rusqlite::Error| {
            crate::Error::new(crate::ErrorCode::Io, format!("reading the index: {e}"))
        };
        let store = self
            .store
            .as_ref()
            .ok_or_else(|| crate::Error::new(crate::ErrorCode::Io, "the index is not open"))?;
        let (runs, updated_ms) = store.summary().map_err(io)?;
        let files = store.files().map_err(io)?;
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        Ok(IndexStatus {
            path: self.path.to_string_lossy().into_owned(),
            runs_dir: crate::config::dir_key(runs_dir),
            runs,
            files,
            bytes: size(&self.path) + size(&wal),
            updated_ms,
            schema: SCHEMA,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` to `path`, its modification time an hour ago (long settled).
    fn write_settled(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_times(std::fs::FileTimes::new().set_modified(hour_ago))
            .unwrap();
    }

    /// A read of run `id` that finds it done and nothing else.
    fn read_done(id: &str) -> ReadRun {
        let run = Run {
            id: id.to_owned(),
            status: crate::model::RunStatus::Done,
            ..Run::default()
        };
        ReadRun::Read(Box::new(RunDetail {
            run,
            events: Vec::new(),
            results: Vec::new(),
            problems: Vec::new(),
            strays: Vec::new(),
        }))
    }

    #[test]
    fn a_run_whose_file_changes_while_it_is_read_is_read_again_next_time() {
        let (cache, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let transcript = root.path().join("r.jsonl");
        write_settled(&transcript, "{}\n");
        let files = crate::model::RunFiles {
            transcript: Some(transcript.clone()),
            ..Default::default()
        };
        // The harness's layout (the default kind): the run's files are named after it.
        let layout = Layout {
            root: root.path().to_path_buf(),
            runs: [("r".to_owned(), files)].into(),
            ..Default::default()
        };
        let opts = RunOptions::default();
        let mut index = RunIndex::open(Some(cache.path()), root.path()).unwrap();
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let list = |index: &mut RunIndex, change: bool| {
            let read = |id: &str| {
                reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if change {
                    // Written to while its reading goes on, its time set back: only its
                    // stamp, taken before, tells.
                    write_settled(&transcript, "{}\n{}\n");
                }
                read_done(id)
            };
            index.list(&layout, &opts, read, |run| run.id).len()
        };
        assert_eq!(list(&mut index, true), 1);
        assert_eq!(list(&mut index, false), 1);
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::Relaxed),
            2,
            "the run changed while it was read is read again"
        );
        assert_eq!(list(&mut index, false), 1);
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::Relaxed),
            2,
            "then kept: its row stands for it"
        );
    }

    #[test]
    fn a_listing_longer_than_a_chunk_of_rows_pairs_each_run_with_its_own_row() {
        let (cache, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ids: Vec<String> = (0..2 * lookup::CHUNK + 7)
            .map(|i| format!("r{i:05}"))
            .collect();
        let mut layout = Layout {
            root: root.path().to_path_buf(),
            ..Default::default()
        };
        for id in &ids {
            let transcript = root.path().join(format!("{id}.jsonl"));
            write_settled(&transcript, "{}\n");
            let files = crate::model::RunFiles {
                transcript: Some(transcript),
                ..Default::default()
            };
            layout.runs.insert(id.clone(), files);
        }
        let opts = RunOptions::default();
        let mut index = RunIndex::open(Some(cache.path()), root.path()).unwrap();
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let read = |id: &str| {
            reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            read_done(id)
        };
        // Each run handed on with its place in the layout (a listing ranks it by that), read
        // and then kept.
        let placed = |ids: &[String]| ids.iter().cloned().enumerate().collect::<Vec<_>>();
        let listed = index.list_placed(&layout, &opts, read, |at, run, _| (at, run.id));
        assert_eq!(listed, placed(&ids));
        // Runs gone on both sides of each chunk's edge, and the first and the last.
        let first = lookup::FIRST_CHUNK;
        let second = first + lookup::CHUNK;
        assert!(second + 1 < ids.len() - 1, "three chunks at least");
        for i in [
            0,
            first - 1,
            first,
            first + 1,
            second - 1,
            second,
            second + 1,
            ids.len() - 1,
        ] {
            layout.runs.remove(&ids[i]);
        }
        let left: Vec<String> = layout.runs.keys().cloned().collect();
        let listed = index.list_placed(&layout, &opts, read, |at, run, _| (at, run.id));
        assert_eq!(listed, placed(&left), "each run from its own row, in order");
        assert_eq!(
            reads.load(std::sync::atomic::Ordering::Relaxed),
            ids.len(),
            "no run read again"
        );
        let held = index.store.as_ref().unwrap().summary().unwrap().0;
        assert_eq!(held, left.len() as u64, "the gone runs' rows forgotten");
    }

    #[test]
    fn an_index_whose_first_listing_stopped_half_way_is_still_empty_to_a_listing() {
        let (cache, root) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut index = RunIndex::open(Some(cache.path()), root.path()).unwrap();
        assert!(index.is_empty(), "a new index");
        let row = Row {
            stamp: "s".into(),
            read_ms: 1,
            clock_since_ms: None,
            run: postcard::to_stdvec(&Run::default()).unwrap(),
            floats: (None, 0.0),
            results: None,
            sizes: None,
        };
        // A listing's batches before its last: the rows are kept, the listing is not over.
        let keeper = Keeper::new(index.store.as_mut());
        for i in 0..ROWS_PER_WRITE {
            keeper.keep(format!("r{i:03}"), row.clone());
        }
        drop(keeper);
        let store = index.store.as_ref().unwrap();
        assert_eq!(store.summary().unwrap(), (ROWS_PER_WRITE as u64, None));
        assert!(index.is_empty(), "rows for some runs only");
        // One run read alone (opened) is no listing either.
        let rest = |listing| Rest {
            gone: Vec::new(),
            empty: false,
            clock_ms: 0,
            threshold: 0,
            listing,
        };
        let keeper = Keeper::new(index.store.as_mut());
        keeper.keep("r998".into(), row.clone());
        assert_eq!(keeper.finish(&rest(false)).unwrap(), 1);
        assert!(index.is_empty(), "a run opened");
        // A listing's last write says the index is up to date.
        let keeper = Keeper::new(index.store.as_mut());
        keeper.keep("r999".into(), row);
        assert_eq!(keeper.finish(&rest(true)).unwrap(), 1);
        assert!(!index.is_empty());
        index.clear().unwrap();
        assert!(index.is_empty(), "emptied");
    }
}
