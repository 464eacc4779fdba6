//! Integration tests of the core and the `mctl` CLI: one test binary for the crate.

mod agents;
mod architecture;
mod bounded;
mod cli;
mod contract;
mod coverage;
mod demo;
mod diff;
mod export;
mod figures;
mod fixtures;
mod gc;
mod gen_types;
mod index;
mod layout;
mod manual;
mod open_value;
mod peek_golden;
mod props;
mod remote;
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

/// What the test process itself opens (the core's runs directories, the service, the watcher)
/// keeps its index in the test home's cache, never the user's: a test gives a directory of its
/// own where it matters, and every other one lands here. Set before main, while the process
/// has one thread.
#[ctor::ctor(unsafe)]
fn cache_in_the_test_home() {
    std::env::set_var("MCTL_CACHE_DIR", support::test_home().join("cache"));
}
