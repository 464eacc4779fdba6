//! Decoding a JSON string as it streams by, a chunk at a time, with the checks a JSON parser
//! makes of its escapes (escape letters, surrogate pairs, control characters).

use super::count_format_chars;

/// Why a string is not valid JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeError(&'static str);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

const BAD_ESCAPE: DecodeError = DecodeError("invalid escape in a string");
const LONE_SURROGATE: DecodeError = DecodeError("lone surrogate in a string's hex escape");
const CONTROL: DecodeError = DecodeError("control character in a string");

#[derive(Debug, Default, Clone, Copy)]
enum State {
    #[default]
    Normal,
    Escape,
    Hex {
        digits: u8,
        value: u16,
    },
}

/// The byte a one-letter escape (`\\n`, `\\"`...) stands for; `None` for `\\u` and for what is
/// no escape.
fn simple_escape(letter: u8) -> Option<u8> {
    Some(match letter {
        b'"' | b'\\' | b'/' => letter,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    })
}

/// Whether a string's byte ends a run of plain text: its closing quote, an escape, or a control
/// character (which JSON text never holds raw). No short-circuit: a block is tested whole.
#[inline(always)]
fn special(b: u8) -> bool {
    (b == b'"') | (b == b'\\') | (b < 0x20)
}

/// Where the first [`special`] byte of `bytes` is. Tested 16 bytes at a time with no branch
/// per byte, which the compiler turns into vector compares: plain text, most of a tool's
/// output, is passed over a block a step (3–7× the speed of a byte at a time).
fn find_special(bytes: &[u8]) -> Option<usize> {
    const BLOCK: usize = 16;
    let mut at = 0;
    for block in bytes.chunks_exact(BLOCK) {
        let mut any = 0u8;
        for &b in block {
            any |= u8::from(special(b));
        }
        if any != 0 {
            break;
        }
        at += BLOCK;
    }
    bytes[at..].iter().position(|&b| special(b)).map(|j| at + j)
}

/// The escapes of one JSON string, undone as its raw bytes (after the opening quote) arrive.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    state: State,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    /// In the last [`feed`](Self::feed): the last place between escapes, as (raw bytes read,
    /// bytes decoded) — where decoding may restart even when the input ended inside an escape.
    last_clean: Option<(usize, usize)>,
}

impl Decoder {
    /// True between escapes: decoding may stop here and restart with a fresh decoder.
    pub(crate) fn clean(&self) -> bool {
        matches!(self.state, State::Normal) && self.high.is_none()
    }

    /// The last place between escapes in the last feed's input, as (raw bytes read, bytes
    /// decoded); the end of that input when the decoder is [`clean`](Self::clean) there.
    pub(crate) fn last_clean(&self, raw_len: usize, decoded: usize) -> Option<(usize, usize)> {
        if self.clean() {
            Some((raw_len, decoded))
        } else {
            self.last_clean
        }
    }

