//! How much text a JSON string literal decodes to, found 64 bytes a step: what a listing needs
//! of a tool's output it keeps no text of (its bytes and lines), at the speed of reading it.
//!
//! Decoding stops at every escape, and a tool's output has one every few dozen bytes (`\n`
//! ends each line). Measuring need not: in a block of 64 bytes, its quotes, backslashes,
//! control characters and escape letters are found at once as bit masks (SSE2 compares), the
//! bytes an escape's backslash escapes are told by simdjson's carry trick (an odd run of
//! backslashes escapes the byte after it), and each escape takes one byte off the text. Only a
//! literal without `\u` escapes is measured (each other escape is two bytes for one): one with
//! any is left to the decoder ([`super::json_string::decode_leading`]).

use super::format_chars::is_format_char_at;
use super::json_string::Measured;

/// A literal's bytes of one kind in a block of 64, bit `k` for its byte `k`.
#[derive(Debug, Default, Clone, Copy)]
struct Masks {
    quotes: u64,
    backslashes: u64,
    /// Bytes below 0x20, which JSON text never holds raw.
    controls: u64,
    /// `n`: a newline when escaped.
    ns: u64,
    /// What may follow an escape's backslash, `u` aside: `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`.
    letters: u64,
    /// Bytes of 0x80 and above: of characters that are not ASCII (found only when asked for:
    /// see [`measure_leading`]).
    high: u64,
}

#[cfg(target_arch = "x86_64")]
fn masks<const HIGH: bool>(block: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    let mut m = Masks::default();
    // SAFETY: SSE2 is part of x86_64, and each load reads bytes 16k..16k+16 of the block.
    unsafe {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(block.as_ptr().add(16 * k).cast::<__m128i>());
            let is = |b: u8| _mm_cmpeq_epi8(v, splat(b));
            let bits = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u16) << (16 * k);
            let (quote, slash, n) = (is(b'"'), is(b'\\'), is(b'n'));
            // Unsigned `v <= 0x1f`: its maximum with 0x1f is 0x1f.
            let control = _mm_cmpeq_epi8(_mm_max_epu8(v, splat(0x1f)), splat(0x1f));
            let mut letter = _mm_or_si128(_mm_or_si128(quote, slash), n);
            for b in [b'/', b'b', b'f', b'r', b't'] {
                letter = _mm_or_si128(letter, is(b));
            }
            m.quotes |= bits(quote);
            m.backslashes |= bits(slash);
            m.controls |= bits(control);
            m.ns |= bits(n);
            m.letters |= bits(letter);
            // A byte's top bit: of a character that is not ASCII.
            if HIGH {
                m.high |= bits(v);
            }
        }
    }
    m
}

#[cfg(not(target_arch = "x86_64"))]
fn masks<const HIGH: bool>(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (k, &b) in block.iter().enumerate() {
        let bit = 1u64 << k;
        let set = |mask: &mut u64, yes: bool| *mask |= if yes { bit } else { 0 };
        set(&mut m.quotes, b == b'"');
        set(&mut m.backslashes, b == b'\\');
        set(&mut m.controls, b < 0x20);
        set(&mut m.ns, b == b'n');
        set(&mut m.letters, b"\"\\/bfnrt".contains(&b));
        set(&mut m.high, HIGH && b >= 0x80);
    }
    m
}

/// The bytes of a block that an escape's backslash escapes, given its backslashes and whether
/// the last block ended in an escaping backslash (`carry`, updated for the next block):
/// simdjson's `find_escaped`. A run of backslashes escapes every other one of its bytes and,
/// when its length is odd, the byte after it; the run's parity is read off where an addition
/// of its bits carries out of it.
fn escaped(backslashes: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslashes = backslashes & !*carry;
    let follows = (backslashes << 1) | *carry;
    let odd_starts = backslashes & !EVEN & !follows;
    let (even_runs, overflow) = odd_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    ((even_runs << 1) ^ EVEN) & follows
}

/// How much text the JSON string literal `json` starts with decodes to, and the literal's
/// length (its quotes included): `None` when it does not start with a whole literal, and for
/// one with a `\u` escape. What `decode_leading` decodes, measured. Its format characters are
/// the spelling's (no escape left stands for one): each character that is not ASCII is found
/// by its first byte in the block's masks, and only it is looked at.
pub(crate) fn measure_leading(json: &str) -> Option<(Measured, usize)> {
    scan_leading::<true>(json)
}

/// [`measure_leading`] without the format characters (none are counted): for a string whose
/// text only its size or validity matters of (Codex's encrypted reasoning, a quarter of a
/// rollout's bytes).
pub(crate) fn size_leading(json: &str) -> Option<(Measured, usize)> {
    scan_leading::<false>(json)
}

