//! A Gemini CLI chat file as the records the CLI would load from it, each given as a line.
//!
//! - A `.json` chat is one document: `{sessionId, projectHash, startTime, lastUpdated,
//!   messages, summary?, directories?, kind?}`.
//! - A `.jsonl` chat (v0.39+) is a log, replayed as the CLI loads it: a line with a string `id`
//!   is a message (a later line with the same id replaces it in its first place: the CLI writes
//!   a message again when its tokens or tool calls come), `{"$rewindTo": id}` drops that
//!   message and every later one (an unknown id drops them all), `{"$set": {...}}` merges into
//!   the metadata (a `messages` list there replaces the history), and the line with
//!   `sessionId` and `projectHash` is the metadata. A log with no metadata line is read as one
//!   document, as the CLI falls back to.
//!
//! The records given: `{"meta": {...}}` first, then `{"message": {...}}` in order, and
//! `{"rewind": {"to": id, "dropped": n}}` where a rewind happened. Lines are numbered from 1.

use crate::transcript::{Cursor, RawLine, ReadOutcome};
use serde_json::{json, Map, Value};
use std::io;
use std::path::Path;

/// One entry of the replayed history: a message by its id, or where a rewind happened.
enum Entry {
    Message(String, Value),
    Rewind(String, usize),
}

/// Every record of the chat at `path`, each given to `each` as a line.
pub(crate) fn read(path: &Path, each: &mut dyn FnMut(RawLine<'_>)) -> io::Result<ReadOutcome> {
    let bytes = std::fs::read(path)?;
    let (meta, entries) = if path.extension().is_some_and(|e| e == "jsonl") {
        replay(&bytes).unwrap_or_else(|| document(&bytes))
    } else {
        document(&bytes)
    };
    let mut n = 0u64;
    let mut give = |record: Value| {
        n += 1;
        let line = record.to_string();
        each(RawLine::whole(n, 0, line.as_bytes()));
    };
    give(json!({ "meta": meta }));
    for entry in entries {
        match entry {
            Entry::Message(_, m) => give(json!({ "message": m })),
            Entry::Rewind(to, dropped) => give(json!({"rewind": {"to": to, "dropped": dropped}})),
        }
    }
    let file_len = bytes.len() as u64;
    Ok(ReadOutcome {
        cursor: Cursor {
            offset: file_len,
            lines: n,
        },
        pending_bytes: 0,
        file_len,
    })
}

/// A chat that is one JSON document (a `.json` chat, or a log the CLI would read as one). A
/// document that cannot be read gives no messages: its metadata says why.
fn document(bytes: &[u8]) -> (Value, Vec<Entry>) {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(mut doc)) => {
            let messages = match doc.remove("messages") {
                Some(Value::Array(list)) => list,
                _ => Vec::new(),
            };
            (
                Value::Object(doc),
                messages.into_iter().map(message).collect(),
            )
        }
        Ok(_) => (
            json!({"error": "not a chat: the file is not a JSON object"}),
            Vec::new(),
        ),
        Err(e) => (json!({"error": format!("not a chat: {e}")}), Vec::new()),
    }
}

fn message(m: Value) -> Entry {
    let id = m.get("id").and_then(Value::as_str).unwrap_or("").to_owned();
    Entry::Message(id, m)
}

