//! The app's log: tracing events of the core and the shell, in a file of the app's log directory
//! that rolls over daily, the last [`KEEP_FILES`] kept. `MCTL_LOG` sets the filter as for `mctl`
//! (`MCTL_LOG=debug`); without it, Mission Control's own events from `info` up and the libraries'
//! warnings.

use std::path::Path;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

const VAR: &str = "MCTL_LOG";
const DEFAULT: &str = "warn,mission_control=info,mission_control_app=info";
/// Days of logs kept.
const KEEP_FILES: usize = 7;

/// Logs to `<state_dir>/mission-control.<yyyy-MM-dd>.log`. The app runs on without a log when
/// the file cannot be made, and says so on stderr. Whether there is a log file.
pub fn init(state_dir: &Path) -> bool {
    let appender = std::fs::create_dir_all(state_dir)
        .map_err(|e| e.to_string())
        .and_then(|()| {
            RollingFileAppender::builder()
                .rotation(Rotation::DAILY)
                .filename_prefix("mission-control")
                .filename_suffix("log")
                .max_log_files(KEEP_FILES)
                .build(state_dir)
                .map_err(|e| e.to_string())
        });
    let appender = match appender {
        Ok(a) => a,
        Err(e) => {
            eprintln!(
                "mission-control: no log file in {}: {e}",
                state_dir.display()
            );
            return false;
        }
    };
    // `try_init` fails only when a subscriber is installed already (a second app in one
    // process, as tests build): the first one goes on logging.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(appender)
        // A file is no terminal: no colour codes in it.
        .with_ansi(false)
        // A span's close event carries its duration: how long a listing or a GC took.
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
    true
}

/// `MCTL_LOG`, or [`DEFAULT`] when it is unset, empty or not a filter (which stderr is told).
fn filter() -> EnvFilter {
    match std::env::var(VAR) {
        Ok(v) if !v.trim().is_empty() => EnvFilter::try_new(&v).unwrap_or_else(|e| {
            eprintln!("mission-control: {VAR}={v:?} is not a log filter ({e})");
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    }
}
