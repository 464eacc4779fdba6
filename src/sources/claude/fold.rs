//! A Claude Code session's lines folded into the run model (docs/agents.md).
//!
//! - A user line with text is a prompt (`isMeta` lines are context Claude Code injects; an
//!   `isCompactSummary` line is a compaction); its `tool_result` blocks are results.
//! - An assistant line is one streamed block: text, thinking or a `tool_use` call. Tokens are
//!   counted once per `message.id`, since every block of a message repeats its usage.
//! - A turn is done when the model answered with text and called nothing after it.
//! - `progress` lines and the metadata lines are folded away; `custom-title`, `ai-title` and
//!   `summary` name the run. An unknown line type is counted and shown, never fatal.

use super::content::{check_raw, raw_text, Block, Content};
use super::measured::measured;
use super::persisted::{self, RawOutput, Target, STUB_PREFIX};
use super::threads::{is_agent_file, Lines, Take};
use crate::fold::{Analyzer, ForeignResult, Terminal};
use crate::model::layout::{OthersLines, RunFiles};
use crate::model::options::Verify;
use crate::model::stamp::FileStamp;
use crate::model::values::{matches_content, ValueFile};
use crate::model::{ProblemKind, RetentionState, TimelineEvent};
use crate::retained::{count_format_chars, count_lines};
use crate::sources::images;
use crate::sources::lax::{value_of, LaxStr};
use crate::transcript::borrowed::opt_str;
use crate::transcript::event::{Attachment, ContentBlock, Event, Usage};
use crate::transcript::RawLine;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::io::Read;
use std::sync::Arc;

/// Maps by call and message id, hashed by foldhash: one insert a line or more.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Line types Claude Code writes that hold nothing for the timeline.
const FOLDED: &[&str] = &[
    "progress",
    "system",
    "attachment",
    "last-prompt",
    "task-summary",
    "tag",
    "agent-name",
    "agent-color",
    "agent-setting",
    "pr-link",
    "mode",
    "worktree-state",
    "file-history-snapshot",
    "attribution-snapshot",
    "queue-operation",
    "speculation-accept",
    "content-replacement",
    "marble-origami-commit",
    "marble-origami-snapshot",
];

/// The state of one session's fold.
pub(crate) struct ClaudeFold {
    /// Sessions whose `tool-results/` may hold this run's values: its own, and for a
    /// subagent its parent's.
    sessions: Vec<String>,
    /// Whether the run is a subagent's file (its parent is the session its lines name).
    agent_file: bool,
    /// Which lines of the file are this run's: a session's side conversations are runs of
    /// their own.
    lines: Lines,
    /// Whether the last line was this run's.
    pub(crate) taken: bool,
    /// `content-replacement` records: what the model got instead of a result, by call id.
    replacements: HashMap<String, String>,
    /// Tokens counted so far per `message.id`.
    messages: HashMap<String, Usage>,
    /// Titles by rank: `custom-title`, `ai-title`, `summary`.
    titles: [Option<String>; 3],
    verify: Verify,
    /// The last local command typed (what a `<local-command-stdout>` line is the output of).
    last_command: Option<String>,
    /// The side lines a session's scan read: counted and passed over unparsed.
    others: Option<Places>,
}

/// The side lines a session's scan read (see [`OthersLines`]), as a session's fold uses them.
struct Places {
    lines: Arc<OthersLines>,
    /// The first range a line may still be in (lines come in the file's order).
    next: usize,
    /// The session's file, whose stamp is looked at again when the read ends.
    path: std::path::PathBuf,
    /// Whether a line was passed over by them.
    used: bool,
}

