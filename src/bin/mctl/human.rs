//! Text for people: tables and timelines. Scripts use `--json`, whose fields are the contract;
//! this layout may change.

use mission_control::model::{cost_text, tokens_text};
use mission_control::runs::{Listing, Problem, ResultInfo, RunDetail, TimelineEvent};
use mission_control::watch::Change;
use std::fmt::Write as _;

pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// `n` and its noun in the right form: "1 run", "2 runs", "0 runs" (`many` for a noun whose
/// plural is not `one` + "s").
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`plural`] of a noun whose plural adds "s".
pub fn plurals(n: u64, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

pub fn count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

pub fn age(now_ms: i64, then_ms: Option<i64>) -> String {
    let Some(then) = then_ms else {
        return "-".to_owned();
    };
    let s = now_ms.saturating_sub(then).max(0) / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// Cuts `s` to `width` characters, marking the cut, and strips control characters (transcript
/// text is untrusted: an escape sequence must not reach the terminal).
pub fn clip(s: &str, width: usize) -> String {
    let clean = safe(s);
    if clean.chars().count() <= width {
        return clean;
    }
    let mut out: String = clean.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `s` fit for a terminal: each control character a space, and each invisible format
/// character (a bidirectional override) its label: a terminal that obeys one would show other
/// text than the transcript holds.
pub fn safe(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            c if c.is_control() => " ".to_owned(),
            c if mission_control::retained::is_format_char(c) => {
                mission_control::retained::format_label(c)
            }
            c => c.to_string(),
        })
        .collect()
}

/// [`safe`] line by line: the line breaks kept.
pub fn safe_lines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for line in s.split_inclusive('\n') {
        match line.strip_suffix('\n') {
            Some(l) => {
                out.push_str(&safe(l));
                out.push('\n');
            }
            None => out.push_str(&safe(line)),
        }
    }
    out
}

/// The width of a column that never cuts what it holds: its widest cell, at least `min`.
pub fn column_width<S: AsRef<str>>(cells: impl IntoIterator<Item = S>, min: usize) -> usize {
    (cells.into_iter())
        .map(|c| c.as_ref().chars().count())
        .max()
        .unwrap_or(0)
        .max(min)
}

/// The runs as a table, written row by row as each run is unpacked.
pub fn write_runs_table(
    out: &mut impl std::io::Write,
    runs: &Listing,
    now_ms: i64,
) -> std::io::Result<()> {
    // An id is never cut (it is what the other commands take): its column is as wide as the
    // longest; the title is cut instead.
    let width = column_width(runs.ids().map(|id| safe(&id)), 3);
    writeln!(
        out,
        "{:<11} {:<width$} {:>5} {:<18} {:>7} {:>7} {:>8} {:<16} TITLE",
        "STATUS", "RUN", "AGE", "MODEL", "IN", "OUT", "COST", "RETAINED"
    )?;
    for r in runs.runs() {
        let retained = if r.retained > 0 {
            format!("{} · {}", r.retained, bytes(r.retained_bytes))
        } else {
            "-".to_owned()
        };
        writeln!(
            out,
            "{:<11} {:<width$} {:>5} {:<18} {:>7} {:>7} {:>8} {:<16} {}",
            r.status.as_str(),
            safe(&r.id),
            age(now_ms, r.updated_ms),
            clip(r.model.as_deref().unwrap_or("-"), 18),
            count(r.input_tokens),
            count(r.output_tokens),
            cost_text(r.cost_usd, r.cost_estimated),
            retained,
            clip(&r.title, 60),
        )?;
    }
    writeln!(out, "{}", plurals(runs.len() as u64, "run"))
}

pub fn run_detail(d: &RunDetail) -> String {
    let r = &d.run;
    let mut out = String::new();
    let _ = writeln!(out, "{}  {}", r.id, r.status.as_str());
    let _ = writeln!(out, "  title     {}", clip(&r.title, 100));
    let _ = writeln!(
        out,
        "  model     {} / {}  mode {}",
        r.provider.as_deref().unwrap_or("-"),
        r.model.as_deref().unwrap_or("-"),
        r.mode.as_deref().unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "  events    {} ({} unreadable, {} warnings)  dispatches {}  tool calls {}",
        r.events, r.problems, r.warnings, r.dispatches, r.tool_calls
    );
    let _ = writeln!(
        out,
        "  tokens    {}  cost {}",
        tokens_text(r),
        cost_text(r.cost_usd, r.cost_estimated)
    );
    // A run of several models says each one's part.
    for m in r.models.iter().filter(|_| r.models.len() > 1) {
        let _ = writeln!(
            out,
            "    {:<28} {} in, {} out  cost {}",
            clip(&m.model, 28),
            m.input_tokens,
            m.output_tokens,
            cost_text(m.cost_usd, m.cost_estimated)
        );
    }
    if r.tokens_with_children > r.input_tokens.saturating_add(r.output_tokens) {
        let _ = writeln!(
            out,
            "  with subagents  {} tokens  cost {}",
            r.tokens_with_children,
            cost_text(r.cost_with_children_usd, r.cost_estimated)
        );
    }
    let _ = writeln!(
        out,
        "  retained  {} ({} kept out of context, about {} tokens); unretained {}; damaged {}; strays {}",
        r.retained,
        bytes(r.retained_bytes),
        count(r.retained_bytes / 4),
        r.unretained,
        r.damaged,
        r.strays
    );
    let _ = writeln!(
        out,
        "  values    {}, {} on disk",
        plurals(r.value_files, "file"),
        bytes(r.value_bytes)
    );
    if r.pending_bytes > 0 {
        let _ = writeln!(
            out,
            "  pending   {} of a line still being written",
            plurals(r.pending_bytes, "byte")
        );
    }
    let _ = writeln!(out, "\nTIMELINE");
    for e in &d.events {
        let _ = writeln!(out, "{}", event_line(e));
    }
    if !d.results.is_empty() {
        let _ = writeln!(out, "\nRESULTS");
        for res in &d.results {
            let _ = writeln!(out, "{}", result_line(res));
        }
    }
    if !d.strays.is_empty() {
        let _ = writeln!(out, "\nSTRAY VALUE FILES");
        for s in &d.strays {
            let _ = writeln!(out, "  {}  {}", clip(&s.name, 70), bytes(s.bytes));
        }
    }
    if !d.problems.is_empty() {
        let _ = writeln!(out, "\nPROBLEMS");
        for p in &d.problems {
            let _ = writeln!(out, "{}", problem_line(p));
        }
    }
    out
}

