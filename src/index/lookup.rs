//! Looking runs up in the index: each run of the layout paired with its row, its files
//! stat'ed, and the run taken from the row when the stamps prove it unchanged.

use super::results;
use super::stamp::{FileStamp, RunStamp};
use super::store::Row;
use super::{Entry, Want};
use crate::model::layout::{summary_name, transcript_name, value_dir_name, Layout, RunFiles};
use crate::model::{Run, RunDetail, RunOptions, RunStatus};

/// What the index knows of a run of the layout: the run, proven unchanged (as the listing's
/// `out` makes it), or that it must be read (with the bytes of its transcript a read of it
/// counts as done). A listing holds one of these per run while it reads: what is kept of a run
/// is boxed, and a run to read holds no stamp (a cold listing of 40,000 runs held 6.8 MB of
/// them); its reading stamps its files again before it reads them (a Claude Code session's
/// by the stat its folder's listing took).
pub(super) enum Found<T> {
    Kept(Box<T>),
    Changed { len: u64 },
}

/// A run of the layout (its place among the pairs, its id and files) with its row, if any.
pub(super) type Pair<'a> = (usize, &'a String, &'a RunFiles, Option<Row>);

/// A run looked up: its place among the pairs, its id and files, and what the index had of it.
pub(super) type Looked<'a, T> = (usize, &'a String, &'a RunFiles, Found<T>);

/// How many runs are looked up at once, after the first [`FIRST_CHUNK`]. Their rows are held
/// together while their files are stat'ed on every core: a listing holds a chunk of the
/// index's rows, never all of them (a warm listing of 20,000 Claude Code sessions held 65 MiB
/// when it read every row first).
pub(super) const CHUNK: usize = 2048;
/// How many runs are looked up first: their rows are read with nothing else to do.
pub(super) const FIRST_CHUNK: usize = 256;

/// Pairs each run of the layout with its row, as both come: the layout's runs and the rows
/// are in the order of their ids (bytewise), so one pass does it. The rows met that pair with
/// no run are the runs gone, had at the end through [`Merge::gone`].
pub(super) struct Merge<'a, R: Iterator<Item = (String, Row)>> {
    runs: std::iter::Enumerate<std::collections::btree_map::Iter<'a, String, RunFiles>>,
    rows: std::iter::Peekable<R>,
    gone: Vec<String>,
}

impl<'a, R: Iterator<Item = (String, Row)>> Merge<'a, R> {
    pub(super) fn new(layout: &'a Layout, rows: R) -> Self {
        Self {
            runs: layout.runs.iter().enumerate(),
            rows: rows.peekable(),
            gone: Vec::new(),
        }
    }

    /// The ids of the rows whose run is gone (the rows left are read to their end).
    pub(super) fn gone(mut self) -> Vec<String> {
        self.gone.extend(self.rows.map(|(r, _)| r));
        self.gone
    }
}

impl<'a, R: Iterator<Item = (String, Row)>> Iterator for Merge<'a, R> {
    type Item = Pair<'a>;

    fn next(&mut self) -> Option<Pair<'a>> {
        let (at, (id, files)) = self.runs.next()?;
        while let Some((r, _)) = self.rows.next_if(|(r, _)| r < id) {
            self.gone.push(r);
        }
        let row = self.rows.next_if(|(r, _)| r == id).map(|(_, row)| row);
        Some((at, id, files, row))
    }

    /// One pair per run of the layout left.
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.runs.size_hint()
    }
}

/// Stats every run's files and takes the runs they prove unchanged from their rows (with their
/// results or sizes when `want` says so), each given to `out`, on as many threads as there are
/// cores (a listing of 100,000 runs is 300,000 stats), a chunk of runs at a time. The order
/// is the pairs'.
pub(super) fn look_up<'a, T: Send>(
    layout: &'a Layout,
    pairs: impl Iterator<Item = Pair<'a>>,
    opts: &RunOptions,
    want: Want,
    out: &(impl Fn(usize, &String, Entry) -> T + Sync),
) -> Vec<Looked<'a, T>> {
    use rayon::prelude::*;
    let stamper = Stamper::open(layout);
    let one = |(at, id, files, row): Pair<'a>| {
        let stamp = stamper.stamp(id, files, opts.threshold);
        let kept = row
            .filter(|row| row.stamp == stamp.key() && stamp.settled_at(row.read_ms))
            .and_then(|row| from_row(row, opts, want, &stamp));
        let found = match kept {
            Some(entry) => Found::Kept(Box::new(out(at, id, entry))),
            None => Found::Changed {
                len: super::transcript_len(files, &stamp),
            },
        };
        (at, id, files, found)
    };
    let mut pairs = pairs.fuse();
    // As many as the pairs say (every run of a listing; one run opened alone is one).
    let mut looked = Vec::with_capacity(pairs.size_hint().0);
    // The first chunk is small: its rows are read while no run is looked up. Both buffers
    // grow to a chunk and are swapped, keeping their room.
    let mut chunk: Vec<Pair<'a>> = pairs.by_ref().take(FIRST_CHUNK).collect();
    let mut next = Vec::new();
    while !chunk.is_empty() {
        // Each stat waits on the file system: on every core at once, a listing of 100,000
        // runs takes a fraction of the time. Meanwhile this thread reads the next chunk's
        // rows (the index is read one row at a time, on one thread): two chunks at most are
        // held.
        rayon::in_place_scope(|s| {
            s.spawn(|_| looked.par_extend(chunk.par_drain(..).map(&one)));
            next.extend(pairs.by_ref().take(CHUNK));
        });
        std::mem::swap(&mut chunk, &mut next);
    }
    looked
}

