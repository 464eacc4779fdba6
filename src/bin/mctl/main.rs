//! `mctl`: every operation of Mission Control's core, from the command line. Human output by
//! default, `--json` for scripts. Errors are one line on stderr and exit 1; usage errors exit 2.

mod gc;
mod human;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use mission_control::demo;
use mission_control::retained::{self, peek_source, peek_text, FileSource, PeekRequest};
use mission_control::runs::{now_ms, RunOptions, RunsDir};
use mission_control::{Error, ErrorCode};
use serde::Serialize;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mctl",
    version,
    about = "Mission Control: see, compare, peek into and clean up an agent harness's runs directory"
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Global {
    /// The runs directory [default: $MCTL_RUNS_DIR, else the harness's own location]
    #[arg(long, global = true, value_name = "DIR")]
    runs_dir: Option<PathBuf>,
    /// Print JSON for scripts instead of text for people
    #[arg(long, global = true)]
    json: bool,
    /// Retention threshold in bytes: a result longer than this is retained
    #[arg(long, global = true, value_name = "BYTES", default_value_t = retained::DEFAULT_THRESHOLD)]
    threshold: u64,
    /// How long a run with no terminal event counts as running after its transcript last changed
    #[arg(long, global = true, value_name = "DURATION", default_value = "30m", value_parser = humantime::parse_duration)]
    running_window: Duration,
}

#[derive(Subcommand)]
enum Command {
    /// List every run: status, model, tokens, cost and retention figures
    Runs,
    /// One run: its figures, timeline, tool results and problems
    Show { run: String },
    /// The exact bytes of a tool result's full text
    Full { run: String, call: String },
    /// The exact stub the model saw in place of a retained result
    Stub { run: String, call: String },
    /// What `peek_value` returns for a line range or a query
    Peek {
        run: String,
        call: String,
        /// Lines A-B (1-based, inclusive); `A` or `A-` reads up to 400 lines from A
        #[arg(long, value_name = "A-B", value_parser = parse_lines, conflicts_with = "query", required_unless_present = "query")]
        lines: Option<(u64, Option<u64>)>,
        /// Lines containing this text, literally and case-sensitively
        #[arg(long, value_name = "TEXT")]
        query: Option<String>,
    },
    /// The value id (file name stem) of tool call ids
    ValueId {
        #[arg(required = true)]
        calls: Vec<String>,
    },
    /// Plan (and with --apply, do) garbage collection of value files
    Gc(GcArgs),
    /// Never collect this run's values
    Pin { run: String },
    /// Let GC collect this run's values again
    Unpin { run: String },
    /// List the pinned runs of the runs directory
    Pins,
    /// Print every change in the runs directory as it happens, until interrupted
    Watch {
        /// Poll every 0.5 s instead of native notices (a network share written by another
        /// machine; also `MCTL_WATCH=poll`)
        #[arg(long)]
        poll: bool,
    },
    /// Write a realistic demo runs directory
    Demo {
        dir: PathBuf,
        /// Same seed and --now, same bytes
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The demo's clock, in epoch milliseconds [default: a fixed date]
        #[arg(long, value_name = "MS")]
        now: Option<i64>,
    },
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("policy").required(true).multiple(true))]
struct GcArgs {
    /// Collect runs whose last activity is older than this (e.g. 30d, 12h)
    #[arg(long, value_name = "AGE", value_parser = humantime::parse_duration, group = "policy")]
    older_than: Option<Duration>,
    /// Keep the values of the newest N runs, collect the others'
    #[arg(long, value_name = "N", group = "policy")]
    keep_last: Option<u64>,
    /// Bring the total of value bytes under this (e.g. 5GiB, 500MB), oldest runs first
    #[arg(long, value_name = "SIZE", value_parser = parse_size, group = "policy")]
    max_bytes: Option<u64>,
    /// Collect value directories whose run is gone
    #[arg(long, group = "policy")]
    orphans: bool,
    /// Collect value files that match no result of their run
    #[arg(long, group = "policy")]
    strays: bool,
    /// Never touch a run changed within this window
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = humantime::parse_duration)]
    idle_guard: Duration,
    /// Delete what the plan lists (without it, nothing is deleted)
    #[arg(long)]
    apply: bool,
}

fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("`{s}` is not a size (like 5GiB or 500MB): {e}"))
}

