//! `mctl demo DIR`: writes a demo runs directory (same seed and clock, same bytes).

use crate::human;
use crate::output::{print_json, print_text};
use anyhow::Context as _;
use mission_control::demo;
use std::path::Path;

pub fn run(dir: &Path, seed: u64, now: Option<i64>, json: bool) -> anyhow::Result<()> {
    let report = demo::write_demo(dir, seed, now.unwrap_or(demo::DEFAULT_NOW_MS))
        .with_context(|| format!("writing the demo into {}", dir.display()))?;
    if json {
        print_json(&report)
    } else {
        print_text(&format!(
            "wrote {} ({}, {}) into {}\n",
            human::plurals(report.runs, "run"),
            human::plurals(report.files, "file"),
            human::bytes(report.bytes),
            dir.display()
        ))
    }
}
