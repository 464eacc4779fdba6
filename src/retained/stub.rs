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
pub const PREVIEW_BUDGET: usize = 1024;
/// The tool name is untrusted text; at most this many bytes of it are shown.
const TOOL_NAME_MAX: usize = 64;
/// Each preview line takes at least 4 bytes (`1: ` and a newline), so no preview can hold more.
const PREVIEW_MAX_LINES: u64 = (PREVIEW_BUDGET / 4) as u64;
const ELLIPSIS: &str = "…";

/// A stub and where its previews come from, so a viewer can highlight those lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Stub {
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

    let head_spans = index.spans(src, 1, PREVIEW_MAX_LINES)?;
    let head = Preview::head(src, &head_spans)?;
    let head_last = head.last;
    let head_whole = head.cut.is_none();
    text.push_str(&head.title(total, "head"));
    text.push_str(&head.body);

    // The tail shows what the head did not: lines after the head's last, or the end of the
    // head's last line when the head had to cut it.
    let tail = if head_last < total || !head_whole {
        let first = total.saturating_sub(PREVIEW_MAX_LINES - 1).max(head_last);
        let mut spans = index.spans(src, first, total)?;
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
        let first = spans[0];
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
                let bytes = read_range(src, span.start, span.start + keep as u64 + 4)?;
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
                let bytes = read_range(src, from, span.end)?;
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
    let line = read_range(src, span.start, span.end)?;
    let rendered = format!("{gutter}{}\n", render(&line));
    Ok((rendered.len() <= room).then_some(rendered))
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
