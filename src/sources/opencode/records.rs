//! An opencode session as records, each given as a line: `{"session": {...}}`, then each
//! message with its parts, `{"message": {...}, "parts": [...]}`, in opencode's own order
//! (messages by creation time, then id; parts by id). From the database, or from the JSON tree
//! when the session is only there.

use super::db;
use crate::transcript::{Cursor, RawLine, ReadOutcome};
use serde_json::{json, Value};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) fn read(
    path: &Path,
    run: &str,
    each: &mut dyn FnMut(RawLine<'_>),
) -> io::Result<ReadOutcome> {
    let (session, messages): db::Records = match path
        .file_name()
        .is_some_and(|n| n == super::layout::DATABASE)
    {
        true => db::session_records(path, run)?,
        false => tree_records(path)?,
    };
    let mut n = 0u64;
    let mut bytes = 0u64;
    let mut give = |record: Value| {
        n += 1;
        let line = record.to_string();
        bytes += line.len() as u64 + 1;
        each(RawLine::whole(n, 0, line.as_bytes()));
    };
    give(json!({ "session": session }));
    for (message, parts) in messages {
        give(json!({"message": message, "parts": parts}));
    }
    Ok(ReadOutcome {
        cursor: Cursor {
            offset: bytes,
            lines: n,
        },
        pending_bytes: 0,
        file_len: bytes,
    })
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// The JSON files of `dir`, read (a file that cannot be read is left out).
fn objects(dir: &Path) -> Vec<Value> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| read_json(p)).collect()
}

/// A JSON-era session: `storage/session/<project>/<id>.json`, its messages in
/// `storage/message/<id>/`, each message's parts in `storage/part/<message id>/`.
fn tree_records(session_file: &Path) -> io::Result<db::Records> {
    let session: Value = serde_json::from_slice(&fs::read(session_file)?).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidData, format!("opencode session: {e}"))
    })?;
    let storage = session_file
        .ancestors()
        .nth(3)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not in a storage folder"))?;
    let id = session.get("id").and_then(Value::as_str).unwrap_or("");
    let mut messages = objects(&storage.join("message").join(id));
    let key = |m: &Value| {
        let created = m
            .pointer("/time/created")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let id = m.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
        (created, id)
    };
    messages.sort_by_key(key);
    let out = messages
        .into_iter()
        .map(|m| {
            let mid = m.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
            let parts = objects(&storage.join("part").join(&mid));
            (m, parts)
        })
        .collect();
    Ok((session, out))
}