/// A session line's top-level keys. The short strings every line repeats are borrowed from
/// the line (copied only when they hold an escape): a cold scan reads millions of lines.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    #[serde(default, rename = "type", borrow, deserialize_with = "opt_str")]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default)]
    is_sidechain: bool,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    parent_uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    agent_id: Option<Cow<'a, str>>,
    #[serde(default)]
    is_meta: bool,
    #[serde(default)]
    is_compact_summary: bool,
    /// A message Claude Code wrote in the model's place when the API call failed.
    #[serde(default)]
    is_api_error_message: bool,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Message<'a>>,
    #[serde(borrow)]
    tool_use_result: Option<&'a RawValue>,
    summary: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    title: Option<String>,
    replacements: Option<Vec<Replacement>>,
}

impl Line<'_> {
    /// The line, its blocks' contents (kept unparsed) checked as the line's parse once read
    /// them: a line that held a bad one stays unreadable ([`check_raw`]).
    fn checked(self) -> Result<Self, serde_json::Error> {
        if let Some(Content::Blocks(blocks)) = self.message.as_ref().map(|m| &m.content) {
            for content in blocks.iter().filter_map(|b| b.content) {
                check_raw(content)?;
            }
        }
        Ok(self)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Replacement {
    kind: Option<String>,
    tool_use_id: Option<String>,
    replacement: Option<String>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow, deserialize_with = "opt_str")]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Content<'a>,
    usage: Option<ClaudeUsage>,
}

/// A message's usage as written: its figures taken as they come, so that a damaged one (a
/// negative or a string) loses the usage, never the message.
#[derive(Deserialize, Default)]
struct ClaudeUsage {
    input_tokens: Option<Value>,
    cache_creation_input_tokens: Option<Value>,
    cache_read_input_tokens: Option<Value>,
    output_tokens: Option<Value>,
    cache_creation: Option<CacheCreation>,
}

/// A figure of a usage: absent, a count, or damaged (`Err`).
fn figure(v: &Option<Value>) -> Result<Option<u64>, ()> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or(()),
    }
}

#[derive(Deserialize, Default)]
struct CacheCreation {
    ephemeral_1h_input_tokens: Option<Value>,
}

impl ClaudeUsage {
    /// The usage as the run model counts it: prompt tokens count the cached ones too (the
    /// model read them all), and the cache's part is said apart. `Err` when a figure is
    /// damaged.
    fn usage(&self, model: Option<&str>) -> Result<Usage, ()> {
        let input = figure(&self.input_tokens)?.unwrap_or(0);
        let write = figure(&self.cache_creation_input_tokens)?.unwrap_or(0);
        let read = figure(&self.cache_read_input_tokens)?.unwrap_or(0);
        let hour = match &self.cache_creation {
            Some(c) => figure(&c.ephemeral_1h_input_tokens)?,
            None => None,
        };
        Ok(Usage {
            prompt_tokens: Some(input.saturating_add(write).saturating_add(read)),
            completion_tokens: Some(figure(&self.output_tokens)?.unwrap_or(0)),
            cache_write_tokens: Some(write),
            cache_write_1h_tokens: hour,
            cache_read_tokens: Some(read),
            model: model.map(str::to_owned),
            ..Usage::default()
        })
    }
}

/// What `now` adds to `seen`, a message's usage counted before: each figure only as it grew.
fn growth(now: &Usage, seen: &Usage) -> Usage {
    let more = |a: Option<u64>, b: Option<u64>| a.map(|a| a.saturating_sub(b.unwrap_or(0)));
    Usage {
        prompt_tokens: more(now.prompt_tokens, seen.prompt_tokens),
        completion_tokens: more(now.completion_tokens, seen.completion_tokens),
        cache_write_tokens: more(now.cache_write_tokens, seen.cache_write_tokens),
        cache_write_1h_tokens: more(now.cache_write_1h_tokens, seen.cache_write_1h_tokens),
        cache_read_tokens: more(now.cache_read_tokens, seen.cache_read_tokens),
        model: now.model.clone(),
        ..Usage::default()
    }
}

