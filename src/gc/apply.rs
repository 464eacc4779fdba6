//! Applying a plan: every file is re-checked just before it is deleted, and anything that changed
//! since the plan is skipped and reported.

use super::{journal, GcFile, GcPolicy, GcReason, GcReport, GcSkip};
use crate::error::Result;
use crate::pins::Pins;
use crate::runs::layout::{SUMMARY_SUFFIX, TRANSCRIPT_SUFFIX, VALUES_SUFFIX};
use crate::runs::values::{modified_ms, mtime_ns, VALUE_EXT};
use crate::runs::RunsDir;
use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// How far an apply is.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub bytes: u64,
    pub total_bytes: u64,
}

/// Deletes the files of `plan` that still are what the plan saw. `cancel` stops it between two
/// files; `progress` hears of every file.
pub fn apply(
    dir: &RunsDir,
    plan: &GcReport,
    policy: &GcPolicy,
    now_ms: i64,
    cancel: &AtomicBool,
    mut progress: impl FnMut(Progress),
) -> Result<GcReport> {
    let root = dir.root();
    // Pins may have changed since the plan (another window, the CLI): read them again.
    let pins = Pins::load_in(dir.config_dir())?;
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
    let mut run_ok: HashMap<&str, std::result::Result<(), String>> = HashMap::new();
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
        let verdict = run_ok
            .entry(f.run.as_str())
            .or_insert_with(|| run_still_collectable(root, f, policy, &pins, now_ms));
        let checked = verdict.clone().and_then(|()| file_unchanged(root, f));
        match checked {
            Err(reason) => out.skipped.push(GcSkip {
                path: f.path.clone(),
                reason,
            }),
            Ok(()) => match fs::remove_file(root.join(&f.path)) {
                Ok(()) => {
                    out.files.push(f.clone());
                    p.bytes += f.bytes;
                    let d = f.path.split('/').next().unwrap_or_default().to_owned();
                    if !touched_dirs.contains(&d) {
                        touched_dirs.push(d);
                    }
                }
                Err(e) => out.skipped.push(GcSkip {
                    path: f.path.clone(),
                    reason: format!("could not delete: {e}"),
                }),
            },
        }
        p.done += 1;
        progress(p);
        if let Some(ms) = pause {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    }
    for d in touched_dirs {
        if remove_dir_if_empty_value_dir(root, &d) {
            out.removed_dirs.push(d);
        }
    }
    journal::end(dir.config_dir(), root)?;
    out.total();
    Ok(out)
}

/// Tests of interrupted applies set `MCTL_GC_PAUSE_MS` to slow deletion down enough to kill the
/// process half-way. It has no other use.
fn fault_injection_pause() -> Option<u64> {
    std::env::var("MCTL_GC_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
}

/// The run (or orphan directory) a file belongs to may still be collected: idle, unpinned, and
/// for an orphan, still without a run.
fn run_still_collectable(
    root: &Path,
    f: &GcFile,
    policy: &GcPolicy,
    pins: &Pins,
    now_ms: i64,
) -> std::result::Result<(), String> {
    let exists = |name: String| fs::symlink_metadata(root.join(name)).is_ok();
    if f.reason == GcReason::Orphan {
        let own = format!("{}{VALUES_SUFFIX}", f.run);
        if [TRANSCRIPT_SUFFIX, SUMMARY_SUFFIX]
            .iter()
            .any(|s| exists(format!("{}{s}", f.run)) || exists(format!("{own}{s}")))
        {
            return Err("a run now owns this directory".into());
        }
        return Ok(());
    }
    if pins.is_pinned(root, &f.run) {
        return Err("run pinned since the plan".into());
    }
    let changed = fs::metadata(root.join(format!("{}{TRANSCRIPT_SUFFIX}", f.run)))
        .ok()
        .as_ref()
        .and_then(modified_ms);
    if changed.is_some_and(|m| now_ms.saturating_sub(m) < policy.idle_guard_ms) {
        return Err("run became active since the plan".into());
    }
    Ok(())
}

/// The file is still the one planned: `<run>.values/<name>.txt` directly in the runs directory,
/// a real directory and a regular file (no symbolic link anywhere), same size and time.
fn file_unchanged(root: &Path, f: &GcFile) -> std::result::Result<(), String> {
    let parts: Vec<&str> = f.path.split('/').collect();
    let [d, name] = parts.as_slice() else {
        return Err("not a value file path".into());
    };
    let valid = |s: &str| !s.is_empty() && s != "." && s != ".." && !s.contains(['\\', '\0']);
    if !valid(d) || !valid(name) || !d.ends_with(VALUES_SUFFIX) || !name.ends_with(VALUE_EXT) {
        return Err("not a value file path".into());
    }
    let dir_meta =
        fs::symlink_metadata(root.join(d)).map_err(|e| format!("value directory: {e}"))?;
    if !dir_meta.file_type().is_dir() {
        return Err("the value directory is no longer a directory".into());
    }
    let path = root.join(d).join(name);
    let meta = fs::symlink_metadata(&path).map_err(|e| format!("file: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("no longer a regular file".into());
    }
    if meta.len() != f.bytes {
        return Err(format!(
            "size changed since the plan ({} -> {} bytes)",
            f.bytes,
            meta.len()
        ));
    }
    if mtime_ns(&meta) != f.mtime_ns {
        return Err("modified since the plan".into());
    }
    Ok(())
}

/// Removes `<x>.values/` once empty, unless a run `x.values` exists: then it is that run's folder.
fn remove_dir_if_empty_value_dir(root: &Path, d: &str) -> bool {
    let exists = |name: String| fs::symlink_metadata(root.join(name)).is_ok();
    if exists(format!("{d}{TRANSCRIPT_SUFFIX}")) || exists(format!("{d}{SUMMARY_SUFFIX}")) {
        return false;
    }
    let path = root.join(d);
    let is_real_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir());
    // remove_dir refuses a directory that is not empty: nothing inside can be lost.
    is_real_dir
        && fs::read_dir(&path).is_ok_and(|mut it| it.next().is_none())
        && fs::remove_dir(&path).is_ok()
}
