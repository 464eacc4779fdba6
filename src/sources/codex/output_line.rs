//! A tool's output line as Codex writes it, read without a JSON parser's pass over the output
//! (most of a rollout's bytes, dense with escapes): `{"timestamp":"…","type":"response_item",
//! "payload":{"type":"function_call_output","call_id":"…","output":"…"}}`, byte for byte, its
//! two short strings holding no escape. Any other line, or one whose output does not read so,
//! is parsed whole (and its damage reported as before).
//!
//! A timeline reads the output's text ([`OutputLine::output`]). A listing only measures it
//! ([`OutputLine::measured`]): what `classify` reads of the text (its bytes, lines and format
//! characters, and whether Codex cut it) and whether the command succeeded are counted on the
//! literal as the line spells it, the text never made. An output a count cannot tell for
//! certain is read whole, as a timeline reads it:
//!
//! - one that spells any character as a `\u` escape: every other escape stands for a
//!   character that is neither a letter nor a wide one, so the text's letters and wide
//!   characters are then the literal's own, in the same runs;
//! - one whose literal holds `truncated` or `omitted` (every cut mark holds one of them);
//! - a text that opens with `{` (read as a document), and one with no header before its
//!   output (`\nOutput:`) whose literal holds what an exit code's statement opens with.

use super::fold::{doc_rest, header_says_ok, output_leading, DOC_HEAD};
use crate::fold::ForeignResult;
use crate::retained::json_measure::measure_leading;
use crate::retained::json_string::{decode_leading, decode_nested_leading, Measured};
use crate::transcript::needle;

needle!(TRUNCATED, b"truncated");
needle!(OMITTED, b"omitted");
needle!(EXIT_CODE, b"Exit code:");
needle!(EXITED, b"Process exited with code");
needle!(HEADER_END, br"\nOutput:");

#[derive(Debug, PartialEq)]
pub(super) struct OutputLine<'a> {
    pub(super) timestamp: &'a str,
    pub(super) call_id: &'a str,
    /// The output's literal, and what follows it on the line.
    literal: &'a str,
}

