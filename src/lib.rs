//! Mission Control's core: everything that knows the runs-directory format (`docs/runs-dir.md`).
//! No UI and no Tauri here: the `mctl` CLI and the desktop shell both call these functions.
//!
//! The API is what the modules below re-export; their files are internal (`pub(crate)`), so the
//! front ends cannot come to depend on how a rule is implemented. The main entry points:
//!
//! - [`runs::RunsDir`]: a runs directory opened with the run model's settings. [`list`] gives
//!   every run, [`detail`] one run with its timeline and results, and [`open_value`], [`stub`]
//!   and [`peek`] are the one door each for a result's full text, its stub and a peek, so the
//!   CLI and the app cannot disagree.
//! - [`watch::LiveSession`]: what a front end keeps while it shows runs directories (the
//!   watcher, the list of runs, the run followed), sending to sinks it is given.
//! - [`gc::plan`], [`gc::apply`] and [`gc::storage`]: what a garbage collection would delete,
//!   deleting exactly that, and where the bytes are.
//! - [`wire::COMMANDS`] and [`wire::export_typescript`]: the desktop app's command contract and
//!   the TypeScript generated from it.
//! - [`index::RunIndex`]: what a listing derives, kept between runs in the cache directory so
//!   that a listing costs what changed (used by [`list`] unless turned off).
//! - [`search::search_runs`] of a [`search::SearchQuery`]: every run and value searched.
//! - The features take a [`runs::RunsDir`]: [`insights::coverage`], [`insights::what_if_runs`],
//!   [`insights::resume`], [`export::export_run`], [`gc::plan`], [`diff::diff_runs`].
//! - [`diff::diff_runs`] and [`diff::diff_results`]: two runs aligned, two results compared.
//! - [`retained`]: the spec's pure functions on retained values (`value_id`, the stub, peek).
//!
//! [`list`]: runs::RunsDir::list
//! [`detail`]: runs::RunsDir::detail
//! [`open_value`]: runs::RunsDir::open_value
//! [`stub`]: runs::RunsDir::stub
//! [`peek`]: runs::RunsDir::peek

// A `pub` item that the API does not reach is a mistake: it says "public" and is not.
#![warn(unreachable_pub)]
#![warn(missing_docs)]

pub(crate) mod config;
pub use config::{init_jobs, parse_jobs};
pub mod demo;
pub mod diff;
mod elsewhere;
mod error;
pub mod export;
pub(crate) mod fold;
pub mod gc;
pub mod index;
pub mod insights;
pub mod model;
pub mod pins;
mod progress;
pub use progress::{scan_progress, since_start_ms, start_clock, ScanProgress};
pub mod prices;
pub mod remote;
pub mod retained;
pub mod runs;
pub mod search;
pub mod service;
pub mod sources;
pub mod sync;
pub mod transcript;
pub mod watch;
pub mod wire;

pub use error::{Error, ErrorCode, Result};

/// What `--version` prints, the same for `mctl` and the app: the version and the commit built.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("MC_BUILD_COMMIT"),
    ")"
);

/// The harness's own runs directory on this system (spec A.1): `<app data dir>/runs` for the
/// bundle identifier `com.pierre.klide`.
pub fn default_runs_dir() -> Option<std::path::PathBuf> {
    dirs::data_dir().map(|d| d.join("com.pierre.klide").join("runs"))
}
