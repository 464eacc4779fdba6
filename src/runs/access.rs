//! The one entry point each for opening a result, its stub and a peek: the CLI and the desktop
//! app call these and nothing else, so they cannot disagree.
//!
//! The rule for where a peek reads (docs/runs-dir.md, "Which text a peek reads"): like the
//! harness's `peek_value`, the value file `<run>.values/<value_id(call)>.txt` when it is a
//! regular file there (a retained, damaged or stray value alike: the model's peek reads it by id
//! and never looks at the transcript); else the full text of the run's result for `call` from
//! the transcript (a result that was never retained, or whose file is gone); else the call is
//! unknown. Opening a result for viewing reads its text the same way.

use super::layout::Layout;
use super::{analyze_run, read_row, ResultInfo, RetentionState, RunsDir};
use crate::error::{Error, ErrorCode, Result};
use crate::retained::open::{OpenValue, ValueText};
use crate::retained::{
    peek, peek_source, stub_from_source, value_id, FileSource, Peek, PeekError, PeekRequest, Stub,
};
use crate::transcript::event::{Envelope, Event};
use crate::transcript::spans::resolve;
use crate::transcript::{read_transcript_line, SpanSource};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use ts_rs::TS;

/// A tool result with its full text, as the transcript holds it.
pub struct FoundResult {
    /// The result's figures.
    pub info: ResultInfo,
    /// The full text, exactly as the tool returned it (read in slices when it is big).
    pub content: ValueText,
}

/// Where a value's full text is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum TextSource {
    /// The value file (what `peek_value` reads).
    File,
    /// The transcript's copy of the result.
    Transcript,
    /// Another agent's value file is gone, and this is the raw output its transcript still
    /// holds (Claude Code's `toolUseResult`): recovered from the transcript.
    Recovered,
}

/// What a value opened for viewing is: a result's retention state, or a stray value file (one
/// that no result of its run names: the model never saw it, but `peek_value` reads it by id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ValueState {
    /// At or under the threshold: the model saw it whole.
    Inline,
    /// Over the threshold and its value file holds the same bytes: the model saw the stub.
    Retained,
    /// Over the threshold and no value file: the full text is (or would be) in context.
    Unretained,
    /// A value file exists but its bytes differ from the transcript's.
    Damaged,
    /// A value file that no result of its run names.
    Stray,
    /// Cut in place by its agent (Codex): the full output never reached the disk.
    Truncated,
    /// Saved to a file by its agent, and the file is gone: the model got the stub.
    Swept,
}

impl From<RetentionState> for ValueState {
    fn from(state: RetentionState) -> Self {
        match state {
            RetentionState::Inline => ValueState::Inline,
            RetentionState::Retained => ValueState::Retained,
            RetentionState::Unretained => ValueState::Unretained,
            RetentionState::Damaged => ValueState::Damaged,
            RetentionState::Truncated => ValueState::Truncated,
            RetentionState::Swept => ValueState::Swept,
        }
    }
}

/// How a value's state was told when it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Verified {
    /// The value file compared with the transcript by its size and its first and last 64 KiB
    /// (as a listing does): a big value opens without reading it all; [`RunsDir::verify_value`]
    /// tells the verdict of every byte.
    Sampled,
    /// Every byte compared (or nothing to compare: a stray file, a result without a file).
    Full,
}

/// The verdict of comparing every byte of a value file with its result's text in the
/// transcript (`verify_value`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueVerdict {
    /// State of the value, every byte checked.
    pub state: ValueState,
    /// Always `full`: every byte was compared.
    pub verified: Verified,
    /// The stub the model saw (it is made of the transcript's text, which a damaged file no
    /// longer holds).
    pub stub: Option<Stub>,
    /// What the next resume sends for this result.
    pub context_bytes: u64,
}

