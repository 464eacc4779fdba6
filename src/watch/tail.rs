//! Incremental tailing of one transcript: remember the offset of the last complete line and read
//! only what was appended. A torn last line waits for its newline; a transcript that shrinks or
//! is replaced (another file under the same name) is read again from the start. (A write in
//! place to the same length is not told from an append under way by a stat, which can show the
//! append's new times before its new length: a followed run is not read again for it.)
//!
//! A tail can start from what the index vouches for ([`Tail::kept`]): the run as it stood at a
//! stamp of its transcript, nothing read. It stays so while the file keeps that stamp; the
//! first time more is needed (the file grew, a value file came or went, the summary changed) the
//! transcript is read whole once, and only the lines past that length are news. (A file
//! written in place to its length gives the run its new figures, but no news.)

use super::packed::PackedRun;
use crate::fold::{Analyzer, FileFigures, Rows};
use crate::index::Entry;
use crate::model::layout::{is_link, is_regular_file, value_dir_name, RunPaths};
use crate::model::stamp::FileStamp;
use crate::model::values::{find_value_file, list_value_files};
use crate::model::{now_ms, Run, RunOptions, RunStatus, TimelineEvent};
use crate::transcript::{read_transcript_lines, Cursor};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which file a tail is reading: a replaced transcript is another file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

fn identity(meta: &fs::Metadata) -> Identity {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Identity { dev: 0, ino: 0 }
    }
}

/// What one poll of a transcript found.
#[derive(Debug, Clone, Default)]
pub struct TailUpdate {
    /// The file shrank or was replaced: everything known of the run was thrown away and it was
    /// read again from the start; `events` then holds a row of every line again.
    pub reset: bool,
    /// The new events (timeline entries, unreadable lines included), in file order, each as
    /// whole as the tail's rows say ([`Tail::new_in`]).
    pub events: Vec<TimelineEvent>,
    /// Bytes of a torn last line still waiting for its newline.
    pub pending_bytes: u64,
}

/// A transcript being followed, with its run model kept up to date from the new lines alone.
pub struct Tail {
    id: String,
    /// The runs directory, shared by its tails: the run's paths are made from it and the id
    /// when needed (three paths held per tail were a quarter of a kept tail's memory).
    root: Arc<Path>,
    opts: RunOptions,
    cursor: Cursor,
    file: Option<Identity>,
    /// The transcript as the last read found it: its stat just before the read, with the
    /// length the read saw (a file that grew in between matches no later stat, and is read
    /// again before its run is kept).
    read_stamp: FileStamp,
    pending_bytes: u64,
    /// The fold of the lines read so far; none while the run is kept (a fold is over a
    /// kilobyte even empty, and a directory of 100,000 settled runs keeps one tail each).
    analyzer: Option<Box<Analyzer>>,
    /// What its reads build of each line (see [`Tail::new_in`]).
    rows: Rows,
    error: Option<(io::ErrorKind, String)>,
    /// The run as the index vouches for it, not read yet, or as it settled (see
    /// [`Tail::settle`]): held instead of a fold until the run must be read.
    kept: Option<Box<Kept>>,
    /// What reading a kept run found past what it was kept at, for the next poll.
    stash: Option<TailUpdate>,
}

/// A run as the index vouches for it (or as it settled): what `run` says holds while the
/// transcript has `stamp`.
struct Kept {
    /// A directory of 100,000 settled runs keeps one each.
    run: PackedRun,
    /// The bytes of a torn last line the run was kept with.
    pending_bytes: u64,
    /// For a run whose status is told by the clock: the instant its running window starts.
    clock_since_ms: Option<i64>,
    /// The transcript as `run` was had from it (its length, times and inode): a file with
    /// another stamp is read, even one written in place to the same length.
    stamp: FileStamp,
    /// A read was asked for (value files or the summary changed) and failed: the file's
    /// unchanged stamp no longer proves the run unchanged.
    must_read: bool,
}

impl Kept {
    /// `run` kept as it stands while its transcript has `stamp`; `None` when it cannot be
    /// packed (the run is then read).
    fn new(run: &Run, clock_since_ms: Option<i64>, stamp: FileStamp) -> Option<Self> {
        Some(Self {
            run: PackedRun::new(run)?,
            pending_bytes: run.pending_bytes,
            clock_since_ms,
            stamp,
            must_read: false,
        })
    }

