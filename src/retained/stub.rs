//! The stub (spec B.3): what the model sees in place of a retained result. A pure function of
//! (value id, tool name, full text): the same bytes whether a run is live or replayed. The exact
//! layout is documented in `docs/stub-layout.md` and pinned by golden tests; changing it is a
//! format change.

use super::lines::{render, render_prefix, render_suffix, utf8_prefix, LineIndex, LineSpan};
use super::source::{read_range, ByteSource};
use serde::Serialize;
use std::fmt::Write as _;
use std::io;
use ts_rs::TS;

/// Hard upper bound of a stub, in bytes.
pub const STUB_MAX: usize = 3072;
/// Budget of each preview (head, tail): gutters, text, cut marks and newlines included.
pub(crate) const PREVIEW_BUDGET: usize = 1024;
/// The tool name is untrusted text; at most this many bytes of it are shown.
const TOOL_NAME_MAX: usize = 64;
/// Each preview line takes at least 4 bytes (`1: ` and a newline), so no preview can hold more.
const PREVIEW_MAX_LINES: u64 = (PREVIEW_BUDGET / 4) as u64;
const ELLIPSIS: &str = "…";

/// A stub and where its previews come from, so a viewer can highlight those lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Stub {
    /// The stub's text, as the model got it in place of the full text.
    pub text: String,
    /// Lines shown in the head preview, inclusive; `None` for an empty text.
    pub head: Option<(u64, u64)>,
    /// Lines shown in the tail preview, inclusive; `None` when the head shows everything.
    pub tail: Option<(u64, u64)>,
}

/// `stub_for(value_id, tool_name, content)` of spec B.3, for a text in memory.
pub fn stub_for(value_id: &str, tool_name: &str, content: &str) -> String {
    stub_layout(value_id, tool_name, content).text
}

/// [`stub_for`] with its preview line ranges.
pub fn stub_layout(value_id: &str, tool_name: &str, content: &str) -> Stub {
    let index = LineIndex::build(content).expect("reading memory cannot fail");
    stub_from_source(value_id, tool_name, content, &index).expect("reading memory cannot fail")
}

/// The same stub computed from any source (a value file), reading only the previewed lines.
pub fn stub_from_source(
    value_id: &str,
    tool_name: &str,
    src: &(impl ByteSource + ?Sized),
    index: &LineIndex,
) -> io::Result<Stub> {
    // The index describes the source as it was when indexed; a value file cut short since then
    // would leave it pointing at bytes that are gone.
    if src.len() != index.bytes() {
        return Err(changed_since_indexed(format!(
            "{} bytes now, {} when indexed",
            src.len(),
            index.bytes()
        )));
    }
    let total = index.lines();
    let mut text = String::with_capacity(STUB_MAX);
    let _ = writeln!(
        text,
        "[retained #{value_id}] {tool} output: {bytes} bytes, {total} {lines}. Kept out of context; head and tail below.",
        tool = display_tool_name(tool_name),
        bytes = index.bytes(),
        lines = plural(total, "line", "lines"),
    );
    let _ = writeln!(
        text,
        "Read more with peek_value: {{\"id\":\"{value_id}\",\"start\":N,\"end\":M}} for lines N-M (at most 400 per call), or {{\"id\":\"{value_id}\",\"query\":\"text\"}} for the lines containing a text."
    );
    if total == 0 {
        text.push_str("--- empty ---\n");
        return Ok(Stub {
            text,
            head: None,
            tail: None,
        });
    }

    let head_spans = spans_exact(src, index, 1, PREVIEW_MAX_LINES)?;
    let head = Preview::head(src, &head_spans)?;
    let head_last = head.last;
    let head_whole = head.cut.is_none();
    text.push_str(&head.title(total, "head"));
    text.push_str(&head.body);

    // The tail shows what the head did not: lines after the head's last, or the end of the
    // head's last line when the head had to cut it.
    let tail = if head_last < total || !head_whole {
        let first = total.saturating_sub(PREVIEW_MAX_LINES - 1).max(head_last);
        let mut spans = spans_exact(src, index, first, total)?;
        if head_whole {
            spans.retain(|s| s.number > head_last);
        }
        Preview::tail(src, &spans)?
    } else {
        None
    };
    let tail_range = tail.as_ref().map(|t| (t.first, t.last));
    if let Some(t) = &tail {
        if t.first > head_last + 1 {
            let _ = writeln!(
                text,
                "--- lines {}-{} not shown ---",
                head_last + 1,
                t.first - 1
            );
        }
        text.push_str(&t.title(total, "tail"));
        text.push_str(&t.body);
    }
    text.push_str("--- end of preview ---\n");
    debug_assert!(text.len() <= STUB_MAX, "stub of {} bytes", text.len());
    Ok(Stub {
        text,
        head: Some((1, head_last)),
        tail: tail_range,
    })
}