/// A tool result (or a stray value file) opened for the compare view.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ValueInfo {
    /// Tool call id of the result; the value id for a stray file.
    pub tool_call_id: String,
    /// Name of the tool called; empty for a stray file.
    pub tool: String,
    /// Value id: the value file is `<value id>.txt`.
    pub value_id: String,
    /// The result's retention state, or `stray`.
    pub state: ValueState,
    /// False when the tool reported a failure (always true for a stray file).
    pub ok: bool,
    /// Size of the full text in bytes.
    pub bytes: u64,
    /// Number of lines in the full text.
    pub lines: u64,
    /// Invisible format characters in the result's text (as the transcript has it); `null` for
    /// a stray file, which is not read whole to count them.
    pub format_chars: Option<u64>,
    /// Where the full text shown is read from.
    pub source: TextSource,
    /// The value file, when there is one.
    pub value_path: Option<String>,
    /// The stub the model saw (or would see, for a result over the threshold).
    pub stub: Option<Stub>,
    /// What the next resume sends for this result.
    pub context_bytes: u64,
    /// Retention threshold the state was told by, in bytes.
    pub threshold: u64,
    /// How `state` was told: `sampled` for a retained value opened from its file alone, until
    /// [`RunsDir::verify_value`] says more.
    pub verified: Verified,
    /// The kind of store the run is in: what the states mean depends on it.
    #[serde(default)]
    pub agent: crate::model::SourceKind,
}

/// The stub of a result, with what it is the stub of (`mctl stub --json`).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StubAnswer {
    /// Tool call id of the result.
    pub tool_call_id: String,
    /// Value id of the result.
    pub value_id: String,
    /// Name of the tool called (it appears in the stub).
    pub tool: String,
    /// Size of the stub's text in bytes.
    #[ts(type = "number")]
    pub bytes: usize,
    /// The stub's text and layout.
    #[serde(flatten)]
    pub stub: Stub,
}

/// A peek's answer, with where it was read from (`mctl peek --json` and the app's console).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PeekAnswer {
    /// Value id of the value peeked at.
    pub value_id: String,
    /// Where the peeked text was read from (the value file, else a copy the transcript holds).
    pub source: TextSource,
    /// Size of the answer's text in bytes.
    #[ts(type = "number")]
    pub bytes: usize,
    /// The peek's text, as `peek_value` returns it.
    #[serde(flatten)]
    pub peek: Peek,
}

impl RunsDir {
    /// The result of run `run` whose tool call id or value id is `call`, with its full text. When
    /// a call id repeats, the last result wins (it is the one a resume replays last).
    pub fn find_result(&self, run: &str, call: &str) -> Result<FoundResult> {
        if let Some(found) = self.foreign_result(run, call)? {
            let (_, info, texts) = found;
            let content = texts
                .value_text()
                .map_err(|e| Error::io("reading the result", &e))?;
            return Ok(FoundResult { info, content });
        }
        let (_, info, path) = self.locate_result(run, call)?;
        let content = read_result_content(&path, info.offset).map_err(|e| {
            Error::io(
                format!("reading line {} of {}", info.line, path.display()),
                &e,
            )
        })?;
        Ok(FoundResult { info, content })
    }

    /// [`find_result`](Self::find_result) without reading the text: the run's id, the result,
    /// and the transcript holding it (a caller can check the size before it reads).
    pub(crate) fn locate_result(
        &self,
        run: &str,
        call: &str,
    ) -> Result<(String, ResultInfo, PathBuf)> {
        let (layout, id) = self.run_layout(run)?;
        let detail = analyze_run(&layout, &id, &self.opts, false)
            .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        let info = pick(&detail.results, call)
            .cloned()
            .ok_or_else(|| unknown_call(&id, call))?;
        let path = layout.runs[&id].transcript.clone().ok_or_else(|| {
            // Results come from a transcript; one removed since is no longer there to read.
            Error::new(
                ErrorCode::UnknownCall,
                format!("run {id} has no transcript"),
            )
        })?;
        Ok((id, info, path))
    }

