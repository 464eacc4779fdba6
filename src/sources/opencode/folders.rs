//! opencode's saved outputs as value files (docs/agents.md): from v1.1.7 opencode saves a cut
//! tool output to one global folder, `<data>/tool-output/tool_<ascending id>` (no extension,
//! no session in the name), and the tool part's `metadata.outputPath` is the only link from a
//! session to its files. So a session's value files are the files of that folder its own
//! results name: GC may take those and nothing else (never the database, never `storage/`),
//! and a file no session names is left to opencode's own cleanup, which deletes every
//! `tool_*` file older than 7 days by the time in its name.

use crate::model::values::{value_file_of, ValueFile};
use crate::model::Layout;
use crate::sources::sweep::{AgentSweep, DAY_MS};
use crate::sources::ValueFolders;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The folder opencode saves cut outputs to, in its data folder.
pub(crate) const TOOL_OUTPUT: &str = "tool-output";
/// How long opencode keeps a saved output (`RETENTION_MS` of its `truncate.ts`).
pub(crate) const RETENTION_DAYS: u64 = 7;

/// The saved output a tool part's `state` names: `metadata.outputPath`, when
/// `metadata.truncated` says the model got a cut text.
pub(crate) fn saved_path(state: &Value) -> Option<&str> {
    let truncated = state.pointer("/metadata/truncated") == Some(&Value::Bool(true));
    let path = state
        .pointer("/metadata/outputPath")
        .and_then(Value::as_str);
    path.filter(|_| truncated)
}

/// The name of a saved output's file (`tool_…`), what GC lists and the result's value id;
/// `None` for a path whose name is not one opencode gives.
pub(crate) fn file_name(path: &str) -> Option<&str> {
    path.rsplit(['/', '\\']).next().filter(|n| is_saved_name(n))
}

/// `tool_` and an id of letters and digits: the only names GC takes from `tool-output/`.
fn is_saved_name(name: &str) -> bool {
    name.strip_prefix("tool_")
        .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Where a saved output is now: the path the part names, else the file of that name in the
/// store's own `tool-output/` (a data folder copied from another machine or user).
pub(crate) fn saved_file(root: &Path, named: &str) -> Option<PathBuf> {
    let path = Path::new(named);
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let local = root.join(TOOL_OUTPUT).join(file_name(named)?);
    local.is_file().then_some(local)
}

/// How long ago opencode saved file `name`, by the time in its id: the id's first 12 hex
/// digits are the low 48 bits of `ms × 4096 + counter`, compared with now the same way (so the
/// age is right across the 795-day wrap, as opencode's own comparison is). `None` for a name
/// with no such id.
fn id_age_ms(name: &str, now_ms: i64) -> Option<i64> {
    let hex = name.strip_prefix("tool_")?.get(..12)?;
    let saved = u64::from_str_radix(hex, 16).ok()?;
    let mask = (1u64 << 48) - 1;
    // Now as the last id of this millisecond: a file saved in it is 0 ms old.
    let now = ((u64::try_from(now_ms).ok()? << 12) | 0xfff) & mask;
    i64::try_from((now.wrapping_sub(saved) & mask) >> 12).ok()
}

/// GC's view of `tool-output/`: one folder for every session, each session's files being the
/// ones its results name (GC keeps only those: [`ValueFolders::named_only`]).
pub(crate) struct ToolOutput {
    root: PathBuf,
    /// Each session, with what proves it unchanged (its rows' last change).
    revisions: BTreeMap<String, String>,
}

impl ToolOutput {
    pub(crate) fn of(layout: &Layout) -> Self {
        let revisions = (layout.runs.iter())
            .map(|(id, f)| (id.clone(), f.revision.clone().unwrap_or_default()))
            .collect();
        Self {
            root: layout.root.clone(),
            revisions,
        }
    }
}

impl ValueFolders for ToolOutput {
    fn rel(&self, _id: &str) -> String {
        TOOL_OUTPUT.to_owned()
    }

    /// The database every session shares: its time says nothing of one session, so the
    /// idle guard goes by the session's own last activity.
    fn writers(&self, _id: &str) -> Vec<PathBuf> {
        Vec::new()
    }

    fn stamp(&self, id: &str) -> String {
        self.revisions.get(id).cloned().unwrap_or_default()
    }

    fn has_run(&self, id: &str) -> bool {
        self.revisions.contains_key(id)
    }

    fn list(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        list_saved(dir)
    }

    fn collects(&self, run: &str) -> bool {
        self.revisions.contains_key(run) && self.root.join(TOOL_OUTPUT).is_dir()
    }

    fn takes(&self, _run: &str, rest: &[&str]) -> bool {
        matches!(rest, [name] if is_saved_name(name))
    }

    fn owned_alone(&self) -> bool {
        false
    }

    fn is_run_folder(&self, _: &str) -> bool {
        false
    }

    fn named_only(&self) -> bool {
        true
    }
}

/// The regular `tool_*` files of a `tool-output/` folder, by name (links never followed).
fn list_saved(dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if !is_saved_name(&name) || !entry.file_type().is_ok_and(|k| k.is_file()) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        out.insert(name.clone(), value_file_of(&name, entry.path(), &meta));
    }
    Ok(out)
}

