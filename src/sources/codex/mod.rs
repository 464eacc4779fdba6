//! Codex CLI's rollouts as runs. Codex keeps no full outputs: it cuts a big one in the middle,
//! in place, and the rollout keeps only that cut text. Read-only: there is nothing to collect.

mod fold;
mod layout;

pub(crate) use fold::{output_on_line, CodexFold};
pub(crate) use layout::{read as read_layout, rollout_id};
