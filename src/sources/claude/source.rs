//! Claude Code's projects directory behind the seam: its layout, fold, recorded texts, read-backs,
//! search pieces, cleanup forecast and value folders.

use super::folders::SessionFolders;
use super::threads::Lines;
use super::{persisted, ClaudeFold};
use crate::model::recorded::{transcript_of, FullText, RecordedTexts};
use crate::model::values::ValueFile;
use crate::model::PeekCall;
use crate::model::{Layout, ResultInfo, RetentionState, RunFiles, RunOptions};
use crate::retained::Stub;
use crate::sources::sweep::AgentSweep;
use crate::sources::{
    Capabilities, LineFilter, Piece, PieceKind, Source, SourceInfo, SourceKind, StoreFold,
    ValueFolders,
};
use crate::transcript::RawLine;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// Claude Code's projects directory (or one project folder in it).
pub(crate) struct ClaudeCode;

impl StoreFold for ClaudeFold {
    fn line(&mut self, into: &mut crate::fold::Analyzer, line: RawLine<'_>) {
        ClaudeFold::line(self, into, line)
    }

    fn taken(&self) -> bool {
        self.taken
    }

    fn places_held(&self) -> bool {
        ClaudeFold::places_held(self)
    }

    fn forget_places(&mut self, transcript: &std::path::Path) {
        ClaudeFold::forget_places(self, transcript)
    }
}

impl LineFilter for Lines {
    fn takes_raw(&mut self, bytes: &[u8]) -> bool {
        Lines::takes_raw(self, bytes)
    }
}

/// What the user and the app are told of this store.
static INFO: SourceInfo = SourceInfo {
    kind: SourceKind::Claude,
    label: Cow::Borrowed("Claude Code"),
    noun: Cow::Borrowed("Claude Code session"),
    mark: Cow::Borrowed("CC"),
    read_tool: Cow::Borrowed("Read (offset and limit) or Grep"),
    color: Cow::Borrowed("#b4532a"),
    capabilities: Capabilities {
        retention_threshold: false,
        resume_replay: false,
        agent_sweep: true,
        value_files: true,
        flat_names: false,
    },
};

impl Source for ClaudeCode {
    fn info(&self) -> &'static SourceInfo {
        &INFO
    }

    fn read_layout(&self, root: &Path, cache: Option<&Path>) -> io::Result<Layout> {
        super::read_layout(root, cache)
    }

    fn forget_scans(&self, root: &Path, cache: Option<&Path>) {
        super::forget_scans(root, cache)
    }

    fn fold(
        &self,
        layout: &Layout,
        id: &str,
        opts: &RunOptions,
    ) -> io::Result<Option<Box<dyn StoreFold>>> {
        let files = layout.runs.get(id);
        let none = RunFiles::default();
        let mut fold = ClaudeFold::new(id, files.unwrap_or(&none), opts.verify);
        if let Some(f) = files {
            if let Some(path) = f.transcript.as_deref() {
                // Past what the layout's scan found none in (a whole file when it found some).
                fold.replace(super::read_replacements(path, f.unreplaced_len)?);
            }
        }
        Ok(Some(Box::new(fold)))
    }

    /// Its own folder's, and for a subagent its session's.
    fn run_values(&self, layout: &Layout, id: &str) -> io::Result<BTreeMap<String, ValueFile>> {
        let mut values = BTreeMap::new();
        let parent = layout.runs.get(id).and_then(|f| f.parent_values());
        let own = layout.value_dir(id);
        for dir in [parent, own].into_iter().flatten() {
            // A folder that vanished holds nothing; the run still reads.
            if let Ok(found) = super::list_values(dir) {
                values.extend(found);
            }
        }
        Ok(values)
    }

    fn list_values(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        super::list_values(dir)
    }

    fn recorded_texts(
        &self,
        layout: &Layout,
        id: &str,
        info: &ResultInfo,
    ) -> Option<io::Result<RecordedTexts>> {
        Some(texts(layout, id, info))
    }

    /// `<value id>.txt` (else `.json`) in the run's `tool-results/`, else in its parent
    /// session's. Only a regular file there counts.
    fn value_file(&self, layout: &Layout, id: &str, value_id: &str) -> Option<PathBuf> {
        if !crate::model::layout::is_valid_run_id(value_id) {
            return None;
        }
        let files = layout.runs.get(id);
        let dirs = [layout.value_dir(id), files.and_then(|f| f.parent_values())];
        for dir in dirs.into_iter().flatten() {
            // A `tool-results/` that is a link is never read through.
            if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
                continue;
            }
            for ext in ["txt", "json"] {
                let path = dir.join(format!("{value_id}.{ext}"));
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                    return Some(path);
                }
            }
        }
        None
    }

    /// Its preview shows the first lines of the full text.
    fn stub_of_seen(&self, seen: &str) -> Option<Stub> {
        Some(super::peeks::stub_of(seen))
    }

    fn line_filter(&self, files: &RunFiles) -> Box<dyn LineFilter> {
        Box::new(Lines::of(files))
    }

    /// `Read` and `Grep` of a value file, in the run's own lines.
    fn read_backs(
        &self,
        transcript: &Path,
        _run: &str,
        files: &RunFiles,
    ) -> io::Result<Vec<PeekCall>> {
        super::peeks::read_backs(transcript, Lines::of(files))
    }

    fn search_pieces<'v>(&self, line: &'v Value) -> Option<Vec<Piece<'v>>> {
        Some(pieces(line))
    }

    fn sweep(
        &self,
        layout: &Layout,
        now_ms: i64,
        title: &dyn Fn(&str) -> String,
    ) -> Option<AgentSweep> {
        Some(super::sweep::sweep(layout, now_ms, title))
    }

    fn value_folders(&self, layout: &Layout) -> Box<dyn ValueFolders> {
        Box::new(SessionFolders::of(layout))
    }

    fn value_folder_name(&self, id: &str) -> String {
        format!("{id}/{}", super::TOOL_RESULTS)
    }
}