    /// Decodes `raw` onto `out`; `Some(n)` when the closing quote is byte `n - 1` of `raw`
    /// (what follows it is not read).
    pub(crate) fn feed(
        &mut self,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<usize>, DecodeError> {
        let mut i = 0;
        let start = out.len();
        self.last_clean = None;
        // Most input holds no control character (JSON text never does raw): it is checked for
        // one in a single vector pass, and then only quotes and backslashes stop the copy,
        // found by memchr. Input that holds one takes the scan that also stops at those.
        let plain = !raw.iter().fold(false, |any, &b| any | (b < 0x20));
        out.reserve(raw.len());
        while i < raw.len() {
            if self.clean() {
                self.last_clean = Some((i, out.len() - start));
            }
            match self.state {
                State::Normal => {
                    if self.high.is_some() {
                        // Only the low half's `\u` escape may follow a high surrogate.
                        if raw[i] != b'\\' {
                            return Err(LONE_SURROGATE);
                        }
                        self.state = State::Escape;
                        i += 1;
                        continue;
                    }
                    // Plain text and one-letter escapes, in one loop: text full of `\n`
                    // decodes at the speed of the scan, without a turn through the states.
                    loop {
                        let rest = &raw[i..];
                        let found = if plain {
                            memchr::memchr2(b'"', b'\\', rest)
                        } else {
                            find_special(rest)
                        };
                        let Some(j) = found else {
                            out.extend_from_slice(rest);
                            return Ok(None);
                        };
                        out.extend_from_slice(&rest[..j]);
                        match rest[j] {
                            b'"' => return Ok(Some(i + j + 1)),
                            b'\\' => match rest.get(j + 1).and_then(|&b| simple_escape(b)) {
                                Some(c) => {
                                    out.push(c);
                                    i += j + 2;
                                    // Between escapes: decoding may restart here.
                                    self.last_clean = Some((i, out.len() - start));
                                }
                                None => {
                                    i += j + 1;
                                    self.state = State::Escape;
                                    break;
                                }
                            },
                            _ => return Err(CONTROL),
                        }
                    }
                }
                State::Escape => {
                    let b = raw[i];
                    i += 1;
                    if self.high.is_some() && b != b'u' {
                        return Err(LONE_SURROGATE);
                    }
                    if b == b'u' {
                        self.state = State::Hex {
                            digits: 0,
                            value: 0,
                        };
                        continue;
                    }
                    let c = simple_escape(b).ok_or(BAD_ESCAPE)?;
                    out.push(c);
                    self.state = State::Normal;
                }
                State::Hex { digits, value } => {
                    let digit = (raw[i] as char).to_digit(16).ok_or(BAD_ESCAPE)? as u16;
                    i += 1;
                    let value = value << 4 | digit;
                    if digits < 3 {
                        self.state = State::Hex {
                            digits: digits + 1,
                            value,
                        };
                        continue;
                    }
                    self.state = State::Normal;
                    let code = match (self.high.take(), value) {
                        (Some(high), 0xDC00..=0xDFFF) => {
                            0x10000
                                + ((u32::from(high) - 0xD800) << 10)
                                + (u32::from(value) - 0xDC00)
                        }
                        (Some(_), _) | (None, 0xDC00..=0xDFFF) => return Err(LONE_SURROGATE),
                        (None, 0xD800..=0xDBFF) => {
                            self.high = Some(value);
                            continue;
                        }
                        (None, v) => u32::from(v),
                    };
                    let c = char::from_u32(code).ok_or(LONE_SURROGATE)?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
            }
        }
        Ok(None)
    }
}

/// Where a whole literal's decoded text goes ([`decode_leading`], [`decode_nested_leading`]):
/// a `String`, or [`Measured`] when only how much text there is counts (a listing).
pub(crate) trait Text: Sized {
    /// An empty text, for a literal of `len` bytes.
    fn for_literal(len: usize) -> Self;
    /// A run of the literal that decodes to itself (no `"`, `\\` or control character).
    fn run(&mut self, run: &str);
    /// The character a one-letter escape stands for.
    fn escaped(&mut self, c: char);
    /// The character a `\\u` escape stands for.
    fn unicode(&mut self, c: char) {
        self.escaped(c);
    }
}

impl Text for String {
    fn for_literal(len: usize) -> Self {
        String::with_capacity(len)
    }
    fn run(&mut self, run: &str) {
        self.push_str(run);
    }
    fn escaped(&mut self, c: char) {
        self.push(c);
    }
}

/// How much text a literal decodes to, counted instead of made: its bytes, its lines (as
/// `count_lines` counts them), its invisible format characters (as `count_format_chars`
/// counts them) and whether a `\\u` escape spelled any of it. A decoder's count (this as its
/// [`Text`]) leaves the format characters to [`with_format_chars_of`](Self::with_format_chars_of)
/// its spelling: one pass over it costs less than a look at each run between escapes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Measured {
    pub(crate) bytes: u64,
    newlines: u64,
    ends_in_newline: bool,
    pub(crate) format_chars: u64,
    /// Whether any character came from a `\\u` escape: then a character the text holds need
    /// not be spelled as itself in the literal.
    pub(crate) unicode: bool,
}

impl Measured {
    /// A text of `bytes` bytes, `newlines` newlines and `format_chars` format characters,
    /// none spelled as a `\\u` escape.
    pub(crate) fn of(bytes: u64, newlines: u64, ends_in_newline: bool, format_chars: u64) -> Self {
        Self {
            bytes,
            newlines,
            ends_in_newline,
            format_chars,
            unicode: false,
        }
    }

