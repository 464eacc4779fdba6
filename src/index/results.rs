//! The results the index keeps of a run that has a value directory: what GC planning, the
//! storage figures and opening a value need of each result, so that none of them reads the
//! transcript of a run that did not change. Runs without a value directory keep none (nothing
//! of theirs is collected, and their results are small enough to read).

use crate::model::{ResultInfo, ResultSizes, RetentionState};
use serde::{Deserialize, Serialize};

/// One result, kept in `postcard`'s compact binary form (as the run is).
#[derive(Serialize, Deserialize)]
struct Kept(
    String,         // tool call id
    String,         // tool
    bool,           // ok
    u64,            // bytes
    Option<u64>,    // lines (None: unknown)
    RetentionState, // state (value files compared by size and sampled ends, as a listing does)
    String,         // value id
    u64,            // transcript line
    Option<u64>,    // value file bytes
    u64,            // context bytes
    Option<i64>,    // started
    Option<i64>,    // finished
    u64,            // byte offset of the line
    Option<u64>,    // stub bytes
    u64,            // invisible format characters
);

/// The results as the index keeps them.
pub(super) fn encode(results: &[ResultInfo]) -> Option<Vec<u8>> {
    let kept: Vec<Kept> = results
        .iter()
        .map(|r| {
            Kept(
                r.tool_call_id.clone(),
                r.tool.clone(),
                r.ok,
                r.bytes,
                r.lines,
                r.state,
                r.value_id.clone(),
                r.line,
                r.value_file_bytes,
                r.context_bytes,
                r.started_ms,
                r.finished_ms,
                r.offset,
                r.stub_bytes,
                r.format_chars,
            )
        })
        .collect();
    postcard::to_stdvec(&kept).ok()
}

/// The results a row keeps; `None` when they cannot be read back (the run is read again).
pub(super) fn decode(bytes: &[u8]) -> Option<Vec<ResultInfo>> {
    let kept: Vec<Kept> = postcard::from_bytes(bytes).ok()?;
    Some(
        kept.into_iter()
            .map(|k| ResultInfo {
                tool_call_id: k.0,
                tool: k.1,
                ok: k.2,
                bytes: k.3,
                lines: k.4,
                state: k.5,
                value_id: k.6,
                line: k.7,
                value_file_bytes: k.8,
                context_bytes: k.9,
                started_ms: k.10,
                finished_ms: k.11,
                offset: k.12,
                stub_bytes: k.13,
                format_chars: k.14,
            })
            .collect(),
    )
}

/// The sizes of every result of a run (the threshold what-if); `None` unless the run was read
/// with every stub measured (a listing does not measure them: the what-if reads such a run
/// again, once).
pub(super) fn encode_sizes(results: &[ResultInfo]) -> Option<Vec<u8>> {
    postcard::to_stdvec(&ResultSizes::of(results)?).ok()
}

/// The sizes a row keeps; `None` when they cannot be read back (the run is read again).
pub(super) fn decode_sizes(bytes: &[u8]) -> Option<ResultSizes> {
    postcard::from_bytes(bytes).ok()
}
