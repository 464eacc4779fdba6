//! `mctl pin RUN`, `mctl unpin RUN`, `mctl pins`: runs whose values GC never collects.

use crate::output::{print_human, print_json};
use mission_control::pins::{PinChange, Pins};
use mission_control::runs::RunsDir;

pub fn pin(dir: RunsDir, run: &str, pinned: bool, json: bool) -> anyhow::Result<()> {
    let (id, changed) = dir.set_pinned(run, pinned)?;
    if json {
        print_json(&PinChange {
            run: id,
            pinned,
            changed,
        })
    } else {
        let what = if pinned { "pinned" } else { "unpinned" };
        print_human(&format!(
            "{id} {}{what}\n",
            if changed { "" } else { "was already " }
        ))
    }
}

pub fn list(dir: RunsDir, json: bool) -> anyhow::Result<()> {
    let list = Pins::load_in(dir.config_dir())?.list(dir.root());
    if json {
        print_json(&list)
    } else {
        print_human(&list.iter().map(|p| format!("{p}\n")).collect::<String>())
    }
}
