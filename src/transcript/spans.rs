//! Big strings of a transcript line, kept as spans of the file instead of in memory.
//!
//! The harness writes every result's full text into its `tool_call_finished` line, so one
//! 300 MB tool output is a 300 MB line. Memory must follow what is shown, not how big a result
//! is: a line longer than [`LINE_BOUND`] is read as a stream, and each of its strings longer
//! than [`STRING_BOUND`] (raw, as escaped on the line) is decoded as it streams by, counted
//! (bytes, lines, format characters, a sparse line index) and replaced in the line by a short
//! placeholder: its first [`PLACEHOLDER_HEAD`] bytes and a marker naming the span. What is
//! left is small JSON that the usual parsers read; a caller that meets a placeholder looks it
//! up with [`resolve`] and reads the string again, in slices, through a [`SpanSource`].
//!
//! A line at or under the bound is read whole as before: nothing changes for it.

use super::tally::Tally;
use crate::retained::json_string::Decoder;
pub(crate) use crate::retained::span::{BigString, SpanSource};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// A line longer than this is read as a stream, its big strings kept as spans.
pub(crate) const LINE_BOUND: usize = 1 << 20;
/// In such a line, a string longer than this (escaped, as on the line) becomes a span...
pub(crate) const STRING_BOUND: usize = 256 << 10;
/// ...and, once what is kept of the line reaches [`LINE_BOUND`], any string over this.
const STRING_BOUND_FULL: usize = 128 << 10;
/// Bytes of a span's text kept in its placeholder: as much as a timeline row shows of a text,
/// so a row, a title or a preview reads the same whether its line was held or streamed.
pub(crate) const PLACEHOLDER_HEAD: usize = crate::model::TEXT_MAX;

/// The bounds in effect: (line, string, string once the line is full). A build with the test
/// hooks takes the line bound from `MCTL_TEST_LINE_BOUND`, so that a test can read the same file
/// both ways and compare every answer; the string bounds never go below a placeholder's head.
pub(crate) fn bounds() -> (usize, usize, usize) {
    #[cfg(feature = "test-hooks")]
    {
        static SET: OnceLock<Option<usize>> = OnceLock::new();
        let set = SET.get_or_init(|| std::env::var("MCTL_TEST_LINE_BOUND").ok()?.parse().ok());
        if let Some(line) = *set {
            let string = (line / 4).max(PLACEHOLDER_HEAD + 1);
            return (line, string, string);
        }
    }
    (LINE_BOUND, STRING_BOUND, STRING_BOUND_FULL)
}
/// A span records where its decoding can restart about this often (decoded bytes).
const RESTART_EVERY: u64 = 1 << 20;
/// Raw bytes decoded per step.
const STEP: usize = 64 << 10;

/// A result's full text as its line holds it: in the line, or a span of the file.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LineText<'a> {
    Inline(&'a str),
    Span(&'a BigString),
}

/// The marker that ends a placeholder: unique per process, so a string a tool wrote cannot
/// pass for one.
fn marker() -> &'static str {
    static MARKER: OnceLock<String> = OnceLock::new();
    MARKER.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        format!("\u{0}span:{:016x}:", h.finish())
    })
}

/// The span `text` stands for, when it is a placeholder of this line's `spans`.
pub(crate) fn resolve<'a>(text: &str, spans: &'a [BigString]) -> Option<&'a BigString> {
    if spans.is_empty() {
        return None;
    }
    let at = text.rfind(marker())?;
    let k: usize = text[at + marker().len()..]
        .strip_suffix('\u{0}')?
        .parse()
        .ok()?;
    spans.get(k)
}

/// What a placeholder shows of its text: its first [`PLACEHOLDER_HEAD`] bytes, as much as a
/// row shows of any text. Any other text as it is.
pub(crate) fn display<'a>(text: &'a str, spans: &[BigString]) -> &'a str {
    match (resolve(text, spans), text.rfind(marker())) {
        (Some(_), Some(at)) => &text[..at],
        _ => text,
    }
}

/// Drops from `text` (a placeholder, or a text cut from one) its marker or what is left of it.
pub(crate) fn strip_marker(text: &mut String) {
    let m = marker();
    if let Some(at) = text.find(m) {
        text.truncate(at);
        return;
    }
    if let Some(k) = (1..m.len()).rev().find(|&k| text.ends_with(&m[..k])) {
        text.truncate(text.len() - k);
    }
}

/// Where byte `at` of a line as held (its big strings as placeholders) lies in the file,
/// counted from the line's start.
pub(crate) fn file_position(at: usize, spans: &[BigString]) -> u64 {
    let grown: i64 = spans
        .iter()
        .map(BigString::shift)
        .filter(|&(end, _)| end <= at)
        .map(|(_, grown)| grown)
        .sum();
    (at as i64 + grown).max(0) as u64
}

