//! The runs inside and under a Claude Code session file (docs/agents.md, "Subagents").
//!
//! Older builds wrote a subagent's side conversation into its session's own file, every line
//! `isSidechain: true`. Each side conversation is a run nested under its session: its lines
//! share one `agentId` when the build wrote one, else they form one tree of `uuid` →
//! `parentUuid` links from a root line whose parent is no side line. The call that started it is
//! the session's `Task` call whose `prompt` is the side conversation's first message, or the
//! call a `progress` line (`agent_progress`) or a `Task` result names with the agent's id; the
//! same links tell which call started each `subagents/agent-<id>.jsonl` file.
//!
//! Knowing this means reading the session file, so a scan is kept by the file's stamp
//! ([`super::scan_cache`]); a file that grew is read on from where its scan stopped.

use crate::model::layout::{LineStart, OthersLines, ReadEnd, RunFiles};
use crate::model::stamp::FileStamp;
use crate::transcript::borrowed::opt_str;
use crate::transcript::{needle, read_lines, Cursor};
use memchr::memmem::Finder;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::Path;

pub use crate::model::SideKey;

/// One side conversation of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Sidechain {
    pub side: SideKey,
    /// The session's call whose prompt its first message is.
    pub call: Option<String>,
    /// Its lines in the file.
    pub lines: u64,
    /// Where its first line is in the file (none in a scan kept by an older build: a read
    /// of it then starts at the file's start).
    #[serde(default)]
    pub start: Option<LineStart>,
    /// Just past its last line in the file (none in a scan kept by an older build: a read of
    /// it then goes on to the file's end).
    #[serde(default)]
    pub end: Option<u64>,
}

/// What a session file says of the runs inside and under it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionScan {
    /// Its side conversations, in the order they start.
    pub sidechains: Vec<Sidechain>,
    /// The call that started each subagent, by agent id.
    pub agent_calls: BTreeMap<String, String>,
    /// Whether the file has a `content-replacement` line: a fold of it then reads those ahead
    /// (one of a file without any is spared a whole pass).
    #[serde(default)]
    pub replacements: bool,
    /// Where the scan stopped (just past its last complete line): what it says holds for the
    /// bytes before; a file that grew since may hold more.
    #[serde(default)]
    pub scanned_to: u64,
    /// The first line the scan had to read (its bytes say it may be a side line, or name an
    /// agent or a prompt) and could not, or that a run's reading splits into glued values: a
    /// run's fold may take the first, and counts a warning for the second, so no side
    /// conversation's read starts after either.
    #[serde(default)]
    pub unread_from: Option<LineStart>,
    /// Just past the last such line: no side conversation's read ends before it. (None in a
    /// scan kept by an older build, whose side conversations have no end either.)
    #[serde(default)]
    pub unread_to: Option<u64>,
    /// The side lines the scan read (any conversation's, or none's), as ranges of lines back
    /// to back: [first line's offset, just past the last). The session's read passes over
    /// them unparsed (see [`OthersLines`]).
    #[serde(default)]
    pub side_lines: Vec<(u64, u64)>,
    /// Whether a uuid was on two side lines: side conversations are then read to the file's
    /// end (see [`Self::end_of`]).
    #[serde(default)]
    pub uuid_twice: bool,
}

impl SessionScan {
    /// Where a read of side conversation `s` starts: at its first line, unless a line before
    /// it could not be scanned (then there); `None`: at the file's start.
    pub(crate) fn start_of(&self, s: &Sidechain) -> Option<LineStart> {
        let first = s.start?;
        Some(match self.unread_from {
            Some(unread) if unread.offset < first.offset => unread,
            _ => first,
        })
        .filter(|at| at.offset > 0)
    }

    /// Where a read of side conversation `s` may stop: past its last line and past every line
    /// a reading of the file warns of or the scan could not read (a run's fold may take it),
    /// while the file has the stamp `listed` (its folder's listing took it, before the scan
    /// read it). `None`: at the file's end (as for every conversation of a file where a uuid
    /// was on two side lines, or when the scan read another length than `listed` says).
    pub(crate) fn end_of(&self, s: &Sidechain, listed: Option<FileStamp>) -> Option<ReadEnd> {
        let end = s.end.filter(|_| !self.uuid_twice)?;
        Some(ReadEnd {
            offset: self.unread_to.map_or(end, |u| u.max(end)),
            scanned: self.scanned_as(listed)?,
        })
    }

