//! The index file: SQLite (WAL, so readers never wait for a writer and any number of `mctl`
//! processes and the app share it), one file per runs directory in the cache directory.
//!
//! It is a cache: whatever is wrong with the file (not a database, cut short, written by a newer
//! Mission Control, made for another runs directory) it is renamed aside and built again, and a
//! cache directory that cannot be written leaves the caller to read the runs itself.

use super::Want;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::path::Path;
use std::time::Duration;

/// The layout of the tables; a file with a higher `user_version` is a newer Mission Control's.
pub const SCHEMA: i64 = 7;
/// What the `meta` table's `app` says in an index of ours.
const APP: &str = "mission-control-index";
/// How long a writer waits for another process's transaction before giving up.
const BUSY_WAIT: Duration = Duration::from_secs(20);

/// One run as the index keeps it.
#[cfg_attr(test, derive(Clone))]
pub(crate) struct Row {
    pub stamp: String,
    pub read_ms: i64,
    /// When the run's status is told by the clock: the instant its running window starts.
    pub clock_since_ms: Option<i64>,
    /// The run, in `postcard`'s compact binary form: a third of the size of its JSON, quicker
    /// to read back, and its floating-point figures exact.
    pub run: Vec<u8>,
    /// The run's floating-point figures, also in their own columns (for a look with `sqlite3`):
    /// its cost (`NULL`: unknown) and model time.
    pub floats: (Option<f64>, f64),
    /// The run's results (`results.rs`), for a run with a value directory; read only when
    /// asked for.
    pub results: Option<Vec<u8>>,
    /// The sizes of every result (`results.rs`), for every run; read only when asked for.
    pub sizes: Option<Vec<u8>>,
}

pub(crate) struct Store {
    conn: Connection,
}

/// Why an index file was not used as it is.
#[derive(Debug)]
pub(crate) enum Unusable {
    /// Something is wrong with the file: set it aside and build a new one.
    Bad(String),
    /// Another process is setting the file up (turning on its write-ahead log): try again.
    Busy(String),
    /// The cache directory or the file cannot be written (or SQLite failed otherwise): read
    /// the runs without an index.
    Unavailable(String),
}

