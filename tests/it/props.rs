//! Property tests of the retained-value functions against a naive model of spec B. Sources that
//! return short reads put chunk boundaries everywhere, so the streaming code is tested at every
//! split a 1 GiB file could have.

use mission_control::retained::{
    peek, peek_source, scan_query_chunked, stub_for, stub_from_source, value_id, ByteSource,
    LineIndex, PeekRequest, PEEK_MAX_BYTES, PEEK_MAX_LINES, STUB_MAX,
};
use proptest::prelude::*;
use std::io;

/// A text that hands out at most `max` bytes per read.
struct ShortReads<'a> {
    text: &'a [u8],
    max: usize,
}

impl ByteSource for ShortReads<'_> {
    fn len(&self) -> u64 {
        self.text.len() as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.max);
        self.text.read_at(offset, &mut buf[..n])
    }
}

/// Spec B.3's line model, written the obvious way: a `\r` is dropped only before a `\n`.
fn naive_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines: Vec<&str> = body.split('\n').collect();
    let last_has_newline = text.ends_with('\n');
    let n = lines.len();
    for (i, l) in lines.iter_mut().enumerate() {
        if i + 1 < n || last_has_newline {
            *l = l.strip_suffix('\r').unwrap_or(l);
        }
    }
    lines
}

/// A query peek shows a matching line longer than this as a window around its first match.
const LONG_LINE: usize = 512;

/// The lines of an answer; unlike `str::lines`, a `\r` at the end stays part of the line.
fn out_lines(text: &str) -> impl Iterator<Item = &str> {
    text.strip_suffix('\n').unwrap_or(text).split('\n')
}

fn text_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        8 => "[ab é\r]{0,30}",
        1 => "[xy]{200,3000}",
    ];
    (prop::collection::vec(line, 0..120), any::<bool>()).prop_map(|(lines, final_nl)| {
        let mut t = lines.join("\n");
        if final_nl && !t.is_empty() {
            t.push('\n');
        }
        t
    })
}

/// Texts for queries: short lines, long lines without a match, and long lines with a match
/// anywhere in them (at the start, the middle or the end), so windows are cut on every side.
fn query_text_strategy() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        6 => "[ab é\r]{0,30}",
        1 => "[xy]{200,3000}",
        2 => "[xy]{0,700}[abé ]{1,3}[xy]{0,700}",
        1 => "[xyé ab]{400,1500}",
    ];
    (prop::collection::vec(line, 0..120), any::<bool>()).prop_map(|(lines, final_nl)| {
        let mut t = lines.join("\n");
        if final_nl && !t.is_empty() {
            t.push('\n');
        }
        t
    })
}

/// A query peek's header (docs/peek-layout.md), the query JSON-quoted.
fn query_header(matches: usize, total: u64, echo: &str) -> String {
    if matches == 0 {
        format!("[peek #v: no line contains {echo} ({total} lines searched)]")
    } else {
        format!("[peek #v: {matches} of {total} lines contain {echo}]")
    }
}

/// A matching line as a query peek shows it: whole when it has at most [`LONG_LINE`] bytes, else
/// `…<window>… [cut: bytes a-b of len]`, the window being bytes `a..=b` of the line (with `…`
/// only on a side where the line goes on), at most [`LONG_LINE`] bytes, around its first match.
fn check_query_line(rest: &str, want: &str, needle: &str) -> Result<(), TestCaseError> {
    if want.len() <= LONG_LINE {
        prop_assert_eq!(rest, want);
        return Ok(());
    }
    let parsed = rest.rsplit_once(" [cut: bytes ").and_then(|(shown, note)| {
        let (range, len) = note.strip_suffix(']')?.split_once(" of ")?;
        let (a, b) = range.split_once('-')?;
        Some((
            shown,
            a.parse::<usize>().ok()?,
            b.parse::<usize>().ok()?,
            len.parse::<usize>().ok()?,
        ))
    });
    let Some((shown, a, b, len)) = parsed else {
        return Err(TestCaseError::fail(format!(
            "a long line without its window note: {rest:?}"
        )));
    };
    prop_assert_eq!(len, want.len());
    prop_assert!(
        1 <= a && a <= b && b <= len && b - a < LONG_LINE,
        "bytes {a}-{b} of {len}"
    );
    let shown = if a > 1 {
        shown.strip_prefix('…')
    } else {
        Some(shown)
    };
    let shown = shown.and_then(|s| {
        if b < len {
            s.strip_suffix('…')
        } else {
            Some(s)
        }
    });
    prop_assert_eq!(
        shown,
        want.get(a - 1..b),
        "the window is bytes {}-{} of the line",
        a,
        b
    );
    let first = want.find(needle).unwrap_or(usize::MAX);
    prop_assert!(
        a - 1 <= first && first + needle.len() <= b,
        "the window {a}-{b} shows the first match, at byte {}",
        first + 1
    );
    Ok(())
}