fn parse_lines(s: &str) -> Result<(u64, Option<u64>), String> {
    let bad = || format!("`{s}` is not a line range: use A-B, A- or A (1-based)");
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let start = a.trim().parse::<u64>().map_err(|_| bad())?;
    let end = match b.map(str::trim) {
        None | Some("") => None,
        Some(b) => Some(b.parse::<u64>().map_err(|_| bad())?),
    };
    Ok((start, end))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`mctl full ... | head`) is not an error.
            if e.downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(io::stderr(), "mctl: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn runs_dir(g: &Global) -> anyhow::Result<RunsDir> {
    let root = match &g.runs_dir {
        Some(d) => d.clone(),
        None => match std::env::var_os("MCTL_RUNS_DIR").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => mission_control::default_runs_dir()
                .context("no --runs-dir, no MCTL_RUNS_DIR, and no data directory on this system")?,
        },
    };
    let opts = RunOptions {
        threshold: g.threshold,
        running_window_ms: i64::try_from(g.running_window.as_millis()).unwrap_or(i64::MAX),
        now_ms: now_ms(),
        ..RunOptions::default()
    };
    Ok(RunsDir::open(root, opts)?)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Serialized first, then written: a closed pipe then surfaces as a plain io::Error.
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    let mut out = io::stdout().lock();
    out.write_all(&text)?;
    out.flush()?;
    Ok(())
}

fn print_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let g = &cli.global;
    match cli.command {
        Command::Runs => {
            let runs = runs_dir(g)?.list()?;
            if g.json {
                print_json(&runs)
            } else {
                print_text(&human::runs_table(&runs, now_ms()))
            }
        }
        Command::Show { run } => {
            let detail = runs_dir(g)?.detail(&run)?;
            if g.json {
                print_json(&detail)
            } else {
                print_text(&human::run_detail(&detail))
            }
        }
        Command::Full { run, call } => {
            let found = runs_dir(g)?.find_result(&run, &call)?;
            print_text(&found.content)
        }
        Command::Stub { run, call } => {
            let dir = runs_dir(g)?;
            let found = dir.find_result(&run, &call)?;
            let info = &found.info;
            if info.bytes <= dir.opts.threshold {
                return Err(Error::new(
                    ErrorCode::NotRetained,
                    format!(
                        "result {} is {} bytes, not over the {}-byte threshold: the model saw it whole",
                        info.tool_call_id, info.bytes, dir.opts.threshold
                    ),
                )
                .into());
            }
            let stub = retained::stub_layout(&info.value_id, &info.tool, &found.content);
            if g.json {
                #[derive(Serialize)]
                #[serde(rename_all = "camelCase")]
                struct StubOut<'a> {
                    tool_call_id: &'a str,
                    value_id: &'a str,
                    tool: &'a str,
                    bytes: usize,
                    #[serde(flatten)]
                    stub: &'a retained::Stub,
                }
                print_json(&StubOut {
                    tool_call_id: &info.tool_call_id,
                    value_id: &info.value_id,
                    tool: &info.tool,
                    bytes: stub.text.len(),
                    stub: &stub,
                })
            } else {
                print_text(&stub.text)
            }
        }
        Command::Peek {
            run,
            call,
            lines,
            query,
        } => {
            let request = match (lines, query) {
                (Some((start, end)), _) => PeekRequest::Range { start, end },
                (None, Some(text)) => PeekRequest::Query { text },
                (None, None) => unreachable!("clap requires --lines or --query"),
            };
            let dir = runs_dir(g)?;
            // Like the harness's peek_value: the value file when there is one, found by
            // value_id(call) alone; else the result's full text from the transcript.
            let (source, value_id, result) = match dir.value_file(&run, &call)? {
                Some(path) => {
                    let vid = retained::value_id(&call);
                    let src = FileSource::open(&path)
                        .with_context(|| format!("opening {}", path.display()))?;
                    ("file", vid.clone(), peek_source(&vid, &src, &request))
                }
                None => {
                    let found = dir.find_result(&run, &call)?;
                    let vid = found.info.value_id.clone();
                    (
                        "transcript",
                        vid.clone(),
                        peek_text(&vid, &found.content, &request),
                    )
                }
            };
            let answer = result.map_err(|e| Error::new(ErrorCode::Peek, e.to_string()))?;
            if g.json {
                #[derive(Serialize)]
                #[serde(rename_all = "camelCase")]
                struct PeekOut<'a> {
                    value_id: &'a str,
                    source: &'a str,
                    bytes: usize,
                    #[serde(flatten)]
                    peek: &'a retained::Peek,
                }
                print_json(&PeekOut {
                    value_id: &value_id,
                    source,
                    bytes: answer.text.len(),
                    peek: &answer,
                })
            } else {
                print_text(&answer.text)
            }
        }
        Command::ValueId { calls } => {
            let ids: Vec<_> = calls.iter().map(|c| retained::value_id(c)).collect();
            if g.json {
                #[derive(Serialize)]
                #[serde(rename_all = "camelCase")]
                struct Pair<'a> {
                    tool_call_id: &'a str,
                    value_id: &'a str,
                }
                let pairs: Vec<_> = calls
                    .iter()
                    .zip(&ids)
                    .map(|(c, v)| Pair {
                        tool_call_id: c,
                        value_id: v,
                    })
                    .collect();
                print_json(&pairs)
            } else {
                print_text(&ids.iter().map(|v| format!("{v}\n")).collect::<String>())
            }
        }
        Command::Gc(args) => gc::run(runs_dir(g)?, &args, g.json),
        Command::Watch { poll } => watch(runs_dir(g)?, poll, g.json),
        Command::Pin { run } => gc::pin(runs_dir(g)?, &run, true, g.json),
        Command::Unpin { run } => gc::pin(runs_dir(g)?, &run, false, g.json),
        Command::Pins => gc::pins(runs_dir(g)?, g.json),
        Command::Demo { dir, seed, now } => {
            let report = demo::write_demo(&dir, seed, now.unwrap_or(demo::DEFAULT_NOW_MS))
                .with_context(|| format!("writing the demo into {}", dir.display()))?;
            if g.json {
                print_json(&report)
            } else {
                print_text(&format!(
                    "wrote {} runs ({} files, {}) into {}\n",
                    report.runs,
                    report.files,
                    human::bytes(report.bytes),
                    dir.display()
                ))
            }
        }
    }
}

