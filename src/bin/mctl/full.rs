//! `mctl full RUN CALL`: the exact bytes of a result's full text, as the transcript holds it.

use crate::output::print_text;
use mission_control::runs::RunsDir;

pub fn run(dir: RunsDir, run: &str, call: &str) -> anyhow::Result<()> {
    print_text(&dir.find_result(run, call)?.content)
}