/// A long line made small: what is left of it and its big strings, or why it is not valid JSON
/// text.
pub(crate) type Compacted = Result<(Vec<u8>, Vec<BigString>), String>;

/// Turns a long line into small JSON plus its big strings, fed in consecutive chunks.
pub(crate) struct Compactor {
    path: Arc<Path>,
    /// File offset of the chunk's next byte.
    at: u64,
    out: Vec<u8>,
    spans: Vec<BigString>,
    string: Option<Open>,
    spill: Option<Spill>,
    broken: Option<String>,
}

/// A string being copied into the compact line.
struct Open {
    /// Index in `out` of its opening quote.
    quote: usize,
    /// File offset of its first byte after the quote.
    raw_start: u64,
    escaped: bool,
}

/// A string too big to copy, being decoded and counted instead.
struct Spill {
    raw_start: u64,
    raw_len: u64,
    decoder: Decoder,
    tally: Tally,
    restarts: Vec<(u64, u64)>,
    decoded: Vec<u8>,
}

impl Compactor {
    /// A compactor for the line starting at file offset `at` of `path`.
    pub(crate) fn new(path: Arc<Path>, at: u64) -> Self {
        Self {
            path,
            at,
            out: Vec::new(),
            spans: Vec::new(),
            string: None,
            spill: None,
            broken: None,
        }
    }

    /// The next bytes of the line (its newline excluded).
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() && self.broken.is_none() {
            let used = if self.spill.is_some() {
                self.feed_spill(chunk)
            } else if let Some(open) = &mut self.string {
                let (used, closed) = copy_string(open, chunk, &mut self.out);
                self.maybe_spill(closed);
                if closed {
                    self.string = None;
                }
                used
            } else {
                match memchr::memchr(b'"', chunk) {
                    Some(q) => {
                        self.out.extend_from_slice(&chunk[..=q]);
                        self.string = Some(Open {
                            quote: self.out.len() - 1,
                            raw_start: self.at + q as u64 + 1,
                            escaped: false,
                        });
                        q + 1
                    }
                    None => {
                        self.out.extend_from_slice(chunk);
                        chunk.len()
                    }
                }
            };
            self.at += used as u64;
            chunk = &chunk[used..];
        }
    }

    /// Starts decoding the open string instead of copying it, once it is over its bound (or
    /// decodes it whole, when it closed in the chunk that took it over).
    fn maybe_spill(&mut self, closed: bool) {
        let Some(open) = &self.string else { return };
        let (line_bound, string_bound, full_bound) = bounds();
        let bound = if open.quote >= line_bound {
            full_bound
        } else {
            string_bound
        };
        let copied = self.out.len() - open.quote - 1 - usize::from(closed);
        if copied <= bound {
            return;
        }
        let mut raw = self.out.split_off(open.quote + 1);
        self.out.truncate(open.quote);
        if closed {
            raw.pop(); // its closing quote
        }
        let mut spill = Spill {
            raw_start: open.raw_start,
            raw_len: 0,
            decoder: Decoder::default(),
            tally: Tally::default(),
            restarts: vec![(0, 0)],
            decoded: Vec::with_capacity(STEP),
        };
        self.string = None;
        for piece in raw.chunks(STEP) {
            match spill.step(piece) {
                Ok(None) => {}
                Ok(Some(_)) => unreachable!("an open string's copied bytes hold no closing quote"),
                Err(e) => {
                    self.broken = Some(e);
                    return;
                }
            }
        }
        if closed {
            if !spill.decoder.clean() {
                self.broken = Some("a string ends inside an escape".to_owned());
                return;
            }
            self.close_spill(spill);
        } else {
            self.spill = Some(spill);
        }
    }

    /// Feeds the spilled string; returns the bytes used (through its closing quote, if there).
    fn feed_spill(&mut self, chunk: &[u8]) -> usize {
        let spill = self.spill.as_mut().expect("spilling");
        let piece = &chunk[..chunk.len().min(STEP)];
        match spill.step(piece) {
            Ok(None) => piece.len(),
            Ok(Some(used)) => {
                let spill = self.spill.take().expect("spilling");
                self.close_spill(spill);
                used
            }
            Err(e) => {
                self.broken = Some(e);
                chunk.len()
            }
        }
    }

    fn close_spill(&mut self, spill: Spill) {
        let (head, format_chars, index) = match spill.tally.finish() {
            Ok(t) => t,
            Err(e) => {
                self.broken = Some(e);
                return;
            }
        };
        let k = self.spans.len();
        let placeholder = format!("{head}{}{k}\u{0}", marker());
        let at = self.out.len();
        serde_json::to_writer(&mut self.out, &placeholder).expect("writing to memory");
        // The string in the file: its escaped bytes and two quotes.
        let grown = (spill.raw_len + 2) as i64 - (self.out.len() - at) as i64;
        self.spans.push(BigString::new(
            self.path.clone(),
            (spill.raw_start, spill.raw_len),
            index,
            format_chars,
            spill.restarts,
            (self.out.len(), grown),
        ));
    }

    /// The small line and its spans, or why the line is not valid JSON text.
    pub(crate) fn finish(self) -> Compacted {
        if let Some(e) = self.broken {
            return Err(e);
        }
        if self.spill.is_some() {
            return Err("a string is not closed before the end of the line".to_owned());
        }
        Ok((self.out, self.spans))
    }
}

