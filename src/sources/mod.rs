//! Other agents' stores read as runs. A source turns its kind of store into the runs, events,
//! results and value files the harness's runs directory gives; everything past the fold (the
//! views, the CLI, search, insights) reads them without knowing which source it was.
//!
//! - `klide`: the harness's runs directory (`<id>.jsonl`, `<id>.values/`), read by `crate::runs`.
//! - `claude`: Claude Code's `projects` directory, or one project folder in it
//!   ([`claude`], docs/agents.md).
//! - `codex`: Codex CLI's `sessions` directory of rollouts ([`codex`]).

pub mod claude;
pub(crate) mod codex;
mod detect;

pub use detect::{default_locations, detect, force_kinds, AgentLocation};

use crate::runs::analyze::Analyzer;
use crate::transcript::RawLine;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The kind of store a directory is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS,
)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The harness's runs directory.
    #[default]
    Klide,
    /// Claude Code's projects directory (or one project folder).
    Claude,
    /// Codex CLI's sessions directory.
    Codex,
}

impl SourceKind {
    pub const ALL: [SourceKind; 3] = [SourceKind::Klide, SourceKind::Claude, SourceKind::Codex];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Klide => "klide",
            SourceKind::Claude => "claude",
            SourceKind::Codex => "codex",
        }
    }

    /// What the user calls it.
    pub fn label(self) -> &'static str {
        match self {
            SourceKind::Klide => "harness runs",
            SourceKind::Claude => "Claude Code",
            SourceKind::Codex => "Codex",
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

/// The per-run state of a foreign store's fold.
pub(crate) enum Fold {
    // Boxed: a run has one fold, and the enum stays small.
    Claude(Box<claude::ClaudeFold>),
    Codex(codex::CodexFold),
}

impl Fold {
    pub(crate) fn kind(&self) -> SourceKind {
        match self {
            Fold::Claude(_) => SourceKind::Claude,
            Fold::Codex(_) => SourceKind::Codex,
        }
    }

    /// Folds one complete line of the store's file into `into`.
    pub(crate) fn line(&mut self, into: &mut Analyzer, line: RawLine<'_>) {
        match self {
            Fold::Claude(f) => f.line(into, line),
            Fold::Codex(f) => f.line(into, line),
        }
    }

    /// Whether the last line folded was the run's (a Claude Code session's file also holds its
    /// side conversations' lines).
    pub(crate) fn taken(&self) -> bool {
        match self {
            Fold::Claude(f) => f.taken,
            Fold::Codex(_) => true,
        }
    }
}

/// Milliseconds since the epoch of an ISO 8601 time (`2026-04-02T10:00:00.000Z`).
pub(crate) fn parse_time(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s.trim_end_matches('Z')).ok()?;
    let ms = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// Every complete line of a store's file, as [`crate::transcript::read_lines`] reads a
/// transcript; a Codex `.jsonl.zst` rollout is read through its decompression.
pub(crate) fn read_store_lines(
    path: &std::path::Path,
    each: impl FnMut(RawLine<'_>),
) -> std::io::Result<crate::transcript::ReadOutcome> {
    use crate::transcript::{read_lines, read_lines_from, Cursor};
    if path.extension().is_some_and(|e| e == "zst") {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        let decoder = zstd::stream::read::Decoder::new(file)?;
        return read_lines_from(std::io::BufReader::new(decoder), len, each);
    }
    read_lines(path, Cursor::default(), each)
}

/// The fold a run of `layout` is read with (`None`: the harness's own), with what it must know
/// before the first line.
pub(crate) fn fold_for(
    layout: &crate::runs::Layout,
    id: &str,
    opts: &crate::runs::RunOptions,
) -> std::io::Result<Option<Fold>> {
    let files = layout.runs.get(id);
    Ok(match layout.source {
        SourceKind::Klide => None,
        SourceKind::Codex => Some(Fold::Codex(codex::CodexFold::default())),
        SourceKind::Claude => {
            let none = crate::runs::RunFiles::default();
            let mut fold = claude::ClaudeFold::new(id, files.unwrap_or(&none), opts.verify);
            if let Some(path) = files.and_then(|f| f.transcript.as_deref()) {
                fold.replace(claude::read_replacements(path)?);
            }
            Some(Fold::Claude(Box::new(fold)))
        }
    })
}

/// The value files run `id` of `layout` can name: its own folder's, and for a Claude Code
/// subagent its session's.
pub(crate) fn values_for(
    layout: &crate::runs::Layout,
    id: &str,
) -> std::io::Result<std::collections::BTreeMap<String, crate::runs::values::ValueFile>> {
    let mut values = std::collections::BTreeMap::new();
    if layout.source == SourceKind::Claude {
        let parent = layout.runs.get(id).and_then(|f| f.parent_values.as_deref());
        let own = layout.value_dir(id);
        for dir in [parent, own].into_iter().flatten() {
            // A folder that vanished holds nothing; the run still reads.
            if let Ok(found) = claude::list_values(dir) {
                values.extend(found);
            }
        }
    }
    Ok(values)
}