fn event_line(e: &TimelineEvent) -> String {
    let what = match e.kind.as_str() {
        "user_message" | "assistant_message" | "context_compacted" | "steering_injected" => {
            let mut s = match (e.text.as_deref(), e.thinking.as_deref()) {
                // A line of thinking alone says so rather than nothing.
                (None | Some(""), Some(thinking)) => format!("(thinking) {}", clip(thinking, 69)),
                (text, _) => clip(text.unwrap_or(""), 80),
            };
            for c in &e.tool_calls {
                let _ = write!(s, " → {}", clip(&c.name, 30));
            }
            s
        }
        "tool_call_started" => format!(
            "{} {}",
            clip(e.tool.as_deref().unwrap_or("tool"), 30),
            clip(
                e.summary.as_deref().or(e.input.as_deref()).unwrap_or(""),
                70
            )
        ),
        "tool_call_finished" => match &e.result {
            Some(r) => result_brief(r),
            None => String::new(),
        },
        "run_error" => e
            .error
            .as_ref()
            .map(|x| {
                format!(
                    "{}: {}",
                    x.code.as_deref().unwrap_or("?"),
                    clip(x.message.as_deref().unwrap_or(""), 80)
                )
            })
            .unwrap_or_default(),
        "unreadable" => clip(e.problem.as_deref().unwrap_or(""), 100),
        // A command typed at the agent's prompt, or what it printed.
        "local_command" => {
            let line = [e.tool.as_deref(), e.input.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            match e.text.as_deref() {
                Some(out) => format!("{} → {}", clip(&line, 30), clip(out, 50)),
                None => clip(&line, 80),
            }
        }
        _ => clip(
            e.path
                .as_deref()
                .or(e.decision.as_deref())
                .or(e.text.as_deref())
                .or(e.status.as_deref())
                .unwrap_or(""),
            80,
        ),
    };
    format!("{:>6}  {:<22} {}", e.line, e.kind, what)
}

fn result_brief(r: &ResultInfo) -> String {
    format!(
        "{} {} {} {} {}{}",
        clip(&r.tool, 30),
        if r.ok { "ok" } else { "error" },
        bytes(r.bytes),
        r.lines
            .map_or_else(|| "lines unknown".to_owned(), |n| plurals(n, "line")),
        r.state.as_str(),
        if r.state.as_str() == "inline" {
            String::new()
        } else {
            format!(" #{}", r.value_id)
        }
    )
}

fn result_line(r: &ResultInfo) -> String {
    format!(
        "{:>6}  {:<24} {}",
        r.line,
        clip(&r.tool_call_id, 24),
        result_brief(r)
    )
}

fn problem_line(p: &Problem) -> String {
    let at = if p.line == 0 {
        "run".to_owned()
    } else {
        format!("line {}", p.line)
    };
    format!("  {at:<10} {}", clip(&p.message, 120))
}

/// One line of `mctl watch` for a change.
pub fn change_line(change: &Change) -> String {
    match change {
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
                format!(" (+{} pending)", plurals(*pending_bytes, "byte"))
            } else {
                String::new()
            };
            format!("appended   {run} {}{pending}", types.join(" "))
        }
        Change::Reset { run, lines, .. } => {
            format!("reset      {run} (read again: {})", plurals(*lines, "line"))
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
        Change::Scanned { dir } => format!("scanned    {dir}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_the_right_form() {
        assert_eq!(plurals(1, "run"), "1 run");
        assert_eq!(plurals(0, "run"), "0 runs");
        assert_eq!(plurals(11, "file"), "11 files");
        assert_eq!(plural(1, "file is", "files are"), "1 file is");
        assert_eq!(plural(3, "file is", "files are"), "3 files are");
    }

    #[test]
    fn clipped_text_shows_format_characters_and_no_controls() {
        assert_eq!(clip("a\u{202E}evil\u{1b}[31m", 40), "a⟨U+202E⟩evil [31m");
    }
}
