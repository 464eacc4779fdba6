//! `mctl search` and `RunsDir::search`: every kind of hit, the line model's edge cases, and a
//! generated runs directory searched as a straightforward reference scan would.

use crate::support::{mctl, open_runs_dir, stdout, RunFile, OLD_MS};
use mission_control::demo::write_demo;
use mission_control::runs::{RetentionState, RunOptions, RunsDir};
use mission_control::search::{HitKind, Kinds, SearchHit, SearchQuery, SearchSummary};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

fn opts() -> RunOptions {
    RunOptions {
        now_ms: OLD_MS + 86_400_000,
        ..RunOptions::default()
    }
}

fn query(pattern: &str) -> SearchQuery {
    SearchQuery {
        pattern: pattern.into(),
        regex: false,
        ignore_case: false,
        run: None,
        kinds: Kinds::ALL,
        max: None,
    }
}

/// Every hit of `q` (in a stable order) and the summary.
fn search_in(dir: &RunsDir, q: &SearchQuery) -> (Vec<SearchHit>, SearchSummary) {
    let hits = Mutex::new(Vec::new());
    let cancel = AtomicBool::new(false);
    let summary = mission_control::search::search_runs(dir, q, &cancel, &|batch| {
        hits.lock().unwrap().extend(batch)
    })
    .unwrap();
    let mut hits = hits.into_inner().unwrap();
    hits.sort_by_key(key);
    (hits, summary)
}

fn search(root: &Path, q: &SearchQuery) -> (Vec<SearchHit>, SearchSummary) {
    search_in(&open_runs_dir(root, opts()), q)
}

type Key = (
    String,
    HitKind,
    Option<u64>,
    Option<String>,
    Option<String>,
    u32,
    u64,
);

fn key(h: &SearchHit) -> Key {
    (
        h.run.clone(),
        h.kind,
        h.line,
        h.tool_call_id.clone(),
        h.value_id.clone(),
        h.text_index,
        h.text_line,
    )
}

/// A peek's line model: split on `\n`, a `\r` before it not part of the line, no line after a
/// last `\n`.
fn lines_of(bytes: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect()
}

