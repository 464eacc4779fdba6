//! Peek (spec B.4): what the `peek_value` tool returns. A request is a line range or a literal,
//! case-sensitive query; the answer is at most 400 lines and 16,384 bytes, header and footer
//! included, so a peek is never itself retained. Every header and footer line starts with `[`,
//! so none can be mistaken for a `N: ` gutter line. The layout is in `docs/peek-layout.md`.

use super::lines::{render, render_prefix, utf8_prefix, LineIndex, LineSpan};
use super::query::{scan_query, QueryHit};
use super::source::{read_range, ByteSource};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io;
use ts_rs::TS;

/// Most lines one peek returns.
pub const PEEK_MAX_LINES: u64 = 400;
/// Most bytes one peek returns, header and footer included.
pub const PEEK_MAX_BYTES: usize = 16_384;
/// A query match on a line longer than this shows a window of this size around the match.
pub(crate) const LONG_LINE: u64 = 512;
/// Room kept for the footer while lines are added.
const FOOTER_RESERVE: usize = 256;
/// Most bytes of the query echoed in the header.
const QUERY_ECHO_MAX: usize = 80;
const ELLIPSIS: &str = "…";

/// What a `peek_value` call asks for: a range of lines, or the lines that contain a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PeekRequest {
    /// Lines `start..=end`, 1-based; `end` defaults to `start + 399`.
    Range {
        /// First line wanted, 1-based.
        start: u64,
        /// Last line wanted, included (`start + 399` when absent); clipped to the last line.
        end: Option<u64>,
    },
    /// Lines containing `text`, literally and case-sensitively.
    Query {
        /// The text to find: one line, not empty.
        text: String,
    },
}

/// A peek's text and, for viewers, which lines it returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Peek {
    /// The answer exactly as the model gets it: header, `N: <text>` lines, footer.
    pub text: String,
    /// Line numbers that appear in the text, in order.
    pub lines: Vec<u64>,
    /// Total lines of the value.
    pub total_lines: u64,
    /// For a query: how many lines matched in all.
    pub matches: Option<u64>,
    /// True when the 400-line limit or the byte cap cut the answer.
    pub cut: bool,
}

/// A request that cannot be answered. Its message is what the model gets instead of a peek.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PeekError {
    /// A range starting at line 0.
    #[error("peek_value #{id}: start must be 1 or more (lines are numbered from 1)")]
    StartZero {
        /// Value id of the value peeked at.
        id: String,
    },
    /// A range starting after the value's last line.
    #[error("peek_value #{id}: start {start} is past the end: the value has {total} lines")]
    PastEnd {
        /// Value id of the value peeked at.
        id: String,
        /// First line asked for.
        start: u64,
        /// Lines the value has.
        total: u64,
    },
    /// A range whose end comes before its start.
    #[error("peek_value #{id}: start {start} is after end {end}")]
    StartAfterEnd {
        /// Value id of the value peeked at.
        id: String,
        /// First line asked for.
        start: u64,
        /// Last line asked for.
        end: u64,
    },
    /// A query for the empty text.
    #[error("peek_value #{id}: the query is empty")]
    EmptyQuery {
        /// Value id of the value peeked at.
        id: String,
    },
    /// A query holding a line break: no line could contain it.
    #[error("peek_value #{id}: a query is one line of text: it cannot contain a line break")]
    MultilineQuery {
        /// Value id of the value peeked at.
        id: String,
    },
    /// The value could not be read.
    #[error("peek_value #{id}: the value cannot be read: {message}")]
    Io {
        /// Value id of the value peeked at.
        id: String,
        /// The read error, as the system tells it.
        message: String,
    },
}

/// `peek(value, request)` of spec B.4, over any source with its line index.
pub fn peek(
    value_id: &str,
    src: &(impl ByteSource + ?Sized),
    index: &LineIndex,
    request: &PeekRequest,
) -> Result<Peek, PeekError> {
    match request {
        PeekRequest::Range { start, end } => peek_range(value_id, src, index, *start, *end),
        PeekRequest::Query { text } => peek_query(value_id, src, text),
    }
    .map_err(|e| e.or_io(|e| io_error(value_id, e)))
}

/// [`peek`] for a caller without a line index: a range builds one (a pass over the source), a
/// query needs none (its own pass counts the lines).
pub fn peek_source(
    value_id: &str,
    src: &(impl ByteSource + ?Sized),
    request: &PeekRequest,
) -> Result<Peek, PeekError> {
    match request {
        PeekRequest::Range { .. } => {
            let index = LineIndex::build(src).map_err(|e| io_error(value_id, e))?;
            peek(value_id, src, &index, request)
        }
        PeekRequest::Query { text } => {
            peek_query(value_id, src, text).map_err(|e| e.or_io(|e| io_error(value_id, e)))
        }
    }
}

