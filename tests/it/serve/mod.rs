//! `mctl serve`: the JSON API equals the CLI's `--json`, and every rule of the server holds
//! (token, Host, Origin, read-only, validation, limits, streams, shutdown), tested over real
//! HTTP against the real binary.

mod abuse;
pub(crate) mod client;

use crate::support::{mctl, mctl_command, stdout, RunFile};
use client::Served;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

const RUN: &str = "run_1793527200000_b6d1beb1";

/// What `GET /` answers: the UI when it was built (`ui/dist`, read from disk by a debug build),
/// else the page saying the binary has no UI. The test command builds the UI first.
fn page_status() -> u16 {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/dist/index.html");
    if built.is_file() {
        200
    } else {
        eprintln!("ui/dist is not built: checking the page that says so instead of the UI");
        503
    }
}

fn demo() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let out = mctl_command()
        .args(["demo"])
        .arg(t.path().join("runs"))
        .output()
        .unwrap();
    assert!(out.status.success());
    t
}

fn cli_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = mctl(dir, &all);
    assert!(out.status.success(), "{args:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The retained result of `RUN`.
fn retained_call(dir: &Path) -> String {
    let detail = cli_json(dir, &["show", RUN]);
    let r = detail["results"].as_array().unwrap().iter();
    let mut retained = r.filter(|r| r["state"] == "retained");
    retained.next().expect("a retained result")["toolCallId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn api_answers_equal_the_cli_json() {
    let t = demo();
    let dir = t.path().join("runs");
    let s = Served::start(&[&dir], &[]);
    assert_eq!(s.announce["readOnly"], true);
    assert!(s.announce["url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/#token={}", s.token)));
    assert_eq!(s.token.len(), 64, "a 256-bit token, in hex");

    let strip_running = |mut v: Value| {
        // The one run still counted running is listed by its age; the rest must match exactly.
        for r in v.as_array_mut().unwrap() {
            r.as_object_mut()
                .unwrap()
                .retain(|k, _| k != "status" && k != "ageMs");
        }
        v
    };
    let runs = s.get("/api/runs");
    assert_eq!(runs.status, 200);
    assert_eq!(runs.header("content-type"), Some("application/json"));
    assert_eq!(
        strip_running(runs.json()),
        strip_running(cli_json(&dir, &["runs"]))
    );
    assert_eq!(
        s.get(&format!("/api/runs/{RUN}")).json(),
        cli_json(&dir, &["show", RUN])
    );

    let call = retained_call(&dir);
    let base = format!("/api/runs/{RUN}/results/{call}");
    assert_eq!(
        s.get(&format!("{base}/stub")).json(),
        cli_json(&dir, &["stub", RUN, &call])
    );
    let full = mctl(&dir, &["full", RUN, &call]).stdout;
    let got = s.get(&format!("{base}/full"));
    assert_eq!(got.body, full, "the exact bytes");
    assert_eq!(
        got.header("x-total-bytes"),
        Some(full.len().to_string().as_str())
    );
    let page = s.get(&format!("{base}/full?offset=100&limit=1000"));
    assert_eq!(page.body, full[100..1100]);
    assert_eq!(
        s.get(&format!("{base}/full?offset={}", full.len() + 5))
            .body,
        b""
    );
    assert_eq!(
        s.get(&format!("{base}/peek?lines=2-30")).json(),
        cli_json(&dir, &["peek", RUN, &call, "--lines", "2-30"])
    );
    assert_eq!(
        s.get(&format!("{base}/peek?query=error")).json(),
        cli_json(&dir, &["peek", RUN, &call, "--query", "error"])
    );
    let plan = s.post("/api/gc", &json!({"orphans": true, "olderThanMs": 1000}));
    assert_eq!(plan.status, 200);
    assert_eq!(
        plan.json(),
        cli_json(&dir, &["gc", "--orphans", "--older-than", "1s"])
    );

    // The served export is `mctl export`'s document, as a download named after the run.
    for (query, args) in [
        ("", vec![]),
        (
            "?format=md&values=full&redact=false",
            vec!["--format", "md", "--values", "full", "--no-redact"],
        ),
    ] {
        let got = s.get(&format!("/api/runs/{RUN}/export{query}"));
        assert_eq!(got.status, 200, "{query}");
        let mut cli = vec!["export", RUN];
        cli.extend(args);
        assert_eq!(
            got.body,
            mctl(&dir, &cli).stdout,
            "{query}: the exact bytes"
        );
        let named = got.header("content-disposition").unwrap_or_default();
        assert!(
            named.starts_with("attachment; filename*=UTF-8''"),
            "{named}"
        );
    }
    let bad = s.get(&format!("/api/runs/{RUN}/export?values=all"));
    assert_eq!(
        (bad.status, bad.json()["code"].clone()),
        (400, json!("invalid"))
    );
    assert_eq!(s.get("/api/runs/run_nope/export").status, 404);

    // Missing things are 404 with {code, message}; a bad request is 400.
    let missing = s.get("/api/runs/run_nope");
    assert_eq!(
        (missing.status, missing.json()["code"].clone()),
        (404, json!("unknown-run"))
    );
    let missing = s.get(&format!("/api/runs/{RUN}/results/toolu_nope/stub"));
    assert_eq!(
        (missing.status, missing.json()["code"].clone()),
        (404, json!("unknown-call"))
    );
    assert_eq!(s.get(&format!("{base}/peek")).status, 400);
    assert_eq!(s.get(&format!("{base}/peek?lines=x")).status, 400);
    assert_eq!(s.get(&format!("{base}/full?offset=-1")).status, 400);
    assert_eq!(s.get("/api/nothing").status, 404);
}

#[test]
fn several_runs_directories_are_served_and_named_by_dir() {
    let (a, b) = (demo(), tempfile::tempdir().unwrap());
    let (da, db) = (a.path().join("runs"), b.path().to_path_buf());
    RunFile::new(&db, "run_other")
        .user("elsewhere")
        .done()
        .write();
    let s = Served::start(&[&da, &db], &[]);
    let ids = |r: client::Resp| -> Vec<String> {
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        ids(s.get("/api/runs")).contains(&RUN.to_string()),
        "the first by default"
    );
    let other = ids(s.get(&format!("/api/runs?dir={}", db.display())));
    assert_eq!(other, ["run_other"]);
    assert_eq!(
        s.get(&format!("/api/runs/run_other?dir={}", db.display()))
            .status,
        200
    );
    let settings = s.post("/api/call/settings", &Value::Null).json();
    let served = [da.display().to_string(), db.display().to_string()];
    assert_eq!(settings["runsDirs"], json!(served));
    assert_eq!(settings["canSetDirs"], false);
    let list = s
        .post("/api/call/list_runs", &json!({"reread": true}))
        .json();
    assert_eq!(
        list["runs"].as_array().unwrap().len(),
        13,
        "both directories' runs: the demo's 12 and one"
    );
}

#[test]
fn the_token_is_required_and_never_taken_from_the_url() {
    let t = demo();
    let s = Served::start(&[&t.path().join("runs")], &[]);
    let status = |headers: &[&str], path: &str| s.send("GET", path, headers, b"").status;
    assert_eq!(status(&[], "/api/runs"), 401);
    let wrong = format!("Authorization: Bearer {}x", s.token);
    assert_eq!(status(&[&wrong], "/api/runs"), 401);
    assert_eq!(status(&["Authorization: Bearer "], "/api/runs"), 401);
    let in_query = format!("/api/runs?token={}", s.token);
    assert_eq!(
        status(&[], &in_query),
        401,
        "a token in the query string is refused"
    );
    assert_eq!(status(&[&s.bearer()], &in_query), 401);
    // However the key is spelled, or under another name: the token is in the URL all the same.
    let t = &s.token;
    for query in [
        format!("Token={t}"),
        format!("%74oken={t}"),
        format!("access_token={t}"),
        format!("a=1&key={t}"),
        t.to_string(),
        format!("q=Bearer+{t}"),
        format!("a=1;t={t}"),
    ] {
        let path = format!("/api/runs?{query}");
        assert_eq!(status(&[&s.bearer()], &path), 401, "{query}");
    }
    assert_eq!(status(&[&s.bearer()], "/api/runs?a=1&b=x"), 200);
    let refused = s.send("GET", "/api/runs", &[], b"");
    assert!(
        !String::from_utf8_lossy(&refused.body).contains("run_"),
        "nothing but the refusal"
    );
    // The page is served without the token (it has none before it loads).
    assert_eq!(status(&[], "/"), page_status());
    // The browser's icon too: the app's own, not a 404 on every page load.
    assert_eq!(status(&[], "/favicon.ico"), page_status());

    // No cookie stands for the token: nothing trades it for one, and none is taken.
    let session = s.send("POST", "/api/session", &[&s.bearer(), &s.origin()], b"");
    assert_eq!(session.status, 404);
    let cookie = format!("Cookie: mctl_session=1; token={}", s.token);
    assert_eq!(status(&[&cookie], "/api/runs"), 401);
}

#[test]
fn host_and_origin_are_checked() {
    let t = demo();
    let s = Served::start(&[&t.path().join("runs")], &["--allow-host", "runs.example"]);
    let port = s.bind.rsplit(':').next().unwrap().to_string();
    let host = |h: &str| {
        let header = format!("Host: {h}");
        s.send("GET", "/api/runs", &[&s.bearer(), &header], b"")
            .status
    };
    assert_eq!(host(&format!("evil.example:{port}")), 421, "DNS rebinding");
    assert_eq!(host("evil.example"), 421);
    assert_eq!(
        s.send("GET", "/", &["Host: evil.example"], b"").status,
        421,
        "the page too"
    );
    assert_eq!(host(&format!("localhost:{port}")), 200);
    assert_eq!(
        host("localhost:9999"),
        200,
        "through an SSH tunnel's own port"
    );
    assert_eq!(host(&format!("RUNS.example:{port}")), 200, "--allow-host");
    assert_eq!(
        host("10.1.2.3"),
        421,
        "a loopback server answers to no other address"
    );
    // A name followed by anything but a port, two names, or another host in the request line.
    assert_eq!(host(&format!("127.0.0.1:{port}@evil.example")), 421);
    assert_eq!(host(&format!("[::1]:{port}x")), 421);
    let two = ["Host: localhost", "Host: evil.example"];
    assert_eq!(
        s.send("GET", "/api/runs", &[&s.bearer(), two[0], two[1]], b"")
            .status,
        421
    );
    let absolute = format!("http://evil.example:{port}/api/runs");
    let other_line = s.send("GET", &absolute, &[&s.bearer(), "Host: localhost"], b"");
    assert_eq!(other_line.status, 421);
    let same_line = format!("http://localhost:{port}/api/runs");
    let header = format!("Host: localhost:{port}");
    assert_eq!(
        s.send("GET", &same_line, &[&s.bearer(), &header], b"")
            .status,
        200
    );

    let call = |origin: Option<&str>| {
        let mut headers = vec![s.bearer()];
        headers.extend(origin.map(|o| format!("Origin: {o}")));
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        s.send(
            "POST",
            "/api/call/list_runs",
            &headers,
            br#"{"reread":false}"#,
        )
        .status
    };
    assert_eq!(call(Some("http://evil.example")), 403);
    assert_eq!(call(Some(&format!("http://localhost:{}1", port))), 403);
    assert_eq!(call(Some("null")), 403);
    assert_eq!(call(None), 403, "a state change must carry its Origin");
    assert_eq!(call(Some(&format!("http://{}", s.bind))), 200);
}

#[test]
fn answers_carry_the_security_headers() {
    let t = demo();
    let s = Served::start(&[&t.path().join("runs")], &[]);
    for r in [
        s.get("/api/runs"),
        s.send("GET", "/", &[], b""),
        s.send("GET", "/api/runs", &[], b""),
    ] {
        let csp = r.header("content-security-policy").expect("a CSP");
        for rule in [
            "default-src 'self'",
            "script-src 'self'",
            "object-src 'none'",
            "frame-ancestors 'none'",
            "connect-src 'self'",
        ] {
            assert!(csp.contains(rule), "{rule} in {csp}");
        }
        assert!(!csp.contains("unsafe-eval"));
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_eq!(r.header("referrer-policy"), Some("no-referrer"));
    }
    assert_eq!(s.get("/api/runs").header("cache-control"), Some("no-store"));
}

#[test]
fn read_only_unless_allow_gc() {
    let t = demo();
    let dir = t.path().join("runs");
    let s = Served::start(&[&dir], &[]);
    let d = dir.display().to_string();
    let pin = s.send(
        "PUT",
        &format!("/api/pins/{RUN}"),
        &[&s.bearer(), &s.origin()],
        b"",
    );
    assert_eq!(
        (pin.status, pin.json()["code"].clone()),
        (403, json!("forbidden"))
    );
    assert_eq!(
        s.send(
            "DELETE",
            &format!("/api/pins/{RUN}"),
            &[&s.bearer(), &s.origin()],
            b""
        )
        .status,
        403
    );
    assert_eq!(
        s.post("/api/gc", &json!({"orphans": true, "apply": true}))
            .status,
        403
    );
    let set = s.post(
        "/api/call/set_pinned",
        &json!({"dir": d, "run": RUN, "pinned": true}),
    );
    assert_eq!(set.status, 403);
    // A streaming command is refused before it is answered, as a plain call is.
    let apply = s.post("/api/call/gc_apply", &json!({"dir": d}));
    assert_eq!(
        (apply.status, apply.json()["code"].clone()),
        (403, json!("forbidden"))
    );
    assert_eq!(
        s.post("/api/call/set_runs_dirs", &json!({"dirs": ["/"]}))
            .status,
        403
    );
    assert_eq!(
        s.post("/api/call/settings", &Value::Null).json()["canChange"],
        false
    );
    assert!(
        stdout(&mctl(&dir, &["pins"])).is_empty(),
        "nothing was pinned"
    );
    drop(s);

    let s = Served::start(&[&dir], &["--allow-gc"]);
    assert_eq!(s.announce["readOnly"], false);
    let pin = s.send(
        "PUT",
        &format!("/api/pins/{RUN}"),
        &[&s.bearer(), &s.origin()],
        b"",
    );
    assert_eq!(pin.status, 200);
    assert_eq!(
        pin.json(),
        json!({"run": RUN, "pinned": true, "changed": true})
    );
    assert_eq!(stdout(&mctl(&dir, &["pins"])).trim(), RUN);
    let unpin = s.send(
        "DELETE",
        &format!("/api/pins/{RUN}"),
        &[&s.bearer(), &s.origin()],
        b"",
    );
    assert_eq!(unpin.json()["pinned"], false);

    // The command the app calls checks a run as the REST route does: a path, a run the
    // directory does not have and a name no run could have are refused alike, nothing stored.
    let rest = s.send(
        "PUT",
        "/api/pins/no_such_run",
        &[&s.bearer(), &s.origin()],
        b"",
    );
    assert_eq!(rest.status, 404);
    let long = "x".repeat(900_000);
    for run in ["../../../../etc/passwd", "no_such_run", long.as_str()] {
        let set = s.post(
            "/api/call/set_pinned",
            &json!({"dir": d, "run": run, "pinned": true}),
        );
        assert_eq!(set.status, rest.status, "{}", &run[..run.len().min(40)]);
    }
    assert!(
        stdout(&mctl(&dir, &["pins"])).is_empty(),
        "nothing was pinned"
    );
    let set = s.post(
        "/api/call/set_pinned",
        &json!({"dir": d, "run": RUN, "pinned": true}),
    );
    assert_eq!((set.status, set.json()), (200, json!(true)));
    assert_eq!(stdout(&mctl(&dir, &["pins"])).trim(), RUN);
}

#[test]
fn requests_never_reach_outside_the_served_directories() {
    let t = demo();
    let dir = t.path().join("runs");
    std::fs::write(t.path().join("secret.jsonl"), "{}\n").unwrap();
    let s = Served::start(&[&dir], &[]);
    for path in [
        "/api/runs/..%2Fsecret",
        "/api/runs/..%2F..%2Fetc%2Fpasswd",
        "/api/runs/%2Fetc%2Fpasswd/results/x/full",
        &format!("/api/runs/{RUN}/results/..%2F..%2Fsecret/full"),
    ] {
        let r = s.get(path);
        assert!(matches!(r.status, 400 | 404), "{path}: {}", r.status);
    }
    let outside = t.path().display().to_string();
    assert_eq!(s.get(&format!("/api/runs?dir={outside}")).status, 400);
    let call = s.post(
        "/api/call/run_detail",
        &json!({"dir": outside, "run": "secret"}),
    );
    assert_eq!(call.status, 400);
    let d = dir.display().to_string();
    let call = s.post(
        "/api/call/run_detail",
        &json!({"dir": d, "run": "../secret"}),
    );
    assert_eq!(call.status, 404);
    let call = s.post(
        "/api/call/open_value",
        &json!({"dir": d, "run": RUN, "call": "../../secret"}),
    );
    assert!(matches!(call.status, 400 | 404), "{}", call.status);
    // The UI's files: no way out of them either.
    for path in [
        "/../secret.jsonl",
        "/%2e%2e/secret.jsonl",
        "/assets/../../secret.jsonl",
    ] {
        let r = s.send("GET", path, &[], b"");
        assert!(matches!(r.status, 404 | 503), "{path}: {}", r.status);
        assert!(!String::from_utf8_lossy(&r.body).contains("{}"), "{path}");
    }
}

#[test]
fn bodies_over_the_limit_and_malformed_requests_are_refused() {
    let t = demo();
    let s = Served::start(&[&t.path().join("runs")], &[]);
    let big = json!({"dirs": [], "pattern": "x".repeat(2 << 20)});
    let over = s.post("/api/call/search", &big);
    assert_eq!(
        (over.status, over.json()["code"].clone()),
        (413, json!("invalid"))
    );
    // A path that is not UTF-8: refused in the API's own form, like every other error.
    let odd = s.get("/api/runs/%ff");
    assert_eq!(
        (odd.status, odd.json()["code"].clone()),
        (400, json!("invalid"))
    );
    assert!(odd.json()["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
    let bad = s.send(
        "POST",
        "/api/call/run_detail",
        &[&s.bearer(), &s.origin()],
        b"{not json",
    );
    assert_eq!(bad.status, 400);
    assert_eq!(
        s.post("/api/call/run_detail", &json!({"nope": 1})).status,
        400
    );
    assert_eq!(
        s.post("/api/call/no_such_command", &Value::Null).status,
        404
    );
    // A name sent is repeated cut, never whole.
    let long = s.post(&format!("/api/call/{}", "x".repeat(5000)), &Value::Null);
    assert_eq!(long.status, 404);
    assert!(long.body.len() < 400, "{} bytes", long.body.len());
    // A search that could not start is refused before it is answered, not on its stream.
    let d = t.path().join("runs").display().to_string();
    for (pattern, regex) in [("", false), ("(", true)] {
        let search = json!({"dirs": [d], "pattern": pattern, "regex": regex});
        let r = s.post("/api/call/search", &search);
        assert_eq!(
            (r.status, r.json()["code"].clone()),
            (400, json!("invalid")),
            "{pattern:?}"
        );
    }
}

#[test]
fn a_non_loopback_bind_needs_a_token() {
    let out = mctl_command()
        .args(["serve", "--bind", "0.0.0.0:0", "--runs-dir", "/nonexistent"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--token"), "{err}");
    let weak = mctl_command()
        .args(["serve", "--token", "short", "--runs-dir", "/nonexistent"])
        .output()
        .unwrap();
    assert!(!weak.status.success());
    assert!(String::from_utf8_lossy(&weak.stderr).contains("at least 16 characters"));
}

#[test]
fn two_hundred_concurrent_requests_are_all_answered() {
    let t = demo();
    let s = Served::start(&[&t.path().join("runs")], &[]);
    let expected = s.get(&format!("/api/runs/{RUN}")).body;
    let answers: Vec<(u16, bool)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..200)
            .map(|_| {
                scope.spawn(|| {
                    let r = s.get(&format!("/api/runs/{RUN}"));
                    (r.status, r.body == expected)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(answers.len(), 200);
    assert!(
        answers.iter().all(|&(status, same)| status == 200 && same),
        "{answers:?}"
    );
}

fn append_user(path: &Path, run: &str, seq: u64) {
    use std::io::Write;
    let line = json!({"schemaVersion": 1, "runId": run, "seq": seq, "ts": 1_790_000_100_000i64 + seq as i64,
        "event": {"type": "user_message", "runId": run, "ts": 1_790_000_100_000i64, "messageId": "m", "text": "more", "attachments": []}});
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(f, "{line}").unwrap();
}

/// Opens page `id`'s stream and calls streaming command `cmd` on it as call `n`.
fn page_call(
    s: &Served,
    page: &mut Option<client::Stream>,
    id: &str,
    n: u64,
    cmd: &str,
    req: &Value,
) {
    let client = format!("X-Mctl-Client: {id}");
    if page.is_none() {
        let st = s.open_stream("GET", "/api/page", &[&s.bearer(), &client], b"");
        assert_eq!(st.status, 200);
        *page = Some(st);
    }
    let call = format!("X-Mctl-Call: {n}");
    let headers = [s.bearer(), s.origin(), client, call];
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let r = s.send(
        "POST",
        &format!("/api/call/{cmd}"),
        &headers,
        req.to_string().as_bytes(),
    );
    assert_eq!(r.status, 202, "{}", String::from_utf8_lossy(&r.body));
}

#[test]
fn twenty_live_streams_each_see_every_change() {
    let t = tempfile::tempdir().unwrap();
    let path = RunFile::new(t.path(), "run_live").user("go").write();
    let s = Served::start(&[t.path()], &[]);
    let bearer = s.bearer();
    let mut streams: Vec<_> = (0..20)
        .map(|_| s.open_stream("GET", "/api/events", &[&bearer], b""))
        .collect();
    assert!(streams.iter().all(|st| st.status == 200));
    // The UI's way: its live changes through the command, on its page's stream.
    let mut page = None;
    page_call(
        &s,
        &mut page,
        "page-one-1234",
        1,
        "watch_changes",
        &Value::Null,
    );
    let page = page.as_mut().unwrap();
    assert_eq!(page.until("done", |v| v["call"] == 1)["value"], Value::Null);
    // Each stream's watcher starts in the background, and a line written during its first scan
    // is read by that scan, not reported: append until every stream has reported a change.
    let appended = |v: &Value| v["kind"] == "appended" && v["run"] == "run_live";
    let item = |v: &Value| v["call"] == 1 && appended(&v["item"]);
    let mut ready = vec![false; streams.len() + 1];
    let mut seq = 0;
    while ready.contains(&false) {
        seq += 1;
        assert!(seq < 30, "every stream reports changes");
        append_user(&path, "run_live", seq);
        let wait = Duration::from_millis(700);
        for (i, st) in streams.iter_mut().enumerate() {
            ready[i] |= st.within(wait, "change", appended).is_some();
        }
        ready[20] |= page.within(wait, "item", item).is_some();
    }
    // From now on every appended line reaches every stream.
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..3 {
        seq += 1;
        append_user(&path, "run_live", seq);
        let line = seq + 1;
        let has = |v: &Value| {
            v["lines"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["line"] == line)
        };
        for st in &mut streams {
            st.until("change", |v| appended(v) && has(v));
        }
        page.until("item", |v| item(v) && has(&v["item"]));
    }
}

/// The inotify instances process `pid` holds: one per watcher.
fn inotify_instances(pid: u32) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|link| link.to_string_lossy().contains("inotify"))
        .count()
}

/// Twenty pages and three events streams watch the served directory once: one watcher, which
/// tells each of them every change, and which stops when the last of them has gone.
#[test]
fn every_page_and_stream_shares_one_watcher() {
    let t = tempfile::tempdir().unwrap();
    let path = RunFile::new(t.path(), "run_live").user("go").write();
    let s = Served::start(&[t.path()], &[]);
    let pid = s.child.id();
    assert_eq!(
        inotify_instances(pid),
        0,
        "nothing is watched before it is asked"
    );
    let mut pages: Vec<Option<client::Stream>> = (0..20).map(|_| None).collect();
    for (i, page) in pages.iter_mut().enumerate() {
        let id = format!("page-shared-{i:02}");
        page_call(&s, page, &id, 1, "watch_changes", &Value::Null);
        let stream = page.as_mut().unwrap();
        assert_eq!(
            stream.until("done", |v| v["call"] == 1)["value"],
            Value::Null
        );
    }
    let mut streams: Vec<_> = (0..3)
        .map(|_| s.open_stream("GET", "/api/events", &[&s.bearer()], b""))
        .collect();
    let appended = |v: &Value| v["kind"] == "appended" && v["run"] == "run_live";
    let item = |v: &Value| v["call"] == 1 && appended(&v["item"]);
    let (mut seen_pages, mut seen_streams) = (vec![false; 20], vec![false; 3]);
    let mut seq = 0;
    while seen_pages.contains(&false) || seen_streams.contains(&false) {
        seq += 1;
        assert!(seq < 30, "every page and stream hears of the change");
        append_user(&path, "run_live", seq);
        let wait = Duration::from_millis(500);
        for (i, page) in pages.iter_mut().enumerate() {
            let page = page.as_mut().unwrap();
            seen_pages[i] |= page.within(wait, "item", item).is_some();
        }
        for (i, st) in streams.iter_mut().enumerate() {
            seen_streams[i] |= st.within(wait, "change", appended).is_some();
        }
    }
    assert_eq!(
        inotify_instances(pid),
        1,
        "one watcher for 20 pages and 3 streams"
    );
    // The last to go stops it.
    drop(pages);
    drop(streams);
    let gone = Instant::now();
    while inotify_instances(pid) > 0 {
        assert!(
            gone.elapsed() < Duration::from_secs(20),
            "the watch stops when the last page and stream have gone"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_page_calls_streaming_commands_on_its_own_stream_only() {
    let t = demo();
    let s = Served::start(&[&t.path().join("runs")], &[]);
    let headers = [
        s.bearer(),
        s.origin(),
        "X-Mctl-Client: page-without-stream".into(),
        "X-Mctl-Call: 1".into(),
    ];
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let r = s.send("POST", "/api/call/watch_changes", &headers, b"");
    assert_eq!(r.status, 409, "a page opens its stream first");
    let r = s.send("POST", "/api/call/watch_changes", &headers[..3], b"");
    assert_eq!(r.status, 400, "a page's streaming call is numbered");
    assert_eq!(
        s.send("GET", "/api/page", &[&s.bearer()], b"").status,
        400,
        "a page names itself"
    );

    // A page whose stream ends is forgotten: its next streaming call finds no stream.
    let mut page = None;
    page_call(
        &s,
        &mut page,
        "page-short-lived",
        1,
        "watch_changes",
        &Value::Null,
    );
    page.as_mut().unwrap().until("done", |v| v["call"] == 1);
    drop(page);
    let headers = [
        s.bearer(),
        s.origin(),
        "X-Mctl-Client: page-short-lived".into(),
        "X-Mctl-Call: 2".into(),
    ];
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    // The server learns of the closed stream when it next writes to it: asked until it has.
    let until = Instant::now() + Duration::from_secs(20);
    let status = loop {
        let status = (s.send("POST", "/api/call/watch_changes", &headers, b"")).status;
        if status == 409 || Instant::now() > until {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, 409);
}

#[test]
fn a_search_streams_its_hits_and_a_page_that_stops_reading_holds_up_no_one() {
    let t = demo();
    let dir = t.path().join("runs");
    // 24 MB of lines that all match: far more hits than any buffer holds.
    let big = "the quick brown fox jumps over the lazy dog, again and again\n".repeat(400_000);
    RunFile::new(&dir, "run_big_log")
        .user("log")
        .tool("toolu_log", "bash", &big, true)
        .done()
        .write();
    let s = Served::start(&[&dir], &[]);
    let d = dir.display().to_string();
    // One page asks for every hit and reads none of them.
    let mut stalled = None;
    page_call(
        &s,
        &mut stalled,
        "page-stalled-1",
        1,
        "search",
        &json!({"dirs": [d], "pattern": "fox"}),
    );
    std::thread::sleep(Duration::from_millis(500));
    // Another page's search streams all its hits, then the summary, which counts them, while
    // the first is still open and unread.
    let started = Instant::now();
    let mut page = None;
    let small = json!({"dirs": [d], "pattern": "dark mode", "ignoreCase": true});
    page_call(&s, &mut page, "page-reading-1", 1, "search", &small);
    let st = page.as_mut().unwrap();
    let mut hits = 0;
    let summary = loop {
        let (name, data) = st.next_event().expect("the search ends with done");
        let v: Value = serde_json::from_str(&data).unwrap();
        match name.as_str() {
            "item" => hits += v["item"]["hits"].as_array().unwrap().len() as u64,
            "done" => break v["value"].clone(),
            other => panic!("{other}: {data}"),
        }
    };
    // (A search held up by the page would wait out the 30 s read timeouts.)
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(hits > 0);
    assert_eq!(summary["hits"], hits);
    let cli = mctl(&dir, &["search", "dark mode", "-i", "--json"]);
    assert_eq!(
        stdout(&cli).lines().count() as u64 - 1,
        hits,
        "the CLI finds the same hits"
    );
    let started = Instant::now();
    for _ in 0..10 {
        assert_eq!(s.get("/api/runs").status, 200);
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn sigterm_ends_the_server_and_its_streams_at_once() {
    let t = demo();
    let log = tempfile::NamedTempFile::new().unwrap();
    let how = client::Launch {
        env: vec![("MCTL_LOG", "info".into())],
        log: Some(log.reopen().unwrap()),
        ..client::Launch::default()
    };
    let mut s = Served::start_with(&[&t.path().join("runs")], &[], how);
    let mut live = s.open_stream("GET", "/api/events", &[&s.bearer()], b"");
    let mut page = None;
    page_call(
        &s,
        &mut page,
        "page-at-shutdown",
        1,
        "watch_changes",
        &Value::Null,
    );
    page.as_mut().unwrap().until("done", |v| v["call"] == 1);
    assert_eq!(live.status, 200);
    let pid = s.child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    // Streams are ended by the server (not cut after the grace period of 5 s, which it says),
    // and nothing else holds the exit up that long.
    let said = std::fs::read_to_string(log.path()).unwrap();
    assert!(!said.contains("did not end in time"), "{said}");
    assert!(
        started.elapsed() < Duration::from_millis(4_900),
        "{:?}",
        started.elapsed()
    );
    assert!(
        live.next_event().is_none() && live.ended_cleanly(),
        "the stream ended"
    );
    let page = page.as_mut().unwrap();
    assert!(
        page.next_event().is_none() && page.ended_cleanly(),
        "the page's stream ended"
    );
}
