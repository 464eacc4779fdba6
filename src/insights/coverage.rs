//! Peek coverage: for each value of a run, the lines of its full text the model was shown (in
//! the stub the harness gave it, and in each `peek_value` answer the transcript recorded), the
//! lines it was shown more than once, what reading back cost, and the error-looking lines it
//! never saw.

use super::errors::ErrorPattern;
use super::peeks::{shown_lines, PeekCall};
use crate::error::{Error, Result};
use crate::model::{ResultInfo, RetentionState};
use crate::retained::{stub_from_source, Stub, ValueText};
use crate::runs::{analyze_run, RunsDir};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use ts_rs::TS;

/// Most line numbers of missed error-looking lines listed.
const MISSED_LISTED: usize = 20;

/// One `peek_value` call that read a value.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PeekShown {
    /// Tool call id of the `peek_value` call.
    pub tool_call_id: String,
    /// Transcript line of its result.
    pub line: u64,
    /// Its input as given, without `id`: `start`/`end`, or `query`.
    #[ts(type = "Record<string, unknown>")]
    pub request: Map<String, Value>,
    /// The lines it showed, as merged `[first, last]` ranges (none when it returned an error).
    pub lines: Vec<[u64; 2]>,
    /// Size of its answer: what reading back cost.
    pub bytes: u64,
    /// False when the peek failed (its answer an error message: it showed no line).
    pub ok: bool,
}

/// The error-looking lines the model was never shown.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MissedErrors {
    /// How many there are in all.
    pub count: u64,
    /// The first 20 of their line numbers.
    pub lines: Vec<u64>,
}

/// What the model was shown of one value (`mctl coverage --json`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueCoverage {
    /// Tool call id of the result.
    pub tool_call_id: String,
    /// Value id of the result: what its peeks name.
    pub value_id: String,
    /// Name of the tool called.
    pub tool: String,
    /// The result's retention state.
    pub state: RetentionState,
    /// Lines in the full text (`None`: the full text is lost and its length unknown).
    pub total_lines: Option<u64>,
    /// The lines of its stub's head and tail previews, as merged `[first, last]` ranges.
    pub stub_lines: Vec<[u64; 2]>,
    /// Each `peek_value` call that read this value, in transcript order.
    pub peeks: Vec<PeekShown>,
    /// Distinct lines shown at least once (of those that exist, when their number is known).
    pub seen_lines: u64,
    /// `seenLines / totalLines` (0 for an empty text; `None` when the total is unknown).
    pub coverage: Option<f64>,
    /// Showings of a line beyond its first.
    pub reread_lines: u64,
    /// The bytes of every peek of it.
    pub peek_bytes: u64,
    /// No `peek_value` call read this value.
    pub never_peeked: bool,
    /// Error-looking lines the model was shown neither in the stub nor in a peek.
    pub missed_errors: MissedErrors,
}

