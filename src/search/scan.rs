//! What every part of a search shares: the compiled pattern, the hit budget (`--max`), the
//! cancel flag and the figures of the summary; and the one way a text is searched, whether it
//! is a value file, a string of a transcript line in memory, or one streamed from a line too
//! long to hold.

use super::hit::{HitKind, LineHit, Origin, SearchHit};
use super::matcher::Matcher;
use crate::retained::peek::hit_window;
use crate::retained::query::scan_query;
use crate::retained::source::read_range;
use crate::retained::FileSource;
use grep_matcher::LineTerminator;
use grep_searcher::{Searcher, SearcherBuilder, Sink, SinkMatch};
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// The longest line a text search holds in memory. A file with a longer line is scanned again
/// by the query peek's own scan (one buffer, whatever the line) when the pattern is a
/// case-sensitive literal; else it is skipped with a note in the summary.
pub(crate) const LINE_LIMIT: usize = 64 << 20;

/// Hits handed on together: a file's hits go out when it is done, or every this many.
const BATCH: usize = 256;

/// A file (or line) the search could not read, said in the summary.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// The file's path (or the run's, or a directory's).
    pub path: String,
    /// Why it could not be searched.
    pub reason: String,
}

pub(crate) struct Ctx<'a> {
    pub matcher: Matcher,
    max: u64,
    taken: AtomicU64,
    truncated: AtomicBool,
    cancel: &'a AtomicBool,
    pub files: AtomicU64,
    pub bytes: AtomicU64,
    pub skipped: Mutex<Vec<Skipped>>,
    emit: &'a (dyn Fn(Vec<SearchHit>) + Sync),
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        matcher: Matcher,
        max: Option<u64>,
        cancel: &'a AtomicBool,
        emit: &'a (dyn Fn(Vec<SearchHit>) + Sync),
    ) -> Self {
        Self {
            matcher,
            max: max.unwrap_or(u64::MAX),
            taken: AtomicU64::new(0),
            truncated: AtomicBool::new(false),
            cancel,
            files: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            skipped: Mutex::new(Vec::new()),
            emit,
        }
    }

    /// Whether the search is over: cancelled, or `--max` hits taken.
    pub(crate) fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.truncated.load(Ordering::Relaxed)
    }

    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    pub(crate) fn truncated(&self) -> bool {
        self.truncated.load(Ordering::Relaxed)
    }

    pub(crate) fn hits(&self) -> u64 {
        self.taken.load(Ordering::Relaxed).min(self.max)
    }

    /// Takes one hit from the budget; `false` when it is spent (the search is then cut).
    fn take(&self) -> bool {
        if self.cancelled() {
            return false;
        }
        if self.taken.fetch_add(1, Ordering::Relaxed) < self.max {
            return true;
        }
        self.truncated.store(true, Ordering::Relaxed);
        false
    }

    pub(crate) fn skip(&self, path: &Path, reason: impl Into<String>) {
        let note = Skipped {
            path: path.display().to_string(),
            reason: reason.into(),
        };
        self.skipped.lock().expect("skipped lock").push(note);
    }

    pub(crate) fn searched(&self, bytes: u64) {
        self.files.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn emit(&self, hits: Vec<SearchHit>) {
        if !hits.is_empty() {
            (self.emit)(hits);
        }
    }

    /// Hits of a transcript, charged to the budget as they are handed on: those beyond it are
    /// dropped and the search is cut.
    pub(crate) fn emit_charged(&self, mut hits: Vec<SearchHit>) {
        if let Some(over) = hits.iter().position(|_| !self.take()) {
            hits.truncate(over);
        }
        self.emit(hits);
    }

    /// Hits the budget has room for now (collecting more than that is wasted work).
    fn room(&self) -> u64 {
        self.max.saturating_sub(self.taken.load(Ordering::Relaxed))
    }

    fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            // Bytes as they are: a binary file starting `FF FE` is not UTF-16 text here.
            .bom_sniffing(false)
            .line_number(true)
            .line_terminator(LineTerminator::crlf())
            .heap_limit(Some(LINE_LIMIT))
            .build()
    }

    /// The matching lines of `text` (already in memory), not yet charged to the budget (a
    /// transcript's hits are charged when their event is known: [`Ctx::emit_charged`]).
    pub(crate) fn search_slice(&self, text: &[u8]) -> Vec<LineHit> {
        let mut sink = Lines::collecting(self);
        // Searching memory fails only when the sink stops it.
        let _ = self
            .searcher()
            .search_slice(&self.matcher.inner, text, &mut sink);
        sink.hits
    }

    /// The matching lines of a text streamed from `reader`, not yet charged to the budget. It
    /// may stop before the end of the text (cancelled, or enough hits).
    pub(crate) fn search_reader(&self, reader: impl Read) -> io::Result<Vec<LineHit>> {
        let mut sink = Lines::collecting(self);
        self.searcher()
            .search_reader(&self.matcher.inner, reader, &mut sink)?;
        Ok(sink.hits)
    }

    /// Every matching line of file `path`, handed on in batches as `kind` hits of `origin`
    /// (after `finish` has had its say on each batch). Returns how many there were.
    pub(crate) fn search_file(
        &self,
        path: &Path,
        origin: &Origin,
        kind: HitKind,
        finish: &mut dyn FnMut(&mut [SearchHit]),
    ) -> io::Result<u64> {
        let mut flush = |lines: Vec<LineHit>| {
            let mut hits: Vec<SearchHit> = (lines.into_iter())
                .map(|l| l.into_hit(origin, kind, 0))
                .collect();
            finish(&mut hits);
            self.emit(hits);
        };
        // A value a bucket's mirror holds by its ends is read through its source (the middle
        // from the bucket); every other file straight from the disk.
        let src = FileSource::open_no_follow(path)?;
        let mut sink = Lines::new(self, Some(&mut flush));
        let outcome = match src.local_file() {
            Some(file) => self
                .searcher()
                .search_file(&self.matcher.inner, file, &mut sink),
            None => self
                .searcher()
                .search_reader(&self.matcher.inner, src.reader(), &mut sink),
        };
        let (found, last) = (sink.found, sink.last);
        let rest = std::mem::take(&mut sink.hits);
        drop(sink);
        flush(rest);
        match outcome {
            Err(e) if too_long(&e) && self.matcher.literal.is_some() => {
                let more = self.long_lines(src, found, last)?;
                let n = more.len() as u64;
                flush(more);
                Ok(found + n)
            }
            other => other.map(|()| found),
        }
    }

    /// The hits after line `last` of a file with a line too long to hold, found by the query
    /// peek's scan (the pattern is a case-sensitive literal), each read back as its cut only.
    fn long_lines(&self, src: FileSource, found: u64, last: u64) -> io::Result<Vec<LineHit>> {
        let Some(needle) = self.matcher.literal.as_deref() else {
            return Ok(Vec::new());
        };
        let left = self.max.saturating_sub(self.taken.load(Ordering::Relaxed));
        let keep =
            usize::try_from(found.saturating_add(left).saturating_add(1)).unwrap_or(usize::MAX);
        let scan = scan_query(&src, needle, keep)?;
        let mut out = Vec::new();
        for hit in scan.hits.iter().filter(|h| h.span.number > last) {
            if !self.take() {
                break;
            }
            let span = hit.span;
            let (from, to) = hit_window(span.start, span.end, hit.first_match, needle.len() as u64);
            // A few bytes more each side, for the cut to end on whole characters.
            let (a, b) = (
                from.saturating_sub(4).max(span.start),
                (to + 4).min(span.end),
            );
            let window = read_range(&src, a, b)?;
            let m0 = (hit.first_match - a) as usize;
            let m1 = (m0 + needle.len()).min(window.len());
            out.push(LineHit::cut(
                span.number,
                &window,
                a - span.start,
                span.len(),
                m0,
                m1,
            ));
        }
        Ok(out)
    }
}