/// The larger of each figure of two readings of one message's usage.
fn widest(a: &Usage, b: &Usage) -> Usage {
    let max = |x: Option<u64>, y: Option<u64>| x.max(y);
    Usage {
        prompt_tokens: max(a.prompt_tokens, b.prompt_tokens),
        completion_tokens: max(a.completion_tokens, b.completion_tokens),
        cache_write_tokens: max(a.cache_write_tokens, b.cache_write_tokens),
        cache_write_1h_tokens: max(a.cache_write_1h_tokens, b.cache_write_1h_tokens),
        cache_read_tokens: max(a.cache_read_tokens, b.cache_read_tokens),
        model: a.model.clone(),
        ..Usage::default()
    }
}

/// The `content-replacement` records of one line, if it is such a line: (call id, stub).
pub(crate) fn replacements_in(line: &[u8]) -> Vec<(String, String)> {
    crate::transcript::needle!(KIND, b"content-replacement");
    if KIND.find(line).is_none() {
        return Vec::new();
    }
    let Ok(l) = serde_json::from_slice::<Line<'_>>(line) else {
        return Vec::new();
    };
    if l.kind.as_deref() != Some("content-replacement") {
        return Vec::new();
    }
    l.replacements
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.kind.as_deref().is_none_or(|k| k == "tool-result"))
        .filter_map(|r| Some((r.tool_use_id?, r.replacement?)))
        .collect()
}

impl ClaudeFold {
    /// The fold of run `id` of `files`: a session, a subagent's file (under its session,
    /// `files.parent`), or a side conversation inside its session's file (`files.side`).
    pub(crate) fn new(id: &str, files: &RunFiles, verify: Verify) -> Self {
        let parent = files.parent();
        let mut sessions = vec![id.split('@').next().unwrap_or(id).to_owned()];
        sessions.extend(parent.map(|p| p.split('@').next().unwrap_or(p).to_owned()));
        let lines = Lines::of(files);
        // Only while the file has the stamp its scan read: a file written since, even to the
        // same length, is read line by line.
        let scanned = |o: &&Arc<OthersLines>| {
            (files.transcript.as_deref())
                .and_then(|p| std::fs::metadata(p).ok())
                .is_some_and(|m| FileStamp::from_meta(&m) == o.scanned)
        };
        let others = (files.others())
            .filter(|_| matches!(lines, Lines::Main))
            .filter(scanned)
            .zip(files.transcript.as_deref())
            .map(|(o, path)| Places {
                lines: Arc::clone(o),
                next: 0,
                path: path.to_path_buf(),
                used: false,
            });
        Self {
            sessions,
            agent_file: is_agent_file(files) && files.side().is_none(),
            lines,
            taken: true,
            replacements: HashMap::default(),
            messages: HashMap::default(),
            titles: [None, None, None],
            verify,
            last_command: None,
            others,
        }
    }

    /// Whether the line at `offset` is one of the side lines the session's scan read (see
    /// [`OthersLines`]).
    fn scanned_side_line(&mut self, offset: u64) -> bool {
        let Some(places) = &mut self.others else {
            return false;
        };
        let ranges = &places.lines.ranges;
        while ranges.get(places.next).is_some_and(|r| r.1 <= offset) {
            places.next += 1;
        }
        let passed = ranges.get(places.next).is_some_and(|r| r.0 <= offset);
        places.used |= passed;
        passed
    }

    /// Reads every line of `transcript` itself. The scan's word on where the file's
    /// `content-replacement` records are goes with its places: all of them are read again (a
    /// file that cannot be read leaves those read before).
    pub(crate) fn forget_places(&mut self, transcript: &std::path::Path) {
        self.others = None;
        if let Ok(records) = super::read_replacements(transcript, 0) {
            self.replacements.clear();
            self.replace(records);
        }
    }

    /// Whether the scan's places this fold passed lines over by still hold: the file has the
    /// stamp the scan read now that the read has ended. (They were checked when the fold was
    /// made; a write between then and the read's open, or during the read, is found here.)
    pub(crate) fn places_held(&self) -> bool {
        let Some(places) = self.others.as_ref().filter(|p| p.used) else {
            return true;
        };
        std::fs::metadata(&places.path)
            .is_ok_and(|m| FileStamp::from_meta(&m) == places.lines.scanned)
    }

