//! One hit of a search, and how a matching line becomes one: cut around its first match the
//! way a query peek cuts a long line, invalid UTF-8 shown with replacement characters.

use super::matcher::Matcher;
use crate::model::RetentionState;
use crate::retained::peek::{hit_window, LONG_LINE};
use serde::Serialize;
use ts_rs::TS;

/// What a hit was found in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize, TS,
)]
#[serde(rename_all = "lowercase")]
pub enum HitKind {
    /// A user message's text, or the text (or thinking) of an assistant message.
    Message,
    /// A string of a tool call's input.
    Input,
    /// A tool result's text in the transcript: inline, unretained or damaged.
    Result,
    /// A value file: a retained result's full text, or a stray file.
    Value,
}

/// One matching line (`mctl search --json`, one object per line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// Id of the run the hit is in (an orphan file's: the id in its value directory's name).
    pub run: String,
    /// What kind of text the hit is in.
    pub kind: HitKind,
    /// Transcript line of the event (for a value, of its result); absent for a stray file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub line: Option<u64>,
    /// Tool call id of an input or result hit, or of a value hit's result; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_call_id: Option<String>,
    /// Value id of a value hit: its file's name without `.txt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub value_id: Option<String>,
    /// Line number inside the value (value hits).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub value_line: Option<u64>,
    /// Line number inside the text searched (for a value, equal to `valueLine`).
    pub text_line: u64,
    /// Which text of its event the hit is in, in document order: an assistant message's text
    /// block (text and thinking blocks counted), a string of a tool call's input; else 0.
    pub text_index: u32,
    /// The matching line, at most 512 bytes of it, cut around the first match.
    pub text: String,
    /// Byte offsets of the first match in `text`.
    pub match_start: u64,
    /// End of the first match in `text`, a byte offset (exclusive).
    pub match_end: u64,
    /// Byte offset in the line where `text` starts (0 unless the line was cut).
    pub text_offset: u64,
    /// Bytes of the line `text` shows (`text` has more where bytes that are not UTF-8 were
    /// replaced): the line goes on after it when `textOffset + textBytes < lineBytes`.
    pub text_bytes: u64,
    /// Bytes of the whole line.
    pub line_bytes: u64,
    /// For a value hit: whether the model was shown this line (in its stub or a peek).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub seen: Option<bool>,
    /// For a value hit: the file matches no result of its run.
    pub stray: bool,
    /// For a stray file: its value directory has no run (no transcript, no summary).
    pub orphan: bool,
    /// For a result or value hit: the result's retention state (absent for a stray file).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub state: Option<RetentionState>,
}

/// Where a matching line was found; the rest of a hit comes from the line itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    pub run: String,
    pub line: Option<u64>,
    pub tool_call_id: Option<String>,
    pub value_id: Option<String>,
    pub stray: bool,
    pub orphan: bool,
    pub state: Option<RetentionState>,
}

/// The part of a hit a matching line gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineHit {
    pub number: u64,
    pub text: String,
    pub match_start: u64,
    pub match_end: u64,
    pub text_offset: u64,
    pub text_bytes: u64,
    pub line_bytes: u64,
}

impl LineHit {
    /// Line `number` (its bytes as the searcher gives them, terminator included) as a hit;
    /// `None` when its only match takes in the `\r` of a CRLF end, which is not in the line.
    pub(crate) fn of(matcher: &Matcher, number: u64, raw: &[u8]) -> Option<Self> {
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let (m0, m1) = matcher.find(line)?;
        Some(Self::cut(number, line, 0, line.len() as u64, m0, m1))
    }

    /// The hit of line `number` (`line_len` bytes) from `window`, its bytes from offset `at`
    /// on, with the match at `m0..m1` of the window: the window is all of a short line, or a
    /// few bytes more than the cut of a long one read from its file.
    pub(crate) fn cut(
        number: u64,
        window: &[u8],
        at: u64,
        line_len: u64,
        m0: usize,
        m1: usize,
    ) -> Self {
        // (A window read back short, from a file cut meanwhile, shows what there is.)
        let m0 = m0.min(window.len());
        let m1 = m1.clamp(m0, window.len());
        let len = window.len() as u64;
        let (from, to) = hit_window(0, len, m0 as u64, (m1 - m0) as u64);
        let mut from = char_start(window, from as usize, at == 0).min(m0);
        let mut to = char_end(window, to as usize).max(m0);
        // Each byte that is not UTF-8 shows as U+FFFD, three bytes: the window shrinks (the
        // longer side first, the match itself last) until the text is within 512 bytes again.
        loop {
            let m1 = m1.min(to).max(m0);
            let before = String::from_utf8_lossy(&window[from..m0]);
            let matched = String::from_utf8_lossy(&window[m0..m1]);
            let after = String::from_utf8_lossy(&window[m1..to]);
            let total = before.len() + matched.len() + after.len();
            if total <= LONG_LINE as usize || to == m0 {
                let start = before.len() as u64;
                return Self {
                    number,
                    text: format!("{before}{matched}{after}"),
                    match_start: start,
                    match_end: start + matched.len() as u64,
                    text_offset: at + from as u64,
                    text_bytes: (to - from) as u64,
                    line_bytes: line_len,
                };
            }
            // At least one byte, at most what a third of the excess is in replaced bytes.
            let step = (total - LONG_LINE as usize).div_ceil(3);
            let (left, right) = (m0 - from, to - m1);
            if left > 0 && left >= right {
                from = char_start(window, from + step.min(left), false).min(m0);
            } else if right > 0 {
                to = char_end(window, to - step.min(right)).max(m1);
            } else {
                to = char_end(window, to - step.min(to - m0)).max(m0);
            }
        }
    }

