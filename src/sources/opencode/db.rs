//! Reading opencode's SQLite database, read-only: opened with `mode=ro` (committed write-ahead
//! log frames are read, nothing is written or locked against the agent), a busy wait of a
//! second, and only the tables of sessions, messages and parts (never `control_account`).

use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};
use std::io;
use std::path::Path;

/// A session as the layout needs it.
pub(crate) struct SessionRow {
    pub id: String,
    pub parent: Option<String>,
    /// When it last changed and how many parts it has: the index reads it again when this
    /// changes, not when another session's rows do.
    pub revision: String,
    /// When it was created and when its rows last changed, in ms: a saved output whose id's
    /// time falls in it may be the session's.
    pub span: (i64, i64),
}

/// The database, read-only. `frozen`: as a file nobody writes (`immutable=1`), for a copy
/// whose write-ahead log's shared memory cannot be opened (a read-only folder).
fn open(path: &Path, frozen: bool) -> io::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = match frozen {
        false => Connection::open_with_flags(path, flags),
        true => {
            let mut uri = url_path(path);
            uri.push_str("?immutable=1");
            Connection::open_with_flags(format!("file:{uri}"), flags)
        }
    }
    .map_err(to_io)?;
    conn.busy_timeout(std::time::Duration::from_secs(1))
        .map_err(to_io)?;
    Ok(conn)
}

/// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped.
fn url_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// `read` on the database as it is, else on it frozen.
fn reading<T>(path: &Path, read: impl Fn(&Connection) -> io::Result<T>) -> io::Result<T> {
    match open(path, false).and_then(|c| read(&c)) {
        Ok(v) => Ok(v),
        Err(first) => open(path, true).and_then(|c| read(&c)).map_err(|_| first),
    }
}

fn to_io(e: rusqlite::Error) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("opencode database: {e}"),
    )
}

/// Every session of the database.
pub(crate) fn sessions(path: &Path) -> io::Result<Vec<SessionRow>> {
    reading(path, session_rows)
}

fn session_rows(conn: &Connection) -> io::Result<Vec<SessionRow>> {
    let mut stmt = conn
        .prepare(
            "SELECT s.id, s.parent_id, s.time_updated, s.time_created, \
             (SELECT count(*) FROM part p WHERE p.session_id = s.id), \
             (SELECT max(p.time_updated) FROM part p WHERE p.session_id = s.id), \
             (SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id) \
             FROM session s",
        )
        .map_err(to_io)?;
    let rows = stmt
        .query_map([], |r| {
            let updated: i64 = r.get(2)?;
            let created: i64 = r.get(3)?;
            let parts: i64 = r.get(4)?;
            let part_time: Option<i64> = r.get(5)?;
            let message_time: Option<i64> = r.get(6)?;
            let last = updated
                .max(part_time.unwrap_or(0))
                .max(message_time.unwrap_or(0));
            Ok(SessionRow {
                id: r.get(0)?,
                parent: r.get(1)?,
                span: (created, last),
                revision: format!(
                    "{updated}:{parts}:{}:{}",
                    part_time.unwrap_or(0),
                    message_time.unwrap_or(0)
                ),
            })
        })
        .map_err(to_io)?;
    rows.collect::<Result<_, _>>().map_err(to_io)
}

/// Every tool part that may name a saved output (its data says `outputPath`), with its session:
/// what tells GC which sessions name a file of `tool-output/`.
pub(crate) fn saved_parts(path: &Path) -> io::Result<Vec<(String, String)>> {
    // As the database is now: a frozen open could miss what its write-ahead log holds, and GC
    // must know every session that names a file.
    open(path, false).and_then(|conn| {
        let conn = &conn;
        let mut stmt = conn
            .prepare("SELECT session_id, data FROM part WHERE data LIKE '%\"outputPath\"%'")
            .map_err(to_io)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(to_io)?;
        rows.collect::<Result<_, _>>().map_err(to_io)
    })
}

/// Session `id` as records: the session, then each message with its parts, in opencode's own
/// order (messages by creation time then id, parts by id). Each row's `data` is the object
/// less its id columns, which are put back.
pub(crate) fn session_records(path: &Path, id: &str) -> io::Result<Records> {
    reading(path, |conn| records(conn, id))
}

/// A session, and each of its messages with its parts.
pub(crate) type Records = (Value, Vec<(Value, Vec<Value>)>);

fn records(conn: &Connection, id: &str) -> io::Result<Records> {
    let session = conn
        .query_row(
            "SELECT id, parent_id, title, directory, version, time_created, time_updated \
             FROM session WHERE id = ?1",
            [id],
            |r| {
                let mut s = Map::new();
                s.insert("id".into(), Value::String(r.get(0)?));
                let parent: Option<String> = r.get(1)?;
                s.insert("parentID".into(), parent.map_or(Value::Null, Value::String));
                s.insert("title".into(), Value::String(r.get(2)?));
                s.insert("directory".into(), Value::String(r.get(3)?));
                s.insert("version".into(), Value::String(r.get(4)?));
                let created: i64 = r.get(5)?;
                let updated: i64 = r.get(6)?;
                s.insert(
                    "time".into(),
                    serde_json::json!({"created": created, "updated": updated}),
                );
                Ok(Value::Object(s))
            },
        )
        .map_err(to_io)?;
    let mut stmt = conn
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id")
        .map_err(to_io)?;
    let messages: Vec<(String, String)> = stmt
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(to_io)?
        .collect::<Result<_, _>>()
        .map_err(to_io)?;
    let mut parts_of = conn
        .prepare("SELECT id, data FROM part WHERE message_id = ?1 ORDER BY id")
        .map_err(to_io)?;
    let mut out = Vec::with_capacity(messages.len());
    for (message_id, data) in messages {
        let message = with_ids(&data, &[("id", &message_id), ("sessionID", id)]);
        let parts: Vec<(String, String)> = parts_of
            .query_map([&message_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(to_io)?
            .collect::<Result<_, _>>()
            .map_err(to_io)?;
        let parts = parts
            .iter()
            .map(|(part_id, data)| {
                with_ids(
                    data,
                    &[
                        ("id", part_id),
                        ("sessionID", id),
                        ("messageID", &message_id),
                    ],
                )
            })
            .collect();
        out.push((message, parts));
    }
    Ok((session, out))
}

/// A row's JSON with its id columns put back; a row whose JSON cannot be read says so.
fn with_ids(data: &str, ids: &[(&str, &str)]) -> Value {
    let mut v = match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(m)) => m,
        _ => {
            let mut m = Map::new();
            m.insert("unreadable".into(), Value::Bool(true));
            m
        }
    };
    for (k, id) in ids {
        v.insert((*k).to_owned(), Value::String((*id).to_owned()));
    }
    Value::Object(v)
}
