//! Run stamps: how GC tells that a run was written to between a plan and its apply. The plan
//! records one per file, the journal checks it before carrying a file over, and the apply checks
//! it before each delete; it lives here so that none of them needs another for it.

use crate::runs::layout::RunPaths;
use crate::runs::options::mtime_ns;
use std::path::Path;

/// The state of a run's transcript and summary: sizes and modification times. Any write by the
/// harness changes it.
pub(crate) fn run_stamp(root: &Path, id: &str) -> String {
    RunPaths::new(root, id)
        .run_files()
        .iter()
        .map(|p| match std::fs::symlink_metadata(p) {
            Ok(m) => format!("{}:{}", m.len(), mtime_ns(&m)),
            Err(_) => "-".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}