    /// What the model got instead of these results (read ahead of the fold: the record is
    /// written after the result it replaces).
    pub(crate) fn replace(&mut self, records: Vec<(String, String)>) {
        self.replacements.extend(records);
    }

    pub(crate) fn line(&mut self, into: &mut Analyzer, raw: RawLine<'_>) {
        let n = raw.number;
        // A line no run can read is its session's to report, not each side conversation's; a
        // side line whose links read but the rest does not is its own conversation's.
        let side = matches!(self.lines, Lines::Side(..));
        self.taken = !side;
        // A side line the scan read whole, links and all: the session would only count it.
        if self.scanned_side_line(raw.offset) {
            let take = Take {
                keep: false,
                side: true,
            };
            return self.account(into, take);
        }
        // A side conversation's lines are a few of its session's: the others are passed over
        // unparsed.
        if side && !super::threads::may_be_side(raw.bytes) || self.lines.surely_not_taken(raw.bytes)
        {
            return;
        }
        let Ok(text) = simdutf8::basic::from_utf8(raw.bytes) else {
            if side {
                return;
            }
            return into.problem(n, ProblemKind::Corrupt, "not UTF-8 text".to_owned());
        };
        if text.trim().is_empty() {
            return;
        }
        // A session keeps none of its side lines: it tells them by their links alone. (A side
        // conversation passed over the others' above; what is left is mostly its own, read
        // whole.)
        let by_links = match self.lines {
            Lines::Main if super::threads::may_be_side(raw.bytes) => {
                self.lines.take_by_links(raw.bytes)
            }
            _ => None,
        };
        if let Some(take) = by_links.filter(|t| !t.keep) {
            return self.account(into, take);
        }
        let mut l = match serde_json::from_str::<Line<'_>>(text).and_then(Line::checked) {
            Ok(l) => l,
            Err(e) if side => {
                if let Some(take) = self.lines.take_by_links(raw.bytes).filter(|t| t.keep) {
                    self.account(into, take);
                    let msg = format!("not a Claude Code line: {e}");
                    into.problem(n, ProblemKind::Corrupt, msg);
                }
                return;
            }
            Err(e) => {
                let msg = format!("not a Claude Code line: {e}");
                return into.problem(n, ProblemKind::Corrupt, msg);
            }
        };
        let take = by_links.unwrap_or_else(|| {
            let (uuid, parent) = (l.uuid.as_deref(), l.parent_uuid.as_deref());
            (self.lines).take(l.is_sidechain, uuid, parent, l.agent_id.as_deref())
        });
        self.account(into, take);
        if !take.keep {
            return;
        }
        let run = into.run_mut();
        let ts = l.timestamp.as_deref().and_then(crate::sources::parse_time);
        if run.cwd.is_none() {
            run.cwd = l.cwd.as_deref().map(str::to_owned);
        }
        // The session the lines name keeps this run's values too (a subagent of an older
        // build, a session file renamed).
        if let Some(s) = l.session_id.as_deref() {
            if !self.sessions.iter().any(|known| known == s) {
                self.sessions.push(s.to_owned());
            }
        }
        if self.agent_file && run.parent_id.is_none() {
            // An older build's `agent-<id>.jsonl` beside the sessions names its session.
            run.parent_id = (l.session_id.as_deref())
                .filter(|s| *s != run.id)
                .map(str::to_owned);
        }
        let at = Place {
            n,
            offset: raw.offset,
            ts,
        };
        let kind = l.kind.take();
        match kind.as_deref().unwrap_or("") {
            "user" => self.user(into, at, l),
            "assistant" => self.assistant(into, at, l),
            "custom-title" => self.title(into, 0, l.custom_title.or(l.title)),
            "ai-title" => self.title(into, 1, l.ai_title.or(l.title)),
            "summary" => self.title(into, 2, l.summary),
            "content-replacement" => {
                // Read ahead for a whole file; a live tail learns it here, for later results.
                self.replace(replacements_in(raw.bytes));
            }
            kind if FOLDED.contains(&kind) => {}
            "" => into.problem(n, ProblemKind::Corrupt, "a line without a type".to_owned()),
            other => into.emit_unknown(n, ts, other),
        }
    }

    /// Notes whether the line is the run's, and counts the side lines it accounts for.
    fn account(&mut self, into: &mut Analyzer, take: Take) {
        self.taken = take.keep;
        if take.side {
            into.run_mut().sidechain_lines += 1;
        }
    }

    fn title(&mut self, into: &mut Analyzer, rank: usize, title: Option<String>) {
        let Some(title) = title.filter(|t| !t.trim().is_empty()) else {
            return;
        };
        self.titles[rank] = Some(title);
        if let Some(best) = self.titles.iter().flatten().next() {
            into.set_title(best.clone());
        }
    }

    fn user(&mut self, into: &mut Analyzer, at: Place, l: Line<'_>) {
        let Some(message) = l.message else {
            return;
        };
        let mut texts = Vec::new();
        let mut images = Vec::new();
        match message.content {
            Content::Text(s) => texts.push(s),
            Content::Blocks(blocks) => {
                for b in blocks {
                    match b.kind.as_deref() {
                        Some("tool_result") => self.result(into, at, b, l.tool_use_result),
                        Some("text") => texts.extend(b.text.0),
                        Some("image") => images.push(image_of(&b)),
                        _ => {}
                    }
                }
            }
            Content::Other => {}
        }
        let mut text = texts.join("\n\n");
        if text.is_empty() {
            // A prompt that is only a pasted image is still what the next answer replies to.
            text = (images
                .iter()
                .map(|(mime, bytes)| images::label(mime.as_deref(), *bytes)))
            .collect::<Vec<_>>()
            .join("\n");
        }
        if text.is_empty() || l.is_meta {
            return;
        }
        if let Some(command) = LocalCommand::of(&text) {
            return self.local_command(into, at, command);
        }
        let attachments = images
            .into_iter()
            .map(|(mime, bytes)| Attachment::sized(mime, bytes))
            .collect();
        let (kind, event) = match l.is_compact_summary {
            true => (
                "context_compacted",
                Event::ContextCompacted {
                    summary: Some(text),
                },
            ),
            false => (
                "user_message",
                Event::UserMessage {
                    message_id: None,
                    text,
                    attachments,
                },
            ),
        };
        into.emit(at.n, at.offset, at.ts, kind, &event, None);
    }

    /// A command typed at Claude Code's prompt (`/clear`, `/compact`, `/exit`...) or what it
    /// printed: its own event, never a prompt.
    fn local_command(&mut self, into: &mut Analyzer, at: Place, c: LocalCommand) {
        if let Some(name) = &c.name {
            self.last_command = Some(name.clone());
            if let Some(args) = c.args.as_ref().filter(|a| !a.trim().is_empty()) {
                into.title_if_no_prompt(args.clone());
            }
        }
        let item = TimelineEvent {
            kind: "local_command".to_owned(),
            tool: c.name.or_else(|| self.last_command.clone()),
            input: c.args.filter(|a| !a.trim().is_empty()),
            text: c.output,
            ..Default::default()
        };
        into.emit_aside(at.n, at.ts, item);
    }

    /// The usage a message's line carries for its event: the first of its blocks carries it;
    /// a later block adds only what grew, apart. A damaged usage is left out with a warning.
    fn usage_of(
        &mut self,
        into: &mut Analyzer,
        n: u64,
        m: &Message<'_>,
        u: &ClaudeUsage,
    ) -> Option<Usage> {
        // Claude Code's own notes (`<synthetic>`) call no model: priced by the run's.
        let model = m.model.as_deref().filter(|m| *m != "<synthetic>");
        let Ok(now) = u.usage(model) else {
            let msg = "a usage with a figure that is not a count: left out of the tokens";
            into.problem(n, ProblemKind::BadUsage, msg.to_owned());
            return None;
        };
        match m.id.as_deref().and_then(|id| self.messages.get_mut(id)) {
            Some(seen) => {
                into.add_tokens(n, &growth(&now, seen));
                *seen = widest(seen, &now);
                None
            }
            None => {
                if let Some(id) = m.id.as_deref() {
                    self.messages.insert(id.to_owned(), now.clone());
                }
                Some(now)
            }
        }
    }

    fn assistant(&mut self, into: &mut Analyzer, at: Place, l: Line<'_>) {
        let Some(m) = l.message else { return };
        if let Some(model) = m.model.as_deref().filter(|m| *m != "<synthetic>") {
            let run = into.run_mut();
            if run.model.is_none() {
                run.model = Some(model.to_owned());
                run.provider = Some("anthropic".to_owned());
            }
        }
        let usage = (m.usage.as_ref()).and_then(|u| self.usage_of(into, at.n, &m, u));
        let mut blocks = Vec::new();
        let mut calls = Vec::new();
        // A listing keeps no timeline: the texts and inputs only a timeline shows are not built.
        let shown = into.keeps_timeline();
        if let Content::Blocks(items) = m.content {
            for b in items {
                let text = |s: &LaxStr<'_>| s.as_deref().unwrap_or("").to_owned();
                let shown_text = |s: &LaxStr<'_>| if shown { text(s) } else { String::new() };
                match b.kind.as_deref() {
                    Some("text") => blocks.push(ContentBlock::Text {
                        text: shown_text(&b.text),
                    }),
                    Some("thinking") => blocks.push(ContentBlock::Thinking {
                        text: shown_text(&b.thinking),
                    }),
                    Some("tool_use") => {
                        let (id, name) = (text(&b.id), text(&b.name));
                        blocks.push(ContentBlock::ToolCall {
                            tool_call_id: id.clone(),
                            name: Some(name.clone()),
                        });
                        let input = shown.then(|| value_of(b.input)).flatten();
                        calls.push((id, name, input));
                    }
                    _ => {}
                }
            }
        }
        let answered = blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::Text { .. }));
        let event = Event::AssistantMessage {
            message_id: m.id.as_deref().map(str::to_owned),
            content: blocks,
            usage,
            timing: None,
        };
        into.emit(at.n, at.offset, at.ts, "assistant_message", &event, None);
        let called = !calls.is_empty();
        for (id, name, input) in calls {
            let started = Event::ToolCallStarted {
                tool_call_id: id,
                name: Some(name),
                input,
                summary: None,
                capability: None,
            };
            into.emit(at.n, at.offset, at.ts, "tool_call_started", &started, None);
        }
        if l.is_api_error_message {
            into.set_terminal(Some((at.n, Terminal::Error)));
        } else if called {
            into.set_terminal(None);
        } else if answered {
            into.set_terminal(Some((at.n, Terminal::Done)));
        }
    }

    fn result(&mut self, into: &mut Analyzer, at: Place, block: Block<'_>, raw: Option<&RawValue>) {
        let id = block.tool_use_id.owned().unwrap_or_default();
        let ok = !block.is_error.0.unwrap_or(false);
        // A listing keeps no output's text: one the model got whole, as the line spells it
        // (no replacement stands for it), is measured on its spelling.
        let measured = (!into.keeps_timeline() && !self.replacements.contains_key(&id))
            .then(|| block.content.and_then(|c| measured(&id, c)))
            .flatten();
        if let Some(class) = measured {
            into.emit_finished((at.n, at.offset, at.ts), (id, ok), String::new(), class);
            return into.set_terminal(None);
        }
        let content = block.content.and_then(raw_text).unwrap_or_default();
        // The raw output is read only for a stub: an inline result is what the model got.
        let raw_of = || raw.map(persisted::raw_output).unwrap_or_default();
        let (seen, raw) = match self.replacements.get(&id) {
            // Persisted when sent: the transcript kept the whole output as the content.
            Some(stub) => (stub.clone(), Some(replaced_output(content, raw_of()))),
            None => (content, None),
        };
        let class = match seen.starts_with(STUB_PREFIX) {
            true => self.persisted(into, at.n, &id, &seen, raw.unwrap_or_else(raw_of)),
            false => ForeignResult::inline(&id, &seen),
        };
        into.emit_finished((at.n, at.offset, at.ts), (id, ok), seen, class);
        into.set_terminal(None);
    }

    /// A result the model got as a `<persisted-output>` stub: retained when the file it names is
    /// in the session's `tool-results/` (damaged when it disagrees with the raw output the
    /// transcript recorded), else unretained.
    fn persisted(
        &self,
        into: &mut Analyzer,
        n: u64,
        id: &str,
        stub: &str,
        raw: RawOutput,
    ) -> ForeignResult {
        let stub_bytes = stub.len() as u64;
        let target = persisted::saved_path(stub, Some(&raw))
            .ok_or_else(|| "the stub names no file".to_owned())
            .and_then(|p| persisted::target_of(&p))
            .and_then(|t| match self.sessions.contains(&t.session) {
                true => Ok(t),
                false => Err(format!(
                    "the stub names a file of session {}, not this run's: not read",
                    t.session
                )),
            });
        let target = match target {
            Ok(t) => t,
            Err(why) => {
                into.problem(n, ProblemKind::Run, format!("result {id}: {why}"));
                return lost(id, stub, &raw);
            }
        };
        let file = into
            .value(&target.stem)
            .filter(|f| is_json(f) == target.json)
            .cloned();
        // Claude Code's cleanup (or a GC) took the file: the model got the stub.
        let Some(file) = file else {
            return ForeignResult {
                value_id: target.stem,
                state: RetentionState::Swept,
                ..lost(id, stub, &raw)
            };
        };
        match self.compare(&file, &target, &raw) {
            Ok((bytes, lines, fmt, same)) => ForeignResult {
                state: match same {
                    true => RetentionState::Retained,
                    false => RetentionState::Damaged,
                },
                bytes,
                lines: Some(lines),
                format_chars: fmt,
                value_id: target.stem,
                value_file_bytes: Some(file.bytes),
                context_bytes: stub_bytes,
                stub_bytes: Some(stub_bytes),
            },
            Err(e) => {
                let msg = format!("value file {} cannot be read: {e}", file.path.display());
                into.problem(n, ProblemKind::Run, msg);
                ForeignResult {
                    state: RetentionState::Damaged,
                    value_id: target.stem,
                    value_file_bytes: Some(file.bytes),
                    ..lost(id, stub, &raw)
                }
            }
        }
    }

    /// A value file's size, lines and format characters as text, and whether it holds the raw
    /// output the transcript recorded (when it recorded one).
    fn compare(
        &self,
        file: &ValueFile,
        target: &Target,
        raw: &RawOutput,
    ) -> std::io::Result<(u64, u64, u64, bool)> {
        // Only an output known to be what Claude Code persisted is compared with the file.
        let recorded = raw.text.as_deref().filter(|_| raw.comparable);
        if target.json {
            let text = persisted::json_value_text(&std::fs::read(&file.path)?);
            let same = recorded.is_none_or(|r| agrees(r, &text, raw.complete));
            let (lines, fmt) = (count_lines(text.as_bytes()), count_format_chars(&text));
            return Ok((text.len() as u64, lines, fmt, same));
        }
        let same = match recorded {
            None => true,
            Some(r) if raw.complete => matches_content(file, r, self.verify)?,
            Some(r) => starts_with(file, r.as_bytes())?,
        };
        // A file that holds the recorded output is counted from memory; another is read.
        let (lines, fmt) = match (same, recorded) {
            (true, Some(r)) if raw.complete => (count_lines(r.as_bytes()), count_format_chars(r)),
            _ => {
                let text = String::from_utf8_lossy(&std::fs::read(&file.path)?).into_owned();
                (count_lines(text.as_bytes()), count_format_chars(&text))
            }
        };
        Ok((file.bytes, lines, fmt, same))
    }
}

