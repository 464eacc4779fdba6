//! `mctl peek RUN CALL --lines A-B | --query TEXT`: what `peek_value` returns, from the core's
//! one peek entry point (which also answers the app's peek console).

use crate::output::{print_json, print_text};
use mission_control::retained::PeekRequest;
use mission_control::runs::RunsDir;

pub fn run(
    dir: RunsDir,
    run: &str,
    call: &str,
    lines: Option<(u64, Option<u64>)>,
    query: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let request = match (lines, query) {
        (Some((start, end)), _) => PeekRequest::Range { start, end },
        (None, Some(text)) => PeekRequest::Query { text },
        (None, None) => anyhow::bail!("give --lines A-B or --query TEXT"),
    };
    let answer = dir.peek(run, call, &request)?;
    if json {
        print_json(&answer)
    } else {
        print_text(&answer.peek.text)
    }
}
