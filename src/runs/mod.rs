//! A runs directory and its runs: listing, the run model, one run's timeline and results, and
//! finding a result's full text or value file.

pub mod analyze;
pub mod layout;
pub mod model;
pub mod summary;
pub mod timeline;
pub mod values;

pub use analyze::{analyze_run, now_ms, RunOptions, Verify};
pub use layout::Layout;
pub use model::*;

use crate::error::{Error, ErrorCode, Result};
use crate::retained::open::{OpenValue, ValueText};
use crate::retained::{stub_layout, value_id, FileSource};
use crate::transcript::event::{Envelope, Event};
use crate::wire::{TextSource, ValueInfo};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A runs directory opened with the run model's settings.
#[derive(Debug, Clone)]
pub struct RunsDir {
    root: PathBuf,
    pub opts: RunOptions,
    /// Mission Control's own config directory (pins, GC journal).
    config: Option<PathBuf>,
}

/// A tool result with its full text, as the transcript holds it.
#[derive(Debug, Clone)]
pub struct FoundResult {
    pub info: ResultInfo,
    pub content: String,
}

impl RunsDir {
    pub fn open(root: impl Into<PathBuf>, opts: RunOptions) -> Result<Self> {
        let root = root.into();
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => Ok(Self {
                root,
                opts,
                config: crate::config::config_dir(),
            }),
            Ok(_) => Err(Error::new(
                ErrorCode::RunsDir,
                format!("{} is not a directory", root.display()),
            )),
            Err(e) => Err(Error::new(
                ErrorCode::RunsDir,
                format!("runs directory {}: {e}", root.display()),
            )),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where Mission Control keeps its own files for this directory (pins, the GC journal).
    pub fn config_dir(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// The same runs directory with its own config directory (tests, several users).
    pub fn with_config_dir(mut self, config: impl Into<PathBuf>) -> Self {
        self.config = Some(config.into());
        self
    }

    pub fn layout(&self) -> Result<Layout> {
        Layout::read(&self.root)
            .map_err(|e| Error::io(format!("reading {}", self.root.display()), &e))
    }

    /// Every run, most recently active first. Value files are compared by size and their
    /// first and last 64 KiB here ([`Verify::Sampled`]); one run's [`detail`](Self::detail)
    /// compares every byte.
    pub fn list(&self) -> Result<Vec<Run>> {
        let layout = self.layout()?;
        let mut runs = Vec::with_capacity(layout.runs.len());
        let opts = RunOptions {
            verify: Verify::Sampled,
            ..self.opts
        };
        runs.extend(
            layout
                .runs
                .keys()
                .filter_map(|id| list_row(&layout, id, &opts)),
        );
        sort_runs(&mut runs);
        Ok(runs)
    }

    /// Run `id` as [`list`](Self::list) tells it; `None` when there is no such run.
    pub fn list_one(&self, id: &str) -> Result<Option<Run>> {
        let layout = self.layout()?;
        let opts = RunOptions {
            verify: Verify::Sampled,
            ..self.opts
        };
        Ok(layout
            .runs
            .contains_key(id)
            .then(|| list_row(&layout, id, &opts))
            .flatten())
    }

    /// The id of the run `query` names: an exact id, else a unique prefix of one.
    pub fn resolve_run(&self, layout: &Layout, query: &str) -> Result<String> {
        if layout.runs.contains_key(query) {
            return Ok(query.to_owned());
        }
        let matches: Vec<&String> = layout
            .runs
            .keys()
            .filter(|id| id.starts_with(query))
            .collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Error::new(
                ErrorCode::UnknownRun,
                format!("unknown run `{query}` in {}", self.root.display()),
            )),
            many => Err(Error::new(
                ErrorCode::UnknownRun,
                format!(
                    "`{query}` names {} runs ({}, ...): give more of the id",
                    many.len(),
                    many[0]
                ),
            )),
        }
    }

    /// One run with its timeline, results and problems.
    pub fn detail(&self, query: &str) -> Result<RunDetail> {
        let layout = self.layout()?;
        let id = self.resolve_run(&layout, query)?;
        analyze_run(&layout, &id, &self.opts, true)
            .map_err(|e| Error::io(format!("reading run {id}"), &e))
    }