fn io_error(id: &str, e: io::Error) -> PeekError {
    PeekError::Io {
        id: id.to_owned(),
        message: e.to_string(),
    }
}

/// [`peek`] over a text in memory.
pub fn peek_text(value_id: &str, text: &str, request: &PeekRequest) -> Result<Peek, PeekError> {
    peek_source(value_id, text, request)
}

enum Failure {
    Peek(PeekError),
    Io(io::Error),
}

impl Failure {
    fn or_io(self, f: impl FnOnce(io::Error) -> PeekError) -> PeekError {
        match self {
            Failure::Peek(e) => e,
            Failure::Io(e) => f(e),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

impl From<PeekError> for Failure {
    fn from(e: PeekError) -> Self {
        Failure::Peek(e)
    }
}

fn peek_range(
    id: &str,
    src: &(impl ByteSource + ?Sized),
    index: &LineIndex,
    start: u64,
    end: Option<u64>,
) -> Result<Peek, Failure> {
    let total = index.lines();
    let owned = || id.to_owned();
    if start == 0 {
        return Err(PeekError::StartZero { id: owned() }.into());
    }
    if let Some(end) = end {
        if start > end {
            return Err(PeekError::StartAfterEnd {
                id: owned(),
                start,
                end,
            }
            .into());
        }
    }
    if start > total {
        return Err(PeekError::PastEnd {
            id: owned(),
            start,
            total,
        }
        .into());
    }
    // Spec B.4: `end` defaults to `start + 399`; either way it is clipped to the last line.
    let asked_end = end.unwrap_or(start + PEEK_MAX_LINES - 1).min(total);
    let limit_end = asked_end.min(start + PEEK_MAX_LINES - 1);
    let spans = index.spans(src, start, limit_end)?;

    let mut body = String::new();
    let mut lines = Vec::new();
    // The header names the range actually returned, so it is written last.
    let header_room = format!("[peek #{id}: lines {start}-{limit_end} of {total}]\n").len();
    let budget = PEEK_MAX_BYTES - header_room - FOOTER_RESERVE;
    let mut footer = None;
    for span in &spans {
        let gutter = format!("{}: ", span.number);
        let room = budget - body.len();
        // Rendering never shrinks a text: a line whose bytes alone overflow cannot fit.
        let fits = if gutter.len() as u64 + span.len() < room as u64 {
            let line = read_range(src, span.start, span.end)?;
            let rendered = format!("{gutter}{}\n", render(&line));
            (rendered.len() <= room).then_some(rendered)
        } else {
            None
        };
        if let Some(rendered) = fits {
            body.push_str(&rendered);
            lines.push(span.number);
            continue;
        }
        if lines.is_empty() {
            // The first line alone is too long: show its start and say so.
            let keep = room - gutter.len() - ELLIPSIS.len() - 1;
            let bytes = read_range(src, span.start, span.start + keep as u64 + 4)?;
            let (text, shown) = render_prefix(&bytes, keep);
            let _ = writeln!(body, "{gutter}{text}{ELLIPSIS}");
            lines.push(span.number);
            let next = if span.number < total {
                format!("continue with start={}", span.number + 1)
            } else {
                "it is the last line".to_owned()
            };
            footer = Some(format!(
                "[cut: line {n} has {len} bytes, only its first {shown} are shown; {next}. A query finds text inside a long line]",
                n = span.number,
                len = span.len(),
            ));
        } else {
            footer = Some(format!(
                "[cut: the {PEEK_MAX_BYTES}-byte limit was reached after line {done}; continue with start={next}]",
                done = span.number - 1,
                next = span.number,
            ));
        }
        break;
    }
    let last_shown = lines.last().copied().unwrap_or(start);
    if footer.is_none() && limit_end < asked_end {
        footer = Some(format!(
            "[cut: at most {PEEK_MAX_LINES} lines per peek; continue with start={}]",
            limit_end + 1
        ));
    }
    let cut = footer.is_some();
    let mut text = if last_shown == start {
        format!("[peek #{id}: line {start} of {total}]\n")
    } else {
        format!("[peek #{id}: lines {start}-{last_shown} of {total}]\n")
    };
    text.push_str(&body);
    if let Some(f) = footer {
        text.push_str(&f);
        text.push('\n');
    }
    Ok(Peek {
        text,
        lines,
        total_lines: total,
        matches: None,
        cut,
    })
}

fn peek_query(id: &str, src: &(impl ByteSource + ?Sized), query: &str) -> Result<Peek, Failure> {
    if query.is_empty() {
        return Err(PeekError::EmptyQuery { id: id.to_owned() }.into());
    }
    if query.contains('\n') {
        return Err(PeekError::MultilineQuery { id: id.to_owned() }.into());
    }
    // One more hit than can be shown tells where the next match is when the answer is cut.
    let scan = scan_query(src, query.as_bytes(), PEEK_MAX_LINES as usize + 1)?;
    let total = scan.lines;
    let echo = echo_query(query);
    let header = if scan.matching_lines == 0 {
        format!("[peek #{id}: no line contains {echo} ({total} lines searched)]\n")
    } else {
        format!(
            "[peek #{id}: {m} of {total} lines contain {echo}]\n",
            m = scan.matching_lines
        )
    };
    let budget = PEEK_MAX_BYTES - header.len() - FOOTER_RESERVE;
    let mut body = String::new();
    let mut lines = Vec::new();
    let mut stopped_at: Option<usize> = None;
    for (i, hit) in scan.hits.iter().enumerate() {
        if i as u64 == PEEK_MAX_LINES {
            stopped_at = Some(i);
            break;
        }
        let rendered = render_hit(src, hit, query.len() as u64)?;
        if body.len() + rendered.len() > budget {
            stopped_at = Some(i);
            break;
        }
        body.push_str(&rendered);
        lines.push(hit.span.number);
    }
    let mut text = header;
    text.push_str(&body);
    if let Some(i) = stopped_at {
        let why = if i as u64 == PEEK_MAX_LINES {
            format!("at most {PEEK_MAX_LINES} lines per peek")
        } else {
            format!("the {PEEK_MAX_BYTES}-byte limit was reached")
        };
        let _ = writeln!(
            text,
            "[cut: {why}; {shown} of {m} matching lines shown. The next match is on line {next}: continue with start={next}, or a narrower query]",
            shown = lines.len(),
            m = scan.matching_lines,
            next = scan.hits[i].span.number,
        );
    }
    Ok(Peek {
        text,
        lines,
        total_lines: total,
        matches: Some(scan.matching_lines),
        cut: stopped_at.is_some(),
    })
}

/// The [`LONG_LINE`] bytes of line `start..end` shown around a match at `first_match` of
/// `match_len` bytes: the match centred, then the window slid back inside the line. A query
/// peek and a search cut a long line the same way.
pub(crate) fn hit_window(start: u64, end: u64, first_match: u64, match_len: u64) -> (u64, u64) {
    let around = LONG_LINE.saturating_sub(match_len) / 2;
    let from = first_match.saturating_sub(around).max(start);
    let to = (from + LONG_LINE).min(end);
    (to.saturating_sub(LONG_LINE).max(start), to)
}

/// One matching line: whole when short, else a window of [`LONG_LINE`] bytes around the first
/// match, with `…` where it was cut and a note of which bytes are shown.
fn render_hit(
    src: &(impl ByteSource + ?Sized),
    hit: &QueryHit,
    query_len: u64,
) -> io::Result<String> {
    let span: LineSpan = hit.span;
    let gutter = format!("{}: ", span.number);
    if span.len() <= LONG_LINE {
        let line = read_range(src, span.start, span.end)?;
        return Ok(format!("{gutter}{}\n", render(&line)));
    }
    let (from, to) = hit_window(span.start, span.end, hit.first_match, query_len);
    // Read a few bytes past the window so that a character it cuts can be left out whole.
    let raw = read_range(src, from, (to + 4).min(span.end))?;
    let skip = if from > span.start {
        raw.iter()
            .take(3)
            .take_while(|&&b| (b & 0xC0) == 0x80)
            .count()
    } else {
        0
    };
    let (text, shown) = render_prefix(&raw[skip..], ((to - from) as usize).saturating_sub(skip));
    let a = from + skip as u64;
    let b = a + shown as u64;
    let lead = if a > span.start { ELLIPSIS } else { "" };
    let trail = if b < span.end { ELLIPSIS } else { "" };
    Ok(format!(
        "{gutter}{lead}{text}{trail} [cut: bytes {first}-{last} of {len}]\n",
        first = a - span.start + 1,
        last = b - span.start,
        len = span.len(),
    ))
}

/// The query as shown in a header: JSON-quoted (so it cannot break the line), at most
/// [`QUERY_ECHO_MAX`] bytes of it.
fn echo_query(query: &str) -> String {
    let shown = utf8_prefix(query.as_bytes(), QUERY_ECHO_MAX);
    let shown = std::str::from_utf8(shown).unwrap_or("");
    let quoted = serde_json::to_string(shown).unwrap_or_default();
    if shown.len() < query.len() {
        format!("{quoted}{ELLIPSIS}")
    } else {
        quoted
    }
}
