//! The fold's door for other agents' stores (`crate::sources`): their lines become the
//! harness's events, folded exactly as the harness's own, with the retention state the store's
//! own rules give each result (a Claude Code stub, a Codex cut) rather than the size rule.

use super::{Analyzer, Terminal};
use crate::model::values::ValueFile;
use crate::model::{ProblemKind, ResultInfo, RetentionState, Run, TimelineEvent, Usage};
use crate::retained::json_string::Measured;
use crate::retained::{count_format_chars, count_lines};
use crate::transcript::event::{Event, ToolResult};

/// A result classified by its store: what the model got, what the full text is and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForeignResult {
    pub state: RetentionState,
    /// Size of the full output in bytes, as far as it is known.
    pub bytes: u64,
    /// `None` when the full text is lost and nothing says how many lines it had.
    pub lines: Option<u64>,
    pub format_chars: u64,
    /// The value file's stem (`toolu_…`, a Bash task id), or the call id when there is none.
    pub value_id: String,
    pub value_file_bytes: Option<u64>,
    /// What the model got in its context for this result (the stub, the cut text).
    pub context_bytes: u64,
    /// The stub's size, when the model got one.
    pub stub_bytes: Option<u64>,
}

impl ForeignResult {
    /// A result whose whole output the model got (`seen`).
    pub(crate) fn inline(id: &str, seen: &str) -> Self {
        let lines = count_lines(seen.as_bytes());
        Self::inline_measured(id, seen.len() as u64, lines, count_format_chars(seen))
    }

    /// [`inline`](Self::inline) of an output measured, not held: its bytes, lines and format
    /// characters.
    pub(crate) fn inline_measured(id: &str, bytes: u64, lines: u64, format_chars: u64) -> Self {
        Self {
            state: RetentionState::Inline,
            bytes,
            lines: Some(lines),
            format_chars,
            value_id: id.to_owned(),
            value_file_bytes: None,
            context_bytes: bytes,
            stub_bytes: None,
        }
    }

    /// [`inline`](Self::inline) of an output measured on its spelling in a JSON string as
    /// `text`: `None` when the spelling does not tell (a `\u` escape, whose character a
    /// measure does not see).
    pub(crate) fn inline_spelled(id: &str, text: Measured) -> Option<Self> {
        (!text.unicode)
            .then(|| Self::inline_measured(id, text.bytes, text.lines(), text.format_chars))
    }

    /// A result whose output its store saved to a file, the model getting `stub`: retained
    /// while the file is there (`full`: its text and its size on disk), swept once the store's
    /// own cleanup (or a GC) took it (`None`: its length is then what the stub states, else
    /// unknown).
    pub(crate) fn saved(id: &str, stub: &str, full: Option<(&str, u64)>) -> Self {
        let seen = Self {
            stub_bytes: Some(stub.len() as u64),
            ..Self::inline(id, stub)
        };
        match full {
            Some((text, file_bytes)) => Self {
                state: RetentionState::Retained,
                bytes: text.len() as u64,
                lines: Some(count_lines(text.as_bytes())),
                format_chars: count_format_chars(text),
                value_file_bytes: Some(file_bytes),
                ..seen
            },
            None => Self {
                state: RetentionState::Swept,
                lines: None,
                ..seen
            },
        }
    }
}

impl ForeignResult {
    /// A swept result's length as its stub states it (`bytes`, `lines`), when it does: the
    /// file is gone, and the stub is all that says how big the output was.
    pub(crate) fn stated(self, bytes: Option<u64>, lines: Option<u64>) -> Self {
        match self.state {
            RetentionState::Swept => Self {
                bytes: bytes.unwrap_or(self.bytes),
                lines: lines.or(self.lines),
                ..self
            },
            _ => self,
        }
    }
}

impl Analyzer {
    /// One event of a foreign store, read from line `n` at `offset`: described, folded and
    /// noted as the harness's own event would be. A `tool_call_finished` takes `result` as its
    /// classification.
    pub(crate) fn emit(
        &mut self,
        n: u64,
        offset: u64,
        ts: Option<i64>,
        kind: &str,
        event: &Event,
        result: Option<ForeignResult>,
    ) {
        self.foreign_result = result;
        let mut item = self.row_of(kind, event);
        self.fold(n, offset, ts, event, &[], item.as_mut());
        self.foreign_result = None;
        self.note_row(n, None, ts, item);
    }

    /// A tool's result as its store gives it, read from line `n` at `offset`: its
    /// `tool_call_finished` event (`content`: the text the model got, or none where a listing
    /// measured it instead), classified as `class`.
    pub(crate) fn emit_finished(
        &mut self,
        (n, offset, ts): (u64, u64, Option<i64>),
        (id, ok): (String, bool),
        content: String,
        class: ForeignResult,
    ) {
        let event = Event::ToolCallFinished {
            tool_call_id: id,
            result: ToolResult {
                ok,
                content,
                metadata: None,
            },
        };
        self.emit(n, offset, ts, "tool_call_finished", &event, Some(class));
    }

