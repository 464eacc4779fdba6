//! Which kind of store a directory is, from its names and the first line of a transcript, and
//! where the agents keep theirs by default.

use super::SourceKind;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use ts_rs::TS;

/// Entries looked at before deciding: a store says what it is in its first few.
const LOOK_AT: usize = 500;

/// The kind of store `root` is. A harness runs directory has `<id>.summary.json`,
/// `<id>.values/` or transcripts of envelopes; a Codex store has `rollout-*.jsonl` files or
/// `YYYY/` folders; a Claude Code store has session files (its own or in project folders). A
/// directory that says nothing (empty) is read as a runs directory, unless it is called
/// `projects` (Claude Code) or `sessions` (Codex).
pub fn detect(root: &Path) -> SourceKind {
    if let Some(kind) = forced(root) {
        return kind;
    }
    // An agent's own folder is read as the store inside it (one step down, never more).
    let store = store_root(root);
    if store != root {
        return forced(&store).unwrap_or_else(|| detect_here(&store));
    }
    detect_here(root)
}

/// The kind of store `root` is, by what it holds itself.
fn detect_here(root: &Path) -> SourceKind {
    let Ok(entries) = fs::read_dir(root) else {
        return SourceKind::Klide;
    };
    // Every signal of the first entries is gathered before deciding: a harness runs directory
    // is never taken for another store because of the order its entries come in.
    let (mut klide, mut codex, mut claude, mut gemini) = (false, false, false, false);
    let mut folders = Vec::new();
    for entry in entries.filter_map(Result::ok).take(LOOK_AT) {
        let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
            continue;
        };
        if kind.is_file() {
            if name.ends_with(".summary.json") {
                klide = true;
            } else if super::codex::rollout_id(&name).is_some() {
                codex = true;
            } else if super::gemini::is_session_file(&name) {
                gemini = true;
            } else if name.ends_with(".jsonl") && !klide && !claude {
                match sniff(&entry.path()) {
                    Some(SourceKind::Klide) => klide = true,
                    Some(SourceKind::Claude) => claude = true,
                    Some(SourceKind::Codex) => codex = true,
                    Some(SourceKind::Gemini) => gemini = true,
                    Some(SourceKind::Opencode) | None => {}
                }
            }
        } else if kind.is_dir() {
            if name.ends_with(".values") {
                klide = true;
            } else if name.len() == 4 && name.bytes().all(|b| b.is_ascii_digit()) {
                codex = true;
            } else if name == super::gemini::CHATS
                || entry.path().join(super::gemini::CHATS).is_dir()
            {
                gemini = true;
            } else {
                folders.push(entry.path());
            }
        }
    }
    if klide {
        return SourceKind::Klide;
    }
    if claude || folders.iter().take(20).any(|f| claude_folder(f)) {
        return SourceKind::Claude;
    }
    if codex {
        return SourceKind::Codex;
    }
    if gemini {
        return SourceKind::Gemini;
    }
    let opencode = root.join(super::opencode::DATABASE).is_file()
        || root.join(super::opencode::STORAGE).join("session").is_dir();
    if opencode {
        return SourceKind::Opencode;
    }
    match root.file_name().and_then(|n| n.to_str()) {
        Some("projects") => SourceKind::Claude,
        Some("sessions") => SourceKind::Codex,
        _ => SourceKind::Klide,
    }
}

