//! Which runs an opencode store holds (docs/agents.md): its data folder
//! (`~/.local/share/opencode`) keeps sessions in `opencode.db` (SQLite, from v1.2.0) and, from
//! before, as a JSON tree under `storage/` (`session/<project>/<session>.json`, messages in
//! `message/<session>/`, their parts in `part/<message>/`). The database's one-time migration
//! copies the tree in and leaves it behind: a session in both is the database's. A session
//! with a parent (`parentID`) is a run under it.

use super::db;
use crate::model::layout::{Inside, Layout, Nesting, RunFiles};
use crate::model::SourceKind;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

/// The database's file name.
pub(crate) const DATABASE: &str = "opencode.db";
/// The JSON tree's folder.
pub(crate) const STORAGE: &str = "storage";

pub(crate) fn read(root: &Path) -> io::Result<Layout> {
    if !root.is_dir() {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no such folder"));
    }
    let mut runs: BTreeMap<String, RunFiles> = BTreeMap::new();
    let mut spans: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    let database = root.join(DATABASE);
    if database.is_file() {
        for s in db::sessions(&database)? {
            spans.insert(s.id.clone(), s.span);
            runs.insert(
                s.id,
                RunFiles::nested(
                    database.clone(),
                    Nesting {
                        parent: s.parent.map(Into::into),
                        inside: Inside {
                            revision: Some(s.revision),
                            ..Default::default()
                        }
                        .boxed(),
                        ..Default::default()
                    },
                ),
            );
        }
    }
    read_tree(&root.join(STORAGE), &mut runs, &mut spans);
    let mut layout = Layout {
        root: root.to_path_buf(),
        source: SourceKind::Opencode,
        runs,
        ..Default::default()
    };
    super::folders::value_dirs(root, &mut layout, &spans);
    Ok(layout)
}

/// The sessions of the JSON tree that the database does not hold, and their spans.
fn read_tree(
    storage: &Path,
    runs: &mut BTreeMap<String, RunFiles>,
    spans: &mut BTreeMap<String, (i64, i64)>,
) {
    let Ok(projects) = fs::read_dir(storage.join("session")) else {
        return;
    };
    for project in projects.filter_map(Result::ok) {
        let Ok(files) = fs::read_dir(project.path()) else {
            continue;
        };
        for f in files.filter_map(Result::ok) {
            let name = f.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_suffix(".json") else {
                continue;
            };
            if runs.contains_key(id) || !f.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let session = fs::read(f.path())
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
            let field = |k: &str| session.as_ref().and_then(|v| v.pointer(k).cloned());
            let parent = field("/parentID").and_then(|p| p.as_str().map(str::to_owned));
            let ms = |k: &str| field(k).and_then(|t| t.as_i64());
            let (revision, latest) = tree_revision(storage, id).unzip();
            let created = ms("/time/created").unwrap_or(0);
            let last = ms("/time/updated").unwrap_or(0).max(latest.unwrap_or(0));
            spans.insert(id.to_owned(), (created, last));
            runs.insert(
                id.to_owned(),
                RunFiles::nested(
                    f.path(),
                    Nesting {
                        parent: parent.map(Into::into),
                        inside: Inside {
                            revision,
                            ..Default::default()
                        }
                        .boxed(),
                        ..Default::default()
                    },
                ),
            );
        }
    }
}

/// What says a JSON-era session changed, and when in ms: its message folder (a new message), each message
/// file (opencode rewrites one in place when its turn ends) and each message's part folder (a
/// new part), by their latest change and their number. A part rewritten in place (a tool's
/// state) is met with its message's next change.
fn tree_revision(storage: &Path, id: &str) -> Option<(String, i64)> {
    let folder = storage.join("message").join(id);
    let changed = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut latest = changed(&folder)?;
    let mut count = 0u64;
    for m in fs::read_dir(&folder).ok()?.filter_map(Result::ok) {
        count += 1;
        latest = latest.max(changed(&m.path()).unwrap_or(latest));
        let name = m.file_name();
        let Some(msg) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        latest = latest.max(changed(&storage.join("part").join(msg)).unwrap_or(latest));
    }
    let ms = (latest.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0);
    Some((format!("{latest:?}/{count}"), ms))
}