    /// The value file of `call` in run `run`, if it is a regular file in a real value directory.
    /// Needs only `value_id(call)`, never the transcript.
    pub fn value_file(&self, run: &str, call: &str) -> Result<Option<PathBuf>> {
        let (layout, id) = self.run_layout(run)?;
        if !self.source().capabilities().retention_threshold {
            // Another store names a value by its stub, which only the result says.
            let vid = match self.foreign_result(run, call) {
                Ok(Some((_, info, _))) => info.value_id,
                _ => call.to_owned(),
            };
            return Ok(layout.store().value_file(&layout, &id, &vid));
        }
        Ok(layout.store().value_file(&layout, &id, call))
    }

    /// The stub of the result for `call`: the exact text the model saw in its place. An error
    /// (`not-retained`) for a result at or under the threshold, which the model saw whole.
    pub fn stub(&self, run: &str, call: &str) -> Result<StubAnswer> {
        if let Some((_, info, texts)) = self.foreign_result(run, call)? {
            let stub = texts.stub().ok_or_else(|| not_retained(&info))?;
            return Ok(StubAnswer {
                tool_call_id: info.tool_call_id,
                value_id: info.value_id,
                tool: info.tool,
                bytes: stub.text.len(),
                stub,
            });
        }
        let found = self.find_result(run, call)?;
        let info = found.info;
        let stub = self.stub_of(&info, &found.content).ok_or_else(|| {
            Error::new(
                ErrorCode::NotRetained,
                format!(
                    "result {} is {} bytes, not over the {}-byte threshold: the model saw it whole",
                    info.tool_call_id, info.bytes, self.opts.threshold
                ),
            )
        })?;
        Ok(StubAnswer {
            tool_call_id: info.tool_call_id,
            value_id: info.value_id,
            tool: info.tool,
            bytes: stub.text.len(),
            stub,
        })
    }

    /// What `peek_value` returns for `request` on `call` of run `run`, read by the rule at the
    /// top of this module. A request the model would get an error for is a `peek` error whose
    /// message is that error.
    pub fn peek(&self, run: &str, call: &str, request: &PeekRequest) -> Result<PeekAnswer> {
        let (vid, source, text) = self.peek_text(run, call)?;
        // The text's own index when it has one (a span counted as it was read, a sidecar of a
        // value in object storage): a range then reads near its lines only.
        let peek = match request {
            PeekRequest::Range { .. } => text
                .line_index()
                .map_err(|e| PeekError::Io {
                    id: vid.clone(),
                    message: e.to_string(),
                })
                .and_then(|index| peek(&vid, &text, &index, request))
                .map_err(|e| Error::new(ErrorCode::Peek, e.to_string())),
            PeekRequest::Query { .. } => peek_source(&vid, &text, request)
                .map_err(|e| Error::new(ErrorCode::Peek, e.to_string())),
        }?;
        Ok(PeekAnswer {
            value_id: vid,
            source,
            bytes: peek.text.len(),
            peek,
        })
    }

    /// A result opened for viewing: its figures, its stub when over the threshold, and its full
    /// text indexed, read by the same rule as a peek. A stray value file (no result names it)
    /// opens too, as a peek would read it.
    ///
    /// A retained value (its file compared with the transcript by size and sampled ends) opens
    /// from its file alone, stub included: nothing reads the transcript's copy of a value of
    /// hundreds of megabytes first. Its state says `verified: sampled` until
    /// [`verify_value`](Self::verify_value) has compared every byte.
    pub fn open_value(&self, run: &str, call: &str) -> Result<(ValueInfo, OpenValue)> {
        if let Some((_, info, texts)) = self.foreign_result(run, call)? {
            return self.open_foreign(info, texts);
        }
        if let Some(opened) = self.open_sampled(run, call)? {
            return Ok(opened);
        }
        let found = match self.find_result(run, call) {
            Ok(found) => found,
            Err(e) if e.code == ErrorCode::UnknownCall => {
                let Some(path) = self.value_file(run, call)? else {
                    return Err(e);
                };
                return self.open_stray(call, &path);
            }
            Err(e) => return Err(e),
        };
        let stub = self.stub_of(&found.info, &found.content);
        let info = found.info;
        let file = self.value_file(run, &info.tool_call_id)?;
        let (source, text) = match &file {
            Some(path) => (TextSource::File, ValueText::File(open_file(path)?)),
            None => (TextSource::Transcript, found.content),
        };
        let value = OpenValue::new(text).map_err(|e| Error::io("indexing the value", &e))?;
        let info = ValueInfo {
            tool_call_id: info.tool_call_id,
            tool: info.tool,
            value_id: info.value_id,
            state: info.state.into(),
            ok: info.ok,
            bytes: info.bytes,
            lines: value.index.lines(),
            format_chars: Some(info.format_chars),
            source,
            value_path: file.map(|p| p.to_string_lossy().into_owned()),
            stub,
            context_bytes: info.context_bytes,
            threshold: self.opts.threshold,
            verified: Verified::Full,
            agent: self.source(),
        };
        Ok((info, value))
    }