/// The store a directory given by the user holds: the directory itself, or, for an agent's own
/// folder (`~/.claude`, `~/.codex`), its store one level down (`projects/`, `sessions/`). A
/// folder is taken for an agent's own when it holds no transcript of its own, has that store
/// folder, and is named as the agent names it or holds the agent's own files beside it.
pub fn store_root(root: &Path) -> PathBuf {
    const HOMES: [(&str, &str, &[&str]); 3] = [
        (
            "projects",
            ".claude",
            &[
                "settings.json",
                ".credentials.json",
                "history.jsonl",
                "todos",
                "statsig",
                "shell-snapshots",
                "ide",
                "plugins",
            ],
        ),
        (
            "sessions",
            ".codex",
            &[
                "config.toml",
                "auth.json",
                "history.jsonl",
                "log",
                "version.json",
            ],
        ),
        (
            "tmp",
            ".gemini",
            &[
                "projects.json",
                "oauth_creds.json",
                "google_accounts.json",
                "installation_id",
                "GEMINI.md",
            ],
        ),
    ];
    let Ok(entries) = fs::read_dir(root) else {
        return root.to_path_buf();
    };
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .take(LOOK_AT)
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    // A folder with transcripts or value folders of its own is a store itself.
    let own = names.iter().any(|n| {
        n.ends_with(".jsonl") && n != "history.jsonl"
            || n.ends_with(".values")
            || n.ends_with(".summary.json")
    });
    if own {
        return root.to_path_buf();
    }
    let named = |n: &str| root.file_name().is_some_and(|f| f == n);
    for (store, home, marks) in HOMES {
        let inner = root.join(store);
        let agent_home = named(home) || marks.iter().any(|m| names.iter().any(|n| n == m));
        if agent_home && names.iter().any(|n| n == store) && inner.is_dir() {
            return inner;
        }
    }
    root.to_path_buf()
}

/// The kinds the user declared (`--source`, the Settings view), by directory: every reader of
/// a directory asks [`detect`], so the listing, the watcher and each command agree.
static FORCED: std::sync::LazyLock<
    std::sync::RwLock<std::collections::HashMap<String, SourceKind>>,
> = std::sync::LazyLock::new(Default::default);

/// Reads `dirs` as the kinds given from now on; any other directory is detected again.
pub fn force_kinds<'a>(dirs: impl IntoIterator<Item = (&'a str, SourceKind)>) {
    let kinds = dirs
        .into_iter()
        .map(|(d, k)| (crate::config::dir_key(Path::new(d)), k))
        .collect();
    *FORCED.write().unwrap_or_else(|e| e.into_inner()) = kinds;
}

fn forced(root: &Path) -> Option<SourceKind> {
    let kinds = FORCED.read().unwrap_or_else(|e| e.into_inner());
    if kinds.is_empty() {
        return None;
    }
    kinds.get(&crate::config::dir_key(root)).copied()
}

/// A Claude Code session folder, or a project folder holding a Claude Code session.
fn claude_folder(folder: &Path) -> bool {
    if [super::claude::TOOL_RESULTS, super::claude::SUBAGENTS]
        .iter()
        .any(|s| folder.join(s).is_dir())
    {
        return true;
    }
    let Ok(entries) = fs::read_dir(folder) else {
        return false;
    };
    entries.filter_map(Result::ok).take(20).any(|e| {
        e.file_name().to_string_lossy().ends_with(".jsonl")
            && sniff(&e.path()) == Some(SourceKind::Claude)
    })
}

/// The kind the first non-empty line of a transcript says (at most 1 MiB of it is read).
fn sniff(path: &Path) -> Option<SourceKind> {
    let file = fs::File::open(path).ok()?;
    let mut reader = BufReader::new(std::io::Read::take(file, 1 << 20));
    let mut line = String::new();
    while line.trim().is_empty() {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
    }
    let has = |key: &str| line.contains(key);
    if has("\"schemaVersion\"") && has("\"event\"") {
        Some(SourceKind::Klide)
    } else if has("\"projectHash\"") {
        // A Gemini CLI chat log's metadata line names its session too: looked at first.
        Some(SourceKind::Gemini)
    } else if [
        "\"sessionId\"",
        "\"parentUuid\"",
        "\"leafUuid\"",
        "\"file-history-snapshot\"",
    ]
    .iter()
    .any(|k| has(k))
    {
        Some(SourceKind::Claude)
    } else if has("\"session_meta\"") || has("\"response_item\"") {
        Some(SourceKind::Codex)
    } else {
        None
    }
}

