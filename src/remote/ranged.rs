//! A big value file's middle, read from its bucket by ranged GETs: the mirror holds only its
//! ends ([`super::mirror`]), and every read of it goes through [`RangedSource`] instead of the
//! sparse file's holes.
//!
//! Reads come in windows: 256 KiB for a read out of sequence (a peek's lines), doubling up to
//! 8 MiB while reads follow each other (a scan), so a range peek near the end of a 300 MB value
//! costs one window and a scan of it costs tens of requests, not thousands.

use super::sidecar::{sidecar_rel, Sidecar};
use super::Bucket;
use crate::retained::{ByteSource, LineIndex, OpenElsewhere};
use bytes::Bytes;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A read out of sequence fetches this much.
const FIRST_WINDOW: u64 = 256 * 1024;
/// Sequential reads grow their windows up to this.
const MAX_WINDOW: u64 = 8 << 20;

/// One object of a bucket, read at any offset by ranged GETs.
pub(crate) struct RangedSource {
    bucket: Arc<Bucket>,
    rel: String,
    size: u64,
    /// The last window fetched: its start, its bytes, and the size of the next one.
    window: Mutex<(u64, Bytes, u64)>,
}

impl RangedSource {
    pub(crate) fn new(bucket: Arc<Bucket>, rel: String, size: u64) -> Self {
        Self {
            bucket,
            rel,
            size,
            window: Mutex::new((0, Bytes::new(), FIRST_WINDOW)),
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
        let mut window = self.window.lock().unwrap_or_else(|e| e.into_inner());
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
            let stop = (offset + want).min(self.size);
            *bytes = self
                .bucket
                .get_range(&self.rel, offset..stop)
                .map_err(io::Error::other)?;
            *start = offset;
            if bytes.is_empty() {
                return Ok(0);
            }
        }
        let at = (offset - *start) as usize;
        let n = buf.len().min(bytes.len() - at);
        buf[..n].copy_from_slice(&bytes[at..at + n]);
        Ok(n)
    }
}

/// The value files a mirror holds by their ends, read from the bucket.
pub(crate) struct MirrorValues {
    bucket: Arc<Bucket>,
    /// Local path → (key relative to the prefix, size, entity tag).
    partial: HashMap<PathBuf, (String, u64, Option<String>)>,
}

impl MirrorValues {
    pub(crate) fn new(
        bucket: Arc<Bucket>,
        partial: HashMap<PathBuf, (String, u64, Option<String>)>,
    ) -> Self {
        Self { bucket, partial }
    }

    /// The value's line index from its sidecar, when there is a valid one for this version.
    fn sidecar_index(&self, rel: &str, size: u64, etag: Option<&str>) -> Option<LineIndex> {
        let bytes = match self.bucket.get_small(&sidecar_rel(rel)) {
            Ok(found) => found?,
            Err(e) => {
                tracing::warn!(error = %e, "a value's line sidecar could not be read");
                return None;
            }
        };
        let sidecar: Sidecar = serde_json::from_slice(&bytes).ok()?;
        sidecar.index_for(size, etag)
    }
}

impl OpenElsewhere for MirrorValues {
    fn open(
        &self,
        path: &Path,
    ) -> Option<io::Result<(Arc<dyn ByteSource + Send + Sync>, Option<LineIndex>)>> {
        let (rel, size, etag) = self.partial.get(path)?;
        let index = self.sidecar_index(rel, *size, etag.as_deref());
        let src = RangedSource::new(self.bucket.clone(), rel.clone(), *size);
        Some(Ok((Arc::new(src), index)))
    }
}
