//! What an export shows, built once from the run and rendered as HTML or Markdown: the run's
//! figures and one item per timeline event. Every text in it has been redacted and made visible
//! ([`super::visible`]) here, so a renderer only escapes.

use super::stream::{clean_pieces, Ticks, PIECE};
use super::{visible, ExportValues, Redactor};
use crate::error::{Error, Result};
use crate::model::{ResultInfo, RetentionState, TimelineEvent, TEXT_MAX};
use crate::retained::{stub_from_source, FileSource, ValueText};
use crate::runs::access::read_result_content;
use crate::runs::RunsDir;
use std::fmt::Write;
use std::path::Path;

pub(crate) struct Doc {
    pub run_id: String,
    pub title: String,
    /// Label and value, in order: status, model, tokens, cost...
    pub facts: Vec<(&'static str, String)>,
    pub items: Vec<Item>,
}

/// One timeline event.
pub(crate) struct Item {
    pub line: u64,
    /// The event's type, as the transcript names it.
    pub kind: String,
    /// "User", "Assistant", "Tool call · bash"...
    pub heading: String,
    /// A class for styling: `user`, `assistant`, `tool`, `result`, `error` or `other`.
    pub class: &'static str,
    pub blocks: Vec<Block>,
}

pub(crate) enum Block {
    /// Prose: a message.
    Text(String),
    /// Verbatim text under a label: an input, a result, a stub.
    Code { label: String, text: String },
    /// Verbatim text shown only when opened: thinking, a full value.
    Folded { summary: String, text: Folded },
    /// A short fact about the event.
    Note(String),
}

/// Opens a full value's text: each time it is read (it is read twice), so that a run with
/// thousands of values never holds a file open for each.
pub(crate) type Reopen = Box<dyn Fn() -> std::io::Result<ValueText> + Send + Sync>;

/// The text of a folded block.
pub(crate) enum Folded {
    /// A text already cleaned (a thinking).
    Text(String),
    /// A full value, cleaned as it is written, a piece at a time (`stream.rs`). `ticks` is
    /// the longest run of backticks in it cleaned, counted by [`Doc::tally`].
    Value { open: Reopen, ticks: usize },
}

impl Folded {
    /// Writes the text cleaned, a piece at a time, to `out`.
    pub(crate) fn write_cleaned(
        &self,
        redact: bool,
        out: &mut dyn FnMut(&str) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        match self {
            Folded::Text(t) => out(t),
            Folded::Value { open, .. } => {
                // Counted already by `tally`: this redactor's counts are dropped.
                let mut redactor = Redactor::new(redact);
                let text = open()?;
                let mut reader = text.reader();
                clean_pieces(&mut reader, &mut redactor, PIECE, &mut |p| out(p))
            }
        }
    }