    /// [`open_value`](Self::open_value) of a result that a listing's check says is retained:
    /// its figures from the index (or a sampled read of the run), its text and stub from its
    /// value file. `None` for any other result: it opens the thorough way.
    fn open_sampled(&self, run: &str, call: &str) -> Result<Option<(ValueInfo, OpenValue)>> {
        if !self.source().capabilities().retention_threshold {
            return Ok(None);
        }
        let (layout, id) = self.run_layout(run)?;
        let Some(info) = self.sampled_result(&layout, &id, call) else {
            return Ok(None);
        };
        if info.state != RetentionState::Retained {
            return Ok(None);
        }
        let Some(path) = layout.store().value_file(&layout, &id, &info.tool_call_id) else {
            return Ok(None);
        };
        // A file gone, cut short or changed since it was checked: open it the thorough way.
        let Ok(value) = FileSource::open(&path).and_then(|f| OpenValue::new(ValueText::File(f)))
        else {
            return Ok(None);
        };
        if value.index.bytes() != info.bytes {
            return Ok(None);
        }
        // The file holds the result's bytes (as far as sampled), so the stub of its text is the
        // stub of the result's.
        let stub = match info.bytes > self.opts.threshold {
            true => match stub_from_source(&info.value_id, &info.tool, &value.text, &value.index) {
                Ok(stub) => Some(stub),
                Err(_) => return Ok(None),
            },
            false => None,
        };
        let info = ValueInfo {
            tool_call_id: info.tool_call_id,
            tool: info.tool,
            value_id: info.value_id,
            state: ValueState::Retained,
            ok: info.ok,
            bytes: info.bytes,
            lines: value.index.lines(),
            format_chars: Some(info.format_chars),
            source: TextSource::File,
            value_path: Some(path.to_string_lossy().into_owned()),
            stub,
            context_bytes: info.context_bytes,
            threshold: self.opts.threshold,
            verified: Verified::Sampled,
            agent: self.source(),
        };
        Ok(Some((info, value)))
    }

    /// The result for `call` of run `id` as a listing tells it (value files compared by size
    /// and sampled ends): from the index when it vouches for the run, else read.
    fn sampled_result(&self, layout: &Layout, id: &str, call: &str) -> Option<ResultInfo> {
        let opts = self.listing_opts(self.opts.now_ms);
        let results = match self.index() {
            Some(mut index) => {
                index
                    .one(layout, id, &opts, |id| read_row(layout, id, &opts))?
                    .results?
            }
            None => analyze_run(layout, id, &opts, false).ok()?.results,
        };
        pick(&results, call).cloned()
    }

    /// The verdict of every byte of `call`'s value file against its result's text (what a
    /// value opened `verified: sampled` waits for).
    pub fn verify_value(&self, run: &str, call: &str) -> Result<ValueVerdict> {
        if let Some((_, info, texts)) = self.foreign_result(run, call)? {
            return Ok(ValueVerdict {
                state: info.state.into(),
                verified: Verified::Full,
                stub: texts.stub(),
                context_bytes: info.context_bytes,
            });
        }
        let found = match self.find_result(run, call) {
            Ok(found) => found,
            Err(e) if e.code == ErrorCode::UnknownCall && self.value_file(run, call)?.is_some() => {
                return Ok(ValueVerdict {
                    state: ValueState::Stray,
                    verified: Verified::Full,
                    stub: None,
                    context_bytes: 0,
                })
            }
            Err(e) => return Err(e),
        };
        Ok(ValueVerdict {
            state: found.info.state.into(),
            verified: Verified::Full,
            stub: self.stub_of(&found.info, &found.content),
            context_bytes: found.info.context_bytes,
        })
    }