    /// The side lines a read of the session passes over unparsed, while its file has the stamp
    /// `listed`; `None` when the scan read none, or read another length than `listed` says.
    pub(crate) fn others(&self, listed: Option<FileStamp>) -> Option<std::sync::Arc<OthersLines>> {
        let scanned = self.scanned_as(listed)?;
        (!self.side_lines.is_empty()).then(|| {
            std::sync::Arc::new(OthersLines {
                ranges: self.side_lines.clone(),
                scanned,
            })
        })
    }

    /// The stamp the places this scan found hold for: `listed`, when the scan read as many
    /// bytes as it says. (A stamp taken before the scan and a scan of that length may still
    /// disagree: the file rewritten to its length in between. A read then finds the stamp
    /// moved, and trusts none of the places.)
    fn scanned_as(&self, listed: Option<FileStamp>) -> Option<FileStamp> {
        listed.filter(|s| s.len == self.scanned_to)
    }

    /// The call that started side conversation `s`.
    pub(crate) fn call_of(&self, s: &Sidechain) -> Option<String> {
        (s.side
            .by_agent
            .then(|| self.agent_calls.get(&s.side.key).cloned()))
        .flatten()
        .or_else(|| s.call.clone())
    }
}

/// A scan that can be read on when the file grows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scanner {
    pub scan: SessionScan,
    /// Where the next read starts (a torn last line is read again).
    pub cursor: Cursor,
    /// The side conversation of each side line's `uuid`, by index in `scan.sidechains`.
    /// (A uuid's first place too: a conversation rooted at a uuid an earlier line already had
    /// is read from there, as its fold would take that line.)
    members: HashMap<String, (usize, LineStart)>,
    /// The session's `Task` calls no side conversation answered yet: (prompt, call id).
    prompts: Vec<(String, String)>,
    /// The last bytes before `cursor`: a file that grew is read on only when they are still
    /// there (a file rewritten in place is scanned again whole).
    tail: Vec<u8>,
}

/// How many bytes before where a scan stopped are checked before it reads on.
const TAIL: usize = 64;

