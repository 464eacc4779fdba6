//! Which runs directories the app shows: `--runs-dir` (repeatable), else `$MCTL_RUNS_DIR`, else
//! the directories chosen in the app (remembered in the app's config directory), else the
//! harness's own directory.

use clap::Parser;
use mission_control::wire::{DirsSource, Settings};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "mission-control",
    version = mission_control::VERSION,
    about = "Mission Control desktop app"
)]
pub struct Args {
    /// A runs directory to show (repeat for several)
    #[arg(long = "runs-dir", value_name = "DIR")]
    pub runs_dirs: Vec<PathBuf>,
    /// Retention threshold in bytes
    #[arg(long, default_value_t = mission_control::retained::DEFAULT_THRESHOLD)]
    pub threshold: u64,
}

const FILE: &str = "settings.json";

#[derive(serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Saved {
    runs_dirs: Vec<String>,
}

pub fn resolve(args: &Args, config_dir: Option<&Path>) -> Settings {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let (runs_dirs, source) = if !args.runs_dirs.is_empty() {
        (
            args.runs_dirs.iter().map(|p| text(p)).collect(),
            DirsSource::Cli,
        )
    } else if let Some(env) = std::env::var_os("MCTL_RUNS_DIR").filter(|v| !v.is_empty()) {
        (vec![text(Path::new(&env))], DirsSource::Env)
    } else if let Some(saved) = config_dir
        .and_then(load)
        .filter(|s| !s.runs_dirs.is_empty())
    {
        (saved.runs_dirs, DirsSource::Saved)
    } else {
        let default = mission_control::default_runs_dir()
            .map(|p| text(&p))
            .into_iter()
            .collect();
        (default, DirsSource::Default)
    };
    mission_control::service::settings(runs_dirs, source, args.threshold)
}

fn load(config_dir: &Path) -> Option<Saved> {
    let bytes = std::fs::read(config_dir.join(FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Remembers `dirs` for the next start (written whole to a temp file, then renamed).
pub fn save(config_dir: &Path, dirs: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(config_dir)?;
    let tmp = config_dir.join(format!("{FILE}.tmp"));
    std::fs::write(
        &tmp,
        serde_json::to_vec_pretty(&Saved {
            runs_dirs: dirs.to_vec(),
        })?,
    )?;
    std::fs::rename(tmp, config_dir.join(FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(dirs: &[&str]) -> Args {
        Args {
            runs_dirs: dirs.iter().map(PathBuf::from).collect(),
            threshold: 20_480,
        }
    }

    // One test, because it sets a process-wide environment variable.
    #[test]
    fn command_line_beats_environment_beats_saved_beats_default() {
        let config = tempfile::tempdir().unwrap();
        std::env::remove_var("MCTL_RUNS_DIR");
        assert_eq!(
            resolve(&args(&[]), Some(config.path())).source,
            DirsSource::Default
        );

        save(config.path(), &["/saved/a".into(), "/saved/b".into()]).unwrap();
        let s = resolve(&args(&[]), Some(config.path()));
        assert_eq!(
            (s.source, s.runs_dirs.clone()),
            (
                DirsSource::Saved,
                vec!["/saved/a".into(), "/saved/b".into()]
            )
        );

        std::env::set_var("MCTL_RUNS_DIR", "/from/env");
        let s = resolve(&args(&[]), Some(config.path()));
        assert_eq!(
            (s.source, s.runs_dirs),
            (DirsSource::Env, vec!["/from/env".to_owned()])
        );

        let s = resolve(&args(&["/cli/1", "/cli/2"]), Some(config.path()));
        assert_eq!(
            (s.source, s.runs_dirs),
            (
                DirsSource::Cli,
                vec!["/cli/1".to_owned(), "/cli/2".to_owned()]
            )
        );
        std::env::remove_var("MCTL_RUNS_DIR");
    }
}
