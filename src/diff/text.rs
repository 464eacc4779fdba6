//! Two tool results as a line diff: what the Diff view opens for a tool call on both sides,
//! and `mctl diff --results`. The texts are the results' full texts as the transcript holds
//! them (what the tool returned, whatever became of the value files).

use crate::error::{Error, ErrorCode, Result};
use crate::fold::timeline::shorten;
use crate::runs::access::result_text;
use crate::runs::RunsDir;
use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiffConfig};
use std::time::Duration;
use ts_rs::TS;

/// Biggest result a text diff reads, per side: past it `mctl full` and a diff tool of one's
/// own are the way (the app would hold both texts and their line tables in memory).
pub const TEXT_DIFF_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Most lines a text diff carries; the counts of added and removed lines cover all of them.
const MAX_LINES: usize = 10_000;
/// Longest line carried: a minified JSON of megabytes on one line is shown by its start.
const LINE_MAX: usize = 4096;
/// How long the diff may search for the smallest answer before it settles for a larger one.
const DEADLINE: Duration = Duration::from_secs(2);

/// How a line of a hunk stands in the two texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum DiffLineKind {
    /// In both texts, around a change.
    Context,
    /// In A's text only.
    Removed,
    /// In B's text only.
    Added,
}

/// One line of a hunk.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    /// Whether the line is context, removed or added.
    pub kind: DiffLineKind,
    /// 1-based line in A's text (context and removed lines).
    pub a_line: Option<u64>,
    /// 1-based line in B's text (context and added lines).
    pub b_line: Option<u64>,
    /// The line without its ending, at most 4 KiB of it.
    pub text: String,
    /// The line's size when `text` was shortened.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_bytes: Option<u64>,
    /// The line is its text's last and has no line ending: `a` and `a\n` differ by this alone.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub no_newline: bool,
}

/// A run of changes with the context around it, as `@@ -aStart,aLen +bStart,bLen @@` says.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// First line of the hunk in A's text, 1-based (when `aLen` is 0, the line it comes before).
    pub a_start: u64,
    /// Lines of A's text the hunk covers (context and removed).
    pub a_len: u64,
    /// First line of the hunk in B's text, 1-based (when `bLen` is 0, the line it comes before).
    pub b_start: u64,
    /// Lines of B's text the hunk covers (context and added).
    pub b_len: u64,
    /// The hunk's lines, in order.
    pub lines: Vec<DiffLine>,
}

/// One side of a text diff.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DiffText {
    /// Id of the run the result is in.
    pub run: String,
    /// Tool call id of the result.
    pub tool_call_id: String,
    /// Name of the tool called.
    pub tool: String,
    /// Size of the full text in bytes.
    pub bytes: u64,
    /// Number of lines in the full text.
    pub lines: u64,
}

/// Two results' texts compared line by line.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TextDiff {
    /// Result A.
    pub a: DiffText,
    /// Result B.
    pub b: DiffText,
    /// The two texts are the same, byte for byte.
    pub identical: bool,
    /// Lines only in A, over the whole texts.
    pub removed: u64,
    /// Lines only in B, over the whole texts.
    pub added: u64,
    /// Runs of changes with their context (3 lines), in order.
    pub hunks: Vec<Hunk>,
    /// The hunks stop after 10,000 lines; the counts above still cover everything.
    pub truncated: bool,
}

/// The result of `call_a` in run `run_a` against that of `call_b` in run `run_b`.
pub fn diff_results(
    (dir_a, run_a, call_a): (&RunsDir, &str, &str),
    (dir_b, run_b, call_b): (&RunsDir, &str, &str),
) -> Result<TextDiff> {
    let _span = tracing::info_span!("diff_results", run_a, call_a, run_b, call_b).entered();
    let side = |dir: &RunsDir, run: &str, call: &str| -> Result<(DiffText, String)> {
        // The size is known from the run's results before the text is read.
        let (run_id, info, _) = dir.locate_result(run, call)?;
        if info.bytes > TEXT_DIFF_MAX_BYTES {
            return Err(Error::new(
                ErrorCode::Invalid,
                format!(
                    "the result of {call} is {} bytes: too big to diff here (at most {}); \
                     compare `mctl full` of both with a diff tool",
                    info.bytes, TEXT_DIFF_MAX_BYTES
                ),
            ));
        }
        let content = result_text(&dir.layout()?, &run_id, &info)
            .map_err(|e| Error::io(format!("reading the result of {call}"), &e))?;
        let text = DiffText {
            run: run_id,
            tool_call_id: info.tool_call_id.clone(),
            tool: info.tool.clone(),
            bytes: info.bytes,
            // What is diffed is the text read: its lines are counted, never unknown.
            lines: crate::retained::count_lines(content.as_bytes()),
        };
        Ok((text, content))
    };
    let (a, text_a) = side(dir_a, run_a, call_a)?;
    let (b, text_b) = side(dir_b, run_b, call_b)?;
    Ok(compare(a, &text_a, b, &text_b))
}