/// The top-level keys a scan reads; the rest of a line is skipped unparsed. The short strings
/// are borrowed from the line (copied only when they hold an escape): a session's side lines
/// are all read. Its links are [`SideFields`]' keys, typed alike: a line this reads, that
/// reads too, to the same links (what lets a session pass over the side lines a scan read).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScanLine<'a> {
    #[serde(default, rename = "type", borrow, deserialize_with = "opt_str")]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    is_sidechain: bool,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    parent_uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    agent_id: Option<Cow<'a, str>>,
    #[serde(
        default,
        rename = "parentToolUseID",
        borrow,
        deserialize_with = "opt_str"
    )]
    parent_tool_use_id: Option<Cow<'a, str>>,
    data: Option<ProgressData>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressData {
    #[serde(rename = "type")]
    kind: Option<String>,
    agent_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AgentResult {
    agent_id: Option<String>,
}

// Bytes that a line the scan must read holds; a line with none of them is passed over.
needle!(SIDE_KEY, b"\"isSidechain\"");
needle!(AGENT, b"\"agentId\"");
needle!(TOOL_USE, b"\"tool_use\"");
needle!(PROMPT, b"\"prompt\"");
needle!(REPLACEMENT, b"\"content-replacement\"");
needle!(ESCAPE, b"\\u");

/// Whether `line` holds the bytes `needle` searches for.
fn has(line: &[u8], needle: &Finder<'_>) -> bool {
    needle.find(line).is_some()
}

/// Whether `line` may be a side line (its bytes say `"isSidechain":true`, as Claude Code
/// writes it, or with JSON's whitespace around the colon, as a transcript written again by
/// another tool may): a line without them is no side conversation's.
pub(crate) fn may_be_side(line: &[u8]) -> bool {
    let after_key = |at: usize| &line[at + SIDE_KEY.needle().len()..];
    SIDE_KEY.find_iter(line).any(|at| says_true(after_key(at)))
}

/// Whether `rest`, what follows a key, is a colon and `true`, JSON's whitespace around the
/// colon.
fn says_true(rest: &[u8]) -> bool {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let skip_blanks = |bytes: &[u8]| -> usize { bytes.iter().take_while(|b| blank(b)).count() };
    let rest = &rest[skip_blanks(rest)..];
    let Some(rest) = rest.strip_prefix(b":") else {
        return false;
    };
    rest[skip_blanks(rest)..].starts_with(b"true")
}

impl Scanner {
    /// Reads `path` from where this scan stopped to its end.
    pub(crate) fn read_on(&mut self, path: &Path) -> io::Result<()> {
        // The last line's end, kept in one buffer (not a copy per line).
        let mut tail = Vec::with_capacity(TAIL);
        let outcome = read_lines(path, self.cursor, |l| {
            let at = LineStart {
                offset: l.offset,
                lines: l.number - 1,
            };
            self.line(l.bytes, at, l.offset + l.raw_len + 1);
            tail.clear();
            tail.extend_from_slice(&l.bytes[l.bytes.len().saturating_sub(TAIL - 1)..]);
            tail.push(b'\n');
        })?;
        if !tail.is_empty() {
            self.tail = tail;
        }
        self.cursor = outcome.cursor;
        self.scan.scanned_to = outcome.cursor.offset;
        Ok(())
    }

    /// Whether the bytes before where this scan stopped are still those it read.
    pub(crate) fn still_there(&self, path: &Path) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        let Some(at) = self.cursor.offset.checked_sub(self.tail.len() as u64) else {
            return false;
        };
        let mut now = vec![0; self.tail.len()];
        let read = std::fs::File::open(path).and_then(|mut f| {
            f.seek(SeekFrom::Start(at))?;
            f.read_exact(&mut now)
        });
        read.is_ok() && now == self.tail
    }

    /// Scans the line at `at`, which ends (its newline included) at `end`.
    fn line(&mut self, bytes: &[u8], at: LineStart, end: u64) {
        if !self.scan.replacements && has(bytes, &REPLACEMENT) {
            self.scan.replacements = true;
        }
        // A line a run's reading splits into glued values counts a warning in every run read
        // past it, its session's side conversations too: none may start after it, nor end
        // before it.
        if crate::transcript::may_be_glued(bytes) {
            self.unread(at, end);
        }
        let side_bytes = may_be_side(bytes);
        let wanted =
            side_bytes || has(bytes, &AGENT) || (has(bytes, &TOOL_USE) && has(bytes, &PROMPT));
        if !wanted {
            return;
        }
        // A line that is not JSON is the run model's to report. (A line of UTF-8 text is
        // parsed as text: parsed from bytes, each borrowed value, the message most of all,
        // would be checked again on its own. Any other is parsed from its bytes, which checks
        // only the values the scan reads, as before.)
        let text = simdutf8::basic::from_utf8(bytes).ok();
        let parsed = match text {
            Some(text) => serde_json::from_str::<ScanLine<'_>>(text).ok(),
            None => serde_json::from_slice::<ScanLine<'_>>(bytes).ok(),
        };
        let Some(l) = parsed else {
            return self.unread(at, end);
        };
        if l.is_sidechain {
            // A side line whose bytes say so, read whole as text and JSON: the session's read
            // finds these links and only counts it (see `OthersLines`).
            if side_bytes && text.is_some() {
                match self.scan.side_lines.last_mut() {
                    Some(last) if last.1 == at.offset => last.1 = end,
                    _ => self.scan.side_lines.push((at.offset, end)),
                }
            }
            return self.side_line(&l, at, end);
        }
        match l.kind.as_deref() {
            Some("progress") => {
                let data = l.data.as_ref();
                if data.and_then(|d| d.kind.as_deref()) == Some("agent_progress") {
                    let agent = data.and_then(|d| d.agent_id.clone());
                    let agent = agent.filter(|a| is_agent_id(a));
                    let call = l.parent_tool_use_id.as_deref().map(str::to_owned);
                    if let (Some(agent), Some(call)) = (agent, call) {
                        self.scan.agent_calls.entry(agent).or_insert(call);
                    }
                }
            }
            Some("user") => self.agent_result(&l),
            Some("assistant") => self.task_calls(&l),
            _ => {}
        }
    }

    /// A line at `at` (ending at `end`) that a run's reading may take or warn of and the scan
    /// could not read: no side conversation's read starts after it or ends before it.
    fn unread(&mut self, at: LineStart, end: u64) {
        self.scan.unread_from.get_or_insert(at);
        self.scan.unread_to = Some(end);
    }

    fn side_line(&mut self, l: &ScanLine<'_>, at: LineStart, end: u64) {
        let agent = l.agent_id.as_deref().filter(|a| is_agent_id(a));
        let uuid = l.uuid.as_deref();
        let found = match (agent, l.parent_uuid.as_deref()) {
            (Some(agent), _) => {
                (self.scan.sidechains.iter()).position(|s| s.side.by_agent && s.side.key == agent)
            }
            (None, Some(parent)) => self.members.get(parent).map(|m| m.0),
            // A root line written twice is still one side conversation.
            (None, None) => uuid.and_then(|u| self.members.get(u).map(|m| m.0)),
        };
        // A uuid on two side lines: a run's fold takes a line by its own conversation's uuids,
        // which may then differ from the one conversation this scan gives each line to. No
        // read of this file stops before its end.
        if uuid.is_some_and(|u| self.members.contains_key(u)) {
            self.scan.uuid_twice = true;
        }
        // Where this line's uuid was first seen (here, for a new one).
        let first = uuid
            .and_then(|u| self.members.get(u).map(|m| m.1))
            .unwrap_or(at);
        let index = match found {
            Some(index) => index,
            None => {
                let side = match (agent, uuid) {
                    (Some(agent), _) => SideKey {
                        key: agent.to_owned(),
                        by_agent: true,
                    },
                    (None, Some(uuid)) => SideKey {
                        key: uuid.to_owned(),
                        by_agent: false,
                    },
                    // A side line with neither cannot be told apart: the session keeps it out.
                    (None, None) => return,
                };
                let call = self.answered_call(l.message);
                // A conversation told by its root's uuid takes every line with that uuid,
                // one before this too (a uuid written twice).
                let start = if side.by_agent { at } else { first };
                self.scan.sidechains.push(Sidechain {
                    side,
                    call,
                    lines: 0,
                    start: Some(start),
                    end: None,
                });
                self.scan.sidechains.len() - 1
            }
        };
        let found = &mut self.scan.sidechains[index];
        found.lines += 1;
        found.end = Some(end);
        if let Some(uuid) = uuid {
            self.members.insert(uuid.to_owned(), (index, first));
        }
    }

    /// The `Task` call whose prompt is this first message, taken off the calls left.
    fn answered_call(&mut self, message: Option<&RawValue>) -> Option<String> {
        let text = message_text(message?)?;
        let at = (self.prompts.iter()).position(|(p, _)| p.trim() == text.trim())?;
        Some(self.prompts.remove(at).1)
    }

    /// A `Task` result naming the agent it ran: that call started that agent.
    fn agent_result(&mut self, l: &ScanLine<'_>) {
        let Some(agent) = l
            .tool_use_result
            .and_then(|r| serde_json::from_str::<AgentResult>(r.get()).ok())
            .and_then(|r| r.agent_id)
            .filter(|a| is_agent_id(a))
        else {
            return;
        };
        let call = content_of(l.message).and_then(|c| {
            c.as_array()?.iter().find_map(|b| {
                let b = b.as_object()?;
                (b.get("type")?.as_str()? == "tool_result")
                    .then(|| b.get("tool_use_id")?.as_str().map(str::to_owned))?
            })
        });
        if let Some(call) = call {
            self.scan.agent_calls.entry(agent).or_insert(call);
        }
    }

    /// The session's calls that hand a subagent a `prompt` (`Task`, called `Agent` by newer
    /// builds).
    fn task_calls(&mut self, l: &ScanLine<'_>) {
        let Some(content) = content_of(l.message) else {
            return;
        };
        for b in content.as_array().into_iter().flatten() {
            let name = b.get("name").and_then(Value::as_str);
            let task = matches!(name, Some("Task" | "Agent"));
            if b.get("type").and_then(Value::as_str) != Some("tool_use") || !task {
                continue;
            }
            let prompt = b.pointer("/input/prompt").and_then(Value::as_str);
            let id = b.get("id").and_then(Value::as_str);
            if let (Some(prompt), Some(id)) = (prompt, id) {
                self.prompts.push((prompt.to_owned(), id.to_owned()));
            }
        }
    }
}