fn scan_leading<const FORMAT: bool>(json: &str) -> Option<(Measured, usize)> {
    let bytes = json.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let (mut at, mut carry) = (1, 0);
    let (mut escapes, mut newlines) = (0u64, 0u64);
    let mut format_chars = 0u64;
    // Whether the byte before the block is an escaped `n`.
    let mut newline_before = false;
    let mut tail = [b' '; 64];
    loop {
        let block: &[u8; 64] = match bytes.get(at..at + 64) {
            Some(block) => block.try_into().ok()?,
            None => {
                // The last bytes, padded with spaces (which are none of the bytes looked for).
                let rest = bytes.get(at..)?;
                tail[..rest.len()].copy_from_slice(rest);
                &tail
            }
        };
        let m = masks::<FORMAT>(block);
        let escaped = escaped(m.backslashes, &mut carry);
        let ends = m.quotes & !escaped;
        let end = ends.trailing_zeros();
        let before = match end {
            64 => !0,
            end => (1u64 << end) - 1,
        };
        let escaped = escaped & before;
        if m.controls & before != 0 || escaped & !m.letters != 0 {
            return None;
        }
        escapes += u64::from(escaped.count_ones());
        newlines += u64::from((escaped & m.ns).count_ones());
        // Only a character that is not ASCII may be one, and it is looked at where it starts
        // (not at its other bytes, 0x80 to 0xBF).
        let mut high = m.high & before;
        while high != 0 {
            let k = high.trailing_zeros() as usize;
            if block[k] >= 0xC0 {
                format_chars += u64::from(is_format_char_at(json, at + k));
            }
            high &= high - 1;
        }
        if end < 64 {
            let end = end as usize;
            let ends_in_newline = match end {
                0 => newline_before,
                _ => (escaped & m.ns) >> (end - 1) & 1 == 1,
            };
            let body = (at + end - 1) as u64;
            let text = Measured::of(body - escapes, newlines, ends_in_newline, format_chars);
            return Some((text, at + end + 1));
        }
        if at + 64 >= bytes.len() {
            return None;
        }
        newline_before = (escaped & m.ns) >> 63 == 1;
        at += 64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::count_format_chars;
    use super::super::json_string::decode_leading;
    use super::*;

    /// Every piece a measure must tell apart from the others, escapes most of all.
    const PIECES: &[&str] = &[
        "a",
        "n",
        "é",
        "🦀",
        "\\n",
        "\\\\",
        "\\\\n",
        "\\\\\\n",
        "\\\"",
        "\\/",
        "\\t",
        "\\r",
        "\\b",
        "\\f",
        "\\u00e9",
        "\\q",
        "\\",
        "\"",
        "\u{1}",
        "\u{1f}",
        " ",
        "x\u{7f}",
        "\u{200B}",
        "\u{202E}",
        "\u{AD}",
        "\u{FEFF}",
        "\u{E0041}",
        "\u{2500}",
        "\u{F8FF}",
    ];

    #[test]
    fn a_literal_measures_as_it_decodes_wherever_its_blocks_end() {
        let mut rng = fastrand::Rng::with_seed(3);
        let mut measured = 0;
        for round in 0..40_000 {
            let mut json = "\"".to_owned();
            // Long runs of plain text put each piece at every place in a block.
            for _ in 0..rng.usize(0..40) {
                match rng.u8(0..4) {
                    0 => json.push_str(&"x".repeat(rng.usize(0..70))),
                    _ => json.push_str(PIECES[rng.usize(..PIECES.len())]),
                }
            }
            if round % 7 != 0 {
                json.push('"');
            }
            json.push_str(
                [",\"x\":1}", "", "\"", "\\", ",\"\u{202E}\"", "\u{FEFF}"][rng.usize(..6)],
            );
            let decoded = (decode_leading::<Measured>(&json))
                .filter(|(m, _)| !m.unicode)
                .map(|(m, len)| (m.with_format_chars_of(&json[1..len - 1]), len));
            assert_eq!(measure_leading(&json), decoded, "{json:?}");
            let size = |m: Option<(Measured, usize)>| m.map(|(m, len)| (m.bytes, m.lines(), len));
            assert_eq!(size(size_leading(&json)), size(decoded), "{json:?}");
            if let (Some((m, _)), Some((text, _))) = (decoded, decode_leading::<String>(&json)) {
                assert_eq!(m.format_chars, count_format_chars(&text), "{json:?}");
            }
            measured += usize::from(decoded.is_some());
        }
        assert!(measured > 5_000, "{measured} literals measured");
    }

    #[test]
    fn escapes_across_blocks_are_counted_once() {
        for pad in 0..130 {
            for (tail, bytes, lines) in [
                ("\\n\"", 1, 1),
                ("\\\\n\"", 2, 1),
                ("\\\\\\n\"", 2, 1),
                ("\\n\\n\"", 2, 2),
                ("a\\nb\"", 3, 2),
            ] {
                let json = format!("\"{}{tail}", "x".repeat(pad));
                let (m, len) = measure_leading(&json).expect(&json);
                assert_eq!(len, json.len(), "{json}");
                assert_eq!((m.bytes, m.lines()), (pad as u64 + bytes, lines), "{json}");
            }
        }
    }
}
