//! A full value folded into an export, cleaned as it is read: a value of hundreds of
//! megabytes goes from its file to the document a piece at a time, never whole in memory.
//!
//! Each piece is cleaned as [`super::visible`] cleans a whole text, and the pieces joined are
//! the same text byte for byte: a piece ends at a line end (escape sequences and every
//! secret's shape but one end there too) with no `=` or `:` within four bytes either side of
//! it, where no `key = value` assignment can span the cut; the private key blocks that do span
//! lines are followed across pieces ([`PieceRedactor`]). Only a line with no such place for a
//! whole [`MAX_PIECE`] is cut elsewhere, at a line end or a character's start.

use super::redact::PieceRedactor;
use super::Redactor;
use std::io::{self, Read};

/// What a piece aims at.
pub(crate) const PIECE: usize = 1 << 20;
/// A piece with no clean place to end is cut here.
const MAX_PIECE: usize = 8 << 20;
/// How near a cut an `=` or `:` may be and still let an assignment span it: the rule allows
/// three blanks and a quote between the sign and the value, or the key.
const NEAR: usize = 4;

/// Reads `text` to its end and hands each piece of it, cleaned, to `out`; `piece` is the size
/// aimed at ([`PIECE`], smaller in tests).
pub(crate) fn clean_pieces(
    text: &mut impl Read,
    redactor: &mut Redactor,
    piece: usize,
    out: &mut impl FnMut(&str) -> io::Result<()>,
) -> io::Result<()> {
    let mut keys = PieceRedactor::default();
    let mut buf: Vec<u8> = Vec::with_capacity(piece.min(PIECE) + NEAR + 1);
    let mut want = piece;
    let mut eof = false;
    loop {
        while !eof && buf.len() < want {
            let at = buf.len();
            buf.resize(want, 0);
            let n = text.read(&mut buf[at..])?;
            buf.truncate(at + n);
            eof = n == 0;
        }
        if buf.is_empty() {
            return Ok(());
        }
        let cut = match (eof, clean_cut(&buf)) {
            (true, _) => buf.len(),
            (false, Some(cut)) => cut,
            (false, None) if buf.len() < MAX_PIECE.max(piece) => {
                want = (buf.len() * 2).min(MAX_PIECE.max(piece));
                continue;
            }
            (false, None) => forced_cut(&buf),
        };
        let piece_text = String::from_utf8_lossy(&buf[..cut]);
        let cleaned = super::visible(&piece_text, |t| keys.redact(redactor, t));
        out(&cleaned)?;
        buf.drain(..cut);
        want = piece;
    }
}

/// Just past the last line end of `buf` with no `=` or `:` near it once the escape sequences
/// around it are taken out (the rules see the text without them), and the line after it
/// already read whole.
fn clean_cut(buf: &[u8]) -> Option<usize> {
    // The line after the cut must be whole: an escape sequence can run to its end.
    let mut next_end = memchr::memrchr(b'\n', buf)?;
    let mut end = next_end.checked_sub(1)?;
    while let Some(nl) = memchr::memrchr(b'\n', &buf[..=end]) {
        let start = memchr::memrchr(b'\n', &buf[..nl]).map_or(0, |p| p + 1);
        if !sign_near(&buf[start..nl], &buf[nl + 1..next_end]) {
            return Some(nl + 1);
        }
        next_end = nl;
        end = nl.checked_sub(1)?;
    }
    None
}

/// Whether an `=` or `:` lies within [`NEAR`] characters of the line end between `before` and
/// `after` (two whole lines) once their escape sequences are taken out: an assignment could then
/// span it. Escape sequences never span a line end, so each line is stripped alone.
fn sign_near(before: &[u8], after: &[u8]) -> bool {
    let sign = |b: &u8| *b == b'=' || *b == b':';
    if !before.contains(&0x1b) && !after.contains(&0x1b) {
        let (b, a) = (
            &before[before.len().saturating_sub(NEAR)..],
            &after[..after.len().min(NEAR)],
        );
        return b.iter().any(sign) || a.iter().any(sign);
    }
    let before = super::strip_escapes(&String::from_utf8_lossy(before));
    let after = super::strip_escapes(&String::from_utf8_lossy(after));
    let tail = before
        .chars()
        .rev()
        .take(NEAR)
        .any(|c| c == '=' || c == ':');
    tail || after.chars().take(NEAR).any(|c| c == '=' || c == ':')
}

