//! `mctl runs`: every run, most recently active first.

use crate::human;
use crate::output::print_listing;
use mission_control::runs::{now_ms, RunsDir};
use std::io::Write;

pub fn run(dir: RunsDir, json: bool) -> anyhow::Result<()> {
    // The store's layout is read once: what its scans found goes to the cache file only.
    mission_control::sources::one_look();
    // Each run is held packed, and unpacked as it is printed: a listing of 100,000 runs never
    // holds them all as runs.
    let runs = crate::progress::while_listing(|| dir.listing())?;
    let printed = if json {
        print_listing(&runs)
    } else {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        human::write_runs_table(&mut out, &runs, now_ms())
            .and_then(|()| out.flush())
            .map_err(anyhow::Error::from)
    };
    // The process ends here: freeing 100,000 runs one by one is wasted time.
    std::mem::forget(runs);
    printed
}