    /// The run with its status told by the clock of `opts`, as [`Entry::run_at`] tells it.
    fn run_at(&self, id: &str, opts: &RunOptions) -> Run {
        let mut run = self.run.unpack(id);
        if let Some(since) = self.clock_since_ms {
            run.status = opts.status_by_clock(since);
        }
        run
    }
}

impl Tail {
    /// A tail of run `id` of runs directory `root`, nothing read yet: the first poll reads it
    /// all. Its updates hold each line's timeline row, whole: a view of the run shows them.
    pub fn new(root: &Path, id: &str, opts: RunOptions) -> Self {
        Self::new_in(Arc::from(root), id, opts, Rows::Timeline)
    }

    /// [`Tail::new`] in a runs directory whose tails share its path, whose updates hold `rows`
    /// of the lines read: a watcher tells only each line's place and kind ([`Rows::Lines`]),
    /// and the app's first look nothing ([`Rows::Nothing`]), while what the rest of a row holds
    /// (a message's text, a call's input written out) costs more than the fold.
    pub(crate) fn new_in(root: Arc<Path>, id: &str, opts: RunOptions, rows: Rows) -> Self {
        let analyzer = begin(id, &RunPaths::new(&root, id).value_dir(), opts, rows);
        Self::with(root, id, opts, Some(Box::new(analyzer)), None, rows)
    }

    /// Builds `rows` of the lines read from now on.
    pub(crate) fn set_rows(&mut self, rows: Rows) {
        self.rows = rows;
        if let Some(analyzer) = &mut self.analyzer {
            analyzer.set_rows(rows);
        }
    }

    /// A tail of a run the index vouches for (`entry` taken from it), nothing read: `None` for
    /// an entry the index did not vouch for. Its reads build `rows` ([`Tail::new_in`]).
    pub(crate) fn kept(
        root: Arc<Path>,
        id: &str,
        opts: RunOptions,
        entry: Entry,
        rows: Rows,
    ) -> Option<Self> {
        let kept = Kept::new(&entry.run, entry.clock_since_ms, entry.transcript_stamp?)?;
        // No fold until the run is read.
        Some(Self::with(root, id, opts, None, Some(Box::new(kept)), rows))
    }

    /// A tail at the start of its transcript, folding into `analyzer`.
    fn with(
        root: Arc<Path>,
        id: &str,
        opts: RunOptions,
        analyzer: Option<Box<Analyzer>>,
        kept: Option<Box<Kept>>,
        rows: Rows,
    ) -> Self {
        Self {
            id: id.to_owned(),
            root,
            analyzer,
            rows,
            opts,
            cursor: Cursor::default(),
            file: None,
            read_stamp: FileStamp::default(),
            pending_bytes: 0,
            error: None,
            kept,
            stash: None,
        }
    }

    /// A tail of run `id` of runs directory `root` from its index, when the index vouches for
    /// the run up to exactly `complete` bytes of complete lines (what a view read; the default
    /// cache directory's index; none when turned off): nothing is read until the transcript
    /// changes. A view further behind or ahead than the index is followed by reading.
    pub(crate) fn from_index(
        root: &Path,
        kind: crate::model::SourceKind,
        id: &str,
        opts: RunOptions,
        complete: u64,
    ) -> Option<Self> {
        let dir = crate::runs::RunsDir::open_as(root, kind, opts).ok()?;
        let mut index = dir.index()?;
        let layout = dir.layout().ok()?;
        let listing = dir.listing_opts(opts.now_ms);
        let entry = index.one(&layout, id, &listing, |_| crate::index::ReadRun::Gone)?;
        let known_end = entry
            .transcript_stamp?
            .len
            .checked_sub(entry.run.pending_bytes)?;
        let root = Arc::from(root);
        (known_end == complete).then(|| Self::kept(root, id, opts, entry, Rows::Timeline))?
    }

    fn transcript(&self) -> PathBuf {
        RunPaths::new(&self.root, &self.id).transcript()
    }

    fn values_dir(&self) -> PathBuf {
        RunPaths::new(&self.root, &self.id).value_dir()
    }

    /// Whether a read of a kept run found lines not yet told (the next poll tells them).
    pub(crate) fn has_stash(&self) -> bool {
        self.stash.is_some()
    }

