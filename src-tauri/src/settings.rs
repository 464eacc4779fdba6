//! The app's command line, and the settings it starts with: each one from its flag, else its
//! environment variable, else what the Settings view saved (`settings.json` in the app's config
//! directory), else its default. The rule is the core's (`mission_control::service::prefs`).

use clap::Parser;
use mission_control::service::prefs::{self, Given};
use mission_control::wire::Settings;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "mission-control",
    version = mission_control::VERSION,
    about = "Mission Control desktop app"
)]
pub struct Args {
    /// A runs directory to show (repeat for several) [default: $MCTL_RUNS_DIR, else the ones
    /// chosen in the app, else the harness's own]
    #[arg(long = "runs-dir", value_name = "DIR")]
    pub runs_dirs: Vec<PathBuf>,
    /// Retention threshold (20480, 8KiB, 1MiB) [default: $MCTL_THRESHOLD, else the saved one,
    /// else 20480]
    #[arg(long, value_name = "SIZE", value_parser = prefs::parse_size)]
    pub threshold: Option<u64>,
    /// How long a run without a terminal event counts as running after its last change
    /// [default: $MCTL_RUNNING_WINDOW, else the saved one, else 30m]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub running_window: Option<Duration>,
    /// How recently changed a run may be and still have its values collected (the GC form's
    /// default) [default: $MCTL_GC_IDLE_GUARD, else the saved one, else 10m]
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub gc_idle_guard: Option<Duration>,
}

/// Where the Settings view's choices are kept.
pub fn file(config_dir: &Path) -> PathBuf {
    config_dir.join("settings.json")
}

pub fn resolve(args: &Args, config_dir: Option<&Path>) -> Settings {
    let ms = |d: Option<Duration>| d.map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let given = Given {
        runs_dirs: args
            .runs_dirs
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        threshold: args.threshold,
        running_window_ms: ms(args.running_window),
        gc_idle_guard_ms: ms(args.gc_idle_guard),
    };
    let (saved, warning) = match config_dir {
        Some(dir) => prefs::load(&file(dir)),
        None => Default::default(),
    };
    let mut settings = prefs::resolve(&given, |k| std::env::var(k).ok(), saved);
    settings.warnings.extend(warning);
    for w in &settings.warnings {
        tracing::warn!("{w}");
    }
    settings
}