/// Whether `id` can name a run: an agent id is a short word of letters, digits, `-` and `_`;
/// anything else (a path, an `@`) is not taken as one, and its lines are told by their links.
pub(crate) fn is_agent_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn content_of(message: Option<&RawValue>) -> Option<Value> {
    #[derive(Deserialize)]
    struct Message {
        content: Option<Value>,
    }
    serde_json::from_str::<Message>(message?.get())
        .ok()?
        .content
}

/// The text of a message: its string content, or its text blocks.
fn message_text(message: &RawValue) -> Option<String> {
    match content_of(Some(message))? {
        Value::String(s) => Some(s),
        Value::Array(blocks) => {
            let texts: Vec<&str> = (blocks.iter())
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n\n"))
        }
        _ => None,
    }
}

/// Which lines of a session file a run reads.
#[derive(Debug, Clone)]
pub(crate) enum Lines {
    /// Every line: a subagent's own file.
    All,
    /// A session's own lines: its side conversations are runs of their own.
    Main,
    /// One side conversation, with the `uuid`s of its lines read so far and a searcher for its
    /// key (built once: building one costs more than a line's search).
    Side(SideKey, HashSet<String>, Box<Finder<'static>>),
}

/// What [`Lines::take`] needs of a line; the rest of it is passed over undecoded.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SideFields<'a> {
    #[serde(default)]
    is_sidechain: bool,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    parent_uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    agent_id: Option<Cow<'a, str>>,
}