    /// A value file that no result names: no stub (the model was never shown it) and nothing a
    /// resume sends for it.
    fn open_stray(&self, call: &str, path: &Path) -> Result<(ValueInfo, OpenValue)> {
        let text = ValueText::File(open_file(path)?);
        let value = OpenValue::new(text).map_err(|e| Error::io("indexing the value", &e))?;
        let vid = value_id(call);
        let info = ValueInfo {
            tool_call_id: vid.clone(),
            tool: String::new(),
            value_id: vid,
            state: ValueState::Stray,
            ok: true,
            bytes: value.index.bytes(),
            lines: value.index.lines(),
            format_chars: None,
            source: TextSource::File,
            value_path: Some(path.to_string_lossy().into_owned()),
            stub: None,
            context_bytes: 0,
            threshold: self.opts.threshold,
            verified: Verified::Full,
            agent: self.source(),
        };
        Ok((info, value))
    }

    /// The stub of a result over the threshold; `None` at or under it.
    fn stub_of(&self, info: &ResultInfo, content: &ValueText) -> Option<Stub> {
        if info.bytes <= self.opts.threshold {
            return None;
        }
        let index = content.line_index().ok()?;
        stub_from_source(&info.value_id, &info.tool, content, &index).ok()
    }

    /// The text a peek of `call` reads: its value file, else its result's text.
    fn peek_text(&self, run: &str, call: &str) -> Result<(String, TextSource, ValueText)> {
        if let Some((_, info, texts)) = self.foreign_result(run, call)? {
            let source = foreign_source(&texts);
            let text = texts
                .value_text()
                .map_err(|e| Error::io("opening the value", &e))?;
            return Ok((info.value_id, source, text));
        }
        if let Some(path) = self.value_file(run, call)? {
            let text = ValueText::File(open_file(&path)?);
            return Ok((value_id(call), TextSource::File, text));
        }
        let found = self.find_result(run, call)?;
        Ok((found.info.value_id, TextSource::Transcript, found.content))
    }
}

impl RunsDir {
    /// A result of another agent's store with its texts; `None` for the harness's own runs.
    fn foreign_result(
        &self,
        run: &str,
        call: &str,
    ) -> Result<Option<(String, ResultInfo, crate::model::recorded::RecordedTexts)>> {
        if self.source().capabilities().retention_threshold {
            return Ok(None);
        }
        let (layout, id) = self.run_layout(run)?;
        let detail = analyze_run(&layout, &id, &self.opts, false)
            .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        let info = pick(&detail.results, call)
            .cloned()
            .ok_or_else(|| unknown_call(&id, call))?;
        let texts = recorded_texts(&layout, &id, &info)
            .map_err(|e| Error::io(format!("reading line {} of run {id}", info.line), &e))?;
        Ok(Some((id, info, texts)))
    }

    fn open_foreign(
        &self,
        info: ResultInfo,
        texts: crate::model::recorded::RecordedTexts,
    ) -> Result<(ValueInfo, OpenValue)> {
        let stub = texts.stub();
        let source = foreign_source(&texts);
        let value_path = texts.value_path().map(|p| p.to_string_lossy().into_owned());
        let text = texts
            .value_text()
            .map_err(|e| Error::io("opening the value", &e))?;
        let value = OpenValue::new(text).map_err(|e| Error::io("indexing the value", &e))?;
        let info = ValueInfo {
            tool_call_id: info.tool_call_id,
            tool: info.tool,
            value_id: info.value_id,
            state: info.state.into(),
            ok: info.ok,
            bytes: value.index.bytes(),
            lines: value.index.lines(),
            format_chars: Some(info.format_chars),
            source,
            value_path,
            stub,
            context_bytes: info.context_bytes,
            threshold: self.opts.threshold,
            verified: Verified::Full,
            agent: self.source(),
        };
        Ok((info, value))
    }
}

