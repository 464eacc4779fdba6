//! `mctl demo`: a realistic runs directory to try Mission Control on, and the fixture of the
//! app's end-to-end tests. Runs of every status, several providers and models, retained reads
//! (a lock file, a single-line minified JSON, a build log with its error near the end and an
//! error-looking line in its middle the model never sees), inline results, peek conversations
//! (one reading the same lines twice), values never peeked, a subagent, a compaction, a run still going with a torn last
//! line, collected and damaged values, a stray, an orphan, a corrupt line and hostile text.
//! The bytes written depend only on the seed and the clock passed in.

mod content;
mod writer;

use crate::model::layout::{stem_file_name, RunPaths};
use crate::retained::{peek_text, value_id, PeekRequest};
use fastrand::Rng;
use serde::Serialize;
use serde_json::json;
use std::fs;
use std::io;
use std::path::Path;
use writer::RunWriter;

/// The demo's default clock: 2026-11-01T12:00:00Z.
pub const DEFAULT_NOW_MS: i64 = 1_793_534_400_000;

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;

/// What [`write_demo`] wrote (`mctl demo --json`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoReport {
    /// The directory written, as given.
    pub dir: String,
    /// Runs written.
    pub runs: u64,
    /// Files written, in every subdirectory.
    pub files: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes the demo into `dir`, which must be missing or empty: a demo never mixes with real runs.
pub fn write_demo(dir: &Path, seed: u64, now_ms: i64) -> io::Result<DemoReport> {
    fs::create_dir_all(dir)?;
    if fs::read_dir(dir)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "the directory is not empty",
        ));
    }
    let mut rng = Rng::with_seed(seed);
    let mut d = Demo {
        dir,
        now: now_ms,
        runs: 0,
        bytes: 0,
    };
    let lock_run = d.lockfile_upgrade(&mut rng, now_ms - 2 * HOUR)?;
    d.subagent(&lock_run, now_ms - 2 * HOUR + 40_000)?;
    let (log, src) = d.build_failure(&mut rng, now_ms - 5 * HOUR)?;
    // A generator of its own, so that the runs after it are the same bytes with it or without.
    let mut other = Rng::with_seed(seed ^ 0x0d1f_f0d1);
    d.build_failure_other_model(&mut other, &log, &src, now_ms - 5 * HOUR + 20 * MIN)?;
    d.schema_review(&mut rng, now_ms - DAY - 3 * HOUR)?;
    d.cancelled(&mut rng, now_ms - 2 * DAY)?;
    d.interrupted(&mut rng, now_ms - 3 * DAY)?;
    d.conversation(&mut rng, now_ms - 4 * DAY)?;
    d.collected(&mut rng, now_ms - 12 * DAY)?;
    d.hostile(now_ms - 6 * DAY)?;
    d.summary_only(now_ms - 20 * DAY)?;
    d.orphan(&mut rng)?;
    // Last, so that its modification time is the newest: the run still going.
    d.running(&mut rng, now_ms - 3 * MIN)?;
    let files = count_files(dir)?;
    Ok(DemoReport {
        dir: dir.display().to_string(),
        runs: d.runs,
        files,
        bytes: d.bytes,
    })
}

fn count_files(dir: &Path) -> io::Result<u64> {
    let mut n = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        n += if entry.file_type()?.is_dir() {
            count_files(&entry.path())?
        } else {
            1
        };
    }
    Ok(n)
}

fn run_id(rng: &mut Rng, start_ms: i64) -> String {
    format!("run_{start_ms}_{:08x}", rng.u32(..))
}

struct Demo<'a> {
    dir: &'a Path,
    now: i64,
    runs: u64,
    bytes: u64,
}

/// Dollars per million prompt tokens, by model.
const SONNET: f64 = 3.0;
const CODEX: f64 = 1.25;
const GEMINI: f64 = 1.25;
const LOCAL: f64 = 0.0;

fn peek_out(id: &str, text: &str, req: PeekRequest) -> String {
    match peek_text(&value_id(id), text, &req) {
        Ok(p) => p.text,
        Err(e) => e.to_string(),
    }
}