/// Whether a line is the run's, and whether it is a side line the run accounts for (its own,
/// or, for a session, one of the side conversations under it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Take {
    pub keep: bool,
    pub side: bool,
}

/// Whether `files` is a subagent's own file, named `agent-<id>.jsonl`: its lines are all side
/// lines, all its own.
pub(crate) fn is_agent_file(files: &RunFiles) -> bool {
    (files.transcript.as_deref())
        .and_then(|p| p.file_name())
        .is_some_and(|n| n.to_string_lossy().starts_with("agent-"))
}

impl Lines {
    /// The lines run `files` reads of its transcript.
    pub(crate) fn of(files: &RunFiles) -> Self {
        match (files.side(), is_agent_file(files)) {
            (Some(side), _) => Lines::side(side.clone(), HashSet::new()),
            (None, true) => Lines::All,
            (None, false) => Lines::Main,
        }
    }

    /// The lines of side conversation `side`, `members` the `uuid`s of its lines read so far.
    pub(crate) fn side(side: SideKey, members: HashSet<String>) -> Self {
        let key = Box::new(Finder::new(side.key.as_bytes()).into_owned());
        Lines::Side(side, members, key)
    }

    /// Whether the line with these fields is the run's.
    pub(crate) fn take(
        &mut self,
        is_side: bool,
        uuid: Option<&str>,
        parent: Option<&str>,
        agent: Option<&str>,
    ) -> Take {
        match self {
            Lines::All => Take {
                keep: true,
                side: is_side,
            },
            Lines::Main => Take {
                keep: !is_side,
                side: is_side,
            },
            Lines::Side(side, members, _) => {
                let agent = agent.filter(|a| is_agent_id(a));
                let keep = is_side
                    && match (agent, side.by_agent) {
                        (Some(a), true) => a == side.key,
                        (None, false) => {
                            uuid == Some(side.key.as_str())
                                || parent.is_some_and(|p| members.contains(p))
                        }
                        _ => false,
                    };
                if let (true, Some(uuid)) = (keep, uuid) {
                    members.insert(uuid.to_owned());
                }
                Take { keep, side: keep }
            }
        }
    }

    /// [`take`](Self::take) for a raw line (search reads lines without the run model).
    pub(crate) fn takes_raw(&mut self, bytes: &[u8]) -> bool {
        if matches!(self, Lines::All) {
            return true;
        }
        if !may_be_side(bytes) {
            return self.take(false, None, None, None).keep;
        }
        if self.surely_not_taken(bytes) {
            return false;
        }
        match self.take_by_links(bytes) {
            Some(take) => take.keep,
            None => self.take(false, None, None, None).keep,
        }
    }

    /// Whether this side conversation surely does not take `line`, told from its bytes alone
    /// (a session's other side lines are passed over so, unread): the line's `parentUuid`, the
    /// first key Claude Code writes, is none of the conversation's lines, and its root's
    /// `uuid` is nowhere in it. A line written any other way (another first key, a `\u`
    /// escape anywhere) is never passed over so: it is read; so is every line of a
    /// conversation whose root's uuid holds a character JSON may write escaped otherwise.
    pub(crate) fn surely_not_taken(&self, line: &[u8]) -> bool {
        let Lines::Side(side, members, key) = self else {
            return false;
        };
        let Some(rest) = line.strip_prefix(br#"{"parentUuid":"#) else {
            return false;
        };
        let parent_elsewhere = match rest.strip_prefix(b"\"") {
            None => rest.starts_with(b"null,"),
            Some(value) => match memchr::memchr2(b'"', b'\\', value) {
                Some(end) if value[end] == b'"' => {
                    std::str::from_utf8(&value[..end]).is_ok_and(|parent| !members.contains(parent))
                }
                _ => false,
            },
        };
        // A uuid with none of these can only be written escaped as `\u`, which is looked for.
        let unescapable = |b: &u8| *b >= 0x20 && !matches!(b, b'"' | b'\\' | b'/');
        !side.by_agent
            && side.key.as_bytes().iter().all(unescapable)
            && parent_elsewhere
            && !has(line, &ESCAPE)
            && key.find(line).is_none()
    }

