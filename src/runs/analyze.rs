//! Reading one run: every transcript line in file order, folded into the run model (status,
//! totals, retention states), the timeline and the list of problems. The fold works one line at
//! a time, so a live run can be updated from its appended lines alone.

use super::layout::{stem_file_name, value_dir_name, Layout};
use super::model::*;
use super::options::{modified_ms, RunOptions};
use super::summary::apply_summary;
use super::timeline::describe;
use super::values::{find_value_file, list_value_files, matches_content, ValueFile};
use crate::retained::{count_lines, stub_for, value_id};
use crate::transcript::event::{
    known_event_keys, unknown_keys, Envelope, Event, EventType, ENVELOPE_KEYS,
};
use crate::transcript::{read_lines, Cursor, RawLine, SCHEMA_VERSION};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Terminal {
    Done,
    Error,
    Cancelled,
}

/// The fold over a run's lines.
pub struct Analyzer {
    opts: RunOptions,
    keep_timeline: bool,
    run: Run,
    values: BTreeMap<String, ValueFile>,
    /// Where value files written after the fold started are looked up (a live run).
    values_dir: Option<std::path::PathBuf>,
    names: HashMap<String, String>,
    block_names: HashMap<String, String>,
    started_ts: HashMap<String, i64>,
    tool_ids: HashSet<String>,
    tool_names: BTreeSet<String>,
    matched_values: HashSet<String>,
    newer_versions: BTreeSet<u64>,
    last_user_line: Option<u64>,
    last_terminal: Option<(u64, Terminal)>,
    last_ts: Option<i64>,
    events: Vec<TimelineEvent>,
    results: Vec<ResultInfo>,
    problems: Vec<Problem>,
}