    /// This count with the format characters of the text spelled `spelled` (its literal's
    /// body, holding no `\\u` escape: any other escape stands for an ASCII character, so the
    /// format characters are the spelling's).
    pub(crate) fn with_format_chars_of(self, spelled: &str) -> Self {
        Self {
            format_chars: count_format_chars(spelled),
            ..self
        }
    }

    /// The text's lines, as `count_lines` counts them: its newlines, and one more for a last
    /// line without one.
    pub(crate) fn lines(&self) -> u64 {
        match self.bytes {
            0 => 0,
            _ => self.newlines + u64::from(!self.ends_in_newline),
        }
    }
}

impl Text for Measured {
    fn for_literal(_: usize) -> Self {
        Self::default()
    }
    fn run(&mut self, run: &str) {
        // A run holds no control character, so no newline.
        if !run.is_empty() {
            self.bytes += run.len() as u64;
            self.ends_in_newline = false;
        }
    }
    fn escaped(&mut self, c: char) {
        self.bytes += c.len_utf8() as u64;
        self.ends_in_newline = c == '\n';
        self.newlines += u64::from(c == '\n');
    }
    fn unicode(&mut self, c: char) {
        self.unicode = true;
        self.escaped(c);
    }
}

/// The text of the JSON string literal `json` starts with, decoded as serde_json does, and its
/// length in `json` (its quotes included): what follows it is not read; `None` when it does
/// not start with a whole string. Faster than serde_json on text full of escapes (a tool's
/// output, one `\\n` a line): a cold scan decodes every output this way.
///
/// Whole, the literal need not be decoded a piece at a time as [`Decoder`] does: its plain
/// runs are found eight bytes a step ([`next_special`]) and copied as the `str` slices they
/// are (a `str` cut before an ASCII byte is whole UTF-8), never checked again; a tool's output,
/// one `\n` every few dozen bytes, decodes about a fifth faster than through the decoder.
pub(crate) fn decode_leading<T: Text>(json: &str) -> Option<(T, usize)> {
    let (text, len) = decode_body(json.strip_prefix('"')?)?;
    Some((text, len + 1))
}

/// [`decode_leading`] of a literal's text after its opening quote: what it decodes to, and
/// how many bytes of `body` it took (its closing quote included).
fn decode_body<T: Text>(body: &str) -> Option<(T, usize)> {
    let bytes = body.as_bytes();
    let mut out = T::for_literal(body.len());
    // `at`: where the scan goes on; `plain`: where the plain run being passed over starts.
    let (mut at, mut plain) = (0, 0);
    loop {
        let special = next_special(bytes, at)?;
        out.run(&body[plain..special]);
        match bytes[special] {
            b'"' => return Some((out, special + 1)),
            b'\\' => {
                at = escape_into(&mut out, bytes, special + 1)?;
                plain = at;
            }
            // A control character, which JSON text never holds raw.
            _ => return None,
        }
    }
}

/// The escape whose letter is at `at` in `bytes` (after its `\\`) decoded into `out`: where
/// what follows it starts.
fn escape_into<T: Text>(out: &mut T, bytes: &[u8], at: usize) -> Option<usize> {
    let (c, next) = escaped(bytes, at)?;
    match bytes[at] {
        b'u' => out.unicode(c),
        _ => out.escaped(c),
    }
    Some(next)
}

/// The character an escape stands for, its letter at `at` in `bytes` (after its `\\`), and
/// where what follows it starts.
fn escaped(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let letter = *bytes.get(at)?;
    if letter == b'u' {
        let (c, len) = unicode_escape(bytes, at + 1, b"\\u")?;
        Some((c, at + 1 + len))
    } else {
        Some((char::from(simple_escape(letter)?), at + 1))
    }
}

/// A JSON string literal whose text is JSON text that opens with a string (a tool's output
/// written as a document, `{"output":"…",…}`, in a string), read by
/// [`decode_nested_leading`].
#[derive(Debug, PartialEq)]
pub(crate) struct Nested<T> {
    /// The inner string's text.
    pub(crate) inner: T,
    /// Where the inner string's text is spelled in the literal: from just after its opening
    /// quote to just before its closing one, as offsets into the literal.
    pub(crate) inner_at: std::ops::Range<usize>,
    /// The literal's text after the inner string's closing quote.
    pub(crate) rest: String,
    /// The literal's length, its quotes included.
    pub(crate) len: usize,
}

/// The literal `json` starts with, when its raw text opens with `head` (spelled as its text is
/// escaped in the literal, the inner string's opening quote last: `{\\"output\\":\\"`), read
/// in one pass as decoding it and then its inner string would read it. The inner string's plain
/// runs are the literal's own (a run of the literal holding no `"`, `\\` or control character
/// decodes to itself, and holds none of them either): only the literal's escapes are looked at
/// twice, and the literal's text is never held whole. `None` for any other literal, and for an
/// inner escape spelled other than plainly (its `\\u` digits escaped again): decoding twice
/// reads those.
pub(crate) fn decode_nested_leading<T: Text>(json: &str, head: &str) -> Option<Nested<T>> {
    let body = json.strip_prefix('"')?;
    if !body.starts_with(head) {
        return None;
    }
    let bytes = body.as_bytes();
    let mut inner = T::for_literal(body.len());
    let (mut at, mut plain) = (head.len(), head.len());
    loop {
        let special = next_special(bytes, at)?;
        inner.run(&body[plain..special]);
        // The literal's closing quote or a control character inside the inner string: no
        // document.
        if bytes[special] != b'\\' {
            return None;
        }
        let (c, next) = escaped(bytes, special + 1)?;
        let spelled_unicode = bytes[special + 1] == b'u';
        at = next;
        match c {
            '"' => {
                let (rest, len) = decode_body(&body[at..])?;
                let len = 1 + at + len;
                let inner_at = 1 + head.len()..1 + special;
                return Some(Nested {
                    inner,
                    inner_at,
                    rest,
                    len,
                });
            }
            // An inner escape: its letter is the literal's next character.
            '\\' => {
                let letter = match *bytes.get(at)? {
                    b'\\' => {
                        let (c, next) = escaped(bytes, at + 1)?;
                        at = next;
                        u8::try_from(c).ok()?
                    }
                    // The literal ends there.
                    b'"' => return None,
                    b => {
                        at += 1;
                        b
                    }
                };
                if letter == b'u' {
                    // Its digits, and a low half's `\\u`, as the literal spells them plainly.
                    let (c, len) = unicode_escape(bytes, at, b"\\\\u")?;
                    inner.unicode(c);
                    at += len;
                } else {
                    inner.escaped(char::from(simple_escape(letter)?));
                }
            }
            c if c < ' ' => return None,
            c if spelled_unicode => inner.unicode(c),
            c => inner.escaped(c),
        }
        plain = at;
    }
}

/// Where the first [`special`] byte of `bytes` at or after `at` is, looked for eight bytes at
/// a time: in a word, a byte that is `"` or `\\` (once xored with it, zero) or below 0x20 sets
/// its high bit in the mask, exactly for the lowest such byte (a borrow only runs upwards).
fn next_special(bytes: &[u8], mut at: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |word: u64, n: u64| word.wrapping_sub(ONES * n) & !word;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let quote = below(word ^ (ONES * u64::from(b'"')), 1);
        let slash = below(word ^ (ONES * u64::from(b'\\')), 1);
        let mask = (quote | slash | below(word, 0x20)) & HIGH;
        if mask != 0 {
            return Some(at + (mask.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    (bytes[at..].iter().position(|&b| special(b))).map(|j| at + j)
}

/// The character of the `\\u` escape whose four hex digits start at `at` (with its low half
/// after `low`, its `\\u` as `bytes` spell it, when it is a surrogate pair), and how many bytes
/// it took after the `\\u`; `None` for a bad digit or a lone surrogate, as serde_json refuses
/// them.
fn unicode_escape(bytes: &[u8], at: usize, low: &[u8]) -> Option<(char, usize)> {
    let hex = |at: usize| {
        let digits = bytes.get(at..at + 4)?;
        (digits.iter()).try_fold(0u32, |v, &d| Some(v << 4 | char::from(d).to_digit(16)?))
    };
    let high = hex(at)?;
    let (code, len) = match high {
        0xD800..=0xDBFF => {
            let (after, len) = (at + 4 + low.len(), 8 + low.len());
            if bytes.get(at + 4..after)? != low {
                return None;
            }
            let low = hex(after)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            (0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00), len)
        }
        0xDC00..=0xDFFF => return None,
        _ => (high, 4),
    };
    Some((char::from_u32(code)?, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retained::count_lines;

    /// The text of JSON string literal `json` (its quotes included): `None` when it is not one
    /// whole string.
    fn decode_literal(json: &str) -> Option<String> {
        decode_leading(json)
            .filter(|(_, len)| *len == json.len())
            .map(|(text, _)| text)
    }

    /// Decodes `json` (a JSON string with its quotes) fed `every` raw bytes at a time.
    fn decode_in_pieces(json: &str, every: usize) -> Result<Vec<u8>, DecodeError> {
        let raw = &json.as_bytes()[1..];
        let mut decoder = Decoder::default();
        let mut out = Vec::new();
        for (k, piece) in raw.chunks(every).enumerate() {
            if let Some(end) = decoder.feed(piece, &mut out)? {
                assert_eq!(
                    k * every + end,
                    raw.len(),
                    "the closing quote is the last byte"
                );
                return Ok(out);
            }
        }
        panic!("no closing quote in {json}");
    }

    #[test]
    fn a_whole_literal_decodes_as_serde_json_does() {
        for text in [
            "",
            "plain",
            "a\nb\t\"q\" \\ é 🦀 \u{1}",
            &"line\n".repeat(99),
        ] {
            let json = serde_json::to_string(text).unwrap();
            assert_eq!(decode_literal(&json).as_deref(), Some(text));
            let escaped = json.replace('é', "\\u00e9");
            assert_eq!(decode_literal(&escaped).as_deref(), Some(text));
        }
        for bad in [
            "",
            "plain",
            "\"open",
            "\"two\" \"",
            "\"\\ud800\"",
            "\"\\x\"",
        ] {
            assert_eq!(decode_literal(bad), None, "{bad}");
        }
    }

    /// Every piece a string's decoder meets: plain ASCII and wide characters, each escape
    /// (surrogate pairs, lone halves, bad digits), raw control characters, a lone backslash.
    const PIECES: &[&str] = &[
        "a",
        "é",
        "日",
        "🦀",
        // Wide characters holding a byte that is `"` or `\\` with its high bit set.
        "¢",
        "ܐ",
        "₢",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\t",
        "\\u00e9",
        "\\u0000",
        "\\ud83e\\udd80",
        "\\ud83e",
        "\\udd80",
        "\\ud83ex",
        "\\u12g4",
        "\\q",
        "\u{1}",
        "\u{1f}",
        " ",
        "\\",
    ];

    #[test]
    fn a_leading_literal_decodes_or_fails_as_serde_json_does() {
        // Literals of every piece a decoder meets, at every place in an eight-byte word: plain
        // ASCII and wide characters, each escape (surrogate pairs, lone halves, bad digits),
        // raw control characters and quotes; then what follows the literal.
        let pieces = PIECES;
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..20_000 {
            let mut json = "\"".to_owned();
            for _ in 0..rng.usize(0..24) {
                json.push_str(pieces[rng.usize(..pieces.len())]);
            }
            let rest = [", \"x\": 1}", "", "\""][rng.usize(..3)];
            json.push('"');
            json.push_str(rest);
            let ours = decode_leading(&json);
            let mut values = serde_json::Deserializer::from_str(&json).into_iter::<String>();
            let theirs = match values.next() {
                Some(Ok(s)) => Some((s, values.byte_offset())),
                _ => None,
            };
            assert_eq!(ours, theirs, "{json:?}");
            let measured = decode_leading::<Measured>(&json);
            assert_eq!(
                measured.map(|(m, len)| (m.bytes, m.lines(), m.unicode, len)),
                ours.map(|(text, len)| (
                    text.len() as u64,
                    count_lines(text.as_bytes()),
                    spells_unicode(&json[..len]),
                    len
                )),
                "{json:?}"
            );
        }
    }

    /// Whether the literal `json` holds a `\\u` escape.
    fn spells_unicode(json: &str) -> bool {
        let mut bytes = json.bytes();
        while let Some(b) = bytes.next() {
            if b == b'\\' && bytes.next() == Some(b'u') {
                return true;
            }
        }
        false
    }

    /// What a nested read gives, but where its inner text is spelled.
    type Read = (String, String, usize);

    fn read(nested: Nested<String>) -> Read {
        (nested.inner, nested.rest, nested.len)
    }

    /// A nested literal decoded in two passes: the literal, then the inner string after the
    /// text `head` (the inner string's opening quote not included).
    fn in_two_passes(json: &str, head: &str) -> Option<Read> {
        let (text, len) = decode_leading::<String>(json)?;
        let literal = text.strip_prefix(head)?;
        let (inner, at) = decode_leading(literal)?;
        let rest = literal[at..].to_owned();
        Some((inner, rest, len))
    }

    /// Checks a nested read of `json` against its measure and where it says its inner text is.
    fn measured_alike(json: &str, raw_head: &str, one: &Nested<String>) {
        let measured = decode_nested_leading::<Measured>(json, raw_head).expect(json);
        assert_eq!(measured.inner.bytes, one.inner.len() as u64, "{json}");
        assert_eq!(
            measured.inner.lines(),
            count_lines(one.inner.as_bytes()),
            "{json}"
        );
        assert_eq!(
            (&measured.rest, measured.len),
            (&one.rest, one.len),
            "{json}"
        );
        assert_eq!(measured.inner_at, one.inner_at, "{json}");
        let spelled = &json[one.inner_at.clone()];
        assert_eq!(one.inner_at.start, 1 + raw_head.len(), "{json}");
        assert!(json[one.inner_at.end..].starts_with('\\'), "{json}");
        if !measured.inner.unicode {
            // Spelled without `\\u`, the text holds what its spelling holds, letters and
            // wide characters alike.
            let wide = |s: &str| s.chars().filter(|c| !c.is_ascii()).collect::<String>();
            assert_eq!(wide(spelled), wide(&one.inner), "{json}");
        }
    }

    #[test]
    fn a_nested_literal_reads_in_one_pass_as_in_two() {
        // Documents whose inner string holds every piece its decoder meets (as in the test
        // above, one level down: escapes good and bad, raw control characters, a quote that
        // ends it early), written in a string as Codex writes them, and spelled other ways.
        // (Beside the pieces a literal's decoder meets, a raw newline and a raw quote: written
        // in the literal, they are its escapes.)
        let pieces: Vec<&str> = PIECES.iter().copied().chain(["\n", "\""]).collect();
        let rests = ["}", r#","metadata":{"exit_code":1}}"#, "", "\"x"];
        let head = r#"{"output":"#;
        let raw_head = r#"{\"output\":\""#;
        let mut rng = fastrand::Rng::with_seed(7);
        let mut taken = 0;
        for _ in 0..20_000 {
            let mut doc = format!("{head}\"");
            for _ in 0..rng.usize(0..16) {
                doc.push_str(pieces[rng.usize(..pieces.len())]);
            }
            doc.push('"');
            doc.push_str(rests[rng.usize(..rests.len())]);
            let written = serde_json::to_string(&doc).unwrap() + ["", "}}", " x"][rng.usize(..3)];
            let two = in_two_passes(&written, head);
            let one = decode_nested_leading(&written, raw_head);
            if let Some(one) = &one {
                measured_alike(&written, raw_head, one);
            }
            // As Codex writes it, a document read in two passes is read in one.
            assert_eq!(one.map(read), two, "{written}");
            taken += usize::from(two.is_some());
            for spelled in [
                written.replace('é', "\\u00e9"),
                written.replace('/', "\\/"),
                written.replace('0', "\\u0030"),
                written.replace("\\\\", "\\u005c"),
                // Past the head, which must stay as it is spelled.
                format!(
                    "\"{raw_head}{}",
                    written[1 + raw_head.len()..].replace("\\\"", "\\u0022")
                ),
            ] {
                if let Some(one) = decode_nested_leading(&spelled, raw_head) {
                    measured_alike(&spelled, raw_head, &one);
                    assert_eq!(Some(read(one)), in_two_passes(&spelled, head), "{spelled}");
                }
            }
        }
        assert!(taken > 1_000, "{taken} documents read in one pass");
        // Not a document of that head, and a literal that ends inside the inner string (right
        // after an inner `\\`, with text after it that would go on as the inner string).
        for json in [
            r#""{\"out\":\"x\"}""#,
            r#""{\"output\":\"x\\""#,
            r#""{\"output\":\"x\\"\"}""#,
            "\"{\\\"output\\\":\\\"x",
        ] {
            assert_eq!(
                decode_nested_leading::<String>(json, raw_head),
                None,
                "{json}"
            );
        }
    }

    #[test]
    fn decodes_as_serde_json_does_in_any_pieces() {
        let texts = [
            String::new(),
            "plain".repeat(40),
            "line\n".repeat(50),
            "quote \" back \\ slash / tab\t cr\r ff\u{c} bs\u{8}".repeat(9),
            "é 日本 🦀 \u{1} \u{1f}".repeat(13),
            format!("{}\n{}", "x".repeat(31), "y".repeat(33)),
        ];
        for text in &texts {
            let json = serde_json::to_string(text).unwrap();
            // The same text with every character escaped as `\uXXXX`, surrogate pairs too.
            let escaped: String = text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            for json in [
                json.clone(),
                format!("\"{escaped}\""),
                json.replace('/', "\\/"),
            ] {
                for every in [1, 2, 3, 7, 31, 32, 33, 4096] {
                    let got = decode_in_pieces(&json, every).unwrap();
                    assert_eq!(String::from_utf8(got).unwrap(), *text, "{json} by {every}");
                }
            }
        }
    }

    #[test]
    fn a_control_character_past_the_closing_quote_changes_nothing() {
        // Input holding one takes the scan that also stops at control characters: the string
        // still ends at its quote, and its restart points are those of plain input.
        let raw = b"log\\nline\\n\\u00e9 done\" , \"x\": \"\x01\"";
        let plain = &raw[..raw.iter().position(|&b| b == b',').unwrap()];
        let mut out = [Vec::new(), Vec::new()];
        let mut decoders = [Decoder::default(), Decoder::default()];
        let ends = [
            decoders[0].feed(raw, &mut out[0]).unwrap(),
            decoders[1].feed(plain, &mut out[1]).unwrap(),
        ];
        assert_eq!(ends[0], ends[1]);
        assert_eq!(
            ends[0],
            Some(raw.iter().position(|&b| b == b'"').unwrap() + 1)
        );
        assert_eq!(out[0], "log\nline\n\u{e9} done".as_bytes());
        assert_eq!(out[0], out[1]);
        assert_eq!(decoders[0].last_clean, decoders[1].last_clean);
    }

    #[test]
    fn refuses_what_json_refuses_wherever_a_piece_ends() {
        let bad = [
            ("\"a\\qb\"", BAD_ESCAPE),
            ("\"a\\u12g4\"", BAD_ESCAPE),
            (concat!("\"", "\u{1}", "\""), CONTROL),
            ("\"\\ud800x\"", LONE_SURROGATE),
            ("\"\\udc00\"", LONE_SURROGATE),
            ("\"\\ud800\\n\"", LONE_SURROGATE),
        ];
        for (json, error) in bad {
            for every in [1, 2, 5, 64] {
                assert_eq!(
                    decode_in_pieces(json, every),
                    Err(error),
                    "{json:?} by {every}"
                );
            }
        }
    }

    #[test]
    fn finds_the_first_special_byte_in_any_block() {
        for len in [0, 1, 31, 32, 33, 64, 100] {
            for at in 0..len {
                for special_byte in [b'"', b'\\', b'\n', 0x1f, 0] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special_byte;
                    if at + 1 < len {
                        bytes[len - 1] = b'"';
                    }
                    assert_eq!(find_special(&bytes), Some(at), "{len} {at} {special_byte}");
                }
            }
            assert_eq!(find_special(&vec![0x20u8; len]), None);
            assert_eq!(find_special(&vec![0xffu8; len]), None);
        }
    }
}