/// Stamps the runs of a layout through its directory, opened once.
pub(super) struct Stamper<'a> {
    layout: &'a Layout,
    root: Option<rustix::fd::OwnedFd>,
}

impl<'a> Stamper<'a> {
    pub(super) fn open(layout: &'a Layout) -> Self {
        let root = rustix::fs::open(
            &layout.root,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok();
        Self { layout, root }
    }

    /// The stamps of run `id`'s files as they are now (a transcript the layout's listing
    /// stat'd, as it was then: before anything of it was read).
    pub(super) fn stamp(&self, id: &str, files: &RunFiles, threshold: u64) -> RunStamp {
        stamp_of(self.root.as_ref(), self.layout, id, files, threshold)
    }
}

/// The stamps of run `id`'s files as they are now (see [`Stamper::stamp`]), through `root` (the
/// runs directory, open) when it could be opened.
fn stamp_of(
    root: Option<&rustix::fd::OwnedFd>,
    layout: &Layout,
    id: &str,
    files: &RunFiles,
    threshold: u64,
) -> RunStamp {
    if !layout.store().capabilities().flat_names {
        return foreign_stamp(layout, id, files, threshold);
    }
    let dir = &layout.root;
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
        // What the listing of the runs directory met (a link too: it is never read, but its
        // coming and going changes the run). A value directory that came since is met by the
        // next listing, which then reads the run again; a listing without an index would not
        // have seen it either.
        values: stamp(
            layout.value_dirs.contains_key(id) || layout.linked_value_dirs.contains(id),
            value_dir_name(id),
        ),
        threshold,
        links: None,
    }
}

/// The stamps of a run of another agent's store, whose files nest where its layout says: its
/// transcript, and the folder its values are in (its own, else its session's for a Claude Code
/// subagent), with the layout's links. (Claude Code writes each persisted output once, under a
/// new name: the folder's own stamp stands for its files, as a value directory's does.)
fn foreign_stamp(layout: &Layout, id: &str, files: &RunFiles, threshold: u64) -> RunStamp {
    let values = layout.value_dir(id).or(files.parent_values());
    // A run whose store says when it changed (opencode's database, which all its sessions
    // share) is kept by that: another session's writes to the file leave it be.
    let transcript = match files.revision() {
        Some(_) => None,
        None => files.transcript_stamp(),
    };
    RunStamp {
        transcript,
        summary: None,
        // Such a store says it of its saved files too (opencode's revision takes the names of
        // the files in the session's span): a folder every session shares changes with each.
        values: match files.revision() {
            Some(_) => None,
            None => values.and_then(FileStamp::of),
        },
        threshold,
        links: Some(layout.links(id)),
    }
}

/// A row of the index for `run`, read at `read_ms`; `None` for a run not worth keeping: a
/// summary-only run whose status may turn by the clock (reading its summary again is cheap).
/// (A value directory that came after the runs directory was listed is in no stamp: the next
/// listing meets it and reads the run again.)
pub(super) fn to_row(
    layout: &Layout,
    id: &str,
    detail: &RunDetail,
    stamp: &RunStamp,
    read_ms: i64,
) -> Option<Row> {
    let run = &detail.run;
    let files = &layout.runs[id];
    let clock_since_ms = match run.status {
        // A side conversation's clock is its last line's time: its session moves the file. So
        // is a session of a file all the store's sessions share (a database).
        RunStatus::Running | RunStatus::Interrupted
            if files.side().is_some() || files.revision().is_some() =>
        {
            run.updated_ms
        }
        RunStatus::Running | RunStatus::Interrupted => {
            // A run without a terminal event is running while its transcript changed within the
            // running window: the transcript's modification time is the instant that counts,
            // as the stamp taken before the run was read says it (a file written since has
            // another stamp: the row is not used, the run is read again).
            match stamp.transcript {
                Some(t) if t.mtime_ns >= 0 => Some(t.mtime_ms()),
                _ => {
                    let transcript = files.transcript.as_deref()?;
                    let meta = std::fs::metadata(transcript).ok()?;
                    Some(crate::model::options::modified_ms(&meta)?)
                }
            }
        }
        _ => None,
    };
    Some(Row {
        stamp: stamp.key(),
        read_ms,
        clock_since_ms,
        run: postcard::to_stdvec(run).ok()?,
        floats: (run.cost_usd, run.model_ms),
        results: match layout.value_dirs.contains_key(id) {
            true => Some(results::encode(&detail.results)?),
            false => None,
        },
        sizes: results::encode_sizes(&detail.results),
    })
}

