//! The GC audit log: one JSON line per file a GC apply deleted, appended to `gc-audit.jsonl` in
//! Mission Control's config directory (beside the GC journal), so "what did Mission Control
//! delete, and when?" always has an answer. A line is written as soon as its file is gone, so an
//! apply killed half-way still has the lines of what it deleted; the file is synced at the end.

use super::{GcFile, GcReason};
use crate::config::dir_key;
use crate::error::{Error, Result};
use serde::Serialize;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Name of the audit log in the config directory.
pub const AUDIT_FILE: &str = "gc-audit.jsonl";

/// One line of the log (`docs/gc.md`, "Audit log").
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    /// When the file was deleted, RFC 3339 in UTC.
    time: String,
    /// The same instant in milliseconds since the Unix epoch, for scripts.
    time_ms: i64,
    /// The runs directory, canonical: one log serves every runs directory.
    runs_dir: &'a str,
    /// Relative to the runs directory: `<run>.values/<value id>.txt`.
    path: &'a str,
    bytes: u64,
    run: &'a str,
    reason: GcReason,
}

/// The log, open for appending for the length of one apply.
pub(crate) struct AuditLog {
    /// `None` without a config directory: there is nowhere to keep pins, the journal or this.
    file: Option<(File, PathBuf)>,
    runs_dir: String,
    /// Why a line could not be written; once set, the apply deletes nothing more.
    failed: Option<String>,
}

impl AuditLog {
    /// Opens (creates) the log of `config`. A log that cannot be opened fails the apply before
    /// anything is deleted: a deletion that leaves no trace is what the log exists to prevent.
    pub(crate) fn open(config: Option<&Path>, root: &Path) -> Result<Self> {
        let runs_dir = dir_key(root);
        let Some(dir) = config else {
            tracing::warn!("no config directory: this GC apply keeps no audit log");
            return Ok(Self {
                file: None,
                runs_dir,
                failed: None,
            });
        };
        let path = dir.join(AUDIT_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(format!("opening the GC audit log {}", path.display()), &e))?;
        Ok(Self {
            file: Some((file, path)),
            runs_dir,
            failed: None,
        })
    }

    /// Why the log could not be written, if it could not: the apply then stops deleting.
    pub(crate) fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Records that `f` was just deleted.
    pub(crate) fn record(&mut self, f: &GcFile) {
        tracing::info!(
            path = %f.path,
            bytes = f.bytes,
            run = %f.run,
            reason = ?f.reason,
            "gc deleted a value file"
        );
        let Some((file, path)) = &mut self.file else {
            return;
        };
        if let Err(e) = write_line(file, &self.runs_dir, f) {
            let why = format!("{}: {e}", path.display());
            tracing::warn!(path = %f.path, "the GC audit log could not be written: {why}");
            self.failed = Some(why);
        }
    }

    /// Makes the lines durable. A failure here comes after every deletion, so there is nothing
    /// left to stop: it is logged as a warning (shown by `mctl` by default, and in the app's log).
    pub(crate) fn finish(self) {
        let Some((file, path)) = self.file else {
            return;
        };
        if let Err(e) = file.sync_all() {
            tracing::warn!(
                "the GC audit log {} could not be synced: {e}",
                path.display()
            );
        }
    }
}

/// Writes one line, built whole first and handed to a file opened for appending in one call, so
/// a reader never sees lines interleaved, though applies on two runs directories may write at
/// once (each holds only its own directory's GC lock).
fn write_line(file: &mut File, runs_dir: &str, f: &GcFile) -> io::Result<()> {
    let now = SystemTime::now();
    let time_ms = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let line = Line {
        time: humantime::format_rfc3339_millis(now).to_string(),
        time_ms,
        runs_dir,
        path: &f.path,
        bytes: f.bytes,
        run: &f.run,
        reason: f.reason,
    };
    let mut bytes = serde_json::to_vec(&line).map_err(io::Error::other)?;
    bytes.push(b'\n');
    file.write_all(&bytes)
}
