//! `mctl stub RUN CALL`: the exact stub the model saw, from the core's one stub entry point.

use crate::output::{print_json, print_text};
use mission_control::runs::RunsDir;

pub fn run(dir: RunsDir, run: &str, call: &str, json: bool) -> anyhow::Result<()> {
    let answer = dir.stub(run, call)?;
    if json {
        print_json(&answer)
    } else {
        print_text(&answer.stub.text)
    }
}
