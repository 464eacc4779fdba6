//! Byte sources: a value's full text is either in memory (a transcript's `content`) or in a
//! value file that may be far larger than memory. Everything that reads text (line index, stub,
//! peek) goes through [`ByteSource`] and reads bounded chunks, so a 1 GiB value file is never
//! loaded whole and a string from a transcript takes the very same code path.

use super::LineIndex;
use crate::elsewhere::ByRoot;
use std::fs::File;
use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Size of the buffer used by sequential scans. Big enough that memchr runs at memory speed,
/// small enough that a peek on any file stays far below its memory budget.
pub(crate) const SCAN_CHUNK: usize = 1 << 20;

/// Random-access, read-only bytes.
pub trait ByteSource {
    /// Total length in bytes.
    fn len(&self) -> u64;

    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read (0 at the end).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// True when the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: ByteSource + ?Sized> ByteSource for &T {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }
}

impl ByteSource for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(<[u8]>::len(self));
        let n = buf.len().min(<[u8]>::len(self) - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

impl ByteSource for str {
    fn len(&self) -> u64 {
        str::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.as_bytes().read_at(offset, buf)
    }
}

/// A file opened for reading, with its length fixed at open time. Value files are immutable
/// once written (the harness writes them with temp + rename), so the length is stable; if the
/// file is nevertheless truncated underneath us, reads return short and callers see the end.
///
/// A file under a folder [`read_elsewhere`] names may hold only part of its bytes on this disk
/// (a value file mirrored from object storage by its ends): it is then read from where its
/// bytes are, through the opener registered for that folder.
pub struct FileSource {
    inner: Inner,
    len: u64,
}

enum Inner {
    Local(File),
    Elsewhere(Arc<dyn ElsewhereSource>),
}

/// The bytes of a file that are not all on this disk.
pub trait ElsewhereSource: ByteSource + Send + Sync {
    /// Its line index when known without reading it (a sidecar), fetched when first asked.
    fn line_index(&self) -> Option<LineIndex> {
        None
    }
}

/// Opens the files of a folder whose bytes are not all on this disk.
pub trait OpenElsewhere: Send + Sync {
    /// The bytes of the file at `path`; `None` when the file is whole on this disk and read as
    /// usual.
    fn open(&self, path: &Path) -> Option<io::Result<Arc<dyn ElsewhereSource>>>;
}

static ELSEWHERE: ByRoot<dyn OpenElsewhere> = ByRoot::new();

/// Registers `opener` for the files under `root` (a mirror of object storage), for the rest of
/// the process.
pub fn read_elsewhere(root: PathBuf, opener: Arc<dyn OpenElsewhere>) {
    ELSEWHERE.set(root, opener);
}

impl FileSource {
    /// Opens the file at `path` for reading, its length taken now.
    pub fn open(path: &Path) -> io::Result<Self> {
        match Self::elsewhere(path) {
            Some(found) => found,
            None => Self::of(File::open(path)?),
        }
    }

    /// [`open`](Self::open), not through a symbolic link (`O_NOFOLLOW`).
    pub(crate) fn open_no_follow(path: &Path) -> io::Result<Self> {
        match Self::elsewhere(path) {
            Some(found) => found,
            None => Self::of(open_no_follow(path)?),
        }
    }

    /// The file at `path` when the opener of its folder reads it from elsewhere.
    fn elsewhere(path: &Path) -> Option<io::Result<Self>> {
        let found = ELSEWHERE.under(path)?.open(path)?;
        Some(found.map(|src| Self {
            len: src.len(),
            inner: Inner::Elsewhere(src),
        }))
    }

    /// The file, when its bytes are all on this disk.
    pub(crate) fn local_file(&self) -> Option<&File> {
        match &self.inner {
            Inner::Local(f) => Some(f),
            Inner::Elsewhere(_) => None,
        }
    }

    /// Its bytes from the start, as a reader.
    pub(crate) fn reader(&self) -> impl io::Read + '_ {
        SourceReader::new(self)
    }

    /// A file already open.
    pub fn of(file: File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(Self {
            inner: Inner::Local(file),
            len,
        })
    }

    /// Its line index, when known without reading it (a sidecar of a file read elsewhere).
    pub fn known_index(&self) -> Option<LineIndex> {
        match &self.inner {
            Inner::Local(_) => None,
            Inner::Elsewhere(src) => src.line_index(),
        }
    }
}

