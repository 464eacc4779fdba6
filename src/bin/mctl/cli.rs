//! The command line's grammar: global settings and one subcommand per operation of the core.

use clap::{Args, Parser, Subcommand};
use mission_control::retained;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mctl",
    version = mission_control::VERSION,
    about = "Mission Control: see, compare, peek into and clean up an agent harness's runs directory"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args)]
pub struct Global {
    /// The runs directory [default: $MCTL_RUNS_DIR, else the harness's own location]; `serve`
    /// takes several
    #[arg(long, global = true, value_name = "DIR", action = clap::ArgAction::Append)]
    pub runs_dir: Vec<PathBuf>,
    /// What kind of store the directory is: klide (the harness's runs), claude (Claude Code's
    /// projects directory or one project in it), codex (Codex's sessions directory), gemini
    /// (Gemini CLI's tmp directory or one project in it), opencode (opencode's data directory)
    /// [default: detected from what it holds]
    #[arg(long, global = true, env = "MCTL_SOURCE", value_name = "KIND", value_parser = parse_source)]
    pub source: Option<mission_control::sources::SourceKind>,
    /// Read every run's files instead of taking unchanged runs from the index (also
    /// `MCTL_NO_INDEX=1`)
    #[arg(long, global = true)]
    pub no_index: bool,
    /// Print JSON for scripts instead of text for people
    #[arg(long, global = true)]
    pub json: bool,
    /// Read at most this many files at once (a listing without the index, a cold index, GC
    /// planning, search) [default: every core]
    #[arg(long, global = true, env = "MCTL_JOBS", value_name = "N", value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Retention threshold (20480, 8KiB, 1MiB): a result longer than this is retained. `whatif`
    /// takes several, separated by commas
    #[arg(long, global = true, env = "MCTL_THRESHOLD", value_name = "SIZE", value_delimiter = ',', value_parser = parse_size, default_values_t = [retained::DEFAULT_THRESHOLD])]
    pub threshold: Vec<u64>,
    /// How long a run with no terminal event counts as running after its transcript last changed
    #[arg(long, global = true, env = "MCTL_RUNNING_WINDOW", value_name = "DURATION", default_value = "30m", value_parser = humantime::parse_duration)]
    pub running_window: Duration,
}

#[derive(Subcommand)]
pub enum Command {
    /// List every run: status, model, tokens, cost and retention figures
    Runs,
    /// One run: its figures, timeline, tool results and problems
    Show { run: String },
    /// The exact bytes of a tool result's full text (with or without --json: the bytes are the
    /// answer)
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
    /// What the model was shown of each value of a run: its stub and its peeks, the lines it
    /// read twice, and the error-looking lines it never saw
    Coverage {
        run: String,
        /// One value: a tool call id or a value id
        call: Option<String>,
        /// Error-looking lines match this regular expression, used as given (add `(?i)` to
        /// ignore case), instead of the default, which ignores case:
        /// \b(error|errors|panic|panicked|fatal|exception|traceback|failed|failure)\b
        #[arg(long, value_name = "REGEX")]
        error_pattern: Option<String>,
    },
    /// The messages resuming a run now would send the model, rebuilt from the transcript as the
    /// harness rebuilds them: each retained result as its stub
    Resume {
        run: String,
        /// The replay shape [default: text-fold for provider `ollama`, else structured]
        #[arg(long, value_enum)]
        shape: Option<Shape>,
        /// As if every value file of the run were gone (what GC would change)
        #[arg(long)]
        without_values: bool,
    },
    /// What the harness would have retained, written and saved at other thresholds (given with
    /// the global --threshold T[,T2,...]), over every tool result
    Whatif {
        /// Only this run's results
        #[arg(long, value_name = "RUN")]
        run: Option<String>,
    },
    /// Search every run's messages, tool inputs, tool results and value files (exit 0 with hits,
    /// 1 without, 2 on an error)
    Search(SearchArgs),
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
    /// The index of the runs directory: where it is, what it holds, when it was brought up to
    /// date
    Index {
        /// Empty it and read every run again
        #[arg(long)]
        rebuild: bool,
    },
    /// Serve the app and a JSON API over HTTP, for a browser on this or another machine
    /// (read-only unless --allow-gc)
    Serve(ServeArgs),
    /// Upload a runs directory to object storage: what changed since the last push, so the
    /// bucket's prefix holds what the directory holds (read it back with --runs-dir
    /// s3://BUCKET/PREFIX)
    Push {
        /// The local runs directory
        dir: PathBuf,
        /// Where to: s3://BUCKET/PREFIX (credentials and endpoint from the AWS variables)
        url: String,
        /// Keep pushing as the directory changes, until interrupted
        #[arg(long)]
        watch: bool,
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
    /// A run as one HTML page (no script, readable offline) or Markdown, to share it: its
    /// figures, timeline and tool cards, with API keys, tokens and passwords redacted
    Export(ExportArgs),
    /// Two runs side by side (say, the same task with two models): each one's figures, and
    /// their events aligned, user messages as anchors, then tool calls by tool and input. With
    /// two --runs-dir, RUN_A is read from the first and RUN_B from the second
    Diff {
        run_a: String,
        run_b: String,
        /// Print the results of these two tool calls (one of each run) as a unified diff
        #[arg(long, num_args = 2, value_names = ["CALL_A", "CALL_B"])]
        results: Option<Vec<String>>,
    },
    /// Print mctl's completion script for a shell (bash: `source <(mctl completions bash)`)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write mctl's manual pages (mctl.1 and one per command) into DIR
    #[command(hide = true)]
    Manpages { dir: PathBuf },
}

#[derive(Args)]
pub struct ExportArgs {
    pub run: String,
    #[arg(long, value_enum, default_value_t = Format::Html)]
    pub format: Format,
    /// Write the export to FILE instead of standard output
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Keep secrets as they are (they are replaced by `[redacted: <kind>]` by default)
    #[arg(long)]
    pub no_redact: bool,
    /// What of each tool result goes in: what the model saw (stubs), that and every retained
    /// value in full (folded), or none
    #[arg(long, value_enum, default_value_t = Values::Stub)]
    pub values: Values,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Html,
    Md,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Values {
    Stub,
    Full,
    None,
}

#[derive(Args)]
pub struct SearchArgs {
    /// What to look for: a literal, case-sensitive substring unless --regex or --ignore-case
    pub pattern: String,
    /// Read the pattern as a Rust regular expression
    #[arg(long, short = 'e')]
    pub regex: bool,
    /// Match regardless of case
    #[arg(long, short = 'i')]
    pub ignore_case: bool,
    /// Only this run (an id or a unique prefix of one)
    #[arg(long, value_name = "RUN")]
    pub run: Option<String>,
    /// Where to look: any of messages, inputs, results, values
    #[arg(
        long = "in",
        value_name = "KINDS",
        default_value = "messages,inputs,results,values"
    )]
    pub kinds: String,
    /// Stop after this many hits
    #[arg(long, value_name = "N")]
    pub max: Option<u64>,
}

