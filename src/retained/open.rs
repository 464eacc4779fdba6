//! An open value: the full text of one tool result, ready to be paged line by line. A viewer
//! keeps it open while the user scrolls, so its line index is built once; the text itself stays
//! on disk (a value file) and is read one page at a time.

use super::lines::{utf8_prefix, LineIndex};
use super::source::{read_range, ByteSource, FileSource};
use super::span::SpanSource;
use serde::Serialize;
use std::io;
use std::sync::Arc;
use ts_rs::TS;

/// Where the full text comes from.
pub enum ValueText {
    /// The value file, as the harness's `peek_value` reads it.
    File(FileSource),
    /// The result's `content` from the transcript (no value file, or a damaged one).
    Memory(Arc<String>),
    /// The same, when the transcript's line was too long to hold: the string is read again
    /// from the transcript, in slices, as it is asked for.
    Span(Arc<SpanSource>),
}

impl ValueText {
    /// Its line index: built by one pass, or the one counted when a span was read.
    pub fn line_index(&self) -> io::Result<LineIndex> {
        match self {
            ValueText::Span(s) => Ok(s.span().index().clone()),
            ValueText::File(f) => match f.known_index() {
                Some(index) => Ok(index),
                None => LineIndex::build(f),
            },
            other => LineIndex::build(other),
        }
    }

    /// Writes the whole text to `out`, a chunk at a time.
    pub fn write_to(&self, out: &mut impl io::Write) -> io::Result<()> {
        let mut failed = None;
        super::source::scan_chunks(self, 0, |_, chunk| match out.write_all(chunk) {
            Ok(()) => std::ops::ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                std::ops::ControlFlow::Break(())
            }
        })?;
        failed.map_or(Ok(()), Err)
    }

    /// The text as a reader, from its start.
    pub fn reader(&self) -> impl io::Read + '_ {
        super::source::SourceReader::new(self)
    }

    /// Bytes `start..end` of the text (clipped to it).
    pub fn read_range(&self, start: u64, end: u64) -> io::Result<Vec<u8>> {
        read_range(self, start, end)
    }

    /// The whole text in memory, for a caller that has checked its size first.
    pub fn into_string(self) -> io::Result<String> {
        match self {
            ValueText::Memory(s) => Ok(Arc::unwrap_or_clone(s)),
            other => Ok(String::from_utf8_lossy(&read_range(&other, 0, other.len())?).into_owned()),
        }
    }
}

impl ByteSource for ValueText {
    fn len(&self) -> u64 {
        match self {
            ValueText::File(f) => f.len(),
            ValueText::Memory(s) => s.as_str().len() as u64,
            ValueText::Span(s) => s.len(),
        }
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ValueText::File(f) => f.read_at(offset, buf),
            ValueText::Memory(s) => s.as_bytes().read_at(offset, buf),
            ValueText::Span(s) => s.read_at(offset, buf),
        }
    }
}

/// One line of a page; a very long line is shortened to [`PAGE_LINE_MAX`] bytes for display.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PageLine {
    /// Line number, 1-based.
    #[ts(type = "number")]
    pub n: u64,
    /// The line without its ending, at most [`PAGE_LINE_MAX`] bytes of it (bad UTF-8 as U+FFFD).
    pub text: String,
    /// The line's full size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// True when `text` is only the start of the line.
    pub cut: bool,
}

/// A page of a full text: consecutive lines with their true numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LinesPage {
    /// Number of the page's first line, 1-based.
    #[ts(type = "number")]
    pub first: u64,
    /// Lines in the whole text.
    #[ts(type = "number")]
    pub total: u64,
    /// The page's lines, in order; empty past the end of the text.
    pub lines: Vec<PageLine>,
}

/// Bytes of a line shown in a page; the rest is reachable through a peek.
pub const PAGE_LINE_MAX: usize = 4096;
/// Most lines in one page.
pub const PAGE_MAX_LINES: u64 = 2000;

/// A full text with its line index.
pub struct OpenValue {
    /// The full text.
    pub text: ValueText,
    /// Its line index, built once when the value is opened.
    pub index: LineIndex,
}

impl OpenValue {
    /// Opens `text`: one pass over it builds its line index.
    pub fn new(text: ValueText) -> io::Result<Self> {
        let index = text.line_index()?;
        Ok(Self { text, index })
    }

    /// Lines `first..first + count` (1-based), at most [`PAGE_MAX_LINES`].
    pub fn page(&self, first: u64, count: u64) -> io::Result<LinesPage> {
        let first = first.max(1);
        let last = first
            .saturating_add(count.min(PAGE_MAX_LINES))
            .saturating_sub(1);
        let spans = self.index.spans(&self.text, first, last)?;
        let mut lines = Vec::with_capacity(spans.len());
        for span in spans {
            let take = span.len().min(PAGE_LINE_MAX as u64 + 4);
            let raw = read_range(&self.text, span.start, span.start + take)?;
            let cut = span.len() > PAGE_LINE_MAX as u64;
            let shown = if cut {
                utf8_prefix(&raw, PAGE_LINE_MAX)
            } else {
                &raw[..]
            };
            lines.push(PageLine {
                n: span.number,
                text: String::from_utf8_lossy(shown).into_owned(),
                bytes: span.len(),
                cut,
            });
        }
        Ok(LinesPage {
            first,
            total: self.index.lines(),
            lines,
        })
    }

    /// The text of lines `first..=last` joined by `\n`, for copying; at most `max_bytes`.
    pub fn text_of(&self, first: u64, last: u64, max_bytes: u64) -> io::Result<String> {
        let spans = self.index.spans(&self.text, first.max(1), last)?;
        let (Some(a), Some(b)) = (spans.first(), spans.last()) else {
            return Ok(String::new());
        };
        let end = b.end.min(a.start.saturating_add(max_bytes));
        let raw = read_range(&self.text, a.start, end)?;
        // Drop the `\r` of CRLF line ends, as the line model does.
        Ok(String::from_utf8_lossy(&raw).replace("\r\n", "\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_carry_true_line_numbers_and_cut_long_lines() {
        let text = format!("a\r\n{}\nc\n", "é".repeat(3000));
        let v = OpenValue::new(ValueText::Memory(Arc::new(text))).unwrap();
        let page = v.page(1, 10).unwrap();
        assert_eq!(page.total, 3);
        assert_eq!(
            page.lines[0],
            PageLine {
                n: 1,
                text: "a".into(),
                bytes: 1,
                cut: false
            }
        );
        assert!(
            page.lines[1].cut
                && page.lines[1].text.len() == PAGE_LINE_MAX
                && page.lines[1].bytes == 6000
        );
        assert_eq!(v.page(3, 10).unwrap().lines.len(), 1);
        assert_eq!(v.text_of(1, 1, 100).unwrap(), "a");
        assert_eq!(v.text_of(3, 3, 100).unwrap(), "c");
    }
}
