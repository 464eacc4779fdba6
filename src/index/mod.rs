//! The index: what listing a runs directory derives from its files, kept between runs of
//! Mission Control so that opening it costs what changed, not what exists (`docs/index.md`).
//!
//! For each run it keeps the run's row (the figures `mctl runs` prints) with the stamps of the
//! run's files (size, modification time in ns, inode of the transcript, the summary and the value
//! directory). A listing stats those files; a run whose stamps match, and whose files had been
//! left alone for a moment when it was read, is taken from the index; every other run is read
//! as without an index, and the index is brought up to date. A run whose status is told by the
//! clock (running until its transcript has been quiet for the running window) keeps that instant,
//! and its status is told again by the clock now.
//!
//! The index is a cache, never the source of truth: any answer with it equals the answer
//! without it, deleting it is always safe, and `--no-index` (or `MCTL_NO_INDEX=1`) bypasses it.

mod stamp;
pub(crate) mod store;

use crate::runs::layout::{summary_name, transcript_name, value_dir_name, Layout, RunFiles};
use crate::runs::{Run, RunOptions, RunStatus};
use serde::Serialize;
use stamp::{FileStamp, RunStamp};
use std::path::{Path, PathBuf};
use store::{Row, Store, Unusable};

pub use store::SCHEMA;

/// The index of one runs directory.
pub struct RunIndex {
    store: Store,
    /// The runs directory, canonical, as the index names it.
    runs_dir: String,
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
    pub schema: i64,
}

/// Whether indexes are turned off for this process (`MCTL_NO_INDEX=1`).
pub fn disabled_by_env() -> bool {
    std::env::var("MCTL_NO_INDEX").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Where the index of runs directory `runs_dir` (canonical) lives in cache directory `cache`:
/// one file per runs directory, named by a hash of the directory's path.
pub fn index_path(cache: &Path, runs_dir: &str) -> PathBuf {
    cache.join(format!(
        "index-{:016x}.sqlite",
        fnv1a64(runs_dir.as_bytes())
    ))
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
        match open_store(&path, &runs_dir) {
            Ok(store) => Some(Self { store, runs_dir }),
            Err(Unusable::Unavailable(why) | Unusable::Busy(why)) => {
                tracing::warn!("index: {why}; reading the runs without an index");
                None
            }
            Err(Unusable::Bad(why)) => {
                let aside = set_aside(&path);
                tracing::warn!(
                    "index: {} {why}; set aside as {} and built again",
                    path.display(),
                    aside.display()
                );
                match open_store(&path, &runs_dir) {
                    Ok(store) => Some(Self { store, runs_dir }),
                    Err(Unusable::Bad(why) | Unusable::Unavailable(why) | Unusable::Busy(why)) => {
                        tracing::warn!("index: {why}; reading the runs without an index");
                        None
                    }
                }
            }
        }
    }

    /// Every run of `layout`, each from the index when its files prove it unchanged, else
    /// read by `read` (as a listing without index reads it); the index is brought up to date.
    /// The order is the layout's; the caller sorts.
    pub fn list(
        &mut self,
        layout: &Layout,
        opts: &RunOptions,
        read: impl Fn(&str) -> Option<Run>,
    ) -> Vec<Run> {
        let rows = match self.store.rows() {
            Ok(rows) => rows,
            Err(e) => {
                self.failed(&e);
                Vec::new()
            }
        };
        let had_rows = !rows.is_empty();
        let (pairs, gone) = merge(layout, rows);
        let looked = look_up(layout, pairs, opts);
        let mut runs = Vec::with_capacity(looked.len());
        let mut put = Vec::new();
        for (id, files, found) in looked {
            match found {
                Found::Kept(run) => runs.push(*run),
                Found::Changed(stamp) => {
                    // Read now: a file changed while it is read has a later time, and is read
                    // again next time.
                    let read_ms = crate::runs::now_ms();
                    let Some(run) = read(id) else { continue };
                    if let Some(row) = to_row(&run, &stamp, files, read_ms) {
                        put.push((id.clone(), row));
                    }
                    runs.push(run);
                }
            }
        }
        if !put.is_empty() || !gone.is_empty() || !had_rows {
            if let Err(e) = self.store.update(&put, &gone, crate::runs::now_ms()) {
                // The answer stands; the next listing reads these runs again.
                self.failed(&e);
            }
        }
        tracing::debug!(
            runs = runs.len(),
            read = put.len(),
            "listed through the index"
        );
        runs
    }

    /// Says why the index could not be read or written; a damaged file is set aside and a new
    /// one started in its place, which this listing fills.
    fn failed(&mut self, e: &rusqlite::Error) {
        let path = self.store.path().to_path_buf();
        if store::is_bad(e) {
            let aside = set_aside(&path);
            tracing::warn!(
                "index: {} is damaged ({e}); set aside as {} and built again",
                path.display(),
                aside.display()
            );
            match open_store(&path, &self.runs_dir) {
                Ok(store) => self.store = store,
                Err(Unusable::Bad(why) | Unusable::Unavailable(why) | Unusable::Busy(why)) => {
                    tracing::warn!("index: {why}; read the runs from their files");
                }
            }
        } else {
            tracing::warn!(
                "index: {}: {e}; read the runs from their files",
                path.display()
            );
        }
    }

    /// Empties the index: the next listing reads every run again.
    pub fn clear(&mut self) -> crate::Result<()> {
        self.store.clear().map_err(|e| {
            crate::Error::new(crate::ErrorCode::Io, format!("clearing the index: {e}"))
        })
    }

    /// What the index holds.
    pub fn status(&self, runs_dir: &Path) -> crate::Result<IndexStatus> {
        let io = |e: rusqlite::Error| {
            crate::Error::new(crate::ErrorCode::Io, format!("reading the index: {e}"))
        };
        let (runs, updated_ms) = self.store.summary().map_err(io)?;
        let files = self.store.files().map_err(io)?;
        let path = self.store.path();
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        Ok(IndexStatus {
            path: path.to_string_lossy().into_owned(),
            runs_dir: crate::config::dir_key(runs_dir),
            runs,
            files,
            bytes: size(path) + size(&wal),
            updated_ms,
            schema: SCHEMA,
        })
    }
}