/// The reference: each run read whole through the run model for its results' states, every
/// transcript line parsed into a `Value`, every value file read whole, and each line of each
/// text tested with `contains`.
fn reference(root: &Path, needle: &str) -> BTreeMap<Key, String> {
    let dir = open_runs_dir(root, opts()).with_index(false);
    let mut out = BTreeMap::new();
    let mut add = |k: Key, text: &[u8]| {
        out.insert(k, String::from_utf8_lossy(text).into_owned());
    };
    let mut seen_runs = BTreeSet::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let id = name
            .strip_suffix(".jsonl")
            .or_else(|| name.strip_suffix(".values"))
            .or_else(|| name.strip_suffix(".summary.json"));
        let Some(id) = id else { continue };
        if !seen_runs.insert(id.to_owned()) {
            continue;
        }
        let results = dir.detail(id).map(|d| d.results).unwrap_or_default();
        let retained: BTreeSet<u64> = results
            .iter()
            .filter(|r| r.state == RetentionState::Retained)
            .map(|r| r.line)
            .collect();
        let transcript = root.join(format!("{id}.jsonl"));
        if let Ok(text) = std::fs::read(&transcript) {
            for (i, raw) in text.split(|b| *b == b'\n').enumerate() {
                let n = i as u64 + 1;
                if retained.contains(&n) || i + 1 == text.split(|b| *b == b'\n').count() {
                    continue; // searched through the value; or the text after the last \n
                }
                let Ok(line) = serde_json::from_slice::<Value>(raw) else {
                    continue;
                };
                let e = &line["event"];
                let call = e["toolCallId"].as_str().map(str::to_owned);
                let mut texts: Vec<(HitKind, u32, String)> = Vec::new();
                match e["type"].as_str() {
                    Some("user_message") => {
                        if let Some(t) = e["text"].as_str() {
                            texts.push((HitKind::Message, 0, t.into()));
                        }
                    }
                    Some("assistant_message") => {
                        let blocks = e["content"].as_array().into_iter().flatten();
                        let text_blocks = blocks
                            .filter(|b| matches!(b["type"].as_str(), Some("text" | "thinking")));
                        for (i, b) in text_blocks.enumerate() {
                            if let Some(t) = b["text"].as_str() {
                                texts.push((HitKind::Message, i as u32, t.into()));
                            }
                        }
                    }
                    Some("tool_call_started") => strings(&e["input"], &mut texts),
                    Some("tool_call_finished") => {
                        if let Some(t) = e["result"]["content"].as_str() {
                            texts.push((HitKind::Result, 0, t.into()));
                        }
                    }
                    _ => {}
                }
                for (kind, index, t) in texts {
                    for (j, l) in lines_of(t.as_bytes()).into_iter().enumerate() {
                        if memchr::memmem::find(l, needle.as_bytes()).is_some() {
                            let at = Some(n);
                            let k = (
                                id.to_owned(),
                                kind,
                                at,
                                call.clone(),
                                None,
                                index,
                                j as u64 + 1,
                            );
                            add(k, l);
                        }
                    }
                }
            }
        }
        let vdir = root.join(format!("{id}.values"));
        let Ok(files) = std::fs::read_dir(&vdir) else {
            continue;
        };
        if std::fs::symlink_metadata(&vdir)
            .unwrap()
            .file_type()
            .is_symlink()
        {
            continue;
        }
        for f in files {
            let f = f.unwrap();
            let name = f.file_name().into_string().unwrap();
            let Some(stem) = name.strip_suffix(".txt") else {
                continue;
            };
            if !f.file_type().unwrap().is_file() {
                continue;
            }
            let result = results
                .iter()
                .rev()
                .find(|r| r.value_id == stem && r.state == RetentionState::Retained);
            if result.is_none() && results.iter().any(|r| r.value_id == stem) {
                continue;
            }
            let bytes = std::fs::read(f.path()).unwrap();
            for (j, l) in lines_of(&bytes).into_iter().enumerate() {
                if memchr::memmem::find(l, needle.as_bytes()).is_some() {
                    let k = (
                        id.to_owned(),
                        HitKind::Value,
                        result.map(|r| r.line),
                        result.map(|r| r.tool_call_id.clone()),
                        Some(stem.to_owned()),
                        0,
                        j as u64 + 1,
                    );
                    add(k, l);
                }
            }
        }
    }
    out
}