/// The raw output of a result persisted when it was sent (a `content-replacement` names it):
/// the transcript kept the whole output as the result's content.
pub(crate) fn replaced_output(content: String, raw: RawOutput) -> RawOutput {
    RawOutput {
        text: Some(content),
        complete: true,
        comparable: true,
        ..raw
    }
}

/// Where a line is.
#[derive(Clone, Copy)]
struct Place {
    n: u64,
    offset: u64,
    ts: Option<i64>,
}

fn is_json(f: &ValueFile) -> bool {
    f.path.extension().is_some_and(|e| e == "json")
}

fn agrees(raw: &str, text: &str, complete: bool) -> bool {
    match complete {
        true => raw == text,
        false => text.starts_with(raw),
    }
}

fn starts_with(file: &ValueFile, prefix: &[u8]) -> std::io::Result<bool> {
    if (file.bytes as usize) < prefix.len() {
        return Ok(false);
    }
    let mut head = vec![0u8; prefix.len()];
    std::fs::File::open(&file.path)?.read_exact(&mut head)?;
    Ok(head == prefix)
}

/// A user line Claude Code wrote for a local command: the command (`<command-name>`, with its
/// `<command-args>`), or what it printed (`<local-command-stdout>`, `<local-command-stderr>`).
#[derive(Debug, PartialEq, Eq)]
struct LocalCommand {
    name: Option<String>,
    args: Option<String>,
    output: Option<String>,
}

