//! `mctl completions SHELL` and `mctl manpages DIR`: the shell completions and manual pages,
//! generated from the grammar in `cli.rs` so they cannot fall behind it. The package build runs
//! both and installs what they write.

use crate::cli::Cli;
use anyhow::Context;
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "mctl", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(())
}

/// `mctl.1`, and `mctl-COMMAND.1` for each visible command.
pub fn manpages(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("writing manual pages into {}", dir.display()))
}
