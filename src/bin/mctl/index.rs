//! `mctl index [--rebuild]`: the index of the runs directory, brought up to date first (a
//! listing does that), and what it holds.

use crate::human;
use crate::output::{print_json, print_text};
use mission_control::runs::{now_ms, RunsDir};

pub fn run(dir: RunsDir, rebuild: bool, json: bool) -> anyhow::Result<()> {
    if !dir.indexed() {
        anyhow::bail!("the index is turned off (--no-index or MCTL_NO_INDEX)");
    }
    let Some(mut index) = dir.index() else {
        anyhow::bail!(
            "the index of {} cannot be used (see the line above)",
            dir.root().display()
        );
    };
    if rebuild {
        index.clear()?;
    }
    drop(index);
    // What a store's layout read found goes to its cache file only (see `runs`).
    mission_control::sources::one_look();
    let started = std::time::Instant::now();
    dir.refresh()?;
    let took = started.elapsed();
    let index = dir
        .index()
        .ok_or_else(|| anyhow::anyhow!("the index of {} cannot be used", dir.root().display()))?;
    let status = index.status(dir.root())?;
    if json {
        return print_json(&status);
    }
    let updated = status.updated_ms.map_or("never".to_owned(), |ms| {
        format!("{} ago", human::age(now_ms(), Some(ms)))
    });
    print_text(&format!(
        "index     {}\nruns dir  {}\nruns      {}\nfiles     {}\nbytes     {}\nupdated   {updated} (brought up to date in {} ms{})\n",
        status.path,
        status.runs_dir,
        status.runs,
        status.files,
        human::bytes(status.bytes),
        took.as_millis(),
        if rebuild { ", rebuilt" } else { "" },
    ))
}