    /// The longest run of backticks in the text cleaned.
    pub(crate) fn longest_ticks(&self) -> usize {
        match self {
            Folded::Text(t) => {
                let mut ticks = Ticks::default();
                ticks.feed(t);
                ticks.longest
            }
            Folded::Value { ticks, .. } => *ticks,
        }
    }
}

impl Doc {
    /// Reads every full value once, cleaning it with `redactor` so that its secrets are
    /// counted (the document says how many before it shows any value) and noting its
    /// longest run of backticks; nothing is kept of the text.
    pub(crate) fn tally(&mut self, redactor: &mut Redactor) -> Result<()> {
        for item in &mut self.items {
            for block in &mut item.blocks {
                let Block::Folded {
                    text: Folded::Value { open, ticks },
                    ..
                } = block
                else {
                    continue;
                };
                let mut seen = Ticks::default();
                open()
                    .and_then(|text| {
                        clean_pieces(&mut text.reader(), redactor, PIECE, &mut |p| {
                            seen.feed(p);
                            Ok(())
                        })
                    })
                    .map_err(|e| {
                        Error::io(format!("reading the value on line {}", item.line), &e)
                    })?;
                *ticks = seen.longest;
            }
        }
        Ok(())
    }
}

pub(crate) fn build(
    dir: &RunsDir,
    run: &str,
    values: ExportValues,
    redactor: &mut Redactor,
) -> Result<Doc> {
    let detail = dir.detail(run)?;
    // Shared with each full value's opener.
    let layout = std::sync::Arc::new(dir.layout()?);
    let id = detail.run.id.clone();
    let transcript = layout.runs.get(&id).and_then(|f| f.transcript.clone());
    // The harness's stubs are made from the full text by its threshold; another agent's store
    // recorded what its model got.
    let threshold_rule = layout.store().capabilities().retention_threshold;
    let mut clean = |text: &str| visible(text, |t| redactor.redact(t));

    let r = &detail.run;
    let mut facts: Vec<(&'static str, String)> = vec![("Run", clean(&r.id))];
    facts.push(("Status", r.status.as_str().to_owned()));
    if let Some(m) = &r.model {
        let provider = r
            .provider
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        facts.push(("Model", clean(&format!("{m}{provider}"))));
    }
    if let Some(cwd) = &r.cwd {
        facts.push(("Working directory", clean(cwd)));
    }
    if let Some(parent) = &r.parent_id {
        facts.push(("Parent run", clean(parent)));
    }
    if let (Some(start), Some(end)) = (r.started_ms, r.updated_ms) {
        facts.push(("Started", iso(start)));
        facts.push((
            "Duration",
            crate::model::duration_text(Some((end - start) as f64)),
        ));
    }
    facts.push(("Tokens", crate::model::tokens_text(r)));
    facts.push((
        "Cost",
        crate::model::cost_text(r.cost_usd, r.cost_estimated),
    ));
    facts.push((
        "Tool calls",
        format!(
            "{} ({} results retained, {})",
            r.tool_calls,
            r.retained,
            bytes(r.retained_bytes)
        ),
    ));
    let title = clean(if r.title.is_empty() { &r.id } else { &r.title });

    let mut items = Vec::with_capacity(detail.events.len());
    for e in &detail.events {
        let mut blocks = Vec::new();
        if let Some(text) = &e.text {
            blocks.push(Block::Text(clean(text)));
            if let Some(total) = e.text_bytes {
                blocks.push(Block::Note(format!(
                    "the text is {} long; its first {} are shown",
                    bytes(total),
                    bytes(TEXT_MAX as u64)
                )));
            }
        }
        if let Some(thinking) = &e.thinking {
            blocks.push(Block::Folded {
                summary: "Thinking".into(),
                text: Folded::Text(clean(thinking)),
            });
        }
        for call in &e.tool_calls {
            blocks.push(Block::Note(format!("calls {}", clean(&call.name))));
        }
        if e.kind != "tool_call_finished" {
            if let Some(input) = &e.input {
                let label = match e.input_bytes {
                    Some(total) if total > input.len() as u64 => {
                        format!(
                            "Input (its first {} of {})",
                            bytes(input.len() as u64),
                            bytes(total)
                        )
                    }
                    _ => "Input".into(),
                };
                blocks.push(Block::Code {
                    label,
                    text: clean(input),
                });
            }
        }
        if let Some(err) = &e.error {
            let text = [&err.code, &err.message, &err.detail]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join("\n");
            blocks.push(Block::Code {
                label: "Error".into(),
                text: clean(&text),
            });
        }
        for (label, value) in [
            ("path", &e.path),
            ("decision", &e.decision),
            ("status", &e.status),
            ("problem", &e.problem),
        ] {
            if let Some(v) = value {
                blocks.push(Block::Note(format!("{label}: {}", clean(v))));
            }
        }
        if let (Some(result), false) = (&e.result, threshold_rule) {
            foreign_result_blocks(&layout, &id, result, values, &mut clean, &mut blocks)?;
        } else if let Some(result) = &e.result {
            let file = layout
                .store()
                .value_file(&layout, &id, &result.tool_call_id);
            result_blocks(
                result,
                transcript.as_deref(),
                file.as_deref(),
                values,
                dir.opts.threshold,
                &mut clean,
                &mut blocks,
            )?;
        }
        // A line of a type this reader does not know says nothing worth a section: the run's
        // figures count it as a warning.
        let unknown = crate::transcript::event::known_event_keys(&e.kind).is_none()
            && !matches!(e.kind.as_str(), "local_command" | "unreadable");
        if e.unknown_lines.is_some() || (unknown && blocks.is_empty()) {
            continue;
        }
        items.push(Item {
            line: e.line,
            kind: e.kind.clone(),
            heading: heading(e, &mut clean),
            class: class(&e.kind),
            blocks,
        });
    }
    Ok(Doc {
        run_id: id,
        title,
        facts,
        items,
    })
}

/// A result's figures: its size, lines, state, and whether it failed.
fn result_note(r: &ResultInfo) -> Block {
    let lines = match r.lines {
        Some(n) => format!("{n} lines"),
        None => "lines unknown".to_owned(),
    };
    let mut note = format!("{} · {lines} · {}", bytes(r.bytes), r.state.as_str());
    if !r.ok {
        note.push_str(" · failed");
    }
    Block::Note(note)
}

/// [`result_blocks`] for another agent's result: what the model got is its own text (a
/// Claude Code stub, a Codex cut), the full text its value file or what is left of it.
fn foreign_result_blocks(
    layout: &std::sync::Arc<crate::model::Layout>,
    id: &str,
    r: &ResultInfo,
    values: ExportValues,
    clean: &mut impl FnMut(&str) -> String,
    blocks: &mut Vec<Block>,
) -> Result<()> {
    blocks.push(result_note(r));
    if values == ExportValues::None {
        return Ok(());
    }
    let texts = crate::runs::access::recorded_texts(layout, id, r)
        .map_err(|e| Error::io(format!("reading the result on line {}", r.line), &e))?;
    let Some(stub) = texts.stub() else {
        blocks.push(Block::Code {
            label: "Result (what the model saw)".into(),
            text: clean(&texts.seen),
        });
        return Ok(());
    };
    blocks.push(Block::Code {
        label: "Stub (what the model saw in its place)".into(),
        text: clean(&stub.text),
    });
    if values == ExportValues::Full {
        let (layout, id, r) = (layout.clone(), id.to_owned(), r.clone());
        let summary = full_summary(&r);
        let open: Reopen =
            Box::new(move || crate::runs::access::recorded_texts(&layout, &id, &r)?.value_text());
        blocks.push(full_block(summary, open));
    }
    Ok(())
}

/// What a result adds: its figures, then (unless `values` is none) what the model saw of it,
/// and with `full` the whole text of a result over the threshold, folded.
fn result_blocks(
    r: &ResultInfo,
    transcript: Option<&Path>,
    value_file: Option<&Path>,
    values: ExportValues,
    threshold: u64,
    clean: &mut impl FnMut(&str) -> String,
    blocks: &mut Vec<Block>,
) -> Result<()> {
    blocks.push(result_note(r));
    if values == ExportValues::None {
        return Ok(());
    }
    let Some(path) = transcript else {
        return Ok(());
    };
    let content = read_result_content(path, r.offset)
        .map_err(|e| Error::io(format!("reading line {} of {}", r.line, path.display()), &e))?;
    let reading =
        |e: std::io::Error| Error::io(format!("reading the result of {}", r.tool_call_id), &e);
    if r.bytes <= threshold {
        blocks.push(Block::Code {
            label: "Result (the model saw it whole)".into(),
            text: clean(&content.into_string().map_err(reading)?),
        });
        return Ok(());
    }
    let index = content.line_index().map_err(reading)?;
    let stub = stub_from_source(&r.value_id, &r.tool, &content, &index).map_err(reading)?;
    blocks.push(Block::Code {
        label: "Stub (what the model saw in its place)".into(),
        text: clean(&stub.text),
    });
    if values == ExportValues::Full {
        // The value file when it holds the value, else the transcript's copy.
        let file = value_file
            .filter(|_| r.state == RetentionState::Retained)
            .map(Path::to_path_buf);
        let (transcript, offset) = (path.to_path_buf(), r.offset);
        let open: Reopen = Box::new(move || {
            let held = file.as_deref().and_then(|f| FileSource::open(f).ok());
            match held {
                Some(file) => Ok(ValueText::File(file)),
                None => read_result_content(&transcript, offset),
            }
        });
        blocks.push(full_block(full_summary(r), open));
    }
    Ok(())
}

fn full_summary(r: &ResultInfo) -> String {
    format!("Full output ({})", bytes(r.bytes))
}

/// A result's full text, folded; read when the document is written.
fn full_block(summary: String, open: Reopen) -> Block {
    Block::Folded {
        summary,
        text: Folded::Value { open, ticks: 0 },
    }
}

fn heading(e: &TimelineEvent, clean: &mut impl FnMut(&str) -> String) -> String {
    let mut tool = || clean(e.tool.as_deref().unwrap_or("tool"));
    match e.kind.as_str() {
        "user_message" => "User".into(),
        "assistant_message" => "Assistant".into(),
        "tool_call_started" => {
            let mut h = format!("Tool call · {}", tool());
            if let Some(s) = &e.summary {
                let _ = write!(h, " · {}", clean(s));
            }
            h
        }
        "tool_call_finished" => format!("Result · {}", tool()),
        "run_error" => "Error".into(),
        "context_compacted" => "Context compacted".into(),
        "local_command" => format!("Local command · {}", tool()),
        "unreadable" => "Unreadable line".into(),
        other => {
            let mut h = other.replace('_', " ");
            if let Some(first) = h.get_mut(..1) {
                first.make_ascii_uppercase();
            }
            h
        }
    }
}

fn class(kind: &str) -> &'static str {
    match kind {
        "user_message" => "user",
        "assistant_message" => "assistant",
        "tool_call_started" => "tool",
        "tool_call_finished" => "result",
        "run_error" | "unreadable" => "error",
        _ => "other",
    }
}

pub(crate) fn bytes(n: u64) -> String {
    bytesize::ByteSize::b(n).display().iec().to_string()
}

fn iso(ms: i64) -> String {
    humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64),
    )
    .to_string()
}
