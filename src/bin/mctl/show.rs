//! `mctl show RUN`: one run's figures, timeline, results and problems.

use crate::human;
use crate::output::{print_human, print_json};
use mission_control::runs::RunsDir;

pub fn run(dir: RunsDir, run: &str, json: bool) -> anyhow::Result<()> {
    let detail = dir.detail(run)?;
    if json {
        print_json(&detail)
    } else {
        print_human(&human::run_detail(&detail))
    }
}