impl<'a> OutputLine<'a> {
    /// The line's parts, when it is spelled as Codex writes an output line.
    pub(super) fn of(text: &'a str) -> Option<Self> {
        const TYPES: &str =
            r#","type":"response_item","payload":{"type":"function_call_output","call_id":""#;
        let rest = text.strip_prefix(r#"{"timestamp":""#)?;
        let (timestamp, rest) = plain_string(rest)?;
        let (call_id, rest) = plain_string(rest.strip_prefix(TYPES)?)?;
        let literal = rest.strip_prefix(r#","output":"#)?;
        Some(Self {
            timestamp,
            call_id,
            literal,
        })
    }

    /// The output's text and whether it succeeded, as `output_of` reads them.
    pub(super) fn output(&self) -> Option<(String, bool)> {
        let (output, len) = output_leading(self.literal)?;
        self.ends_after(len).then_some(output)
    }

    /// The output as `classify` reads its text, and whether it succeeded, counted on its
    /// literal; `None` when the text must be read to tell (see the module's doc).
    pub(super) fn measured(&self) -> Option<(ForeignResult, bool)> {
        let (class, ok, len) = measure_output(self.call_id, self.literal)?;
        self.ends_after(len).then_some((class, ok))
    }

    /// Whether the line ends right after an output literal of `len` bytes.
    fn ends_after(&self, len: usize) -> bool {
        &self.literal[len..] == "}}"
    }
}

/// The text before the first `"` of `rest` and what follows that quote, when the text holds
/// no escape and no control character (a JSON string that decodes to itself).
pub(super) fn plain_string(rest: &str) -> Option<(&str, &str)> {
    let end = rest
        .bytes()
        .position(|b| b == b'"' || b == b'\\' || b < 0x20)?;
    (rest.as_bytes()[end] == b'"').then(|| (&rest[..end], &rest[end + 1..]))
}

/// The output literal `literal` starts with, measured: what `classify` gives of its text,
/// whether it succeeded, and the literal's length.
fn measure_output(id: &str, literal: &str) -> Option<(ForeignResult, bool, usize)> {
    // A cut output is looked for first: it is decoded then, never measured as well.
    let bytes = literal.as_bytes();
    if TRUNCATED.find(bytes).is_some() || OMITTED.find(bytes).is_some() {
        return None;
    }
    if let Some(doc) = decode_nested_leading::<Measured>(literal, DOC_HEAD) {
        // A document whose rest says it is none is read as text, whole.
        let ok = doc_rest(&doc.rest)?;
        let text = doc.inner.with_format_chars_of(&literal[doc.inner_at]);
        let class = ForeignResult::inline_spelled(id, text)?;
        return Some((class, ok, doc.len));
    }
    let (text, len) = measure_leading(literal)?;
    let spelled = &literal[1..len - 1];
    if spelled.starts_with('{') {
        return None;
    }
    let class = ForeignResult::inline_spelled(id, text)?;
    Some((class, says_ok(spelled)?, len))
}

/// Whether a text spelled `spelled` (no `\u` escape) says its command succeeded, read off its
/// header as `output_text` reads it: `None` when that needs the whole text.
fn says_ok(spelled: &str) -> Option<bool> {
    let bytes = spelled.as_bytes();
    let mut from = 0;
    while let Some(found) = HEADER_END.find(&bytes[from..]) {
        let at = from + found;
        // The newline's escape: its backslash is not itself escaped (an odd run of them).
        let slashes = bytes[..=at]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if slashes % 2 == 1 {
            let (header, _) = decode_leading::<String>(&format!("\"{}\"", &spelled[..at]))?;
            return Some(header_says_ok(&header));
        }
        from = at + 1;
    }
    // No header: an exit code would be read off the whole text.
    let states = EXIT_CODE.find(bytes).is_some() || EXITED.find(bytes).is_some();
    (!states).then_some(true)
}

#[cfg(test)]
mod tests {
    use super::super::fold::{classify, output_of};
    use super::*;

    fn line(output: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-05-11T08:27:23.709Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_Y2p6","output":{output}}}}}"#
        )
    }

    #[test]
    fn an_output_line_reads_without_its_parse_as_with_it() {
        #[derive(serde::Deserialize)]
        struct Whole<'a> {
            #[serde(borrow)]
            timestamp: &'a str,
            payload: Payload,
        }
        #[derive(serde::Deserialize)]
        struct Payload {
            call_id: String,
            output: Box<serde_json::value::RawValue>,
        }
        let outputs = [
            r#""Exit code: 0\nOutput:\nok\n""#,
            r#""quotes \" and \\ and \/ \b\f\r\t é \u00e9 \ud83d\ude00 ✓""#,
            r#""{\"output\":\"done\\n\",\"metadata\":{\"exit_code\":1}}""#,
            r#""""#,
        ];
        for output in outputs {
            let text = line(output);
            let whole: Whole<'_> = serde_json::from_str(&text).unwrap();
            let read = OutputLine::of(&text).expect(output);
            assert_eq!(read.timestamp, whole.timestamp);
            assert_eq!(read.call_id, whole.payload.call_id);
            assert_eq!(read.output(), Some(output_of(Some(&whole.payload.output))));
        }
        // Anything else is parsed whole: a lone surrogate (which the parse reads as no text),
        // a control character, a bad escape, another spelling or order, more fields, a
        // non-string output, an escape in the short strings.
        let refused = [
            line(r#""a \ud83d b""#),
            line("\"a \u{1} b\""),
            line(r#""a \x b""#),
            line(r#""ok" "#),
            line(r#"["ok"]"#),
            line(r#""ok","extra":1"#),
            line(r#""ok"}, "x": 1"#),
            line(r#""ok"}}"#),
            line(r#""ok""#).replace("\"call_Y2p6\"", "\"call\\u0059\""),
            line(r#""ok""#).replace(r#""type":"response_item","payload""#, r#""payload""#),
            format!("{}\r", line(r#""ok""#)),
        ];
        for text in refused {
            let read = OutputLine::of(&text);
            assert_eq!(read.as_ref().and_then(OutputLine::output), None, "{text}");
            assert_eq!(read.and_then(|l| l.measured()), None, "{text}");
        }
    }

    /// Texts as Codex's tools write them, and every piece a count must not be fooled by.
    const PIECES: &[&str] = &[
        "plain text ",
        "\n",
        "\r\n",
        "\t",
        "\"quoted\"",
        "\\",
        "\\n",
        "\\\\n",
        "/",
        "é",
        "✓",
        "🦀",
        "\u{200B}",
        "\u{202E}",
        "\u{1}",
        "\u{7f}",
        "Exit code: 0",
        "Exit code: 2",
        "Process exited with code 1",
        "Process exited with code 0",
        "Wall time: 0.1 seconds",
        "\nOutput:\n",
        "Output:",
        "…38211 tokens truncated…",
        "[... omitted 3 of 9 lines ...]",
        "Total output lines: 12",
        "{",
        "}",
        "{\"output\":\"",
        "\",\"metadata\":{\"exit_code\":1}}",
    ];

    fn random_text(rng: &mut fastrand::Rng) -> String {
        let mut text = String::new();
        for _ in 0..rng.usize(0..14) {
            text.push_str(PIECES[rng.usize(..PIECES.len())]);
        }
        text
    }

    /// What a timeline reads of an output literal: `classify` of its text, and its success.
    fn as_read(literal: &str) -> Option<(ForeignResult, bool)> {
        let line = line(literal);
        let out = OutputLine::of(&line)?;
        let (text, ok) = out.output()?;
        Some((classify(out.call_id, &text), ok))
    }

    #[test]
    fn a_measured_output_is_what_its_text_reads_as() {
        let mut rng = fastrand::Rng::with_seed(5);
        // Measured per way of writing: a text, a document, a text after a header.
        let mut measured = [0; 3];
        for _ in 0..30_000 {
            let text = random_text(&mut rng);
            // As Codex writes them: the text as a string; a document `{"output", "metadata"}`
            // in a string; spelled other ways too.
            let doc = format!(
                r#"{{"output":{},"metadata":{{"exit_code":{}}}}}"#,
                serde_json::to_string(&text).unwrap(),
                rng.u8(0..3)
            );
            let written = [
                serde_json::to_string(&text).unwrap(),
                serde_json::to_string(&doc).unwrap(),
                serde_json::to_string(&format!("Exit code: {}\nOutput:\n{text}", rng.u8(0..3)))
                    .unwrap(),
            ];
            for (way, literal) in written.into_iter().enumerate() {
                for spelled in [
                    literal.clone(),
                    literal.replace('é', "\\u00e9"),
                    literal.replace('/', "\\/"),
                    literal.replace("\\n", "\\u000a"),
                    // A format character, and a cut mark's word, spelled apart.
                    literal.replace('\u{200B}', "\\u200b"),
                    literal.replace("truncated", "trunc\\u0061ted"),
                ] {
                    let read = as_read(&spelled);
                    let line = line(&spelled);
                    if let Some(m) = OutputLine::of(&line).and_then(|l| l.measured()) {
                        measured[way] += 1;
                        assert_eq!(Some(m), read, "{spelled}");
                    }
                }
            }
        }
        // Each way is measured often (a cut mark's word, a `\u`, a text opening with `{` or a
        // stated exit code without a header is read whole).
        assert!(
            measured.iter().all(|&n| n > 10_000),
            "{measured:?} of 120,000 each"
        );
    }

    #[test]
    fn what_a_count_cannot_tell_is_read_whole() {
        for literal in [
            // A cut mark (its lines are the ones it states), and its word spelled apart.
            r#""a\n…38211 tokens truncated…\nb""#,
            r#""a\n[... omitted 3 of 9 lines ...]\nb""#,
            // A `\u` escape, a document, an exit code stated with no header before an output.
            r#""caf\u00e9""#,
            r#""{\"a\":1}""#,
            r#""Exit code: 1""#,
            r#""x\\nOutput: Process exited with code 3""#,
        ] {
            let line = line(literal);
            let out = OutputLine::of(&line).unwrap();
            assert_eq!(out.measured(), None, "{literal}");
            assert!(out.output().is_some(), "{literal}");
        }
        // The header ends at the first newline escape before `Output:`, not at an escaped
        // backslash before an `n` (which would leave `Exit code: 3` alone on its line).
        let literal = r#""Exit code: 3 \\nOutput: \nOutput:\nExit code: 4\n""#;
        let line = line(literal);
        let measured = OutputLine::of(&line).unwrap().measured();
        assert_eq!(measured, as_read(literal));
        assert_eq!(
            measured.map(|(c, ok)| (c.bytes, c.lines, ok)),
            Some((45, Some(3), true))
        );
    }
}
