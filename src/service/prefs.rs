//! The desktop app's settings: what the user saved in its Settings view, and what the command
//! line and the environment give, which win. For each setting, in order: the app's flag
//! (`--runs-dir`, `--threshold`, `--running-window`, `--gc-idle-guard`), then its environment
//! variable (`MCTL_RUNS_DIR`, `MCTL_THRESHOLD`, `MCTL_RUNNING_WINDOW`, `MCTL_GC_IDLE_GUARD`, the
//! same ones `mctl` reads), then the saved value, then the default. The Settings view shows each
//! setting's source, and a saved value the command line hides stays saved for the next start.

use super::settings;
use crate::wire::{DirsSource, Settings};

use std::path::Path;

/// Environment variable naming the runs directory to show (one directory).
pub const ENV_RUNS_DIR: &str = "MCTL_RUNS_DIR";
/// Environment variable setting the retention threshold (`20480`, `8KiB`, `1MiB`).
pub const ENV_THRESHOLD: &str = "MCTL_THRESHOLD";
/// Environment variable setting the running window (`30m`, `2h`).
pub const ENV_RUNNING_WINDOW: &str = "MCTL_RUNNING_WINDOW";
/// Environment variable setting the GC idle guard (`10m`).
pub const ENV_GC_IDLE_GUARD: &str = "MCTL_GC_IDLE_GUARD";

pub use crate::wire::prefs::{SavedSettings, SettingSources, Theme};

/// What the app's command line gave; `None` (or empty) for a flag not given.
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// `--runs-dir` directories, in order; empty when none was given.
    pub runs_dirs: Vec<String>,
    /// `--threshold`, in bytes.
    pub threshold: Option<u64>,
    /// `--running-window`, in milliseconds.
    pub running_window_ms: Option<i64>,
    /// `--gc-idle-guard`, in milliseconds.
    pub gc_idle_guard_ms: Option<i64>,
}

/// The settings in effect: each one from `given`, else from the environment (`env` answers a
/// variable's value), else from `saved`, else its default. An environment variable that does not
/// parse is ignored, and said in `warnings`.
pub fn resolve(
    given: &Given,
    env: impl Fn(&str) -> Option<String>,
    saved: SavedSettings,
) -> Settings {
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let mut warnings = Vec::new();
    let mut from_env = |name: &str, parse: fn(&str) -> Result<i64, String>| -> Option<i64> {
        let value = env(name)?;
        match parse(&value) {
            Ok(v) => Some(v),
            Err(e) => {
                warnings.push(format!("${name} is ignored: {e}"));
                None
            }
        }
    };
    let threshold_env = from_env(ENV_THRESHOLD, |s| {
        parse_size(s).and_then(|n| i64::try_from(n).map_err(|e| e.to_string()))
    });
    let window_env = from_env(ENV_RUNNING_WINDOW, parse_duration_ms);
    let guard_env = from_env(ENV_GC_IDLE_GUARD, parse_duration_ms);

    // What the command line, then the environment, decide; the rest is the saved settings'.
    let mut s = settings(Vec::new(), DirsSource::Default, 0);
    if !given.runs_dirs.is_empty() {
        (s.runs_dirs, s.sources.runs_dirs) = (given.runs_dirs.clone(), DirsSource::Cli);
    } else if let Some(dir) = env(ENV_RUNS_DIR) {
        (s.runs_dirs, s.sources.runs_dirs) = (vec![dir], DirsSource::Env);
    }
    s.source = s.sources.runs_dirs;
    let threshold_given = given
        .threshold
        .map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    if let Some((v, source)) = decided(threshold_given, threshold_env) {
        (s.threshold, s.sources.threshold) = (v as u64, source);
    }
    if let Some((v, source)) = decided(given.running_window_ms, window_env) {
        (s.running_window_ms, s.sources.running_window) = (v, source);
    }
    if let Some((v, source)) = decided(given.gc_idle_guard_ms, guard_env) {
        (s.gc_idle_guard_ms, s.sources.gc_idle_guard) = (v, source);
    }
    apply_saved(&mut s, saved);
    s.warnings = warnings;
    s
}

