//! `mctl serve` under abuse, over real sockets on loopback: half-sent requests and idle sockets
//! are dropped, a descriptor flood keeps no real request out, refusals are summarised in the
//! log rather than logged one by one, and every command checks a run as the REST routes do.
//! Counts and times are kept small: the test hooks shorten the timeouts.

use super::client::{Launch, Served};
use super::{demo, RUN};
use serde_json::{json, Value};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Whether the server has closed `s` (a read gives its end, or an error other than waiting).
fn closed(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    let mut reader = s;
    let gone = loop {
        match reader.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => continue, // an answer (a 408, say) before the end
            Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    s.set_nonblocking(false).unwrap();
    gone
}

/// Waits until every socket of `socks` is closed, or `deadline`; returns how many still stand.
fn wait_closed(socks: &mut [TcpStream], deadline: Instant) -> usize {
    let mut open: Vec<usize> = (0..socks.len()).collect();
    while !open.is_empty() && Instant::now() < deadline {
        open.retain(|&i| !closed(&socks[i]));
        if !open.is_empty() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    open.len()
}

/// What the server logged to `path` once `done` holds of it (read again until it does, for
/// up to 30 s: its summaries are written on a timer).
fn log_until(path: &std::path::Path, done: impl Fn(&str) -> bool) -> String {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let said = std::fs::read_to_string(path).unwrap_or_default();
        if done(&said) || Instant::now() > until {
            return said;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn hooks(header_ms: u64) -> Vec<(&'static str, String)> {
    vec![("MCTL_TEST_HEADER_TIMEOUT_MS", header_ms.to_string())]
}

#[test]
fn half_sent_requests_and_idle_sockets_are_dropped_at_the_timeout() {
    let t = demo();
    // Long enough that setting the sockets up on a loaded machine does not reach it.
    let timeout = Duration::from_millis(5000);
    let how = Launch {
        env: hooks(5000),
        ..Launch::default()
    };
    let s = Served::start_with(&[&t.path().join("runs")], &[], how);
    let connect = || TcpStream::connect(&s.bind).unwrap();
    let started = Instant::now();
    // Half a request: its line and one header, then nothing.
    let mut half: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut c = connect();
            let head = format!("GET /api/runs HTTP/1.1\r\nHost: {}\r\n", s.bind);
            c.write_all(head.as_bytes()).unwrap();
            c
        })
        .collect();
    // Nothing at all.
    half.extend((0..10).map(|_| connect()));
    // A byte every 200 ms, for ever.
    let trickling: Vec<_> = (0..10)
        .map(|_| {
            let mut c = connect();
            std::thread::spawn(move || {
                let begun = Instant::now();
                let _ = c.write_all(b"GET / HTTP/1.1\r\nX-Slow: ");
                while begun.elapsed() < Duration::from_secs(60) {
                    if c.write_all(b"a").is_err() || closed(&c) {
                        return begun.elapsed();
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                begun.elapsed()
            })
        })
        .collect();
    // A request answered, its connection kept alive, then idle.
    let mut kept = connect();
    let head = format!(
        "GET /api/runs HTTP/1.1\r\nHost: {}\r\n{}\r\n\r\n",
        s.bind,
        s.bearer()
    );
    kept.write_all(head.as_bytes()).unwrap();
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    // Nothing is dropped before the timeout…
    std::thread::sleep(Duration::from_millis(500));
    let early = half.iter().filter(|c| closed(c)).count();
    assert_eq!(early, 0, "{early} sockets were closed before the timeout");
    // …and a real request is answered meanwhile.
    assert_eq!(s.get("/api/runs").status, 200);
    // Every one of them is dropped after it (a loaded machine gets a margin; a socket never
    // dropped stands for a minute).
    let deadline = started + timeout + Duration::from_secs(20);
    assert_eq!(
        wait_closed(&mut half, deadline),
        0,
        "half-sent sockets still open"
    );
    assert!(wait_closed(std::slice::from_mut(&mut kept), deadline) == 0);
    for t in trickling {
        let lasted = t.join().unwrap();
        assert!(
            lasted < timeout + Duration::from_secs(20),
            "a trickling socket lasted {lasted:?}"
        );
    }
}

#[test]
fn a_descriptor_flood_keeps_no_real_request_out() {
    let t = demo();
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut env = hooks(10_000);
    env.push(("MCTL_LOG", "info".into()));
    env.push(("MCTL_TEST_LOG_INTERVAL_MS", "300".into()));
    // 128 descriptors: the server holds at most 64 connections.
    let how = Launch {
        env,
        nofile: Some(128),
        log: Some(log.reopen().unwrap()),
    };
    let s = Served::start_with(&[&t.path().join("runs")], &[], how);
    // Three times as many idle connections as the cap, from anyone: no token, no request.
    let mut flood: Vec<TcpStream> = (0..192)
        .map(|_| TcpStream::connect(&s.bind).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A real request is answered at once, long before the flood's sockets time out.
    let asked = Instant::now();
    let runs = s.get("/api/runs");
    assert_eq!(runs.status, 200);
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "answered after {:?}",
        asked.elapsed()
    );
    // The oldest idle sockets made room: at most the cap of them still stand.
    let open = flood.iter().filter(|c| !closed(c)).count();
    assert!(open <= 64, "{open} idle connections held, over the cap");
    // Once the timeout has passed, none stands, and requests are still answered.
    let deadline = Instant::now() + Duration::from_secs(30);
    assert_eq!(wait_closed(&mut flood, deadline), 0);
    assert_eq!(s.get("/api/runs").status, 200);
    // The summaries are written on a timer: read until they tell the whole flood.
    let shed_in = |said: &str| -> u64 {
        said.lines()
            .filter_map(|l| {
                l.split("shed ")
                    .nth(1)?
                    .split(' ')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    };
    let said = log_until(log.path(), |said| shed_in(said) >= 128);
    drop(s);
    assert!(
        said.contains("at most 64 connections at once"),
        "the cap follows the descriptor limit: {said}"
    );
    let shed = shed_in(&said);
    assert!(shed >= 128, "{shed} connections said to be shed: {said}");
    // Accepts that found no descriptor free (while closed sockets were on their way out) are
    // waited out and said in the summaries, never once each.
    let spent = said.lines().filter(|l| l.contains("Too many open files"));
    assert!(spent.count() <= 3, "{said}");
}

#[test]
fn refusals_are_counted_in_a_summary_not_logged_one_by_one() {
    let t = demo();
    let log = tempfile::NamedTempFile::new().unwrap();
    let how = Launch {
        env: vec![
            ("MCTL_LOG", "info".into()),
            ("MCTL_TEST_LOG_INTERVAL_MS", "300".into()),
        ],
        log: Some(log.reopen().unwrap()),
        ..Launch::default()
    };
    let s = Served::start_with(&[&t.path().join("runs")], &[], how);
    let begun = Instant::now();
    for _ in 0..150 {
        assert_eq!(s.send("GET", "/api/runs", &[], b"").status, 401);
    }
    for _ in 0..50 {
        let r = s.send(
            "GET",
            "/api/runs",
            &[&s.bearer(), "Host: evil.example"],
            b"",
        );
        assert_eq!(r.status, 421);
    }
    let count = |said: &str, why: &str| -> u64 {
        let clause = |l: &str| {
            let (_, reasons) = l.split_once(" in the last ")?.1.split_once(": ")?;
            let c = reasons.split("; ").find(|c| c.ends_with(why))?;
            c.split(' ').next()?.parse::<u64>().ok()
        };
        said.lines()
            .filter(|l| l.contains("refused"))
            .filter_map(clause)
            .sum()
    };
    let (unknown, elsewhere) = ("without the token (401)", "for another host (421)");
    // The summaries are written on a timer: read until they tell every refusal.
    let said = log_until(log.path(), |said| {
        count(said, unknown) >= 150 && count(said, elsewhere) >= 50
    });
    let took = begun.elapsed();
    drop(s);
    // One line a summary at most, never one a refusal.
    let lines = said.lines().filter(|l| l.contains("refused")).count();
    let summaries = (took.as_millis() / 300) as usize + 2;
    assert!(
        (1..=summaries.min(100)).contains(&lines),
        "200 refusals took {lines} lines in {took:?}"
    );
    assert_eq!(count(&said, unknown), 150, "{said}");
    assert_eq!(count(&said, elsewhere), 50, "{said}");
}

/// Every command of the page's transport that names a run, with `run` in its place.
fn calls_naming(dir: &str, run: &str) -> Vec<(&'static str, Value)> {
    let r = json!({"dir": dir, "run": run, "call": "x"});
    let good = json!({"dir": dir, "run": RUN, "call": "x"});
    vec![
        ("run_detail", json!({"dir": dir, "run": run})),
        ("open_value", r.clone()),
        ("verify_value", r.clone()),
        ("value_lines", json!({"r": r, "first": 0, "count": 5})),
        ("value_text", json!({"r": r, "first": 0, "last": 5})),
        (
            "peek_value",
            json!({"r": r, "request": {"kind": "range", "start": 1, "end": 2}}),
        ),
        ("coverage", json!({"dir": dir, "run": run})),
        (
            "what_if",
            json!({"dir": dir, "thresholds": [1000], "run": run}),
        ),
        (
            "resume_preview",
            json!({"dir": dir, "run": run, "withoutValues": false}),
        ),
        (
            "export_run",
            json!({"dir": dir, "run": run, "options": {"format": "md", "values": "stub", "redact": true}}),
        ),
        (
            "export_preview",
            json!({"dir": dir, "run": run, "options": {"format": "md", "values": "stub", "redact": true}}),
        ),
        (
            "diff_runs",
            json!({"dirA": dir, "runA": run, "dirB": dir, "runB": RUN}),
        ),
        ("diff_results", json!({"a": r, "b": good})),
        (
            "set_pinned",
            json!({"dir": dir, "run": run, "pinned": true}),
        ),
        (
            "follow_run",
            json!({"dir": dir, "run": run, "shown": 0, "bytes": null, "token": 1}),
        ),
        (
            "search",
            json!({"dirs": [dir], "pattern": "x", "regex": false, "ignoreCase": false, "run": run}),
        ),
    ]
}

#[test]
fn every_command_checks_a_run_as_the_rest_routes_do() {
    let t = demo();
    let dir = t.path().join("runs");
    let d = dir.display().to_string();
    let s = Served::start(&[&dir], &["--allow-gc"]);
    let long = "x".repeat(900_000);
    for run in ["../../../../etc/passwd", "no_such_run", "", long.as_str()] {
        let shown = &run[..run.len().min(30)];
        if !run.is_empty() && run.len() < 100 {
            let rest = s.get(&format!("/api/runs/{}", run.replace('/', "%2F")));
            assert_eq!(rest.status, 404, "{shown}");
        }
        for (cmd, body) in calls_naming(&d, run) {
            let r = s.post(&format!("/api/call/{cmd}"), &body);
            assert_eq!(
                r.status,
                404,
                "{cmd} {shown}: {}",
                String::from_utf8_lossy(&r.body)
            );
            assert_eq!(r.json()["code"], "unknown-run", "{cmd} {shown}");
            assert!(r.body.len() < 1024, "{cmd} repeats the whole name back");
        }
        // A page's streaming call is refused at once too, not answered 202.
        let page_call = s.send(
            "POST",
            "/api/call/follow_run",
            &[
                &s.bearer(),
                &s.origin(),
                "X-Mctl-Client: abcdefgh12345678",
                "X-Mctl-Call: 1",
            ],
            json!({"dir": d, "run": run, "shown": 0, "bytes": null, "token": 1})
                .to_string()
                .as_bytes(),
        );
        assert_eq!(page_call.status, 404, "follow_run from a page, {shown}");
    }
    // `run_rows` answers a run that is gone as gone, and refuses a name no run could have.
    let rows = s.post(
        "/api/call/run_rows",
        &json!({"runs": [{"dir": d, "run": "no_such_run"}]}),
    );
    assert_eq!(rows.status, 200);
    assert_eq!(rows.json()[0]["run"], Value::Null);
    for bad in ["../../etc/passwd", "", long.as_str()] {
        let rows = s.post(
            "/api/call/run_rows",
            &json!({"runs": [{"dir": d, "run": bad}]}),
        );
        assert_eq!(rows.status, 404);
    }
    // And nothing of it was stored.
    assert!(crate::support::stdout(&crate::support::mctl(&dir, &["pins"])).is_empty());
    // The checks let a real run through.
    let ok = s.post(
        "/api/call/search",
        &json!({"dirs": [d], "pattern": "x", "regex": false, "ignoreCase": false, "run": RUN}),
    );
    assert_eq!(ok.status, 200);
    assert!(String::from_utf8_lossy(&ok.body).contains("event: done"));
}
