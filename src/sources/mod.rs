//! Every kind of store Mission Control reads, each one folder behind one seam ([`Source`],
//! store.rs): the run model, the index, GC, search, insights and the watcher ask a directory's
//! source and never name one (docs/architecture.md).
//!
//! - `klide`: the harness's runs directory (`<id>.jsonl`, `<id>.values/`, spec Parts A-C).
//! - `claude`: Claude Code's `projects` directory, or one project folder in it
//!   ([`claude`], docs/agents.md).
//! - `codex`: Codex CLI's `sessions` directory of rollouts ([`codex`]).
//! - `gemini`: Gemini CLI's chats (`~/.gemini/tmp/<project>/chats/`, [`gemini`]).
//! - `opencode`: opencode's data folder (`~/.local/share/opencode`, [`opencode`]).
//!
//! This file maps each [`SourceKind`] to its implementation; nothing else does.

pub mod claude;
pub(crate) mod codex;
mod detect;
pub(crate) mod gemini;
pub(crate) mod images;
pub(crate) mod klide;
pub(crate) mod lax;
pub(crate) mod opencode;
pub(crate) mod store;
pub mod sweep;

pub use crate::model::SourceKind;
pub use detect::{default_locations, detect, force_kinds, store_root, AgentLocation};
pub use store::{Capabilities, SourceInfo};
pub(crate) use store::{LineFilter, Source, StoreFold, ValueFolders};

use crate::transcript::RawLine;

/// The implementation of kind `kind`: the one place a kind is mapped to its code.
pub(crate) fn store_of(kind: SourceKind) -> &'static dyn Source {
    match kind {
        SourceKind::Klide => &klide::Harness,
        SourceKind::Claude => &claude::ClaudeCode,
        SourceKind::Codex => &codex::Codex,
        SourceKind::Gemini => &gemini::Gemini,
        SourceKind::Opencode => &opencode::Opencode,
    }
}

/// Says that this process reads each store's layout once, then ends (`mctl runs`, `mctl
/// index`): what a layout's read found of the files in it (a Claude Code store's session
/// scans) then goes to the store's cache file only, and is not kept in the process after the
/// read. For the rest of the process: the app, `mctl serve` and `mctl watch`, which read a
/// layout every second and read on only what grew, never call it.
pub fn one_look() {
    claude::one_look();
}

impl SourceKind {
    /// Every kind of store, the harness's first.
    pub const ALL: [SourceKind; 5] = [
        SourceKind::Klide,
        SourceKind::Claude,
        SourceKind::Codex,
        SourceKind::Gemini,
        SourceKind::Opencode,
    ];

    /// The kind's name, as in JSON, `--source` and the run's `source` (`klide`, `claude`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Klide => "klide",
            SourceKind::Claude => "claude",
            SourceKind::Codex => "codex",
            SourceKind::Gemini => "gemini",
            SourceKind::Opencode => "opencode",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for SourceKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SourceKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown source `{s}`: give klide, claude or codex"))
    }
}

/// Every kind of store, as the app is told of them.
pub fn all_sources() -> Vec<SourceInfo> {
    SourceKind::ALL.map(|k| k.info().clone()).to_vec()
}

/// What a searchable string of another agent's line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PieceKind {
    /// A message's or a thought's text.
    Message,
    /// A tool call's input.
    Input,
    /// What the model got of a tool's result.
    Result,
}

/// One searchable string of a line: its kind, the call it belongs to, the text.
pub(crate) type Piece<'v> = (PieceKind, Option<String>, &'v str);

/// Every string inside `v`, in order (a tool call's input is searched whole).
pub(crate) fn strings<'v>(v: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    use serde_json::Value;
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Milliseconds since the epoch of an ISO 8601 time (`2026-04-02T10:00:00.000Z`).
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s.trim_end_matches('Z')).ok()?;
    let ms = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// Every complete line of a store's file, as [`crate::transcript::read_lines`] reads a
/// transcript (a line of glued JSON values as those values); a Codex `.jsonl.zst` rollout is
/// read through its decompression.
pub(crate) fn read_store_lines(
    path: &std::path::Path,
    mut each: impl FnMut(RawLine<'_>),
) -> std::io::Result<crate::transcript::ReadOutcome> {
    use crate::transcript::{read_lines_from, split_glued};
    if path.extension().is_some_and(|e| e == "zst") {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        let decoder = zstd::stream::read::Decoder::new(file)?;
        // A line of several JSON values glued together is read as those values.
        let each = |line: RawLine<'_>| split_glued(line, &mut each);
        return read_lines_from(std::io::BufReader::new(decoder), len, each);
    }
    read_store_lines_at(path, Default::default(), None, each)
}

/// [`read_store_lines`] of a plain file from line `start` on (the lines before it are not
/// read: numbers and offsets are still the file's).
pub(crate) fn read_store_lines_at(
    path: &std::path::Path,
    start: crate::model::layout::LineStart,
    end: Option<crate::model::layout::ReadEnd>,
    mut each: impl FnMut(RawLine<'_>),
) -> std::io::Result<crate::transcript::ReadOutcome> {
    use crate::transcript::{read_lines_within, split_glued, Cursor};
    // A start the file no longer has a line at (rewritten since it was scanned) is not
    // trusted: the file is read from its start.
    let from = match follows_a_newline(path, start.offset) {
        true => Cursor {
            offset: start.offset,
            lines: start.lines,
        },
        false => Cursor::default(),
    };
    // A line of several JSON values glued together is read as those values. A read from the
    // file's start (the file rewritten) is read to its end.
    let end = end.filter(|_| from.offset == start.offset);
    read_lines_within(path, from, end, |line| split_glued(line, &mut each))
}

/// Whether the byte before `offset` in the file at `path` ends a line (`offset` 0: the file's
/// start).
fn follows_a_newline(path: &std::path::Path, offset: u64) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Some(before) = offset.checked_sub(1) else {
        return true;
    };
    let mut byte = [0u8];
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(before))?;
        f.read_exact(&mut byte)
    });
    read.is_ok() && byte[0] == b'\n'
}
