//! Gemini CLI's saved outputs as value files (docs/agents.md): from v0.29 the CLI saves a big
//! output, and each masked one, to `<project>/tool-outputs/session-<session id>/` as a `.txt`
//! file. That folder is the session's value folder: GC may take its `.txt` files and nothing
//! else (never a chat, a log or a checkpoint). Older generations saved to the system's temp
//! folder with no session in the path: those are read, never collected.
//!
//! The CLI's own cleanup (`general.sessionRetention` in its `settings.json`: on by default
//! from v0.33 with `maxAge` 30 days) deletes a chat older than `maxAge`, or past the newest
//! `maxCount`, with its saved outputs; it is forecast here as Claude Code's is.

use crate::model::layout::is_regular_file;
use crate::model::options::modified_ms;
use crate::model::stamp::files_stamp;
use crate::model::values::{value_file_of, ValueFile};
use crate::model::Layout;
use crate::sources::sweep::{AgentSweep, SweptSession, DAY_MS};
use crate::sources::ValueFolders;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A project's folder of saved outputs.
pub(crate) const TOOL_OUTPUTS: &str = "tool-outputs";
/// How a session's folder in it is named before its id.
const SESSION: &str = "session-";

/// Links each `tool-outputs/session-<id>/` folder of the projects under `root` to its run:
/// a main chat's run id ends with the first 8 characters of its session id, a subagent's is
/// the session id. A folder no run claims (its chat deleted) is an orphan, under its own
/// name; two runs that could claim it leave it unclaimed and uncollected.
pub(crate) fn value_dirs(root: &Path, projects: &[PathBuf], layout: &mut Layout) {
    for project in projects.iter().filter(|p| p.starts_with(root)) {
        let Ok(entries) = fs::read_dir(project.join(TOOL_OUTPUTS)) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let Ok(name) = e.file_name().into_string() else {
                continue;
            };
            let Some(session) = name.strip_prefix(SESSION).filter(|s| !s.is_empty()) else {
                continue;
            };
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let owners: Vec<&String> = match layout.runs.contains_key(session) {
                true => layout.runs.keys().filter(|id| *id == session).collect(),
                false => {
                    let short = session.get(..8).map(|s| format!("-{s}"));
                    (layout.runs.iter())
                        .filter(|(id, f)| {
                            f.parent.is_none() && short.as_ref().is_some_and(|s| id.ends_with(s))
                        })
                        .map(|(id, _)| id)
                        .collect()
                }
            };
            match owners.as_slice() {
                [one] => {
                    let one = (*one).clone();
                    layout.value_dirs.insert(one, e.path());
                }
                [] if !layout.run_names.contains(&name) => {
                    layout.value_dirs.insert(name, e.path());
                }
                _ => {}
            }
        }
    }
}

/// GC's view of a Gemini CLI store: each session's `tool-outputs/session-<id>/`.
pub(crate) struct SessionOutputs {
    root: PathBuf,
    dirs: BTreeMap<String, PathBuf>,
    transcripts: BTreeMap<String, PathBuf>,
}

impl SessionOutputs {
    pub(crate) fn of(layout: &Layout) -> Self {
        Self {
            root: layout.root.clone(),
            dirs: layout.value_dirs.clone(),
            transcripts: (layout.runs.iter())
                .filter_map(|(id, f)| Some((id.clone(), f.transcript.clone()?)))
                .collect(),
        }
    }
}

impl ValueFolders for SessionOutputs {
    fn rel(&self, id: &str) -> String {
        match self.dirs.get(id) {
            Some(d) => (d.strip_prefix(&self.root).unwrap_or(d))
                .to_string_lossy()
                .into_owned(),
            None => format!("{TOOL_OUTPUTS}/{id}"),
        }
    }

    fn writers(&self, id: &str) -> Vec<PathBuf> {
        self.transcripts.get(id).cloned().into_iter().collect()
    }

    fn stamp(&self, id: &str) -> String {
        files_stamp(&self.writers(id))
    }

    fn has_run(&self, id: &str) -> bool {
        self.writers(id).iter().any(|t| is_regular_file(t))
    }

    fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        list_outputs(dir)
    }

    fn collects(&self, run: &str) -> bool {
        self.dirs.contains_key(run)
    }

    fn takes(&self, run: &str, rest: &[&str]) -> bool {
        let in_session = (self.rel(run).rsplit('/').next()).is_some_and(|d| d.starts_with(SESSION));
        in_session && matches!(rest, [name] if stem(name).is_some())
    }

    fn owned_alone(&self) -> bool {
        false
    }

    fn is_run_folder(&self, _: &str) -> bool {
        false
    }
}

/// The stem of a saved output's file name (`run_shell_command_c1.txt`).
fn stem(name: &str) -> Option<&str> {
    name.strip_suffix(".txt").filter(|s| !s.is_empty())
}

/// The regular `.txt` files directly in a session's folder, by stem (links never followed).
fn list_outputs(dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(stem) = stem(&name) else { continue };
        if !entry.file_type().is_ok_and(|k| k.is_file()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        out.insert(stem.to_owned(), value_file_of(stem, entry.path(), &meta));
    }
    Ok(out)
}