/// A `.jsonl` chat replayed; `None` when it has no metadata line (the CLI then reads the file
/// as one document).
fn replay(bytes: &[u8]) -> Option<(Value, Vec<Entry>)> {
    let mut meta: Option<Map<String, Value>> = None;
    let mut set: Map<String, Value> = Map::new();
    let mut entries: Vec<Entry> = Vec::new();
    for line in bytes.split(|b| *b == b'\n') {
        let Ok(Value::Object(mut v)) = serde_json::from_slice::<Value>(line) else {
            continue; // an empty or torn line: the CLI skips it too
        };
        if let Some(Value::String(to)) = v.get("$rewindTo") {
            let at = entries
                .iter()
                .position(|e| matches!(e, Entry::Message(id, _) if id == to))
                .unwrap_or(0);
            let dropped = (entries[at..].iter())
                .filter(|e| matches!(e, Entry::Message(..)))
                .count();
            entries.truncate(at);
            entries.push(Entry::Rewind(to.clone(), dropped));
        } else if let Some(Value::String(id)) = v.get("id") {
            let id = id.clone();
            let found = entries
                .iter_mut()
                .find(|e| matches!(e, Entry::Message(old, _) if *old == id));
            match found {
                Some(Entry::Message(_, m)) => *m = Value::Object(v),
                _ => entries.push(Entry::Message(id, Value::Object(v))),
            }
        } else if let Some(Value::Object(fields)) = v.remove("$set") {
            for (k, value) in fields {
                if k == "messages" {
                    // A new history (after compression or masking) replaces the one so far.
                    if let Value::Array(list) = value {
                        entries = list.into_iter().map(message).collect();
                    }
                } else {
                    set.insert(k, value);
                }
            }
        } else if v.get("sessionId").is_some_and(Value::is_string)
            && v.get("projectHash").is_some_and(Value::is_string)
        {
            // A metadata line that holds the messages too (a document on one line) is the
            // history so far.
            if let Some(Value::Array(list)) = v.remove("messages") {
                entries = list.into_iter().map(message).collect();
            }
            meta = Some(v);
        }
    }
    let mut meta = meta?;
    meta.extend(set);
    Some((Value::Object(meta), entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(name: &str, text: &str) -> Vec<Value> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let mut out = Vec::new();
        read(&path, &mut |l| {
            out.push(serde_json::from_slice(l.bytes).unwrap())
        })
        .unwrap();
        out
    }

    #[test]
    fn a_log_is_replayed_as_the_cli_loads_it() {
        let log = [
            r#"{"sessionId":"s1","projectHash":"h","startTime":"2026-04-23T10:00:00Z","kind":"main"}"#,
            r#"{"id":"m1","type":"user","content":"hi"}"#,
            r#"{"id":"m2","type":"gemini","content":"","tokens":null}"#,
            r#"{"$set":{"lastUpdated":"2026-04-23T10:01:00Z"}}"#,
            r#"{"id":"m2","type":"gemini","content":"Hello","tokens":{"input":5}}"#,
            r#"{"id":"m3","type":"user","content":"wrong turn"}"#,
            r#"{"id":"m4","type":"gemini","content":"oops"}"#,
            r#"{"$rewindTo":"m3"}"#,
            r#"{"id":"m5","type":"user","content":"again"}"#,
            "{torn",
        ]
        .join("\n");
        let r = records("session-x.jsonl", &log);
        assert_eq!(r[0]["meta"]["lastUpdated"], "2026-04-23T10:01:00Z");
        let kinds: Vec<String> = r[1..]
            .iter()
            .map(|v| match v.get("message") {
                Some(m) => m["id"].as_str().unwrap().to_owned(),
                None => format!("rewind {}", v["rewind"]["dropped"]),
            })
            .collect();
        assert_eq!(kinds, ["m1", "m2", "rewind 2", "m5"]);
        assert_eq!(
            r[2]["message"]["content"], "Hello",
            "the later copy, in the first place"
        );
    }

    #[test]
    fn a_document_and_a_log_without_metadata_read_as_one_document() {
        let doc = r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"a","type":"user","content":"x"}]}"#;
        assert_eq!(records("session-y.json", doc).len(), 2);
        assert_eq!(
            records("session-y.jsonl", doc).len(),
            2,
            "one line of a document"
        );
        let bad = records("session-z.json", "{nope");
        assert!(bad[0]["meta"]["error"]
            .as_str()
            .unwrap()
            .starts_with("not a chat"));
    }
}
