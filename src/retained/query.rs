//! The scan behind a query peek: one streaming pass that finds the lines containing a literal
//! needle, with memchr's `memmem` for the needle and `memchr` for line breaks. It keeps only
//! the first `keep` hits (their spans and first match), counts the rest, and holds one chunk
//! of the source in memory: a 1 GiB single-line value costs the same memory as a small one.

use super::lines::LineSpan;
use super::source::{ByteSource, SCAN_CHUNK};
use memchr::memmem::Finder;
use std::io;

/// A line that contains the needle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryHit {
    /// Where the line lies in the text.
    pub span: LineSpan,
    /// Offset of the first match on this line.
    pub first_match: u64,
}

/// What a query scan found: the first hits kept, and counts over the whole text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryScan {
    /// The first matching lines, in order, at most `keep` of them.
    pub hits: Vec<QueryHit>,
    /// How many lines contain the needle in all.
    pub matching_lines: u64,
    /// How many lines the source has (spec B.3's line model).
    pub lines: u64,
}

/// Lines of `src` containing `needle`, which must not contain `\n` (so a match never spans
/// lines) and must not be empty.
pub(crate) fn scan_query(
    src: &(impl ByteSource + ?Sized),
    needle: &[u8],
    keep: usize,
) -> io::Result<QueryScan> {
    scan_query_chunked(src, needle, keep, SCAN_CHUNK)
}

/// The query scan, reading `chunk` bytes at a time (at least four needles' worth): small chunks
/// put read boundaries everywhere, which is how the tests cover every straddling match.
pub fn scan_query_chunked(
    src: &(impl ByteSource + ?Sized),
    needle: &[u8],
    keep: usize,
    chunk: usize,
) -> io::Result<QueryScan> {
    debug_assert!(!needle.is_empty() && !needle.contains(&b'\n'));
    let finder = Finder::new(needle);
    let overlap = needle.len() - 1;
    let mut st = State {
        needle_len: needle.len() as u64,
        line_no: 1,
        line_start: 0,
        matched: None,
        prev_cr: false,
        keep,
        out: QueryScan::default(),
    };
    // Never more than the source needs (plus room for one read past its end).
    let size = chunk.max(needle.len() * 4).min(
        usize::try_from(src.len())
            .unwrap_or(usize::MAX)
            .saturating_add(1),
    );
    let mut buf = vec![0u8; size.max(1)];
    // Absolute offset of buf[0]. A match may straddle two reads: the next read then starts
    // again a few bytes back (at most needle.len() - 1, never before the current line, so no
    // newline is counted twice) instead of copying those bytes around.
    let mut base = 0u64;
    loop {
        let filled = fill(src, base, &mut buf)?;
        if filled == 0 {
            break;
        }
        let bytes = &buf[..filled];
        let mut resume = base + filled as u64;
        let mut i = 0usize;
        while i < bytes.len() {
            if st.matched.is_some() {
                // Inside a matching line: only its end matters now.
                match memchr::memchr(b'\n', &bytes[i..]) {
                    Some(p) => {
                        let at = i + p;
                        let cr = if at > 0 {
                            bytes[at - 1] == b'\r'
                        } else {
                            st.prev_cr
                        };
                        st.end_line(base + at as u64, cr);
                        i = at + 1;
                    }
                    None => i = bytes.len(),
                }
                continue;
            }
            let found = finder.find(&bytes[i..]).map(|m| i + m);
            let region = &bytes[i..found.unwrap_or(bytes.len())];
            let breaks = bytecount::count(region, b'\n') as u64;
            if breaks > 0 {
                let last = memchr::memrchr(b'\n', region).expect("counted at least one");
                st.line_no += breaks;
                st.line_start = base + (i + last) as u64 + 1;
            }
            match found {
                Some(m) => {
                    st.matched = Some(base + m as u64);
                    i = m;
                }
                None => {
                    let end = base + bytes.len() as u64;
                    resume = end
                        .saturating_sub(overlap as u64)
                        .max(st.line_start)
                        .max(base + 1);
                    i = bytes.len();
                }
            }
        }
        st.prev_cr = bytes.last() == Some(&b'\r');
        if filled < buf.len() {
            break; // the end of the source
        }
        base = resume;
    }
    if let Some(first_match) = st.matched.take() {
        // The last line has no newline.
        st.record(
            LineSpan {
                number: st.line_no,
                start: st.line_start,
                end: src.len(),
            },
            first_match,
        );
    }
    // After the last newline a line starts only if some byte follows it.
    st.out.lines = if st.line_start < src.len() {
        st.line_no
    } else {
        st.line_no - 1
    };
    Ok(st.out)
}

/// Reads from `offset` until `buf` is full or the source ends; returns the bytes read.
fn fill(src: &(impl ByteSource + ?Sized), offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = src.read_at(offset + filled as u64, &mut buf[filled..])?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

struct State {
    needle_len: u64,
    line_no: u64,
    line_start: u64,
    matched: Option<u64>,
    prev_cr: bool,
    keep: usize,
    out: QueryScan,
}

impl State {
    fn end_line(&mut self, newline: u64, cr: bool) {
        if let Some(first_match) = self.matched.take() {
            let end = if cr && newline > self.line_start {
                newline - 1
            } else {
                newline
            };
            // A match that takes in the `\r` of a CRLF line end is not in the line. It is the
            // leftmost match, so no other match of this line can be inside the line either.
            if first_match + self.needle_len <= end {
                let span = LineSpan {
                    number: self.line_no,
                    start: self.line_start,
                    end,
                };
                self.record(span, first_match);
            }
        }
        self.line_no += 1;
        self.line_start = newline + 1;
    }

    fn record(&mut self, span: LineSpan, first_match: u64) {
        self.out.matching_lines += 1;
        if self.out.hits.len() < self.keep {
            self.out.hits.push(QueryHit { span, first_match });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &str, q: &str) -> Vec<(u64, String)> {
        let scan = scan_query(text, q.as_bytes(), usize::MAX).unwrap();
        scan.hits
            .iter()
            .map(|h| {
                (
                    h.span.number,
                    text[h.span.start as usize..h.span.end as usize].to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn finds_each_matching_line_once() {
        let text = "alpha\nbeta beta\r\ngamma\nbeta";
        assert_eq!(
            lines_of(text, "beta"),
            [(2, "beta beta".to_owned()), (4, "beta".to_owned())]
        );
        assert_eq!(scan_query(text, b"beta", 1).unwrap().matching_lines, 2);
        assert!(lines_of(text, "delta").is_empty());
    }

    #[test]
    fn matches_across_chunk_boundaries() {
        let chunk = super::super::source::SCAN_CHUNK;
        // A needle that straddles the first chunk boundary, on line 3.
        let mut text = String::from("x\ny\n");
        text.push_str(&"z".repeat(chunk - text.len() - 3));
        text.push_str("NEEDLE tail\nlast NEEDLE");
        let got = lines_of(&text, "NEEDLE");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 3);
        assert_eq!(got[1], (4, "last NEEDLE".to_owned()));
        let hit = scan_query(text.as_str(), b"NEEDLE", 1).unwrap().hits[0];
        assert_eq!(hit.first_match as usize, chunk - 3);
    }

    #[test]
    fn crlf_split_across_chunks_is_excluded_from_the_line() {
        let chunk = super::super::source::SCAN_CHUNK;
        let mut text = "q".repeat(chunk - 1);
        text.push_str("\r\nnext");
        let got = lines_of(&text, "qq");
        assert_eq!(got[0].1.len(), chunk - 1);
    }
}