/// Gemini CLI's folder (`~/.gemini`) for a store at `root`: above its `tmp`, else
/// `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
fn config_dir(root: &Path) -> Option<PathBuf> {
    let tmp = root
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "tmp"));
    if let Some(home) = tmp.and_then(Path::parent) {
        return Some(home.to_path_buf());
    }
    std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".gemini"))
        .or_else(|| dirs::home_dir().map(|h| h.join(".gemini")))
}

/// A duration as the settings write it (`30d`, `24h`, `4w`, `1m` = 30 days), in ms.
fn duration_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let unit = s.chars().last()?;
    let n: i64 = s[..s.len() - unit.len_utf8()].trim().parse().ok()?;
    let per = match unit {
        'h' => 3_600_000,
        'd' => DAY_MS,
        'w' => 7 * DAY_MS,
        'm' => 30 * DAY_MS,
        _ => return None,
    };
    (n > 0).then(|| n.saturating_mul(per))
}

/// The retention in effect: `general.sessionRetention` of the settings file (`enabled`,
/// `maxAge`, `maxCount`, `minRetention`), else the default (on, 30 days). `None` when the
/// settings turn it off.
struct Retention {
    max_age_ms: i64,
    max_count: Option<usize>,
    min_retention_ms: i64,
    file: Option<String>,
}

fn retention(config: Option<&Path>) -> Option<Retention> {
    let mut r = Retention {
        max_age_ms: 30 * DAY_MS,
        max_count: None,
        min_retention_ms: DAY_MS,
        file: None,
    };
    let file = config.map(|c| c.join("settings.json"));
    let Some(bytes) = file.as_ref().and_then(|f| fs::read(f).ok()) else {
        return Some(r);
    };
    r.file = file.map(|f| f.to_string_lossy().into_owned());
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let Some(set) = v.pointer("/general/sessionRetention") else {
        return Some(r);
    };
    if set.get("enabled") == Some(&Value::Bool(false)) {
        return None;
    }
    let dur = |k: &str| set.get(k).and_then(Value::as_str).and_then(duration_ms);
    r.max_age_ms = dur("maxAge").unwrap_or(r.max_age_ms);
    r.min_retention_ms = dur("minRetention").unwrap_or(r.min_retention_ms);
    r.max_count =
        (set.get("maxCount").and_then(Value::as_u64)).and_then(|n| usize::try_from(n).ok());
    Some(r)
}

/// What Gemini CLI's cleanup deletes of store `layout` at its next start: every main chat
/// older than `maxAge` (by its file's last change), or past the newest `maxCount` and older
/// than `minRetention`, with the saved outputs of its session. `None` when it is turned off.
pub(crate) fn sweep(
    layout: &Layout,
    now_ms: i64,
    title: &dyn Fn(&str) -> String,
) -> Option<AgentSweep> {
    let r = retention(config_dir(&layout.root).as_deref())?;
    let setting = Some("general.sessionRetention.maxAge");
    let mut out = AgentSweep {
        settings_file: r.file.clone(),
        ..AgentSweep::new("Gemini CLI", setting, r.max_age_ms, now_ms)
    };
    let mut chats: Vec<(&String, PathBuf, fs::Metadata)> = (layout.runs.iter())
        .filter(|(_, f)| f.parent.is_none())
        .filter_map(|(id, f)| {
            let t = f.transcript.clone()?;
            let meta = fs::symlink_metadata(&t)
                .ok()
                .filter(fs::Metadata::is_file)?;
            Some((id, t, meta))
        })
        .collect();
    // Newest first, for `maxCount`.
    chats.sort_by_key(|(_, _, m)| std::cmp::Reverse(modified_ms(m)));
    for (i, (id, _, meta)) in chats.iter().enumerate() {
        let changed = modified_ms(meta);
        // Past the newest `maxCount`, a chat goes as soon as it is older than `minRetention`.
        let over_count = r.max_count.is_some_and(|n| i >= n)
            && changed.is_some_and(|t| t < now_ms.saturating_sub(r.min_retention_ms));
        // Deciding by this time: a chat past the count goes at the next cleanup whatever its age.
        let decide = match over_count {
            true => Some(i64::MIN),
            false => changed,
        };
        let chat = SweptSession {
            run: (*id).clone(),
            title: title(id),
            bytes: meta.len(),
            modified_ms: changed,
        };
        out.count_session_at(chat, decide);
        // Its saved outputs go with it: counted by the chat's age, not their own.
        let files = (layout.value_dirs.get(*id))
            .and_then(|d| list_outputs(d).ok())
            .unwrap_or_default();
        for f in files.values() {
            out.count_value(decide, f.bytes);
        }
    }
    out.sessions.sort_by_key(|s| s.modified_ms);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_the_settings_write_them() {
        assert_eq!(duration_ms("30d"), Some(30 * DAY_MS));
        assert_eq!(duration_ms("24h"), Some(DAY_MS));
        assert_eq!(duration_ms("2w"), Some(14 * DAY_MS));
        assert_eq!(duration_ms("1m"), Some(30 * DAY_MS));
        assert_eq!(duration_ms("soon"), None);
        assert_eq!(duration_ms("0d"), None);
    }
}