    pub(crate) fn into_hit(self, origin: &Origin, kind: HitKind, text_index: u32) -> SearchHit {
        let value = kind == HitKind::Value;
        SearchHit {
            run: origin.run.clone(),
            kind,
            line: origin.line,
            tool_call_id: origin.tool_call_id.clone(),
            value_id: origin.value_id.clone(),
            value_line: value.then_some(self.number),
            text_line: self.number,
            text_index,
            text: self.text,
            match_start: self.match_start,
            match_end: self.match_end,
            text_offset: self.text_offset,
            text_bytes: self.text_bytes,
            line_bytes: self.line_bytes,
            seen: None,
            stray: origin.stray,
            orphan: origin.orphan,
            state: origin.state,
        }
    }
}

/// `at` moved forward past the continuation bytes of a character the window cuts (at most 3);
/// the line's own start stays, whatever it holds.
fn char_start(line: &[u8], at: usize, line_start: bool) -> usize {
    if at == 0 && line_start {
        return 0;
    }
    let skip = line[at..]
        .iter()
        .take(3)
        .take_while(|&&b| (b & 0xC0) == 0x80)
        .count();
    at + skip
}

/// `at` moved back to the start of a character the window cuts, so none is shown in part.
fn char_end(line: &[u8], at: usize) -> usize {
    if at >= line.len() || (line[at] & 0xC0) != 0x80 {
        return at.min(line.len());
    }
    let back = line[..at]
        .iter()
        .rev()
        .take(3)
        .take_while(|&&b| (b & 0xC0) == 0x80)
        .count();
    at.saturating_sub(back + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::matcher::Pattern;

    fn matcher(text: &str) -> Matcher {
        Matcher::new(&Pattern {
            text: text.into(),
            regex: false,
            ignore_case: false,
        })
        .unwrap()
    }

    #[test]
    fn a_short_line_is_whole_without_its_terminator() {
        let h = LineHit::of(&matcher("needle"), 3, b"a needle here\r\n").unwrap();
        assert_eq!(h.text, "a needle here");
        assert_eq!((h.match_start, h.match_end), (2, 8));
        assert_eq!((h.text_offset, h.line_bytes), (0, 13));
    }

    #[test]
    fn a_long_line_is_cut_to_512_bytes_around_the_match() {
        let mut line = "é".repeat(600).into_bytes();
        line.extend_from_slice(b"NEEDLE");
        line.extend_from_slice("ü".repeat(600).as_bytes());
        let h = LineHit::of(&matcher("NEEDLE"), 1, &line).unwrap();
        assert!(h.text.len() <= 512, "{}", h.text.len());
        assert_eq!(
            &h.text[h.match_start as usize..h.match_end as usize],
            "NEEDLE"
        );
        // Cut on character boundaries: nothing replaced.
        assert!(!h.text.contains('\u{FFFD}'));
        assert_eq!(
            &line[h.text_offset as usize..h.text_offset as usize + h.text.len()],
            h.text.as_bytes()
        );
    }

    #[test]
    fn invalid_utf8_is_shown_with_replacement_characters() {
        let h = LineHit::of(&matcher("key"), 1, b"\xff\xfe key \xc3").unwrap();
        assert_eq!(h.text, "\u{FFFD}\u{FFFD} key \u{FFFD}");
        assert_eq!(&h.text[h.match_start as usize..h.match_end as usize], "key");
    }

    #[test]
    fn a_long_line_of_invalid_bytes_stays_within_512_bytes_of_text() {
        let mut line = vec![0xFFu8; 2000];
        line.extend_from_slice(b"key");
        line.extend(vec![0xFEu8; 2000]);
        let h = LineHit::of(&matcher("key"), 1, &line).unwrap();
        assert!(h.text.len() <= 512, "{}", h.text.len());
        assert_eq!(&h.text[h.match_start as usize..h.match_end as usize], "key");
        assert!(h.text_offset > 0 && h.text_offset + h.text_bytes < h.line_bytes);
    }

    #[test]
    fn a_window_read_back_short_does_not_panic() {
        let h = LineHit::cut(1, b"abc", 10, 100, 7, 12);
        assert_eq!(h.text, "abc");
    }

    #[test]
    fn a_match_in_the_crlf_end_is_not_in_the_line() {
        let m = Matcher::new(&Pattern {
            text: "x\\s".into(),
            regex: true,
            ignore_case: false,
        })
        .unwrap();
        assert_eq!(LineHit::of(&m, 1, b"abx\r\n"), None);
    }
}
