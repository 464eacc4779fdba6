//! Searching a transcript: message text, tool call inputs and the text of every result that is
//! not searched through its value file. A line is parsed only when it may hold a match; a line
//! too long to hold (over [`BIG_LINE`]) is walked as a stream of JSON tokens, its strings
//! searched as they are decoded, so a 200 MB result costs one buffer, not 200 MB.

use super::hit::{HitKind, LineHit, Origin, SearchHit};
use super::scan::Ctx;
use super::Kinds;
use crate::model::RetentionState;
use crate::transcript::borrowed::opt_str;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::path::Path;
use struson::reader::{JsonReader, JsonStreamReader, ValueType};

/// A line longer than this is streamed instead of read whole.
pub(crate) const BIG_LINE: usize = 8 << 20;

const READ_BUFFER: usize = 64 << 10;

/// What to search of one transcript.
pub(crate) struct Transcript<'a> {
    pub run: &'a str,
    pub path: &'a Path,
    /// Lines whose result is searched through its value file instead, each with its byte
    /// offset and how many bytes it has at least (its result's text, which the line holds
    /// escaped): such a line is passed over with a seek, not read.
    pub skip: &'a HashMap<u64, (u64, u64)>,
    /// The retention state of the result on each line (a hit in a result says it).
    pub states: &'a HashMap<u64, RetentionState>,
    pub kinds: Kinds,
}

/// One event's searchable strings, as the small-line path reads them.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    event: Event<'a>,
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    text: Option<Cow<'a, str>>,
    #[serde(default, rename = "toolCallId", borrow, deserialize_with = "opt_str")]
    call: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<ResultBody<'a>>,
}

#[derive(Deserialize)]
struct ResultBody<'a> {
    #[serde(default, borrow, deserialize_with = "opt_str")]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "opt_str")]
    text: Option<Cow<'a, str>>,
}

/// Which field of an event a string came from: what kind of hit it makes, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// `text`: a user message's.
    Text,
    /// A block of `content`, with whether it is a `text` or `thinking` block (its `type` may
    /// come after its `text`).
    Block,
    Input,
    Result,
}

fn kind_of(event: &str, field: Field) -> Option<HitKind> {
    match (event, field) {
        ("user_message", Field::Text) | ("assistant_message", Field::Block) => {
            Some(HitKind::Message)
        }
        ("tool_call_started", Field::Input) => Some(HitKind::Input),
        ("tool_call_finished", Field::Result) => Some(HitKind::Result),
        _ => None,
    }
}

/// Hits of a transcript handed on together (a file's hits come out together, as `rg` prints
/// a file's matches together), at the end or when this many are waiting.
const BATCH: usize = 256;

/// Searches one transcript, handing on its hits. Returns the bytes read.
pub(crate) fn search_transcript(ctx: &Ctx<'_>, t: &Transcript<'_>) -> io::Result<u64> {
    let file = File::open(t.path)?;
    let len = file.metadata()?.len();
    let mut reader = BufReader::with_capacity(READ_BUFFER, file);
    let mut buf = Vec::new();
    let mut number = 0u64;
    let mut pending = Vec::new();
    while !ctx.stopped() {
        if reader.fill_buf()?.is_empty() {
            break;
        }
        number += 1;
        if let Some(&(offset, least)) = t.skip.get(&number) {
            // Only where the line starts where the run model saw it (the file is the one it
            // read): then its first `least` bytes are text of no interest.
            if reader.stream_position()? == offset {
                reader.seek_relative(i64::try_from(least).unwrap_or(0))?;
            }
            skip_line(&mut reader)?;
            continue;
        }
        buf.clear();
        match read_line(&mut reader, &mut buf)? {
            Read_::Whole => pending.extend(small_line(ctx, t, number, &buf)),
            // A torn last line is still being written: the run model does not read it yet.
            Read_::Torn => break,
            Read_::Big => {
                let mut line = Chained::new(&buf, &mut reader);
                match big_line(ctx, t, number, &mut line) {
                    Ok(Some(hits)) => pending.extend(hits),
                    Ok(None) => break, // it was the torn last line
                    Err(WalkError::Stopped) => break,
                    Err(e) => {
                        // The torn last line of a live run is not an error: it is not read yet.
                        if !line.finish()? {
                            break;
                        }
                        let why =
                            format!("line {number}: {e}; the rest of the line is not searched");
                        ctx.skip(t.path, why);
                    }
                }
            }
        }
        if pending.len() >= BATCH {
            ctx.emit_charged(std::mem::take(&mut pending));
        }
    }
    ctx.emit_charged(pending);
    Ok(len)
}