    /// The result of run `run` whose tool call id or value id is `call`, with its full text. When
    /// a call id repeats, the last result wins (it is the one a resume replays last).
    pub fn find_result(&self, run: &str, call: &str) -> Result<FoundResult> {
        let layout = self.layout()?;
        let id = self.resolve_run(&layout, run)?;
        let detail = analyze_run(&layout, &id, &self.opts, false)
            .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        let info = detail
            .results
            .iter()
            .rev()
            .find(|r| r.tool_call_id == call)
            .or_else(|| detail.results.iter().rev().find(|r| r.value_id == call))
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::UnknownCall,
                    format!("run {id} has no result for tool call `{call}`"),
                )
            })?;
        let path = layout.runs[&id]
            .transcript
            .clone()
            .expect("results come from a transcript");
        let content = read_result_content(&path, info.offset).map_err(|e| {
            Error::io(
                format!("reading line {} of {}", info.line, path.display()),
                &e,
            )
        })?;
        Ok(FoundResult { info, content })
    }

    /// The value file of `call` in run `run`, if it is a regular file in a real value directory.
    /// Needs only `value_id(call)`, never the transcript.
    pub fn value_file(&self, run: &str, call: &str) -> Result<Option<PathBuf>> {
        let layout = self.layout()?;
        let id = self.resolve_run(&layout, run)?;
        let Some(dir) = layout.value_dir(&id) else {
            return Ok(None);
        };
        let path = dir.join(format!("{}.txt", value_id(call)));
        Ok(match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() => Some(path),
            _ => None,
        })
    }
}

impl RunsDir {
    /// A result opened for viewing: its figures, its stub when over the threshold, and its full
    /// text indexed. The text is read from the value file when there is one (as a peek reads
    /// it), else from the transcript.
    pub fn open_value(&self, run: &str, call: &str) -> Result<(ValueInfo, OpenValue)> {
        let found = self.find_result(run, call)?;
        let info = found.info;
        let file = self.value_file(run, &info.tool_call_id)?;
        let stub = (info.bytes > self.opts.threshold)
            .then(|| stub_layout(&info.value_id, &info.tool, &found.content));
        let (source, text) = match &file {
            Some(path) => {
                let src = FileSource::open(path)
                    .map_err(|e| Error::io(format!("opening {}", path.display()), &e))?;
                (TextSource::File, ValueText::File(src))
            }
            None => (
                TextSource::Transcript,
                ValueText::Memory(Arc::new(found.content)),
            ),
        };
        let value = OpenValue::new(text).map_err(|e| Error::io("indexing the value", &e))?;
        let info = ValueInfo {
            tool_call_id: info.tool_call_id,
            tool: info.tool,
            value_id: info.value_id,
            state: info.state,
            ok: info.ok,
            bytes: info.bytes,
            lines: info.lines,
            source,
            value_path: file.map(|p| p.to_string_lossy().into_owned()),
            stub,
            context_bytes: info.context_bytes,
            threshold: self.opts.threshold,
        };
        Ok((info, value))
    }
}

/// The `content` of the `tool_call_finished` line starting at `offset`.
fn read_result_content(path: &Path, offset: u64) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut line = Vec::new();
    BufReader::new(file).read_until(b'\n', &mut line)?;
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let env: Envelope =
        serde_json::from_slice(&line).map_err(|_| bad("the line changed since it was read"))?;
    match serde_json::from_str::<Event>(env.event.get()) {
        Ok(Event::ToolCallFinished { result, .. }) => Ok(result.content),
        _ => Err(bad("the line changed since it was read")),
    }
}

/// The order of a listing: most recently active first, then by id.
pub fn sort_runs(runs: &mut [Run]) {
    runs.sort_by(|a, b| {
        b.updated_ms
            .cmp(&a.updated_ms)
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// A run that could not be read, as a listing shows it (rather than failing the whole list).
pub fn unreadable_run(id: &str, error: &dyn std::fmt::Display) -> Run {
    Run {
        id: id.to_owned(),
        title: format!("(unreadable: {error})"),
        problems: 1,
        ..Default::default()
    }
}

/// One run of a listing. A run deleted while we list it is simply gone; anything else is shown
/// as a run we could not read rather than failing the whole list.
fn list_row(layout: &Layout, id: &str, opts: &RunOptions) -> Option<Run> {
    match analyze_run(layout, id, opts, false) {
        Ok(detail) => Some(detail.run),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(unreadable_run(id, &e)),
    }
}