/// Where to cut a buffer with no clean place: after its last line end, else at the start of
/// its last character.
fn forced_cut(buf: &[u8]) -> usize {
    if let Some(nl) = memchr::memrchr(b'\n', buf) {
        return nl + 1;
    }
    (1..buf.len())
        .rev()
        .find(|&i| buf[i] & 0xC0 != 0x80)
        .unwrap_or(buf.len())
}

/// The longest run of backticks in a text read in pieces (a Markdown fence must be longer).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Ticks {
    run: usize,
    pub longest: usize,
}

impl Ticks {
    pub(crate) fn feed(&mut self, text: &str) {
        for b in text.bytes() {
            self.run = if b == b'`' { self.run + 1 } else { 0 };
            self.longest = self.longest.max(self.run);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str) -> (String, String) {
        let mut r = Redactor::new(true);
        let out = super::super::visible(text, |t| r.redact(t));
        (out, r.counts.describe())
    }

    fn pieced(text: &str, piece: usize) -> (String, String) {
        let mut r = Redactor::new(true);
        let mut out = String::new();
        clean_pieces(&mut text.as_bytes(), &mut r, piece, &mut |p| {
            out.push_str(p);
            Ok(())
        })
        .unwrap();
        (out, r.counts.describe())
    }

    /// Every secret, escape and line ending gives the same text read whole or in pieces of
    /// any size, whatever lines the cuts fall between.
    #[test]
    fn pieces_clean_as_the_whole_text_does() {
        let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----";
        let lines = [
            "plain line of a build log",
            "export DB_PASSWORD=\n  hunter2hunter2",
            "password:\n\"correct-horse-battery\"",
            "token = \r\n abcdef123456",
            key,
            "AKIAIOSFODNN7EXAMPLE in \u{1b}[31mred\u{1b}[0m",
            "-----BEGIN EC PRIVATE KEY-----\n-----BEGIN EC PRIVATE KEY-----\nxx\n-----END EC PRIVATE KEY-----",
            "é ü ☃ \u{202e} \u{7}",
            "postgres://admin:s3cr3t-Pass@db.internal:5432/app",
            "```` fence ```",
            // Signs brought next to a line end by the escape sequences taken out.
            "password\n\u{1b}[0m=hunter2hunter2",
            "API_TOKEN=\u{1b}[0m\n  abcdef123456",
            "secret\n\u{1b}]0;a long window title\u{7}: s3cr3t-value-9",
            // A value before a key block that is still open where a piece ends.
            "password=hunter2-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
        ];
        let mut text = String::new();
        for i in 0..60 {
            text.push_str(lines[i % lines.len()]);
            text.push('\n');
        }
        // A key block never ended runs to the end of the text.
        let cut_key = format!("{text}-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIx\nand more\n");
        for text in [&text, &cut_key] {
            let expected = whole(text);
            assert!(expected.1.contains("private-key"), "{}", expected.1);
            for piece in [1, 7, 16, 33, 64, 100, 257, 1 << 20] {
                assert_eq!(pieced(text, piece), expected, "pieces of {piece}");
            }
        }
    }

    /// A line with no clean place to cut is cut at a character's start, never inside one.
    #[test]
    fn a_long_line_is_cut_between_characters() {
        let text = "é=".repeat(5 << 20);
        let (out, _) = pieced(&text, 1 << 20);
        assert_eq!(out, text);
    }

    #[test]
    fn ticks_are_counted_across_pieces() {
        let mut t = Ticks::default();
        for p in ["a``", "``b", "`c"] {
            t.feed(p);
        }
        assert_eq!(t.longest, 4);
    }
}