/// Opens the store, waiting (up to about ten seconds) while another process sets it up.
fn open_store(path: &Path, runs_dir: &str) -> Result<Store, Unusable> {
    let mut tries = 0;
    loop {
        match Store::open(path, runs_dir) {
            Err(Unusable::Busy(_)) if tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// What the index knows of a run of the layout: the run, proven unchanged, or that it must be
/// read (with the stamps its files have now).
/// (Boxed: a run is several times the size of a stamp.)
enum Found {
    Kept(Box<Run>),
    Changed(RunStamp),
}

type Pair<'a> = (&'a String, &'a RunFiles, Option<Row>);

/// Pairs each run of the layout with its row (both are in the order of their ids, so one pass
/// does it), and the ids of rows whose run is gone.
fn merge(layout: &Layout, rows: Vec<(String, Row)>) -> (Vec<Pair<'_>>, Vec<String>) {
    let mut rows = rows.into_iter().peekable();
    let mut pairs = Vec::with_capacity(layout.runs.len());
    let mut gone = Vec::new();
    for (id, files) in &layout.runs {
        while let Some((r, _)) = rows.next_if(|(r, _)| r < id) {
            gone.push(r);
        }
        let row = rows.next_if(|(r, _)| r == id).map(|(_, row)| row);
        pairs.push((id, files, row));
    }
    gone.extend(rows.map(|(r, _)| r));
    (pairs, gone)
}

/// Stats every run's files and takes the runs they prove unchanged from their rows, on as many
/// threads as there are cores (a listing of 100,000 runs is 300,000 stats).
fn look_up<'a>(
    layout: &'a Layout,
    pairs: Vec<Pair<'a>>,
    opts: &RunOptions,
) -> Vec<(&'a String, &'a RunFiles, Found)> {
    let root = rustix::fs::open(
        &layout.root,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok();
    let one = |(id, files, row): Pair<'a>| {
        let stamp = stamp_of(root.as_ref(), &layout.root, id, files, opts.threshold);
        let kept = row
            .filter(|row| row.stamp == stamp.key() && stamp.settled_at(row.read_ms))
            .and_then(|row| from_row(&row, opts));
        let found = match kept {
            Some(run) => Found::Kept(Box::new(run)),
            None => Found::Changed(stamp),
        };
        (id, files, found)
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    if threads < 2 || pairs.len() < 512 {
        return pairs.into_iter().map(one).collect();
    }
    let per = pairs.len().div_ceil(threads);
    let mut chunks: Vec<Vec<Pair<'a>>> = Vec::new();
    let mut pairs = pairs.into_iter();
    loop {
        let chunk: Vec<Pair<'a>> = pairs.by_ref().take(per).collect();
        if chunk.is_empty() {
            break;
        }
        chunks.push(chunk);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| s.spawn(|| chunk.into_iter().map(one).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a lookup thread does not panic"))
            .collect()
    })
}

/// The stamps of run `id`'s files as they are now, through `root` (the runs directory, open)
/// when it could be opened.
fn stamp_of(
    root: Option<&rustix::fd::OwnedFd>,
    dir: &Path,
    id: &str,
    files: &RunFiles,
    threshold: u64,
) -> RunStamp {
    let stamp = |present: bool, name: String| -> Option<FileStamp> {
        if !present {
            return None;
        }
        match root {
            Some(fd) => FileStamp::at(fd, &name),
            None => FileStamp::of(&dir.join(name)),
        }
    };
    RunStamp {
        transcript: stamp(files.transcript.is_some(), transcript_name(id)),
        summary: stamp(files.summary.is_some(), summary_name(id)),
        // Whether or not the layout counts it (a link is never read), its coming and going
        // changes the run.
        values: stamp(true, value_dir_name(id)),
        threshold,
    }
}

/// A row of the index for `run`, read at `read_ms`; `None` for a run not worth keeping (a
/// summary-only run whose status may turn by the clock: reading its summary again is cheap).
fn to_row(run: &Run, stamp: &RunStamp, files: &RunFiles, read_ms: i64) -> Option<Row> {
    let clock_since_ms = match run.status {
        RunStatus::Running | RunStatus::Interrupted => {
            // A run without a terminal event is running while its transcript changed within the
            // running window: the transcript's modification time is the instant that counts.
            let transcript = files.transcript.as_deref()?;
            let meta = std::fs::metadata(transcript).ok()?;
            Some(crate::runs::options::modified_ms(&meta)?)
        }
        _ => None,
    };
    Some(Row {
        stamp: stamp.key(),
        read_ms,
        clock_since_ms,
        run: serde_json::to_vec(run).ok()?,
        floats: [run.cost_usd, run.model_ms],
    })
}

/// The run a row keeps, its status told by the clock of `opts` when it depends on it.
fn from_row(row: &Row, opts: &RunOptions) -> Option<Run> {
    let mut run: Run = serde_json::from_slice(&row.run).ok()?;
    [run.cost_usd, run.model_ms] = row.floats;
    if let Some(since) = row.clock_since_ms {
        run.status = if opts.now_ms.saturating_sub(since) <= opts.running_window_ms {
            RunStatus::Running
        } else {
            RunStatus::Interrupted
        };
    }
    Some(run)
}

/// Renames a bad index file (and its write-ahead log) aside, where a curious user can look at
/// it; it is never read again.
fn set_aside(path: &Path) -> PathBuf {
    let aside = PathBuf::from(format!("{}.bad-{}", path.display(), crate::runs::now_ms()));
    if std::fs::rename(path, &aside).is_err() {
        let _ = std::fs::remove_file(path);
    }
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    aside
}

/// FNV-1a, 64 bits: a stable name for a runs directory's index file.
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}
