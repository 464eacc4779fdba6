//! A big value file's middle, read from its bucket by ranged GETs: the mirror holds only its
//! ends ([`super::mirror`]), and every read of it goes through [`RangedSource`] instead of the
//! sparse file's holes (the ends are read from the mirror).
//!
//! Reads come in windows: 256 KiB for a read out of sequence (a peek's lines), doubling up to
//! 8 MiB while reads follow each other (a scan), so a range peek near the end of a 300 MB value
//! costs one window and a scan of it costs tens of requests, not thousands.

use super::mirror::ManifestView;
use super::sidecar::{sidecar_rel, Sidecar};
use super::Bucket;
use crate::model::values::SAMPLE;
use crate::retained::{ByteSource, ElsewhereSource, LineIndex, OpenElsewhere};
use crate::sync::lock;
use bytes::Bytes;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A read out of sequence fetches this much.
const FIRST_WINDOW: u64 = 256 * 1024;
/// Sequential reads grow their windows up to this.
const MAX_WINDOW: u64 = 8 << 20;

/// A value file the mirror holds by its ends: its first and last [`SAMPLE`] bytes read from the
/// mirror's sparse copy, the rest from the bucket by ranged GETs.
pub(crate) struct RangedSource {
    bucket: Arc<Bucket>,
    rel: String,
    size: u64,
    etag: Option<String>,
    /// The mirror's copy, which holds the ends.
    local: File,
    /// The last window fetched: its start, its bytes, and the size of the next one.
    window: Mutex<(u64, Bytes, u64)>,
    /// The sidecar's line index, fetched when first asked.
    index: OnceLock<Option<LineIndex>>,
}

impl RangedSource {
    /// Reads of `[offset, offset + len)` that the local ends hold, clipped to them; `None` for
    /// an offset in the middle.
    fn local_part(&self, offset: u64, len: u64) -> Option<u64> {
        if offset < SAMPLE {
            Some(len.min(SAMPLE - offset))
        } else if offset >= self.size.saturating_sub(SAMPLE) {
            Some(len.min(self.size - offset))
        } else {
            None
        }
    }
}

impl ByteSource for RangedSource {
    fn len(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if offset >= self.size || buf.is_empty() {
            return Ok(0);
        }
        if let Some(n) = self.local_part(offset, buf.len() as u64) {
            return self.local.read_at(&mut buf[..n as usize], offset);
        }
        // A middle read stops where the tail the mirror holds begins.
        let middle_end = self.size - SAMPLE;
        let mut window = lock(&self.window);
        let (start, bytes, next) = &mut *window;
        let end = *start + bytes.len() as u64;
        if offset < *start || offset >= end {
            // Reading on from where the last window ended is a scan: its windows grow.
            *next = if offset == end && !bytes.is_empty() {
                (*next * 2).min(MAX_WINDOW)
            } else {
                FIRST_WINDOW
            };
            let want = (*next).max(buf.len() as u64).min(MAX_WINDOW);
            let stop = (offset + want).min(middle_end);
            // Only from the version the mirror holds the ends of: a value replaced since is an
            // error, never its middle joined to another's ends.
            *bytes = self
                .bucket
                .get_range_of(&self.rel, offset..stop, self.etag.as_deref(), self.size)
                .map_err(io::Error::other)?;
            *start = offset;
        }
        let at = (offset - *start) as usize;
        let n = buf.len().min(bytes.len() - at);
        buf[..n].copy_from_slice(&bytes[at..at + n]);
        Ok(n)
    }
}

impl ElsewhereSource for RangedSource {
    fn line_index(&self) -> Option<LineIndex> {
        self.index
            .get_or_init(|| sidecar_index(&self.bucket, &self.rel, self.size, self.etag.as_deref()))
            .clone()
    }
}

/// The value's line index from its sidecar, when there is a valid one for this version.
fn sidecar_index(bucket: &Bucket, rel: &str, size: u64, etag: Option<&str>) -> Option<LineIndex> {
    let bytes = match bucket.get_small(&sidecar_rel(rel)) {
        Ok(found) => found?,
        Err(e) => {
            tracing::warn!(error = %e, "a value's line sidecar could not be read");
            return None;
        }
    };
    let sidecar: Sidecar = serde_json::from_slice(&bytes).ok()?;
    sidecar.index_for(size, etag)
}

/// The value files a mirror holds by their ends, read from the bucket.
pub(crate) struct MirrorValues {
    bucket: Arc<Bucket>,
    /// The mirror's root: a file's key is its path under it.
    root: PathBuf,
    view: Arc<ManifestView>,
}

impl MirrorValues {
    pub(crate) fn new(bucket: Arc<Bucket>, root: PathBuf, view: Arc<ManifestView>) -> Self {
        Self { bucket, root, view }
    }
}

impl OpenElsewhere for MirrorValues {
    fn open(&self, path: &Path) -> Option<io::Result<Arc<dyn ElsewhereSource>>> {
        let rel = path.strip_prefix(&self.root).ok()?.to_str()?;
        let local = match File::open(path) {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        let len = local.metadata().ok()?.len();
        // A file held whole (or not the mirror's) is read as it is; one held by its ends only
        // when it is the very copy the manifest describes.
        let held = self.view.held_settled(rel, len).filter(|h| h.partial())?;
        if held.size != len || held.size <= 2 * SAMPLE {
            return None;
        }
        Some(Ok(Arc::new(RangedSource {
            bucket: self.bucket.clone(),
            rel: rel.to_owned(),
            size: held.size,
            etag: held.etag.clone(),
            local,
            window: Mutex::new((0, Bytes::new(), FIRST_WINDOW)),
            index: OnceLock::new(),
        })))
    }
}
