//! Other agents' stores read as runs: real session files from public projects (when
//! `../shared/data/agents` is there), and hand-built Claude Code and Codex stores for what those
//! files lack.

mod claude;
mod codex;
mod costs;
mod fidelity;
mod gc;
mod gemini;
mod index;
mod opencode;
mod readbacks;
mod real;
mod subagents;
mod sweeps;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A Claude Code session written line by line.
pub struct Session {
    pub path: PathBuf,
    pub id: String,
    lines: Vec<Value>,
    n: u64,
}

impl Session {
    pub fn new(project: &Path, id: &str) -> Self {
        std::fs::create_dir_all(project).unwrap();
        Self {
            path: project.join(format!("{id}.jsonl")),
            id: id.to_owned(),
            lines: Vec::new(),
            n: 0,
        }
    }

    fn base(&mut self, kind: &str) -> Value {
        self.n += 1;
        json!({
            "type": kind,
            "uuid": format!("u{}", self.n),
            "sessionId": self.id,
            "cwd": "/home/ana/app",
            "timestamp": format!("2026-04-02T10:00:{:02}.000Z", self.n % 60),
        })
    }

    pub fn prompt(&mut self, text: &str) -> &mut Self {
        let mut l = self.base("user");
        l["message"] = json!({"role": "user", "content": text});
        self.lines.push(l);
        self
    }

    pub fn call(&mut self, id: &str, tool: &str, input: Value) -> &mut Self {
        let mut l = self.base("assistant");
        l["message"] = json!({"id": format!("msg_{id}"), "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": id, "name": tool, "input": input}],
            "usage": {"input_tokens": 10, "output_tokens": 5}});
        self.lines.push(l);
        self
    }

    /// A result the model got as `seen`, with `raw` as the line's `toolUseResult`.
    pub fn result(&mut self, id: &str, seen: &str, raw: Option<Value>) -> &mut Self {
        let mut l = self.base("user");
        l["message"] = json!({"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": seen}]});
        if let Some(raw) = raw {
            l["toolUseResult"] = raw;
        }
        self.lines.push(l);
        self
    }

    pub fn answer(&mut self, text: &str) -> &mut Self {
        let mut l = self.base("assistant");
        l["message"] = json!({"id": format!("msg_a{}", self.n), "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": text}]});
        self.lines.push(l);
        self
    }

    pub fn line(&mut self, line: Value) -> &mut Self {
        self.lines.push(line);
        self
    }

    pub fn write(&self) -> PathBuf {
        let text: String = self.lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&self.path, text).unwrap();
        crate::support::set_mtime(&self.path, crate::support::OLD_MS);
        self.path.clone()
    }

    /// `<session>/tool-results/`, made.
    pub fn tool_results(&self) -> PathBuf {
        let dir = self.path.with_extension("").join("tool-results");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

/// A subagent's own file, `agent-<agent>.jsonl` in `dir`, its one line the prompt its session
/// `session` gave it.
pub fn agent_file(dir: &Path, agent: &str, session: &str, prompt: &str) -> PathBuf {
    let mut a = Session::new(dir, &format!("agent-{agent}"));
    a.line(
        json!({"type": "user", "uuid": format!("{agent}-1"), "isSidechain": true,
        "agentId": agent, "sessionId": session, "message": {"role": "user", "content": prompt}}),
    );
    a.write()
}

/// The stub Claude Code writes for a persisted output saved at `path`.
pub fn stub(size: &str, path: &str, preview: &str) -> String {
    format!(
        "<persisted-output>\nOutput too large ({size}). Full output saved to: {path}\n\nPreview (first 2KB):\n{preview}\n...\n</persisted-output>"
    )
}
