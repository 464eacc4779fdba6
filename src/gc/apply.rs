//! Applying a plan: every file is re-checked just before it is deleted, and anything that changed
//! since the plan is skipped and reported.
//!
//! Deletion goes through directory handles: the runs directory is opened once, each value
//! directory is opened from it without following a symbolic link (`O_NOFOLLOW`), and the file is
//! checked (`fstatat`, no follow) and unlinked (`unlinkat`) relative to that handle. A directory
//! swapped for a link between the check and the delete therefore cannot redirect the delete.

use super::audit::AuditLog;
use super::owners::Owners;
use super::{journal, GcFile, GcPolicy, GcReason, GcReport, GcSkip};
use crate::elsewhere::ByRoot;
use crate::error::{Error, ErrorCode, Result};
use crate::pins::Pins;
use crate::runs::RunsDir;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Deletes the bytes of a value file kept elsewhere (its object in a bucket), just before the
/// local file goes.
pub trait DeleteElsewhere: Send + Sync {
    /// Deletes what backs `f` (its `path` is relative to the runs directory) unless it changed
    /// there since the plan; `Err(reason)` leaves the file alone and says why.
    fn delete(&self, f: &GcFile) -> std::result::Result<(), String>;
}

static ELSEWHERE: ByRoot<dyn DeleteElsewhere> = ByRoot::new();

/// From now on in this process, GC of the runs directory at `root` deletes through `deleter`
/// too.
pub fn delete_elsewhere(root: PathBuf, deleter: Arc<dyn DeleteElsewhere>) {
    ELSEWHERE.set(root, deleter);
}

/// How far an apply is.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// Files dealt with so far, deleted or skipped.
    pub done: u64,
    /// Files in the plan.
    pub total: u64,
    /// Bytes deleted so far.
    pub bytes: u64,
    /// Bytes of every file in the plan.
    pub total_bytes: u64,
}

/// Deletes the files of `plan` that still are what the plan saw. `cancel` stops it between two
/// files; `progress` hears of every file. Each file deleted gets a line in the audit log.
pub fn apply(
    dir: &RunsDir,
    plan: &GcReport,
    policy: &GcPolicy,
    now_ms: i64,
    cancel: &AtomicBool,
    mut progress: impl FnMut(Progress),
) -> Result<GcReport> {
    let root = dir.root();
    let elsewhere = ELSEWHERE.under(root);
    let owners = Owners::of(&dir.layout()?);
    let files = plan.files.len();
    let _span = tracing::info_span!("gc_apply", dir = %root.display(), files).entered();
    let started = std::time::Instant::now();
    let _lock = journal::lock(dir.config_dir(), root)?;
    let mut audit = AuditLog::open(dir.config_dir(), root)?;
    let root_fd = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::new(ErrorCode::Io, format!("opening {}: {e}", root.display())))?;
    journal::begin(dir.config_dir(), root, &plan.files)?;
    let pause = fault_injection_pause();
    let mut out = GcReport {
        applied: true,
        resumed: plan.resumed,
        ..Default::default()
    };
    let mut p = Progress {
        total: plan.files.len() as u64,
        total_bytes: plan.total_bytes,
        ..Default::default()
    };
    let mut pins = Pins::load_in(dir.config_dir())?;
    let mut last_run: Option<&str> = None;
    let mut touched_dirs: Vec<String> = Vec::new();
    for f in &plan.files {
        if cancel.load(Ordering::Relaxed) {
            out.cancelled = true;
            out.skipped.push(GcSkip {
                path: f.path.clone(),
                reason: "cancelled".into(),
            });
            continue;
        }
        // Deleting on without a record would break the audit log's promise; the skip reason
        // carries the failure to every front end, whatever its log settings.
        if let Some(why) = audit.failed() {
            out.skipped.push(GcSkip {
                path: f.path.clone(),
                reason: format!("not deleted: the GC audit log could not be written ({why})"),
            });
            continue;
        }
        if last_run != Some(f.run.as_str()) {
            // Pins may change while an apply runs (the app, `mctl pin`): read them per run.
            pins = Pins::load_in(dir.config_dir())?;
            last_run = Some(f.run.as_str());
        }
        let checked = owners.check_path(&f.path, &f.run).and_then(|parts| {
            let (name, dirs) = parts.split_last().expect("a checked path has a file name");
            let d = dirs.join("/");
            run_still_collectable(&owners, f, &d, policy, &pins, now_ms)?;
            delete(&root_fd, dirs, name, f, elsewhere.as_deref())?;
            Ok(d)
        });
        match checked {
            Err(reason) => {
                tracing::debug!(path = %f.path, %reason, "gc skipped a file");
                out.skipped.push(GcSkip {
                    path: f.path.clone(),
                    reason,
                })
            }
            Ok(d) => {
                audit.record(f);
                out.files.push(f.clone());
                p.bytes += f.bytes;
                if !touched_dirs.contains(&d) {
                    touched_dirs.push(d);
                }
            }
        }
        p.done += 1;
        progress(p);
        if let Some(ms) = pause {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }
    // Another agent's folders are left as they are: its own cleanup removes them.
    let alone = owners.owned_alone();
    for d in touched_dirs.into_iter().filter(|_| alone) {
        if !owners.is_run_folder(&d) && remove_dir_if_empty_value_dir(&root_fd, &d) {
            out.removed_dirs.push(d);
        }
    }
    audit.finish();
    journal::end(dir.config_dir(), root)?;
    out.total();
    tracing::info!(
        deleted = out.files.len(),
        bytes = out.total_bytes,
        skipped = out.skipped.len(),
        removed_dirs = out.removed_dirs.len(),
        cancelled = out.cancelled,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "gc apply done"
    );
    Ok(out)
}