/// The command line's value, else the environment's, with its source.
fn decided(cli: Option<i64>, env: Option<i64>) -> Option<(i64, DirsSource)> {
    cli.map(|v| (v, DirsSource::Cli))
        .or(env.map(|v| (v, DirsSource::Env)))
}

/// Gives every setting of `s` that neither the command line nor the environment decides (its
/// source is `saved` or `default`) its value in `saved`, else its default; and keeps `saved` as
/// what is saved. The one rule for a start ([`resolve`]) and for a save in the Settings view.
pub fn apply_saved(s: &mut Settings, saved: SavedSettings) {
    fn take<T>(value: &mut T, source: &mut DirsSource, saved: Option<T>, default: T) {
        if matches!(source, DirsSource::Saved | DirsSource::Default) {
            *source = if saved.is_some() {
                DirsSource::Saved
            } else {
                DirsSource::Default
            };
            *value = saved.unwrap_or(default);
        }
    }
    // None saved: the harness's own directory.
    let dirs = Some(saved.runs_dirs.clone()).filter(|d| !d.is_empty());
    let harness = crate::default_runs_dir().map(|p| p.to_string_lossy().into_owned());
    take(
        &mut s.runs_dirs,
        &mut s.sources.runs_dirs,
        dirs,
        harness.into_iter().collect(),
    );
    s.source = s.sources.runs_dirs;
    take(
        &mut s.threshold,
        &mut s.sources.threshold,
        saved.threshold,
        crate::retained::DEFAULT_THRESHOLD,
    );
    take(
        &mut s.running_window_ms,
        &mut s.sources.running_window,
        saved.running_window_ms,
        crate::runs::RunOptions::default().running_window_ms,
    );
    take(
        &mut s.gc_idle_guard_ms,
        &mut s.sources.gc_idle_guard,
        saved.gc_idle_guard_ms,
        crate::gc::DEFAULT_IDLE_GUARD_MS,
    );
    // The theme has no flag: always the saved one, `system` counting as the default.
    s.sources.theme = DirsSource::Default;
    let theme = Some(saved.theme).filter(|t| *t != Theme::System);
    take(&mut s.theme, &mut s.sources.theme, theme, Theme::System);
    s.saved = saved;
}

/// The settings saved at `path`: none when there is no such file; an unreadable or invalid one
/// reads as none too, with the reason (the app starts with its defaults and says why).
pub fn load(path: &Path) -> (SavedSettings, Option<String>) {
    match std::fs::read(path) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(saved) => (saved, None),
            Err(e) => (
                SavedSettings::default(),
                Some(format!(
                    "{} is not valid settings ({e}): ignored",
                    path.display()
                )),
            ),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (SavedSettings::default(), None),
        Err(e) => (
            SavedSettings::default(),
            Some(format!(
                "{} could not be read ({e}): ignored",
                path.display()
            )),
        ),
    }
}

/// Saves `saved` at `path`, whole or not at all.
pub fn save(path: &Path, saved: &SavedSettings) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_vec_pretty(saved).map_err(std::io::Error::other)?;
    crate::config::write_atomic(path, &json)
}

/// A size as `mctl --threshold` takes it: `20480`, `8KiB`, `1MiB`, `500MB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("`{s}` is not a size (like 5GiB or 500MB): {e}"))
}