    /// Whether the run is kept (as the index vouched for it, or as it settled), not read on.
    pub(crate) fn is_kept(&self) -> bool {
        self.kept.is_some()
    }

    /// Reads a kept run's transcript whole, so that it can go on line by line; the lines past
    /// what the index vouched for are news, kept for the next poll (all of them, as a reset,
    /// when the file is another one or shorter). A failure leaves it kept, to try again.
    pub(crate) fn read_kept(&mut self) {
        let Some(kept) = self.kept.take() else {
            return;
        };
        // Where the complete lines the index knows of end.
        let known_end = kept.stamp.len.saturating_sub(kept.pending_bytes);
        let transcript = self.transcript();
        // Taken before the read: what was read is at least this (see `settle`).
        let before = fs::metadata(&transcript).map(|m| FileStamp::from_meta(&m));
        // (Its times may have moved with an append under way, its length not yet: a file
        // written in place to its length is not told apart here.)
        let same_file =
            (before.as_ref()).is_ok_and(|now| now.ino == kept.stamp.ino && now.len >= known_end);
        let mut analyzer = begin(&self.id, &self.values_dir(), self.opts, self.rows);
        let read = read_transcript_lines(&transcript, Cursor::default(), |line| {
            let end = line.offset + line.raw_len + 1;
            analyzer.line(line);
            if same_file && end <= known_end {
                analyzer.take_events(); // known already: not news
            }
        });
        let (outcome, meta) = match read.and_then(|o| Ok((o, fs::metadata(&transcript)?))) {
            Ok(read) => read,
            Err(e) => {
                self.error = Some((e.kind(), e.to_string()));
                self.kept = Some(Box::new(Kept {
                    must_read: true,
                    ..*kept
                }));
                return;
            }
        };
        let analyzer = self.analyzer.insert(Box::new(analyzer));
        self.file = Some(identity(&meta));
        self.cursor = outcome.cursor;
        self.read_stamp = read_stamp(before.ok(), outcome.file_len);
        self.pending_bytes = outcome.pending_bytes;
        self.error = None;
        let events = analyzer.take_events();
        analyzer.forget_details();
        self.stash = Some(TailUpdate {
            reset: !same_file,
            events,
            pending_bytes: outcome.pending_bytes,
        });
    }

    /// Lets go of what reading on needs when the run is settled: its transcript read to its
    /// end (no torn line, nothing new), no news waiting, and left alone for longer than the
    /// running window (a run without a terminal event then stays interrupted until its file
    /// changes). The tail then holds the run as a kept one, as if the index vouched for it,
    /// and reads the transcript whole once should it change. A fold's state is over 10 KB a
    /// run: watching 5,000 runs with no index peaked at 101 MiB, most of it folds of runs
    /// never to be read on, and peaks at 48 MiB so. Whether it settled.
    pub(crate) fn settle(&mut self) -> bool {
        // News waiting for the next poll keeps the fold (a read that found none, as when a
        // value file came to a kept run, waits for nothing).
        let news = |s: &TailUpdate| s.reset || !s.events.is_empty();
        if self.kept.is_some() || self.stash.as_ref().is_some_and(news) || self.error.is_some() {
            return false;
        }
        let Some(file) = self.file.filter(|_| self.pending_bytes == 0) else {
            return false;
        };
        let Ok(meta) = fs::metadata(self.transcript()) else {
            return false;
        };
        // The file as it was when last read, to its change time: a write since, even in place
        // with its modification time put back, is read before the run is kept.
        let same = identity(&meta) == file && FileStamp::from_meta(&meta) == self.read_stamp;
        let changed_ms = crate::model::options::modified_ms(&meta);
        let now = now_ms();
        let idle = changed_ms.is_some_and(|t| now.saturating_sub(t) > self.opts.running_window_ms);
        let (true, true, Some(changed_ms)) = (same, idle, changed_ms) else {
            return false;
        };
        let run = self.run();
        // Told by the clock, as the index keeps such a run: interrupted now, running again
        // only if the file changes (and then it is read).
        let clock_since_ms =
            matches!(run.status, RunStatus::Running | RunStatus::Interrupted).then_some(changed_ms);
        let Some(kept) = Kept::new(&run, clock_since_ms, self.read_stamp) else {
            return false;
        };
        self.kept = Some(Box::new(kept));
        self.analyzer = None;
        self.stash = None;
        true
    }

