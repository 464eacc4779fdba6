//! `mctl`'s log: tracing events on stderr, chosen by `MCTL_LOG` (`MCTL_LOG=debug`,
//! `MCTL_LOG=mission_control::gc=info`, any `EnvFilter` directive). Without it only warnings are
//! shown, and a normal run has none, so stdout and stderr stay what scripts expect.

use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::EnvFilter;

/// The variable that sets the filter.
const VAR: &str = "MCTL_LOG";
/// Without `MCTL_LOG`: warnings only (polling because native watching failed, an audit log
/// that could not be written).
const DEFAULT: &str = "warn";

/// Installs the subscriber; call once, first thing.
pub fn init() {
    // A filter that does not parse is reported rather than ignored in silence, then the default
    // applies: a typo in a log setting should not stop the command it was meant to observe.
    let filter = match std::env::var(VAR) {
        Ok(v) if !v.trim().is_empty() => EnvFilter::try_new(&v).unwrap_or_else(|e| {
            eprintln!("mctl: {VAR}={v:?} is not a log filter ({e}); showing warnings only");
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    };
    // `try_init` fails only when a subscriber is installed already, which first thing in `main`
    // none is.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Plain text, whatever features another crate of the workspace turns on.
        .with_ansi(false)
        // A span's close event carries its duration: how long a listing or a GC took.
        .with_span_events(FmtSpan::CLOSE)
        .try_init();
}
