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

/// GC's view of `tool-output/`: one folder for every session, each session's files being the
/// ones its results name (GC keeps only those: [`ValueFolders::named_only`]), and only those no
/// other session names (a forked session's parts name its origin's files).
pub(crate) struct ToolOutput {
    root: PathBuf,
    /// Each session, with what proves it unchanged (its rows' last change).
    revisions: BTreeMap<String, String>,
    /// Each saved file's name, with every session whose parts name it: read once, when GC
    /// first asks; `None` when some of the store could not be read.
    namers: std::sync::OnceLock<Option<Namers>>,
}

/// Each saved file's name, with the sessions whose tool parts name it.
type Namers = BTreeMap<String, std::collections::BTreeSet<String>>;

impl ToolOutput {
    /// Whether session `run` names file `name` and no other session does. Nothing is when the
    /// store could not be read whole: a session unread may name any file.
    fn names_alone(&self, run: &str, name: &str) -> bool {
        let namers = self.namers.get_or_init(|| namers(&self.root).ok());
        (namers.as_ref().and_then(|n| n.get(name)))
            .is_some_and(|sessions| sessions.len() == 1 && sessions.contains(run))
    }
}

/// Each saved file's name, with the sessions whose tool parts name it: from the database (the
/// parts that say `outputPath`, read as it is now, never a frozen copy that could miss what the
/// write-ahead log holds) and the JSON tree (`storage/part/*/*.json`). An error when any of it
/// cannot be read: GC then takes nothing from the folder.
fn namers(root: &Path) -> io::Result<Namers> {
    let mut out = Namers::new();
    let mut add = |session: &str, data: &str| {
        let Ok(part) = serde_json::from_str::<Value>(data) else {
            return;
        };
        let state = part.get("state").unwrap_or(&Value::Null);
        if let Some(name) = saved_path(state).and_then(file_name) {
            out.entry(name.to_owned())
                .or_default()
                .insert(session.to_owned());
        }
    };
    let database = root.join(super::DATABASE);
    if database.is_file() {
        for (session, data) in super::db::saved_parts(&database)? {
            add(&session, &data);
        }
    }
    let parts = root.join(super::STORAGE).join("part");
    let messages = match fs::read_dir(&parts) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    for message in messages {
        for part in fs::read_dir(message?.path())? {
            let data = fs::read_to_string(part?.path())?;
            if !data.contains("\"outputPath\"") {
                continue;
            }
            let session = serde_json::from_str::<Value>(&data)
                .ok()
                .and_then(|v| v.get("sessionID")?.as_str().map(str::to_owned));
            if let Some(session) = session {
                add(&session, &data);
            }
        }
    }
    Ok(out)
}