    /// The id of the run followed.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Reads what was appended since the last poll.
    pub fn poll(&mut self) -> io::Result<TailUpdate> {
        if let Some(kept) = &self.kept {
            // Unchanged: nothing to read, nothing to tell. A file written again in place, its
            // length the same, is read: a run whose status the clock tells is running again,
            // and any run may now say something else.
            let unchanged = |m: &fs::Metadata| FileStamp::from_meta(m) == kept.stamp;
            if !kept.must_read && fs::metadata(self.transcript()).is_ok_and(|m| unchanged(&m)) {
                return Ok(TailUpdate::default());
            }
            self.read_kept();
            if let (Some(_), Some((kind, why))) = (&self.kept, &self.error) {
                return Err(io::Error::new(*kind, why.clone()));
            }
        }
        let stash = self.stash.take();
        let polled = self.read();
        self.error = polled.as_ref().err().map(|e| (e.kind(), e.to_string()));
        let mut update = match polled {
            Ok(update) => update,
            Err(e) => {
                // What reading a kept run found is still news: told by the next poll.
                self.stash = stash;
                return Err(e);
            }
        };
        if let Some(mut stash) = stash {
            stash.events.append(&mut update.events);
            update.events = stash.events;
            update.reset |= stash.reset;
        }
        Ok(update)
    }

    /// Why the last poll failed (a transcript that cannot be read), if it did.
    pub fn error(&self) -> Option<&(io::ErrorKind, String)> {
        self.error.as_ref()
    }

    fn read(&mut self) -> io::Result<TailUpdate> {
        let transcript = self.transcript();
        let meta = fs::metadata(&transcript)?;
        let now = identity(&meta);
        let stamp = FileStamp::from_meta(&meta);
        let mut update = TailUpdate::default();
        let replaced = self.file.is_some_and(|f| f != now);
        if replaced || meta.len() < self.cursor.offset {
            update.reset = self.file.is_some();
            self.cursor = Cursor::default();
            // The value files are read again too: they back the retention states.
            self.analyzer = None;
        }
        self.file = Some(now);
        // (A tail not kept has its fold; one at the start of its file begins it.)
        let (values_dir, opts, rows) = (self.values_dir(), self.opts, self.rows);
        let id = &self.id;
        let analyzer =
            (self.analyzer).get_or_insert_with(|| Box::new(begin(id, &values_dir, opts, rows)));
        let outcome = read_transcript_lines(&transcript, self.cursor, |line| analyzer.line(line))?;
        self.cursor = outcome.cursor;
        self.read_stamp = read_stamp(Some(stamp), outcome.file_len);
        self.pending_bytes = outcome.pending_bytes;
        update.events = analyzer.take_events();
        analyzer.forget_details();
        update.pending_bytes = outcome.pending_bytes;
        Ok(update)
    }

    /// The run as it stands now, with the status told by the clock now: the same figures a
    /// whole read of the run gives (`analyze_run`), summary included.
    pub fn run(&self) -> Run {
        if let Some(kept) = &self.kept {
            let opts = RunOptions {
                now_ms: now_ms(),
                ..self.opts
            };
            return kept.run_at(&self.id, &opts);
        }
        let paths = RunPaths::new(&self.root, &self.id);
        let (transcript, summary) = (paths.transcript(), paths.summary());
        let mtime = fs::metadata(&transcript)
            .ok()
            .as_ref()
            .and_then(crate::model::options::modified_ms);
        let mut run = match &self.analyzer {
            Some(analyzer) => analyzer.snapshot_at(mtime, now_ms()),
            // Never read (a tail is kept until its first read): nothing folded yet.
            None => Analyzer::new(&self.id, Default::default(), self.opts, true)
                .snapshot_at(mtime, now_ms()),
        };
        let summary = is_regular_file(&summary).then_some(summary.as_path());
        let files = FileFigures {
            transcript: self.file.map(|_| transcript.as_path()),
            summary,
            transcript_bytes: self.read_stamp.len,
            pending_bytes: self.pending_bytes,
        };
        files.complete(&mut run, &self.opts);
        run
    }

