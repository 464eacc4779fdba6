//! The figures that need more than one line: a run's status and strays from all the lines
//! folded so far, and what the run's files add (their sizes, the summary).

use super::{Analyzer, Terminal};
use crate::fold::summary::apply_summary;
use crate::model::layout::stem_file_name;
use crate::model::options::RunOptions;
use crate::model::{Run, RunDetail, RunStatus, StrayFile};
use std::path::Path;

impl Analyzer {
    /// The figures that need the whole file so far: status (spec A.4) by the clock `now_ms`,
    /// last activity, strays.
    fn derive(&self, transcript_mtime_ms: Option<i64>, now_ms: i64) -> (Run, Vec<StrayFile>) {
        let mut run = self.run.clone();
        let terminal = self
            .last_terminal
            .filter(|(line, _)| self.last_user_line.is_none_or(|u| *line > u))
            .map(|(_, t)| t);
        run.status = match terminal {
            Some(Terminal::Done) => RunStatus::Done,
            Some(Terminal::Error) => RunStatus::Error,
            Some(Terminal::Cancelled) => RunStatus::Cancelled,
            None => {
                let changed = transcript_mtime_ms.or(self.last_ts).unwrap_or(0);
                RunOptions {
                    now_ms,
                    ..self.opts
                }
                .status_by_clock(changed)
            }
        };
        if terminal.is_none_or(|t| t == Terminal::Done) {
            run.error_code = None;
            run.error_message = None;
        }
        run.updated_ms = match (transcript_mtime_ms, self.last_ts) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let strays: Vec<StrayFile> = self
            .values
            .values()
            .filter(|v| !self.matched_values.contains(&v.stem))
            .map(|v| StrayFile {
                name: stem_file_name(&v.stem),
                bytes: v.bytes,
            })
            .collect();
        run.strays = strays.len() as u64;
        if let Some(title) = &self.title_override {
            run.title = crate::model::title_of(title);
        }
        if let (true, Some(title)) = (run.title.is_empty(), &self.fallback_title) {
            run.title = crate::model::title_of(title);
        }
        run.tools = self.tool_names.iter().cloned().collect();
        // Its own figures until a listing adds its children's (`model::family`).
        run.tokens_with_children = run.input_tokens.saturating_add(run.output_tokens);
        run.cost_with_children_usd = run.cost_usd;
        (run, strays)
    }

    /// The run as the lines folded so far describe it, its status told by the clock `now_ms`
    /// (a run followed for an hour turns `interrupted` when its transcript stops changing); the
    /// fold goes on.
    pub(crate) fn snapshot_at(&self, transcript_mtime_ms: Option<i64>, now_ms: i64) -> Run {
        self.derive(transcript_mtime_ms, now_ms).0
    }

    /// Ends the fold: the run with its timeline, results and problems.
    pub(crate) fn finish(self, transcript_mtime_ms: Option<i64>) -> RunDetail {
        let (run, strays) = self.derive(transcript_mtime_ms, self.opts.now_ms);
        RunDetail {
            run,
            events: self.events,
            results: self.results,
            problems: self.problems,
            strays,
        }
    }
}

/// What a run's files add to the figures its transcript folds to. A whole read and a live tail
/// both end with this, so the list built either way tells the same run.
pub(crate) struct FileFigures<'a> {
    pub transcript: Option<&'a Path>,
    pub summary: Option<&'a Path>,
    /// The transcript's size, a torn last line included.
    pub transcript_bytes: u64,
    /// Bytes of a torn last line.
    pub pending_bytes: u64,
}

impl FileFigures<'_> {
    pub(crate) fn complete(&self, run: &mut Run, opts: &RunOptions) {
        run.has_transcript = self.transcript.is_some();
        run.has_summary = self.summary.is_some();
        run.transcript_bytes = self.transcript_bytes;
        run.pending_bytes = self.pending_bytes;
        if let Some(path) = self.summary {
            apply_summary(path, run, self.transcript.is_none(), opts);
        }
    }
}