/// Peek coverage of every value of run `run` (a result over the threshold: retained,
/// damaged or unretained alike), or of the one `call` names (by tool call id or value id).
/// When a call id repeats, its last result counts (the one a resume replays last).
pub fn coverage(
    dir: &RunsDir,
    run: &str,
    call: Option<&str>,
    errors: &ErrorPattern,
) -> Result<Vec<ValueCoverage>> {
    let (layout, id) = dir.run_layout(run)?;
    let detail = analyze_run(&layout, &id, &dir.opts, false)
        .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
    let Some(path) = layout.runs[&id].transcript.clone() else {
        return Ok(Vec::new()); // a summary only: no results
    };
    let reading = |e: std::io::Error| Error::io(format!("reading {}", path.display()), &e);
    let store = layout.store();
    // The harness's model reads a value with `peek_value`; another agent's reads its saved
    // file back with its own tools (Read or Grep, read_file, read or grep).
    let peeks = store
        .read_backs(&path, &id, &layout.runs[&id])
        .map_err(reading)?;
    let mut values = Vec::new();
    for (i, r) in detail.results.iter().enumerate() {
        // A later inline result of the same call wrote no file: it does not replace this one.
        let last = !detail.results[i + 1..]
            .iter()
            .any(|later| later.value_id == r.value_id && later.state != RetentionState::Inline);
        let named = call.is_none_or(|c| c == r.tool_call_id || c == r.value_id);
        let cut_or_inline = matches!(r.state, RetentionState::Inline | RetentionState::Truncated);
        if cut_or_inline || !last || !named {
            continue;
        }
        // Another agent's stub is the text its model got, not one made from the output.
        let recorded = store.recorded_texts(&layout, &id, r);
        let (content, stub) = match recorded {
            Some(texts) => {
                let texts = texts.map_err(reading)?;
                let Some(stub) = store.stub_of_seen(&texts.seen) else {
                    continue; // a store whose model got no stub: nothing was kept back
                };
                (texts.value_text().map_err(reading)?, stub)
            }
            None => {
                let content =
                    crate::runs::access::result_source(&layout, &id, r).map_err(reading)?;
                let index = content.line_index().map_err(reading)?;
                let stub =
                    stub_from_source(&r.value_id, &r.tool, &content, &index).map_err(reading)?;
                (content, stub)
            }
        };
        // A full text that is lost leaves only the stub: nothing of it can be missed.
        let content = r.lines.map(|_| content);
        values.push(cover(r, content.as_ref(), stub, &peeks, errors).map_err(reading)?);
    }
    if let (Some(c), true) = (call, values.is_empty()) {
        let named = (detail.results.iter().rev()).find(|r| r.tool_call_id == c || r.value_id == c);
        // A result the model got whole (or cut in place) has no value whose coverage to tell.
        return Err(match named {
            Some(r) => crate::runs::access::not_retained(r),
            None => crate::runs::access::unknown_call(&id, c),
        });
    }
    Ok(values)
}

/// The coverage of result `r`, whose full text is `content` (`None`: lost).
fn cover(
    r: &ResultInfo,
    content: Option<&ValueText>,
    stub: Stub,
    peeks: &[PeekCall],
    errors: &ErrorPattern,
) -> std::io::Result<ValueCoverage> {
    let mut seen = SeenLines::of(&stub, &r.value_id, peeks).lines;
    if let Some(total) = r.lines {
        // Only lines that exist are seen: a stub's preview or a peek past the end shows none.
        seen.retain(|n| *n <= total);
    }
    let mut showings = 0u64;
    let mut stub_lines = Vec::new();
    for (a, b) in [stub.head, stub.tail].into_iter().flatten() {
        stub_lines.push([a, b]);
        showings += b - a + 1;
    }
    let mut shown = Vec::new();
    for p in peeks_of(peeks, &r.value_id) {
        let lines = if p.ok {
            shown_lines(&p.content)
        } else {
            Vec::new()
        };
        showings += lines.len() as u64;
        shown.push(PeekShown {
            tool_call_id: p.tool_call_id.clone(),
            line: p.line,
            request: p.request.clone(),
            lines: ranges(lines),
            bytes: p.content.len() as u64,
            ok: p.ok,
        });
    }
    let seen_lines = seen.len() as u64;
    let missed_errors = match content {
        Some(c) => missed(c, &seen, errors)?,
        None => MissedErrors::default(),
    };
    Ok(ValueCoverage {
        tool_call_id: r.tool_call_id.clone(),
        value_id: r.value_id.clone(),
        tool: r.tool.clone(),
        state: r.state,
        total_lines: r.lines,
        stub_lines: merge(stub_lines),
        seen_lines,
        coverage: r.lines.map(|total| match total {
            0 => 0.0,
            total => seen_lines as f64 / total as f64,
        }),
        reread_lines: showings - seen_lines,
        peek_bytes: shown.iter().map(|p| p.bytes).sum(),
        never_peeked: shown.is_empty(),
        peeks: shown,
        missed_errors,
    })
}