enum Read_ {
    Whole,
    Torn,
    Big,
}

/// Reads one line (without its `\n`) into `buf`, stopping at [`BIG_LINE`] bytes.
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Read_> {
    loop {
        let avail = reader.fill_buf()?;
        if avail.is_empty() {
            return Ok(Read_::Torn);
        }
        if let Some(at) = memchr::memchr(b'\n', avail) {
            buf.extend_from_slice(&avail[..at]);
            reader.consume(at + 1);
            return Ok(Read_::Whole);
        }
        let n = avail.len();
        buf.extend_from_slice(avail);
        reader.consume(n);
        if buf.len() >= BIG_LINE {
            return Ok(Read_::Big);
        }
    }
}

/// Reads past the end of the current line without keeping it. `false` at the end of the file
/// without a newline.
fn skip_line(reader: &mut impl BufRead) -> io::Result<bool> {
    loop {
        let avail = reader.fill_buf()?;
        if avail.is_empty() {
            return Ok(false);
        }
        if let Some(at) = memchr::memchr(b'\n', avail) {
            reader.consume(at + 1);
            return Ok(true);
        }
        let n = avail.len();
        reader.consume(n);
    }
}

pub(super) fn origin(t: &Transcript<'_>, number: u64, call: Option<&str>) -> Origin {
    Origin {
        run: t.run.to_owned(),
        line: Some(number),
        tool_call_id: call.map(str::to_owned),
        value_id: None,
        stray: false,
        orphan: false,
        state: t.states.get(&number).copied(),
    }
}

pub(super) fn hits_of(
    lines: Vec<LineHit>,
    origin: &Origin,
    kind: HitKind,
    index: usize,
) -> Vec<SearchHit> {
    let index = u32::try_from(index).unwrap_or(u32::MAX);
    lines
        .into_iter()
        .map(|l| l.into_hit(origin, kind, index))
        .collect()
}

/// A line held in memory: parsed only when it may hold a match.
fn small_line(ctx: &Ctx<'_>, t: &Transcript<'_>, number: u64, bytes: &[u8]) -> Vec<SearchHit> {
    if !ctx.matcher.may_match_json(bytes) {
        return Vec::new();
    }
    let Ok(line) = serde_json::from_slice::<Line<'_>>(bytes) else {
        return Vec::new(); // the run model reports an unreadable line; it holds no event
    };
    let e = line.event;
    let o = origin(t, number, e.call.as_deref());
    let mut out = Vec::new();
    let wanted = |field| kind_of(&e.kind, field).filter(|k| t.kinds.has(*k));
    if let (Some(kind), Some(text)) = (wanted(Field::Text), &e.text) {
        out.extend(hits_of(ctx.search_slice(text.as_bytes()), &o, kind, 0));
    }
    if let (Some(kind), Some(raw)) = (wanted(Field::Block), e.content) {
        let blocks: Vec<Block<'_>> = serde_json::from_str(raw.get()).unwrap_or_default();
        let texts = blocks.iter().filter(|b| is_text_block(&b.kind));
        for (i, b) in texts.enumerate() {
            if let Some(text) = &b.text {
                out.extend(hits_of(ctx.search_slice(text.as_bytes()), &o, kind, i));
            }
        }
    }
    if let (Some(kind), Some(raw)) = (wanted(Field::Input), e.input) {
        if let Ok(Strings(strings)) = serde_json::from_str::<Strings<'_>>(raw.get()) {
            for (i, s) in strings.iter().enumerate() {
                out.extend(hits_of(ctx.search_slice(s.as_bytes()), &o, kind, i));
            }
        }
    }
    if let (Some(kind), Some(body)) = (wanted(Field::Result), &e.result) {
        if let Some(text) = &body.content {
            out.extend(hits_of(ctx.search_slice(text.as_bytes()), &o, kind, 0));
        }
    }
    out
}