/// The sessions whose results may name files of `tool-output/`: every session, when the
/// folder is a real one (its files are told apart by the results that name them).
pub(crate) fn value_dirs(root: &Path, layout: &mut Layout) {
    let dir = root.join(TOOL_OUTPUT);
    if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return;
    }
    for id in layout.runs.keys() {
        layout.value_dirs.insert(id.clone(), dir.clone());
    }
}

/// What opencode's own cleanup deletes of `tool-output/` at `now_ms`: every `tool_*` file
/// older than 7 days by the time in its name (its modification time when the name holds
/// none). opencode sweeps when it starts and then hourly; it never deletes a session.
pub(crate) fn sweep(layout: &Layout, now_ms: i64) -> AgentSweep {
    let mut out = AgentSweep::new("opencode", None, RETENTION_DAYS as i64 * DAY_MS, now_ms);
    let files = list_saved(&layout.root.join(TOOL_OUTPUT)).unwrap_or_default();
    for f in files.values() {
        let saved_ms = id_age_ms(&f.stem, now_ms)
            .map(|age| now_ms.saturating_sub(age))
            .or(f.modified_ms);
        out.count_value(saved_ms, f.bytes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::store::CheckPath;

    /// An id as opencode makes one at `ms` (counter 1).
    fn id_at(ms: i64) -> String {
        let enc = ((ms as u64) << 12 | 1) & ((1 << 48) - 1);
        format!("tool_{enc:012x}AbCdEfGhIjKlMn")
    }

    #[test]
    fn a_saved_files_age_is_read_from_its_name() {
        let now = 1_780_000_000_000;
        let day = 86_400_000;
        assert_eq!(id_age_ms(&id_at(now - 8 * day), now), Some(8 * day));
        assert_eq!(id_age_ms(&id_at(now), now), Some(0));
        assert_eq!(id_age_ms("tool_xyz", now), None);
        assert_eq!(
            file_name("/home/u/.local/share/opencode/tool-output/tool_0a1B"),
            Some("tool_0a1B")
        );
        assert_eq!(file_name("/x/opencode.db"), None);
        assert_eq!(file_name("/x/tool_../y"), None);
    }

    #[test]
    fn only_tool_files_of_a_known_session_pass() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(TOOL_OUTPUT)).unwrap();
        let mut layout = Layout {
            root: root.to_path_buf(),
            source: crate::model::SourceKind::Opencode,
            ..Default::default()
        };
        layout.runs.insert("ses_1".into(), Default::default());
        let o = ToolOutput::of(&layout);
        assert!(o.check_path("tool-output/tool_0a1B2c", "ses_1").is_ok());
        for bad in [
            "opencode.db",
            "tool-output/x.txt",
            "tool-output/tool_",
            "tool-output/tool_a/b",
            "storage/part/m/p.json",
            "tool-output/../opencode.db",
        ] {
            assert!(o.check_path(bad, "ses_1").is_err(), "{bad}");
        }
        assert!(o.check_path("tool-output/tool_0a1B2c", "ses_9").is_err());
    }
}
