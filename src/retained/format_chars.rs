//! Invisible format characters in a text: the bidirectional controls (U+202A–U+202E,
//! U+2066–U+2069, U+200E, U+200F, U+061C), the zero-width characters (U+200B–U+200D, U+2060–
//! U+2064) and the byte order mark (U+FEFF). A text holding any of them can be shown as other
//! than what the model got ("Trojan Source"); the views say so, and mark each one.

/// How many invisible format characters `text` holds. Every one of them is a three-byte
/// sequence led by 0xE2 or 0xEF except U+061C (0xD8 0x9C), so the scan jumps from lead byte to
/// lead byte.
pub fn count_format_chars(text: &[u8]) -> u64 {
    let mut n = 0;
    for i in memchr::memchr3_iter(0xE2, 0xEF, 0xD8, text) {
        let next = |k: usize| text.get(i + k).copied().unwrap_or(0);
        let hit = matches!(
            (text[i], next(1), next(2)),
            (0xD8, 0x9C, _)
                | (0xE2, 0x80, 0x8B..=0x8F | 0xAA..=0xAE)
                | (0xE2, 0x81, 0xA0..=0xA4 | 0xA6..=0xA9)
                | (0xEF, 0xBB, 0xBF)
        );
        n += u64::from(hit);
    }
    n
}

/// Whether `c` is one of the invisible format characters [`count_format_chars`] counts.
pub fn is_format_char(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_character_counts_and_nothing_else() {
        let marks = [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{200B}', '\u{200C}',
            '\u{200D}', '\u{2060}', '\u{2064}', '\u{FEFF}',
        ];
        for c in marks {
            assert!(is_format_char(c));
            let text = format!("a{c}b");
            assert_eq!(count_format_chars(text.as_bytes()), 1, "U+{:04X}", c as u32);
        }
        // Their visible neighbours (the same lead bytes): dashes, ellipsis, quotes, the Arabic
        // semicolon beside U+061C, a ligature beside U+FEFF.
        let visible = "— … ‘’ “” € ™ ∂ ؛ ب ﻻ";
        assert_eq!(count_format_chars(visible.as_bytes()), 0);
        assert!(!visible.chars().any(is_format_char));
        assert_eq!(
            count_format_chars("\u{202E}evil\u{202C} and \u{2066}x".as_bytes()),
            3
        );
    }
}
