//! A long listing's progress on stderr, when stderr is a terminal: the runs and megabytes read
//! so far, said again on one line while the listing reads; when it ends, the line gives way to
//! what was read and how long it took. A listing that answers within half a second says
//! nothing, and nothing is said when stderr is a file or a pipe.

use mission_control::{scan_progress, ScanProgress};
use std::io::{IsTerminal, Write};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long a listing runs before its progress is shown.
fn shown_after() -> Duration {
    // A test sets `MCTL_TEST_PROGRESS_MS` to see a small listing's progress.
    crate::hooks::duration("MCTL_TEST_PROGRESS_MS", Duration::from_millis(500))
}

/// How often the line is said again.
const EVERY: Duration = Duration::from_millis(100);

/// Runs `list`, showing how far its reads have come on a terminal's stderr.
pub fn while_listing<T>(list: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return list();
    }
    let start = Instant::now();
    let before = scan_progress();
    let (done, ended) = channel::<()>();
    let after = shown_after();
    let shower = std::thread::spawn(move || {
        let mut shown = false;
        loop {
            let wait = match after.checked_sub(start.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => EVERY,
            };
            match ended.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => break,
            }
            let now = since(before);
            if now.runs > 0 && start.elapsed() >= after {
                say(&format!("\r\x1b[2Kreading {}", figures(&now, true)));
                shown = true;
            }
        }
        shown
    });
    let out = list();
    drop(done);
    let shown = shower.join().unwrap_or(false);
    let now = since(before);
    if shown || (now.runs > 0 && start.elapsed() >= after) {
        let took = start.elapsed().as_secs_f64();
        say(&format!(
            "\r\x1b[2Kread {} in {took:.1} s\n",
            figures(&now, false)
        ));
    }
    out
}

/// What this listing read, not the process's earlier ones.
fn since(before: ScanProgress) -> ScanProgress {
    let now = scan_progress();
    ScanProgress {
        runs: now.runs - before.runs,
        runs_done: now.runs_done - before.runs_done,
        bytes: now.bytes - before.bytes,
        bytes_done: now.bytes_done - before.bytes_done,
    }
}

/// `1,234 of 5,000 runs (312 of 1,347 MB)` while reading; `5,000 runs (1,347 MB)` at the end.
fn figures(p: &ScanProgress, reading: bool) -> String {
    let mb = |b: u64| group(b.div_ceil(1_000_000));
    match reading {
        true => format!(
            "{} of {} runs ({} of {} MB)",
            group(p.runs_done),
            group(p.runs),
            mb(p.bytes_done),
            mb(p.bytes)
        ),
        false => format!("{} runs ({} MB)", group(p.runs_done), mb(p.bytes_done)),
    }
}

/// `12345` as `12,345`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}