/// The texts of result `info` of run `id`: what the model got, and the value file its stub
/// names, else the raw output the transcript kept, else what the model got.
fn texts(layout: &Layout, id: &str, info: &ResultInfo) -> io::Result<RecordedTexts> {
    let transcript = transcript_of(layout, id)?;
    let t = super::result_texts(&transcript, info.offset, &info.tool_call_id)?;
    let retained = matches!(
        info.state,
        RetentionState::Retained | RetentionState::Damaged
    );
    let file = retained
        .then(|| ClaudeCode.value_file(layout, id, &info.value_id))
        .flatten();
    let full = match file {
        Some(p) if p.extension().is_some_and(|e| e == "json") => {
            let text = persisted::json_value_text(&std::fs::read(&p)?);
            FullText::JsonFile(p, text)
        }
        Some(p) => FullText::File(p),
        None => match (t.raw.text, t.raw.complete) {
            (Some(raw), true) if info.stub_bytes.is_some() => FullText::Recovered(raw),
            _ => FullText::Seen,
        },
    };
    // Its preview shows the first lines of the full text.
    let stub = info.stub_bytes.map(|_| super::peeks::stub_of(&t.seen));
    Ok(RecordedTexts {
        seen: t.seen,
        stub,
        full,
    })
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// The searchable strings of a session line: its message's text and thinking, each tool
/// call's input strings, and the text of each result the model got.
fn pieces(v: &Value) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let Some(content) = v.pointer("/message/content") else {
        return out;
    };
    if let Some(text) = content.as_str() {
        out.push((PieceKind::Message, None, text));
        return out;
    }
    for b in content.as_array().into_iter().flatten() {
        match str_of(b, "type") {
            Some("text") => out.extend(str_of(b, "text").map(|s| (PieceKind::Message, None, s))),
            Some("thinking") => {
                out.extend(str_of(b, "thinking").map(|s| (PieceKind::Message, None, s)))
            }
            Some("tool_use") => {
                let call = str_of(b, "id").map(str::to_owned);
                let mut found = Vec::new();
                if let Some(input) = b.get("input") {
                    crate::sources::strings(input, &mut found);
                }
                out.extend(
                    found
                        .into_iter()
                        .map(|s| (PieceKind::Input, call.clone(), s)),
                );
            }
            Some("tool_result") => {
                let call = str_of(b, "tool_use_id").map(str::to_owned);
                let mut found = Vec::new();
                match b.get("content") {
                    Some(Value::String(s)) => found.push(s.as_str()),
                    Some(Value::Array(items)) => {
                        found.extend(items.iter().filter_map(|i| str_of(i, "text")))
                    }
                    _ => {}
                }
                out.extend(
                    found
                        .into_iter()
                        .map(|s| (PieceKind::Result, call.clone(), s)),
                );
            }
            _ => {}
        }
    }
    out
}
