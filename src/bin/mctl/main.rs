//! `mctl`: every operation of Mission Control's core, from the command line. Human output by
//! default, `--json` for scripts. Errors are one line on stderr and exit 1; usage errors exit 2.
//! Each command is a module of its own; they only call the core and print.

mod cli;
mod coverage;
mod demo;
mod diff;
mod export;
mod full;
mod gc;
mod hooks;
mod human;
mod index;
mod logging;
mod manual;
mod output;
mod peek;
mod pins;
mod pretty;
mod progress;
mod push;
mod resume;
mod runs;
mod search;
mod serve;
mod show;
mod stub;
mod value_id;
mod watch;
mod whatif;

use clap::Parser;
use cli::{Cli, Command};
use output::Reads;
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    mission_control::start_clock();
    logging::init();
    let cli = Cli::parse();
    // `--jobs` was checked by the parser, and `$MCTL_JOBS` with it.
    let _ = mission_control::init_jobs(cli.global.jobs);
    // `search` answers as grep does: 0 with hits, 1 without, 2 on an error.
    if let Command::Search(args) = &cli.command {
        return match search::run(&cli.global, args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => fail(&e, 2),
        };
    }
    let ran = run(cli);
    let (requests, received, sent) = mission_control::remote::traffic();
    if requests > 0 {
        tracing::info!(requests, received, sent, "object storage traffic");
    }
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e, exit_code(&e)),
    }
}

/// 2 for a usage error or a failure of object storage (credentials, bucket, endpoint), else 1.
fn exit_code(e: &anyhow::Error) -> u8 {
    if e.chain()
        .any(|c| c.is::<mission_control::remote::RemoteError>())
    {
        2
    } else {
        1
    }
}

/// Says what went wrong on one line of stderr and exits with `code`.
fn fail(e: &anyhow::Error, code: u8) -> ExitCode {
    // A closed pipe (`mctl full ... | head`) is not an error.
    if e.downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    {
        return ExitCode::SUCCESS;
    }
    let _ = writeln!(io::stderr(), "mctl: {e:#}");
    ExitCode::from(code)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let g = &cli.global;
    if let Some(kind) = g.source {
        // `--source` holds for everything this command reads, the watch included.
        let dirs = output::runs_dirs(g).unwrap_or_default();
        mission_control::sources::force_kinds(dirs.iter().map(|d| (d.as_str(), kind)));
    }
    let dir = || output::runs_dir(g);
    let reading = |reads| output::runs_dir_reading(g, reads);
    match cli.command {
        Command::Runs => runs::run(dir()?, g.json),
        Command::Show { run } => show::run(reading(Reads::Runs(&[&run]))?, &run, g.json),
        Command::Full { run, call } => full::run(dir()?, &run, &call),
        Command::Stub { run, call } => stub::run(dir()?, &run, &call, g.json),
        Command::Peek {
            run,
            call,
            lines,
            query,
        } => peek::run(dir()?, &run, &call, lines, query, g.json),
        Command::Coverage {
            run,
            call,
            error_pattern,
        } => coverage::run(
            reading(Reads::Runs(&[&run]))?,
            &run,
            call.as_deref(),
            error_pattern.as_deref(),
            g.json,
        ),
        Command::Resume {
            run,
            shape,
            without_values,
        } => resume::run(
            reading(Reads::Runs(&[&run]))?,
            &run,
            shape,
            without_values,
            g.json,
        ),
        Command::Whatif { run } => whatif::run(
            output::runs_dir_at(g, mission_control::retained::DEFAULT_THRESHOLD)?,
            &g.threshold,
            run.as_deref(),
            g.json,
        ),
        Command::Search(_) => unreachable!("answered in main"),
        Command::ValueId { calls } => value_id::run(&calls, g.json),
        Command::Gc(args) => gc::run(dir()?, &args, g.json),
        Command::Watch { poll } => watch::run(output::following_dir(g)?, poll, g.json),
        Command::Pin { run } => pins::pin(dir()?, &run, true, g.json),
        Command::Unpin { run } => pins::pin(dir()?, &run, false, g.json),
        Command::Pins => pins::list(dir()?, g.json),
        Command::Index { rebuild } => index::run(dir()?, rebuild, g.json),
        Command::Serve(args) => serve::run(g, &args),
        Command::Demo { dir, seed, now } => demo::run(&dir, seed, now, g.json),
        Command::Diff {
            run_a,
            run_b,
            results,
        } => diff::run(g, &run_a, &run_b, results.as_deref(), g.json),
        Command::Export(args) => export::run(reading(Reads::Runs(&[&args.run]))?, &args, g.json),
        Command::Push { dir, url, watch } => push::run(&dir, &url, watch, g.json),
        Command::Completions { shell } => manual::completions(shell),
        Command::Manpages { dir } => manual::manpages(&dir),
    }
}
