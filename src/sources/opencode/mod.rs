//! opencode's sessions as runs (docs/agents.md): from its SQLite database, read-only, and from
//! the JSON tree it kept before (`layout.rs`), each session's messages and parts as records
//! (`records.rs`) folded like any store's lines (`fold.rs`). An output opencode cut and saved to
//! its `tool-output/` folder is a retained value; GC may collect those files, and opencode's own
//! 7-day cleanup of them is forecast (`folders.rs`).

mod db;
mod fold;
mod folders;
mod layout;
mod peeks;
mod records;

pub(crate) use fold::OpencodeFold;
pub(crate) use layout::{DATABASE, STORAGE};

use crate::model::recorded::{transcript_of, FullText, RecordedTexts};
use crate::model::{Layout, ResultInfo, RunOptions};
use crate::retained::Stub;
use crate::sources::sweep::AgentSweep;
use crate::sources::{
    Capabilities, Piece, PieceKind, Source, SourceInfo, SourceKind, StoreFold, ValueFolders,
};
use crate::transcript::{RawLine, ReadOutcome};
use serde_json::Value;
use std::borrow::Cow;
use std::io;
use std::path::Path;

/// opencode's data folder.
pub(crate) struct Opencode;

impl StoreFold for OpencodeFold {
    fn line(&mut self, into: &mut crate::fold::Analyzer, line: RawLine<'_>) {
        OpencodeFold::line(self, into, line)
    }
}

/// What the user and the app are told of this store.
static INFO: SourceInfo = SourceInfo {
    kind: SourceKind::Opencode,
    label: Cow::Borrowed("opencode"),
    noun: Cow::Borrowed("opencode session"),
    mark: Cow::Borrowed("OC"),
    read_tool: Cow::Borrowed("read (offset and limit) or grep"),
    color: Cow::Borrowed("#b8860b"),
    capabilities: Capabilities {
        retention_threshold: false,
        resume_replay: false,
        agent_sweep: true,
        value_files: true,
        flat_names: false,
    },
};

impl Source for Opencode {
    fn info(&self) -> &'static SourceInfo {
        &INFO
    }

    fn read_layout(&self, root: &Path, _cache: Option<&Path>) -> io::Result<Layout> {
        layout::read(root)
    }

    fn read_records(
        &self,
        path: &Path,
        run: &str,
        each: &mut dyn FnMut(RawLine<'_>),
    ) -> io::Result<ReadOutcome> {
        records::read(path, run, each)
    }

    fn fold(
        &self,
        layout: &Layout,
        _id: &str,
        _opts: &RunOptions,
    ) -> io::Result<Option<Box<dyn StoreFold>>> {
        Ok(Some(Box::new(OpencodeFold {
            root: layout.root.clone(),
        })))
    }

    fn recorded_texts(
        &self,
        layout: &Layout,
        id: &str,
        info: &ResultInfo,
    ) -> Option<io::Result<RecordedTexts>> {
        Some(texts(layout, id, info))
    }

    fn stub_of_seen(&self, seen: &str) -> Option<Stub> {
        seen.contains("Full output saved to: ").then(|| Stub {
            text: seen.to_owned(),
            head: None,
            tail: None,
        })
    }

    fn search_pieces<'v>(&self, line: &'v Value) -> Option<Vec<Piece<'v>>> {
        Some(pieces(line))
    }

    /// `read` and `grep` of a saved output.
    fn read_backs(
        &self,
        transcript: &Path,
        run: &str,
        _files: &crate::model::RunFiles,
    ) -> io::Result<Vec<crate::model::PeekCall>> {
        peeks::read_backs(transcript, run)
    }

    fn sweep(
        &self,
        layout: &Layout,
        now_ms: i64,
        _title: &dyn Fn(&str) -> String,
    ) -> Option<AgentSweep> {
        Some(folders::sweep(layout, now_ms))
    }

    fn value_folders(&self, layout: &Layout) -> Box<dyn ValueFolders> {
        Box::new(folders::ToolOutput::of(layout))
    }

    fn value_folder_name(&self, _id: &str) -> String {
        folders::TOOL_OUTPUT.to_owned()
    }
}

/// The tool part of call `info`, read again.
fn texts(layout: &Layout, id: &str, info: &ResultInfo) -> io::Result<RecordedTexts> {
    let path = transcript_of(layout, id)?;
    let mut found: Option<Value> = None;
    records::read(&path, id, &mut |line| {
        if found.is_some() {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            return;
        };
        for p in v
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if p.get("callID").and_then(Value::as_str) == Some(info.tool_call_id.as_str()) {
                found = p.get("state").cloned();
            }
        }
    })?;
    let state = found.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the session no longer holds this call",
        )
    })?;
    let text = |k: &str| {
        state
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let seen = match state.get("status").and_then(Value::as_str) {
        Some("error") => text("error"),
        _ => text("output"),
    };
    let named = folders::saved_path(&state);
    // The model got the cut text whether or not the file is still there (swept).
    let stub = named.and_then(|_| Opencode.stub_of_seen(&seen));
    let saved = named.and_then(|p| folders::saved_file(&layout.root, p));
    let full = match saved {
        Some(p) => FullText::File(p),
        None => FullText::Seen,
    };
    Ok(RecordedTexts { seen, stub, full })
}

/// The searchable strings of a record: prompts, answers and reasoning, tool inputs and
/// outputs.
fn pieces(v: &Value) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    for p in v
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let str_of = |k: &str| p.get(k).and_then(Value::as_str);
        match str_of("type") {
            Some("text" | "reasoning") => {
                out.extend(str_of("text").map(|t| (PieceKind::Message, None, t)));
            }
            Some("tool") => {
                let call = str_of("callID").map(str::to_owned);
                let state = p.get("state");
                let mut inputs = Vec::new();
                crate::sources::strings(
                    state.and_then(|s| s.get("input")).unwrap_or(&Value::Null),
                    &mut inputs,
                );
                out.extend(
                    inputs
                        .into_iter()
                        .map(|s| (PieceKind::Input, call.clone(), s)),
                );
                for key in ["output", "error"] {
                    if let Some(s) = state.and_then(|s| s.get(key)).and_then(Value::as_str) {
                        out.push((PieceKind::Result, call.clone(), s));
                    }
                }
            }
            _ => {}
        }
    }
    out
}