impl Analyzer {
    pub fn new(
        id: &str,
        values: BTreeMap<String, ValueFile>,
        opts: RunOptions,
        keep_timeline: bool,
    ) -> Self {
        let mut run = Run {
            id: id.to_owned(),
            ..Default::default()
        };
        run.value_files = values.len() as u64;
        run.value_bytes = values.values().fold(0u64, |a, v| a.saturating_add(v.bytes));
        Self {
            opts,
            keep_timeline,
            run,
            values,
            values_dir: None,
            names: HashMap::new(),
            block_names: HashMap::new(),
            started_ts: HashMap::new(),
            tool_ids: HashSet::new(),
            tool_names: BTreeSet::new(),
            matched_values: HashSet::new(),
            newer_versions: BTreeSet::new(),
            last_user_line: None,
            last_terminal: None,
            last_ts: None,
            events: Vec::new(),
            results: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// A live fold: the harness writes a value file just before the line that refers to it, so
    /// a result whose file was not there when the directory was listed is looked up in `dir`.
    pub fn look_up_values_in(&mut self, dir: &Path) {
        self.values_dir = Some(dir.to_path_buf());
    }

    /// Whether a result folded so far names value `id` and was classified without its file
    /// (restored, or written after the result's line): its state is stale.
    pub fn missed_value(&self, id: &str) -> bool {
        self.matched_values.contains(id) && !self.values.contains_key(id)
    }

    /// Counts a value file that appeared after the directory was listed.
    pub fn add_value(&mut self, file: ValueFile) {
        if !self.values.contains_key(&file.stem) {
            self.run.value_files += 1;
            self.run.value_bytes = self.run.value_bytes.saturating_add(file.bytes);
            self.values.insert(file.stem.clone(), file);
        }
    }

    fn problem(&mut self, line: u64, kind: ProblemKind, message: String) {
        if kind.is_unreadable() {
            self.run.problems += 1;
            if self.keep_timeline {
                self.events.push(TimelineEvent {
                    line,
                    kind: "unreadable".to_owned(),
                    problem: Some(message.clone()),
                    ..Default::default()
                });
            }
        } else if line > 0 {
            self.run.warnings += 1;
        }
        self.problems.push(Problem {
            line,
            kind,
            message,
        });
    }

    /// Folds one complete transcript line.
    pub fn line(&mut self, line: RawLine<'_>) {
        let n = line.number;
        let Ok(text) = std::str::from_utf8(line.bytes) else {
            return self.problem(n, ProblemKind::Corrupt, "not UTF-8 text".to_owned());
        };
        if text.trim().is_empty() {
            return; // A blank line holds nothing to show.
        }
        let env: Envelope = match serde_json::from_str(text) {
            Ok(env) => env,
            Err(e) => {
                return self.problem(
                    n,
                    ProblemKind::Corrupt,
                    format!("not a transcript envelope: {e}"),
                )
            }
        };
        let kind = match serde_json::from_str::<EventType>(env.event.get()) {
            Ok(t) => t.kind,
            Err(e) => {
                return self.problem(
                    n,
                    ProblemKind::Corrupt,
                    format!("event without a type: {e}"),
                )
            }
        };
        if let Some(v) = env.schema_version.filter(|&v| v > SCHEMA_VERSION) {
            self.run.newer_schema = true;
            if self.newer_versions.insert(v) {
                let msg = format!("schemaVersion {v} from this line on: written by a newer harness; read as version {SCHEMA_VERSION}");
                self.problem(n, ProblemKind::NewerSchema, msg);
            }
        }
        let envelope_extra = unknown_keys(text, ENVELOPE_KEYS, false);
        let Some(known) = known_event_keys(&kind) else {
            self.problem(
                n,
                ProblemKind::UnknownEvent,
                format!("unknown event type `{kind}`"),
            );
            self.note_event(
                n,
                &env,
                TimelineEvent {
                    kind,
                    ..Default::default()
                },
            );
            return;
        };
        let event_extra = unknown_keys(env.event.get(), known, true);
        if !envelope_extra.is_empty() || !event_extra.is_empty() {
            let mut parts = Vec::new();
            if !envelope_extra.is_empty() {
                parts.push(format!("envelope: {}", envelope_extra.join(", ")));
            }
            if !event_extra.is_empty() {
                parts.push(format!("{kind}: {}", event_extra.join(", ")));
            }
            self.problem(
                n,
                ProblemKind::UnknownKeys,
                format!("unknown keys, ignored ({})", parts.join("; ")),
            );
        }
        let event: Event = match serde_json::from_str(env.event.get()) {
            Ok(e) => e,
            Err(e) => {
                return self.problem(
                    n,
                    ProblemKind::Invalid,
                    format!("invalid {kind} event: {e}"),
                )
            }
        };
        let mut item = describe(&kind, &event);
        self.fold(n, line.offset, env.ts, &event, &mut item);
        self.note_event(n, &env, item);
    }

    fn note_event(&mut self, n: u64, env: &Envelope<'_>, mut item: TimelineEvent) {
        self.run.events += 1;
        if let Some(ts) = env.ts {
            self.run.started_ms.get_or_insert(ts);
            self.last_ts = Some(self.last_ts.map_or(ts, |l| l.max(ts)));
        }
        if self.keep_timeline {
            item.line = n;
            item.seq = env.seq;
            item.ts = env.ts;
            self.events.push(item);
        }
    }

    fn fold(
        &mut self,
        n: u64,
        offset: u64,
        ts: Option<i64>,
        event: &Event,
        item: &mut TimelineEvent,
    ) {
        let run = &mut self.run;
        match event {
            Event::RunStarted {
                cwd,
                mode,
                provider,
                model,
            } => {
                // Only the first dispatch writes it; keep the first if a file holds several.
                run.provider = run.provider.take().or_else(|| provider.clone());
                run.model = run.model.take().or_else(|| model.clone());
                run.mode = run.mode.take().or_else(|| mode.clone());
                run.cwd = run.cwd.take().or_else(|| cwd.clone());
            }
            Event::UserMessage { text, .. } => {
                run.dispatches += 1;
                self.last_user_line = Some(n);
                if run.title.is_empty() {
                    run.title = title_of(text);
                }
            }
            Event::AssistantMessage { usage, timing, .. } => {
                if let Some(u) = usage {
                    // Saturating: a hostile figure must not wrap (or panic) the totals.
                    run.input_tokens = run
                        .input_tokens
                        .saturating_add(u.prompt_tokens.unwrap_or(0));
                    run.output_tokens = run
                        .output_tokens
                        .saturating_add(u.completion_tokens.unwrap_or(0));
                    run.cost_usd += u.cost_usd.unwrap_or(0.0);
                }
                if let Some(ms) = timing.as_ref().and_then(|t| t.model_ms) {
                    run.model_ms += ms;
                }
                for call in &item.tool_calls {
                    self.block_names
                        .insert(call.tool_call_id.clone(), call.name.clone());
                }
            }
            Event::ToolCallStarted {
                tool_call_id, name, ..
            } => {
                if self.tool_ids.insert(tool_call_id.clone()) {
                    run.tool_calls += 1;
                }
                if let Some(name) = name {
                    self.names.insert(tool_call_id.clone(), name.clone());
                }
                if let Some(ts) = ts {
                    self.started_ts.insert(tool_call_id.clone(), ts);
                }
            }
            Event::ToolCallFinished {
                tool_call_id,
                result,
            } => {
                if self.tool_ids.insert(tool_call_id.clone()) {
                    run.tool_calls += 1;
                }
                let info = self.result(n, offset, ts, tool_call_id, result.ok, &result.content);
                item.tool = Some(info.tool.clone());
                self.results.push(info.clone());
                item.result = Some(info);
            }
            Event::RunResult { .. } => self.last_terminal = Some((n, Terminal::Done)),
            Event::ContextCompacted { .. } => run.compacted_at_line = Some(n),
            Event::RunError { error } => {
                let code = error.as_ref().and_then(|e| e.code.clone());
                let terminal = if code.as_deref() == Some("aborted") {
                    Terminal::Cancelled
                } else {
                    Terminal::Error
                };
                self.last_terminal = Some((n, terminal));
                run.error_code = code;
                run.error_message = error.as_ref().and_then(|e| e.message.clone());
            }
            _ => {}
        }
    }

    fn tool_name(&self, id: &str) -> String {
        self.names
            .get(id)
            .or_else(|| self.block_names.get(id))
            .cloned()
            .unwrap_or_else(|| "tool".to_owned())
    }

    /// Classifies one result (spec B.1) and adds it to the run's figures.
    fn result(
        &mut self,
        n: u64,
        offset: u64,
        ts: Option<i64>,
        id: &str,
        ok: bool,
        content: &str,
    ) -> ResultInfo {
        let tool = self.tool_name(id);
        if !self.tool_names.contains(&tool) {
            self.tool_names.insert(tool.clone());
        }
        let vid = value_id(id);
        let bytes = content.len() as u64;
        self.matched_values.insert(vid.clone());
        if bytes > self.opts.threshold && !self.values.contains_key(&vid) {
            let found = self
                .values_dir
                .as_deref()
                .and_then(|d| find_value_file(d, &vid));
            if let Some(file) = found {
                self.add_value(file);
            }
        }
        let file = self.values.get(&vid);
        let state = if bytes <= self.opts.threshold {
            RetentionState::Inline
        } else {
            match file.map(|f| matches_content(f, content.as_bytes(), self.opts.verify)) {
                None => RetentionState::Unretained,
                Some(Ok(true)) => RetentionState::Retained,
                Some(Ok(false)) => RetentionState::Damaged,
                Some(Err(e)) => {
                    let msg = format!("value file {} cannot be read: {e}", stem_file_name(&vid));
                    self.problems.push(Problem {
                        line: n,
                        kind: ProblemKind::Run,
                        message: msg,
                    });
                    RetentionState::Damaged
                }
            }
        };
        let run = &mut self.run;
        run.results += 1;
        match state {
            RetentionState::Inline => run.inline += 1,
            RetentionState::Retained => {
                run.retained += 1;
                run.retained_bytes = run.retained_bytes.saturating_add(bytes);
            }
            RetentionState::Unretained => {
                run.unretained += 1;
                run.unretained_bytes = run.unretained_bytes.saturating_add(bytes);
            }
            RetentionState::Damaged => run.damaged += 1,
        }
        // Spec B.5: a resume sends the stub whenever the value file exists (it does not compare
        // bytes), so a damaged result costs a stub too.
        let context_bytes = match state {
            RetentionState::Retained | RetentionState::Damaged => {
                stub_for(&vid, &tool, content).len() as u64
            }
            _ => bytes,
        };
        ResultInfo {
            tool_call_id: id.to_owned(),
            tool,
            ok,
            bytes,
            lines: count_lines(content.as_bytes()),
            state,
            value_id: vid,
            line: n,
            value_file_bytes: file.map(|f| f.bytes),
            context_bytes,
            started_ms: self.started_ts.get(id).copied(),
            finished_ms: ts,
            offset,
        }
    }

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
                if now_ms.saturating_sub(changed) <= self.opts.running_window_ms {
                    RunStatus::Running
                } else {
                    RunStatus::Interrupted
                }
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
        run.tools = self.tool_names.iter().cloned().collect();
        (run, strays)
    }

    /// The run as the lines folded so far describe it; the fold goes on.
    pub fn snapshot(&self, transcript_mtime_ms: Option<i64>) -> Run {
        self.derive(transcript_mtime_ms, self.opts.now_ms).0
    }

    /// [`snapshot`](Self::snapshot) with the status told by another clock: a run followed for
    /// an hour turns `interrupted` when its transcript stops changing.
    pub fn snapshot_at(&self, transcript_mtime_ms: Option<i64>, now_ms: i64) -> Run {
        self.derive(transcript_mtime_ms, now_ms).0
    }

    /// Says that the run's value directory is a symbolic link, which is never read.
    pub fn linked_values(&mut self) {
        let id = &self.run.id;
        let message = format!(
            "{} is a symbolic link: it is not read and never collected",
            value_dir_name(id)
        );
        self.problems.push(Problem {
            line: 0,
            kind: ProblemKind::Run,
            message,
        });
    }

    /// The timeline entries folded since the last call (a live view sends only those).
    pub fn take_events(&mut self) -> Vec<TimelineEvent> {
        std::mem::take(&mut self.events)
    }

    /// Drops the results and problems folded so far: a live fold of every run of a directory
    /// needs only the run's figures (the events carry their own results), and keeping every
    /// result of every run would grow without end.
    pub fn forget_details(&mut self) {
        self.results.clear();
        self.problems.clear();
    }

    /// Ends the fold: the run with its timeline, results and problems.
    pub fn finish(self, transcript_mtime_ms: Option<i64>) -> RunDetail {
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

/// Reads run `id` of a runs directory.
pub fn analyze_run(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
) -> io::Result<RunDetail> {
    let values = match layout.value_dir(id) {
        Some(dir) => list_value_files(dir)?,
        None => BTreeMap::new(),
    };
    analyze_run_with(layout, id, opts, keep_timeline, values)
}

/// [`analyze_run`] with the run's value files already listed (GC lists them anyway).
pub fn analyze_run_with(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
    values: BTreeMap<String, ValueFile>,
) -> io::Result<RunDetail> {
    let files = layout.runs.get(id).cloned().unwrap_or_default();
    let mut analyzer = Analyzer::new(id, values, *opts, keep_timeline);
    if layout.linked_value_dirs.contains(id) {
        analyzer.linked_values();
    }
    let mut mtime = None;
    let mut transcript_bytes = 0;
    let mut pending = 0;
    if let Some(path) = &files.transcript {
        let outcome = read_lines(path, Cursor::default(), |line| analyzer.line(line))?;
        transcript_bytes = outcome.file_len;
        pending = outcome.pending_bytes;
        mtime = fs::metadata(path).ok().as_ref().and_then(modified_ms);
    } else {
        analyzer.problems.push(Problem {
            line: 0,
            kind: ProblemKind::Run,
            message: "no transcript: only a summary file".to_owned(),
        });
    }
    let mut detail = analyzer.finish(mtime);
    let files = FileFigures {
        transcript: files.transcript.as_deref(),
        summary: files.summary.as_deref(),
        transcript_bytes,
        pending_bytes: pending,
    };
    files.complete(&mut detail.run, opts);
    Ok(detail)
}

/// What a run's files add to the figures its transcript folds to. A whole read and a live tail
/// both end with this, so the list built either way tells the same run.
pub struct FileFigures<'a> {
    pub transcript: Option<&'a Path>,
    pub summary: Option<&'a Path>,
    /// The transcript's size, a torn last line included.
    pub transcript_bytes: u64,
    /// Bytes of a torn last line.
    pub pending_bytes: u64,
}

impl FileFigures<'_> {
    pub fn complete(&self, run: &mut Run, opts: &RunOptions) {
        run.has_transcript = self.transcript.is_some();
        run.has_summary = self.summary.is_some();
        run.transcript_bytes = self.transcript_bytes;
        run.pending_bytes = self.pending_bytes;
        if let Some(path) = self.summary {
            apply_summary(path, run, self.transcript.is_none(), opts);
        }
    }
}
