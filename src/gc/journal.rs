//! The GC journal: before an apply deletes anything, it writes its plan to Mission Control's
//! config directory; it removes the journal when it is done. If the apply is killed half-way
//! (crash, kill, full disk), the next plan finds the journal and carries over the files the
//! interrupted apply had planned and not yet deleted, so the next apply finishes them (after the
//! same re-checks), or reports them.

use super::{GcFile, GcReason};
use crate::config::{dir_key, write_atomic};
use crate::error::{Error, Result};
use crate::model::options::mtime_ns;
use crate::retained::value_id::fnv1a32;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Journal {
    runs_dir: String,
    created_ms: i64,
    files: Vec<GcFile>,
}

/// A journal older than this is not carried over: its plan is too old to trust.
const JOURNAL_MAX_AGE_MS: i64 = 24 * 3600 * 1000;

/// Holds the GC lock of one runs directory (released when dropped, or when the process dies):
/// two applies on one runs directory never run at once. Applies on two runs directories may:
/// they delete no file of each other's, each has its own journal, and the audit log they share
/// takes each line in one write.
///
/// An apply also holds `gc.lock`, shared: older builds took that one alone, exclusively, for
/// every apply of the user's, so an apply of theirs and one of this build never run at once.
pub(crate) struct Lock(#[allow(dead_code)] Option<[std::fs::File; 2]>);

pub(crate) fn lock(config: Option<&Path>, root: &Path) -> Result<Lock> {
    use rustix::fs::FlockOperation::{NonBlockingLockExclusive, NonBlockingLockShared};
    let Some(dir) = config else {
        return Ok(Lock(None));
    };
    let every = dir.join("gc.lock");
    let every_file = crate::config::open_lock_file(&every)?;
    flock(&every_file, NonBlockingLockShared, &every)?;
    let this = dir.join(format!("gc-{:08x}.lock", fnv1a32(dir_key(root).as_bytes())));
    let this_file = crate::config::open_lock_file(&this)?;
    flock(&this_file, NonBlockingLockExclusive, &this)?;
    Ok(Lock(Some([every_file, this_file])))
}

/// Takes lock `how` on `file` (at `path`) without waiting. Held elsewhere: busy. Any other
/// failure (a file system that cannot lock) says so.
fn flock(file: &std::fs::File, how: rustix::fs::FlockOperation, path: &Path) -> Result<()> {
    rustix::fs::flock(file, how).map_err(|e| match e {
        rustix::io::Errno::WOULDBLOCK => super::busy(),
        e => Error::io(format!("locking {}", path.display()), &e.into()),
    })
}

fn path(config: Option<&Path>, root: &Path) -> Option<PathBuf> {
    let key = dir_key(root);
    config.map(|d| d.join(format!("gc-journal-{:08x}.json", fnv1a32(key.as_bytes()))))
}

pub(crate) fn begin(config: Option<&Path>, root: &Path, files: &[GcFile]) -> Result<()> {
    let Some(p) = path(config, root) else {
        return Ok(());
    };
    let journal = Journal {
        runs_dir: dir_key(root),
        created_ms: crate::model::now_ms(),
        files: files.to_vec(),
    };
    let bytes = serde_json::to_vec(&journal).expect("journal serializes");
    write_atomic(&p, &bytes)
        .map_err(|e| Error::io(format!("writing the GC journal {}", p.display()), &e))
}

pub(crate) fn end(config: Option<&Path>, root: &Path) -> Result<()> {
    let Some(p) = path(config, root) else {
        return Ok(());
    };
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(
            format!("removing the GC journal {}", p.display()),
            &e,
        )),
        _ => Ok(()),
    }
}

/// Adds to `selected` the files an interrupted apply left; returns how many.
pub(crate) fn carry_over(
    config: Option<&Path>,
    root: &Path,
    owners: &super::owners::Owners,
    selected: &mut BTreeMap<String, GcFile>,
) -> Result<u64> {
    let Some(p) = path(config, root) else {
        return Ok(0);
    };
    let bytes = match std::fs::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => {
            return Err(Error::io(
                format!("reading the GC journal {}", p.display()),
                &e,
            ))
        }
    };
    // A journal cut short by a full disk is not trusted: nothing was deleted before it was whole.
    let Ok(journal) = serde_json::from_slice::<Journal>(&bytes) else {
        return Ok(0);
    };
    let age = crate::model::now_ms().saturating_sub(journal.created_ms);
    if journal.runs_dir != dir_key(root) || age > JOURNAL_MAX_AGE_MS {
        return Ok(0);
    }
    let mut n = 0;
    for f in journal.files {
        // Only files still exactly as planned, of runs untouched since: a run resumed after
        // the interruption needs its values again. The apply checks all of it once more.
        let plain = owners.check_path(&f.path, &f.run).is_ok();
        let still_there = plain
            && std::fs::symlink_metadata(root.join(&f.path)).is_ok_and(|m| {
                m.file_type().is_file() && m.len() == f.bytes && mtime_ns(&m) == f.mtime_ns
            });
        let run_untouched = f.reason == GcReason::Orphan || owners.stamp(&f.run) == f.run_stamp;
        if still_there && run_untouched && !selected.contains_key(&f.path) {
            selected.insert(f.path.clone(), f);
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn one_apply_at_a_time_on_a_runs_directory_and_none_waits_on_another() {
        let config = tempfile::tempdir().unwrap();
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let held = lock(Some(config.path()), a.path()).unwrap();
        let again = lock(Some(config.path()), a.path());
        let busy = again.err().map(|e| (e.code, e.message));
        assert_eq!(
            busy,
            Some((
                ErrorCode::Busy,
                "another garbage collection is running".to_owned()
            ))
        );
        assert!(
            lock(Some(config.path()), b.path()).is_ok(),
            "another runs directory's apply goes on"
        );
        drop(held);
        assert!(lock(Some(config.path()), a.path()).is_ok(), "released");

        // An older build's apply holds `gc.lock` alone, exclusively: none starts beside it, and
        // it starts beside none.
        let old = crate::config::open_lock_file(&config.path().join("gc.lock")).unwrap();
        let exclusive = rustix::fs::FlockOperation::NonBlockingLockExclusive;
        rustix::fs::flock(&old, exclusive).unwrap();
        assert!(lock(Some(config.path()), b.path()).is_err());
        drop(old);
        let held = lock(Some(config.path()), a.path()).unwrap();
        let old = crate::config::open_lock_file(&config.path().join("gc.lock")).unwrap();
        assert!(rustix::fs::flock(&old, exclusive).is_err());
        drop(held);
    }
}
