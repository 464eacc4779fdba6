//! The line model of spec B.3, and a sparse line index over any [`ByteSource`].
//!
//! Lines: the text is split on `\n`; a `\r` just before `\n` is not part of the line; a final
//! `\n` does not start an extra empty line. `""` has 0 lines, `"a\nb\n"` and `"a\nb"` have 2.
//!
//! The index keeps the start offset of every [`STRIDE`]th line only: building it is one memchr
//! pass over the text, it costs 8 bytes per 1,024 lines, and finding any line afterwards reads at
//! most 1,023 lines before it. A value file is immutable, so an index built once stays valid.

use super::source::{scan_chunks, ByteSource};
use std::io;
use std::ops::ControlFlow;

/// One line in [`LineIndex::checkpoints`] every `STRIDE` lines.
pub(crate) const STRIDE: u64 = 1024;
/// Newlines are counted this many bytes at a time while building an index.
const BLOCK: usize = 16 * 1024;

/// Where one line lies in its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// 1-based line number.
    pub number: u64,
    /// Offset of the line's first byte.
    pub start: u64,
    /// Offset just past the line's content: excludes the `\n` and a `\r` right before it.
    pub end: u64,
}

impl LineSpan {
    /// Size of the line's content in bytes, its line ending excluded.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// True for a line with no content.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// A sparse line index of one text: its size, its line count, and the start of one line in
/// every 1,024.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    bytes: u64,
    lines: u64,
    /// `checkpoints[k]` is the start offset of line `k * STRIDE + 1`.
    checkpoints: Vec<u64>,
}

impl LineIndex {
    /// One sequential pass over `src`.
    pub fn build(src: &(impl ByteSource + ?Sized)) -> io::Result<Self> {
        let mut builder = LineIndexBuilder::default();
        scan_chunks::<()>(src, 0, |_, chunk| {
            builder.feed(chunk);
            ControlFlow::Continue(())
        })?;
        Ok(builder.finish())
    }

    /// An index given by its parts (a sidecar stored beside the text): `None` unless they are
    /// what [`build`](Self::build) could have made of a text of `bytes` bytes: one checkpoint
    /// per [`STRIDE`] lines begun, the first at 0, each after the last and inside the text.
    pub fn from_parts(bytes: u64, lines: u64, checkpoints: Vec<u64>) -> Option<Self> {
        let consistent = checkpoints.len() as u64 == lines.div_ceil(STRIDE).max(1)
            && checkpoints.first() == Some(&0)
            && checkpoints.windows(2).all(|w| w[0] < w[1])
            && checkpoints.iter().skip(1).all(|&c| c < bytes)
            && lines <= bytes;
        consistent.then_some(Self {
            bytes,
            lines,
            checkpoints,
        })
    }

    /// Start offsets of lines 1, `STRIDE + 1`, `2 * STRIDE + 1`, ... (see [`from_parts`](Self::from_parts)).
    pub fn checkpoints(&self) -> &[u64] {
        &self.checkpoints
    }

    /// Number of lines in the text (spec B.3: a final `\n` starts no new line).
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Size of the text in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Spans of lines `first..=last` (clipped to the last line), in order. `first` is 1-based.
    pub fn spans(
        &self,
        src: &(impl ByteSource + ?Sized),
        first: u64,
        last: u64,
    ) -> io::Result<Vec<LineSpan>> {
        let last = last.min(self.lines);
        if first == 0 || first > last {
            return Ok(Vec::new());
        }
        let k = (first - 1) / STRIDE;
        let mut number = k * STRIDE + 1;
        let mut start = self.checkpoints[k as usize];
        let mut out = Vec::with_capacity((last - first + 1).min(4096) as usize);
        // Whether the byte before the current chunk was `\r` (a CRLF split across chunks).
        let mut prev_cr = false;
        let stopped = scan_chunks(src, start, |offset, chunk| {
            for pos in memchr::memchr_iter(b'\n', chunk) {
                let nl = offset + pos as u64;
                let cr = if pos > 0 {
                    chunk[pos - 1] == b'\r'
                } else {
                    prev_cr
                };
                let end = if cr && nl > start { nl - 1 } else { nl };
                if number >= first {
                    out.push(LineSpan { number, start, end });
                }
                if number == last {
                    return ControlFlow::Break(());
                }
                number += 1;
                start = nl + 1;
            }
            prev_cr = chunk.last() == Some(&b'\r');
            ControlFlow::Continue(())
        })?;
        // A last line without a newline runs to the end of the text.
        if stopped.is_none() && start < self.bytes && number >= first && number <= last {
            out.push(LineSpan {
                number,
                start,
                end: self.bytes,
            });
        }
        Ok(out)
    }
}