fn is_text_block(kind: &str) -> bool {
    kind == "text" || kind == "thinking"
}

/// Every string of a JSON value (not its keys), in document order (a `serde_json::Value`
/// would sort an object's keys).
struct Strings<'a>(Vec<Cow<'a, str>>);

impl<'de> Deserialize<'de> for Strings<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = Vec::new();
        d.deserialize_any(Collect(&mut out))?;
        Ok(Strings(out))
    }
}

/// Visits one value, pushing its strings.
struct Collect<'o, 'de>(&'o mut Vec<Cow<'de, str>>);

impl<'de> serde::de::DeserializeSeed<'de> for Collect<'_, 'de> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Collect<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        self.0.push(Cow::Borrowed(s));
        Ok(())
    }
    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.push(Cow::Owned(s.to_owned()));
        Ok(())
    }
    fn visit_string<E>(self, s: String) -> Result<(), E> {
        self.0.push(Cow::Owned(s));
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Collect(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<serde::de::IgnoredAny>()?.is_some() {
            map.next_value_seed(Collect(&mut *self.0))?;
        }
        Ok(())
    }
}

/// A line too long to hold, walked as JSON tokens with each string of interest searched as it
/// is decoded. `None` when the line turned out to be the torn last line.
fn big_line(
    ctx: &Ctx<'_>,
    t: &Transcript<'_>,
    number: u64,
    line: &mut Chained<'_, '_>,
) -> Result<Option<Vec<SearchHit>>, WalkError> {
    let mut walk = Walk {
        ctx,
        kinds: t.kinds,
        event: None,
        call: None,
        found: Vec::new(),
    };
    {
        let mut json = JsonStreamReader::new(&mut *line);
        walk.envelope(&mut json)?;
    }
    if !line.finish()? {
        return Ok(None);
    }
    let event = walk.event.unwrap_or_default();
    let o = origin(t, number, walk.call.as_deref());
    let mut out = Vec::new();
    let mut counts = [0usize; 4];
    for (field, lines) in walk.found {
        let index = counts[field as usize];
        counts[field as usize] += 1;
        if let Some(kind) = kind_of(&event, field).filter(|k| t.kinds.has(*k)) {
            out.extend(hits_of(lines, &o, kind, index));
        }
    }
    Ok(Some(out))
}

/// What a streamed line gave so far.
struct Walk<'c> {
    ctx: &'c Ctx<'c>,
    kinds: Kinds,
    event: Option<String>,
    call: Option<String>,
    found: Vec<(Field, Vec<LineHit>)>,
}

