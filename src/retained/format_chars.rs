//! Invisible format characters in a text: Unicode's format characters (general category Cf),
//! among them the bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
//! U+061C), the zero-width characters, the byte order mark and the tag characters. A text
//! holding any of them can be shown as other than what the model got ("Trojan Source", hidden
//! tag text); the views say so and mark each one, as the UI's `\p{Cf}` does.

/// How many invisible format characters `text` holds. Runs of ASCII (most tool output) are
/// passed over a word at a time, and only a character whose first byte can start a format
/// character is decoded: this runs over every result a listing reads.
pub fn count_format_chars(text: &str) -> u64 {
    const HIGH: u128 = u128::from_ne_bytes([0x80; 16]);
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut at = 0;
    while at < bytes.len() {
        if let Some(word) = bytes.get(at..at + 16) {
            let word = u128::from_ne_bytes(word.try_into().unwrap_or_default());
            if word & HIGH == 0 {
                at += 16;
                // In a run of ASCII, 64 bytes a step, each block's bytes or-ed together with
                // no branch per byte (vector instructions). (Not tried right after a character
                // that is not: text dense with them would test each block in vain.)
                while let Some(block) = bytes.get(at..at + 64) {
                    if block.iter().fold(0u8, |any, &b| any | b) & 0x80 != 0 {
                        break;
                    }
                    at += 64;
                }
                continue;
            }
        }
        let (format, len) = char_at(text, at);
        count += u64::from(format);
        at += len;
    }
    count
}

/// Whether the character that starts at `at` in `text` is a format character: a text counted
/// a character at a time (`json_measure` finds the characters that are not ASCII by their
/// first bytes, and looks at only them).
pub(crate) fn is_format_char_at(text: &str, at: usize) -> bool {
    char_at(text, at).0
}

/// Whether the character that starts at `at` in `text` is a format character, and its length
/// in bytes.
fn char_at(text: &str, at: usize) -> (bool, usize) {
    let bytes = text.as_bytes();
    let lead = bytes[at];
    let len = match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    };
    // Of the three-byte leads most common in a tool's output, only U+2000–U+207F (`E2 80`,
    // `E2 81`) and U+FE00–U+FFFF (`EF B8`–`EF BF`) hold format characters: box drawing,
    // arrows and marks (`E2 94`, `E2 86`, `E2 9C`) and private-use icons (`EF 80`) are
    // passed over undecoded.
    let second = bytes.get(at + 1).copied().unwrap_or(0);
    let may_be = match lead {
        0xE2 => second <= 0x81,
        0xEF => second >= 0xB8,
        _ => MAY_START[lead as usize],
    };
    let format = may_be
        && (text.get(at..))
            .and_then(|rest| rest.chars().next())
            .is_some_and(is_format_char);
    (format, len)
}

/// The first bytes of the UTF-8 encodings of the format characters ([`is_format_char`]).
static MAY_START: [bool; 256] = {
    let mut table = [false; 256];
    let leads = [0xC2, 0xD8, 0xDB, 0xDC, 0xE0, 0xE1, 0xE2, 0xEF, 0xF0, 0xF3];
    let mut i = 0;
    while i < leads.len() {
        table[leads[i] as usize] = true;
        i += 1;
    }
    table
};

/// How the views and `mctl` show format character `c`: `⟨U+202E⟩`.
pub fn format_label(c: char) -> String {
    format!("⟨U+{:04X}⟩", c as u32)
}

/// Whether `c` is a format character (general category Cf, Unicode 15.1).
pub fn is_format_char(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061C}'
            | '\u{06DD}'
            | '\u{070F}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08E2}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{110BD}'
            | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}'
            | '\u{E0020}'..='\u{E007F}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_character_counts_and_nothing_else() {
        let marks = [
            '\u{202A}',
            '\u{202B}',
            '\u{202C}',
            '\u{202D}',
            '\u{202E}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200E}',
            '\u{200F}',
            '\u{061C}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{2064}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{180E}',
            '\u{206A}',
            '\u{FFF9}',
            '\u{E0001}',
            '\u{E0041}',
        ];
        for c in marks {
            assert!(is_format_char(c));
            let text = format!("a{c}b");
            assert_eq!(count_format_chars(&text), 1, "U+{:04X}", c as u32);
        }
        // Their visible neighbours: dashes, ellipsis, quotes, the Arabic semicolon beside
        // U+061C, a ligature beside U+FEFF, a replacement character beside U+FFF9–U+FFFB.
        let visible = "— … ‘’ “” € ™ ∂ ؛ ب ﻻ � ascii";
        assert_eq!(count_format_chars(visible), 0);
        assert!(!visible.chars().any(is_format_char));
        assert_eq!(count_format_chars("\u{202E}evil\u{202C} and \u{2066}x"), 3);
    }

    #[test]
    fn the_byte_scan_counts_what_decoding_every_character_counts() {
        // Every character there is, after ASCII runs of each length that moves the word
        // boundaries, and each format character inside long ASCII runs.
        let every: String = (0..=0x10FFFF).filter_map(char::from_u32).collect();
        let decoded = |t: &str| t.chars().filter(|&c| is_format_char(c)).count() as u64;
        for pad in [0, 1, 7, 15] {
            let text = format!("{}{every}", "x".repeat(pad));
            assert_eq!(
                count_format_chars(&text),
                decoded(&text),
                "after {pad} bytes"
            );
        }
        let sparse: String = (every.chars().filter(|&c| is_format_char(c)))
            .map(|c| format!("{}{c}", "y".repeat(21)))
            .collect();
        assert_eq!(count_format_chars(&sparse), decoded(&sparse));
        assert!(decoded(&sparse) > 150);
        // ASCII ending on a block's edge, or just past it, and a mark at either end.
        for len in [0, 1, 15, 16, 17, 63, 64, 65, 80, 127, 128, 129, 1000] {
            let ascii = "z".repeat(len);
            assert_eq!(count_format_chars(&ascii), 0, "{len}");
            let marked = format!("\u{202E}{ascii}\u{200B}");
            assert_eq!(count_format_chars(&marked), 2, "{len}");
        }
    }
}
