//! `mctl value-id CALL...`: the value id (file name stem) of tool call ids.

use crate::output::{print_json, print_text};
use mission_control::retained::ValueIdPair;

pub fn run(calls: &[String], json: bool) -> anyhow::Result<()> {
    let pairs: Vec<ValueIdPair> = calls.iter().map(|c| ValueIdPair::of(c)).collect();
    if json {
        print_json(&pairs)
    } else {
        let text: String = pairs.iter().map(|p| format!("{}\n", p.value_id)).collect();
        print_text(&text)
    }
}
