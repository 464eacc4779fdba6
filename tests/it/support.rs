//! Helpers: run `mctl`, copy a checked-in fixture, write runs programmatically.

use serde_json::{json, Value};
use std::fs::{self, File, FileTimes};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

/// An old time, so that no fixture run counts as running.
pub const OLD_MS: i64 = 1_790_000_000_000;

/// A home for every `mctl` a test starts, shared by the test process and never the user's:
/// config, cache and data directories all inside it.
pub fn test_home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| tempfile::tempdir().expect("a temporary home"))
        .path()
}

/// `mctl` with a cleared environment and its own home, config and cache directories, so that
/// nothing of the caller's environment (`MCTL_WATCH=poll`, `MCTL_RUNS_DIR`, `MCTL_CONFIG_DIR`,
/// an odd `HOME`) changes what a test sees. A test adds what it needs with `.env(...)`.
pub fn mctl_command() -> Command {
    let home = test_home();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mctl"));
    cmd.env_clear()
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("MCTL_CONFIG_DIR", home.join("config/mission-control"));
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd
}

/// A runs directory opened in the test process, its index (if it is used) in the test home's
/// cache, never the user's.
pub fn open_runs_dir(
    root: &Path,
    opts: mission_control::runs::RunOptions,
) -> mission_control::runs::RunsDir {
    mission_control::runs::RunsDir::open(root, opts)
        .expect("a runs directory")
        .with_cache_dir(test_home().join("cache"))
}

pub fn mctl(dir: &Path, args: &[&str]) -> Output {
    mctl_command()
        .arg("--runs-dir")
        .arg(dir)
        .args(args)
        .output()
        .expect("mctl runs")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 stdout")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `mctl` and parses its JSON output, failing with its stderr if it failed.
pub fn mctl_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = mctl(dir, &all);
    assert!(
        out.status.success(),
        "mctl {args:?} failed: {}",
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

pub fn set_mtime(path: &Path, ms: i64) {
    let t = UNIX_EPOCH + Duration::from_millis(ms as u64);
    File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_times(FileTimes::new().set_modified(t).set_accessed(t)))
        .expect("set mtime");
}

/// A copy of `tests/fixtures/<name>` in a temp dir, every file dated [`OLD_MS`] (git does not
/// keep modification times, and run status depends on them).
pub fn fixture(name: &str) -> tempfile::TempDir {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let dst = tempfile::tempdir().unwrap();
    copy_tree(&src, dst.path());
    dst
}

fn copy_tree(src: &Path, dst: &Path) {
    for entry in fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&to).unwrap();
            copy_tree(&entry.path(), &to);
        } else {
            fs::copy(entry.path(), &to).unwrap();
            set_mtime(&to, OLD_MS);
        }
    }
}

/// Writes one run's transcript line by line, and value files as the harness would.
pub struct RunFile {
    pub dir: PathBuf,
    pub id: String,
    lines: Vec<String>,
    seq: u64,
    ts: i64,
}

impl RunFile {
    pub fn new(dir: &Path, id: &str) -> Self {
        Self {
            dir: dir.to_path_buf(),
            id: id.to_owned(),
            lines: Vec::new(),
            seq: 0,
            ts: OLD_MS,
        }
    }

    pub fn event(&mut self, mut event: Value) -> &mut Self {
        self.ts += 1000;
        event["runId"] = json!(self.id);
        event["ts"] = json!(self.ts);
        let line = json!({"schemaVersion": 1, "runId": self.id, "seq": self.seq, "ts": self.ts, "event": event});
        self.lines.push(line.to_string());
        self.seq += 1;
        self
    }

    pub fn user(&mut self, text: &str) -> &mut Self {
        self.event(
            json!({"type": "user_message", "messageId": "u", "text": text, "attachments": []}),
        )
    }

    /// A tool call and its result; `retain` writes the value file too.
    pub fn tool(&mut self, call: &str, name: &str, content: &str, retain: bool) -> &mut Self {
        self.event(json!({"type": "tool_call_started", "toolCallId": call, "name": name, "input": {}, "summary": name}));
        if retain {
            self.value(call, content.as_bytes());
        }
        self.event(json!({"type": "tool_call_finished", "toolCallId": call, "result": {"ok": true, "content": content, "metadata": null}}))
    }

    /// Writes `<run>.values/<value_id(call)>.txt`.
    pub fn value(&mut self, call: &str, bytes: &[u8]) -> PathBuf {
        let vdir = self.dir.join(format!("{}.values", self.id));
        fs::create_dir_all(&vdir).unwrap();
        let path = vdir.join(format!("{}.txt", mission_control::retained::value_id(call)));
        fs::write(&path, bytes).unwrap();
        path
    }

    pub fn done(&mut self) -> &mut Self {
        self.event(json!({"type": "run_result", "result": {"status": "done"}}))
    }

    pub fn write(&self) -> PathBuf {
        let path = self.dir.join(format!("{}.jsonl", self.id));
        let mut text = self.lines.join("\n");
        text.push('\n');
        fs::write(&path, text).unwrap();
        set_mtime(&path, OLD_MS);
        path
    }
}

pub fn find<'a>(runs: &'a Value, id: &str) -> &'a Value {
    runs.as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("run {id} listed"))
}

/// Held by the tests that declare directories' kinds: the declared kinds are one table for the
/// whole process, and each declaration replaces it.
pub fn declared_kinds_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A child process ended (killed, then waited for) however the test ends: a failed test must
/// not leave it running, nor holding the harness's output open.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for Killed {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Killed {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

/// `mctl --runs-dir <dir> --json watch` running (until dropped), its lines read on a thread as
/// they come: a test waits for what it needs, not for a time.
pub struct WatchLines {
    _child: Killed,
    lines: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl WatchLines {
    pub fn start(dir: &Path) -> Self {
        let mut child = Killed(
            mctl_command()
                .arg("--runs-dir")
                .arg(dir)
                .args(["--json", "watch"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            _child: child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits until a line holding `what` has come (up to 60 s: a foreign store is looked at
    /// again after several times its last look's length).
    pub fn wait_for(&mut self, what: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !self.seen.iter().any(|l| l.contains(what)) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no {what} in {:?}", self.seen),
            }
        }
    }
}