/// The run a row keeps, its status told by the clock of `opts` when it depends on it, with its
/// results or sizes when `want` asks for them and the row keeps them (and, for a listing, the
/// row's bytes of the run when they say all it says). `None` when the row cannot be read back:
/// the run is read again.
fn from_row(row: Row, opts: &RunOptions, want: Want, stamp: &RunStamp) -> Option<Entry> {
    // A row keeps results when its run had a value directory (not a link) when read; the
    // stamp, matched, says it still has.
    let results = match (want, row.results.as_deref()) {
        (Want::Results, Some(kept)) => Some(results::decode(kept)?),
        _ => None,
    };
    let sizes = match want {
        Want::Sizes => Some(results::decode_sizes(row.sizes.as_deref()?)?),
        _ => None,
    };
    // The what-if reads the sizes of 10,000 runs in under 100 ms: it does not read their rows.
    let mut run: Run = match want {
        Want::Sizes => Run::default(),
        _ => postcard::from_bytes(&row.run).ok()?,
    };
    let in_bytes = told_apart(&run);
    (run.cost_usd, run.model_ms) = row.floats;
    // A torn last line becomes the last line once its file has been idle for the running
    // window (runs/read.rs): a row read before that moment is read again once it has passed.
    if run.pending_bytes > 0 {
        let window = opts.running_window_ms;
        let idle_at = (stamp.transcript).map(|t| t.mtime_ms().saturating_add(window));
        if idle_at.is_some_and(|at| row.read_ms <= at && at < opts.now_ms) {
            return None;
        }
    }
    if let Some(since) = row.clock_since_ms {
        run.status = opts.status_by_clock(since);
    }
    // The row's bytes stand for the run when nothing above changed what they say (the clock
    // changes a running run's status; the figures' columns are the bytes' own, written with
    // them).
    let packed = (want == Want::Runs && told_apart(&run) == in_bytes).then_some(row.run);
    Some(Entry {
        run,
        results,
        sizes,
        error: None,
        transcript_stamp: stamp.transcript,
        clock_since_ms: row.clock_since_ms,
        packed,
    })
}

/// What of a run its row tells apart from the run's bytes: its status (the clock's) and its
/// floating-point figures (their columns'), the figures bit for bit.
fn told_apart(run: &Run) -> (RunStatus, Option<u64>, u64) {
    let cost = run.cost_usd.map(f64::to_bits);
    (run.status, cost, run.model_ms.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_of(run: &Run, clock_since_ms: Option<i64>) -> Row {
        Row {
            stamp: String::new(),
            read_ms: 0,
            clock_since_ms,
            run: postcard::to_stdvec(run).unwrap(),
            floats: (run.cost_usd, run.model_ms),
            results: None,
            sizes: None,
        }
    }

    fn stamp() -> RunStamp {
        RunStamp {
            transcript: None,
            summary: None,
            values: None,
            threshold: 0,
            links: None,
        }
    }

    #[test]
    fn a_listing_packs_a_run_by_its_rows_bytes_only_when_they_say_what_it_is_told() {
        let opts = RunOptions {
            now_ms: 10_000_000,
            running_window_ms: 1_000,
            ..RunOptions::default()
        };
        let run = Run {
            id: "r".into(),
            status: RunStatus::Done,
            cost_usd: Some(0.25),
            model_ms: 12.5,
            input_tokens: 7,
            ..Run::default()
        };
        let row = row_of(&run, None);
        let bytes = row.run.clone();
        let entry = from_row(row, &opts, Want::Runs, &stamp()).unwrap();
        assert_eq!(entry.run.cost_usd, Some(0.25));
        assert_eq!(entry.packed, Some(bytes), "the row's bytes are the run");
        let entry = from_row(row_of(&run, None), &opts, Want::Results, &stamp()).unwrap();
        assert_eq!(entry.packed, None, "only a listing packs runs");

        // A running run the clock now says was interrupted: its bytes say otherwise.
        let running = Run {
            status: RunStatus::Running,
            ..run.clone()
        };
        let quiet_since = opts.now_ms - 5_000;
        let entry = from_row(
            row_of(&running, Some(quiet_since)),
            &opts,
            Want::Runs,
            &stamp(),
        );
        let entry = entry.unwrap();
        assert_eq!(entry.run.status, RunStatus::Interrupted);
        assert_eq!(entry.packed, None);
        // Still running by the clock: the bytes say so.
        let busy_since = opts.now_ms - 10;
        let row = row_of(&running, Some(busy_since));
        let entry = from_row(row, &opts, Want::Runs, &stamp()).unwrap();
        assert_eq!(entry.run.status, RunStatus::Running);
        assert!(entry.packed.is_some());

        // Figures' columns that are not the bytes' own: the run is told by the columns.
        let mut row = row_of(&run, None);
        row.floats = (Some(0.5), 12.5);
        let entry = from_row(row, &opts, Want::Runs, &stamp()).unwrap();
        assert_eq!(entry.run.cost_usd, Some(0.5));
        assert_eq!(entry.packed, None);
    }
}