struct Preview {
    first: u64,
    last: u64,
    body: String,
    /// For a single line cut to fit: (bytes shown, line bytes).
    cut: Option<(usize, u64)>,
}

impl Preview {
    /// First lines while they fit; the first line alone is cut to its start if it must be.
    fn head(src: &(impl ByteSource + ?Sized), spans: &[LineSpan]) -> io::Result<Self> {
        let Some(&first) = spans.first() else {
            return Err(changed_since_indexed("its first line is gone".into()));
        };
        let mut body = String::new();
        let mut last = first.number;
        for span in spans {
            let room = PREVIEW_BUDGET - body.len();
            if let Some(line) = whole_line(src, span, room)? {
                body.push_str(&line);
                last = span.number;
                continue;
            }
            if span.number == first.number {
                let gutter = format!("{}: ", span.number);
                let keep = room - gutter.len() - ELLIPSIS.len() - 1;
                let end = (span.start + keep as u64 + 4).min(span.end);
                let bytes = read_exact(src, span.start, end)?;
                let (text, shown) = render_prefix(&bytes, keep);
                let _ = writeln!(body, "{gutter}{text}{ELLIPSIS}");
                return Ok(Self {
                    first: 1,
                    last,
                    body,
                    cut: Some((shown, span.len())),
                });
            }
            break;
        }
        Ok(Self {
            first: first.number,
            last,
            body,
            cut: None,
        })
    }

    /// Last lines while they fit; the last line alone is cut to its end if it must be.
    fn tail(src: &(impl ByteSource + ?Sized), spans: &[LineSpan]) -> io::Result<Option<Self>> {
        let Some(&final_span) = spans.last() else {
            return Ok(None);
        };
        let mut lines: Vec<String> = Vec::new();
        let mut used = 0usize;
        let mut first = final_span.number;
        for span in spans.iter().rev() {
            let room = PREVIEW_BUDGET - used;
            if let Some(line) = whole_line(src, span, room)? {
                used += line.len();
                lines.push(line);
                first = span.number;
                continue;
            }
            if span.number == final_span.number {
                let gutter = format!("{}: ", span.number);
                let keep = room - gutter.len() - ELLIPSIS.len() - 1;
                let from = span.end.saturating_sub(keep as u64 + 4).max(span.start);
                let bytes = read_exact(src, from, span.end)?;
                let (text, shown) = render_suffix(&bytes, keep);
                let body = format!("{gutter}{ELLIPSIS}{text}\n");
                let n = span.number;
                return Ok(Some(Self {
                    first: n,
                    last: n,
                    body,
                    cut: Some((shown, span.len())),
                }));
            }
            break;
        }
        lines.reverse();
        Ok(Some(Self {
            first,
            last: final_span.number,
            body: lines.concat(),
            cut: None,
        }))
    }

    fn title(&self, total: u64, which: &str) -> String {
        match self.cut {
            Some((shown, of)) => {
                let part = if which == "head" { "first" } else { "last" };
                format!("--- {which}: line {} of {total}, cut to its {part} {shown} of {of} bytes ---\n", self.first)
            }
            None if self.first == self.last => {
                format!("--- {which}: line {} of {total} ---\n", self.first)
            }
            None => format!(
                "--- {which}: lines {}-{} of {total} ---\n",
                self.first, self.last
            ),
        }
    }
}

/// The line as `N: text` and a newline, if that fits in `room` bytes.
fn whole_line(
    src: &(impl ByteSource + ?Sized),
    span: &LineSpan,
    room: usize,
) -> io::Result<Option<String>> {
    let gutter = format!("{}: ", span.number);
    // Rendering never shrinks a text: a line whose bytes alone overflow cannot fit.
    if gutter.len() as u64 + span.len() + 1 > room as u64 {
        return Ok(None);
    }
    let line = read_exact(src, span.start, span.end)?;
    let rendered = format!("{gutter}{}\n", render(&line));
    Ok((rendered.len() <= room).then_some(rendered))
}

