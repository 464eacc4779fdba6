//! What every command shares: the runs directory the global settings name, and printing.

use crate::cli::Global;
use anyhow::Context as _;
use mission_control::remote;
use mission_control::runs::{now_ms, RunOptions, RunsDir};
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a command reads of a bucket's big value files beyond their ends (a listing's part): the
/// mirror fetches those whole before the command runs. A local directory ignores it.
#[derive(Clone, Copy)]
pub enum Reads<'a> {
    /// What a listing reads: a big value's middle, if read at all, by ranged GETs.
    Listing,
    /// Every value of the runs these names (ids or prefixes) give.
    Runs(&'a [&'a str]),
    /// Every value of every run.
    Everything,
}

/// `--runs-dir`, else `$MCTL_RUNS_DIR`, else the harness's own directory.
pub fn runs_dir(g: &Global) -> anyhow::Result<RunsDir> {
    runs_dir_reading(g, Reads::Listing)
}

/// [`runs_dir`], with what the command reads of a bucket said.
pub fn runs_dir_reading(g: &Global, reads: Reads) -> anyhow::Result<RunsDir> {
    open_dir(g, &one_dir(g)?, g.threshold()?, reads)
}

/// [`runs_dir`] read with retention threshold `threshold` (`whatif` takes several thresholds of
/// its own and reads the runs at the default one, as a listing does).
pub fn runs_dir_at(g: &Global, threshold: u64) -> anyhow::Result<RunsDir> {
    open_dir(g, &one_dir(g)?, threshold, Reads::Listing)
}

/// The one runs directory of a command that follows it (`watch`): a bucket's mirror is kept in
/// step with its bucket in the background.
pub fn following_dir(g: &Global) -> anyhow::Result<RunsDir> {
    let root = one_dir(g)?;
    if !remote::is_remote(&root) {
        return runs_dir(g);
    }
    let mirror = mirror_of(g, &root, &remote::Hydrate::Nothing)?;
    let dir = attached(g, &mirror)?;
    keep_in_step(mirror, remote::Hydrate::Nothing);
    Ok(dir)
}

fn one_dir(g: &Global) -> anyhow::Result<String> {
    match runs_dirs(g)?.as_slice() {
        [one] => Ok(one.clone()),
        _ => anyhow::bail!("this command reads one runs directory: give --runs-dir once"),
    }
}

/// Opens `root`, a directory or an object-storage URL, with the global settings.
pub fn open_dir(g: &Global, root: &str, threshold: u64, reads: Reads) -> anyhow::Result<RunsDir> {
    let open = |dir: &Path| open_runs_dir(dir, threshold, window_ms(g), g.no_index, g.source);
    if !remote::is_remote(root) {
        return Ok(open(Path::new(root))?);
    }
    let hydrate = match reads {
        Reads::Everything => remote::Hydrate::All,
        _ => remote::Hydrate::Nothing,
    };
    let mut mirror = mirror_of(g, root, &hydrate)?;
    let dir = open(&mirror.root())?;
    mirror.attach(dir.root());
    if let Reads::Runs(names) = reads {
        // A name that is no run is taken as it is (`search --run` takes a value folder
        // without a run); the command refuses it, as it would locally.
        let ids: Vec<String> = names
            .iter()
            .map(|n| dir.run_id(n).unwrap_or_else(|_| (*n).to_owned()))
            .collect();
        mirror.hydrate(&remote::Hydrate::Runs(ids))?;
    }
    Ok(dir)
}

/// The runs directory the mirror holds, opened with the global settings, the mirror attached
/// to it: its pins, its GC and its values' middles are the bucket's.
pub fn attached(g: &Global, mirror: &remote::Mirror) -> anyhow::Result<RunsDir> {
    let dir = open_runs_dir(
        &mirror.root(),
        g.threshold()?,
        window_ms(g),
        g.no_index,
        g.source,
    )?;
    mirror.attach(dir.root());
    Ok(dir)
}

/// The mirror of bucket URL `url`, brought up to the bucket (`hydrate` says which values are
/// fetched whole); the caller attaches it to the runs directory it opens there.
pub fn mirror_of(
    g: &Global,
    url: &str,
    hydrate: &remote::Hydrate,
) -> anyhow::Result<remote::Mirror> {
    let url = remote::RemoteUrl::parse(url)?;
    let mut mirror = remote::Mirror::open(&url)?;
    let report = mirror.sync(hydrate)?;
    tracing::info!(url = %url, listed = report.listed, fetched = report.fetched, bytes = report.bytes, removed = report.removed, "bucket looked at");
    if let Some(kind) = g.source {
        let root = mirror.root().display().to_string();
        mission_control::sources::force_kinds([(root.as_str(), kind)]);
    }
    Ok(mirror)
}

/// Looks at the bucket again every `$MCTL_BUCKET_POLL` (10 s by default), for the rest of the
/// process, so a watch of the mirror (`watch`, `serve`) sees what others push. A failed look
/// is said in the log (and to a served page) and tried again at the next.
pub fn keep_in_step(mirror: remote::Mirror, hydrate: remote::Hydrate) {
    remote::Following::start(mirror, hydrate, true).for_good();
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
    crate::pretty::to_writer(&mut out, value).map_err(|e| match e.io_error_kind() {
        Some(kind) => anyhow::Error::from(io::Error::from(kind)),
        None => anyhow::Error::from(e),
    })?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// A listing's runs as [`print_json`] prints them, each window of runs written on every core.
pub fn print_listing(listing: &mission_control::runs::Listing) -> anyhow::Result<()> {
    // Standard output itself, not its lock: the windows are printed on a thread of their own
    // (the buffer takes the lock once per 64 KiB).
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout());
    crate::pretty::write_listing(&mut out, listing)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Text for people built from what runs hold (ids, models, tool names, error codes, event
/// types, file names: all untrusted), each line fit for a terminal ([`human::safe_lines`]):
/// whatever a renderer forgot to clip, no escape sequence reaches the terminal. (`full`, `stub`
/// and `peek` print their exact bytes with [`print_text`]: what the model got.)
pub fn print_human(text: &str) -> anyhow::Result<()> {
    print_text(&crate::human::safe_lines(text))
}

pub fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
