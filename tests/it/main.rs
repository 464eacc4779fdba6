//! Integration tests of the core and the `mctl` CLI: one test binary for the crate.

mod agents;
mod cli;
mod coverage;
mod demo;
mod diff;
mod export;
mod fixtures;
mod gc;
mod gen_types;
mod index;
mod layout;
mod manual;
mod open_value;
mod peek_golden;
mod props;
mod resume;
mod search;
mod serve;
mod session;
mod settings;
mod stub_golden;
mod support;
mod watch;
mod watch_index;
mod whatif;
