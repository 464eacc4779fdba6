//! Runs directories in object storage, against a real S3 server on loopback (`s3s-fs`, which
//! `scripts/setup.sh` installs), reached through a proxy that counts the bytes it sends back.

use crate::agents::{stub, Session};
use crate::support::{mctl_command, stderr, stdout, RunFile};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ACCESS: &str = "mctl-test-access";
const SECRET: &str = "mctl-test-secret-Zq81";

/// A real S3 server on a loopback port, its buckets folders of `root`, and a proxy in front of
/// it that counts the bytes the server sends.
struct S3 {
    server: Child,
    root: tempfile::TempDir,
    proxy_port: u16,
    received: Arc<AtomicU64>,
    cache: tempfile::TempDir,
}

fn s3s_fs() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain(std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo/bin")))
        .map(|d| d.join("s3s-fs"))
        .find(|p| p.is_file());
    on_path.expect(
        "s3s-fs (a real S3 server) is not installed: scripts/setup.sh installs it \
         (cargo install s3s-fs --version 0.14.1 --features binary --locked)",
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl S3 {
    /// The server with one bucket, `team`.
    fn start() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("team")).unwrap();
        let port = free_port();
        let server = Command::new(s3s_fs())
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--access-key", ACCESS, "--secret-key", SECRET])
            .arg(root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("s3s-fs starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "s3s-fs did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let received = Arc::new(AtomicU64::new(0));
        let proxy_port = counting_proxy(port, received.clone());
        Self {
            server,
            root,
            proxy_port,
            received,
            cache: tempfile::tempdir().unwrap(),
        }
    }

    /// `mctl` configured for this server, its mirror in the test's own cache.
    fn mctl(&self) -> Command {
        let mut cmd = mctl_command();
        cmd.env("AWS_ACCESS_KEY_ID", ACCESS)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .env("AWS_REGION", "us-east-1")
            .env(
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.proxy_port),
            )
            .env("AWS_ALLOW_HTTP", "true")
            .env("MCTL_CACHE_DIR", self.cache.path());
        cmd
    }

    /// `mctl` of another member of the team: its own cache, so its own mirror.
    fn mctl_elsewhere(&self, cache: &Path) -> Command {
        let mut cmd = self.mctl();
        cmd.env("MCTL_CACHE_DIR", cache);
        cmd
    }

    /// The variables `mctl` needs for this server, for a process started another way.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", ACCESS.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            (
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.proxy_port),
            ),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("MCTL_CACHE_DIR", self.cache.path().display().to_string()),
        ]
    }

    fn run(&self, args: &[&str]) -> Output {
        self.mctl().args(args).output().expect("mctl runs")
    }

    fn push(&self, dir: &Path, url: &str) -> Vec<Value> {
        let out = self
            .mctl()
            .arg("push")
            .arg(dir)
            .arg(url)
            .arg("--json")
            .output()
            .unwrap();
        assert!(out.status.success(), "push failed: {}", stderr(&out));
        stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    /// Bytes the server has sent since the last call.
    fn take_received(&self) -> u64 {
        self.received.swap(0, Ordering::SeqCst)
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// A TCP proxy on a free loopback port to `port`, adding every byte the server sends to
/// `received`.
fn counting_proxy(port: u16, received: Arc<AtomicU64>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(("127.0.0.1", port)) else {
                continue;
            };
            let pipe = |mut from: TcpStream, mut to: TcpStream, count: Option<Arc<AtomicU64>>| {
                std::thread::spawn(move || {
                    let mut buf = [0u8; 64 * 1024];
                    while let Ok(n) = from.read(&mut buf) {
                        if n == 0 || to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                        if let Some(c) = &count {
                            c.fetch_add(n as u64, Ordering::SeqCst);
                        }
                    }
                    let _ = to.shutdown(Shutdown::Write);
                });
            };
            pipe(
                client.try_clone().unwrap(),
                server.try_clone().unwrap(),
                None,
            );
            pipe(server, client, Some(received.clone()));
        }
    });
    proxy_port
}

/// `mctl --runs-dir DIR ARGS`, its stdout with the directory's own paths made `DIR`.
fn answer(s3: &S3, dir: &str, args: &[&str]) -> (bool, String) {
    let out = s3.run(&[&["--runs-dir", dir], args].concat());
    let mut text = stdout(&out);
    // A local directory's paths and the mirror's name the same files.
    let mirror = s3.cache.path().join("remote");
    if let Ok(mut entries) = std::fs::read_dir(&mirror) {
        if let Some(Ok(e)) = entries.next() {
            text = text.replace(&e.path().join("files").display().to_string(), "DIR");
        }
    }
    text = text.replace(dir, "DIR");
    (out.status.success(), text)
}