/// The lines of one value the model was shown: those of its stub's head and tail previews and
/// of every successful peek of it. The one rule behind coverage and a search's `seen`.
pub(crate) struct SeenLines {
    pub lines: BTreeSet<u64>,
}

impl SeenLines {
    pub(crate) fn of(stub: &Stub, value_id: &str, peeks: &[PeekCall]) -> Self {
        let mut lines = BTreeSet::new();
        for (a, b) in [stub.head, stub.tail].into_iter().flatten() {
            lines.extend(a..=b);
        }
        for p in peeks_of(peeks, value_id).filter(|p| p.ok) {
            lines.extend(shown_lines(&p.content));
        }
        Self { lines }
    }

    pub(crate) fn contains(&self, line: u64) -> bool {
        self.lines.contains(&line)
    }
}

fn peeks_of<'p>(peeks: &'p [PeekCall], value_id: &'p str) -> impl Iterator<Item = &'p PeekCall> {
    peeks
        .iter()
        .filter(move |p| p.value_id.as_deref() == Some(value_id))
}

/// The error-looking lines of `content` not in `seen`.
/// A line longer than this is matched on its first this many bytes.
const MATCHED_LINE_MAX: usize = 16 << 20;

fn missed(
    content: &ValueText,
    seen: &BTreeSet<u64>,
    errors: &ErrorPattern,
) -> std::io::Result<MissedErrors> {
    let mut out = MissedErrors::default();
    // Lines as the line model splits them: on `\n`, a `\r` before it not part of the line.
    // The text is streamed, one line held at a time.
    let mut reader = std::io::BufReader::with_capacity(1 << 20, content.reader());
    let mut line = Vec::new();
    let mut n = 0u64;
    loop {
        line.clear();
        let (len, ended) = read_line_capped(&mut reader, &mut line, MATCHED_LINE_MAX)?;
        if len == 0 {
            break;
        }
        n += 1;
        if ended && line.last() == Some(&b'\r') {
            line.pop();
        }
        if !seen.contains(&n) && errors.matches(&String::from_utf8_lossy(&line)) {
            out.count += 1;
            if out.lines.len() < MISSED_LISTED {
                out.lines.push(n);
            }
        }
    }
    Ok(out)
}

/// Reads one line (its `\n` dropped) keeping at most `cap` bytes of it; returns the bytes it
/// spans and whether a `\n` ended it within the cap.
fn read_line_capped(
    reader: &mut impl std::io::BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<(u64, bool)> {
    let mut len = 0u64;
    loop {
        let avail = reader.fill_buf()?;
        if avail.is_empty() {
            return Ok((len, false));
        }
        let (take, newline) = match memchr::memchr(b'\n', avail) {
            Some(at) => (at, true),
            None => (avail.len(), false),
        };
        let room = cap.saturating_sub(line.len()).min(take);
        line.extend_from_slice(&avail[..room]);
        len += take as u64 + u64::from(newline);
        reader.consume(take + usize::from(newline));
        if newline {
            return Ok((len, line.len() < cap || room == take));
        }
    }
}

/// Line numbers as merged `[first, last]` ranges.
fn ranges(mut lines: Vec<u64>) -> Vec<[u64; 2]> {
    lines.sort_unstable();
    lines.dedup();
    merge(lines.into_iter().map(|n| [n, n]).collect())
}

/// Ranges sorted and merged where they overlap or touch.
fn merge(mut ranges: Vec<[u64; 2]>) -> Vec<[u64; 2]> {
    ranges.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(ranges.len());
    for [a, b] in ranges {
        match out.last_mut() {
            Some(last) if a <= last[1].saturating_add(1) => last[1] = last[1].max(b),
            _ => out.push([a, b]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_where_they_touch() {
        assert_eq!(ranges(vec![5, 3, 4, 9, 4, 1]), [[1, 1], [3, 5], [9, 9]]);
        assert_eq!(
            merge(vec![[10, 12], [1, 4], [5, 6], [11, 20]]),
            [[1, 6], [10, 20]]
        );
        assert!(ranges(Vec::new()).is_empty());
    }
}
