//! Searching another agent's session file (`crate::sources`): each line that may hold a match
//! is parsed and its strings searched by what they are, as a harness transcript's are: message
//! and thinking text, tool call inputs, and what the model got of each result (a persisted
//! output's full text is searched in its value file).

use super::hit::{HitKind, SearchHit};
use super::scan::Ctx;
use super::transcript::{hits_of, origin, Transcript};
use crate::sources::{LineFilter, PieceKind, Source};
use serde_json::Value;
use std::io;

/// Searches one session file of store `store`, the lines of it that are the run's (`lines`:
/// a Claude Code session's side conversations are runs of their own). Returns the bytes read.
pub(crate) fn search_foreign(
    ctx: &Ctx<'_>,
    t: &Transcript<'_>,
    store: &dyn Source,
    mut lines: Box<dyn LineFilter>,
) -> io::Result<u64> {
    let mut pending: Vec<SearchHit> = Vec::new();
    let outcome = store.read_records(t.path, t.run, &mut |line| {
        // Every line is looked at, so that a side conversation knows its lines' links.
        if ctx.stopped() || !lines.takes_raw(line.bytes) {
            return;
        }
        if !ctx.matcher.may_match_json(line.bytes) {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return; // the run model reports an unreadable line
        };
        let pieces = store.search_pieces(&v).unwrap_or_default();
        for (i, (kind, call, text)) in pieces.into_iter().enumerate() {
            let kind = match kind {
                PieceKind::Message => HitKind::Message,
                PieceKind::Input => HitKind::Input,
                PieceKind::Result => HitKind::Result,
            };
            if !t.kinds.has(kind) {
                continue;
            }
            let o = origin(t, line.number, call.as_deref());
            pending.extend(hits_of(ctx.search_slice(text.as_bytes()), &o, kind, i));
        }
    })?;
    ctx.emit_charged(pending);
    Ok(outcome.file_len)
}