fn sorted_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

/// Fails on the first line where the bucket's answer differs from the directory's.
fn same(args: &[&str], local: &str, bucket: &str) {
    if local == bucket {
        return;
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (local.lines().collect(), bucket.lines().collect());
    let n = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let clip =
        |l: Option<&&str>| l.map_or(String::from("(end)"), |l| l.chars().take(400).collect());
    panic!(
        "mctl {args:?} differs on the bucket at line {}:\n local: {}\nbucket: {}",
        n + 1,
        clip(a.get(n)),
        clip(b.get(n))
    );
}

/// A Claude Code store with one session whose Grep output was persisted.
fn claude_store(root: &Path) {
    let session = "9e0c5a1e-0000-4000-8000-0000000000aa";
    let project = root.join("-home-ana-app");
    let mut s = Session::new(&project, session);
    let values = s.tool_results();
    let grep = "src/a.ts:3: TODO x\n".repeat(3000);
    let saved =
        format!("/home/ana/.claude/projects/-home-ana-app/{session}/tool-results/toolu_G.txt");
    s.prompt("Find the TODOs")
        .call("toolu_G", "Grep", json!({"pattern": "TODO"}))
        .result("toolu_G", &stub("53.0KB", &saved, "src/a.ts:3"), None)
        .answer("Done.");
    s.write();
    std::fs::write(values.join("toolu_G.txt"), &grep).unwrap();
}

#[test]
fn every_read_command_answers_from_a_bucket_as_from_disk() {
    let s3 = S3::start();
    let demo = tempfile::tempdir().unwrap();
    let out = s3.run(&["demo", &demo.path().display().to_string()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let local = demo.path().display().to_string();
    let url = "s3://team/runs/demo";
    let last = s3.push(demo.path(), url).pop().unwrap();
    assert!(last["uploaded"].as_u64().unwrap() > 10, "{last}");

    let runs = |dir: &str| -> Value {
        let (ok, text) = answer(&s3, dir, &["runs", "--json"]);
        assert!(ok, "{text}");
        serde_json::from_str(&text).unwrap()
    };
    let listed = runs(&local);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(ids.len() >= 8, "{ids:?}");
    assert_eq!(runs(url), listed);

    // A run with a retained value over 128 KiB (the mirror holds it by its ends until a
    // command reads it whole), that value's call, and another run to diff it with.
    let (run, call) = ids
        .iter()
        .find_map(|id| {
            let (_, text) = answer(&s3, &local, &["show", "--json", id]);
            let show: Value = serde_json::from_str(&text).ok()?;
            let r = show["results"].as_array()?.iter().find(|r| {
                r["state"] == "retained" && r["bytes"].as_u64().unwrap_or(0) > 128 * 1024
            })?;
            Some((*id, r["toolCallId"].as_str()?.to_owned()))
        })
        .expect("a run of the demo with a value over 128 KiB");
    let call = call.as_str();
    let other = ids.iter().find(|i| **i != run).unwrap();
    // Peeks and `full` first: they read the value by ranged GETs; `show` then fetches it whole.
    let commands: Vec<Vec<&str>> = vec![
        vec!["peek", run, call, "--lines", "2-30"],
        vec!["peek", "--json", run, call, "--query", "left-pad"],
        vec!["stub", run, call],
        vec!["full", run, call],
        vec!["show", run],
        vec!["show", "--json", run],
        vec!["coverage", "--json", run],
        vec!["resume", "--json", run],
        vec!["whatif", "--json", "--threshold", "8KiB,64KiB"],
        vec!["search", "--json", "error"],
        vec!["export", run, "--format", "md"],
        vec!["diff", "--json", run, other],
    ];
    for args in &commands {
        let here = answer(&s3, &local, args);
        let there = answer(&s3, url, args);
        let strip = |t: &str| {
            // Search says how long it took.
            t.lines()
                .map(|l| match serde_json::from_str::<Value>(l) {
                    Ok(mut v) if v.get("elapsedMs").is_some() => {
                        v["elapsedMs"] = json!(0);
                        v.to_string()
                    }
                    _ => l.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(here.0, "{args:?} failed locally: {}", here.1);
        let (mut a, mut b) = (strip(&here.1), strip(&there.1));
        if args[0] == "search" {
            // Hits come in the order the runs' reads finish.
            a = sorted_lines(&a);
            b = sorted_lines(&b);
        }
        same(args, &a, &b);
    }
    // The index of a bucket is the mirror's: the same runs, counted the same.
    let index = |dir: &str| -> Value {
        let (ok, text) = answer(&s3, dir, &["index", "--json"]);
        assert!(ok, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        json!({"runs": v["runs"], "files": v["files"]})
    };
    assert_eq!(index(url), index(&local));

    // A Claude Code store reads the same from a bucket too.
    let claude = tempfile::tempdir().unwrap();
    claude_store(claude.path());
    let curl = "s3://team/claude/projects";
    s3.push(claude.path(), curl);
    let cl = claude.path().display().to_string();
    for args in [
        vec!["runs", "--json"],
        vec!["show", "--json", "9e0c5a1e"],
        vec!["peek", "9e0c5a1e", "toolu_G", "--lines", "2990-"],
        vec!["stub", "9e0c5a1e", "toolu_G"],
    ] {
        let here = answer(&s3, &cl, &args);
        assert!(here.0, "{args:?} failed locally: {}", here.1);
        let there = answer(&s3, curl, &args);
        assert!(there.0, "{args:?} failed on the bucket: {}", there.1);
        same(&args, &here.1, &there.1);
    }
}

#[test]
fn a_push_uploads_only_what_changed() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(dir.path(), "run_1");
    run.user("Build it")
        .tool("toolu_a", "bash", &"x".repeat(30_000), true);
    run.write();
    let url = "s3://team/p";
    let first = s3.push(dir.path(), url);
    let last = first.last().unwrap();
    assert_eq!(last["uploaded"], 2, "{first:?}");
    // The value goes up before the transcript that names it.
    assert_eq!(first[0]["key"], "run_1.values/toolu_a.txt");
    assert_eq!(first[1]["key"], "run_1.jsonl");

    let again = s3.push(dir.path(), url);
    assert_eq!(again.len(), 1, "only the summary line: {again:?}");
    assert_eq!(again[0]["uploaded"], 0);
    assert_eq!(again[0]["unchanged"], 2);
    let said = s3.run(&["push", &dir.path().display().to_string(), url]);
    assert!(
        stdout(&said).starts_with("nothing to push"),
        "{}",
        stdout(&said)
    );

    // An append: only the transcript goes up, and a reader of the bucket sees the new event.
    run.done().write();
    let grown = s3.push(dir.path(), url);
    assert_eq!(grown.last().unwrap()["uploaded"], 1, "{grown:?}");
    assert_eq!(grown[0]["key"], "run_1.jsonl");
    let out = s3.run(&["--runs-dir", url, "runs", "--json"]);
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs[0]["status"], "done", "{runs}");

    // What the bucket holds is byte for byte the directory.
    for rel in ["run_1.jsonl", "run_1.values/toolu_a.txt"] {
        assert_eq!(
            std::fs::read(s3.root.path().join("team/p").join(rel)).unwrap(),
            std::fs::read(dir.path().join(rel)).unwrap(),
            "{rel}"
        );
    }

    // A name with characters a URL would encode is its key as it is, and reads back; a
    // temporary (hidden) file stays home.
    RunFile::new(dir.path(), "fix#1 [a]")
        .user("Odd name")
        .done()
        .write();
    std::fs::write(dir.path().join(".run_1.summary.json.klide-tmp"), "{}").unwrap();
    let odd = s3.push(dir.path(), url);
    assert_eq!(odd.last().unwrap()["uploaded"], 1, "{odd:?}");
    assert!(s3.root.path().join("team/p/fix#1 [a].jsonl").is_file());
    assert!(!s3
        .root
        .path()
        .join("team/p/.run_1.summary.json.klide-tmp")
        .exists());
    let out = s3.run(&["--runs-dir", url, "runs", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == "fix#1 [a]"),
        "{runs}"
    );

    // An object collected in the bucket is not brought back while its file is unchanged.
    std::fs::remove_file(s3.root.path().join("team/p/run_1.values/toolu_a.txt")).unwrap();
    let after_gc = s3.push(dir.path(), url);
    assert_eq!(after_gc.last().unwrap()["uploaded"], 0, "{after_gc:?}");
}

#[test]
fn a_range_peek_near_the_end_of_a_big_value_fetches_one_window() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let line = "2026-11-29T10:00:00Z INFO worker-3 handled request in 43 ms\n";
    let lines = 300_000u64;
    let value = line.repeat(lines as usize);
    RunFile::new(dir.path(), "run_big")
        .user("Summarize the log")
        .tool("toolu_log", "bash", &value, true)
        .done()
        .write();
    let url = "s3://team/big";
    let last = s3.push(dir.path(), url).pop().unwrap();
    assert_eq!(last["sidecars"], 1, "{last}");
    let local = dir.path().display().to_string();
    let range = format!("{}-{lines}", lines - 399);
    let peek = ["peek", "run_big", "toolu_log", "--lines", range.as_str()];
    // A listing fetches the transcript whole and the value by its ends.
    let listed = s3.run(&["--runs-dir", url, "runs"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    s3.take_received();
    let there = answer(&s3, url, &peek);
    let fetched = s3.take_received();
    assert_eq!(there, answer(&s3, &local, &peek));
    assert!(there.1.contains(&format!("of {lines}]")), "{}", there.1);
    assert!(
        fetched <= 2 << 20,
        "a peek of 400 lines at the end of a {} MB value fetched {fetched} bytes",
        value.len() >> 20
    );
    // Without its sidecar (a value uploaded by another tool), the peek counts the lines by
    // reading the value in windows, and answers the same.
    let sidecars = s3.root.path().join("team/big/.mission-control");
    std::fs::remove_dir_all(&sidecars).unwrap();
    assert_eq!(answer(&s3, url, &peek), answer(&s3, &local, &peek));
    // The ends the mirror holds are read from it.
    assert!(s3.take_received() >= value.len() as u64 - 128 * 1024);
}

#[test]
fn object_storage_failures_are_clear_and_exit_2() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    RunFile::new(dir.path(), "run_1").user("Hi").done().write();
    s3.push(dir.path(), "s3://team/ok");
    let check = |cmd: &mut Command, says: &str| {
        let out = cmd.output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "expected {says:?} in: {err}");
        assert!(
            !err.contains(SECRET) && !stdout(&out).contains(SECRET),
            "{err}"
        );
    };
    check(
        s3.mctl()
            .env("AWS_SECRET_ACCESS_KEY", "wrong-secret")
            .args(["--runs-dir", "s3://team/ok", "runs"]),
        "access denied",
    );
    check(
        s3.mctl()
            .args(["--runs-dir", "s3://no-such-bucket/x", "runs"]),
        "no such bucket",
    );
    check(
        s3.mctl()
            .env(
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", free_port()),
            )
            .args(["--runs-dir", "s3://team/ok", "runs"]),
        "cannot reach the endpoint",
    );
    check(
        s3.mctl()
            .env("AWS_SECRET_ACCESS_KEY", "wrong-secret")
            .args(["push", &dir.path().display().to_string(), "s3://team/ok"]),
        "access denied",
    );
    check(
        s3.mctl().args(["--runs-dir", "gs://team/ok", "runs"]),
        "not supported",
    );
}

#[test]
fn the_aws_profile_files_give_what_the_environment_does_not() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    RunFile::new(dir.path(), "run_profiled")
        .user("Hi")
        .done()
        .write();
    s3.push(dir.path(), "s3://team/profiled");
    // A home with the files `aws configure` writes, and no AWS variable but the profile's
    // name (and plain http, which no profile file says).
    let home = tempfile::tempdir().unwrap();
    let aws = home.path().join(".aws");
    std::fs::create_dir(&aws).unwrap();
    let credentials = |secret: &str| {
        std::fs::write(
            aws.join("credentials"),
            format!(
                "[default]\naws_access_key_id = AKNOPE\naws_secret_access_key = SKNOPE\n\n\
                 [team]\naws_access_key_id = {ACCESS}\naws_secret_access_key = {secret}\n"
            ),
        )
        .unwrap();
    };
    std::fs::write(
        aws.join("config"),
        format!(
            "[profile team]\nregion = us-east-1\nendpoint_url = http://127.0.0.1:{}\n",
            s3.proxy_port
        ),
    )
    .unwrap();
    let from_profile = || {
        let mut cmd = s3.mctl();
        for var in [
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_ENDPOINT_URL",
            "AWS_ENDPOINT",
            "AWS_SHARED_CREDENTIALS_FILE",
            "AWS_CONFIG_FILE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("HOME", home.path()).env("AWS_PROFILE", "team");
        cmd
    };
    credentials(SECRET);
    let out = from_profile()
        .args(["--runs-dir", "s3://team/profiled", "runs", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("run_profiled"), "{}", stdout(&out));
    // A wrong secret in the file: the same clear refusal, and the secret never printed.
    credentials("SKWRONGSECRET");
    let out = from_profile()
        .args(["--runs-dir", "s3://team/profiled", "runs"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("access denied"), "{err}");
    assert!(!err.contains("SKWRONGSECRET") && !stdout(&out).contains("SKWRONGSECRET"));
    // The environment's keys win over the file's.
    let out = from_profile()
        .env("AWS_ACCESS_KEY_ID", ACCESS)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .args(["--runs-dir", "s3://team/profiled", "runs", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The value files under `root`, relative to it, sorted.
fn value_files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".values") && entry.path().is_dir() {
            for f in std::fs::read_dir(entry.path()).unwrap().flatten() {
                out.push(format!("{name}/{}", f.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn gc_over_a_bucket_plans_as_on_disk_and_deletes_what_it_names_there() {
    let s3 = S3::start();
    let demo = tempfile::tempdir().unwrap();
    assert!(s3
        .run(&["demo", &demo.path().display().to_string()])
        .status
        .success());
    let url = "s3://team/gc";
    s3.push(demo.path(), url);
    let local = demo.path().display().to_string();
    let keep = "run_1793527200000_b6d1beb1";

    // A pin made by one member is seen by another, whose mirror is its own; locally the same
    // run is pinned in the config directory.
    let other_cache = tempfile::tempdir().unwrap();
    let pinned = s3.run(&["--runs-dir", url, "pin", keep]);
    assert!(pinned.status.success(), "{}", stderr(&pinned));
    let seen = s3
        .mctl_elsewhere(other_cache.path())
        .args(["--runs-dir", url, "pins", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&seen.stdout).unwrap(),
        json!([keep])
    );
    assert!(s3
        .root
        .path()
        .join("team/gc/.mission-control/pins.json")
        .is_file());
    assert!(s3
        .run(&["--runs-dir", &local, "pin", keep])
        .status
        .success());

    let plan = ["gc", "--older-than", "1d", "--json"];
    let (ok, here) = answer(&s3, &local, &plan);
    assert!(ok, "{here}");
    let (ok, there) = answer(&s3, url, &plan);
    assert!(ok, "{there}");
    same(&plan, &here, &there);
    let planned: Value = serde_json::from_str(&here).unwrap();
    let files = planned["files"].as_array().unwrap();
    assert!(files.len() > 3, "{planned}");
    assert!(
        files.iter().all(|f| f["run"] != keep),
        "a pinned run is never planned"
    );

    let apply = ["gc", "--older-than", "1d", "--apply", "--json"];
    let (ok, text) = answer(&s3, url, &apply);
    assert!(ok, "{text}");
    let (ok, _) = answer(&s3, &local, &apply);
    assert!(ok);
    // The bucket holds exactly what the directory holds after the same collection: the
    // planned objects are gone, every other one is there.
    assert_eq!(
        value_files(&s3.root.path().join("team/gc")),
        value_files(demo.path())
    );
    assert!(value_files(demo.path()).iter().any(|f| f.starts_with(keep)));
    let runs = ["runs", "--json"];
    same(
        &runs,
        &answer(&s3, &local, &runs).1,
        &answer(&s3, url, &runs).1,
    );
    // And the other member's mirror, looked at again, agrees.
    let later = s3
        .mctl_elsewhere(other_cache.path())
        .args(["--runs-dir", url, "runs", "--json"])
        .output()
        .unwrap();
    let mine: Value = serde_json::from_str(&answer(&s3, url, &runs).1).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&later.stdout).unwrap(),
        mine
    );
}

#[test]
fn two_members_pinning_at_once_lose_neither_pin() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    for id in ["run_a", "run_b", "run_c"] {
        RunFile::new(dir.path(), id).user("Hi").done().write();
    }
    let url = "s3://team/pins";
    s3.push(dir.path(), url);
    s3.run(&["--runs-dir", url, "pin", "run_c"]);
    // Each reads the pins, waits 800 ms, then writes them back; the second starts 300 ms after
    // the first: both read before either writes, so the second write finds the pins changed
    // (its If-Match fails), reads them again and keeps both. (The writes are apart in time: the
    // test server checks a condition and writes in two steps.)
    let caches = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let children: Vec<Child> = ["run_a", "run_b"]
        .iter()
        .zip(&caches)
        .enumerate()
        .map(|(n, (run, cache))| {
            if n > 0 {
                std::thread::sleep(Duration::from_millis(300));
            }
            s3.mctl_elsewhere(cache.path())
                .env("MCTL_TEST_PIN_RACE_MS", "800")
                .args(["--runs-dir", url, "pin", run])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let out = s3.run(&["--runs-dir", url, "pins", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        json!(["run_a", "run_b", "run_c"])
    );
    let unpin = s3.run(&["--runs-dir", url, "unpin", "run_c", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&unpin.stdout).unwrap()["changed"],
        true
    );
}

#[test]
fn serve_and_watch_follow_what_is_pushed_to_a_bucket() {
    let s3 = S3::start();
    let dir = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(dir.path(), "run_live");
    run.user("Watch me")
        .tool("toolu_v", "bash", &"y".repeat(30_000), true)
        .write();
    // Its value as old as its transcript: a value written within the idle guard keeps its run.
    let values = dir.path().join("run_live.values");
    crate::support::set_mtime(&values.join("toolu_v.txt"), crate::support::OLD_MS);
    let url = "s3://team/live";
    s3.push(dir.path(), url);
    let mut env = s3.env();
    env.push(("MCTL_BUCKET_POLL", "200ms".to_owned()));
    let served = crate::serve::client::Served::start_with(
        &[Path::new(url)],
        &["--allow-gc"],
        crate::serve::client::Launch {
            env: env.clone(),
            ..Default::default()
        },
    );
    let ids = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(served.get("/api/runs").json()), ["run_live"]);
    let mut watch = crate::support::Killed(
        s3.mctl()
            .env("MCTL_BUCKET_POLL", "200ms")
            .args(["--runs-dir", url, "watch", "--json"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Its lines as they come: the run is written on once the watch's first look has told it.
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let out = watch.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(out)) {
            let Ok(line) = line else { return };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                return;
            }
        }
    });
    // The last line of run `run_live` the watch has told (its first look tells them all).
    let told = |seen: &[Value]| {
        (seen.iter())
            .filter(|c| c["kind"] == "appended" && c["run"] == "run_live")
            .flat_map(|c| c["lines"].as_array().cloned().unwrap_or_default())
            .filter_map(|l| l["line"].as_u64())
            .max()
    };
    let mut seen = Vec::new();
    let ready = Instant::now() + Duration::from_secs(30);
    while told(&seen).is_none() {
        let left = ready.saturating_duration_since(Instant::now());
        let change = rx.recv_timeout(left);
        seen.push(change.unwrap_or_else(|_| panic!("the watch said only {seen:?}")));
    }
    let first_look = told(&seen);
    run.done().write();
    // The collection below takes runs whose last activity is over a second old: this one.
    let live_written = Instant::now();
    RunFile::new(dir.path(), "run_new")
        .user("Another")
        .done()
        .write();
    s3.push(dir.path(), url);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = ids(served.get("/api/runs").json());
        if now.len() == 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server never showed the pushed run: {now:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The watch tells the append as an append (the mirror's copy grew in place) and the new run.
    while !(told(&seen) > first_look && seen.iter().any(|c| c["run"] == "run_new")) {
        let left = deadline.saturating_duration_since(Instant::now());
        let change = rx.recv_timeout(left);
        seen.push(change.unwrap_or_else(|_| panic!("the watch said only {seen:?}")));
    }
    assert!(!seen.iter().any(|c| c["kind"] == "reset"), "{seen:?}");
    drop(watch);

    // A server allowed to collect deletes in the bucket, and keeps its pins there.
    let value = s3.root.path().join("team/live/run_live.values/toolu_v.txt");
    assert!(value.is_file());
    let (bearer, origin) = (served.bearer(), served.origin());
    let pinned = served.send("PUT", "/api/pins/run_new", &[&bearer, &origin], b"");
    assert_eq!(
        pinned.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&pinned.body)
    );
    let pins = std::fs::read(s3.root.path().join("team/live/.mission-control/pins.json")).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&pins).unwrap()["pinned"],
        json!(["run_new"])
    );
    std::thread::sleep(Duration::from_millis(1500).saturating_sub(live_written.elapsed()));
    let applied = served.post("/api/gc", &json!({"olderThanMs": 1000, "apply": true}));
    assert_eq!(applied.status, 200);
    assert_eq!(
        applied.json()["files"][0]["path"],
        "run_live.values/toolu_v.txt",
        "{}",
        applied.json()
    );
    assert!(
        !value.exists(),
        "the collected value is gone from the bucket"
    );
    assert!(
        s3.root.path().join("team/live/run_live.jsonl").is_file(),
        "and nothing else"
    );
}