#[derive(Args)]
pub struct ServeArgs {
    /// The address to listen on; port 0 picks a free port. Anything but loopback needs --token
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7878")]
    pub bind: std::net::SocketAddr,
    /// The token every API request must carry [default: a random one per start]
    #[arg(long, env = "MCTL_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Allow pinning, unpinning and garbage collection (without it the server is read-only)
    #[arg(long)]
    pub allow_gc: bool,
    /// A host name the browser may reach the server by, besides the bind address and
    /// localhost (repeatable)
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Open the URL in the default browser
    #[arg(long)]
    pub open: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Shape {
    Structured,
    TextFold,
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("policy").required(true).multiple(true))]
pub struct GcArgs {
    /// Collect runs whose last activity is older than this (e.g. 30d, 12h)
    #[arg(long, value_name = "AGE", value_parser = humantime::parse_duration, group = "policy")]
    pub older_than: Option<Duration>,
    /// Keep the values of the newest N runs, collect the others'
    #[arg(long, value_name = "N", group = "policy")]
    pub keep_last: Option<u64>,
    /// Bring the total of value bytes under this (e.g. 5GiB, 500MB), oldest runs first
    #[arg(long, value_name = "SIZE", value_parser = parse_size, group = "policy")]
    pub max_bytes: Option<u64>,
    /// Collect value directories whose run is gone
    #[arg(long, group = "policy")]
    pub orphans: bool,
    /// Collect value files that match no result of their run
    #[arg(long, group = "policy")]
    pub strays: bool,
    /// Never touch a run changed within this window
    #[arg(long, env = "MCTL_GC_IDLE_GUARD", value_name = "DURATION", default_value = "10m", value_parser = humantime::parse_duration)]
    pub idle_guard: Duration,
    /// Delete what the plan lists (without it, nothing is deleted)
    #[arg(long)]
    pub apply: bool,
}

impl Global {
    /// The one threshold every command but `whatif` takes.
    pub fn threshold(&self) -> anyhow::Result<u64> {
        match self.threshold.as_slice() {
            [one] => Ok(*one),
            _ => anyhow::bail!("--threshold takes one size here (several only for `whatif`)"),
        }
    }
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    mission_control::parse_jobs(s)
}

fn parse_source(s: &str) -> Result<mission_control::sources::SourceKind, String> {
    s.parse()
}

pub fn parse_size(s: &str) -> Result<u64, String> {
    mission_control::service::prefs::parse_size(s)
}

pub fn parse_lines(s: &str) -> Result<(u64, Option<u64>), String> {
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
