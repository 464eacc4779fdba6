//! Incremental tailing of one transcript: remember the offset of the last complete line and read
//! only what was appended. A torn last line waits for its newline; a transcript that shrinks or
//! is replaced (another file under the same name) is read again from the start.

use crate::runs::analyze::{Analyzer, FileFigures};
use crate::runs::layout::{is_link, is_regular_file, RunPaths};
use crate::runs::values::{find_value_file, list_value_files};
use crate::runs::{now_ms, Run, RunOptions, TimelineEvent};
use crate::transcript::{read_lines, Cursor};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

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
    /// read again from the start; `events` then holds the whole timeline.
    pub reset: bool,
    /// The new events (timeline entries, unreadable lines included), in file order.
    pub events: Vec<TimelineEvent>,
    /// Bytes of a torn last line still waiting for its newline.
    pub pending_bytes: u64,
}

/// A transcript being followed, with its run model kept up to date from the new lines alone.
pub struct Tail {
    id: String,
    transcript: PathBuf,
    summary: PathBuf,
    values_dir: PathBuf,
    opts: RunOptions,
    cursor: Cursor,
    file: Option<Identity>,
    file_len: u64,
    pending_bytes: u64,
    analyzer: Analyzer,
    error: Option<(io::ErrorKind, String)>,
}

impl Tail {
    pub fn new(root: &Path, id: &str, opts: RunOptions) -> Self {
        let paths = RunPaths::new(root, id);
        let values_dir = paths.value_dir();
        Self {
            id: id.to_owned(),
            transcript: paths.transcript(),
            summary: paths.summary(),
            analyzer: begin(id, &values_dir, opts),
            values_dir,
            opts,
            cursor: Cursor::default(),
            file: None,
            file_len: 0,
            pending_bytes: 0,
            error: None,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// Reads what was appended since the last poll.
    pub fn poll(&mut self) -> io::Result<TailUpdate> {
        let polled = self.read();
        self.error = polled.as_ref().err().map(|e| (e.kind(), e.to_string()));
        polled
    }

    /// Why the last poll failed (a transcript that cannot be read), if it did.
    pub fn error(&self) -> Option<&(io::ErrorKind, String)> {
        self.error.as_ref()
    }

    fn read(&mut self) -> io::Result<TailUpdate> {
        let meta = fs::metadata(&self.transcript)?;
        let now = identity(&meta);
        let mut update = TailUpdate::default();
        let replaced = self.file.is_some_and(|f| f != now);
        if replaced || meta.len() < self.cursor.offset {
            update.reset = self.file.is_some();
            self.cursor = Cursor::default();
            // The value files are read again too: they back the retention states.
            self.analyzer = begin(&self.id, &self.values_dir, self.opts);
        }
        self.file = Some(now);
        let analyzer = &mut self.analyzer;
        let outcome = read_lines(&self.transcript, self.cursor, |line| analyzer.line(line))?;
        self.cursor = outcome.cursor;
        self.file_len = outcome.file_len;
        self.pending_bytes = outcome.pending_bytes;
        update.events = self.analyzer.take_events();
        self.analyzer.forget_details();
        update.pending_bytes = outcome.pending_bytes;
        Ok(update)
    }

    /// The run as it stands now, with the status told by the clock now: the same figures a
    /// whole read of the run gives (`analyze_run`), summary included.
    pub fn run(&self) -> Run {
        let mtime = fs::metadata(&self.transcript)
            .ok()
            .as_ref()
            .and_then(crate::runs::options::modified_ms);
        let mut run = self.analyzer.snapshot_at(mtime, now_ms());
        let summary = is_regular_file(&self.summary).then_some(self.summary.as_path());
        let files = FileFigures {
            transcript: self.file.map(|_| self.transcript.as_path()),
            summary,
            transcript_bytes: self.file_len,
            pending_bytes: self.pending_bytes,
        };
        files.complete(&mut run, &self.opts);
        run
    }

    /// Counts value files that appeared after the tail started (ids of files in its value
    /// directory); a result's line finds its file either way.
    pub fn add_values(&mut self, ids: &[String]) {
        for id in ids {
            if let Some(file) = find_value_file(&self.values_dir, id) {
                self.analyzer.add_value(file);
            }
        }
    }

    /// Whether a result of the lines read so far was classified without value file `id`, which
    /// is there now: the run must be read again for that result's state.
    pub fn missed_value(&self, id: &str) -> bool {
        self.analyzer.missed_value(id)
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.cursor.lines
    }
}

/// Starts the fold of run `id`: its value files listed, unless the value directory is a
/// symbolic link, which is never read (as in a whole read of the run).
fn begin(id: &str, values_dir: &Path, opts: RunOptions) -> Analyzer {
    let linked = is_link(values_dir);
    let values = if linked {
        Default::default()
    } else {
        list_value_files(values_dir).unwrap_or_default()
    };
    let mut analyzer = Analyzer::new(id, values, opts, true);
    if linked {
        analyzer.linked_values();
    } else {
        analyzer.look_up_values_in(values_dir);
    }
    analyzer
}