/// Where an agent keeps its sessions on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentLocation {
    /// The kind of store it is.
    pub source: SourceKind,
    /// Its path.
    pub path: String,
}

/// The agents' default stores that exist here: `$CLAUDE_CONFIG_DIR/projects` (else
/// `~/.claude/projects`), `$CODEX_HOME/sessions` (else `~/.codex/sessions`) and
/// `~/.gemini/tmp` and opencode's `$XDG_DATA_HOME/opencode` (else `~/.local/share/opencode`).
pub fn default_locations() -> Vec<AgentLocation> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = dirs::home_dir();
    let claude = env("CLAUDE_CONFIG_DIR").or_else(|| home.as_ref().map(|h| h.join(".claude")));
    let codex = env("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex")));
    [
        (SourceKind::Claude, claude.map(|d| d.join("projects"))),
        (SourceKind::Codex, codex.map(|d| d.join("sessions"))),
        (
            SourceKind::Gemini,
            home.as_ref().map(|h| h.join(".gemini").join("tmp")),
        ),
        (
            SourceKind::Opencode,
            env("XDG_DATA_HOME")
                .filter(|p| p.is_absolute())
                .or_else(|| home.as_ref().map(|h| h.join(".local/share")))
                .map(|d| d.join("opencode")),
        ),
    ]
    .into_iter()
    .filter_map(|(source, path)| {
        let path = path.filter(|p| p.is_dir())?;
        Some(AgentLocation {
            source,
            path: path.to_string_lossy().into_owned(),
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_store_is_told_by_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| {
            let p = dir.path().join(name);
            fs::create_dir_all(&p).unwrap();
            p
        };
        let klide = at("runs");
        fs::write(klide.join("r.jsonl"), "{\"schemaVersion\":1,\"runId\":\"r\",\"seq\":0,\"ts\":1,\"event\":{\"type\":\"run_started\"}}\n").unwrap();
        assert_eq!(detect(&klide), SourceKind::Klide);

        let projects = at("claude");
        let project = projects.join("-home-ana-app");
        fs::create_dir_all(&project).unwrap();
        fs::write(
            project.join("s.jsonl"),
            "{\"type\":\"user\",\"sessionId\":\"s\"}\n",
        )
        .unwrap();
        assert_eq!(detect(&projects), SourceKind::Claude);
        assert_eq!(detect(&project), SourceKind::Claude);

        let codex = at("codex");
        fs::create_dir_all(codex.join("2026/05/11")).unwrap();
        assert_eq!(detect(&codex), SourceKind::Codex);
        // A runs directory with a folder named like a year is still a runs directory.
        fs::create_dir_all(klide.join("2025")).unwrap();
        assert_eq!(detect(&klide), SourceKind::Klide);

        assert_eq!(detect(&at("empty")), SourceKind::Klide);
        // An agent's own folder is read as its store one level down.
        let home = at(".claude");
        fs::create_dir_all(home.join("projects/-home-ana-app")).unwrap();
        assert_eq!(store_root(&home), home.join("projects"));
        let codex_home = at("codex-home");
        fs::create_dir_all(codex_home.join("sessions/2026")).unwrap();
        fs::write(codex_home.join("config.toml"), "").unwrap();
        assert_eq!(store_root(&codex_home), codex_home.join("sessions"));
        // A runs directory, or a folder that is no agent's, stays what it is.
        fs::create_dir_all(klide.join("projects")).unwrap();
        assert_eq!(store_root(&klide), klide);
        let plain = at("work");
        fs::create_dir_all(plain.join("sessions")).unwrap();
        assert_eq!(store_root(&plain), plain);
        assert_eq!(detect(&at("x/projects")), SourceKind::Claude);
        assert_eq!(detect(&at("y/sessions")), SourceKind::Codex);
    }
}