/// Tests of interrupted applies set `MCTL_GC_PAUSE_MS` to slow deletion down enough to kill the
/// process half-way. It has no other use, so only a build with the `test-hooks` feature reads it.
#[cfg(feature = "test-hooks")]
fn fault_injection_pause() -> Option<u64> {
    std::env::var("MCTL_GC_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
}

#[cfg(not(feature = "test-hooks"))]
fn fault_injection_pause() -> Option<u64> {
    None
}

/// The run (or orphan directory) a file belongs to may still be collected, checked before each
/// file: for a run, unpinned and untouched since the plan; for an orphan, still without a run.
fn run_still_collectable(
    owners: &Owners,
    f: &GcFile,
    d: &str,
    policy: &GcPolicy,
    pins: &Pins,
    now_ms: i64,
) -> std::result::Result<(), String> {
    let root = owners.root();
    // Another agent's folder is also its subagents': pinning one of them keeps it.
    let sharing = !owners.owned_alone();
    if pins.is_pinned(root, &f.run) || (sharing && owners.pinned(&f.run, &pins.of_dir(root))) {
        return Err("run pinned since the plan".into());
    }
    // A runs directory's value folder may also be a run's own folder (`<x>.values`).
    let shared = owners.is_run_folder(d);
    if f.reason == GcReason::Orphan {
        if shared || owners.has_run(&f.run) {
            return Err("a run now owns this directory".into());
        }
        return Ok(());
    }
    if shared && f.reason == GcReason::Stray {
        return Err("the directory is now also a run's own folder".into());
    }
    if owners.stamp(&f.run) != f.run_stamp {
        return Err("run became active since the plan".into());
    }
    // The stamp is stricter than the idle guard (any write counts); the guard still covers a
    // run whose transcript sits unchanged during a long tool call.
    let changed = owners.changed_ms(&f.run);
    if changed.is_some_and(|m| now_ms.saturating_sub(m) < policy.idle_guard_ms) {
        return Err("run changed within the idle guard".into());
    }
    Ok(())
}

/// Checks and deletes `dirs/name` relative to the runs directory's handle, following no link:
/// each folder on the way is opened from the one before it, none through a link.
fn delete(
    root_fd: &OwnedFd,
    dirs: &[String],
    name: &str,
    f: &GcFile,
    elsewhere: Option<&dyn DeleteElsewhere>,
) -> std::result::Result<(), String> {
    let mut dir: Option<OwnedFd> = None;
    for d in dirs {
        let parent = dir.as_ref().unwrap_or(root_fd);
        let next = rustix::fs::openat(
            parent,
            d.as_str(),
            OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("value directory: {e} (a link or no longer a directory)"))?;
        dir = Some(next);
    }
    let dir = dir.ok_or("a value file lies in a folder")?;
    let st = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| format!("file: {e}"))?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err("no longer a regular file".into());
    }
    if st.st_size as u64 != f.bytes {
        return Err(format!(
            "size changed since the plan ({} -> {} bytes)",
            f.bytes, st.st_size
        ));
    }
    let ns = (st.st_mtime as i128) * 1_000_000_000 + st.st_mtime_nsec as i128;
    if ns.to_string() != f.mtime_ns {
        return Err("modified since the plan".into());
    }
    let Some(elsewhere) = elsewhere else {
        return rustix::fs::unlinkat(&dir, name, AtFlags::empty())
            .map_err(|e| format!("could not delete: {e}"));
    };
    elsewhere.delete(f)?;
    // Its object is gone: the mirror's own look may have taken its copy first (as it takes the
    // copy of any object gone), and the file is collected either way.
    match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(format!("could not delete: {e}")),
    }
}

/// Removes `<x>.values/` once empty (the caller has checked that no run `x.values` exists: then
/// it is that run's folder).
fn remove_dir_if_empty_value_dir(root_fd: &OwnedFd, d: &str) -> bool {
    let is_real_dir = rustix::fs::statat(root_fd, d, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory);
    // AT_REMOVEDIR refuses a directory that is not empty: nothing inside can be lost.
    is_real_dir && rustix::fs::unlinkat(root_fd, d, AtFlags::REMOVEDIR).is_ok()
}
