//! `mctl diff RUN_A RUN_B`: two runs side by side, their events aligned (user messages as
//! anchors, then tool calls by tool and input), each side's figures, and the rows that differ.
//! `--results CALL_A CALL_B` prints the two results' texts as a unified diff instead. With two
//! `--runs-dir`, run A is read from the first and run B from the second.

use crate::cli::Global;
use crate::human::{bytes, clip, column_width, plurals, safe};
use crate::output::{open_dir, print_human, print_json, print_text, runs_dirs, Reads};
use mission_control::diff::{
    diff_results, diff_runs, unified, DiffItem, DiffRow, DiffRowKind, DiffSide, DiffStatus, RunDiff,
};
use mission_control::model::{cost_text, duration_text};
use mission_control::runs::RunsDir;
use std::fmt::Write as _;

pub fn run(
    g: &Global,
    run_a: &str,
    run_b: &str,
    results: Option<&[String]>,
    json: bool,
) -> anyhow::Result<()> {
    let (dir_a, dir_b) = dirs(g, run_a, run_b)?;
    if let Some([call_a, call_b]) = results {
        let diff = diff_results((&dir_a, run_a, call_a), (&dir_b, run_b, call_b))?;
        return if json {
            print_json(&diff)
        } else {
            print_text(&crate::human::safe_lines(&unified(&diff)))
        };
    }
    let diff = diff_runs(&dir_a, run_a, &dir_b, run_b)?;
    if json {
        print_json(&diff)
    } else {
        print_human(&table(&diff))
    }
}

/// The directories of run A and run B: the one given (or found) for both, or two.
fn dirs(g: &Global, run_a: &str, run_b: &str) -> anyhow::Result<(RunsDir, RunsDir)> {
    let open = |d: &str, runs: &[&str]| open_dir(g, d, g.threshold()?, Reads::Runs(runs));
    match runs_dirs(g)?.as_slice() {
        [one] => Ok((open(one, &[run_a, run_b])?, open(one, &[])?)),
        [a, b] => Ok((open(a, &[run_a])?, open(b, &[run_b])?)),
        _ => anyhow::bail!("diff reads one runs directory, or two (run A's, then run B's)"),
    }
}

fn table(d: &RunDiff) -> String {
    let mut out = String::new();
    let side = |s: &DiffSide| -> [String; 9] {
        [
            // Never cut: an id is pasted into the next command.
            safe(&s.run),
            clip(
                &format!(
                    "{} / {}",
                    s.provider.as_deref().unwrap_or("-"),
                    s.model.as_deref().unwrap_or("-")
                ),
                34,
            ),
            s.status.as_str().to_owned(),
            format!("{} in, {} out", s.input_tokens, s.output_tokens),
            cost_text(s.cost_usd, s.cost_estimated),
            duration_text(s.duration_ms.map(|ms| ms as f64)),
            format!("{} ({} failed)", s.tool_calls, s.failed_results),
            format!("{} · {}", s.retained, bytes(s.retained_bytes)),
            bytes(s.context_bytes),
        ]
    };
    let names = [
        "run",
        "model",
        "status",
        "tokens",
        "cost",
        "duration",
        "tool calls",
        "retained",
        "context",
    ];
    let (a, b) = (side(&d.a), side(&d.b));
    // Column A is as wide as its widest figure (a long run id), at least 34.
    let w = column_width(&a, 34);
    let _ = writeln!(out, "{:<12} {:<w$} B", "", "A");
    for (i, name) in names.iter().enumerate() {
        let _ = writeln!(out, "{name:<12} {:<w$} {}", a[i], b[i]);
    }
    let c = &d.counts;
    let _ = writeln!(
        out,
        "\n{} same, {} differ ({} in their results), {} only in A, {} only in B\n",
        plurals(c.same, "row"),
        c.differs,
        c.results_differ,
        c.only_a,
        c.only_b
    );
    for row in &d.rows {
        let _ = writeln!(out, "{}", row_line(row));
    }
    out
}

/// One row: its mark (`=` same, `~` differs, `<` only in A, `>` only in B), then each side.
fn row_line(row: &DiffRow) -> String {
    let mark = match row.status {
        DiffStatus::Same => '=',
        DiffStatus::Differs => '~',
        DiffStatus::OnlyA => '<',
        DiffStatus::OnlyB => '>',
    };
    let cell = |item: &Option<DiffItem>| -> String {
        let Some(i) = item else {
            return String::new();
        };
        match row.kind {
            DiffRowKind::User => format!("user: {}", i.text.as_deref().unwrap_or("")),
            DiffRowKind::Answer => format!("answer: {}", i.text.as_deref().unwrap_or("")),
            DiffRowKind::Tool => {
                let what = i.summary.as_deref().or(i.input.as_deref()).unwrap_or("");
                let result = i.result.as_ref().map_or("…".into(), |r| {
                    format!(
                        "{}{} {}",
                        if r.ok { "" } else { "failed " },
                        bytes(r.bytes),
                        r.state.as_str()
                    )
                });
                format!("{} {what} → {result}", i.tool.as_deref().unwrap_or("tool"))
            }
        }
    };
    let differs = if row.differs.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = row
            .differs
            .iter()
            .map(|f| format!("{f:?}").to_lowercase())
            .collect();
        format!("  [{}]", names.join(", "))
    };
    format!(
        "{mark} {:<50} | {:<50}{differs}",
        clip(&cell(&row.a), 50),
        clip(&cell(&row.b), 50)
    )
}
