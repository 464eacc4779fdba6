//! What every command shares: the runs directory the global settings name, and printing.

use crate::cli::Global;
use anyhow::Context as _;
use mission_control::runs::{now_ms, RunOptions, RunsDir};
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// `--runs-dir`, else `$MCTL_RUNS_DIR`, else the harness's own directory.
pub fn runs_dir(g: &Global) -> anyhow::Result<RunsDir> {
    runs_dir_at(g, g.threshold()?)
}

/// [`runs_dir`] read with retention threshold `threshold` (`whatif` takes several thresholds of
/// its own and reads the runs at the default one, as a listing does).
pub fn runs_dir_at(g: &Global, threshold: u64) -> anyhow::Result<RunsDir> {
    let root = match runs_dirs(g)?.as_slice() {
        [one] => PathBuf::from(one),
        _ => anyhow::bail!("this command reads one runs directory: give --runs-dir once"),
    };
    Ok(open_runs_dir(
        &root,
        threshold,
        window_ms(g),
        g.no_index,
        g.source,
    )?)
}

/// `--running-window` in milliseconds.
pub fn window_ms(g: &Global) -> i64 {
    i64::try_from(g.running_window.as_millis()).unwrap_or(i64::MAX)
}

/// Opens `root` as every command reads it: the threshold and running window given, the clock
/// now, through the index unless `no_index`, as the kind of store `source` says (else as it
/// looks).
pub fn open_runs_dir(
    root: &Path,
    threshold: u64,
    running_window_ms: i64,
    no_index: bool,
    source: Option<mission_control::sources::SourceKind>,
) -> mission_control::Result<RunsDir> {
    let opts = RunOptions {
        threshold,
        running_window_ms,
        now_ms: now_ms(),
        ..RunOptions::default()
    };
    let mut dir = RunsDir::open(root, opts)?;
    if let Some(source) = source {
        dir = dir.with_source(source);
    }
    Ok(if no_index { dir.with_index(false) } else { dir })
}

/// Every `--runs-dir` given, else `$MCTL_RUNS_DIR`, else the harness's own directory.
pub fn runs_dirs(g: &Global) -> anyhow::Result<Vec<String>> {
    if !g.runs_dir.is_empty() {
        return Ok(g.runs_dir.iter().map(|d| d.display().to_string()).collect());
    }
    let root = match std::env::var_os("MCTL_RUNS_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => mission_control::default_runs_dir()
            .context("no --runs-dir, no MCTL_RUNS_DIR, and no data directory on this system")?,
    };
    Ok(vec![root.display().to_string()])
}

pub fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Written as it is serialized, through a buffer: a listing of 100,000 runs is never held
    // whole in memory. A write error (a closed pipe) surfaces as a plain io::Error.
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => anyhow::Error::from(io::Error::from(kind)),
        None => anyhow::Error::from(e),
    })?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
