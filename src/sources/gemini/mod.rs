//! Gemini CLI's chats as runs (docs/agents.md). A chat is a JSON document or, from v0.39, a log
//! replayed as the CLI loads it (`records.rs`); its records are folded like any store's lines
//! (`fold.rs`). A big output the CLI saved to a file is a retained value: the model got a stub
//! naming the file (`saved.rs`). GC may collect a session's saved outputs, and the CLI's own
//! cleanup is forecast (`folders.rs`).

mod fold;
mod folders;
mod layout;
mod peeks;
mod records;
mod saved;
mod search;

pub(crate) use fold::GeminiFold;
pub(crate) use layout::{is_session_file, CHATS};

use crate::model::recorded::{transcript_of, FullText, RecordedTexts};
use crate::model::{Layout, ResultInfo, RunOptions};
use crate::retained::Stub;
use crate::sources::sweep::AgentSweep;
use crate::sources::{
    Capabilities, Piece, Source, SourceInfo, SourceKind, StoreFold, ValueFolders,
};
use crate::transcript::{RawLine, ReadOutcome};
use serde_json::Value;
use std::borrow::Cow;
use std::io;
use std::path::Path;

/// Gemini CLI's chats.
pub(crate) struct Gemini;

impl StoreFold for GeminiFold {
    fn line(&mut self, into: &mut crate::fold::Analyzer, line: RawLine<'_>) {
        GeminiFold::line(self, into, line)
    }
}

/// What the user and the app are told of this store.
static INFO: SourceInfo = SourceInfo {
    kind: SourceKind::Gemini,
    label: Cow::Borrowed("Gemini CLI"),
    noun: Cow::Borrowed("Gemini CLI chat"),
    mark: Cow::Borrowed("GM"),
    read_tool: Cow::Borrowed("read_file (offset and limit) or grep_search"),
    color: Cow::Borrowed("#8c5cd6"),
    capabilities: Capabilities {
        retention_threshold: false,
        resume_replay: false,
        agent_sweep: true,
        value_files: true,
        flat_names: false,
    },
};

impl Source for Gemini {
    fn info(&self) -> &'static SourceInfo {
        &INFO
    }

    fn read_layout(&self, root: &Path, _cache: Option<&Path>) -> io::Result<Layout> {
        layout::read(root)
    }

    fn read_records(
        &self,
        path: &Path,
        _run: &str,
        each: &mut dyn FnMut(RawLine<'_>),
    ) -> io::Result<ReadOutcome> {
        records::read(path, each)
    }

    fn fold(
        &self,
        _layout: &Layout,
        _id: &str,
        _opts: &RunOptions,
    ) -> io::Result<Option<Box<dyn StoreFold>>> {
        Ok(Some(Box::new(GeminiFold)))
    }

    /// What the model got is the call's result in the chat; when that is a stub naming a saved
    /// file, the file is the full text.
    fn recorded_texts(
        &self,
        layout: &Layout,
        id: &str,
        info: &ResultInfo,
    ) -> Option<io::Result<RecordedTexts>> {
        Some(texts(layout, id, info))
    }

    fn stub_of_seen(&self, seen: &str) -> Option<Stub> {
        saved::saved_stub(seen).map(|_| Stub {
            text: seen.to_owned(),
            head: None,
            tail: None,
        })
    }

    fn search_pieces<'v>(&self, line: &'v Value) -> Option<Vec<Piece<'v>>> {
        Some(search::pieces(line))
    }

    /// `read_file` and grep of a saved output.
    fn read_backs(
        &self,
        transcript: &Path,
        _run: &str,
        _files: &crate::model::RunFiles,
    ) -> io::Result<Vec<crate::model::PeekCall>> {
        peeks::read_backs(transcript)
    }

    fn sweep(
        &self,
        layout: &Layout,
        now_ms: i64,
        title: &dyn Fn(&str) -> String,
    ) -> Option<AgentSweep> {
        folders::sweep(layout, now_ms, title)
    }

    fn value_folders(&self, layout: &Layout) -> Box<dyn ValueFolders> {
        Box::new(folders::SessionOutputs::of(layout))
    }

    fn value_folder_name(&self, id: &str) -> String {
        format!("{}/{id}", folders::TOOL_OUTPUTS)
    }
}

/// The result of call `info` as the chat recorded it, and its saved file's text.
fn texts(layout: &Layout, id: &str, info: &ResultInfo) -> io::Result<RecordedTexts> {
    let path = transcript_of(layout, id)?;
    let mut seen = None;
    records::read(&path, &mut |line| {
        if seen.is_some() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return;
        };
        let calls = v.pointer("/message/toolCalls").and_then(Value::as_array);
        for c in calls.into_iter().flatten() {
            if c.get("id").and_then(Value::as_str) == Some(info.tool_call_id.as_str()) {
                seen = Some(fold::call_output(c).0);
            }
        }
    })?;
    let seen = seen.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the chat no longer holds this call",
        )
    })?;
    let stub = Gemini.stub_of_seen(&seen);
    let full = match saved::saved_stub(&seen) {
        Some(s) if s.path.is_file() => {
            let contents = String::from_utf8_lossy(&std::fs::read(&s.path)?).into_owned();
            match s.json {
                true => FullText::JsonFile(s.path, saved::saved_text(contents, true)),
                false => FullText::File(s.path),
            }
        }
        _ => FullText::Seen,
    };
    Ok(RecordedTexts { seen, stub, full })
}
