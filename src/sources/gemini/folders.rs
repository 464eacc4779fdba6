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

/// Links each `tool-outputs/session-<id>/` folder of the projects under `root` to its run, a
/// chat of the same project: a main chat's run id ends with the first 8 characters of its
/// session id, a subagent's is the session id. A folder no chat claims (its chat deleted) is an
/// orphan, under its own name. A folder two chats could claim, or a chat two folders could be,
/// is left unclaimed and uncollected.
pub(crate) fn value_dirs(root: &Path, projects: &[PathBuf], layout: &mut Layout) {
    let mut claims: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for project in projects.iter().filter(|p| p.starts_with(root)) {
        let Ok(entries) = fs::read_dir(project.join(TOOL_OUTPUTS)) else {
            continue;
        };
        let chats = project.join(super::CHATS);
        // This project's chats only: another project's could share 8 characters of an id.
        let mine: Vec<(&String, bool)> = (layout.runs.iter())
            .filter(|(_, f)| f.transcript.as_ref().is_some_and(|t| t.starts_with(&chats)))
            .map(|(id, f)| (id, f.parent().is_none()))
            .collect();
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
            let short = session.get(..8).map(|s| format!("-{s}"));
            let owners: Vec<&String> = match mine.iter().find(|(id, _)| *id == session) {
                Some((id, _)) => vec![*id],
                None => (mine.iter())
                    .filter(|(id, main)| *main && short.as_ref().is_some_and(|s| id.ends_with(s)))
                    .map(|(id, _)| *id)
                    .collect(),
            };
            match owners.as_slice() {
                [one] => claims.entry((*one).clone()).or_default().push(e.path()),
                [] if !layout.has_run_name(&name) => claims.entry(name).or_default().push(e.path()),
                _ => {}
            }
        }
    }
    for (id, mut dirs) in claims {
        if let (Some(dir), 1) = (dirs.pop(), dirs.len() + 1) {
            layout.value_dirs.insert(id, dir);
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

/// Gemini CLI's folder (`~/.gemini`) for a store at `root`: above its `tmp` (the store is
/// `tmp`, a project in it, or a project's `chats`), else `$GEMINI_CLI_HOME/.gemini`, else
/// `~/.gemini`.
fn config_dir(root: &Path) -> Option<PathBuf> {
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    let tmp = (root.ancestors().take(3))
        .enumerate()
        .find(|(depth, p)| named(p, "tmp") && (*depth < 2 || named(root, super::CHATS)))
        .map(|(_, p)| p);
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

/// JSON with comments, as the CLI reads its settings (`//` and `/* */` outside strings): the
/// comments blanked out.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut in_string, mut escaped) = (false, false);
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The retention in effect: `general.sessionRetention` of the settings file (`enabled`,
/// `maxAge`, `maxCount`, `minRetention`), else the default (on, 30 days).
struct Retention {
    max_age_ms: i64,
    max_count: Option<usize>,
    file: Option<String>,
}

/// `None` when the settings turn the cleanup off, or hold what makes the CLI turn it off: a
/// `maxAge` it cannot read or shorter than `minRetention` (1 day by default), a `maxCount`
/// under 1.
fn retention(config: Option<&Path>) -> Option<Retention> {
    let mut r = Retention {
        max_age_ms: 30 * DAY_MS,
        max_count: None,
        file: None,
    };
    let file = config.map(|c| c.join("settings.json"));
    let Some(text) = file.as_ref().and_then(|f| fs::read_to_string(f).ok()) else {
        return Some(r);
    };
    r.file = file.map(|f| f.to_string_lossy().into_owned());
    let v: Value = serde_json::from_str(&strip_comments(&text)).unwrap_or(Value::Null);
    let Some(set) = v.pointer("/general/sessionRetention") else {
        return Some(r);
    };
    if set.get("enabled") == Some(&Value::Bool(false)) {
        return None;
    }
    let dur = |k: &str| match set.get(k) {
        None => Some(None),
        Some(v) => v.as_str().and_then(duration_ms).map(Some),
    };
    let min_retention = dur("minRetention")?.unwrap_or(DAY_MS);
    r.max_age_ms = dur("maxAge")?.unwrap_or(r.max_age_ms);
    if r.max_age_ms < min_retention {
        return None;
    }
    r.max_count = match set.get("maxCount") {
        None => None,
        Some(n) => Some(
            n.as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n >= 1)?,
        ),
    };
    Some(r)
}

/// What Gemini CLI's cleanup deletes of store `layout` at its next start: every main chat
/// older than `maxAge` (by its file's last change), or past the newest `maxCount` of its
/// project whatever its age, with the saved outputs of its session; and a kept chat's folder of
/// saved outputs older than `maxAge` itself (by the folder's last change). `None` when it is
/// turned off.
pub(crate) fn sweep(
    layout: &Layout,
    now_ms: i64,
    title: &dyn Fn(&str) -> String,
) -> Option<AgentSweep> {
    let r = retention(config_dir(&layout.root).as_deref())?;
    let setting = Some("general.sessionRetention.maxAge");
    let mut out = AgentSweep {
        settings_file: r.file.clone(),
        max_count: r.max_count.map(|n| n as u64),
        ..AgentSweep::new("Gemini CLI", setting, r.max_age_ms, now_ms)
    };
    // Each project's main chats, newest first (for `maxCount`).
    let mut projects: BTreeMap<PathBuf, Vec<(&String, fs::Metadata)>> = BTreeMap::new();
    for (id, f) in layout.runs.iter().filter(|(_, f)| f.parent().is_none()) {
        let Some(t) = f.transcript.as_ref() else {
            continue;
        };
        let Some(meta) = fs::symlink_metadata(t).ok().filter(fs::Metadata::is_file) else {
            continue;
        };
        let chats = t.parent().map(Path::to_path_buf).unwrap_or_default();
        projects.entry(chats).or_default().push((id, meta));
    }
    for chats in projects.values_mut() {
        chats.sort_by_key(|(_, m)| std::cmp::Reverse(modified_ms(m)));
        for (i, (id, meta)) in chats.iter().enumerate() {
            let changed = modified_ms(meta);
            // Past the newest `maxCount`: at the next cleanup, whatever its age.
            let decide = match r.max_count.is_some_and(|n| i >= n) {
                true => Some(i64::MIN),
                false => changed,
            };
            let chat = SweptSession {
                run: (*id).clone(),
                title: title(id),
                bytes: meta.len(),
                modified_ms: changed,
            };
            let goes = out.sessions.len();
            out.count_session_at(chat, decide);
            let swept = out.sessions.len() > goes;
            let Some(dir) = layout.value_dirs.get(*id) else {
                continue;
            };
            // Its saved outputs go with it; a kept chat's folder goes by its own age.
            let folder = fs::symlink_metadata(dir)
                .ok()
                .as_ref()
                .and_then(modified_ms);
            let at = match (swept, decide, folder) {
                (false, Some(a), Some(b)) => Some(a.min(b)),
                (false, a, b) => a.or(b),
                (true, a, _) => a,
            };
            for f in list_outputs(dir).unwrap_or_default().values() {
                out.count_value(at, f.bytes);
            }
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

    #[test]
    fn settings_are_read_as_the_cli_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let with = |text: &str| {
            fs::write(dir.path().join("settings.json"), text).unwrap();
            retention(Some(dir.path())).map(|r| (r.max_age_ms / DAY_MS, r.max_count))
        };
        assert_eq!(with("{}"), Some((30, None)));
        let commented = "{\n  // keep a week\n  \"general\": {\"sessionRetention\": {/* on */ \"maxAge\": \"7d\", \"maxCount\": 5}}\n}";
        assert_eq!(with(commented), Some((7, Some(5))));
        assert_eq!(
            with(r#"{"general": {"sessionRetention": {"enabled": false}}}"#),
            None
        );
        assert_eq!(
            with(r#"{"general": {"sessionRetention": {"maxAge": "soon"}}}"#),
            None,
            "unreadable"
        );
        assert_eq!(
            with(r#"{"general": {"sessionRetention": {"maxAge": "12h"}}}"#),
            None,
            "under minRetention"
        );
        assert_eq!(
            with(r#"{"general": {"sessionRetention": {"maxCount": 0}}}"#),
            None
        );
        assert_eq!(
            with(r#"{"a": "// not a comment", "general": {"sessionRetention": {"maxAge": "2w"}}}"#),
            Some((14, None))
        );
    }

    #[test]
    fn the_settings_are_found_above_tmp() {
        let at = |p: &str| config_dir(Path::new(p));
        assert_eq!(at("/h/.gemini/tmp"), Some(PathBuf::from("/h/.gemini")));
        assert_eq!(at("/h/.gemini/tmp/proj"), Some(PathBuf::from("/h/.gemini")));
        assert_eq!(
            at("/h/.gemini/tmp/proj/chats"),
            Some(PathBuf::from("/h/.gemini"))
        );
        assert_ne!(
            at("/tmp/copy/proj"),
            Some(PathBuf::from("/")),
            "not any folder named tmp"
        );
    }
}
