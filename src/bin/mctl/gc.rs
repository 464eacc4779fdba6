//! `mctl gc`: plan, and with `--apply` do, a garbage collection of value files.

use crate::cli::GcArgs;
use crate::human;
use crate::output::{print_human, print_json};
use mission_control::gc::{self, GcPolicy, GcReport};
use mission_control::pins::Pins;
use mission_control::runs::{now_ms, RunsDir};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

fn ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

pub fn run(dir: RunsDir, args: &GcArgs, json: bool) -> anyhow::Result<()> {
    let policy = GcPolicy {
        older_than_ms: args.older_than.map(ms),
        keep_last: args.keep_last,
        max_bytes: args.max_bytes,
        orphans: args.orphans,
        strays: args.strays,
        idle_guard_ms: ms(args.idle_guard),
    };
    let pins = Pins::load_in(dir.config_dir())?;
    let plan = gc::plan(&dir, &policy, &pins, now_ms())?;
    if !args.apply {
        let printed = if json {
            print_json(&plan)
        } else {
            print_human(&describe(&plan))
        };
        // The process ends here: freeing a plan of 200,000 files one by one is wasted time.
        std::mem::forget(plan);
        return printed;
    }
    // Ctrl-C stops between two files and still reports what was done.
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    let tty = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let report = gc::apply(&dir, &plan, &policy, now_ms(), &cancel, |p| {
        if tty && (last.elapsed().as_millis() > 200 || p.done == p.total) {
            last = Instant::now();
            let _ = write!(
                std::io::stderr(),
                "\rdeleting: {}/{}, {} of {}   ",
                p.done,
                human::plurals(p.total, "file"),
                human::bytes(p.bytes),
                human::bytes(p.total_bytes)
            );
        }
    })?;
    if tty {
        let _ = writeln!(std::io::stderr());
    }
    if json {
        print_json(&report)
    } else {
        print_human(&describe(&report))
    }
}

fn describe(r: &GcReport) -> String {
    let mut out = String::new();
    let verb = if r.applied { "deleted" } else { "would delete" };
    if r.resumed > 0 {
        let _ = writeln!(
            out,
            "{} left over from an apply that was interrupted: included.",
            human::plural(r.resumed, "file is", "files are")
        );
    }
    // Ids are never cut (they are pasted into the next command); the title at the end is.
    let name = |run: &gc::GcRun| match run.orphan {
        true => format!("{} (orphan)", human::safe(&run.run)),
        false => human::safe(&run.run),
    };
    let w = human::column_width(r.runs.iter().map(name), 3);
    let _ = writeln!(
        out,
        "{:<w$} {:>7} {:>11} {:>14} {:>10}  TITLE",
        "RUN", "FILES", "BYTES", "RESUME CARRIES", "~TOKENS"
    );
    for run in &r.runs {
        let _ = writeln!(
            out,
            "{:<w$} {:>7} {:>11} {:>14} {:>10}  {}",
            name(run),
            run.files,
            human::bytes(run.bytes),
            human::bytes(run.context_bytes),
            human::count(run.context_tokens),
            human::clip(&human::safe(&run.title), 60),
        );
    }
    let _ = writeln!(
        out,
        "{verb} {}, {} in {}; the next resumes carry {} again (about {} tokens)",
        human::plurals(r.files.len() as u64, "file"),
        human::bytes(r.total_bytes),
        human::plurals(r.runs.len() as u64, "run"),
        human::bytes(r.context_bytes),
        human::count(r.context_tokens)
    );
    if let Some(s) = &r.agent_sweep {
        let _ = writeln!(out, "{}", sweep_text(s));
    }
    for s in &r.skipped {
        // The budget's own note names no file or folder.
        let at = match s.path.as_str() {
            "" => String::new(),
            path => format!(" {}", human::clip(path, 80)),
        };
        let _ = writeln!(out, "skipped{at}: {}", s.reason);
    }
    if !r.removed_dirs.is_empty() {
        let _ = writeln!(
            out,
            "removed {} empty value directories",
            r.removed_dirs.len()
        );
    }
    if r.cancelled {
        let _ = writeln!(out, "cancelled: the rest was left alone");
    }
    if !r.applied && !r.files.is_empty() {
        let _ = writeln!(out, "(a plan: nothing was deleted; add --apply to delete)");
    }
    out
}

/// What an agent's own cleanup deletes, in a line: "Claude Code's own cleanup
/// (cleanupPeriodDays 30, from …) deletes at its next start: …; within 2 days: …".
pub(crate) fn sweep_text(s: &mission_control::sources::sweep::AgentSweep) -> String {
    let day = 86_400_000;
    let period = match s.period_ms % day {
        0 => human::plurals(s.period_days, "day"),
        _ => human::plurals(u64::try_from(s.period_ms / 3_600_000).unwrap_or(0), "hour"),
    };
    let rule = match &s.setting {
        // A setting counted in days is shown as it is written (`cleanupPeriodDays 30`).
        Some(setting) if setting.ends_with("Days") => format!(
            "{setting} {}{}",
            s.period_days,
            (s.settings_file.as_deref())
                .map(|f| format!(", from {f}"))
                .unwrap_or_default()
        ),
        Some(setting) => format!(
            "{setting} {period}{}",
            (s.settings_file.as_deref())
                .map(|f| format!(", from {f}"))
                .unwrap_or_default()
        ),
        None => format!("after {period}"),
    };
    let rule = match s.max_count {
        Some(n) => format!("{rule}; the newest {n} of each project kept"),
        None => rule,
    };
    let mut text = format!(
        "{}'s own cleanup ({rule}) deletes at its next start: {} ({}) and {} ({})",
        s.agent,
        human::plurals(s.sessions.len() as u64, "session"),
        human::bytes(s.session_bytes),
        human::plurals(s.value_files, "saved output"),
        human::bytes(s.value_bytes)
    );
    if s.soon_sessions + s.soon_value_files > 0 {
        text.push_str(&format!(
            "; within {}: {} ({}) and {} ({}) more",
            human::plurals(s.soon_days, "day"),
            human::plurals(s.soon_sessions, "session"),
            human::bytes(s.soon_session_bytes),
            human::plurals(s.soon_value_files, "saved output"),
            human::bytes(s.soon_value_bytes)
        ));
    }
    text
}