fn foreign_source(texts: &crate::model::recorded::RecordedTexts) -> TextSource {
    use crate::model::recorded::FullText;
    match texts.full {
        FullText::File(_) | FullText::JsonFile(..) => TextSource::File,
        FullText::Recovered(_) => TextSource::Recovered,
        FullText::Seen => TextSource::Transcript,
    }
}

/// The full text of result `info` of run `id`: the transcript's copy for the harness's runs,
/// the value file (or what is left of it) for another agent's. Read in slices as asked for.
pub(crate) fn result_source(
    layout: &Layout,
    id: &str,
    info: &ResultInfo,
) -> std::io::Result<ValueText> {
    if let Some(texts) = layout.store().recorded_texts(layout, id, info) {
        return texts?.value_text();
    }
    let path = layout
        .runs
        .get(id)
        .and_then(|f| f.transcript.clone())
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no transcript"))?;
    read_result_content(&path, info.offset)
}

/// [`result_source`] in memory, for a caller that has checked its size.
pub(crate) fn result_text(layout: &Layout, id: &str, info: &ResultInfo) -> std::io::Result<String> {
    result_source(layout, id, info)?.into_string()
}

/// The texts store `layout` recorded of result `info` of run `id`; an error for a store whose
/// stubs are made by the retention rule (the harness's: its transcript holds the full text).
pub(crate) fn recorded_texts(
    layout: &Layout,
    id: &str,
    info: &ResultInfo,
) -> std::io::Result<crate::model::recorded::RecordedTexts> {
    (layout.store().recorded_texts(layout, id, info)).unwrap_or_else(|| {
        Err(std::io::Error::other(
            "a runs directory is not a foreign store",
        ))
    })
}

/// The result `call` names: by tool call id, else by value id. When a call id repeats, the last
/// result wins (it is the one a resume replays last).
fn pick<'a>(results: &'a [ResultInfo], call: &str) -> Option<&'a ResultInfo> {
    results
        .iter()
        .rev()
        .find(|r| r.tool_call_id == call)
        .or_else(|| results.iter().rev().find(|r| r.value_id == call))
}

fn open_file(path: &Path) -> Result<FileSource> {
    FileSource::open(path).map_err(|e| Error::io(format!("opening {}", path.display()), &e))
}

/// The `not-retained` error of result `info`, which has no stub: the model got it whole, or
/// cut in place.
pub(crate) fn not_retained(info: &ResultInfo) -> Error {
    let why = match info.state {
        RetentionState::Truncated => "was cut in place: the model got the cut text, no stub",
        _ => "was not kept out of context: the model saw it whole",
    };
    let message = format!("result {} {why}", info.tool_call_id);
    Error::new(ErrorCode::NotRetained, message)
}

pub(crate) fn unknown_call(run: &str, call: &str) -> Error {
    Error::new(
        ErrorCode::UnknownCall,
        format!("run {run} has no result for tool call `{call}`"),
    )
}

/// The `content` of the `tool_call_finished` line starting at `offset`: in memory, or (a big
/// string of a line too long to hold) read again from the transcript in slices.
pub(crate) fn read_result_content(path: &Path, offset: u64) -> std::io::Result<ValueText> {
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the line changed since it was read",
        )
    };
    let read = read_transcript_line(path, offset, |line| {
        if line.broken.is_some() {
            return Err(bad());
        }
        // A value of a glued line is read up to its end, not the line's.
        let env: Envelope = serde_json::from_slice(crate::transcript::first_value(line.bytes))
            .map_err(|_| bad())?;
        match serde_json::from_str::<Event>(env.event.get()) {
            Ok(Event::ToolCallFinished { result, .. }) => {
                Ok(match resolve(&result.content, line.spans) {
                    Some(big) => ValueText::Span(Arc::new(SpanSource::open(big)?)),
                    None => ValueText::Memory(Arc::new(result.content)),
                })
            }
            _ => Err(bad()),
        }
    })?;
    read.unwrap_or_else(|| Err(bad()))
}