/// A [`LineIndex`] built from a text handed over in consecutive chunks (a file read in order,
/// or a string decoded as it streams by), so no caller holds the text whole.
#[derive(Debug, Default)]
pub(crate) struct LineIndexBuilder {
    bytes: u64,
    newlines: u64,
    last: Option<u8>,
    checkpoints: Vec<u64>,
}

impl LineIndexBuilder {
    /// Bytes fed so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The next bytes of the text.
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        let offset = self.bytes;
        // Count a block at a time (SIMD); walk newline by newline only through the few blocks
        // where a checkpoint falls.
        for (b, block) in chunk.chunks(BLOCK).enumerate() {
            let count = bytecount::count(block, b'\n') as u64;
            if self.newlines % STRIDE + count < STRIDE {
                self.newlines += count;
                continue;
            }
            let block_offset = offset + (b * BLOCK) as u64;
            for pos in memchr::memchr_iter(b'\n', block) {
                self.newlines += 1;
                if self.newlines % STRIDE == 0 {
                    self.checkpoints.push(block_offset + pos as u64 + 1);
                }
            }
        }
        self.bytes += chunk.len() as u64;
        if let Some(&b) = chunk.last() {
            self.last = Some(b);
        }
    }

    /// The index of everything fed.
    pub(crate) fn finish(self) -> LineIndex {
        let newlines = self.newlines;
        let lines = if self.bytes == 0 {
            0
        } else if self.last == Some(b'\n') {
            newlines
        } else {
            newlines + 1
        };
        let mut checkpoints = Vec::with_capacity(self.checkpoints.len() + 1);
        checkpoints.push(0);
        checkpoints.extend(self.checkpoints);
        // A checkpoint for a line that does not exist (the text ends right after a newline
        // that closes line k*STRIDE) would point at the end; drop it.
        while checkpoints.len() as u64 > lines.div_ceil(STRIDE).max(1) {
            checkpoints.pop();
        }
        LineIndex {
            bytes: self.bytes,
            lines,
            checkpoints,
        }
    }
}

/// Number of lines of an in-memory text, by the same model.
pub(crate) fn count_lines(text: &[u8]) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let newlines = memchr::memchr_iter(b'\n', text).count() as u64;
    if text.last() == Some(&b'\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// `bytes` as text for display: invalid UTF-8 shows as U+FFFD. Budgets are charged on the
/// rendered text, since a replacement character takes 3 bytes where an invalid byte took 1.
pub(crate) fn render(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The start of `bytes` rendered as text, at most `max` bytes of it, never splitting a
/// character; with how many source bytes it shows. Give it a few bytes more than it may show,
/// so that a character cut by the read is not mistaken for an invalid one.
pub(crate) fn render_prefix(bytes: &[u8], max: usize) -> (String, usize) {
    let mut out = String::new();
    let mut used = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if out.len() + c.len_utf8() > max {
                return (out, used);
            }
            out.push(c);
            used += c.len_utf8();
        }
        if !chunk.invalid().is_empty() {
            if out.len() + '\u{FFFD}'.len_utf8() > max {
                return (out, used);
            }
            out.push('\u{FFFD}');
            used += chunk.invalid().len();
        }
    }
    (out, used)
}

/// The end of `bytes` rendered as text, at most `max` bytes of it; see [`render_prefix`].
pub(crate) fn render_suffix(bytes: &[u8], max: usize) -> (String, usize) {
    let mut pieces: Vec<(char, usize)> = Vec::new();
    for chunk in bytes.utf8_chunks() {
        pieces.extend(chunk.valid().chars().map(|c| (c, c.len_utf8())));
        if !chunk.invalid().is_empty() {
            pieces.push(('\u{FFFD}', chunk.invalid().len()));
        }
    }
    let (mut out_len, mut used, mut start) = (0, 0, pieces.len());
    while start > 0 {
        let (c, n) = pieces[start - 1];
        if out_len + c.len_utf8() > max {
            break;
        }
        out_len += c.len_utf8();
        used += n;
        start -= 1;
    }
    (pieces[start..].iter().map(|p| p.0).collect(), used)
}