    /// [`take`](Self::take) for a line read for its links alone (`None` when it is no JSON
    /// object of such fields): a side line is mostly some other run's, and telling so this
    /// way decodes none of its text.
    pub(crate) fn take_by_links(&mut self, bytes: &[u8]) -> Option<Take> {
        let f = serde_json::from_slice::<SideFields<'_>>(bytes).ok()?;
        let (u, p, a) = (f.uuid.as_deref(), f.parent_uuid.as_deref(), f.agent_id);
        Some(self.take(f.is_sidechain, u, p, a.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(lines: &[&str]) -> SessionScan {
        let mut s = Scanner::default();
        let mut offset = 0;
        for (n, l) in lines.iter().enumerate() {
            let at = LineStart {
                offset,
                lines: n as u64,
            };
            offset += l.len() as u64 + 1;
            s.line(l.as_bytes(), at, offset);
        }
        s.scan
    }

    const TASK: &str = r#"{"type":"assistant","uuid":"m1","isSidechain":false,"message":{"content":[{"type":"tool_use","id":"toolu_A","name":"Task","input":{"prompt":"Do A"}},{"type":"tool_use","id":"toolu_B","name":"Task","input":{"prompt":"Do B"}}]}}"#;

    /// A session's `Task` calls, then two side conversations whose lines interleave (B starts
    /// first, A second), then one that no call started.
    const LINES: &[&str] = &[
        TASK,
        r#"{"type":"user","uuid":"b1","parentUuid":null,"isSidechain":true,"message":{"content":"Do B"}}"#,
        r#"{"type":"user","uuid":"a1","parentUuid":null,"isSidechain":true,"message":{"content":[{"type":"text","text":"Do A"}]}}"#,
        r#"{"type":"assistant","uuid":"b2","parentUuid":"b1","isSidechain":true}"#,
        r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","isSidechain":true}"#,
        r#"{"type":"assistant","uuid":"a3","parentUuid":"a2","isSidechain":true}"#,
        r#"{"type":"user","uuid":"x1","parentUuid":null,"isSidechain":true,"message":{"content":"Nobody asked"}}"#,
    ];

    #[test]
    fn a_side_line_is_told_whatever_the_blanks_around_its_colon() {
        for line in [
            &br#"{"isSidechain":true}"#[..],
            br#"{"isSidechain" :  true}"#,
            b"{\"isSidechain\":\r\n\ttrue}",
            br#"{"isSidechain":false,"m":{"isSidechain": true}}"#,
        ] {
            assert!(may_be_side(line), "{}", String::from_utf8_lossy(line));
        }
        for line in [
            &br#"{"isSidechain":false}"#[..],
            br#"{"isSidechain": "true"}"#,
            br#"{"isSidechain""#,
            br#"{"isSidechain" true}"#,
        ] {
            assert!(!may_be_side(line), "{}", String::from_utf8_lossy(line));
        }
        // A session written again with a blank after each colon: the same conversations.
        let spaced: Vec<String> = LINES.iter().map(|l| l.replace("\":", "\": ")).collect();
        let spaced: Vec<&str> = spaced.iter().map(String::as_str).collect();
        let told = |s: SessionScan| -> Vec<(String, Option<String>, u64)> {
            (s.sidechains.into_iter())
                .map(|c| (c.side.key, c.call, c.lines))
                .collect()
        };
        let (compact, spaced) = (scan(LINES), scan(&spaced));
        assert_eq!(compact.side_lines.len(), spaced.side_lines.len());
        assert_eq!(told(spaced), told(compact));
    }

    #[test]
    fn side_conversations_are_told_apart_by_their_links_and_matched_to_their_calls() {
        let s = scan(LINES);
        let got: Vec<(&str, Option<&str>, u64)> = (s.sidechains.iter())
            .map(|c| (c.side.key.as_str(), c.call.as_deref(), c.lines))
            .collect();
        assert_eq!(
            got,
            [
                ("b1", Some("toolu_B"), 2),
                ("a1", Some("toolu_A"), 3),
                ("x1", None, 1)
            ]
        );
        // Each read starts at its first line (lines before it, offset of its first byte).
        let starts: Vec<Option<(u64, u64)>> = (s.sidechains.iter())
            .map(|c| s.start_of(c).map(|at| (at.lines, at.offset)))
            .collect();
        let offset = |n: usize| (0..n).map(|i| LINES[i].len() as u64 + 1).sum::<u64>();
        assert_eq!(
            starts,
            [
                Some((1, offset(1))),
                Some((2, offset(2))),
                Some((6, offset(6)))
            ]
        );
    }

    #[test]
    fn a_line_the_scan_cannot_read_moves_every_later_start_to_it() {
        let mut lines = LINES.to_vec();
        // Glued to another value: not one the scan reads, though a run's reading splits it.
        let glued = format!("{}{}", LINES[4], LINES[4]);
        lines[4] = &glued;
        let s = scan(&lines);
        let start = |key: &str| {
            let c = s.sidechains.iter().find(|c| c.side.key == key).unwrap();
            s.start_of(c).map(|at| at.lines)
        };
        assert_eq!(
            (start("b1"), start("a1"), start("x1")),
            (Some(1), Some(2), Some(4)),
            "a start before the unread line stays; a later one moves to it"
        );
    }

    #[test]
    fn a_read_may_stop_past_its_last_line_and_past_any_later_unread_one() {
        let offset =
            |lines: &[&str], n: usize| -> u64 { (0..n).map(|i| lines[i].len() as u64 + 1).sum() };
        // The stamp the file's folder's listing took: of the length the scan read.
        let listed = |s: &SessionScan| FileStamp {
            len: s.scanned_to,
            mtime_ns: 1,
            ctime_ns: 2,
            ino: 3,
        };
        let ends = |s: &SessionScan| -> Vec<Option<u64>> {
            (s.sidechains.iter())
                .map(|c| s.end_of(c, Some(listed(s))).map(|e| e.offset))
                .collect()
        };
        let mut s = scan(LINES);
        s.scanned_to = offset(LINES, LINES.len());
        assert_eq!(
            ends(&s),
            [
                Some(offset(LINES, 4)),
                Some(offset(LINES, 6)),
                Some(offset(LINES, 7))
            ]
        );
        assert!((s.sidechains.iter())
            .all(|c| s.end_of(c, Some(listed(&s))).unwrap().scanned == listed(&s)));
        assert_eq!(s.others(Some(listed(&s))).unwrap().scanned, listed(&s));
        // A listing that stamped another length than the scan read (the file written between
        // the two), or none: no read stops early.
        let other = FileStamp {
            len: s.scanned_to + 1,
            ..listed(&s)
        };
        for listed in [Some(other), None] {
            assert!((s.sidechains.iter()).all(|c| s.end_of(c, listed).is_none()));
            assert!(s.others(listed).is_none());
        }
        // A glued line after B's last and before A's: B's read goes on past it.
        let glued = format!("{}{}", TASK, TASK);
        let mut lines = LINES.to_vec();
        lines.insert(4, &glued);
        let s = scan(&lines);
        assert_eq!(
            ends(&s),
            [
                Some(offset(&lines, 5)),
                Some(offset(&lines, 7)),
                Some(offset(&lines, 8))
            ]
        );
    }

    #[test]
    fn a_start_moves_back_to_a_glued_line_and_to_its_roots_first_uuid() {
        const MAIN: &str = r#"{"type":"user","uuid":"m1","message":{"content":"hi"}}"#;
        let glued = format!("{MAIN}{MAIN}");
        let s = scan(&[
            LINES[1],
            // Joins B by its parent; its uuid roots a conversation of its own later.
            r#"{"type":"assistant","uuid":"k1","parentUuid":"b1","isSidechain":true}"#,
            r#"{"type":"user","uuid":"k1","parentUuid":"m1","isSidechain":true,"message":{"content":"K"}}"#,
            &glued,
            LINES[6],
        ]);
        let start = |key: &str| {
            let c = s.sidechains.iter().find(|c| c.side.key == key).unwrap();
            s.start_of(c).map(|at| at.lines)
        };
        assert_eq!(
            (start("b1"), start("k1"), start("x1")),
            (None, Some(1), Some(3)),
            "B at the file's start; K at its uuid's first line; X at the glued line"
        );
    }

    #[test]
    fn a_side_line_not_all_utf8_is_still_read_for_its_links_but_never_passed_over() {
        let mut s = Scanner::default();
        let mut line =
            br#"{"type":"user","uuid":"r","parentUuid":null,"isSidechain":true,"cwd":"x"#.to_vec();
        line.push(0xFF);
        line.extend_from_slice(br#"","message":{"content":"Go"}}"#);
        s.line(&line, LineStart::default(), line.len() as u64 + 1);
        let keys: Vec<&str> = (s.scan.sidechains.iter())
            .map(|c| c.side.key.as_str())
            .collect();
        assert_eq!(keys, ["r"]);
        assert_eq!(s.scan.unread_from, None);
        // The session's read reports the line (not UTF-8 text): it is no range of side lines.
        assert!(s.scan.side_lines.is_empty());
    }

    #[test]
    fn agent_ids_group_side_lines_and_name_the_calls_that_started_them() {
        let s = scan(&[
            r#"{"type":"user","uuid":"s1","isSidechain":true,"agentId":"a77","message":{"content":"Go"}}"#,
            r#"{"type":"assistant","uuid":"s2","parentUuid":"zz","isSidechain":true,"agentId":"a77"}"#,
            r#"{"type":"progress","isSidechain":false,"parentToolUseID":"toolu_P","data":{"type":"agent_progress","agentId":"a77"}}"#,
            r#"{"type":"user","isSidechain":false,"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_Q","content":"ok"}]},"toolUseResult":{"status":"completed","agentId":"a88"}}"#,
        ]);
        assert_eq!(s.sidechains.len(), 1);
        assert!(s.sidechains[0].side.by_agent);
        assert_eq!(s.sidechains[0].lines, 2);
        assert_eq!(s.call_of(&s.sidechains[0]).as_deref(), Some("toolu_P"));
        assert_eq!(
            s.agent_calls.get("a88").map(String::as_str),
            Some("toolu_Q")
        );
    }

    #[test]
    fn a_run_takes_only_its_own_lines() {
        let side = SideKey {
            key: "a1".into(),
            by_agent: false,
        };
        let mut a = Lines::side(side, HashSet::new());
        let mut main = Lines::Main;
        let lines = [
            (false, Some("m1"), None, true, false),
            (true, Some("b1"), None, false, false),
            (true, Some("a1"), None, false, true),
            (true, Some("b2"), Some("b1"), false, false),
            (true, Some("a2"), Some("a1"), false, true),
        ];
        for (side, uuid, parent, main_keeps, a_keeps) in lines {
            assert_eq!(main.take(side, uuid, parent, None).keep, main_keeps);
            assert_eq!(a.take(side, uuid, parent, None).keep, a_keeps, "{uuid:?}");
        }
        let raw = br#"{"type":"assistant","uuid":"a3","parentUuid":"a2","isSidechain":true}"#;
        assert!(a.takes_raw(raw));
        assert!(!main.takes_raw(raw));
        assert!(!a.takes_raw(TASK.as_bytes()));
    }

    #[test]
    fn a_side_line_is_passed_over_unread_only_when_surely_another_runs() {
        let side = SideKey {
            key: "a1".into(),
            by_agent: false,
        };
        let mut a = Lines::side(side, HashSet::from(["a2".to_owned()]));
        let lines: [(&str, bool); 9] = [
            // Another conversation's: its parent is none of ours, our root is nowhere in it.
            (
                r#"{"parentUuid":"b1","isSidechain":true,"uuid":"b2"}"#,
                true,
            ),
            (
                r#"{"parentUuid":null,"isSidechain":true,"uuid":"b1"}"#,
                true,
            ),
            // Ours by its parent, or by its own uuid: read.
            (
                r#"{"parentUuid":"a2","isSidechain":true,"uuid":"a3"}"#,
                false,
            ),
            (
                r#"{"parentUuid":null,"isSidechain":true,"uuid":"a1"}"#,
                false,
            ),
            // Written otherwise: read, never guessed.
            (
                r#"{"isSidechain":true,"parentUuid":"b1","uuid":"b2"}"#,
                false,
            ),
            (
                r#"{"parentUuid":"b\u0031","isSidechain":true,"uuid":"b2"}"#,
                false,
            ),
            (
                r#"{"parentUuid":"b1","isSidechain":true,"uuid":"\u0061\u0031"}"#,
                false,
            ),
            (
                r#"{"parentUuid": "b1","isSidechain":true,"uuid":"b2"}"#,
                false,
            ),
            (r#"{"parentUuid":7,"isSidechain":true,"uuid":"b2"}"#, false),
        ];
        for (line, passed_over) in lines {
            assert_eq!(a.surely_not_taken(line.as_bytes()), passed_over, "{line}");
            if passed_over {
                assert!(!a.clone().takes_raw(line.as_bytes()), "{line}");
            }
        }
        // The escaped uuid is ours once read.
        let escaped = r#"{"parentUuid":"b1","isSidechain":true,"uuid":"\u0061\u0031"}"#;
        assert!(a.takes_raw(escaped.as_bytes()));
        // A root whose uuid JSON may write escaped otherwise (`\/`) is never guessed at.
        let slash = SideKey {
            key: "a/1".into(),
            by_agent: false,
        };
        let other = br#"{"parentUuid":"b1","isSidechain":true,"uuid":"a\/1"}"#;
        assert!(!Lines::side(slash, HashSet::new()).surely_not_taken(other));
        // A session, or a conversation told by its agent id, never passes a line over so.
        let plain = br#"{"parentUuid":"b1","isSidechain":true,"uuid":"b2"}"#;
        assert!(!Lines::Main.surely_not_taken(plain));
        let by_agent = SideKey {
            key: "x".into(),
            by_agent: true,
        };
        assert!(!Lines::side(by_agent, HashSet::new()).surely_not_taken(plain));
    }
}
