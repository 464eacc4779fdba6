//! A value's full text as a span of its transcript: the escaped bytes of one JSON string in a
//! file, decoded on demand. The harness writes every result's full text into its transcript
//! line; a line too long to hold leaves its big strings there (see `transcript::spans`), and this
//! reads them back in slices, so no reader holds a result whole.

use super::json_string::Decoder;
use super::{ByteSource, LineIndex};
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Raw bytes decoded per step.
const STEP: usize = 64 << 10;

/// One big string of a line: where its escaped bytes lie in the file and what they decode to.
#[derive(Debug, Clone)]
pub struct BigString {
    path: Arc<Path>,
    /// File offset of the string's first byte after its opening quote.
    raw_start: u64,
    /// Escaped bytes up to (not including) the closing quote.
    raw_len: u64,
    /// The decoded text's line index (its size and line count included).
    index: LineIndex,
    /// Format characters (Unicode Cf) in the decoded text.
    format_chars: u64,
    /// (decoded offset, raw offset from `raw_start`) pairs where decoding can restart.
    restarts: Vec<(u64, u64)>,
    /// Where the string's placeholder ends in its line as held, and how many bytes longer the
    /// string is in the file than its placeholder: what turns a place in the held line into
    /// its place in the file.
    shift: (usize, i64),
}

impl BigString {
    /// A string of `path` whose escaped bytes start at `raw_start` (just past its opening
    /// quote) and run `raw_len` bytes; what it decodes to was counted as it streamed by, and
    /// `restarts` says where decoding may begin again.
    pub(crate) fn new(
        path: Arc<Path>,
        (raw_start, raw_len): (u64, u64),
        index: LineIndex,
        format_chars: u64,
        restarts: Vec<(u64, u64)>,
        shift: (usize, i64),
    ) -> Self {
        Self {
            path,
            raw_start,
            raw_len,
            index,
            format_chars,
            restarts,
            shift,
        }
    }

    /// How many places decoding can restart from.
    #[cfg(test)]
    pub(crate) fn restart_count(&self) -> usize {
        self.restarts.len()
    }

    /// Where the string's placeholder ends in its line as held, and how much longer the string
    /// is in the file.
    pub(crate) fn shift(&self) -> (usize, i64) {
        self.shift
    }

    /// Size of the decoded text in bytes.
    pub fn bytes(&self) -> u64 {
        self.index.bytes()
    }

    /// The decoded text's line index.
    pub fn index(&self) -> &LineIndex {
        &self.index
    }

    /// Format characters in the decoded text.
    pub fn format_chars(&self) -> u64 {
        self.format_chars
    }
}

/// The decoded text of a [`BigString`], read from its file on demand: random access decodes
/// from the nearest restart point, so any read costs at most about a megabyte of decoding.
pub struct SpanSource {
    big: BigString,
    file: File,
}

impl SpanSource {
    /// Opens the span's file.
    pub fn open(big: &BigString) -> io::Result<Self> {
        Ok(Self {
            big: big.clone(),
            file: File::open(&big.path)?,
        })
    }

    /// The span it reads.
    pub fn span(&self) -> &BigString {
        &self.big
    }
}

impl std::fmt::Debug for SpanSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanSource")
            .field("big", &self.big)
            .finish()
    }
}

fn changed() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the transcript changed since it was read",
    )
}

impl ByteSource for SpanSource {
    fn len(&self) -> u64 {
        self.big.bytes()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        if offset >= self.len() || buf.is_empty() {
            return Ok(0);
        }
        let r = &self.big.restarts;
        let (mut decoded, mut raw) = r[r.partition_point(|&(d, _)| d <= offset) - 1];
        let mut decoder = Decoder::default();
        let mut input = vec![0u8; STEP];
        let mut out = Vec::with_capacity(STEP);
        let mut filled = 0;
        while filled < buf.len() && raw < self.big.raw_len {
            let want = (self.big.raw_len - raw).min(STEP as u64) as usize;
            let n = self
                .file
                .read_at(&mut input[..want], self.big.raw_start + raw)?;
            if n == 0 {
                return Err(changed());
            }
            out.clear();
            match decoder.feed(&input[..n], &mut out) {
                Ok(None) => {}
                // The closing quote only ever follows the span's last raw byte.
                Ok(Some(_)) | Err(_) => return Err(changed()),
            }
            raw += n as u64;
            let end = decoded + out.len() as u64;
            if end > offset {
                // Zero once the copy has begun: the chunks are contiguous.
                let skip = offset.saturating_sub(decoded) as usize;
                let take = (out.len() - skip).min(buf.len() - filled);
                buf[filled..filled + take].copy_from_slice(&out[skip..skip + take]);
                filled += take;
            }
            decoded = end;
        }
        Ok(filled)
    }
}
