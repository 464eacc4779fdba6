//! `mctl push DIR s3://BUCKET/PREFIX [--watch]`: uploads what changed in a runs directory since
//! the last push (the core's `remote::push` says how). `--json` prints one line per file
//! uploaded and a summary line last (`{"uploaded": 0, ...}` when nothing changed); on a
//! terminal, progress goes to stderr.

use anyhow::Context as _;
use mission_control::remote::{self, PushOptions, PushReport, RemoteUrl};
use notify::{RecursiveMode, Watcher};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long the directory must be quiet before `--watch` pushes what changed.
const SETTLE: Duration = Duration::from_millis(500);

pub fn run(dir: &Path, url: &str, watch: bool, json: bool) -> anyhow::Result<()> {
    let url = RemoteUrl::parse(url)?;
    once(dir, &url, json)?;
    if !watch {
        return Ok(());
    }
    let (tx, rx) = channel();
    let mut watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })
    .context("watching the directory")?;
    watcher
        .watch(dir, RecursiveMode::Recursive)
        .with_context(|| format!("watching {}", dir.display()))?;
    loop {
        // Wait for a change, then for the directory to settle, then push.
        if rx.recv().is_err() {
            return Ok(());
        }
        let mut quiet_since = Instant::now();
        loop {
            match rx.recv_timeout(SETTLE.saturating_sub(quiet_since.elapsed())) {
                Ok(_) => quiet_since = Instant::now(),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
        // A failed push (the network) is said and tried again at the next change.
        if let Err(e) = once(dir, &url, json) {
            let _ = writeln!(std::io::stderr(), "mctl: {e:#}");
        }
    }
}

/// One push, said as the flags ask.
fn once(dir: &Path, url: &RemoteUrl, json: bool) -> anyhow::Result<PushReport> {
    let terminal = std::io::stderr().is_terminal();
    let mut out = std::io::stdout().lock();
    let mut failed = None;
    let started = Instant::now();
    let report = remote::push(
        dir,
        url,
        &PushOptions::default(),
        |file| {
            if json && failed.is_none() {
                if let Err(e) = serde_json::to_writer(&mut out, file)
                    .map_err(std::io::Error::from)
                    .and_then(|()| out.write_all(b"\n"))
                {
                    failed = Some(e);
                }
            }
        },
        |p| {
            if terminal && p.files > 0 {
                let _ = write!(
                    std::io::stderr(),
                    "\r\x1b[2Kpushing {}/{} files, {}/{}",
                    p.files_done,
                    p.files,
                    bytesize::ByteSize(p.bytes_done),
                    bytesize::ByteSize(p.bytes)
                );
            }
        },
    );
    if terminal {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    let report = report?;
    if json {
        serde_json::to_writer(&mut out, &report)?;
        out.write_all(b"\n")?;
    } else if report.uploaded == 0 {
        writeln!(
            out,
            "nothing to push: {} files already in {}",
            report.unchanged, report.url
        )?;
    } else {
        writeln!(
            out,
            "pushed {} of {} files ({}) to {} in {:.1} s",
            report.uploaded,
            report.files,
            bytesize::ByteSize(report.bytes),
            report.url,
            started.elapsed().as_secs_f64()
        )?;
    }
    out.flush()?;
    Ok(report)
}
