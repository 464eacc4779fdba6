//! `mctl runs`: every run, most recently active first.

use crate::human;
use crate::output::{print_json, print_text};
use mission_control::runs::{now_ms, RunsDir};

pub fn run(dir: RunsDir, json: bool) -> anyhow::Result<()> {
    let runs = crate::progress::while_listing(|| dir.list())?;
    let printed = if json {
        print_json(&runs)
    } else {
        print_text(&human::runs_table(&runs, now_ms()))
    };
    // The process ends here: freeing 100,000 runs one by one is wasted time.
    std::mem::forget(runs);
    printed
}
