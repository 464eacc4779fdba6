//! Invisible format characters in a text: Unicode's format characters (general category Cf),
//! among them the bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
//! U+061C), the zero-width characters, the byte order mark and the tag characters. A text
//! holding any of them can be shown as other than what the model got ("Trojan Source", hidden
//! tag text); the views say so and mark each one, as the UI's `\p{Cf}` does.

/// How many invisible format characters `text` holds. An ASCII text (most tool output) holds
/// none and is not decoded.
pub fn count_format_chars(text: &str) -> u64 {
    if text.is_ascii() {
        return 0;
    }
    text.chars().filter(|&c| is_format_char(c)).count() as u64
}

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
}