impl Walk<'_> {
    fn envelope<R: Read>(&mut self, json: &mut JsonStreamReader<R>) -> WalkResult {
        json.begin_object()?;
        while json.has_next()? {
            if json.next_name()? == "event" && json.peek()? == ValueType::Object {
                self.event(json)?;
            } else {
                json.skip_value()?;
            }
        }
        Ok(json.end_object()?)
    }

    fn event<R: Read>(&mut self, json: &mut JsonStreamReader<R>) -> WalkResult {
        json.begin_object()?;
        while json.has_next()? {
            let name = json.next_name_owned()?;
            let ty = json.peek()?;
            match (name.as_str(), ty) {
                ("type", ValueType::String) => self.event = Some(json.next_string()?),
                ("toolCallId", ValueType::String) => self.call = Some(json.next_string()?),
                ("text", ValueType::String) if self.kinds.has(HitKind::Message) => {
                    self.string(json, Field::Text)?
                }
                ("content", ValueType::Array) if self.kinds.has(HitKind::Message) => {
                    self.blocks(json)?
                }
                ("input", _) if self.kinds.has(HitKind::Input) => self.strings(json)?,
                ("result", ValueType::Object) if self.kinds.has(HitKind::Result) => {
                    json.begin_object()?;
                    while json.has_next()? {
                        let content = json.next_name()? == "content";
                        if content && json.peek()? == ValueType::String {
                            self.string(json, Field::Result)?;
                        } else {
                            json.skip_value()?;
                        }
                    }
                    json.end_object()?;
                }
                _ => json.skip_value()?,
            }
        }
        Ok(json.end_object()?)
    }

    /// The text blocks of an assistant message's `content`.
    fn blocks<R: Read>(&mut self, json: &mut JsonStreamReader<R>) -> WalkResult {
        json.begin_array()?;
        while json.has_next()? {
            if json.peek()? != ValueType::Object {
                json.skip_value()?;
                continue;
            }
            json.begin_object()?;
            let mut kind = None;
            let mut hits = None;
            while json.has_next()? {
                let name = json.next_name_owned()?;
                match (name.as_str(), json.peek()?) {
                    ("type", ValueType::String) => kind = Some(json.next_string()?),
                    ("text", ValueType::String) => hits = Some(self.search(json)?),
                    _ => json.skip_value()?,
                }
            }
            json.end_object()?;
            // A text block without text still counts, as the short path counts it.
            if kind.as_deref().is_some_and(is_text_block) {
                self.found.push((Field::Block, hits.unwrap_or_default()));
            }
        }
        Ok(json.end_array()?)
    }

    /// Every string of a value (a tool call's input), searched as it is decoded.
    fn strings<R: Read>(&mut self, json: &mut JsonStreamReader<R>) -> WalkResult {
        match json.peek()? {
            ValueType::String => self.string(json, Field::Input),
            ValueType::Array => {
                json.begin_array()?;
                while json.has_next()? {
                    self.strings(json)?;
                }
                Ok(json.end_array()?)
            }
            ValueType::Object => {
                json.begin_object()?;
                while json.has_next()? {
                    json.skip_name()?;
                    self.strings(json)?;
                }
                Ok(json.end_object()?)
            }
            _ => Ok(json.skip_value()?),
        }
    }

    fn string<R: Read>(&mut self, json: &mut JsonStreamReader<R>, field: Field) -> WalkResult {
        let hits = self.search(json)?;
        self.found.push((field, hits));
        Ok(())
    }

    fn search<R: Read>(
        &mut self,
        json: &mut JsonStreamReader<R>,
    ) -> Result<Vec<LineHit>, WalkError> {
        let mut reader = json.next_string_reader()?;
        let hits = self.ctx.search_reader(&mut reader)?;
        if self.ctx.stopped() {
            // The string is left half read: the JSON reader must not be used again.
            return Err(WalkError::Stopped);
        }
        // The searcher may stop before the string ends (enough hits): read past the rest, so
        // the JSON reader goes on after it.
        io::copy(&mut reader, &mut io::sink())?;
        Ok(hits)
    }
}

#[derive(Debug, thiserror::Error)]
enum WalkError {
    #[error("the search stopped")]
    Stopped,
    #[error("{0}")]
    Json(#[from] struson::reader::ReaderError),
    #[error("{0}")]
    Io(#[from] io::Error),
}

type WalkResult = Result<(), WalkError>;

/// A line's bytes already read, then the rest of it from the file, up to (not including) its
/// `\n`.
pub(crate) struct Chained<'b, 'r> {
    head: &'b [u8],
    reader: &'r mut BufReader<File>,
    /// The `\n` was reached (`Some(true)`) or the file ended first (`Some(false)`).
    ended: Option<bool>,
}

impl<'b, 'r> Chained<'b, 'r> {
    fn new(head: &'b [u8], reader: &'r mut BufReader<File>) -> Self {
        Self {
            head,
            reader,
            ended: None,
        }
    }

    /// Reads past the rest of the line; `false` when the file ended without a `\n`.
    fn finish(&mut self) -> io::Result<bool> {
        match self.ended {
            Some(newline) => Ok(newline),
            None => skip_line(self.reader),
        }
    }
}

impl Read for Chained<'_, '_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if !self.head.is_empty() {
            let n = self.head.len().min(out.len());
            out[..n].copy_from_slice(&self.head[..n]);
            self.head = &self.head[n..];
            return Ok(n);
        }
        if self.ended.is_some() {
            return Ok(0);
        }
        let avail = self.reader.fill_buf()?;
        if avail.is_empty() {
            self.ended = Some(false);
            return Ok(0);
        }
        let (take, newline) = match memchr::memchr(b'\n', avail) {
            Some(at) => (at, true),
            None => (avail.len(), false),
        };
        let n = take.min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        let done = newline && n == take;
        self.reader.consume(if done { n + 1 } else { n });
        if done {
            self.ended = Some(true);
        }
        Ok(n)
    }
}
