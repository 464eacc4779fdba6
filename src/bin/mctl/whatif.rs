//! `mctl whatif --threshold T[,T2,...] [--run RUN]`: what other thresholds would have retained,
//! written and saved.

use crate::human::{bytes, clip, count};
use crate::output::{print_human, print_json};
use mission_control::insights::{Figures, WhatIf};
use mission_control::runs::RunsDir;
use std::fmt::Write as _;

/// Most tools listed under each threshold in text; the rest are summed in one line.
const TOOLS_SHOWN: usize = 8;

pub fn run(dir: RunsDir, thresholds: &[u64], run: Option<&str>, json: bool) -> anyhow::Result<()> {
    let source = dir.source();
    if !source.capabilities().retention_threshold {
        // Said, not failed: a script asking of several directories still gets its answer.
        eprintln!(
            "note: {} is a {} store: the what-if is about the harness's retention threshold, \
             and that agent sets its own limits, so no result of it is counted",
            dir.root().display(),
            source.label(),
        );
    }
    let answers = mission_control::insights::what_if_runs(&dir, thresholds, run)?;
    if json {
        print_json(&answers)
    } else {
        print_human(&text(&answers))
    }
}

fn text(answers: &[WhatIf]) -> String {
    let mut out = String::new();
    for (i, a) in answers.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let f = &a.figures;
        let _ = writeln!(
            out,
            "threshold {} ({} B): {} of {} {} retained",
            bytes(a.threshold),
            a.threshold,
            count(f.retained),
            count(f.results),
            if f.results == 1 { "result" } else { "results" },
        );
        let _ = writeln!(out, "  {}", line(f));
        let mut tools: Vec<(&String, &Figures)> = a.per_tool.iter().collect();
        tools.sort_by(|x, y| y.1.saved_bytes.cmp(&x.1.saved_bytes).then(x.0.cmp(y.0)));
        for (tool, f) in tools.iter().take(TOOLS_SHOWN) {
            let _ = writeln!(
                out,
                "  {:<16} {:>6} retained  {}",
                clip(tool, 16),
                count(f.retained),
                line(f)
            );
        }
        if tools.len() > TOOLS_SHOWN {
            let _ = writeln!(out, "  … and {} more tools", tools.len() - TOOLS_SHOWN);
        }
    }
    out
}

/// Context, saving and disk of one set of figures.
fn line(f: &Figures) -> String {
    let saved = if f.saved_bytes >= 0 {
        format!("saves {}", bytes(f.saved_bytes as u64))
    } else {
        format!("costs {} more", bytes(f.saved_bytes.unsigned_abs()))
    };
    // Said the way the bytes are: a threshold that costs context costs tokens "more", never
    // "~-74" of them saved.
    let tokens = count(f.saved_tokens.unsigned_abs());
    let more = if f.saved_tokens < 0 { " more" } else { "" };
    format!(
        "context {} of {} ({saved}, ~{tokens} tokens{more}), values on disk {}",
        bytes(f.context_bytes),
        bytes(f.total_bytes),
        bytes(f.value_bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_that_costs_context_says_so_in_bytes_and_tokens() {
        let f = |saved_bytes: i64, saved_tokens: i64| Figures {
            saved_bytes,
            saved_tokens,
            ..Default::default()
        };
        assert!(line(&f(-298, -74)).contains("(costs 298 B more, ~74 tokens more)"));
        let saves = line(&f(4000, 1000));
        assert!(
            saves.contains("(saves ") && saves.contains(" tokens)"),
            "{saves}"
        );
        assert!(!saves.contains("more") && !saves.contains('-'), "{saves}");
    }
}
