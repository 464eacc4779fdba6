//! `mctl search PATTERN`: every run's messages, tool inputs, tool results and value files.
//! Hits are printed as they are found: JSON lines with `--json` (a summary line last), else
//! grouped under a heading per run and call, as `rg` groups by file.

use crate::cli::{Global, SearchArgs};
use crate::human::{bytes, count, plurals, safe};
use crate::output::{runs_dir_reading, Reads};
use mission_control::search::{HitKind, Kinds, SearchHit, SearchQuery, SearchSummary};
use serde::Serialize;
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// Searches; `true` when something was found.
pub fn run(g: &Global, args: &SearchArgs) -> anyhow::Result<bool> {
    // Every value is read (all of one run's with `--run`): a bucket's are fetched whole first.
    let dir = match &args.run {
        Some(run) => runs_dir_reading(g, Reads::Runs(&[run])),
        None => runs_dir_reading(g, Reads::Everything),
    }?;
    let query = SearchQuery {
        pattern: args.pattern.clone(),
        regex: args.regex,
        ignore_case: args.ignore_case,
        run: args.run.clone(),
        kinds: Kinds::parse(&args.kinds)?,
        max: args.max,
    };
    let colour = !g.json && io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let out = Mutex::new(Printer {
        out: io::BufWriter::new(io::stdout()),
        json: g.json,
        colour,
        heading: None,
        error: None,
    });
    let cancel = AtomicBool::new(false);
    let emit = |hits: Vec<SearchHit>| {
        let mut p = out.lock().expect("printer lock");
        if p.error.is_none() {
            if let Err(e) = p.hits(&hits) {
                p.error = Some(e);
                // A closed pipe: nobody reads the rest.
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    };
    let summary = mission_control::search::search_runs(&dir, &query, &cancel, &emit)?;
    let mut p = out.into_inner().expect("printer lock");
    if let Some(e) = p.error.take() {
        return Err(e.into());
    }
    p.summary(&summary)?;
    Ok(summary.hits > 0)
}

struct Printer {
    out: io::BufWriter<io::Stdout>,
    json: bool,
    colour: bool,
    /// The group the last hit printed belongs to.
    heading: Option<String>,
    error: Option<io::Error>,
}

#[derive(Serialize)]
struct SummaryLine<'a> {
    kind: &'static str,
    #[serde(flatten)]
    summary: &'a SearchSummary,
}

impl Printer {
    fn hits(&mut self, hits: &[SearchHit]) -> io::Result<()> {
        for h in hits {
            if self.json {
                serde_json::to_writer(&mut self.out, h)?;
                self.out.write_all(b"\n")?;
            } else {
                self.text(h)?;
            }
        }
        // Each batch goes out as it is found: a pipe sees the first hits at once.
        self.out.flush()
    }

    fn text(&mut self, h: &SearchHit) -> io::Result<()> {
        let group = heading(h);
        if self.heading.as_deref() != Some(group.as_str()) {
            if self.heading.is_some() {
                writeln!(self.out)?;
            }
            let shown = if self.colour {
                format!("\x1b[35m{group}\x1b[0m")
            } else {
                group.clone()
            };
            writeln!(self.out, "{shown}")?;
            self.heading = Some(group);
        }
        let (a, b) = (h.match_start as usize, h.match_end as usize);
        let (before, matched, after) = (&h.text[..a], &h.text[a..b], &h.text[b..]);
        let matched = if self.colour {
            format!("\x1b[1;31m{}\x1b[0m", safe(matched))
        } else {
            safe(matched)
        };
        let at = match (h.kind, h.line) {
            (HitKind::Value, _) => format!("{}", h.text_line),
            (HitKind::Result, Some(line)) => format!("L{line}:{}", h.text_line),
            (_, Some(line)) => format!("L{line}"),
            (_, None) => String::new(),
        };
        let lead = if h.text_offset > 0 { "…" } else { "" };
        let trail = if h.text_offset + h.text_bytes < h.line_bytes {
            "…"
        } else {
            ""
        };
        let unseen = if h.seen == Some(false) {
            "  [never shown to the model]"
        } else {
            ""
        };
        writeln!(
            self.out,
            "{at}:{lead}{}{matched}{}{trail}{unseen}",
            safe(before),
            safe(after)
        )
    }

    fn summary(&mut self, s: &SearchSummary) -> io::Result<()> {
        if self.json {
            serde_json::to_writer(
                &mut self.out,
                &SummaryLine {
                    kind: "summary",
                    summary: s,
                },
            )?;
            self.out.write_all(b"\n")?;
            return self.out.flush();
        }
        self.out.flush()?;
        // The figures go to stderr, as rg's --stats would not mix with the hits.
        let mut err = io::stderr().lock();
        if self.heading.is_some() {
            writeln!(err)?;
        }
        let cut = if s.truncated {
            " (stopped at --max)"
        } else {
            ""
        };
        let strays = match s.value_dirs_without_run {
            0 => String::new(),
            n => format!(" and {} without a run", plurals(n, "value folder")),
        };
        writeln!(
            err,
            "{}{cut} in {} ({}) of {}{strays} in {} ms",
            plurals(s.hits, "hit"),
            plurals(s.files, "file"),
            bytes(s.bytes),
            plurals(s.runs, "run"),
            count(s.elapsed_ms),
        )?;
        for skipped in &s.skipped {
            let path = safe(&skipped.path);
            writeln!(err, "skipped {path}: {}", safe(&skipped.reason))?;
        }
        Ok(())
    }
}

/// The group a hit is printed under: its run and call, or its run's messages.
fn heading(h: &SearchHit) -> String {
    let run = safe(&h.run);
    match (h.kind, &h.tool_call_id, &h.value_id) {
        (HitKind::Value, _, Some(v)) if h.stray => format!("{run}  stray value {}", safe(v)),
        (HitKind::Value, Some(c), Some(v)) => {
            format!("{run}  {}  value {}", safe(c), safe(v))
        }
        (HitKind::Message, ..) => format!("{run}  messages"),
        (_, Some(c), _) => format!("{run}  {}", safe(c)),
        _ => run,
    }
}