impl Demo<'_> {
    fn save(
        &mut self,
        w: RunWriter,
        summary: Option<serde_json::Value>,
        torn: Option<&str>,
        touched: Option<i64>,
    ) -> io::Result<()> {
        self.bytes += w.write(self.dir, summary, torn, touched)?;
        self.runs += 1;
        Ok(())
    }

    fn summary(w: &RunWriter, status: &str, title: &str, model: &str) -> serde_json::Value {
        json!({"id": w.id, "title": title, "status": status, "model": model, "updatedMs": w.ts})
    }

    fn lockfile_upgrade(&mut self, rng: &mut Rng, start: i64) -> io::Result<String> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        let id = w.id.clone();
        w.started(
            "/home/dev/web-console",
            "goal",
            "anthropic",
            "claude-sonnet-4-5",
        );
        w.event(json!({"type": "context_snapshot", "snapshot": {"workspaceRoot": "/home/dev/web-console", "attachments": [], "lensItems": [], "estimatedTokens": 1800, "omitted": []}}));
        w.user("Upgrade our dependencies and find out why `left-pad` is still in the lock file.");
        let lock = content::package_lock(rng, 2600, "left-pad");
        let c = w.assistant(
            "The lock file is big; read it, then search it.",
            "I'll start with the lock file.",
            &[("read_file", json!({"path": "package-lock.json"}))],
            SONNET,
        );
        w.tool(
            &c[0],
            "read_file",
            json!({"path": "package-lock.json"}),
            "package-lock.json",
            true,
            &lock,
            35,
        );
        let vid = value_id(&c[0]);
        let c2 = w.assistant(
            "",
            "The lock file was retained. Searching it for left-pad.",
            &[("peek_value", json!({"id": vid, "query": "left-pad"}))],
            SONNET,
        );
        let found = peek_out(
            &c[0],
            &lock,
            PeekRequest::Query {
                text: "left-pad".into(),
            },
        );
        w.tool(
            &c2[0],
            "peek_value",
            json!({"id": vid, "query": "left-pad"}),
            "query \"left-pad\"",
            true,
            &found,
            4,
        );
        let line = lock
            .lines()
            .position(|l| l.contains("\"node_modules/left-pad\""))
            .unwrap_or(0) as u64
            + 1;
        let c3 = w.assistant(
            "",
            "",
            &[(
                "peek_value",
                json!({"id": vid, "start": line, "end": line + 8}),
            )],
            SONNET,
        );
        let around = peek_out(
            &c[0],
            &lock,
            PeekRequest::Range {
                start: line,
                end: Some(line + 8),
            },
        );
        w.tool(
            &c3[0],
            "peek_value",
            json!({"id": vid, "start": line, "end": line + 8}),
            &format!("lines {line}-{}", line + 8),
            true,
            &around,
            3,
        );
        let c4 = w.assistant(
            "",
            "Let me ask a subagent which package still requires it.",
            &[(
                "task",
                json!({"agent": "explorer", "task": "Which dependency requires left-pad?"}),
            )],
            SONNET,
        );
        w.event(json!({"type": "subagent_requested", "requestId": c4[0], "subagent": "explorer", "task": "Which dependency requires left-pad?"}));
        w.wait(38_000);
        w.event(json!({"type": "subagent_resolved", "requestId": c4[0], "result": "`string-format@1.0.3` depends on left-pad ^1.3.0."}));
        w.tool(
            &c4[0],
            "task",
            json!({"agent": "explorer"}),
            "explorer: Which dependency requires left-pad?",
            true,
            "`string-format@1.0.3` depends on left-pad ^1.3.0.",
            5,
        );
        let test = content::test_output(214, &[]);
        let c5 = w.assistant(
            "",
            "",
            &[(
                "bash",
                json!({"command": "npm update string-format && npm test"}),
            )],
            SONNET,
        );
        w.tool(
            &c5[0],
            "bash",
            json!({"command": "npm update string-format && npm test"}),
            "npm update string-format && npm test",
            true,
            &test,
            21_000,
        );
        w.assistant("", "`left-pad` came in through `string-format@1.0.3`. Updating it to 2.0.0 drops left-pad; all 214 tests pass.", &[], SONNET);
        w.done();
        let s = Self::summary(&w, "done", "Upgrade dependencies", "claude-sonnet-4-5");
        self.save(w, Some(s), None, None)?;
        Ok(id)
    }

    fn subagent(&mut self, parent: &str, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new(
            &format!("sub_{parent}_toolu_04{}", &parent[parent.len() - 6..]),
            start,
        );
        w.started(
            "/home/dev/web-console",
            "chat",
            "anthropic",
            "claude-haiku-4-5",
        );
        w.user("Which dependency requires left-pad?");
        let c = w.assistant(
            "",
            "",
            &[(
                "grep",
                json!({"pattern": "left-pad", "path": "node_modules"}),
            )],
            1.0,
        );
        w.tool(
            &c[0],
            "grep",
            json!({"pattern": "left-pad"}),
            "left-pad in node_modules",
            true,
            "node_modules/string-format/package.json:14:    \"left-pad\": \"^1.3.0\"\n",
            900,
        );
        w.assistant(
            "",
            "`string-format@1.0.3` depends on left-pad ^1.3.0.",
            &[],
            1.0,
        );
        w.done();
        let s = json!({"id": w.id, "parentId": parent, "status": "done", "title": "Which dependency requires left-pad?", "updatedMs": w.ts});
        self.save(w, Some(s), None, None)
    }

    /// The build failure's run; returns its build log and source file for the same task given
    /// to another model.
    fn build_failure(&mut self, rng: &mut Rng, start: i64) -> io::Result<(String, String)> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.call_prefix = "call.";
        w.started("/work/billing", "goal", "openai", "gpt-5-codex");
        w.user("The release build is failing on CI. Find out why and fix it.");
        let log = content::build_log(rng, 1400);
        let c = w.assistant(
            "Run the build to see the failure.",
            "",
            &[("bash", json!({"command": "cargo build --release --locked"}))],
            CODEX,
        );
        w.tool(
            &c[0],
            "bash",
            json!({"command": "cargo build --release --locked"}),
            "cargo build --release --locked",
            false,
            &log,
            94_000,
        );
        let total = log.lines().count() as u64;
        let vid = value_id(&c[0]);
        let c2 = w.assistant(
            "",
            "The build log was retained; the error is usually near the end.",
            &[("peek_value", json!({"id": vid, "start": total - 20}))],
            CODEX,
        );
        let tail = peek_out(
            &c[0],
            &log,
            PeekRequest::Range {
                start: total - 20,
                end: None,
            },
        );
        w.tool(
            &c2[0],
            "peek_value",
            json!({"id": vid, "start": total - 20}),
            &format!("lines {}-", total - 20),
            true,
            &tail,
            2,
        );
        // The same lines again: what the coverage view counts as read twice.
        let again = w.assistant(
            "",
            "Reading the end of the log again to be sure of the line number.",
            &[("peek_value", json!({"id": vid, "start": total - 20}))],
            CODEX,
        );
        w.tool(
            &again[0],
            "peek_value",
            json!({"id": vid, "start": total - 20}),
            &format!("lines {}-", total - 20),
            true,
            &tail,
            2,
        );
        let src = content::source_file(rng, 260);
        let c3 = w.assistant(
            "",
            "",
            &[("read_file", json!({"path": "core/src/invoice.rs"}))],
            CODEX,
        );
        w.tool(
            &c3[0],
            "read_file",
            json!({"path": "core/src/invoice.rs"}),
            "core/src/invoice.rs",
            true,
            &src,
            12,
        );
        let c4 = w.assistant("", "", &[("edit_file", json!({"path": "core/src/invoice.rs", "old": "line.amount * line.quantity;", "new": "(line.amount * line.quantity).into();"}))], CODEX);
        w.event(json!({"type": "diff_proposed", "proposal": {"id": "diff_1", "path": "core/src/invoice.rs", "oldText": "let total: Cents = line.amount * line.quantity;", "newText": "let total: Cents = (line.amount * line.quantity).into();"}}));
        w.event(json!({"type": "diff_resolved", "proposalId": "diff_1", "decision": {"behavior": "apply"}}));
        w.event(json!({"type": "file_changed", "path": "core/src/invoice.rs", "oldHash": "9c1e04aa", "newHash": "41b7d2f0"}));
        w.tool(
            &c4[0],
            "edit_file",
            json!({"path": "core/src/invoice.rs"}),
            "core/src/invoice.rs",
            true,
            "Applied 1 edit to core/src/invoice.rs",
            800,
        );
        let c5 = w.assistant(
            "",
            "",
            &[("bash", json!({"command": "cargo build --release --locked"}))],
            CODEX,
        );
        w.tool(
            &c5[0],
            "bash",
            json!({"command": "cargo build --release --locked"}),
            "cargo build --release --locked",
            true,
            "    Finished `release` profile [optimized] target(s) in 1m 32s\n",
            92_000,
        );
        w.assistant("", "Fixed: `Cents` needs an explicit conversion from `u64` in `invoice.rs:214`. The release build passes.", &[], CODEX);
        w.done();
        self.save(w, None, None, None)?;
        Ok((log, src))
    }

    /// The same task as [`Demo::build_failure`], given to another model: what `mctl diff` and
    /// the Diff view compare. It runs the same build (the same log), searches the log where the
    /// other read its end, reads the same file, greps once more, makes another edit and answers
    /// in its own words.
    fn build_failure_other_model(
        &mut self,
        rng: &mut Rng,
        log: &str,
        src: &str,
        start: i64,
    ) -> io::Result<()> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.started("/work/billing", "goal", "anthropic", "claude-sonnet-4-5");
        w.user("The release build is failing on CI. Find out why and fix it.");
        let build = json!({"command": "cargo build --release --locked"});
        let c = w.assistant("", "", &[("bash", build.clone())], SONNET);
        w.tool(
            &c[0],
            "bash",
            build.clone(),
            "cargo build --release --locked",
            false,
            log,
            91_000,
        );
        let vid = value_id(&c[0]);
        let query = json!({"id": vid, "query": "error["});
        let c2 = w.assistant(
            "The log was retained. Search it for the compiler's errors rather than guessing where they are.",
            "",
            &[("peek_value", query.clone())],
            SONNET,
        );
        let found = peek_out(
            &c[0],
            log,
            PeekRequest::Query {
                text: "error[".into(),
            },
        );
        w.tool(&c2[0], "peek_value", query, "query error[", true, &found, 2);
        let read = json!({"path": "core/src/invoice.rs"});
        let c3 = w.assistant("", "", &[("read_file", read.clone())], SONNET);
        w.tool(
            &c3[0],
            "read_file",
            read,
            "core/src/invoice.rs",
            true,
            src,
            10,
        );
        let grep = json!({"pattern": "impl From<u64> for Cents", "path": "core/src"});
        let c4 = w.assistant("", "", &[("grep", grep.clone())], SONNET);
        w.tool(
            &c4[0],
            "grep",
            grep,
            "impl From<u64> for Cents in core/src",
            true,
            "core/src/money.rs:31:impl From<u64> for Cents {\n",
            300,
        );
        let edit = json!({"path": "core/src/invoice.rs", "old": "line.amount * line.quantity;", "new": "Cents::from(line.amount * line.quantity);"});
        let c5 = w.assistant("", "", &[("edit_file", edit.clone())], SONNET);
        w.tool(
            &c5[0],
            "edit_file",
            edit,
            "core/src/invoice.rs",
            true,
            "Applied 1 edit to core/src/invoice.rs",
            700,
        );
        let c6 = w.assistant("", "", &[("bash", build.clone())], SONNET);
        w.tool(
            &c6[0],
            "bash",
            build,
            "cargo build --release --locked",
            true,
            "    Finished `release` profile [optimized] target(s) in 1m 32s\n",
            93_000,
        );
        w.assistant("", "The build failed on a type mismatch in `core/src/invoice.rs:214`: a `u64` where `Cents` is expected. I wrapped it in `Cents::from`, using the existing `From<u64>` impl; the release build passes now.", &[], SONNET);
        w.done();
        self.save(w, None, None, None)
    }

    fn schema_review(&mut self, rng: &mut Rng, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.started("/work/billing", "plan", "google", "gemini-2.5-pro");
        w.user("Which endpoints of the billing API are deprecated? Plan their removal.");
        let schema = content::minified_schema(rng, 420);
        let c = w.assistant(
            "",
            "",
            &[("read_file", json!({"path": "api/openapi.min.json"}))],
            GEMINI,
        );
        w.tool(
            &c[0],
            "read_file",
            json!({"path": "api/openapi.min.json"}),
            "api/openapi.min.json",
            true,
            &schema,
            20,
        );
        let vid = value_id(&c[0]);
        let c2 = w.assistant(
            "",
            "It is one minified line; searching it.",
            &[(
                "peek_value",
                json!({"id": vid, "query": "\"deprecated\":true"}),
            )],
            GEMINI,
        );
        let hit = peek_out(
            &c[0],
            &schema,
            PeekRequest::Query {
                text: "\"deprecated\":true".into(),
            },
        );
        w.tool(
            &c2[0],
            "peek_value",
            json!({"id": vid, "query": "\"deprecated\":true"}),
            "query \"deprecated\":true",
            true,
            &hit,
            6,
        );
        w.wait(20_000);
        w.error(
            "provider_unavailable",
            "The model provider returned 503 Service Unavailable three times",
            true,
        );
        let s = Self::summary(&w, "error", "Deprecated endpoints", "gemini-2.5-pro");
        self.save(w, Some(s), None, None)
    }

    fn cancelled(&mut self, rng: &mut Rng, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.started("/home/dev/notes", "chat", "ollama", "qwen3-coder:30b");
        w.user("Rename every `fooBar` to `foo_bar` across the repository.");
        let c = w.assistant("", "", &[("grep", json!({"pattern": "fooBar"}))], LOCAL);
        let hits: String = (1..=40)
            .map(|i| format!("src/mod{i}.ts:{}:  const fooBar = load();\n", i * 7))
            .collect();
        w.tool(
            &c[0],
            "grep",
            json!({"pattern": "fooBar"}),
            "fooBar",
            true,
            &hits,
            300,
        );
        w.wait(9_000);
        w.error("aborted", "Stopped by the user", false);
        self.save(w, None, None, None)
    }

    fn interrupted(&mut self, rng: &mut Rng, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.started("/work/billing", "goal", "anthropic", "claude-sonnet-4-5");
        w.user("Profile the invoice export and make it faster.");
        let src = content::source_file(rng, 900);
        let c = w.assistant(
            "",
            "",
            &[("read_file", json!({"path": "core/src/export.rs"}))],
            SONNET,
        );
        w.tool(
            &c[0],
            "read_file",
            json!({"path": "core/src/export.rs"}),
            "core/src/export.rs",
            true,
            &src,
            15,
        );
        let c2 = w.assistant(
            "",
            "",
            &[("bash", json!({"command": "cargo bench --bench export"}))],
            SONNET,
        );
        w.event(json!({"type": "tool_call_started", "toolCallId": c2[0], "name": "bash", "input": {"command": "cargo bench --bench export"}, "summary": "cargo bench --bench export"}));
        self.save(w, None, None, None)
    }

    fn running(&mut self, rng: &mut Rng, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.started(
            "/home/dev/web-console",
            "goal",
            "anthropic",
            "claude-opus-4-1",
        );
        w.user("Add dark mode to the settings page, with a test.");
        let src = content::source_file(rng, 700);
        let c = w.assistant(
            "",
            "Reading the settings page first.",
            &[("read_file", json!({"path": "src/settings/page.tsx"}))],
            15.0,
        );
        w.tool(
            &c[0],
            "read_file",
            json!({"path": "src/settings/page.tsx"}),
            "src/settings/page.tsx",
            true,
            &src,
            25,
        );
        let c2 = w.assistant(
            "",
            "",
            &[("bash", json!({"command": "npm test -- settings"}))],
            15.0,
        );
        w.event(json!({"type": "tool_call_started", "toolCallId": c2[0], "name": "bash", "input": {"command": "npm test -- settings"}, "summary": "npm test -- settings"}));
        let torn = format!(
            r#"{{"schemaVersion":1,"runId":"{}","seq":9,"ts":{},"event":{{"type":"tool_call_fini"#,
            w.id, w.ts
        );
        // Touched now, whatever the demo's clock: the run is still going.
        let wall = crate::model::now_ms();
        self.save(w, None, Some(&torn), Some(wall.max(self.now)))
    }

    fn conversation(&mut self, rng: &mut Rng, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new("m3kq0z1x4f2a", start);
        w.started(
            "/home/dev/web-console",
            "chat",
            "anthropic",
            "claude-sonnet-4-5",
        );
        w.user("What does the `useSession` hook do?");
        let src = content::source_file(rng, 120);
        let c = w.assistant(
            "",
            "",
            &[("read_file", json!({"path": "src/hooks/useSession.ts"}))],
            SONNET,
        );
        w.tool(
            &c[0],
            "read_file",
            json!({"path": "src/hooks/useSession.ts"}),
            "src/hooks/useSession.ts",
            true,
            &src,
            10,
        );
        w.assistant(
            "",
            "It caches the session in memory and refreshes it **5 minutes** before expiry.",
            &[],
            SONNET,
        );
        w.done();
        w.wait(2 * HOUR);
        w.raw_line(r#"{"schemaVersion":1,"runId":"m3kq0z1x4f2a","seq":7,"ts":"#);
        w.event(json!({"type": "context_compacted", "summary": "The user asked about useSession; it caches the session and refreshes it 5 minutes before expiry."}));
        w.user("Make the refresh margin configurable.");
        w.event(json!({"type": "permission_requested", "request": {"id": "perm_1", "toolName": "write_file", "path": "src/hooks/useSession.ts"}}));
        w.wait(6_000);
        w.event(json!({"type": "permission_resolved", "requestId": "perm_1", "decision": {"behavior": "allow", "scope": "run"}}));
        w.event(
            json!({"type": "steering_injected", "reason": "Keep the default margin at 5 minutes."}),
        );
        let c2 = w.assistant(
            "",
            "",
            &[("write_file", json!({"path": "src/hooks/useSession.ts"}))],
            SONNET,
        );
        w.tool(
            &c2[0],
            "write_file",
            json!({"path": "src/hooks/useSession.ts"}),
            "src/hooks/useSession.ts",
            true,
            "Wrote 131 lines",
            40,
        );
        w.event(json!({"type": "file_changed", "path": "src/hooks/useSession.ts", "oldHash": "aa01", "newHash": "bb02"}));
        w.assistant(
            "",
            "Done: `useSession({ refreshMarginMs })`, defaulting to 5 minutes.",
            &[],
            SONNET,
        );
        w.done();
        self.save(w, None, None, None)
    }

    /// A run whose values were partly collected (unretained), one overwritten (damaged), and a
    /// value file no result names (a stray).
    fn collected(&mut self, rng: &mut Rng, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new(&run_id(rng, start), start);
        w.started("/work/billing", "goal", "openai", "gpt-5-codex");
        w.user("Refactor the invoice module into smaller files.");
        let mut ids = Vec::new();
        for (i, path) in [
            "core/src/invoice.rs",
            "core/src/tax.rs",
            "core/src/ledger.rs",
        ]
        .iter()
        .enumerate()
        {
            let src = content::source_file(rng, 700 + i * 100);
            let c = w.assistant("", "", &[("read_file", json!({"path": path}))], CODEX);
            w.tool(
                &c[0],
                "read_file",
                json!({"path": path}),
                path,
                true,
                &src,
                10,
            );
            ids.push(c[0].clone());
        }
        w.assistant(
            "",
            "Split `invoice.rs` into `invoice/{lines,totals,render}.rs`.",
            &[],
            CODEX,
        );
        w.done();
        let run = w.id.clone();
        self.save(w, None, None, None)?;
        let paths = RunPaths::new(self.dir, &run);
        fs::remove_file(paths.value_file(&ids[0]))?;
        fs::write(paths.value_file(&ids[1]), "overwritten by something else\n")?;
        fs::write(
            paths.value_dir().join(stem_file_name("toolu_00stray")),
            content::test_output(3, &["tax::rounding"]).repeat(400),
        )?;
        Ok(())
    }

    /// Text that would run script in a careless viewer: it must show as text.
    fn hostile(&mut self, start: i64) -> io::Result<()> {
        let mut w = RunWriter::new("run_hostile_markup", start);
        w.started(
            "/tmp/<script>alert(1)</script>",
            "chat",
            "anthropic",
            "claude-sonnet-4-5",
        );
        // U+202E (RIGHT-TO-LEFT OVERRIDE) would show `evil` as `live` if it were obeyed.
        w.user("Render this \u{202E}evil\u{202C}: <script>window.__mc_pwned = 'user'</script> and <img src=x onerror=\"window.__mc_pwned='img'\"> [docs](javascript:window.__mc_pwned='link')");
        let payload = "<script>window.__mc_pwned='tool'</script>\n<img src=x onerror=\"window.__mc_pwned='tool-img'\">\n<a href=\"javascript:window.__mc_pwned='tool-link'\">click</a>\n\u{1b}[31mred\u{1b}[0m \u{1b}]8;;http://example.invalid\u{7}link\u{1b}]8;;\u{7}\n".repeat(300);
        let c = w.assistant("<iframe src=\"javascript:window.__mc_pwned='thinking'\"></iframe>", "Here it is: <b onmouseover=\"window.__mc_pwned='html'\">bold</b> and [a link](javascript:window.__mc_pwned='md').", &[("<img src=x onerror=alert(1)>", json!({"html": "<script>1</script>"}))], SONNET);
        w.tool(
            &c[0],
            "<img src=x onerror=alert(1)>",
            json!({"html": "<script>1</script>"}),
            "<script>window.__mc_pwned='summary'</script>",
            true,
            &payload,
            5,
        );
        // A build log in terminal colours, retained: colours shown, line numbers unchanged.
        let log = content::coloured_log(1200);
        let c2 = w.assistant(
            "",
            "",
            &[("bash", json!({"command": "cargo test --color=always"}))],
            SONNET,
        );
        w.tool(
            &c2[0],
            "bash",
            json!({"command": "cargo test --color=always"}),
            "cargo test --color=always",
            true,
            &log,
            30_000,
        );
        w.done();
        self.save(w, None, None, None)
    }

    /// A summary whose transcript is gone.
    fn summary_only(&mut self, start: i64) -> io::Result<()> {
        let id = format!("run_{start}_0ddba11");
        let s = json!({"id": id, "title": "Migrate CI to the new runners", "status": "done", "model": "claude-sonnet-4-5", "provider": "anthropic", "createdMs": start, "updatedMs": start + 20 * MIN});
        let text = serde_json::to_string_pretty(&s)?;
        let path = RunPaths::new(self.dir, &id).summary();
        fs::write(&path, &text)?;
        writer::set_mtime(&path, start + 20 * MIN)?;
        self.bytes += text.len() as u64;
        self.runs += 1;
        Ok(())
    }

    /// A value directory whose run was deleted.
    fn orphan(&mut self, rng: &mut Rng) -> io::Result<()> {
        let paths = RunPaths::new(self.dir, "run_1790000000000_deadbeef");
        fs::create_dir_all(paths.value_dir())?;
        let text = content::build_log(rng, 300);
        fs::write(paths.value_file("toolu_01aaaa"), &text)?;
        writer::set_mtime(&paths.value_file("toolu_01aaaa"), self.now - 45 * DAY)?;
        self.bytes += text.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::transcript::keys::check;

    /// The demo's transcripts are what a user's first look reads: every well-formed line of
    /// them (a demo writes every kind of event, and some damaged lines on purpose) is read in
    /// the fold's one pass, to what its three passes read.
    #[test]
    fn the_demos_lines_are_read_at_once_as_in_passes() {
        let dir = tempfile::tempdir().unwrap();
        super::write_demo(dir.path(), 7, 1_790_000_000_000).unwrap();
        let lines = check::lines_of(dir.path());
        let taken = check::read_at_once_as_in_passes(&lines);
        assert!(lines.len() > 100, "{} lines", lines.len());
        assert!(taken * 10 > lines.len() * 9, "{taken} of {}", lines.len());
    }
}
