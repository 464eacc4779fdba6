//! A run's value directory: which value files it holds and how a result compares to its file.

use super::layout::{stem_file_name, VALUE_EXT};
use super::options::{modified_ms, mtime_ns, Verify};
use crate::retained::source::{read_range, same_bytes, ByteSource, FileSource};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A regular `*.txt` file directly inside a value directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueFile {
    /// File name without `.txt`: a value id when the harness wrote it.
    pub stem: String,
    pub path: PathBuf,
    pub bytes: u64,
    pub modified_ms: Option<i64>,
    /// Modification time in nanoseconds, as text: what GC compares before deleting.
    pub mtime_ns: String,
}

/// The value files of a directory, by stem. Symbolic links, subdirectories and files of other
/// kinds are not value files: they are neither counted nor ever read or collected.
pub(crate) fn list_value_files(dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if !kind.is_file() {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Some(stem) = name.strip_suffix(VALUE_EXT).filter(|s| !s.is_empty()) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        out.insert(stem.to_owned(), value_file_of(stem, entry.path(), &meta));
    }
    Ok(out)
}

/// Value file `<stem>.txt` of `dir`, if it is one (a regular file, not a link): what a live run
/// looks up when a result's line lands after its directory was listed.
pub(crate) fn find_value_file(dir: &Path, stem: &str) -> Option<ValueFile> {
    // A value directory that is a link is never read through.
    if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let path = dir.join(stem_file_name(stem));
    let meta = fs::symlink_metadata(&path).ok()?;
    meta.is_file().then(|| value_file_of(stem, path, &meta))
}

pub(crate) fn value_file_of(stem: &str, path: PathBuf, meta: &fs::Metadata) -> ValueFile {
    ValueFile {
        stem: stem.to_owned(),
        path,
        bytes: meta.len(),
        modified_ms: modified_ms(meta),
        mtime_ns: mtime_ns(meta),
    }
}

/// Bytes compared at each end of a value by [`Verify::Sampled`].
pub(crate) const SAMPLE: u64 = 64 * 1024;

/// Whether a value file holds `content`: sizes first, then every byte streamed, or (sampled)
/// only its first and last [`SAMPLE`] bytes.
pub(crate) fn matches_content(
    file: &ValueFile,
    content: &(impl ByteSource + ?Sized),
    verify: Verify,
) -> io::Result<bool> {
    if file.bytes != content.len() {
        return Ok(false);
    }
    if verify == Verify::Size {
        return Ok(true);
    }
    let src = FileSource::open(&file.path)?;
    let len = content.len();
    if verify == Verify::Full || len <= 2 * SAMPLE {
        return same_bytes(&src, content);
    }
    let tail_at = len - SAMPLE;
    Ok(
        read_range(&src, 0, SAMPLE)? == read_range(content, 0, SAMPLE)?
            && read_range(&src, tail_at, len)? == read_range(content, tail_at, len)?,
    )
}