/// The longest prefix of `bytes` of at most `max` bytes that does not split a UTF-8 character.
pub(crate) fn utf8_prefix(bytes: &[u8], max: usize) -> &[u8] {
    if bytes.len() <= max {
        return bytes;
    }
    let mut cut = max;
    // Back off over continuation bytes (0b10xx_xxxx), at most 3 of them.
    while cut > 0 && max - cut < 3 && (bytes[cut] & 0xC0) == 0x80 {
        cut -= 1;
    }
    &bytes[..cut]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_lines(text: &str) -> Vec<String> {
        let idx = LineIndex::build(text).unwrap();
        idx.spans(text, 1, u64::MAX)
            .unwrap()
            .iter()
            .map(|s| text[s.start as usize..s.end as usize].to_owned())
            .collect()
    }

    #[test]
    fn spec_line_counts() {
        for (text, n) in [
            ("", 0),
            ("a\nb\n", 2),
            ("a\nb", 2),
            ("\n", 1),
            ("a", 1),
            ("\n\n", 2),
        ] {
            assert_eq!(LineIndex::build(text).unwrap().lines(), n, "{text:?}");
            assert_eq!(count_lines(text.as_bytes()), n, "{text:?}");
        }
    }

    #[test]
    fn crlf_is_not_part_of_the_line_but_lone_cr_is() {
        assert_eq!(all_lines("a\r\nb\r\n"), ["a", "b"]);
        assert_eq!(all_lines("a\rb\nc\r"), ["a\rb", "c\r"]);
        assert_eq!(all_lines("\r\n"), [""]);
    }

    #[test]
    fn spans_cross_checkpoints() {
        let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let idx = LineIndex::build(text.as_str()).unwrap();
        assert_eq!(idx.lines(), 5000);
        let spans = idx.spans(text.as_str(), 1023, 1026).unwrap();
        let got: Vec<&str> = spans
            .iter()
            .map(|s| &text[s.start as usize..s.end as usize])
            .collect();
        assert_eq!(got, ["line 1023", "line 1024", "line 1025", "line 1026"]);
        assert_eq!(spans[0].number, 1023);
        let tail = idx.spans(text.as_str(), 4999, 9999).unwrap();
        assert_eq!(tail.len(), 2);
        assert_eq!(
            &text[tail[1].start as usize..tail[1].end as usize],
            "line 5000"
        );
        assert!(idx.spans(text.as_str(), 5001, 5002).unwrap().is_empty());
        assert!(idx.spans(text.as_str(), 0, 2).unwrap().is_empty());
    }

    #[test]
    fn exact_stride_multiple_with_final_newline() {
        let text: String = (1..=2048).map(|i| format!("{i}\n")).collect();
        let idx = LineIndex::build(text.as_str()).unwrap();
        assert_eq!(idx.lines(), 2048);
        let last = idx.spans(text.as_str(), 2048, 2048).unwrap();
        assert_eq!(&text[last[0].start as usize..last[0].end as usize], "2048");
    }

    #[test]
    fn rendering_charges_replacement_characters_and_never_splits_one() {
        assert_eq!(render_prefix("aé調".as_bytes(), 4), ("aé".to_owned(), 3));
        assert_eq!(render_prefix(b"\xffab", 4), ("\u{FFFD}a".to_owned(), 2));
        assert_eq!(render_prefix(b"\xff\xffab", 4), ("\u{FFFD}".to_owned(), 1));
        assert_eq!(render_suffix("aé調".as_bytes(), 4), ("調".to_owned(), 3));
        assert_eq!(render_suffix(b"ab\xff", 2), ("".to_owned(), 0));
        assert_eq!(render_suffix(b"ab\xff", 4), ("b\u{FFFD}".to_owned(), 2));
    }

    #[test]
    fn utf8_cut_never_splits_a_character() {
        let s = "aé調";
        assert_eq!(utf8_prefix(s.as_bytes(), 2), b"a");
        assert_eq!(utf8_prefix(s.as_bytes(), 3), "aé".as_bytes());
    }
}