impl Store {
    /// Opens (creating it if need be) the index of runs directory `runs_dir` at `path`.
    pub(crate) fn open(path: &Path, runs_dir: &str) -> Result<Self, Unusable> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| Unusable::Unavailable(format!("opening {}: {e}", path.display())))?;
        conn.busy_timeout(BUSY_WAIT)
            .map_err(|e| Unusable::Unavailable(e.to_string()))?;
        let store = Self { conn };
        store.check(runs_dir)?;
        Ok(store)
    }

    /// Sets up a new file, or proves an existing one ours, sound and of this schema.
    fn check(&self, runs_dir: &str) -> Result<(), Unusable> {
        let bad = |e: rusqlite::Error| classify(&e);
        // Any read of a file that is not a database fails here ("file is not a database").
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(bad)?;
        if version > SCHEMA {
            return Err(Unusable::Bad(format!(
                "written by a newer Mission Control (schema {version}, this one reads {SCHEMA})"
            )));
        }
        if version != 0 && version < SCHEMA {
            // Each schema has its own file name: an older one here was put here by hand.
            return Err(Unusable::Bad(format!(
                "written by an older Mission Control (schema {version}, this one reads {SCHEMA})"
            )));
        }
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(bad)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Unusable::Unavailable(format!(
                "the index cannot use write-ahead logging here (journal mode {mode})"
            )));
        }
        // A listing writes what it read as it goes, a batch per transaction: in write-ahead
        // mode, NORMAL syncs at checkpoints, not at each of those commits. A commit lost to a
        // power cut is a run read again (the index is a cache); the file is never damaged.
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(bad)?;
        if version == 0 {
            self.create(runs_dir).map_err(bad)?;
        }
        // No `quick_check` here: it reads the whole file, which is what the index saves. A page
        // that is damaged or cut off fails the read that reaches it (`is_bad`), and the listing
        // then sets the file aside and reads the runs.
        // A database without our `meta` table is some other program's: set aside, not used.
        let meta = |key: &str| -> Result<Option<String>, Unusable> {
            self.conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .map_err(|e| match classify(&e) {
                    Unusable::Busy(why) => Unusable::Busy(why),
                    _ => Unusable::Bad(format!("not an index of Mission Control ({e})")),
                })
        };
        if meta("app")?.as_deref() != Some(APP) {
            return Err(Unusable::Bad("not an index of Mission Control".to_owned()));
        }
        match meta("runs_dir")? {
            Some(d) if d == runs_dir => Ok(()),
            Some(d) => Err(Unusable::Bad(format!(
                "made for another runs directory ({d})"
            ))),
            None => Err(Unusable::Bad("names no runs directory".to_owned())),
        }
    }

    /// The tables of a new index. Two processes may get here at once: the second finds the
    /// schema made and changes nothing.
    fn create(&self, runs_dir: &str) -> rusqlite::Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let made = self.conn.execute_batch(&format!(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS runs (
                 id TEXT PRIMARY KEY,
                 stamp TEXT NOT NULL,
                 read_ms INTEGER NOT NULL,
                 clock_since_ms INTEGER,
                 run BLOB NOT NULL,
                 cost_usd REAL,
                 model_ms REAL NOT NULL,
                 results BLOB,
                 sizes BLOB
             ) WITHOUT ROWID;
             INSERT OR IGNORE INTO meta (key, value) VALUES ('app', '{APP}');
             PRAGMA user_version = {SCHEMA};"
        ));
        let named = made.and_then(|()| {
            self.conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('runs_dir', ?1)",
                [runs_dir],
            )
        });
        match named {
            Ok(_) => self.conn.execute_batch("COMMIT"),
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Every run the index holds, in the order of their ids (bytewise, as the layout's), with
    /// their results or sizes when `want` says so, given to `with` one at a time as they are
    /// read: a caller holds what it keeps of them, never the whole index. A failure ends the
    /// rows where it happened, and is given back with what `with` made of those before it.
    pub(crate) fn with_rows<M>(
        &self,
        want: Want,
        with: impl FnOnce(&mut dyn Iterator<Item = (String, Row)>) -> M,
    ) -> (M, Option<rusqlite::Error>) {
        let sql = format!("{} ORDER BY id", select(want));
        let mut stmt = match self.conn.prepare(&sql) {
            Ok(stmt) => stmt,
            Err(e) => return (with(&mut std::iter::empty()), Some(e)),
        };
        let rows = match stmt.query_map([], read_row) {
            Ok(rows) => rows,
            Err(e) => return (with(&mut std::iter::empty()), Some(e)),
        };
        let mut failure = None;
        let mut rows = rows.map_while(|r| r.map_err(|e| failure = Some(e)).ok());
        let made = with(&mut rows);
        drop(rows);
        (made, failure)
    }

    /// Run `id`'s row with its results, if the index holds it.
    pub(crate) fn row(&self, id: &str) -> rusqlite::Result<Option<Row>> {
        let sql = format!("{} WHERE id = ?1", select(Want::Results));
        self.conn
            .query_row(&sql, [id], read_row)
            .optional()
            .map(|r| r.map(|(_, row)| row))
    }

    /// Writes the runs read again and forgets the runs that are gone, in one transaction;
    /// with `done_ms`, the listing they are of is over, and the index up to date at that time
    /// (a listing written a batch at a time says so in its last batch only).
    pub(crate) fn update(
        &mut self,
        put: &[(String, Row)],
        gone: &[String],
        done_ms: Option<i64>,
    ) -> rusqlite::Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut insert = tx.prepare(
                "INSERT OR REPLACE INTO runs
                 (id, stamp, read_ms, clock_since_ms, run, cost_usd, model_ms, results, sizes)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for (id, row) in put {
                insert.execute(params![
                    id,
                    row.stamp,
                    row.read_ms,
                    row.clock_since_ms,
                    row.run,
                    row.floats.0,
                    row.floats.1,
                    row.results,
                    row.sizes
                ])?;
            }
            let mut delete = tx.prepare("DELETE FROM runs WHERE id = ?1")?;
            for id in gone {
                delete.execute([id])?;
            }
            if let Some(done_ms) = done_ms {
                tx.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('updated_ms', ?1)",
                    [done_ms.to_string()],
                )?;
            }
        }
        tx.commit()
    }

    /// Whether the index holds any run (without counting them all: that reads every page).
    pub(crate) fn has_runs(&self) -> rusqlite::Result<bool> {
        self.conn
            .query_row("SELECT 1 FROM runs LIMIT 1", [], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
    }

    /// Whether a listing was ever brought to its end through this index (since it was made or
    /// emptied): one stopped half way has kept rows, not this.
    pub(crate) fn was_completed(&self) -> rusqlite::Result<bool> {
        self.conn
            .query_row(
                "SELECT 1 FROM meta WHERE key = 'updated_ms'",
                [],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
    }

    /// How many runs the index holds, and when it was last brought up to date.
    pub(crate) fn summary(&self) -> rusqlite::Result<(u64, Option<i64>)> {
        let runs: i64 = self
            .conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?;
        let updated: Option<String> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'updated_ms'", [], |r| {
                r.get(0)
            })
            .optional()?;
        Ok((runs as u64, updated.and_then(|u| u.parse().ok())))
    }

    /// Empties the index (a rebuild reads every run again).
    pub(crate) fn clear(&mut self) -> rusqlite::Result<()> {
        self.conn.execute("DELETE FROM runs", [])?;
        self.conn
            .execute("DELETE FROM meta WHERE key = 'updated_ms'", [])?;
        Ok(())
    }
}