/// Copies a string's bytes up to and including its closing quote; returns the bytes used and
/// whether the string closed.
fn copy_string(open: &mut Open, chunk: &[u8], out: &mut Vec<u8>) -> (usize, bool) {
    let mut i = 0;
    while i < chunk.len() {
        if open.escaped {
            open.escaped = false;
            i += 1;
            continue;
        }
        match memchr::memchr2(b'"', b'\\', &chunk[i..]) {
            None => break,
            Some(j) => {
                i += j + 1;
                if chunk[i - 1] == b'\\' {
                    open.escaped = true;
                } else {
                    out.extend_from_slice(&chunk[..i]);
                    return (i, true);
                }
            }
        }
    }
    out.extend_from_slice(chunk);
    (chunk.len(), false)
}

impl Spill {
    /// Decodes `piece`; `Some(used)` when the string closed in it (quote included).
    fn step(&mut self, piece: &[u8]) -> Result<Option<usize>, String> {
        self.decoded.clear();
        let closed = self
            .decoder
            .feed(piece, &mut self.decoded)
            .map_err(|e| e.to_string())?;
        let used = closed.unwrap_or(piece.len());
        let (decoded_before, raw_before) = (self.tally.bytes(), self.raw_len);
        self.tally.feed(&self.decoded)?;
        self.raw_len += (closed.map_or(used, |u| u - 1)) as u64;
        // A restart point about every megabyte, at the last place between escapes in the
        // piece (a piece may end inside one).
        let last = self.restarts.last().map_or(0, |r| r.0);
        let clean = self.decoder.last_clean(piece.len(), self.decoded.len());
        if let (None, Some((raw, decoded))) = (closed, clean) {
            let at = decoded_before + decoded as u64;
            if at >= last + RESTART_EVERY {
                self.restarts.push((at, raw_before + raw as u64));
            }
        }
        Ok(closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retained::source::read_range;
    use crate::retained::{count_format_chars, ByteSource, LineIndex};

    /// A deterministic mix of what JSON strings hold: ASCII, newlines, escapes, multi-byte
    /// characters, surrogate pairs, a format character.
    fn text(len: usize, seed: u64) -> String {
        let pieces = [
            "plain text ",
            "\n",
            "\r\n",
            "tab\there",
            "quote \" and \\ backslash",
            "é",
            "日本",
            "😀",
            "\u{202E}",
            "\u{1}",
            "/",
        ];
        let mut x = seed | 1;
        let mut s = String::new();
        while s.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push_str(pieces[(x % pieces.len() as u64) as usize]);
        }
        s
    }

    /// Writes `line` to a file and compacts it as the reader would, in chunks of `chunk`.
    fn compact(line: &[u8], chunk: usize) -> (tempfile::TempDir, Vec<u8>, Vec<BigString>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, line).unwrap();
        let mut c = Compactor::new(Arc::from(path.as_path()), 0);
        for piece in line.chunks(chunk) {
            c.feed(piece);
        }
        let (small, spans) = c.finish().unwrap();
        (dir, small, spans)
    }