/// Whether a searcher stopped at a line longer than [`LINE_LIMIT`].
pub(crate) fn too_long(e: &io::Error) -> bool {
    e.to_string().contains("allocation limit")
}

/// A searcher's sink: each matching line made a hit while the budget lasts.
struct Lines<'c, 'f> {
    ctx: &'c Ctx<'c>,
    /// Hits are collected, not charged (up to the room the budget has).
    collect: bool,
    hits: Vec<LineHit>,
    found: u64,
    /// The number of the last line taken.
    last: u64,
    flush: Option<&'f mut dyn FnMut(Vec<LineHit>)>,
}

impl<'c, 'f> Lines<'c, 'f> {
    fn new(ctx: &'c Ctx<'c>, flush: Option<&'f mut dyn FnMut(Vec<LineHit>)>) -> Self {
        Self {
            ctx,
            collect: false,
            hits: Vec::new(),
            found: 0,
            last: 0,
            flush,
        }
    }
}

impl<'c> Lines<'c, '_> {
    fn collecting(ctx: &'c Ctx<'c>) -> Self {
        Self {
            collect: true,
            ..Self::new(ctx, None)
        }
    }
}

impl Sink for Lines<'_, '_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let number = m.line_number().unwrap_or(0);
        let Some(hit) = LineHit::of(&self.ctx.matcher, number, m.bytes()) else {
            return Ok(!self.ctx.stopped());
        };
        if self.collect {
            if self.ctx.stopped() || self.found >= self.ctx.room() {
                return Ok(false);
            }
        } else if !self.ctx.take() {
            return Ok(false);
        }
        self.last = hit.number;
        self.hits.push(hit);
        self.found += 1;
        if self.hits.len() >= BATCH {
            if let Some(flush) = self.flush.as_mut() {
                flush(std::mem::take(&mut self.hits));
            }
        }
        Ok(true)
    }
}