    /// Counts value files that appeared after the tail started (ids of files in its value
    /// directory); a result's line finds its file either way.
    pub fn add_values(&mut self, ids: &[String]) {
        // A kept run read now lists its value directory as it is: the files are in.
        if self.kept.is_some() {
            return self.read_kept();
        }
        let values_dir = self.values_dir();
        for id in ids {
            if let Some(file) = find_value_file(&values_dir, id) {
                if let Some(analyzer) = &mut self.analyzer {
                    analyzer.add_value(file);
                }
            }
        }
    }

    /// Whether a result of the lines read so far was classified without value file `id`, which
    /// is there now: the run must be read again for that result's state. (A kept run holds no
    /// fold: it lists the files when it is read.)
    pub fn missed_value(&self, id: &str) -> bool {
        (self.analyzer.as_ref()).is_some_and(|a| a.missed_value(id))
    }

    /// Whether a value file a result was classified against has changed size since (it was
    /// being written when it was listed): the run must be read again for that result's state.
    pub fn value_resized(&self) -> bool {
        (self.analyzer.as_ref()).is_some_and(|a| a.value_resized())
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.cursor.lines
    }
}

/// What a read found its transcript to be: the stat taken `before` it, when the read saw the
/// length it says; else only that length (no inode: a stamp no stat equals, so the run is not
/// kept before it is read again).
fn read_stamp(before: Option<FileStamp>, len: u64) -> FileStamp {
    match before {
        Some(stamp) if stamp.len == len => stamp,
        _ => FileStamp {
            len,
            ..FileStamp::default()
        },
    }
}

