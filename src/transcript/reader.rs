//! Reading a transcript line by line, tolerant of a torn last line.
//!
//! The harness appends one line per write and fsyncs, so a crash can leave a last line without
//! its newline. Such a tail is *pending*, not an error: the reader stops before it and remembers
//! the offset of the last complete line, so the next read (after the file grew) starts there.
//! Lines are split on `\n` by the buffered reader (memchr inside), one line in memory at a time,
//! whatever its size.

use super::spans::{bounds, BigString, Compacted, Compactor};
use crate::model::layout::ReadEnd;
use crate::model::stamp::FileStamp;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

/// One complete line of a transcript.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLine<'a> {
    /// 1-based position in the file: the only order that counts (`seq` can repeat).
    pub number: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// The line without its `\n`.
    pub bytes: &'a [u8],
    /// Its length in the file, its `\n` excluded: `bytes.len()`, except for a line too long to
    /// hold, whose `bytes` are what is left when its big strings are taken out.
    pub raw_len: u64,
    /// For one of several JSON values glued together on one line (`}{`): its place among them
    /// and how many there are. `None` for a line as it was written.
    pub glued: Option<(u32, u32)>,
    /// The big strings of a line too long to hold, which `bytes` holds as placeholders
    /// (see [`super::spans`]); empty for any other line.
    pub spans: &'a [BigString],
    /// Why a line too long to hold is not valid JSON text, found while streaming it.
    pub broken: Option<&'a str>,
}

impl<'a> RawLine<'a> {
    /// A line as it was written.
    pub(crate) fn whole(number: u64, offset: u64, bytes: &'a [u8]) -> Self {
        Self {
            number,
            offset,
            bytes,
            raw_len: bytes.len() as u64,
            glued: None,
            spans: &[],
            broken: None,
        }
    }
}

/// The first JSON value of `line` when more follow it on the line (a value of a glued line,
/// read again from its offset); else the line as it is.
pub(crate) fn first_value(line: &[u8]) -> &[u8] {
    let mut values =
        serde_json::Deserializer::from_slice(line).into_iter::<serde::de::IgnoredAny>();
    match values.next() {
        Some(Ok(_))
            if line[values.byte_offset()..]
                .iter()
                .any(|b| !b.is_ascii_whitespace()) =>
        {
            &line[..values.byte_offset()]
        }
        _ => line,
    }
}

/// Whether `line` may be JSON values glued together: two objects may meet in it (`}{`), and it
/// is not one value. [`split_glued`] reads only such a line again, as values.
///
/// Where two objects meet, the second's first byte past any white space opens its first key
/// (`"`) or closes it (`}`); a `}{` inside a string (code, a JSON text quoted in an output) is
/// almost always followed by something else (an escaped quote is `\"`), and its line is not
/// parsed here once more before its reading parses it.
pub(crate) fn may_be_glued(line: &[u8]) -> bool {
    super::needle!(MEET, b"}{");
    let meets = MEET.find_iter(line).any(|at| {
        let next = line[at + 2..].iter().find(|b| !b.is_ascii_whitespace());
        matches!(next, Some(b'"' | b'}'))
    });
    meets && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err()
}

/// Hands `line` on to `each`: a line that is two or more complete JSON values back to back (a
/// writer's lost newline, `}{`) as those values, in order, each marked [`RawLine::glued`]; any
/// other line as it is. Only a line where two objects may meet is parsed here.
pub(crate) fn split_glued(line: RawLine<'_>, each: &mut impl FnMut(RawLine<'_>)) {
    use serde::de::IgnoredAny;
    if !may_be_glued(line.bytes) {
        return each(line);
    }
    let mut spans = Vec::new();
    let mut values = serde_json::Deserializer::from_slice(line.bytes).into_iter::<IgnoredAny>();
    loop {
        let start = values.byte_offset();
        match values.next() {
            Some(Ok(_)) => spans.push((start, values.byte_offset())),
            Some(Err(_)) => return each(line),
            None => break,
        }
    }
    if spans.len() < 2 {
        return each(line);
    }
    let count = spans.len() as u32;
    // In a line held with placeholders, places are turned into the file's.
    let in_file = |at: usize| super::spans::file_position(at, line.spans);
    for (i, (start, end)) in spans.into_iter().enumerate() {
        let bytes = &line.bytes[start..end];
        let skip = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
        each(RawLine {
            number: line.number,
            offset: line.offset + in_file(start + skip),
            bytes: &bytes[skip..],
            raw_len: in_file(end) - in_file(start + skip),
            glued: Some((i as u32, count)),
            spans: line.spans,
            broken: line.broken,
        });
    }
}

