//! What Claude Code's own cleanup will delete at its next start (docs/agents.md): every session
//! file and every file of a session's `tool-results/` (one folder below too) whose own
//! modification time is older than `cleanupPeriodDays` (its `settings.json`, default 30). The
//! Storage view says so, so that a user can export what matters first.

use crate::model::Layout;
pub use crate::sources::sweep::{AgentSweep, SweptSession, DAY_MS};
use std::fs;
use std::path::{Path, PathBuf};

/// Claude Code's default retention.
pub const DEFAULT_CLEANUP_DAYS: u64 = 30;

/// Claude Code's config folder for store `root`: above the `projects` directory (`root` or its
/// parent), else `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn config_dir(root: &Path) -> Option<PathBuf> {
    let named = |p: &Path| p.file_name().is_some_and(|n| n == "projects");
    if named(root) {
        return root.parent().map(Path::to_path_buf);
    }
    if let Some(parent) = root.parent().filter(|p| named(p)) {
        return parent.parent().map(Path::to_path_buf);
    }
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".claude")))
}

/// `cleanupPeriodDays` of the settings file in `config`, and the file it came from.
fn period(config: Option<&Path>) -> (u64, Option<String>) {
    let Some(file) = config.map(|c| c.join("settings.json")) else {
        return (DEFAULT_CLEANUP_DAYS, None);
    };
    let Ok(bytes) = fs::read(&file) else {
        return (DEFAULT_CLEANUP_DAYS, None);
    };
    let days = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| {
            v.get("cleanupPeriodDays")
                .and_then(serde_json::Value::as_u64)
        })
        .unwrap_or(DEFAULT_CLEANUP_DAYS);
    (days, Some(file.to_string_lossy().into_owned()))
}

fn modified_ms(meta: &fs::Metadata) -> Option<i64> {
    crate::model::options::modified_ms(meta)
}

/// What Claude Code's cleanup deletes of store `layout` at `now_ms`; `titles` names the runs.
/// A period of 0 turns off transcript writing in Claude Code, not its cleanup: nothing is swept.
pub fn sweep(layout: &Layout, now_ms: i64, title: impl Fn(&str) -> String) -> AgentSweep {
    let (period_days, settings_file) = period(config_dir(&layout.root).as_deref());
    let period_ms = i64::try_from(period_days)
        .unwrap_or(i64::MAX / DAY_MS)
        .saturating_mul(DAY_MS);
    let mut out = AgentSweep {
        settings_file,
        ..AgentSweep::new("Claude Code", Some("cleanupPeriodDays"), period_ms, now_ms)
    };
    if period_days == 0 {
        return out;
    }
    for (id, files) in &layout.runs {
        // Only the project folder's own `*.jsonl` are swept, not the files in `subagents/`; a
        // side conversation is its session's file.
        let in_subagents = (files.transcript.as_deref())
            .and_then(|p| p.parent()?.file_name())
            .is_some_and(|n| n == super::SUBAGENTS);
        if in_subagents || files.side().is_some() {
            continue;
        }
        let Some(meta) = files
            .transcript
            .as_ref()
            .and_then(|p| fs::symlink_metadata(p).ok())
        else {
            continue;
        };
        if meta.is_file() {
            out.count_session(SweptSession {
                run: id.clone(),
                title: title(id),
                bytes: meta.len(),
                modified_ms: modified_ms(&meta),
            });
        }
    }
    out.sessions.sort_by_key(|s| s.modified_ms);
    for dir in layout.value_dirs.values() {
        count_old(dir, 0, &mut out);
    }
    out
}

/// Counts the regular files of a `tool-results/` folder and of its folders one level down.
fn count_old(dir: &Path, depth: u8, out: &mut AgentSweep) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(meta) = fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.is_file() {
            out.count_value(modified_ms(&meta), meta.len());
        } else if meta.is_dir() && depth == 0 {
            count_old(&entry.path(), 1, out);
        }
    }
}