/// Spans of lines `first..=last` (clipped to the index's last line), all of them: a source that
/// ends before the index says it does yields fewer, and that is an error, not a shorter stub.
fn spans_exact(
    src: &(impl ByteSource + ?Sized),
    index: &LineIndex,
    first: u64,
    last: u64,
) -> io::Result<Vec<LineSpan>> {
    let spans = index.spans(src, first, last)?;
    let want = last
        .min(index.lines())
        .saturating_sub(first.saturating_sub(1));
    if spans.len() as u64 != want {
        return Err(changed_since_indexed(format!(
            "{} of lines {first}-{} could be read",
            spans.len(),
            last.min(index.lines())
        )));
    }
    Ok(spans)
}

/// Bytes `start..end` of `src`, all of them: a short read means the source shrank.
fn read_exact(src: &(impl ByteSource + ?Sized), start: u64, end: u64) -> io::Result<Vec<u8>> {
    let bytes = read_range(src, start, end)?;
    if bytes.len() as u64 != end.saturating_sub(start) {
        return Err(changed_since_indexed(format!(
            "bytes {start}-{end} read back {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes)
}

fn changed_since_indexed(detail: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the value changed since it was indexed (truncated or replaced?): {detail}"),
    )
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// The tool name as shown: control characters replaced, at most [`TOOL_NAME_MAX`] bytes.
fn display_tool_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let clean = if clean.is_empty() {
        "tool".to_owned()
    } else {
        clean
    };
    if clean.len() <= TOOL_NAME_MAX {
        return clean;
    }
    let cut = utf8_prefix(clean.as_bytes(), TOOL_NAME_MAX - ELLIPSIS.len());
    format!("{}{ELLIPSIS}", String::from_utf8_lossy(cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retained::FileSource;

    /// A source that says it is as long as `len` but holds only `bytes`: a file cut short after
    /// it was opened (its length is taken at open time).
    struct CutShort<'a> {
        bytes: &'a [u8],
        len: u64,
    }

    impl ByteSource for CutShort<'_> {
        fn len(&self) -> u64 {
            self.len
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            self.bytes.read_at(offset, buf)
        }
    }

    fn text() -> String {
        (1..=2000).map(|i| format!("line {i}\n")).collect()
    }

    fn assert_changed(r: io::Result<Stub>) {
        let e = r.expect_err("a source cut short is an error");
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{e}");
        assert!(
            e.to_string().contains("changed since it was indexed"),
            "{e}"
        );
    }

    #[test]
    fn a_source_shorter_than_its_index_is_an_error_not_a_panic() {
        let text = text();
        let index = LineIndex::build(text.as_str()).unwrap();
        for cut in [0, 1, 5, 100, text.len() / 2, text.len() - 1] {
            assert_changed(stub_from_source("v", "bash", &text[..cut], &index));
        }
    }

    #[test]
    fn a_source_whose_reads_come_back_short_is_an_error_not_a_panic() {
        let text = text();
        let index = LineIndex::build(text.as_str()).unwrap();
        // Nothing at all (no first line: the head preview had nothing to start from), the head
        // only, the head and part of the tail, all but the last byte.
        for kept in [0, 1, 40, text.len() - 300, text.len() - 1] {
            let src = CutShort {
                bytes: &text.as_bytes()[..kept],
                len: text.len() as u64,
            };
            assert_changed(stub_from_source("v", "bash", &src, &index));
        }
        // One long line cut to fit: the cut preview reads it too.
        let long = "x".repeat(5000);
        let index = LineIndex::build(long.as_str()).unwrap();
        let src = CutShort {
            bytes: &long.as_bytes()[..100],
            len: long.len() as u64,
        };
        assert_changed(stub_from_source("v", "bash", &src, &index));
    }

    #[test]
    fn a_value_file_truncated_after_it_was_indexed_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.txt");
        std::fs::write(&path, text()).unwrap();
        let src = FileSource::open(&path).unwrap();
        let index = LineIndex::build(&src).unwrap();
        assert!(stub_from_source("v", "bash", &src, &index).is_ok());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        assert_changed(stub_from_source("v", "bash", &src, &index));
    }
}
