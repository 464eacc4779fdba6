//! One transcript line folded: the envelope and event checks that report problems, and what
//! each event adds to the run.

use super::{Analyzer, Terminal};
use crate::fold::timeline::{call_ref, describe_for};
use crate::model::{title_of, Problem, ProblemKind, TimelineEvent, TEXT_MAX};
use crate::transcript::event::{known_event_keys, Event, COMMON_EVENT_KEYS};
use crate::transcript::keys::{
    envelope_and_extra, event_type_and_keys, line_at_once, sorted, Head, LineRead,
};
use crate::transcript::spans::{display, resolve, strip_marker, BigString, LineText};
use crate::transcript::{RawLine, SCHEMA_VERSION};
use std::borrow::Cow;

impl Analyzer {
    pub(crate) fn problem(&mut self, line: u64, kind: ProblemKind, message: String) {
        if kind.is_unreadable() {
            self.run.problems += 1;
            if self.keeps_rows() {
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
    /// Folds one line, and says whether it was this run's: a line of a file several runs share
    /// (a Claude Code session's side conversations) may be another's.
    pub(crate) fn line_taken(&mut self, line: RawLine<'_>) -> bool {
        if let Some((0, count)) = line.glued {
            let message = format!("{count} JSON values on one line: each is read as a line");
            self.problem(line.number, ProblemKind::Glued, message);
        }
        let Some(mut fold) = self.foreign.take() else {
            self.line(line);
            return true;
        };
        fold.line(self, line);
        let taken = fold.taken();
        self.foreign = Some(fold);
        taken
    }

    pub(crate) fn line(&mut self, line: RawLine<'_>) {
        if let Some(mut fold) = self.foreign.take() {
            fold.line(self, line);
            self.foreign = Some(fold);
            return;
        }
        let n = line.number;
        if let Some(why) = line.broken {
            return self.problem(n, ProblemKind::Corrupt, format!("not JSON text: {why}"));
        }
        let Ok(text) = simdutf8::basic::from_utf8(line.bytes) else {
            return self.problem(n, ProblemKind::Corrupt, "not UTF-8 text".to_owned());
        };
        if text.trim().is_empty() {
            return; // A blank line holds nothing to show.
        }
        // The envelope, its event's type and the event, with the keys of both, in one pass;
        // a line that pass refuses is read in the passes that say why.
        let read = match line_at_once(text) {
            Some(read) => read,
            None => match self.read_in_passes(n, text) {
                Some(read) => read,
                None => return,
            },
        };
        let LineRead {
            head,
            envelope_extra,
            kind,
            event_keys,
            event,
        } = read;
        if let Some(v) = head.schema_version.filter(|&v| v > SCHEMA_VERSION) {
            self.run.newer_schema = true;
            if self.newer_versions.insert(v) {
                let msg = format!("schemaVersion {v} from this line on: written by a newer harness; read as version {SCHEMA_VERSION}");
                self.problem(n, ProblemKind::NewerSchema, msg);
            }
        }
        let Some(known) = known_event_keys(&kind) else {
            self.problem(
                n,
                ProblemKind::UnknownEvent,
                format!("unknown event type `{kind}`"),
            );
            let item = TimelineEvent {
                kind: kind.into_owned(),
                ..Default::default()
            };
            self.note(n, head.seq, head.ts, item);
            return;
        };
        let event_extra = sorted(event_keys.into_iter().filter(|k| {
            let k = k.as_ref();
            !(known.contains(&k) || COMMON_EVENT_KEYS.contains(&k))
        }));
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
        let event: Event = match event.or_else(|raw| serde_json::from_str(raw.get())) {
            Ok(e) => e,
            Err(e) => {
                return self.problem(
                    n,
                    ProblemKind::Invalid,
                    format!("invalid {kind} event: {e}"),
                )
            }
        };
        // A row only for a fold that keeps one: a listing's would be made only to be dropped.
        let mut item = self.row_of(&kind, &event);
        if let Some(item) = item.as_mut().filter(|_| !line.spans.is_empty()) {
            show_spans(item, &event, line.spans);
        }
        self.fold(n, line.offset, head.ts, &event, line.spans, item.as_mut());
        self.note_row(n, head.seq, head.ts, item);
    }

    /// The timeline row of an event of type `kind`, when this fold keeps rows.
    pub(super) fn row_of(&self, kind: &str, event: &Event) -> Option<TimelineEvent> {
        let keep = self.keeps_rows();
        keep.then(|| describe_for(kind, event, self.keeps_timeline()))
    }

    /// [`note`](Self::note) of a row made only when rows are kept: the event is counted
    /// either way.
    pub(super) fn note_row(
        &mut self,
        n: u64,
        seq: Option<u64>,
        ts: Option<i64>,
        item: Option<TimelineEvent>,
    ) {
        match item {
            Some(item) => self.note(n, seq, ts, item),
            None => self.count_event(ts),
        }
    }

    /// The line `text` (number `n`) read in a pass for its envelope and another for its
    /// event's type, its event left to be read: none when either refuses it, said as a problem.
    fn read_in_passes<'a>(&mut self, n: u64, text: &'a str) -> Option<LineRead<'a>> {
        let (env, envelope_extra) = match envelope_and_extra(text) {
            Ok(read) => read,
            Err(e) => {
                let message = format!("not a transcript envelope: {e}");
                self.problem(n, ProblemKind::Corrupt, message);
                return None;
            }
        };
        let (kind, event_keys) = match event_type_and_keys(env.event.get()) {
            Ok(read) => read,
            Err(e) => {
                let message = format!("event without a type: {e}");
                self.problem(n, ProblemKind::Corrupt, message);
                return None;
            }
        };
        let head = Head {
            schema_version: env.schema_version,
            run_id: env.run_id,
            seq: env.seq,
            ts: env.ts,
        };
        Some(LineRead {
            head,
            envelope_extra,
            kind: Cow::Owned(kind),
            event_keys,
            event: Err(env.event),
        })
    }

    pub(super) fn note(
        &mut self,
        n: u64,
        seq: Option<u64>,
        ts: Option<i64>,
        mut item: TimelineEvent,
    ) {
        self.count_event(ts);
        if self.keeps_rows() {
            item.line = n;
            item.seq = seq;
            item.ts = ts;
            self.events.push(item);
        }
    }

    /// Counts an event at `ts` in the run's figures (how many, the first and last times),
    /// whether it has a row of its own or is folded into the row before.
    pub(super) fn count_event(&mut self, ts: Option<i64>) {
        self.run.events += 1;
        if let Some(ts) = ts {
            self.run.started_ms.get_or_insert(ts);
            self.last_ts = Some(self.last_ts.map_or(ts, |l| l.max(ts)));
        }
    }

    pub(super) fn fold(
        &mut self,
        n: u64,
        offset: u64,
        ts: Option<i64>,
        event: &Event,
        spans: &[BigString],
        mut item: Option<&mut TimelineEvent>,
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
                    run.title = title_of(display(text, spans));
                }
            }
            Event::AssistantMessage {
                usage,
                timing,
                content,
                ..
            } => {
                if let Some(u) = usage {
                    let cost = self.count_usage(n, u);
                    // The timeline shows each call's cost, an estimate said as such.
                    let shown = item.as_deref_mut().and_then(|i| i.usage.as_mut());
                    if let (Some((c, true)), Some(shown)) = (cost, shown) {
                        shown.cost_usd = Some(c);
                        shown.cost_estimated = Some(true);
                    }
                }
                if let Some(ms) = timing.as_ref().and_then(|t| t.model_ms) {
                    self.run.model_ms += ms;
                }
                // The calls a row lists, named as it names them.
                for call in content.iter().filter_map(call_ref) {
                    self.block_names.insert(call.tool_call_id, call.name);
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
                let text = match resolve(&result.content, spans) {
                    Some(big) => LineText::Span(big),
                    None => LineText::Inline(&result.content),
                };
                let info = self.result(n, offset, ts, tool_call_id, result.ok, text);
                // A row is only kept for a timeline: a listing's read copies nothing into it.
                if let Some(item) = item.filter(|_| self.keeps_timeline()) {
                    item.tool = Some(info.tool.clone());
                    item.result = Some(info.clone());
                }
                self.results.push(info);
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
}

/// A timeline row whose text is a big string's placeholder: its start, and its whole size when
/// that is more than a row shows, as a row shows any text. (The row's text was cut from the
/// placeholder, which is longer than a row's text: the size is the string's, not the cut's.)
fn show_spans(item: &mut TimelineEvent, event: &Event, spans: &[BigString]) {
    let big = match event {
        Event::UserMessage { text, .. } => resolve(text, spans).map(|big| (text, big)),
        _ => None,
    };
    if let Some((text, big)) = big {
        item.text = Some(display(text, spans).to_owned());
        item.text_bytes = (big.bytes() > TEXT_MAX as u64).then_some(big.bytes());
    } else if let Some(text) = &mut item.text {
        // Any other row keeps the text before the marker (its size is the placeholder's).
        strip_marker(text);
    }
    if let Some(thinking) = &mut item.thinking {
        strip_marker(thinking);
    }
}