/// The query of rows, with their results, their sizes or neither (a listing needs none:
/// leaving them out spares reading and copying them).
fn select(want: Want) -> String {
    let results = if want == Want::Results {
        "results"
    } else {
        "NULL"
    };
    let (run, sizes) = match want {
        Want::Sizes => ("x''", "sizes"),
        _ => ("run", "NULL"),
    };
    format!(
        "SELECT id, stamp, read_ms, clock_since_ms, {run}, cost_usd, model_ms, {results}, {sizes} \
         FROM runs"
    )
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, Row)> {
    Ok((
        r.get(0)?,
        Row {
            stamp: r.get(1)?,
            read_ms: r.get(2)?,
            clock_since_ms: r.get(3)?,
            run: r.get(4)?,
            floats: (r.get(5)?, r.get(6)?),
            results: r.get(7)?,
            sizes: r.get(8)?,
        },
    ))
}

/// Whether `e` says the file is damaged (not a database, malformed, cut short).
pub(crate) fn is_bad(e: &rusqlite::Error) -> bool {
    matches!(classify(e), Unusable::Bad(_))
}

/// A failure that says the file is not a sound database is a bad file; anything else (read-only,
/// full, locked for too long) leaves the index unavailable for now.
fn classify(e: &rusqlite::Error) -> Unusable {
    // A read past the end of a file cut short.
    const SHORT_READ: i32 = 522;
    if let rusqlite::Error::SqliteFailure(f, _) = e {
        if f.extended_code == SHORT_READ {
            return Unusable::Bad(e.to_string());
        }
    }
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::NotADatabase | C::DatabaseCorrupt) => Unusable::Bad(e.to_string()),
        // SQLite does not wait for a lock while the journal mode changes.
        Some(C::DatabaseBusy | C::DatabaseLocked) => Unusable::Busy(e.to_string()),
        _ => Unusable::Unavailable(e.to_string()),
    }
}

impl Store {
    /// The files the index stands for: transcripts, summaries and value files of its runs.
    pub(crate) fn files(&self) -> rusqlite::Result<u64> {
        let mut stmt = self.conn.prepare("SELECT stamp, run FROM runs")?;
        let mut files = 0u64;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let stamp: String = r.get(0)?;
            let run: Vec<u8> = r.get(1)?;
            files += u64::from(stamp.contains("t=") && !stamp.contains("t=-;"));
            files += u64::from(!stamp.contains(";s=-;"));
            files += postcard::from_bytes::<crate::model::Run>(&run).map_or(0, |r| r.value_files);
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::SCHEMA;
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

    /// The keys of a JSON object, in their order.
    struct Keys(Vec<String>);

    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some(k) = map.next_key::<String>()? {
                        map.next_value::<IgnoredAny>()?;
                        keys.push(k);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(V)
        }
    }

    /// Rows keep a run in `postcard`, which writes fields in order with no names: a row written
    /// before a field of `Run` was added, removed or moved reads back as another run. Such a
    /// change needs a new `SCHEMA` (a new index file), and then this pin. (So does a change of
    /// what the fold derives from unchanged files: schema 5 reads local commands, glued lines
    /// and settled last lines; schema 6 unknown line counts, the cache's tokens and costs;
    /// schema 7 swept saved outputs, and Gemini's and opencode's value ids of saved files.)
    #[test]
    fn the_schema_changes_with_the_fields_a_row_keeps() {
        let json = serde_json::to_string(&crate::model::Run::default()).unwrap();
        let fields = serde_json::from_str::<Keys>(&json).unwrap().0.join(",");
        let pinned = (
            7,
            "id,source,status,title,provider,model,mode,cwd,parentId,parentCall,startedMs,\
             updatedMs,events,problems,warnings,dispatches,toolCalls,results,inline,retained,\
             retainedBytes,unretained,unretainedBytes,damaged,truncated,swept,sidechainLines,strays,\
             valueFiles,valueBytes,inputTokens,outputTokens,uncachedInputTokens,\
             cacheWriteTokens,cacheReadTokens,reasoningTokens,costUsd,costEstimated,\
             tokensWithChildren,costWithChildrenUsd,models,modelMs,\
             transcriptBytes,\
             pendingBytes,newerSchema,hasTranscript,hasSummary,errorCode,errorMessage,tools,\
             compactedAtLine",
        );
        assert_eq!(
            (SCHEMA, fields.as_str()),
            pinned,
            "Run's fields changed: bump SCHEMA, then pin them here"
        );
    }
}