/// A duration as `mctl --running-window` takes it (`30m`, `2h`, `90s`), in milliseconds.
pub fn parse_duration_ms(s: &str) -> Result<i64, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("`{s}` is not a duration (like 30m or 2h): {e}"))?;
    i64::try_from(d.as_millis()).map_err(|_| format!("`{s}` is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn saved() -> SavedSettings {
        SavedSettings {
            runs_dirs: vec!["/saved/a".into(), "/saved/b".into()],
            threshold: Some(8192),
            running_window_ms: Some(60_000),
            gc_idle_guard_ms: Some(120_000),
            theme: Theme::Dark,
            declined_agents: Vec::new(),
            dir_kinds: Default::default(),
        }
    }

    #[test]
    fn nothing_given_nothing_saved_is_the_defaults() {
        let s = resolve(&Given::default(), env(&[]), SavedSettings::default());
        assert_eq!(s.threshold, 20_480);
        assert_eq!(s.running_window_ms, 30 * 60_000);
        assert_eq!(s.gc_idle_guard_ms, 10 * 60_000);
        assert_eq!(s.theme, Theme::System);
        assert_eq!(s.sources, SettingSources::default());
        assert_eq!(s.source, DirsSource::Default);
    }

    #[test]
    fn saved_settings_apply_when_nothing_else_is_given() {
        let s = resolve(&Given::default(), env(&[]), saved());
        assert_eq!(s.runs_dirs, ["/saved/a", "/saved/b"]);
        assert_eq!(
            (
                s.threshold,
                s.running_window_ms,
                s.gc_idle_guard_ms,
                s.theme
            ),
            (8192, 60_000, 120_000, Theme::Dark)
        );
        assert!(
            [
                s.sources.runs_dirs,
                s.sources.threshold,
                s.sources.running_window
            ]
            .iter()
            .chain([&s.sources.gc_idle_guard, &s.sources.theme])
            .all(|x| *x == DirsSource::Saved),
            "{:?}",
            s.sources
        );
    }

    #[test]
    fn the_environment_beats_saved_settings() {
        let vars = [
            (ENV_RUNS_DIR, "/from/env"),
            (ENV_THRESHOLD, "1MiB"),
            (ENV_RUNNING_WINDOW, "2h"),
            (ENV_GC_IDLE_GUARD, "90s"),
        ];
        let s = resolve(&Given::default(), env(&vars), saved());
        assert_eq!(s.runs_dirs, ["/from/env"]);
        assert_eq!(
            (s.threshold, s.running_window_ms, s.gc_idle_guard_ms),
            (1 << 20, 2 * 3_600_000, 90_000)
        );
        assert_eq!(s.sources.threshold, DirsSource::Env);
        assert_eq!(s.sources.gc_idle_guard, DirsSource::Env);
        // What is saved stays known: the view shows it, and a start without the variable uses it.
        assert_eq!(s.saved, saved());
    }

    #[test]
    fn the_command_line_beats_the_environment() {
        let vars = [(ENV_RUNS_DIR, "/from/env"), (ENV_THRESHOLD, "1MiB")];
        let given = Given {
            runs_dirs: vec!["/cli/1".into(), "/cli/2".into()],
            threshold: Some(4096),
            running_window_ms: Some(5_000),
            gc_idle_guard_ms: Some(0),
        };
        let s = resolve(&given, env(&vars), saved());
        assert_eq!(s.runs_dirs, ["/cli/1", "/cli/2"]);
        assert_eq!(
            (s.threshold, s.running_window_ms, s.gc_idle_guard_ms),
            (4096, 5_000, 0)
        );
        assert_eq!(s.source, DirsSource::Cli);
        assert_eq!(s.sources.running_window, DirsSource::Cli);
        // The theme has no flag: the saved one applies.
        assert_eq!((s.theme, s.sources.theme), (Theme::Dark, DirsSource::Saved));
    }

    #[test]
    fn a_bad_variable_is_ignored_and_said() {
        let vars = [(ENV_THRESHOLD, "big"), (ENV_RUNNING_WINDOW, "")];
        let s = resolve(&Given::default(), env(&vars), saved());
        assert_eq!(
            (s.threshold, s.sources.threshold),
            (8192, DirsSource::Saved)
        );
        assert_eq!(
            s.sources.running_window,
            DirsSource::Saved,
            "empty is unset"
        );
        assert_eq!(s.warnings.len(), 1);
        assert!(s.warnings[0].starts_with("$MCTL_THRESHOLD is ignored: `big` is not a size"));
    }

    #[test]
    fn settings_round_trip_and_an_older_file_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("settings.json");
        assert_eq!(load(&path), (SavedSettings::default(), None));
        save(&path, &saved()).unwrap();
        assert_eq!(load(&path), (saved(), None));
        std::fs::write(&path, r#"{"runsDirs": ["/old"]}"#).unwrap();
        let (old, warning) = load(&path);
        assert_eq!(
            (old.runs_dirs, old.threshold, warning),
            (vec!["/old".into()], None, None)
        );
        std::fs::write(&path, "{not json").unwrap();
        let (bad, warning) = load(&path);
        assert_eq!(bad, SavedSettings::default());
        assert!(warning.unwrap().contains("is not valid settings"));
    }
}