impl ToolOutput {
    pub(crate) fn of(layout: &Layout) -> Self {
        let revisions = (layout.runs.iter())
            .map(|(id, f)| {
                (
                    id.clone(),
                    f.revision().map(str::to_owned).unwrap_or_default(),
                )
            })
            .collect();
        Self {
            root: layout.root.clone(),
            revisions,
            namers: std::sync::OnceLock::new(),
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

    /// A saved output that session `run` names and no other session does.
    fn takes(&self, run: &str, rest: &[&str]) -> bool {
        matches!(rest, [name] if is_saved_name(name) && self.owns(run, name))
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

    fn owns(&self, run: &str, stem: &str) -> bool {
        self.names_alone(run, stem)
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

/// How far outside a session's span a saved output's time may be and still be counted in it
/// (clocks, and the moment between saving the file and writing the part that names it).
const SLACK_MS: i64 = 60_000;

/// The milliseconds a saved output's name holds: the low 36 bits of its time (the id's first 12
/// hex digits are the low 48 bits of `ms × 4096 + counter`).
fn id_ms36(name: &str) -> Option<u64> {
    let id = name.strip_prefix("tool_")?;
    // Its first 12 characters, or all of a shorter id, read as opencode reads them.
    let hex = id.get(..12).unwrap_or(id);
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(u64::from_str_radix(hex, 16).ok()? >> 12)
}

/// A millisecond time's low 36 bits, as an id holds it.
const MS36: u64 = (1 << 36) - 1;

/// Links `tool-output/` to the sessions whose results may name its files: those whose span
/// (from creation to their rows' last change, `spans`) holds a file's time, as its name holds
/// it (compared in its 36 bits, so the wrap every 795 days changes nothing). Only those
/// sessions get the folder as their value folder, and each one's revision takes the names of
/// the files in its span: a file saved or deleted (by opencode's sweep, or a GC) reads again
/// only the sessions it may belong to, and a session with none is never read for GC. Which
/// files are a session's is then told by its results (`named_only`).
pub(crate) fn value_dirs(root: &Path, layout: &mut Layout, spans: &BTreeMap<String, (i64, i64)>) {
    let dir = root.join(TOOL_OUTPUT);
    if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    let mut saved: Vec<(u64, String)> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| is_saved_name(n))
        .filter_map(|n| Some((id_ms36(&n)?, n)))
        .collect();
    saved.sort();
    for (id, files) in layout.runs.iter_mut() {
        let Some((start, end)) = spans.get(id) else {
            continue;
        };
        let from = (start.saturating_sub(SLACK_MS)).max(0) as u64;
        let len = (end.saturating_add(SLACK_MS).max(0) as u64).saturating_sub(from);
        if len > MS36 {
            continue; // a span over 795 days: its files cannot be told by time
        }
        let (lo, hi) = (from & MS36, (from + len) & MS36);
        let range = |a: u64, b: u64| {
            let i = saved.partition_point(|(t, _)| *t < a);
            let j = saved.partition_point(|(t, _)| *t <= b);
            &saved[i..j.max(i)]
        };
        // The span may wrap past the 36 bits' end: two ranges then.
        let mine: Vec<&str> = match lo <= hi {
            true => range(lo, hi).iter().collect::<Vec<_>>(),
            false => range(lo, MS36).iter().chain(range(0, hi)).collect(),
        }
        .into_iter()
        .map(|(_, n)| n.as_str())
        .collect();
        if mine.is_empty() {
            continue;
        }
        let hash = crate::retained::value_id::fnv1a32(mine.join("/").as_bytes());
        // A session told by its files' times (no revision) keeps them: the folder's own stamp
        // then stands for its files, as for any store.
        let inside = files.nesting.as_mut().and_then(|n| n.inside.as_mut());
        if let Some(revision) = inside.and_then(|i| i.revision.as_mut()) {
            revision.push_str(&format!("|{}:{hash:08x}", mine.len()));
        }
        layout.value_dirs.insert(id.clone(), dir.clone());
    }
}

/// What opencode's own cleanup deletes of `tool-output/` at `now_ms`: every `tool_*` file older
/// than 7 days by the time in its name, compared as opencode compares it: the low 36 bits of the
/// file's millisecond against those of the cutoff, as plain numbers. (So for a week after they
/// wrap, every 795 days, it deletes the files saved since the wrap, and then keeps the older
/// ones for another 795 days; the forecast says the same.) A name whose id does not start with
/// hex digits is one opencode cannot date: not counted. It sweeps when it starts and then
/// hourly, and never deletes a session.
pub(crate) fn sweep(layout: &Layout, now_ms: i64) -> AgentSweep {
    let mut out = AgentSweep::new("opencode", None, RETENTION_DAYS as i64 * DAY_MS, now_ms);
    let low = |ms: i64| (ms.max(0) as u64) & MS36;
    let cutoff = low(out.cutoff_ms);
    let soon = low(out.cutoff_ms.saturating_add(out.soon_days as i64 * DAY_MS));
    let files = list_saved(&layout.root.join(TOOL_OUTPUT)).unwrap_or_default();
    for f in files.values() {
        let Some(saved) = id_ms36(&f.stem) else {
            continue;
        };
        if saved < cutoff {
            out.value_files += 1;
            out.value_bytes += f.bytes;
        } else if saved < soon {
            out.soon_value_files += 1;
            out.soon_value_bytes += f.bytes;
        }
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
    fn a_saved_files_time_is_read_from_its_name() {
        let now = 1_780_000_000_000;
        assert_eq!(id_ms36(&id_at(now)), Some(now as u64 & MS36));
        assert_eq!(id_ms36("tool_xyz"), None);
        assert_eq!(id_ms36("tool_0a1B2c3d4e5gQQ"), None, "not hex");
        assert_eq!(
            file_name("/home/u/.local/share/opencode/tool-output/tool_0a1B"),
            Some("tool_0a1B")
        );
        assert_eq!(file_name("/x/opencode.db"), None);
        assert_eq!(file_name("/x/tool_../y"), None);
    }

    #[test]
    fn a_saved_file_goes_to_the_sessions_whose_span_holds_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join(TOOL_OUTPUT)).unwrap();
        let day = 86_400_000;
        let t = 1_780_000_000_000;
        for ms in [t, t + 3 * day] {
            fs::write(root.join(TOOL_OUTPUT).join(id_at(ms)), "x").unwrap();
        }
        let mut layout = Layout::default();
        let mut spans = BTreeMap::new();
        for (id, span) in [
            ("a", (t - 1000, t + 1000)),
            ("b", (t + day, t + 2 * day)),
            ("c", (t + 3 * day - 5, t + 3 * day)),
        ] {
            let inside = crate::model::layout::Inside {
                revision: Some("rows".into()),
                ..Default::default()
            };
            let rows = crate::model::RunFiles {
                nesting: crate::model::layout::Nesting {
                    inside: inside.boxed(),
                    ..Default::default()
                }
                .boxed(),
                ..Default::default()
            };
            layout.runs.insert(id.into(), rows);
            spans.insert(id.to_owned(), span);
        }
        // Its span wraps past the 36 bits' end (every 795 days) and still holds its file.
        let w = (1i64 << 36) * 25 - 500;
        fs::write(root.join(TOOL_OUTPUT).join(id_at(w + 700)), "x").unwrap();
        layout.runs.insert("w".into(), Default::default());
        spans.insert("w".into(), (w, w + 1000));
        value_dirs(root, &mut layout, &spans);
        let with: Vec<&str> = layout.value_dirs.keys().map(String::as_str).collect();
        assert_eq!(with, ["a", "c", "w"]);
        // The names of its files join its rows' revision; a session with none keeps its own.
        let revision = |id: &str| {
            layout.runs[id]
                .revision()
                .map(str::to_owned)
                .unwrap_or_default()
        };
        assert!(revision("a").starts_with("rows|1:"), "{}", revision("a"));
        assert_eq!(revision("b"), "rows");
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
        layout.runs.insert("ses_2".into(), Default::default());
        // ses_1's part names tool_0a1B2c; both name tool_0a1B2d (ses_2 was forked from it).
        let part = |session: &str, id: &str, file: &str| {
            let dir = root.join("storage/part").join(format!("msg_{session}"));
            fs::create_dir_all(&dir).unwrap();
            let state = serde_json::json!({"metadata": {"truncated": true, "outputPath": format!("/h/tool-output/{file}")}});
            let part =
                serde_json::json!({"id": id, "sessionID": session, "type": "tool", "state": state});
            fs::write(dir.join(format!("{id}.json")), part.to_string()).unwrap();
        };
        part("ses_1", "prt_1", "tool_0a1B2c");
        part("ses_1", "prt_2", "tool_0a1B2d");
        part("ses_2", "prt_3", "tool_0a1B2d");
        let o = ToolOutput::of(&layout);
        assert!(o.check_path("tool-output/tool_0a1B2c", "ses_1").is_ok());
        assert!(
            o.check_path("tool-output/tool_0a1B2c", "ses_2").is_err(),
            "not its file"
        );
        assert!(
            o.check_path("tool-output/tool_0a1B2d", "ses_1").is_err(),
            "a forked session names it too"
        );
        assert!(
            o.check_path("tool-output/tool_0a1B2e", "ses_1").is_err(),
            "no session names it"
        );
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
        assert!(
            o.check_path("tool-output/tool_0a1B2c", "ses_9").is_err(),
            "no such session"
        );
        // A part that cannot be read might name any file: nothing is taken then.
        fs::create_dir_all(root.join("storage/part/msg_ses_2/prt_9.json")).unwrap();
        let o = ToolOutput::of(&layout);
        let unread = o.check_path("tool-output/tool_0a1B2c", "ses_1");
        assert!(unread.is_err(), "the store unread");
    }
}
