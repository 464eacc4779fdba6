//! What a user gets besides the commands: `--version` with the commit built, one version across
//! the project's manifests, shell completions that complete, and a manual page per command.

use crate::support::{mctl_command, stdout};
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The commit this clone is at, as the build records it; none outside a clone.
fn head_commit() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(ROOT)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[test]
fn version_names_the_version_and_the_commit_built() {
    let out = mctl_command().arg("--version").output().expect("mctl runs");
    assert!(out.status.success());
    let version = stdout(&out);
    assert_eq!(version, format!("mctl {}\n", mission_control::VERSION));
    let commit = std::env::var("MC_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(head_commit)
        .unwrap_or_else(|| "unknown commit".into());
    assert_eq!(
        version,
        format!("mctl {} ({commit})\n", env!("CARGO_PKG_VERSION"))
    );
}

/// The package, the app and the UI all say the version `--version` prints.
#[test]
fn every_manifest_has_one_version() {
    let read = |p: &str| std::fs::read_to_string(Path::new(ROOT).join(p)).expect(p);
    let toml_version = |text: String| {
        text.lines()
            .find_map(|l| l.strip_prefix("version = \""))
            .map(|v| v.trim_end_matches('"').to_owned())
    };
    let json_version = |text: String| {
        serde_json::from_str::<serde_json::Value>(&text).expect("json")["version"]
            .as_str()
            .map(str::to_owned)
    };
    let ours = env!("CARGO_PKG_VERSION");
    assert_eq!(
        toml_version(read("src-tauri/Cargo.toml")).as_deref(),
        Some(ours)
    );
    assert_eq!(
        json_version(read("src-tauri/tauri.conf.json")).as_deref(),
        Some(ours)
    );
    assert_eq!(json_version(read("ui/package.json")).as_deref(), Some(ours));
}

/// Bash completes a command name from its first letters, as a user pressing Tab sees.
#[test]
fn bash_completion_completes_commands_and_flags() {
    let out = mctl_command()
        .args(["completions", "bash"])
        .output()
        .expect("mctl runs");
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("mctl.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &[&str]| {
        let line = words.join(" ");
        let shell = format!(
            "source {script}; COMP_WORDS=({line}); COMP_CWORD={cword}; COMP_LINE='{line}'; \
             COMP_POINT=${{#COMP_LINE}}; _mctl mctl '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script = script.display(),
            cword = words.len() - 1,
            cur = words[words.len() - 1],
            prev = words[words.len() - 2],
        );
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-c", &shell])
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut words: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
        words.sort();
        words
    };
    assert_eq!(complete(&["mctl", "ser"]), ["serve"]);
    assert_eq!(complete(&["mctl", "pi"]), ["pin", "pins"]);
    let gc_flags = complete(&["mctl", "gc", "--older"]);
    assert_eq!(gc_flags, ["--older-than"]);
}

#[test]
fn zsh_and_fish_completions_name_every_command() {
    for shell in ["zsh", "fish"] {
        let out = mctl_command()
            .args(["completions", shell])
            .output()
            .expect("mctl runs");
        assert!(out.status.success());
        let text = stdout(&out);
        for command in [
            "runs",
            "show",
            "peek",
            "search",
            "gc",
            "serve",
            "completions",
        ] {
            assert!(text.contains(command), "{shell} completion lacks {command}");
        }
    }
}

#[test]
fn manpages_are_written_for_mctl_and_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = mctl_command()
        .arg("manpages")
        .arg(dir.path())
        .output()
        .expect("mctl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
    let main = page("mctl.1");
    assert!(main.contains(".TH mctl 1"));
    assert!(main.contains(env!("CARGO_PKG_VERSION")));
    for command in ["runs", "peek", "gc", "serve", "search"] {
        let sub = page(&format!("mctl-{command}.1"));
        assert!(
            sub.contains(&format!(".TH mctl-{command} 1")),
            "no page for {command}"
        );
    }
    // The flags are in the pages, as `--help` gives them.
    assert!(page("mctl-gc.1").contains("older\\-than"));
    // The hidden command that writes them has no page.
    assert!(!dir.path().join("mctl-manpages.1").exists());
}