/// Opens `path` for reading unless it is a symbolic link (`O_NOFOLLOW`): a value file listed as
/// a regular file and swapped for a link since is not read through.
pub(crate) fn open_no_follow(path: &std::path::Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

impl ByteSource for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if offset >= self.len {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.len - offset).unwrap_or(usize::MAX));
        match &self.inner {
            Inner::Local(file) => read_at_os(file, offset, &mut buf[..want]),
            Inner::Elsewhere(src) => src.read_at(offset, &mut buf[..want]),
        }
    }
}

/// Any source read from its start as an `io::Read`.
pub(crate) struct SourceReader<'a, S: ByteSource + ?Sized> {
    src: &'a S,
    at: u64,
}

impl<'a, S: ByteSource + ?Sized> SourceReader<'a, S> {
    pub(crate) fn new(src: &'a S) -> Self {
        Self { src, at: 0 }
    }
}

impl<S: ByteSource + ?Sized> io::Read for SourceReader<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.src.read_at(self.at, buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at_os(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match file.read_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[cfg(windows)]
fn read_at_os(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    use std::os::windows::fs::FileExt;
    file.seek_read(buf, offset)
}

/// Reads exactly `start..end` (clipped to the source), for bounded ranges only.
pub(crate) fn read_range(
    src: &(impl ByteSource + ?Sized),
    start: u64,
    end: u64,
) -> io::Result<Vec<u8>> {
    let end = end.min(src.len());
    if start >= end {
        return Ok(Vec::new());
    }
    let mut buf = vec![0u8; usize::try_from(end - start).map_err(io::Error::other)?];
    let mut filled = 0;
    while filled < buf.len() {
        let n = src.read_at(start + filled as u64, &mut buf[filled..])?;
        if n == 0 {
            buf.truncate(filled);
            break;
        }
        filled += n;
    }
    Ok(buf)
}

/// Calls `f(offset, chunk)` for consecutive chunks from `start` to the end of the source, until
/// `f` breaks. Memory use is one [`SCAN_CHUNK`] buffer whatever the source's size.
pub(crate) fn scan_chunks<B>(
    src: &(impl ByteSource + ?Sized),
    start: u64,
    mut f: impl FnMut(u64, &[u8]) -> ControlFlow<B>,
) -> io::Result<Option<B>> {
    // A small text (most tool results) gets a buffer its own size, not a zeroed megabyte.
    let want = src.len().saturating_sub(start).clamp(1, SCAN_CHUNK as u64) as usize;
    let mut buf = vec![0u8; want];
    let mut offset = start;
    loop {
        let n = src.read_at(offset, &mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        if let ControlFlow::Break(b) = f(offset, &buf[..n]) {
            return Ok(Some(b));
        }
        offset += n as u64;
    }
}

/// Streams `src` and tells whether it holds exactly the bytes of `expected`. Reads at most one
/// chunk of each at a time, so comparing a 1 GiB value file costs no more memory than comparing
/// a small one.
pub(crate) fn same_bytes(
    src: &(impl ByteSource + ?Sized),
    expected: &(impl ByteSource + ?Sized),
) -> io::Result<bool> {
    if src.len() != expected.len() {
        return Ok(false);
    }
    let mut want = Vec::new();
    let mut failed = None;
    let differs = scan_chunks(src, 0, |offset, chunk| {
        want.resize(chunk.len(), 0);
        match read_exact_at(expected, offset, &mut want) {
            Ok(true) if want == chunk => ControlFlow::Continue(()),
            Ok(_) => ControlFlow::Break(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(differs.is_none())
}

/// Fills `buf` from `offset`; false when the source ends first.
fn read_exact_at(
    src: &(impl ByteSource + ?Sized),
    offset: u64,
    buf: &mut [u8],
) -> io::Result<bool> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = src.read_at(offset + filled as u64, &mut buf[filled..])?;
        if n == 0 {
            return Ok(false);
        }
        filled += n;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_reads_are_clipped() {
        let src: &[u8] = b"hello";
        let mut buf = [0u8; 10];
        assert_eq!(src.read_at(3, &mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"lo");
        assert_eq!(src.read_at(9, &mut buf).unwrap(), 0);
        assert_eq!(read_range(src, 1, 99).unwrap(), b"ello");
    }

    #[test]
    fn same_bytes_compares_length_and_content() {
        let src: &[u8] = b"abc";
        assert!(same_bytes(src, &b"abc"[..]).unwrap());
        assert!(!same_bytes(src, &b"abd"[..]).unwrap());
        assert!(!same_bytes(src, &b"abcd"[..]).unwrap());
    }
}
