//! `mctl watch`: one line per change (a JSON object per line with `--json`), until interrupted.

use crate::human;
use crate::output::print_text;
use mission_control::runs::RunsDir;
use mission_control::watch::{poll_asked, watch, watch_polling};
use std::io::{self, Write};

pub fn run(dir: RunsDir, poll: bool, json: bool) -> anyhow::Result<()> {
    let dirs = [dir.root().to_path_buf()];
    let (_handle, rx) = match poll_asked(poll) {
        Some(reason) => watch_polling(&dirs, dir.opts, &reason)?,
        None => watch(&dirs, dir.opts)?,
    };
    for change in rx {
        if json {
            let mut line = serde_json::to_vec(&change)?;
            line.push(b'\n');
            let mut out = io::stdout().lock();
            out.write_all(&line)?;
            out.flush()?;
        } else {
            print_text(&format!(
                "{}\n",
                human::clip(&human::change_line(&change), 400)
            ))?;
        }
    }
    Ok(())
}