/// The input's strings in document order: `Value` sorts an object's keys, and the transcripts
/// here are written from `Value`s, their keys sorted too.
fn strings(v: &Value, out: &mut Vec<(HitKind, u32, String)>) {
    match v {
        Value::String(s) => out.push((HitKind::Input, out.len() as u32, s.clone())),
        Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        Value::Object(m) => m.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn assert_as_reference(root: &Path, needle: &str) -> usize {
    let want = reference(root, needle);
    for indexed in [false, true] {
        let dir = open_runs_dir(root, opts()).with_index(indexed);
        let (hits, summary) = search_in(&dir, &query(needle));
        let got: BTreeMap<Key, &SearchHit> = hits.iter().map(|h| (key(h), h)).collect();
        assert_eq!(got.len(), hits.len(), "{needle}: each line is one hit");
        let got_keys: BTreeSet<&Key> = got.keys().collect();
        let want_keys: BTreeSet<&Key> = want.keys().collect();
        assert_eq!(got_keys, want_keys, "{needle} (index {indexed})");
        for (k, line) in &want {
            let h = got[k];
            assert_eq!(h.line_bytes as usize, line.len(), "{k:?}");
            if line.len() <= 512 {
                assert_eq!(&h.text, line, "{k:?}");
            } else {
                assert!(line.contains(&h.text) && h.text.len() <= 512, "{k:?}");
            }
            let m = &h.text[h.match_start as usize..h.match_end as usize];
            assert_eq!(m, needle, "{k:?}");
        }
        assert_eq!(summary.hits as usize, hits.len());
        assert!(
            !summary.truncated && summary.skipped.is_empty(),
            "{summary:?}"
        );
    }
    want.len()
}

/// A runs directory of every shape a search meets, from `seed`.
fn generate(root: &Path, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let words = [
        "alpha",
        "NEEDLE",
        "beta\tgamma",
        "needle",
        "é NEEDLE ü",
        "x\"NEEDLE\"",
        "{}",
        "[NEEDLE].*",
    ];
    let text = |rng: &mut fastrand::Rng, lines: usize| -> String {
        let mut t = String::new();
        for i in 0..lines {
            for _ in 0..rng.usize(1..6) {
                t.push_str(words[rng.usize(..words.len())]);
                t.push(' ');
            }
            if i + 1 < lines || rng.bool() {
                t.push_str(if rng.u8(..8) == 0 { "\r\n" } else { "\n" });
            }
        }
        t
    };
    for r in 0..12 {
        let mut run = RunFile::new(root, &format!("run_{seed}_{r}"));
        run.user(&text(&mut rng, 3));
        run.event(json!({"type": "assistant_message", "content": [
            {"type": "thinking", "text": text(&mut rng, 2)},
            {"type": "text", "text": text(&mut rng, 2)},
            {"type": "tool_call", "toolCallId": "x", "name": "NEEDLE"}]}));
        for c in 0..rng.usize(1..6) {
            let call = format!("toolu_{r}_{c}");
            run.event(
                json!({"type": "tool_call_started", "toolCallId": call, "name": "bash",
                "input": {"command": text(&mut rng, 1), "n": 3, "list": [text(&mut rng, 2)]}}),
            );
            let big = rng.u8(..3) != 0;
            let mut content = text(&mut rng, if big { 2500 } else { 4 });
            if rng.u8(..6) == 0 {
                content.push_str(&"NEEDLE".repeat(200)); // a line over 512 bytes
            }
            match (big, rng.u8(..4)) {
                (true, 0) => {} // unretained: no value file
                (true, 1) => {
                    run.value(&call, b"damaged NEEDLE\n");
                }
                (true, _) => {
                    run.value(&call, content.as_bytes());
                }
                _ => {}
            }
            run.event(json!({"type": "tool_call_finished", "toolCallId": call,
                "result": {"ok": true, "content": content}}));
        }
        if rng.u8(..3) == 0 {
            run.value("toolu_stray", b"stray NEEDLE\r\nlast NEEDLE");
        }
        run.done();
        run.write();
    }
}

#[test]
fn a_generated_runs_directory_searches_as_a_reference_scan_would() {
    for seed in 1..=4 {
        let root = tempfile::tempdir().unwrap();
        generate(root.path(), seed);
        let n = assert_as_reference(root.path(), "NEEDLE");
        assert!(n > 100, "seed {seed}: {n} hits");
        assert_as_reference(root.path(), "gamma");
        assert_as_reference(root.path(), "é NEEDLE");
        assert_as_reference(root.path(), "\"NEEDLE\"");
        assert_as_reference(root.path(), "[NEEDLE].*");
    }
}

#[test]
fn the_demo_and_the_fixtures_search_as_a_reference_scan_would() {
    let root = tempfile::tempdir().unwrap();
    write_demo(root.path(), 1, OLD_MS).unwrap();
    for needle in ["FAILED", "error", "invoice", "\u{202E}", "toolu_"] {
        assert_as_reference(root.path(), needle);
    }
    let fixtures = crate::support::fixture("tolerant");
    for needle in ["a", "ok", "retained"] {
        assert_as_reference(fixtures.path(), needle);
    }
}

/// A search of every run says it read as many runs as the listing shows, and counts the value
/// folders without a run (whose strays it searches too) apart from them.
#[test]
fn a_search_counts_the_runs_the_listing_counts() {
    let root = tempfile::tempdir().unwrap();
    write_demo(root.path(), 1, OLD_MS).unwrap();
    let dir = open_runs_dir(root.path(), opts());
    let listed = dir.list().unwrap().len() as u64;
    let (_, summary) = search_in(&dir, &query("error"));
    assert_eq!(summary.runs, listed);
    // The demo has one value folder whose run is gone.
    assert_eq!(summary.value_dirs_without_run, 1);
}

/// A run with a hit of every kind, and a retained value the model peeked into.
fn every_kind(root: &Path) -> String {
    use mission_control::retained::{peek_text, value_id, PeekRequest};
    let lines: Vec<String> = (1..=3000)
        .map(|n| match n {
            1 | 1493 | 1500 | 3000 => format!("line {n} NEEDLE"),
            _ => format!("line {n} of the log"),
        })
        .collect();
    let value = lines.join("\n"); // no newline after the last line
    let peek = peek_text(
        &value_id("toolu_big"),
        &value,
        &PeekRequest::Range {
            start: 1490,
            end: Some(1495),
        },
    )
    .unwrap();
    let mut run = RunFile::new(root, "run_kinds");
    run.user("find the NEEDLE\nsecond line");
    run.event(json!({"type": "assistant_message", "content": [
        {"type": "thinking", "text": "no match"},
        {"type": "text", "text": "the NEEDLE is here"}]}));
    run.event(
        json!({"type": "tool_call_started", "toolCallId": "toolu_read", "name": "read",
        "input": {"path": "src/NEEDLE.rs"}}),
    );
    run.event(
        json!({"type": "tool_call_finished", "toolCallId": "toolu_read",
        "result": {"ok": true, "content": "fn main() {}\n// NEEDLE inline\n"}}),
    );
    run.tool("toolu_big", "bash", &value, true);
    run.event(
        json!({"type": "tool_call_started", "toolCallId": "toolu_peek", "name": "peek_value",
        "input": {"id": "toolu_big", "start": 1490, "end": 1495}}),
    );
    run.event(
        json!({"type": "tool_call_finished", "toolCallId": "toolu_peek",
        "result": {"ok": true, "content": peek.text}}),
    );
    // CRLF lines, retained.
    run.tool(
        "toolu_crlf",
        "bash",
        &"a\r\nNEEDLE at the end\r\n".repeat(2000),
        true,
    );
    // Bytes that are not UTF-8 can only be a stray file: no transcript line holds them.
    run.value("toolu_binary", b"\x00\xff\xfe NEEDLE \xc3\n\x00\x00");
    run.done();
    run.write();
    value_id("toolu_big")
}

#[test]
fn every_kind_of_hit_with_the_lines_the_model_was_shown() {
    let root = tempfile::tempdir().unwrap();
    let big = every_kind(root.path());
    let (hits, summary) = search(root.path(), &query("NEEDLE"));
    let of = |kind| hits.iter().filter(move |h| h.kind == kind);
    let messages: Vec<_> = of(HitKind::Message)
        .map(|h| (h.line, h.text.as_str()))
        .collect();
    assert_eq!(
        messages,
        [
            (Some(1), "find the NEEDLE"),
            (Some(2), "the NEEDLE is here")
        ]
    );
    let input: Vec<_> = of(HitKind::Input).collect();
    assert_eq!(input.len(), 1);
    assert_eq!(input[0].tool_call_id.as_deref(), Some("toolu_read"));
    assert_eq!(input[0].text, "src/NEEDLE.rs");
    // The inline result and the peek's answer (a result too); the retained results are
    // searched through their values only.
    let results: Vec<_> = of(HitKind::Result)
        .map(|h| (h.tool_call_id.as_deref().unwrap(), h.line, h.text_line))
        .collect();
    assert_eq!(
        results,
        [("toolu_read", Some(4), 2), ("toolu_peek", Some(8), 5)]
    );

    // The retained value: its stub showed lines 1 and 3000, the peek 1490-1495.
    let value: BTreeMap<u64, Option<bool>> = of(HitKind::Value)
        .filter(|h| h.value_id.as_deref() == Some(big.as_str()))
        .map(|h| (h.value_line.unwrap(), h.seen))
        .collect();
    let want = [(1, true), (1493, true), (1500, false), (3000, true)];
    assert_eq!(value, want.map(|(l, s)| (l, Some(s))).into_iter().collect());
    // The same verdicts as coverage's.
    let dir = open_runs_dir(root.path(), opts());
    let cov = mission_control::insights::coverage(
        &dir,
        "run_kinds",
        Some("toolu_big"),
        &Default::default(),
    )
    .unwrap();
    let shown = |l: u64| {
        let c = &cov[0];
        let peeked = c.peeks.iter().flat_map(|p| p.lines.iter());
        c.stub_lines
            .iter()
            .chain(peeked)
            .any(|[a, b]| (*a..=*b).contains(&l))
    };
    for (l, s) in want {
        assert_eq!(shown(l), s, "line {l}");
    }

    // CRLF: the line without its \r.
    let crlf: Vec<_> = of(HitKind::Value)
        .filter(|h| h.tool_call_id.as_deref() == Some("toolu_crlf"))
        .collect();
    assert_eq!(crlf.len(), 2000);
    assert!(crlf
        .iter()
        .all(|h| h.text == "NEEDLE at the end" && h.value_line.unwrap() % 2 == 0));
    // Invalid UTF-8: searched as bytes, shown with replacement characters.
    let binary: Vec<_> = of(HitKind::Value).filter(|h| h.stray).collect();
    assert_eq!(binary.len(), 1);
    assert_eq!(binary[0].text, "\0\u{FFFD}\u{FFFD} NEEDLE \u{FFFD}");
    assert_eq!(binary[0].seen, Some(false));
    let m = &binary[0].text[binary[0].match_start as usize..binary[0].match_end as usize];
    assert_eq!(m, "NEEDLE");
    assert_eq!(summary.hits as usize, hits.len());
    assert_eq!(summary.files, 4, "one transcript and three value files");

    // --in narrows; --run names one run; case and regex are options.
    let mut q = query("needle");
    assert!(search(root.path(), &q).0.is_empty());
    q.ignore_case = true;
    q.kinds = Kinds::parse("messages,inputs").unwrap();
    let (hits, _) = search(root.path(), &q);
    assert_eq!(hits.len(), 3);
    let mut q = query(r"line 1[45]\d\d NEEDLE$");
    q.regex = true;
    q.run = Some("run_k".into());
    q.kinds = Kinds::parse("values").unwrap();
    let lines: Vec<_> = search(root.path(), &q)
        .0
        .iter()
        .map(|h| h.text_line)
        .collect();
    assert_eq!(lines, [1493, 1500]);
    q.pattern = "^NEEDLE".into();
    assert_eq!(
        search(root.path(), &q).0.len(),
        2000,
        "`^` at each line's start"
    );
}

#[test]
fn a_match_across_every_read_boundary_is_found_once() {
    let root = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(root.path(), "run_chunks");
    let mut want = Vec::new();
    for (i, boundary) in [8usize << 10, 64 << 10, 256 << 10, 1 << 20]
        .into_iter()
        .enumerate()
    {
        for shift in [1usize, 3, 5] {
            let mut bytes = Vec::new();
            while bytes.len() < boundary - shift {
                bytes.extend_from_slice(b"filler text of a log line\n");
            }
            bytes.truncate(boundary - shift);
            let line = bytes.iter().filter(|b| **b == b'\n').count() as u64 + 1;
            bytes.extend_from_slice(b"NEEDLE\nafter\n");
            run.value(&format!("toolu_{i}_{shift}"), &bytes);
            want.push(line);
        }
    }
    run.write();
    let (hits, _) = search(root.path(), &query("NEEDLE"));
    let mut got: Vec<u64> = hits.iter().map(|h| h.value_line.unwrap()).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn a_30_mb_transcript_line_is_searched_as_a_stream() {
    let root = tempfile::tempdir().unwrap();
    let mut content = String::new();
    let mut n = 0u64;
    while content.len() < 30 << 20 {
        n += 1;
        content.push_str(&format!("row {n} of a very long result\n"));
        if n == 400_000 {
            content.push_str("the NEEDLE in the middle\n");
            n += 1;
        }
    }
    content.push_str("last NEEDLE"); // the text's last line, without a newline
    let mut run = RunFile::new(root.path(), "run_big");
    // Unretained (no value file): its text is searched in the transcript.
    run.tool("toolu_unretained", "bash", &content, false);
    // Retained: searched through its value file, never through its transcript copy.
    run.tool("toolu_retained", "bash", &content, true);
    // Keys in an order the walker must not rely on: `text` before `type`.
    let big_text = format!("{}NEEDLE in a message", "x".repeat(9 << 20));
    run.event(json!({"type": "user_message", "text": big_text}));
    run.event(json!({"type": "assistant_message", "content": [
        {"text": big_text, "type": "text"}, {"text": "NEEDLE", "type": "tool_call"}]}));
    run.done();
    let path = run.write();
    // An input whose keys are not sorted (a `Value` would sort them): its strings count in
    // the order the line has them.
    let input = format!(
        r#"{{"b":"{}","a":["one","NEEDLE two"]}}"#,
        "x".repeat(9 << 20)
    );
    let line = format!(
        r#"{{"schemaVersion":1,"runId":"run_big","seq":9,"ts":{OLD_MS},"event":{{"type":"tool_call_started","toolCallId":"toolu_w","name":"write","input":{input}}}}}"#
    );
    crate::index::append(&path, &format!("{line}\n"));
    let (hits, summary) = search(root.path(), &query("NEEDLE"));
    let got: Vec<_> = hits
        .iter()
        .map(|h| (h.kind, h.tool_call_id.as_deref(), h.text_line, h.text_index))
        .collect();
    let mid = 400_001;
    let last = n + 1;
    let want = [
        (HitKind::Message, None, 1, 0),
        (HitKind::Message, None, 1, 0),
        (HitKind::Input, Some("toolu_w"), 1, 2),
        (HitKind::Result, Some("toolu_unretained"), mid, 0),
        (HitKind::Result, Some("toolu_unretained"), last, 0),
        (HitKind::Value, Some("toolu_retained"), mid, 0),
        (HitKind::Value, Some("toolu_retained"), last, 0),
    ];
    let mut want = want.to_vec();
    want.sort();
    let mut got = got.clone();
    got.sort();
    assert_eq!(got, want);
    let message = hits.iter().find(|h| h.kind == HitKind::Message).unwrap();
    assert!(message.text.len() <= 512 && message.text.ends_with("NEEDLE in a message"));
    assert!(summary.skipped.is_empty(), "{:?}", summary.skipped);
}

#[test]
fn max_cuts_the_search_and_cancel_stops_it() {
    let root = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(root.path(), "run_many");
    for i in 0..40 {
        run.value(&format!("toolu_{i}"), "NEEDLE\n".repeat(1000).as_bytes());
    }
    run.write();
    let mut q = query("NEEDLE");
    q.max = Some(1234);
    let (hits, summary) = search(root.path(), &q);
    assert_eq!(hits.len(), 1234);
    assert!(summary.truncated && !summary.cancelled);
    assert_eq!(summary.hits, 1234);

    let dir = open_runs_dir(root.path(), opts());
    let cancel = AtomicBool::new(false);
    let seen = Mutex::new(0usize);
    let summary = mission_control::search::search_runs(&dir, &query("NEEDLE"), &cancel, &|batch| {
        *seen.lock().unwrap() += batch.len();
        cancel.store(true, Ordering::Relaxed);
    })
    .unwrap();
    assert!(summary.cancelled);
    let seen = *seen.lock().unwrap();
    assert!(
        seen < 40_000 && seen as u64 == summary.hits,
        "{seen} {summary:?}"
    );
}

#[test]
fn a_file_that_disappears_mid_search_is_skipped_with_a_note() {
    let root = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(root.path(), "run_gone");
    let mut files = Vec::new();
    for i in 0..60 {
        files.push(run.value(&format!("toolu_{i}"), b"NEEDLE\n"));
    }
    run.write();
    let dir = open_runs_dir(root.path(), opts());
    let cancel = AtomicBool::new(false);
    let summary = mission_control::search::search_runs(&dir, &query("NEEDLE"), &cancel, &|_| {
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
    })
    .unwrap();
    assert!(summary.hits >= 1);
    assert!(!summary.skipped.is_empty(), "{summary:?}");
    assert!(summary
        .skipped
        .iter()
        .all(|s| s.reason.contains("disappeared")));
    assert_eq!(summary.hits + summary.skipped.len() as u64, 60);
}

#[test]
fn mctl_search_streams_json_lines_and_exits_as_grep_does() {
    let root = tempfile::tempdir().unwrap();
    every_kind(root.path());
    let out = mctl(root.path(), &["search", "--json", "NEEDLE"]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (last, hits) = lines.split_last().unwrap();
    assert_eq!(last["kind"], "summary");
    for field in ["hits", "files", "bytes", "elapsedMs", "truncated"] {
        assert!(last.get(field).is_some(), "summary has {field}: {last}");
    }
    assert_eq!(last["hits"].as_u64().unwrap() as usize, hits.len());
    let value = hits
        .iter()
        .find(|h| h["kind"] == "value" && h["valueLine"] == 1500)
        .unwrap();
    for field in [
        "run",
        "line",
        "toolCallId",
        "valueId",
        "text",
        "matchStart",
        "matchEnd",
    ] {
        assert!(
            value.get(field).is_some(),
            "a value hit has {field}: {value}"
        );
    }
    assert_eq!(value["seen"], false);
    let message = hits.iter().find(|h| h["kind"] == "message").unwrap();
    assert!(message.get("seen").is_none() && message.get("valueLine").is_none());

    // Text: grouped under a heading per run and call; the unseen line said so.
    let out = mctl(
        root.path(),
        &["search", "-e", "line 1(500)? NEEDLE", "--in", "values"],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.starts_with("run_kinds  toolu_big  value "), "{text}");
    assert!(text.contains("\n1:line 1 NEEDLE\n"), "{text}");
    assert!(
        text.contains("\n1500:line 1500 NEEDLE  [never shown to the model]\n"),
        "{text}"
    );

    let out = mctl(root.path(), &["search", "nowhere to be found"]);
    assert_eq!(out.status.code(), Some(1));
    let out = mctl(root.path(), &["search", "--regex", "a(b"]);
    assert_eq!(out.status.code(), Some(2));
    let err = crate::support::stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("unclosed group"), "{err}");
    let out = mctl(root.path(), &["search", "x", "--in", "everything"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_line_too_long_to_hold_is_scanned_for_a_literal_and_skipped_with_a_note_otherwise() {
    let root = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(root.path(), "run_long");
    let mut bytes = b"before NEEDLE\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 70 << 20));
    bytes.extend_from_slice("é NEEDLE ü\nafter NEEDLE".as_bytes());
    run.value("toolu_long", &bytes);
    run.write();
    let (hits, summary) = search(root.path(), &query("NEEDLE"));
    let lines: Vec<u64> = hits.iter().map(|h| h.text_line).collect();
    assert_eq!(lines, [1, 2, 3]);
    let long = &hits[1];
    assert!(
        long.text.len() <= 512 && long.text.ends_with("é NEEDLE ü"),
        "{}",
        long.text
    );
    assert_eq!(long.line_bytes, (70 << 20) + "é NEEDLE ü".len() as u64);
    assert_eq!(
        long.text_offset + long.text.len() as u64,
        long.line_bytes,
        "the cut ends with the line"
    );
    assert!(summary.skipped.is_empty());

    let mut q = query("needle");
    q.ignore_case = true;
    let (hits, summary) = search(root.path(), &q);
    assert_eq!(hits.len(), 1, "the lines before the long one");
    assert_eq!(summary.skipped.len(), 1);
    assert!(summary.skipped[0].reason.contains("64 MiB"), "{summary:?}");
}

/// A transcript with long lines of every awkward sort, and a hit after each.
fn long_lines(root: &Path) -> std::path::PathBuf {
    let big = "row NEEDLE\n".repeat(1 << 20); // 11 MiB, over the streaming threshold
    let mut run = RunFile::new(root, "run_awkward");
    run.tool("toolu_big", "bash", &big, false);
    // A result in another event type: its hits are no result's, and cost no budget.
    run.event(json!({"type": "run_result", "result": {"content": big}}));
    run.user("after NEEDLE");
    let path = run.write();
    // A long line that is not JSON (its last brace missing), then one more hit.
    let broken = format!(
        r#"{{"schemaVersion":1,"event":{{"type":"user_message","text":"{}"}}"#,
        "x".repeat(9 << 20)
    );
    crate::index::append(&path, &format!("{broken}\n"));
    let last =
        json!({"schemaVersion": 1, "event": {"type": "user_message", "text": "last NEEDLE"}});
    crate::index::append(&path, &format!("{last}\n"));
    // The torn last line of a live run, long: not read yet, and no error.
    crate::index::append(
        &path,
        &format!(
            r#"{{"event":{{"type":"user_message","text":"{}"#,
            "NEEDLE ".repeat(2 << 20)
        ),
    );
    path
}

#[test]
fn long_transcript_lines_keep_numbering_budget_and_their_peace() {
    let root = tempfile::tempdir().unwrap();
    long_lines(root.path());
    let (hits, summary) = search(root.path(), &query("NEEDLE"));
    let results = hits.iter().filter(|h| h.kind == HitKind::Result).count();
    assert_eq!(results, 1 << 20);
    let messages: Vec<_> = hits
        .iter()
        .filter(|h| h.kind == HitKind::Message)
        .map(|h| (h.line, h.text.as_str()))
        .collect();
    assert_eq!(
        messages,
        [(Some(4), "after NEEDLE"), (Some(6), "last NEEDLE")],
        "the line after the broken one keeps its number"
    );
    assert_eq!(
        summary.hits as usize,
        hits.len(),
        "hits thrown away cost nothing"
    );
    assert_eq!(summary.skipped.len(), 1, "{:?}", summary.skipped);
    assert!(
        summary.skipped[0].reason.starts_with("line 5: "),
        "{:?}",
        summary.skipped
    );

    // --max and cancel inside a streamed line end the search, never the process.
    let mut q = query("NEEDLE");
    q.max = Some(3);
    let (hits, summary) = search(root.path(), &q);
    assert_eq!((hits.len(), summary.truncated), (3, true));
    let dir = open_runs_dir(root.path(), opts());
    let cancel = AtomicBool::new(true);
    let summary =
        mission_control::search::search_runs(&dir, &query("NEEDLE"), &cancel, &|_| {}).unwrap();
    assert!(summary.cancelled);
    let out = mctl(root.path(), &["search", "--json", "--max", "1", "NEEDLE"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&out)
    );
    assert_eq!(stdout(&out).lines().count(), 2);
}

#[test]
fn a_binary_file_is_searched_as_bytes_whatever_its_first_bytes() {
    let root = tempfile::tempdir().unwrap();
    let mut run = RunFile::new(root.path(), "run_bom");
    run.value("toolu_utf16", b"\xff\xfe NEEDLE\n");
    run.value("toolu_bom", "\u{FEFF}NEEDLE first\n".as_bytes());
    run.write();
    let (hits, _) = search(root.path(), &query("NEEDLE"));
    let texts: BTreeSet<&str> = hits.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(
        texts,
        BTreeSet::from(["\u{FFFD}\u{FFFD} NEEDLE", "\u{FEFF}NEEDLE first"])
    );
    let bom = hits
        .iter()
        .find(|h| h.text.starts_with('\u{FEFF}'))
        .unwrap();
    assert_eq!((bom.match_start, bom.line_bytes), (3, 15));
}

#[test]
fn a_value_file_that_is_a_link_is_never_read_through() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "NEEDLE outside the runs directory\n").unwrap();
    let mut run = RunFile::new(root.path(), "run_link");
    let real = run.value("toolu_real", b"NEEDLE inside\n");
    run.write();
    std::os::unix::fs::symlink(&secret, real.with_file_name("toolu_link.txt")).unwrap();
    let (hits, _) = search(root.path(), &query("NEEDLE"));
    let texts: Vec<&str> = hits.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(texts, ["NEEDLE inside"]);
}