/// Where a reader stands in its transcript: everything before `offset` has been read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// Offset just past the last complete line read.
    pub offset: u64,
    /// Number of complete lines before `offset`.
    pub lines: u64,
}

/// What one pass over the available bytes found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ReadOutcome {
    pub cursor: Cursor,
    /// Bytes after the last newline: a torn line still being written (or left by a crash).
    pub pending_bytes: u64,
    /// Size of the file when the pass ended.
    pub file_len: u64,
}

/// Each open transcript's read buffer. 256 KiB reads as fast as 1 MiB (measured on cold
/// listings of both agents' stores), and a listing holds one per file being read on each core.
const READ_BUFFER: usize = 1 << 18;

/// Reads every complete line from `from` to the current end of `path`, calling `each` for
/// each, and returns where the next read should start. Each line is held whole.
pub(crate) fn read_lines(
    path: &Path,
    from: Cursor,
    each: impl FnMut(RawLine<'_>),
) -> io::Result<ReadOutcome> {
    read_lines_within(path, from, None, each)
}

/// [`read_lines`] up to `end` when the file is still the length `end` was found in: a run
/// whose last line a scan found need not be read past it. (A file of another length is read to
/// its end: it may hold more of the run.) A read that stopped there has its cursor there and
/// no bytes pending: what follows is no torn line of its run.
pub(crate) fn read_lines_within(
    path: &Path,
    from: Cursor,
    end: Option<ReadEnd>,
    each: impl FnMut(RawLine<'_>),
) -> io::Result<ReadOutcome> {
    let (reader, stamp) = open_stamped_at(path, from)?;
    let stop = end
        .filter(|e| e.scanned == stamp && e.offset >= from.offset)
        .map(|e| e.offset - from.offset);
    let mut outcome = read_lines_at(
        reader.take(stop.unwrap_or(u64::MAX)),
        from,
        stamp.len,
        None,
        each,
    )?;
    if stop.is_some() {
        // (A file with the stamp its scan read ends a line here.)
        outcome.pending_bytes = 0;
    }
    Ok(outcome)
}

/// [`read_lines`] for a harness transcript: a line over the bound (`spans::LINE_BOUND`) is streamed, its big
/// strings kept as spans of the file (see [`super::spans`]), so no line costs more memory than
/// the bound, whatever the size of the result it holds.
pub(crate) fn read_transcript_lines(
    path: &Path,
    from: Cursor,
    each: impl FnMut(RawLine<'_>),
) -> io::Result<ReadOutcome> {
    let (reader, file_len) = open_at(path, from)?;
    read_lines_at(reader, from, file_len, Some(Arc::from(path)), each)
}

fn open_at(path: &Path, from: Cursor) -> io::Result<(BufReader<File>, u64)> {
    open_stamped_at(path, from).map(|(reader, stamp)| (reader, stamp.len))
}

/// The file at `path` open at `from`, with the stamp of what was opened.
fn open_stamped_at(path: &Path, from: Cursor) -> io::Result<(BufReader<File>, FileStamp)> {
    let mut file = File::open(path)?;
    let stamp = FileStamp::from_meta(&file.metadata()?);
    // A file just opened is at its start: most reads start there (a system call a file).
    if from.offset > 0 {
        file.seek(SeekFrom::Start(from.offset))?;
    }
    Ok((BufReader::with_capacity(READ_BUFFER, file), stamp))
}

/// [`read_lines`] over any reader from its start (a decompressed rollout): offsets count the
/// bytes it yields; `file_len` is what the outcome reports as the file's size.
pub(crate) fn read_lines_from(
    reader: impl BufRead,
    file_len: u64,
    each: impl FnMut(RawLine<'_>),
) -> io::Result<ReadOutcome> {
    read_lines_at(reader, Cursor::default(), file_len, None, each)
}

/// The line reader. With `spans_of` (the file being read), a line over the bound goes
/// through a [`Compactor`] from the moment it passes the bound.
fn read_lines_at(
    mut reader: impl BufRead,
    from: Cursor,
    file_len: u64,
    spans_of: Option<Arc<Path>>,
    mut each: impl FnMut(RawLine<'_>),
) -> io::Result<ReadOutcome> {
    let mut cursor = from;
    let mut buf = Vec::new();
    loop {
        // A line whole in the reader's buffer is handed from there: copying it out first
        // would be one more pass over every byte.
        let avail = reader.fill_buf()?;
        let whole =
            memchr::memchr(b'\n', avail).filter(|&len| spans_of.is_none() || len <= bounds().0);
        if let Some(len) = whole {
            let number = cursor.lines + 1;
            each(RawLine::whole(number, cursor.offset, &avail[..len]));
            reader.consume(len + 1);
            cursor = Cursor {
                offset: cursor.offset + len as u64 + 1,
                lines: number,
            };
            continue;
        }
        let line = match next_line(
            &mut reader,
            cursor.offset,
            spans_of.as_ref(),
            &mut buf,
            false,
        )? {
            Ok(line) => line,
            // The end, or a torn tail: leave it for a later pass.
            Err(pending_bytes) => {
                return Ok(ReadOutcome {
                    cursor,
                    pending_bytes,
                    file_len,
                })
            }
        };
        let number = cursor.lines + 1;
        line.hand(number, cursor.offset, &buf, &mut each);
        cursor = Cursor {
            offset: cursor.offset + line.len + 1,
            lines: number,
        };
    }
}

/// The complete line of `path` that starts at `offset`, read as [`read_transcript_lines`]
/// reads it; `None` when there is no complete line there.
pub(crate) fn read_transcript_line<T>(
    path: &Path,
    offset: u64,
    f: impl FnOnce(RawLine<'_>) -> T,
) -> io::Result<Option<T>> {
    let (mut reader, _) = open_at(path, Cursor { offset, lines: 0 })?;
    let mut buf = Vec::new();
    // A last line its writer left without a newline may be read as a line (a settled tail):
    // here the end of the file ends it too.
    let Ok(line) = next_line(&mut reader, offset, Some(&Arc::from(path)), &mut buf, true)? else {
        return Ok(None);
    };
    let mut f = Some(f);
    let mut out = None;
    line.hand(1, offset, &buf, &mut |l| out = f.take().map(|f| f(l)));
    Ok(out)
}

/// One line read by [`next_line`]: held in the caller's buffer, or compacted.
struct NextLine {
    /// Its length in the file, the newline excluded.
    len: u64,
    compacted: Option<Compacted>,
}

impl NextLine {
    fn hand(&self, number: u64, offset: u64, buf: &[u8], each: &mut impl FnMut(RawLine<'_>)) {
        match &self.compacted {
            None => each(RawLine::whole(number, offset, buf)),
            Some(Ok((small, spans))) => each(RawLine {
                spans,
                raw_len: self.len,
                ..RawLine::whole(number, offset, small)
            }),
            Some(Err(why)) => each(RawLine {
                broken: Some(why),
                raw_len: self.len,
                ..RawLine::whole(number, offset, b"")
            }),
        }
    }
}

/// Reads the next line into `buf` (or through a compactor, past the bound). At the end, or at
/// a torn tail, the size of what was there (0 at the end); with `eof_ends`, a tail that is not
/// empty is a line.
fn next_line(
    reader: &mut impl BufRead,
    offset: u64,
    spans_of: Option<&Arc<Path>>,
    buf: &mut Vec<u8>,
    eof_ends: bool,
) -> io::Result<Result<NextLine, u64>> {
    buf.clear();
    let mut compactor: Option<Compactor> = None;
    let mut len = 0u64;
    loop {
        let avail = reader.fill_buf()?;
        if avail.is_empty() {
            if eof_ends && len > 0 {
                let compacted = compactor.map(Compactor::finish);
                return Ok(Ok(NextLine { len, compacted }));
            }
            return Ok(Err(len));
        }
        let (take, newline) = match memchr::memchr(b'\n', avail) {
            Some(at) => (at, true),
            None => (avail.len(), false),
        };
        if let Some(c) = &mut compactor {
            c.feed(&avail[..take]);
        } else {
            buf.extend_from_slice(&avail[..take]);
            if let Some(path) = spans_of.filter(|_| buf.len() > bounds().0) {
                let mut c = Compactor::new(path.clone(), offset);
                c.feed(buf);
                *buf = Vec::new();
                compactor = Some(c);
            }
        }
        len += take as u64;
        reader.consume(take + usize::from(newline));
        if newline {
            return Ok(Ok(NextLine {
                len,
                compacted: compactor.map(Compactor::finish),
            }));
        }
    }
}

/// The longest torn last line [`settled_tail`] reads to see whether it is whole.
const SETTLED_TAIL_MAX: u64 = 16 << 20;

/// The bytes after the last newline of `path` (as `outcome` found them) when they are one
/// complete JSON value: a last line whose writer never added the newline. The caller decides
/// that the file is idle enough for that to be final (a line still being written is pending).
/// A tail over 16 MiB is not read.
pub(crate) fn settled_tail(path: &Path, outcome: &ReadOutcome) -> Option<Vec<u8>> {
    use std::io::Read;
    if outcome.pending_bytes == 0 || outcome.pending_bytes > SETTLED_TAIL_MAX {
        return None;
    }
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(outcome.cursor.offset)).ok()?;
    let mut tail = Vec::new();
    file.take(outcome.pending_bytes)
        .read_to_end(&mut tail)
        .ok()?;
    // The file may have grown or shrunk since: only the very bytes found count.
    if tail.len() as u64 != outcome.pending_bytes {
        return None;
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(&tail)
        .is_ok()
        .then_some(tail)
}

/// Calls `each` for every complete line of `path` of at most `cap` bytes, in order and numbered
/// as [`read_lines`] numbers them; a longer line is passed over without being held (a reader
/// that wants only small lines, such as `peek_value` answers, never holds a 200 MB result).
pub(crate) fn read_small_lines(
    path: &Path,
    cap: usize,
    mut each: impl FnMut(RawLine<'_>),
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(READ_BUFFER, File::open(path)?);
    let mut buf = Vec::new();
    let (mut number, mut offset) = (0u64, 0u64);
    loop {
        buf.clear();
        let (mut len, mut too_long) = (0u64, false);
        let complete = loop {
            let avail = reader.fill_buf()?;
            if avail.is_empty() {
                break false;
            }
            let (take, newline) = match memchr::memchr(b'\n', avail) {
                Some(at) => (at, true),
                None => (avail.len(), false),
            };
            too_long |= buf.len() + take > cap;
            if !too_long {
                buf.extend_from_slice(&avail[..take]);
            } else {
                buf.clear();
            }
            len += take as u64;
            reader.consume(take + usize::from(newline));
            if newline {
                break true;
            }
        };
        if !complete {
            return Ok(()); // the end, or a torn last line
        }
        number += 1;
        if !too_long {
            each(RawLine::whole(number, offset, &buf));
        }
        offset += len + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn small_lines_are_numbered_as_every_line_and_long_ones_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let long = "x".repeat(100);
        std::fs::write(&path, format!("one\n{long}\nthree\ntorn")).unwrap();
        let mut seen = Vec::new();
        read_small_lines(&path, 10, |l| {
            seen.push((
                l.number,
                l.offset,
                String::from_utf8(l.bytes.to_vec()).unwrap(),
            ))
        })
        .unwrap();
        assert_eq!(seen, [(1, 0, "one".into()), (3, 105, "three".into())]);
    }

    #[test]
    fn glued_values_are_split_and_other_lines_kept_whole() {
        let mut seen = Vec::new();
        let mut each = |l: RawLine<'_>| {
            seen.push((
                l.offset,
                String::from_utf8(l.bytes.to_vec()).unwrap(),
                l.glued,
            ))
        };
        split_glued(
            RawLine::whole(1, 10, br#"{"a":1}{"b":"}{"} {"c":3}"#),
            &mut each,
        );
        split_glued(RawLine::whole(2, 40, br#"{"text":"a }{ b"}"#), &mut each);
        split_glued(RawLine::whole(3, 60, br#"{"a":1}{"b":"#), &mut each);
        assert_eq!(
            seen,
            [
                (10, r#"{"a":1}"#.into(), Some((0, 3))),
                (17, r#"{"b":"}{"}"#.into(), Some((1, 3))),
                (28, r#"{"c":3}"#.into(), Some((2, 3))),
                (40, r#"{"text":"a }{ b"}"#.into(), None),
                (60, r#"{"a":1}{"b":"#.into(), None),
            ]
        );
        // Two objects meet where a key or the second's end follows `}{`, past any white
        // space; a `}{` inside a string (a quote in it is escaped) is passed over unparsed.
        for glued in [
            r#"{"a":1}{"b":2}"#,
            r#"{"a":1}{ "b":2}"#,
            "{\"a\":1}{\t\"b\":2}",
            r#"{"a":1}{}"#,
            r#"{"a":1}{"b":"#,
        ] {
            assert!(may_be_glued(glued.as_bytes()), "{glued}");
        }
        // Not parsed here: a `}{` followed by anything else cannot join two objects, whether
        // the line is one value or no value at all (it is read as one unreadable line).
        for whole in [
            r#"{"t":"x}{\"y\"}"}"#,
            r#"{"t":"\\frac{a}{b}"}"#,
            r#"{"t":"a }{ b"}"#,
            r#"{"t":"}{"}"#,
            r#"{"a":1}"#,
            r#"{"t":"a}{b"} {"c":1}"#,
            r#"{"t":"a}{b" broken"#,
        ] {
            assert!(!may_be_glued(whole.as_bytes()), "{whole}");
        }
    }

    #[test]
    fn torn_tail_is_pending_then_completed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, b"one\ntwo\nthr").unwrap();
        let mut seen = Vec::new();
        let out = read_lines(&path, Cursor::default(), |l| {
            seen.push((l.number, l.bytes.to_vec()))
        })
        .unwrap();
        assert_eq!(seen, [(1, b"one".to_vec()), (2, b"two".to_vec())]);
        assert_eq!(
            out.cursor,
            Cursor {
                offset: 8,
                lines: 2
            }
        );
        assert_eq!(out.pending_bytes, 3);

        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"ee\n")
            .unwrap();
        seen.clear();
        let out = read_lines(&path, out.cursor, |l| {
            seen.push((l.number, l.bytes.to_vec()))
        })
        .unwrap();
        assert_eq!(seen, [(3, b"three".to_vec())]);
        assert_eq!(out.pending_bytes, 0);
        assert_eq!(out.cursor.offset, 14);
    }

    #[test]
    fn one_line_is_read_at_its_offset_and_a_last_line_ends_at_the_end_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n{\"b\":2}").unwrap();
        let read = |offset| {
            read_transcript_line(&path, offset, |l| {
                String::from_utf8(l.bytes.to_vec()).unwrap()
            })
            .unwrap()
        };
        assert_eq!(read(0).as_deref(), Some("{\"a\":1}"));
        assert_eq!(read(8).as_deref(), Some("{\"b\":2}"));
        assert_eq!(read(15), None);
    }
}
