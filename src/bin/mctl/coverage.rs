//! `mctl coverage RUN [CALL]`: what the model was shown of each value of a run.

use crate::human::{bytes, clip, count, plurals};
use crate::output::{print_human, print_json};
use mission_control::insights::{ErrorPattern, ValueCoverage};
use mission_control::runs::RunsDir;
use std::fmt::Write as _;

/// Width of the coverage bar, in characters.
const BAR: usize = 20;

pub fn run(
    dir: RunsDir,
    run: &str,
    call: Option<&str>,
    error_pattern: Option<&str>,
    json: bool,
) -> anyhow::Result<()> {
    let errors = ErrorPattern::new(error_pattern)?;
    let values = mission_control::insights::coverage(&dir, run, call, &errors)?;
    if json {
        print_json(&values)
    } else {
        print_human(&table(&values))
    }
}

fn table(values: &[ValueCoverage]) -> String {
    if values.is_empty() {
        return "no value over the threshold in this run\n".to_owned();
    }
    let mut out = String::new();
    for v in values {
        let share = v.coverage.unwrap_or(0.0);
        let filled = ((share * BAR as f64).round() as usize).min(BAR);
        // A value with any line seen shows at least one mark.
        let filled = if v.seen_lines > 0 { filled.max(1) } else { 0 };
        let bar = format!("{}{}", "█".repeat(filled), "░".repeat(BAR - filled));
        let peeks = match v.peeks.len() {
            0 => "never peeked".to_owned(),
            n => plurals(n as u64, "peek"),
        };
        // A lost full text has no length: what the model saw is counted, never a share of 0.
        let share = match (v.coverage, v.total_lines) {
            (Some(c), Some(total)) => format!(
                "{:>6.1}%  {}/{} {}",
                c * 100.0,
                count(v.seen_lines),
                count(total),
                if total == 1 { "line" } else { "lines" }
            ),
            _ => format!(
                "     ?   {} seen, total unknown (full text lost)",
                plurals(v.seen_lines, "line")
            ),
        };
        let _ = write!(
            out,
            "{:<28} {:<12} {:<10} {bar} {share}  {peeks}",
            clip(&v.tool_call_id, 28),
            clip(&v.tool, 12),
            v.state.as_str(),
        );
        if v.reread_lines > 0 {
            let _ = write!(out, ", {} re-read", count(v.reread_lines));
        }
        if v.peek_bytes > 0 {
            let _ = write!(out, ", {} read back", bytes(v.peek_bytes));
        }
        if v.missed_errors.count > 0 {
            let missed = plurals(v.missed_errors.count, "error-looking line");
            let _ = write!(out, ", {missed} never shown");
        }
        out.push('\n');
    }
    out
}