/// Starts the fold of run `id`: its value files listed, unless the value directory is a
/// symbolic link, which is never read (as in a whole read of the run).
fn begin(id: &str, values_dir: &Path, opts: RunOptions, rows: Rows) -> Analyzer {
    let linked = is_link(values_dir);
    let values = if linked {
        Default::default()
    } else {
        list_value_files(values_dir).unwrap_or_default()
    };
    let mut analyzer = Analyzer::new(id, values, opts, true);
    analyzer.set_rows(rows);
    if linked {
        analyzer.linked_values(&value_dir_name(id));
    } else {
        analyzer.look_up_values_in(values_dir);
    }
    analyzer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_tail_builds_of_each_line_leaves_its_run_and_lines_alike() {
        let dir = tempfile::tempdir().unwrap();
        crate::demo::write_demo(dir.path(), 7, 1_700_000_000_000).unwrap();
        let root: Arc<Path> = Arc::from(dir.path());
        let mut ids: Vec<String> = (fs::read_dir(dir.path()).unwrap())
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
            .collect();
        ids.sort();
        // A line that is no JSON and an event of no known type: rows of their own too.
        let first = RunPaths::new(&root, &ids[0]).transcript();
        let mut text = fs::read_to_string(&first).unwrap();
        text.push_str("{not json\n");
        text.push_str(
            r#"{"schemaVersion":1,"runId":"x","seq":99,"ts":1,"event":{"type":"brand_new"}}"#,
        );
        text.push('\n');
        fs::write(&first, text).unwrap();
        let opts = RunOptions::default();
        for id in &ids {
            let read = |rows| {
                let mut tail = Tail::new_in(root.clone(), id, opts, rows);
                let events = tail.poll().unwrap().events;
                (serde_json::to_value(tail.run()).unwrap(), events)
            };
            let (run, whole) = read(Rows::Timeline);
            let (lines_run, lines) = read(Rows::Lines);
            let (untold_run, untold) = read(Rows::Nothing);
            assert!(whole.len() > 3, "{id}: a run of several lines");
            assert_eq!(lines_run, run, "{id}: the figures are the same");
            assert_eq!(untold_run, run, "{id}: the figures are the same");
            let places = |e: &[TimelineEvent]| -> Vec<(u64, String)> {
                e.iter().map(|e| (e.line, e.kind.clone())).collect()
            };
            assert_eq!(places(&lines), places(&whole), "{id}: a row of each line");
            if id == &ids[0] {
                let kinds = places(&lines).into_iter().rev().take(2).map(|p| p.1);
                assert_eq!(kinds.collect::<Vec<_>>(), ["brand_new", "unreadable"]);
            }
            assert!(lines.iter().all(|e| e.text.is_none() && e.input.is_none()));
            assert!(
                whole.iter().any(|e| e.text.is_some()),
                "{id}: a message's text"
            );
            assert!(untold.is_empty(), "{id}: no row");
        }
    }

    /// Sets `path`'s modification time `ago_ms` before now.
    fn written_ago(path: &Path, ago_ms: u64) {
        let at = std::time::SystemTime::now() - std::time::Duration::from_millis(ago_ms);
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_times(fs::FileTimes::new().set_modified(at))
            .unwrap();
    }

    #[test]
    fn a_settled_run_keeps_its_figures_and_reads_again_when_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let line = r#"{"schemaVersion":1,"runId":"r","seq":0,"ts":1700000000000,"event":{"type":"user_message","messageId":"u","text":"go","attachments":[]}}"#;
        fs::write(&path, format!("{line}\n")).unwrap();
        let opts = RunOptions::default();
        let hour = 60 * 60 * 1000;
        let mut tail = Tail::new(dir.path(), "r", opts);
        tail.poll().unwrap();
        assert!(!tail.settle(), "written just now: it may go on");
        written_ago(&path, hour);
        // Its times moved since it was read: it is read again before it is kept.
        assert!(!tail.settle(), "its stamp moved since the read");
        let update = tail.poll().unwrap();
        assert!(update.events.is_empty() && !update.reset, "{update:?}");
        let before = tail.run();
        assert_eq!(before.status, RunStatus::Interrupted);
        assert!(tail.settle() && tail.is_kept());
        assert!(tail.analyzer.is_none(), "no fold held");
        assert_eq!(
            serde_json::to_value(tail.run()).unwrap(),
            serde_json::to_value(&before).unwrap()
        );
        assert!(tail.poll().unwrap().events.is_empty(), "unchanged");

        // A value file came: the run is read, nothing is news, and it settles again.
        tail.add_values(&["v1".to_owned()]);
        assert!(!tail.is_kept());
        assert!(
            tail.settle(),
            "a read that found nothing new waits for nothing"
        );

        // Written again in place, its length the same: running again.
        written_ago(&path, 0);
        let update = tail.poll().unwrap();
        assert!(update.events.is_empty() && !update.reset, "no line is new");
        assert!(!tail.is_kept());
        assert_eq!(tail.run().status, RunStatus::Running);
    }

    /// Writes `text` over `path` in place, its modification time put back, until its change
    /// time moves (within one tick of the file system's clock it stays): only that tells.
    fn write_in_place(path: &Path, text: &str) {
        let was = FileStamp::of(path).unwrap();
        let modified = fs::metadata(path).unwrap().modified().unwrap();
        fs::write(path, text).unwrap();
        let file = fs::File::options().write(true).open(path).unwrap();
        let put_back = || file.set_times(fs::FileTimes::new().set_modified(modified));
        put_back().unwrap();
        while FileStamp::of(path) == Some(was) {
            std::thread::sleep(std::time::Duration::from_millis(2));
            put_back().unwrap();
        }
        let now = FileStamp::of(path).unwrap();
        assert_eq!(
            (now.len, now.mtime_ns, now.ino),
            (was.len, was.mtime_ns, was.ino)
        );
    }

    fn ask(text: &str) -> String {
        format!(
            r#"{{"schemaVersion":1,"runId":"r","seq":0,"ts":1700000000000,"event":{{"type":"user_message","messageId":"u","text":"{text}","attachments":[]}}}}"#
        )
    }

    #[test]
    fn a_settled_finished_run_written_in_place_to_its_length_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let done = r#"{"schemaVersion":1,"runId":"r","seq":1,"ts":1700000001000,"event":{"type":"run_result","runId":"r","ts":1700000001000,"result":{"status":"done"}}}"#;
        let hour = 60 * 60 * 1000;
        fs::write(&path, format!("{}\n{done}\n", ask("first ask"))).unwrap();
        written_ago(&path, hour);
        let mut tail = Tail::new(dir.path(), "r", RunOptions::default());
        tail.poll().unwrap();
        assert_eq!(tail.run().status, RunStatus::Done);
        assert!(tail.settle() && tail.is_kept());
        assert_eq!(tail.run().title, "first ask");

        // Another ask of the same length, and the file's modification time put back as it was:
        // only its change time tells of the write.
        write_in_place(&path, &format!("{}\n{done}\n", ask("other ask")));
        tail.poll().unwrap();
        assert!(!tail.is_kept(), "read again");
        assert_eq!(tail.run().title, "other ask");
        assert_eq!(tail.run().status, RunStatus::Done);
    }
}