fn is_gutter(line: &str) -> Option<(u64, &str)> {
    let (n, rest) = line.split_once(": ")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((n.parse().ok()?, rest))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn line_index_matches_the_naive_model(text in text_strategy(), max in 1usize..40) {
        let src = ShortReads { text: text.as_bytes(), max };
        let index = LineIndex::build(&src).unwrap();
        let naive = naive_lines(&text);
        prop_assert_eq!(index.lines(), naive.len() as u64);
        let spans = index.spans(&src, 1, u64::MAX).unwrap();
        let got: Vec<&str> = spans.iter().map(|s| &text[s.start as usize..s.end as usize]).collect();
        prop_assert_eq!(got, naive);
    }

    #[test]
    fn a_range_peek_returns_exactly_the_lines_asked_within_the_caps(
        text in text_strategy(), start in 1u64..130, len in 0u64..600, max in 1usize..64,
    ) {
        let src = ShortReads { text: text.as_bytes(), max };
        let index = LineIndex::build(&src).unwrap();
        let naive = naive_lines(&text);
        let req = PeekRequest::Range { start, end: Some(start + len) };
        let Ok(p) = peek("v", &src, &index, &req) else {
            prop_assert!(start > naive.len() as u64);
            return Ok(());
        };
        prop_assert!(p.text.len() <= PEEK_MAX_BYTES);
        prop_assert!(p.lines.len() as u64 <= PEEK_MAX_LINES);
        let mut out = out_lines(&p.text);
        prop_assert!(out.next().unwrap().starts_with("[peek #v: "));
        let mut expect = start;
        for line in out {
            if let Some((n, rest)) = is_gutter(line) {
                prop_assert_eq!(n, expect);
                let want = naive[(n - 1) as usize];
                if rest.len() == want.len() {
                    prop_assert_eq!(rest, want);
                } else {
                    // Only a first line too long for the cap is shown in part.
                    prop_assert_eq!(n, start);
                    prop_assert!(want.starts_with(rest.trim_end_matches('…')));
                }
                expect += 1;
            } else {
                prop_assert!(line.starts_with("[cut: "), "not a gutter, not a footer: {line:?}");
            }
        }
        let last_asked = (start + len).min(naive.len() as u64);
        prop_assert_eq!(p.cut, expect - 1 < last_asked);
    }

    #[test]
    fn a_query_peek_finds_every_matching_line_in_order(
        text in query_text_strategy(), needle in "[abé ]{1,3}", max in 1usize..64,
    ) {
        let src = ShortReads { text: text.as_bytes(), max };
        let index = LineIndex::build(&src).unwrap();
        let naive: Vec<(u64, &str)> = naive_lines(&text)
            .into_iter()
            .enumerate()
            .filter(|(_, l)| l.contains(&needle))
            .map(|(i, l)| (i as u64 + 1, l))
            .collect();
        let scan = scan_query_chunked(&src, needle.as_bytes(), usize::MAX, max).unwrap();
        prop_assert_eq!(scan.matching_lines, naive.len() as u64);
        prop_assert_eq!(scan.lines, index.lines());
        let p = peek("v", &src, &index, &PeekRequest::Query { text: needle.clone() }).unwrap();
        prop_assert!(p.text.len() <= PEEK_MAX_BYTES);
        prop_assert_eq!(p.matches, Some(naive.len() as u64));
        prop_assert_eq!(p.total_lines, index.lines());
        let shown: Vec<u64> = naive.iter().take(p.lines.len()).map(|(n, _)| *n).collect();
        prop_assert_eq!(&p.lines, &shown);

        let mut out = out_lines(&p.text);
        let header = out.next().unwrap();
        let echo = serde_json::to_string(&needle).unwrap();
        prop_assert_eq!(header, query_header(naive.len(), index.lines(), &echo));
        // The gutter lines are the matching lines, in order, each whole or as a window around
        // its first match; then a footer only when the answer is cut.
        let mut gutters = Vec::new();
        let mut footer = None;
        for line in out {
            prop_assert!(footer.is_none(), "nothing follows the footer: {line:?}");
            match is_gutter(line) {
                Some((n, rest)) => {
                    let want = naive.iter().find(|(m, _)| *m == n).map(|(_, l)| *l);
                    prop_assert!(want.is_some(), "line {n} does not contain the query");
                    check_query_line(rest, want.unwrap_or_default(), &needle)?;
                    gutters.push(n);
                }
                None => footer = Some(line),
            }
        }
        prop_assert_eq!(&gutters, &p.lines);
        prop_assert_eq!(p.cut, footer.is_some());
        match footer {
            Some(f) => {
                let next = naive[p.lines.len()].0;
                prop_assert!(f.starts_with("[cut: "), "{f:?}");
                let tail = format!(
                    "; {} of {} matching lines shown. The next match is on line {next}: continue with start={next}, or a narrower query]",
                    p.lines.len(),
                    naive.len()
                );
                prop_assert!(f.ends_with(&tail), "{f:?}");
            }
            None => prop_assert_eq!(p.lines.len(), naive.len(), "uncut: every match is shown"),
        }
    }

    #[test]
    fn value_ids_are_safe_file_names(id in "\\PC{0,120}") {
        let v = value_id(&id);
        prop_assert!(!v.is_empty() && v.len() <= 64);
        prop_assert!(v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        prop_assert!(v != "." && v != "..");
        prop_assert_eq!(value_id(&v), v.clone(), "a value id is its own value id");
    }

    #[test]
    fn a_stub_starts_with_its_marker_and_stays_under_3072_bytes(
        text in text_strategy(), id in "\\PC{0,80}", tool in "\\PC{0,100}",
    ) {
        let vid = value_id(&id);
        let stub = stub_for(&vid, &tool, &text);
        let marker = format!("[retained #{vid}]");
        prop_assert!(stub.starts_with(&marker));
        prop_assert!(stub.len() <= STUB_MAX, "{} bytes", stub.len());
        // Every preview line carries its true line number.
        let naive = naive_lines(&text);
        for line in out_lines(&stub).skip(2) {
            if let Some((n, rest)) = is_gutter(line) {
                let want = naive[(n - 1) as usize];
                let rest = rest.trim_start_matches('…').trim_end_matches('…');
                prop_assert!(want.contains(rest));
            }
        }
    }

    #[test]
    fn any_bytes_keep_peeks_and_stubs_within_their_caps(
        bytes in prop::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(0xFFu8), Just(0xC3u8), Just(0xA9u8), Just(b'a'), any::<u8>()],
            0..60_000,
        ),
        start in 1u64..50,
        needle in prop_oneof![Just("a".to_owned()), Just("\u{FFFD}".to_owned()), Just("é".to_owned())],
    ) {
        let src: &[u8] = &bytes;
        let index = LineIndex::build(src).unwrap();
        if let Ok(p) = peek("v", src, &index, &PeekRequest::Range { start, end: Some(start + 1000) }) {
            prop_assert!(p.text.len() <= PEEK_MAX_BYTES, "range: {} bytes", p.text.len());
            prop_assert!(p.lines.len() as u64 <= PEEK_MAX_LINES);
        }
        let q = peek_source("v", src, &PeekRequest::Query { text: needle }).unwrap();
        prop_assert!(q.text.len() <= PEEK_MAX_BYTES, "query: {} bytes", q.text.len());
        let stub = stub_from_source("v", "bash", src, &index).unwrap();
        prop_assert!(stub.text.starts_with("[retained #v]"));
        prop_assert!(stub.text.len() <= STUB_MAX, "stub: {} bytes", stub.text.len());
    }
}