    #[test]
    fn a_big_string_becomes_a_span_that_reads_back_exactly() {
        let big = text(3 << 20, 7);
        // serde_json escapes `\u{1}` as `\u0001`; a surrogate pair written as escapes too.
        let mut escaped = serde_json::to_string(&big).unwrap();
        escaped.insert_str(1, "\\ud83d\\ude00\\u00e9");
        let want: String = serde_json::from_str(&escaped).unwrap();
        let line = format!(r#"{{"a":1,"content":{escaped},"small":"x\"y","n":[true,null]}}"#);
        for chunk in [7, 4096, 1 << 20] {
            let (_dir, small, spans) = compact(line.as_bytes(), chunk);
            assert_eq!(spans.len(), 1);
            let v: serde_json::Value = serde_json::from_slice(&small).unwrap();
            assert_eq!(v["small"], "x\"y");
            assert_eq!(v["n"], serde_json::json!([true, null]));
            let content = v["content"].as_str().unwrap();
            let span = resolve(content, &spans).expect("a placeholder");
            assert!(want.starts_with(&content[..content.rfind(marker()).unwrap()]));
            assert_eq!(span.bytes(), want.len() as u64);
            assert_eq!(span.format_chars(), count_format_chars(&want));
            assert_eq!(*span.index(), LineIndex::build(want.as_str()).unwrap());
            let src = SpanSource::open(span).unwrap();
            assert_eq!(read_range(&src, 0, src.len()).unwrap(), want.as_bytes());
            for (a, b) in [
                (0, 10),
                (1_500_000, 1_600_000),
                (want.len() as u64 - 5, u64::MAX),
            ] {
                let end = b.min(want.len() as u64);
                assert_eq!(
                    read_range(&src, a, end).unwrap(),
                    &want.as_bytes()[a as usize..end as usize]
                );
            }
        }
    }

    #[test]
    fn strings_under_the_bound_and_other_lines_stay_in_the_line() {
        let line = br#"{"a":"short \"quoted\" \\","b":"\u00e9"}"#;
        let (_dir, small, spans) = compact(line, 3);
        assert!(spans.is_empty());
        assert_eq!(small, line);
        assert_eq!(resolve("anything", &spans).map(|_| ()), None);
    }

    #[test]
    fn an_invalid_big_string_breaks_the_line_with_a_reason() {
        let body = "x".repeat(2 << 20);
        for (bad, why) in [
            (format!(r#"{{"c":"{body}\ud800x"}}"#), "surrogate"),
            (format!(r#"{{"c":"{body}\q"}}"#), "escape"),
            (format!("{{\"c\":\"{body}\u{1}\"}}"), "control"),
            (format!(r#"{{"c":"{body}"#), "not closed"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.jsonl");
            std::fs::write(&path, &bad).unwrap();
            let mut c = Compactor::new(Arc::from(path.as_path()), 0);
            c.feed(bad.as_bytes());
            let Err(err) = c.finish() else {
                panic!("{why}: read as valid")
            };
            assert!(err.contains(why), "{err}");
        }
        let mut not_utf8 = br#"{"c":""#.to_vec();
        not_utf8.extend(std::iter::repeat_n(b'a', 2 << 20));
        not_utf8.extend(b"\xff\"}");
        let dir = tempfile::tempdir().unwrap();
        let mut c = Compactor::new(Arc::from(dir.path().join("t").as_path()), 0);
        c.feed(&not_utf8);
        let Err(err) = c.finish() else {
            panic!("read as valid")
        };
        assert!(err.contains("UTF-8"), "{err}");
    }

    #[test]
    fn a_forged_placeholder_is_only_text() {
        let big = "y".repeat(2 << 20);
        let line = format!(r#"{{"a":"{big}"}}"#);
        let (_dir, _small, spans) = compact(line.as_bytes(), 1 << 16);
        // A tool cannot know the marker: a look-alike without it names no span.
        assert!(resolve("head\u{0}span:0000000000000000:0\u{0}", &spans).is_none());
        assert_eq!(display("plain", &spans), "plain");
    }

    #[test]
    fn a_string_of_escapes_only_still_restarts_every_megabyte() {
        // Two-byte escapes from an odd offset: every 64 KiB piece ends inside one.
        let body = "\\n".repeat(3 << 20);
        let line = format!(r#"{{"k":"x{body}"}}"#);
        let (_dir, _small, spans) = compact(line.as_bytes(), 1 << 16);
        let span = &spans[0];
        // About one a decoded megabyte (3 MB): with restarts only where pieces end, one.
        assert!(
            span.restart_count() >= 3,
            "{} restarts",
            span.restart_count()
        );
        let src = SpanSource::open(span).unwrap();
        let want = format!("x{}", "\n".repeat(3 << 20));
        let mid = 2_000_001u64;
        assert_eq!(
            read_range(&src, mid, mid + 100).unwrap(),
            &want.as_bytes()[mid as usize..mid as usize + 100]
        );
    }

    #[test]
    fn glued_values_after_a_big_string_keep_their_places_in_the_file() {
        let big = "z".repeat(2 << 20);
        let first = format!(r#"{{"a":"{big}","b":1}}"#);
        let second = r#"{"c":"after"}"#;
        let line = format!("{first}{second}");
        let (_dir, small, spans) = compact(line.as_bytes(), 1 << 16);
        let mut seen = Vec::new();
        crate::transcript::split_glued(
            crate::transcript::RawLine {
                spans: &spans,
                raw_len: line.len() as u64,
                ..crate::transcript::RawLine::whole(1, 100, &small)
            },
            &mut |l| seen.push((l.offset, l.raw_len)),
        );
        assert_eq!(
            seen,
            [
                (100, first.len() as u64),
                (100 + first.len() as u64, second.len() as u64)
            ]
        );
    }
}
