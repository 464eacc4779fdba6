//! A reasoning item's line as Codex writes it, read for a listing without a JSON parser's
//! pass over its encrypted content (a quarter of a rollout's bytes, which nothing shows):
//! `{"timestamp":"…","type":"response_item","payload":{"type":"reasoning","summary":[…],
//! "content":null,"encrypted_content":"…"}}`, byte for byte, each summary block
//! `{"type":"summary_text","text":"…"}`. A listing needs of it only whether its summary says
//! anything (then it is a row); its strings are checked as a parser checks them, 64 bytes a
//! step, none decoded. Any other spelling, and a string holding a `\u` escape, is parsed whole.

use super::output_line::plain_string;
use crate::retained::json_measure::size_leading;

#[derive(Debug, PartialEq)]
pub(super) struct ReasoningLine<'a> {
    pub(super) timestamp: &'a str,
    /// Whether its summary's texts, joined as the fold joins them, are not empty.
    pub(super) summarized: bool,
}

impl<'a> ReasoningLine<'a> {
    pub(super) fn of(text: &'a str) -> Option<Self> {
        const HEAD: &str = r#","type":"response_item","payload":{"type":"reasoning","summary":["#;
        const BLOCK: &str = r#"{"type":"summary_text","text":"#;
        const CONTENT: &str = r#","content":null,"encrypted_content":"#;
        let rest = text.strip_prefix(r#"{"timestamp":""#)?;
        let (timestamp, rest) = plain_string(rest)?;
        let mut rest = rest.strip_prefix(HEAD)?;
        let (mut blocks, mut said) = (0, false);
        if let Some(after) = rest.strip_prefix(']') {
            rest = after;
        } else {
            loop {
                let (text, len) = size_leading(rest.strip_prefix(BLOCK)?)?;
                (blocks, said) = (blocks + 1, said || text.bytes > 0);
                rest = rest[BLOCK.len() + len..].strip_prefix('}')?;
                match rest.strip_prefix(',') {
                    Some(after) => rest = after,
                    None => break,
                }
            }
            rest = rest.strip_prefix(']')?;
        }
        let content = rest.strip_prefix(CONTENT)?;
        let (_, len) = size_leading(content)?;
        // Two texts joined hold the line between them, empty or not.
        (&content[len..] == "}}").then_some(Self {
            timestamp,
            summarized: said || blocks > 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// What a whole parse reads of a line: its timestamp, and whether it is a reasoning item
    /// whose summary's texts, joined, say anything (as the fold reads them).
    fn parsed(line: &str) -> Option<(String, bool)> {
        let v: Value = serde_json::from_str(line).ok()?;
        let p = &v["payload"];
        if v["type"] != "response_item" || p["type"] != "reasoning" {
            return None;
        }
        let texts: Vec<&str> = (p["summary"].as_array().into_iter().flatten())
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        Some((
            v["timestamp"].as_str()?.to_owned(),
            !texts.join("\n\n").is_empty(),
        ))
    }

    const TEXTS: &[&str] = &[
        r#""""#,
        r#""x""#,
        r#""**Planning** the next step""#,
        r#""a\nb \"q\" \\ \/""#,
        r#""caf\u00e9""#,
        r#""bad \x""#,
        "\"raw \u{1} control\"",
        r#""unclosed"#,
        "7",
        "null",
    ];

    const CONTENTS: &[&str] = &[
        r#""gAAAAABqAZLpDBVX3heq9f5RwzU7LNkny4dZ7BOgfOxEx3IWEQ25omWhOOAUra9jvlVP3Mt_g_sMBGURzrjE6kiAQ9rx6yB7174NF-0IBXMBjgkOsCjDhqTQghPtqOZvJ4r4EFxepli2Gew""#,
        r#""""#,
        r#""with \" an escape""#,
        r#""a \u0041""#,
        "\"a \u{1f} control\"",
        r#""open"#,
    ];

    /// One of `pieces`, most often one of the first `good` (a line Codex would write).
    fn pick<'a>(rng: &mut fastrand::Rng, pieces: &[&'a str], good: usize) -> &'a str {
        match rng.u8(0..5) {
            0 => pieces[rng.usize(..pieces.len())],
            _ => pieces[rng.usize(..good)],
        }
    }

    fn line(rng: &mut fastrand::Rng) -> String {
        let blocks: Vec<String> = (0..rng.usize(0..3))
            .map(|_| {
                let text = pick(rng, TEXTS, 4);
                match rng.u8(0..8) {
                    0 => format!(r#"{{"text":{text},"type":"summary_text"}}"#),
                    1 => format!(r#"{{"type":"summary_text", "text":{text}}}"#),
                    _ => format!(r#"{{"type":"summary_text","text":{text}}}"#),
                }
            })
            .collect();
        let content = pick(rng, CONTENTS, 3);
        let tail = pick(rng, &["}}", "}} ", "},\"x\":1}", "}"], 1);
        let stamp = pick(
            rng,
            &["2026-05-11T08:27:21.556Z", "2026\\u002d05", "x\u{1}"],
            1,
        );
        let payload = match rng.u8(0..6) {
            0 => {
                r#"{"summary":[SUMMARY],"type":"reasoning","content":null,"encrypted_content":CONTENT"#
            }
            1 => {
                r#"{"type":"reasoning","summary":[SUMMARY],"content":[],"encrypted_content":CONTENT"#
            }
            _ => {
                r#"{"type":"reasoning","summary":[SUMMARY],"content":null,"encrypted_content":CONTENT"#
            }
        };
        let payload = payload
            .replace("SUMMARY", &blocks.join(","))
            .replace("CONTENT", content);
        format!(r#"{{"timestamp":"{stamp}","type":"response_item","payload":{payload}{tail}"#)
    }

    #[test]
    fn a_reasoning_line_reads_without_its_parse_as_with_it() {
        let mut rng = fastrand::Rng::with_seed(9);
        let mut read = [0; 2];
        for _ in 0..40_000 {
            let text = line(&mut rng);
            if let Some(r) = ReasoningLine::of(&text) {
                let (timestamp, summarized) = parsed(&text).expect(&text);
                assert_eq!(
                    (r.timestamp, r.summarized),
                    (timestamp.as_str(), summarized),
                    "{text}"
                );
                read[usize::from(r.summarized)] += 1;
            }
        }
        assert!(
            read.iter().all(|&n| n > 1_000),
            "{read:?} read without a parse"
        );
    }

    #[test]
    fn what_it_cannot_tell_is_parsed_whole() {
        let head =
            r#"{"timestamp":"t","type":"response_item","payload":{"type":"reasoning","summary":"#;
        for rest in [
            r#"[{"type":"summary_text","text":"\u00e9"}],"content":null,"encrypted_content":"x"}}"#,
            r#"[],"content":null,"encrypted_content":"\u0041"}}"#,
            r#"[],"content":null,"encrypted_content":"x"}} "#,
            r#"[{"type":"summary_text","text":"a","extra":1}],"content":null,"encrypted_content":"x"}}"#,
        ] {
            assert_eq!(ReasoningLine::of(&format!("{head}{rest}")), None, "{rest}");
        }
        let two_empty = r#"[{"type":"summary_text","text":""},{"type":"summary_text","text":""}],"content":null,"encrypted_content":"x"}}"#;
        let line = format!("{head}{two_empty}");
        let r = ReasoningLine::of(&line).unwrap();
        assert!(r.summarized, "two empty texts join into a line break");
    }
}