impl LocalCommand {
    const TAGS: [&'static str; 5] = [
        "<command-name>",
        "<command-message>",
        "<command-args>",
        "<local-command-stdout>",
        "<local-command-stderr>",
    ];

    fn of(text: &str) -> Option<Self> {
        let text = text.trim_start();
        if !Self::TAGS.iter().any(|t| text.starts_with(t)) {
            return None;
        }
        let inner = |tag: &str| {
            let open = format!("<{tag}>");
            let start = text.find(&open)? + open.len();
            let end = text[start..].find(&format!("</{tag}>"))? + start;
            Some(text[start..end].to_owned())
        };
        let outputs: Vec<String> = ["local-command-stdout", "local-command-stderr"]
            .into_iter()
            .filter_map(inner)
            .filter(|o| !o.trim().is_empty())
            .collect();
        Some(Self {
            name: inner("command-name")
                .or_else(|| inner("command-message").map(|m| format!("/{m}"))),
            args: inner("command-args"),
            output: (!outputs.is_empty()).then(|| outputs.join("\n")),
        })
    }
}

/// An image block of a prompt: its media type and its size once decoded.
fn image_of(block: &Block<'_>) -> (Option<String>, u64) {
    let source = &block.source.0;
    let data = source.data.as_deref().unwrap_or("");
    (source.media_type.owned(), images::decoded_len(data))
}

/// A persisted result whose file is not there, or cannot be named: unretained (swept, said by
/// the caller, when the file was named and is gone). Its size is the raw output's when
/// the transcript kept it whole (it can be recovered from there), else the size Claude Code
/// recorded or stated in the stub.
fn lost(id: &str, stub: &str, raw: &RawOutput) -> ForeignResult {
    let stub_bytes = stub.len() as u64;
    let (bytes, lines, fmt) = match raw.text.as_deref().filter(|_| raw.complete) {
        Some(r) => (
            r.len() as u64,
            Some(count_lines(r.as_bytes())),
            count_format_chars(r),
        ),
        None => (
            raw.persisted_size
                .or_else(|| persisted::stated_size(stub))
                .unwrap_or(stub_bytes),
            None,
            0,
        ),
    };
    ForeignResult {
        state: RetentionState::Unretained,
        bytes,
        lines,
        format_chars: fmt,
        value_id: id.to_owned(),
        value_file_bytes: None,
        context_bytes: stub_bytes,
        stub_bytes: Some(stub_bytes),
    }
}