/// `mctl watch`: one line per change (a JSON object per line with `--json`), until interrupted.
fn watch(dir: RunsDir, poll: bool, json: bool) -> anyhow::Result<()> {
    use mission_control::watch::{poll_asked, watch, watch_polling, Change};
    let dirs = [dir.root().to_path_buf()];
    let (_handle, rx) = match poll_asked(poll) {
        Some(reason) => watch_polling(&dirs, dir.opts, &reason)?,
        None => watch(&dirs, dir.opts)?,
    };
    let mut out = io::stdout().lock();
    for change in rx {
        if json {
            serde_json::to_writer(&mut out, &change)?;
            writeln!(out)?;
        } else {
            let line = match &change {
                Change::RunAdded { run, .. } => format!("added      {run}"),
                Change::Appended {
                    run,
                    lines,
                    pending_bytes,
                    ..
                } => {
                    let types: Vec<String> = lines
                        .iter()
                        .map(|l| format!("{}:{}", l.line, l.kind))
                        .collect();
                    let pending = if *pending_bytes > 0 {
                        format!(" (+{pending_bytes} bytes pending)")
                    } else {
                        String::new()
                    };
                    format!("appended   {run} {}{pending}", types.join(" "))
                }
                Change::Reset { run, lines, .. } => {
                    format!("reset      {run} (read again: {lines} lines)")
                }
                Change::Summarised { run, .. } => format!("summarised {run}"),
                Change::Finished { run, status, .. } => format!("finished   {run} {status}"),
                Change::RunRemoved { run, .. } => format!("removed    {run}"),
                Change::ValuesAdded { run, .. } => format!("values+    {run}"),
                Change::ValuesRemoved { run, .. } => format!("values-    {run}"),
                Change::ValueFilesAdded { run, values, .. } => {
                    format!("value+     {run} {}", values.join(" "))
                }
                Change::ValueFilesRemoved { run, values, .. } => {
                    format!("value-     {run} {}", values.join(" "))
                }
                Change::Polling {
                    dir,
                    reason,
                    interval_ms,
                } => format!("polling    {dir} every {interval_ms} ms: {reason}"),
            };
            writeln!(out, "{}", human::clip(&line, 400))?;
        }
        out.flush()?;
    }
    Ok(())
}