fn compare(a: DiffText, text_a: &str, b: DiffText, text_b: &str) -> TextDiff {
    let diff = TextDiffConfig::default()
        .algorithm(Algorithm::Myers)
        .timeout(DEADLINE)
        .diff_lines(text_a, text_b);
    let (mut added, mut removed) = (0, 0);
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            match change.tag() {
                ChangeTag::Insert => added += 1,
                ChangeTag::Delete => removed += 1,
                ChangeTag::Equal => {}
            }
        }
    }
    let mut hunks = Vec::new();
    let mut carried = 0;
    let mut truncated = false;
    'groups: for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (ra, rb) = (
            first.old_range().start..last.old_range().end,
            first.new_range().start..last.new_range().end,
        );
        let mut hunk = Hunk {
            a_start: ra.start as u64 + 1,
            a_len: ra.len() as u64,
            b_start: rb.start as u64 + 1,
            b_len: rb.len() as u64,
            lines: Vec::new(),
        };
        for op in &group {
            for change in diff.iter_changes(op) {
                if carried == MAX_LINES {
                    truncated = true;
                    hunks.push(hunk);
                    break 'groups;
                }
                carried += 1;
                let line = change.value().trim_end_matches(['\n', '\r']);
                let (text, text_bytes) = shorten(line, LINE_MAX);
                hunk.lines.push(DiffLine {
                    kind: match change.tag() {
                        ChangeTag::Equal => DiffLineKind::Context,
                        ChangeTag::Delete => DiffLineKind::Removed,
                        ChangeTag::Insert => DiffLineKind::Added,
                    },
                    a_line: change.old_index().map(|i| i as u64 + 1),
                    b_line: change.new_index().map(|i| i as u64 + 1),
                    text,
                    text_bytes,
                    no_newline: change.missing_newline(),
                });
            }
        }
        hunks.push(hunk);
    }
    TextDiff {
        a,
        b,
        identical: text_a == text_b,
        removed,
        added,
        hunks,
        truncated,
    }
}

/// `diff` as a unified diff (`diff -u`'s format), for the terminal.
pub fn unified(diff: &TextDiff) -> String {
    let mut out = format!(
        "--- {} {}\n+++ {} {}\n",
        diff.a.run, diff.a.tool_call_id, diff.b.run, diff.b.tool_call_id
    );
    for h in &diff.hunks {
        // As `diff -u` says it: an empty side starts at the line before it (`-0,0`).
        let start = |s: u64, len: u64| if len == 0 { s.saturating_sub(1) } else { s };
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            start(h.a_start, h.a_len),
            h.a_len,
            start(h.b_start, h.b_len),
            h.b_len
        ));
        for l in &h.lines {
            out.push(match l.kind {
                DiffLineKind::Context => ' ',
                DiffLineKind::Removed => '-',
                DiffLineKind::Added => '+',
            });
            out.push_str(&l.text);
            out.push('\n');
            if l.no_newline {
                // As `diff -u` marks a text's last line that has no ending.
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    if diff.truncated {
        out.push_str(&format!(
            "… cut after {MAX_LINES} lines: {} removed and {} added in all\n",
            diff.removed, diff.added
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(text: &str) -> DiffText {
        DiffText {
            run: "r".into(),
            tool_call_id: "c".into(),
            tool: "bash".into(),
            bytes: text.len() as u64,
            lines: text.lines().count() as u64,
        }
    }

    fn diff(a: &str, b: &str) -> TextDiff {
        compare(side(a), a, side(b), b)
    }

    #[test]
    fn a_changed_line_is_one_hunk_with_its_context_and_true_line_numbers() {
        let a: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let b = a.replace("line 10\n", "line ten\n");
        let d = diff(&a, &b);
        assert!(!d.identical);
        assert_eq!((d.removed, d.added), (1, 1));
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!((h.a_start, h.a_len, h.b_start, h.b_len), (7, 7, 7, 7));
        let removed = h
            .lines
            .iter()
            .find(|l| l.kind == DiffLineKind::Removed)
            .unwrap();
        assert_eq!(
            (removed.a_line, removed.b_line, removed.text.as_str()),
            (Some(10), None, "line 10")
        );
        assert!(unified(&d)
            .contains("@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n"));
    }

    #[test]
    fn an_empty_side_starts_at_the_line_before_as_diff_u_says() {
        assert!(unified(&diff("", "a\n")).contains("@@ -0,0 +1,1 @@\n+a\n"));
        assert!(unified(&diff("a\n", "a\nb\n")).contains("@@ -1,1 +1,2 @@\n a\n+b\n"));
    }

    #[test]
    fn a_last_line_without_its_ending_is_marked_as_diff_u_marks_it() {
        let d = diff("a\nb", "a\nb\n");
        assert_eq!((d.removed, d.added), (1, 1));
        let lines = &d.hunks[0].lines;
        assert!(lines[1].no_newline && !lines[2].no_newline, "{lines:?}");
        assert!(
            unified(&d).ends_with("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n")
        );
    }

    #[test]
    fn identical_texts_have_no_hunk() {
        let d = diff("a\nb\n", "a\nb\n");
        assert!(d.identical && d.hunks.is_empty() && d.added == 0 && d.removed == 0);
    }

    #[test]
    fn a_long_diff_is_cut_but_counted_whole_and_a_long_line_is_shortened() {
        let a: String = (0..30_000).map(|i| format!("a{i}\n")).collect();
        let b: String = (0..30_000).map(|i| format!("b{i}\n")).collect();
        let d = diff(&a, &b);
        assert!(d.truncated);
        assert_eq!((d.removed, d.added), (30_000, 30_000));
        assert_eq!(
            d.hunks.iter().map(|h| h.lines.len()).sum::<usize>(),
            MAX_LINES
        );
        let long = "x".repeat(10_000);
        let d = diff(&long, "y");
        let line = &d.hunks[0].lines[0];
        assert_eq!((line.text.len(), line.text_bytes), (LINE_MAX, Some(10_000)));
    }
}
