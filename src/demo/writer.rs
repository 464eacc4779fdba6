//! Writes one demo run the way the harness does: envelope lines in order, a value file for each
//! result over the threshold (written before its line), a summary, and the file times a real
//! run would have.

use crate::model::layout::RunPaths;
use crate::retained::{value_id, DEFAULT_THRESHOLD};
use serde_json::{json, Value};
use std::fs::{self, File, FileTimes};
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

pub(super) struct RunWriter {
    pub id: String,
    lines: Vec<String>,
    values: Vec<(String, String)>,
    seq: u64,
    pub ts: i64,
    pub prompt_tokens: u64,
    calls: u64,
    /// Results over the threshold get a value file unless this is off.
    pub retention: bool,
    /// How tool call ids start; some providers' ids need sanitizing into value ids.
    pub call_prefix: &'static str,
}

impl RunWriter {
    pub(super) fn new(id: &str, start_ms: i64) -> Self {
        Self {
            id: id.to_owned(),
            lines: Vec::new(),
            values: Vec::new(),
            seq: 0,
            ts: start_ms,
            prompt_tokens: 1800,
            calls: 0,
            retention: true,
            call_prefix: "toolu_",
        }
    }

    /// Moves the clock forward.
    pub(super) fn wait(&mut self, ms: i64) {
        self.ts += ms;
    }

    pub(super) fn event(&mut self, mut event: Value) {
        event["runId"] = json!(self.id);
        event["ts"] = json!(self.ts);
        let line = json!({"schemaVersion": 1, "runId": self.id, "seq": self.seq, "ts": self.ts, "event": event});
        self.lines.push(line.to_string());
        self.seq += 1;
    }

    /// A raw line, as is (a corrupt or torn one).
    pub(super) fn raw_line(&mut self, line: &str) {
        self.lines.push(line.to_owned());
        self.seq += 1;
    }

    pub(super) fn started(&mut self, cwd: &str, mode: &str, provider: &str, model: &str) {
        self.event(json!({"type": "run_started", "cwd": cwd, "mode": mode, "provider": provider, "model": model}));
    }

    pub(super) fn user(&mut self, text: &str) {
        let id = format!("msg_u{}", self.seq);
        self.event(
            json!({"type": "user_message", "messageId": id, "text": text, "attachments": []}),
        );
        self.wait(400);
    }

    /// An assistant message with optional thinking and tool calls; returns the call ids.
    pub(super) fn assistant(
        &mut self,
        thinking: &str,
        text: &str,
        calls: &[(&str, Value)],
        cost_per_mtok: f64,
    ) -> Vec<String> {
        let mut content = Vec::new();
        if !thinking.is_empty() {
            content.push(json!({"type": "thinking", "text": thinking}));
        }
        if !text.is_empty() {
            content.push(json!({"type": "text", "text": text}));
        }
        let mut ids = Vec::new();
        for (name, input) in calls {
            self.calls += 1;
            let id = format!(
                "{}{:02}{}",
                self.call_prefix,
                self.calls,
                &self.id[self.id.len().saturating_sub(6)..]
            );
            content
                .push(json!({"type": "tool_call", "toolCallId": id, "name": name, "input": input}));
            ids.push(id);
        }
        let completion = 40 + (text.len() + thinking.len()) as u64 / 4 + 30 * calls.len() as u64;
        let model_ms = 600 + completion as i64 * 12;
        self.wait(model_ms);
        let cost = (self.prompt_tokens as f64 * cost_per_mtok
            + completion as f64 * cost_per_mtok * 5.0)
            / 1e6;
        self.event(json!({
            "type": "assistant_message",
            "messageId": format!("msg_a{}", self.seq),
            "content": content,
            "usage": {"promptTokens": self.prompt_tokens, "completionTokens": completion, "costUsd": (cost * 1e6).round() / 1e6},
            "timing": {"modelMs": model_ms, "ttftMs": 380},
        }));
        self.prompt_tokens += completion;
        ids
    }

    /// A tool call and its result. A result over the threshold is retained: its value file is
    /// written (before the line, as the harness does) and the model's context grows by a stub
    /// only.
    // One argument per field of the two events it writes: a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tool(
        &mut self,
        id: &str,
        name: &str,
        input: Value,
        summary: &str,
        ok: bool,
        content: &str,
        took_ms: i64,
    ) {
        self.event(json!({"type": "tool_call_started", "toolCallId": id, "name": name, "input": input, "summary": summary}));
        self.wait(took_ms);
        let retained = self.retention && content.len() as u64 > DEFAULT_THRESHOLD;
        if retained {
            self.values.push((value_id(id), content.to_owned()));
            self.prompt_tokens += 700;
        } else {
            self.prompt_tokens += content.len() as u64 / 4;
        }
        self.event(json!({"type": "tool_call_finished", "toolCallId": id, "result": {"ok": ok, "content": content, "metadata": null}}));
        self.wait(150);
    }

    pub(super) fn done(&mut self) {
        self.event(json!({"type": "run_result", "result": {"status": "done"}}));
    }

    pub(super) fn error(&mut self, code: &str, message: &str, retryable: bool) {
        self.event(json!({"type": "run_error", "error": {"code": code, "message": message, "detail": null, "retryable": retryable}}));
    }

    /// Writes the transcript (the last line torn when `torn_tail` is set), value files and
    /// summary. Files get the time of the last event as their modification time, unless
    /// `touched_ms` says otherwise.
    pub(super) fn write(
        self,
        dir: &Path,
        summary: Option<Value>,
        torn_tail: Option<&str>,
        touched_ms: Option<i64>,
    ) -> io::Result<u64> {
        let mtime_ms = touched_ms.unwrap_or(self.ts);
        let paths = RunPaths::new(dir, &self.id);
        let mut written = 0u64;
        if !self.values.is_empty() {
            fs::create_dir_all(paths.value_dir())?;
            for (vid, content) in &self.values {
                let path = paths.value_file(vid);
                fs::write(&path, content)?;
                set_mtime(&path, mtime_ms)?;
                written += content.len() as u64;
            }
        }
        let path = paths.transcript();
        let mut f = File::create(&path)?;
        for line in &self.lines {
            f.write_all(line.as_bytes())?;
            f.write_all(b"\n")?;
            written += line.len() as u64 + 1;
        }
        if let Some(tail) = torn_tail {
            f.write_all(tail.as_bytes())?;
            written += tail.len() as u64;
        }
        drop(f);
        set_mtime(&path, mtime_ms)?;
        if let Some(summary) = summary {
            let path = paths.summary();
            let text = serde_json::to_string_pretty(&summary)?;
            fs::write(&path, &text)?;
            set_mtime(&path, mtime_ms)?;
            written += text.len() as u64;
        }
        Ok(written)
    }
}

/// Sets a file's modification (and access) time.
pub(super) fn set_mtime(path: &Path, ms: i64) -> io::Result<()> {
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    File::options()
        .write(true)
        .open(path)?
        .set_times(FileTimes::new().set_modified(t).set_accessed(t))
}
