//! `mctl full RUN CALL`: the exact bytes of a result's full text, as the transcript holds it,
//! streamed: a result of any size costs one buffer.

use mission_control::runs::RunsDir;
use std::io::Write;

pub fn run(dir: RunsDir, run: &str, call: &str) -> anyhow::Result<()> {
    let found = dir.find_result(run, call)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    found.content.write_to(&mut out)?;
    out.flush()?;
    Ok(())
}
