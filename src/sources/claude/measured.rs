//! A tool's output in a Claude Code listing, measured rather than read: a listing keeps no
//! output's text, and decoding each one (a fifth of a session's bytes) only to count its bytes,
//! lines and format characters cost more than reading the line. The output's JSON string is
//! measured as it is spelled ([`measure_leading`]); what a spelling cannot tell is read as
//! before (content blocks, a `\u` escape, a `<persisted-output>` stub).

use super::persisted::STUB_PREFIX;
use crate::fold::ForeignResult;
use crate::retained::json_measure::measure_leading;
use serde_json::value::RawValue;

/// A result's `content` that is a string, measured on its spelling as `ForeignResult::inline`
/// classifies its text: `None` when that needs the text (blocks, a `\u` escape, a stub).
pub(super) fn measured(id: &str, content: &RawValue) -> Option<ForeignResult> {
    let json = content.get();
    let (text, len) = measure_leading(json)?;
    let spelled = json
        .get(1..len.checked_sub(1)?)
        .filter(|_| len == json.len())?;
    // A stub is classified by what it names. A measured spelling holds no `\u` escape, and
    // no other escape stands for a character of the stub's mark: the text starts with the
    // mark exactly when its spelling does.
    if spelled.starts_with(STUB_PREFIX) {
        return None;
    }
    ForeignResult::inline_spelled(id, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What tools' outputs hold, and every piece a measure must not be fooled by.
    const PIECES: &[&str] = &[
        "plain output ",
        "\n",
        "\r\n",
        "\t",
        "\"quoted\"",
        "\\",
        "\\n",
        "/",
        "é",
        "✓",
        "🦀",
        "\u{200B}",
        "\u{202E}",
        "\u{FEFF}",
        "\u{1}",
        "\u{7f}",
        "<",
        STUB_PREFIX,
        "</persisted-output>",
    ];

    /// `text` spelled as JSON: as Claude Code writes it, or with some characters escaped
    /// another way (`\/`, `\u` escapes, as other writers do).
    fn spellings(text: &str) -> Vec<String> {
        let plain = serde_json::to_string(text).unwrap();
        vec![
            plain.clone(),
            plain.replace('/', "\\/"),
            plain.replace('<', "\\u003c"),
            plain.replace('é', "\\u00e9"),
            plain.replace('\u{200B}', "\\u200b"),
        ]
    }

    #[test]
    fn a_measured_output_is_classified_as_its_text() {
        let mut rng = fastrand::Rng::with_seed(36);
        let (mut measured_n, mut stubs) = (0, 0);
        for _ in 0..30_000 {
            let mut text = String::new();
            for _ in 0..rng.usize(0..12) {
                text.push_str(PIECES[rng.usize(..PIECES.len())]);
            }
            for json in spellings(&text) {
                let raw = RawValue::from_string(json.clone()).unwrap();
                let decoded: String = serde_json::from_str(&json).unwrap();
                assert_eq!(decoded, text);
                match measured("toolu_1", &raw) {
                    Some(class) => {
                        measured_n += 1;
                        assert_eq!(class, ForeignResult::inline("toolu_1", &text), "{json}");
                        assert!(!text.starts_with(STUB_PREFIX), "a stub is read: {json}");
                    }
                    None => {
                        stubs += usize::from(text.starts_with(STUB_PREFIX));
                        // Only a `\u` escape or a stub makes a string unmeasured.
                        assert!(
                            json.contains("\\u") || text.starts_with(STUB_PREFIX),
                            "measured: {json}"
                        );
                    }
                }
            }
        }
        assert!(measured_n > 80_000, "most outputs measured: {measured_n}");
        assert!(stubs > 5_000, "stubs met: {stubs}");
    }

    #[test]
    fn blocks_and_other_values_are_read_not_measured() {
        for json in [
            r#"[{"type":"text","text":"out"}]"#,
            "null",
            "7",
            r#"{"text":"x"}"#,
            r#""<persisted-output>\nOutput too large""#,
            r#""\u003cpersisted-output>\nOutput too large""#,
            r#""a \u00e9 b""#,
        ] {
            let raw = RawValue::from_string(json.to_owned()).unwrap();
            assert_eq!(measured("toolu_1", &raw), None, "{json}");
        }
    }
}