    /// A line of a type this reader does not know: counted and shown by its type, never fatal.
    pub(crate) fn emit_unknown(&mut self, n: u64, ts: Option<i64>, kind: &str) {
        self.problem(
            n,
            ProblemKind::UnknownEvent,
            format!("unknown line type `{kind}`"),
        );
        let said = |count: u64| match count {
            1 => format!("1 unknown line of type `{kind}`"),
            n => format!("{n} unknown lines of type `{kind}`"),
        };
        // Lines of one unknown type back to back are one folded row, not a row each.
        let last = (self.events.last_mut()).filter(|e| e.kind == kind && e.unknown_lines.is_some());
        if let Some(row) = last {
            let count = row.unknown_lines.unwrap_or(0) + 1;
            row.unknown_lines = Some(count);
            row.text = Some(said(count));
            // Its time counts as any line's: a listing, which keeps no rows, counts it so.
            self.count_event(ts);
            return;
        }
        let item = TimelineEvent {
            kind: kind.to_owned(),
            text: Some(said(1)),
            unknown_lines: Some(1),
            ..Default::default()
        };
        self.note(n, None, ts, item);
    }

    /// Tokens a store reports apart from its messages (streamed blocks of one message, Codex's
    /// `token_count`), counted and priced as a message's usage is.
    pub(crate) fn add_tokens(&mut self, n: u64, usage: &Usage) {
        self.count_usage(n, usage);
    }

    /// Says how the run's last turn ended (`None`: not ended), for its status.
    pub(crate) fn set_terminal(&mut self, terminal: Option<(u64, Terminal)>) {
        self.last_terminal = terminal;
    }

    /// A title the store gives the run, over its first prompt.
    pub(crate) fn set_title(&mut self, title: String) {
        self.title_override = Some(title);
    }

    /// A title for the run when it has no prompt at all; the first one given is kept.
    pub(crate) fn title_if_no_prompt(&mut self, title: String) {
        self.fallback_title.get_or_insert(title);
    }

    /// An event of a store's own that is no part of the conversation (Claude Code's local
    /// commands): shown in the timeline, never a prompt, a dispatch or a title.
    pub(crate) fn emit_aside(&mut self, n: u64, ts: Option<i64>, item: TimelineEvent) {
        self.note(n, None, ts, item);
    }

    /// A call its store says failed after its result was folded (Codex's `item_completed`):
    /// its result is not ok. `false` when no result of that call was folded yet.
    pub(crate) fn mark_failed(&mut self, call_id: &str) -> bool {
        let mut found = false;
        let results = self.results.iter_mut();
        let shown = (self.events.iter_mut()).filter_map(|e| e.result.as_mut());
        for r in results.chain(shown) {
            if r.tool_call_id == call_id {
                r.ok = false;
                found = true;
            }
        }
        found
    }

    pub(crate) fn run_mut(&mut self) -> &mut Run {
        &mut self.run
    }

    /// The run as the lines taken so far tell it.
    pub(crate) fn run(&self) -> &Run {
        &self.run
    }

    /// The results of the lines taken so far, in the order of their lines.
    pub(crate) fn results(&self) -> &[ResultInfo] {
        &self.results
    }

    /// A value file of the run as listed, by stem.
    pub(crate) fn value(&self, stem: &str) -> Option<&ValueFile> {
        self.values.get(stem)
    }

    /// Every value file of the run counts as named: a store whose folder several runs share
    /// (a Claude Code session and its subagents) has no strays a run can tell.
    pub(crate) fn no_strays(&mut self) {
        let stems: Vec<String> = self.values.keys().cloned().collect();
        self.matched_values.extend(stems);
    }

    /// The result as its store classified it, added to the run's figures.
    /// `at` is the line's number, offset and time.
    pub(super) fn foreign_info(
        &mut self,
        f: ForeignResult,
        (n, offset, ts): (u64, u64, Option<i64>),
        id: &str,
        tool: String,
        ok: bool,
    ) -> ResultInfo {
        let run = &mut self.run;
        run.results += 1;
        match f.state {
            RetentionState::Inline => run.inline += 1,
            RetentionState::Retained => {
                run.retained += 1;
                run.retained_bytes = run.retained_bytes.saturating_add(f.bytes);
            }
            RetentionState::Unretained => {
                run.unretained += 1;
                run.unretained_bytes = run.unretained_bytes.saturating_add(f.bytes);
            }
            RetentionState::Damaged => run.damaged += 1,
            RetentionState::Truncated => run.truncated += 1,
            RetentionState::Swept => run.swept += 1,
        }
        self.matched_values.insert(f.value_id.clone());
        ResultInfo {
            tool_call_id: id.to_owned(),
            tool,
            ok,
            bytes: f.bytes,
            lines: f.lines,
            format_chars: f.format_chars,
            state: f.state,
            value_id: f.value_id,
            line: n,
            value_file_bytes: f.value_file_bytes,
            context_bytes: f.context_bytes,
            stub_bytes: f.stub_bytes,
            started_ms: self.started_ts.get(id).copied(),
            finished_ms: ts,
            offset,
        }
    }
}
