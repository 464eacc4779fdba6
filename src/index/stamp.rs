//! What proves a run's files unchanged since the index read them: size, modification and change
//! times in nanoseconds and inode of its transcript, its summary and its value directory. The
//! change time (ctime) cannot be set back by a program: a file renamed into place with an old
//! modification time (`mv`, `cp -a`, `tar x`), or whose permissions changed, gets a new one.
//!
//! A value directory's own stamp stands for the files in it: value files are written whole and
//! renamed into place, and adding, renaming or removing a file changes the directory's time.
//! Times are only as fine as the file system keeps them, so a stamp is trusted only when every
//! modification time in it is [`SETTLED_MS`] older than the moment the run was read (as git does for its
//! "racily clean" entries): a file changed twice within one tick is read again.

/// How long a file must have been left alone before its stamp proves it unchanged.
pub(crate) const SETTLED_MS: i64 = 2_000;

pub(crate) use crate::model::stamp::FileStamp;

/// The stamps of one run's files, with the settings the run model depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunStamp {
    pub transcript: Option<FileStamp>,
    pub summary: Option<FileStamp>,
    pub values: Option<FileStamp>,
    pub threshold: u64,
    /// What another agent's store's layout says of the run beyond its files (its parent, the
    /// call that started it, the side conversation it is, a linked value folder): a run whose
    /// links changed is read again though its files did not.
    pub links: Option<String>,
}

impl RunStamp {
    /// The stamp as a string kept in the index: equal strings, equal stamps. (Written into one
    /// buffer with `itoa`: a listing of 100,000 runs makes 100,000 of them.)
    pub(crate) fn key(&self) -> String {
        let mut out = String::with_capacity(160);
        let mut num = itoa::Buffer::new();
        let mut one = |tag: &str, s: &Option<FileStamp>, out: &mut String| {
            out.push_str(tag);
            match s {
                Some(s) => {
                    out.push_str(num.format(s.len));
                    out.push(':');
                    out.push_str(num.format(s.mtime_ns));
                    out.push(':');
                    out.push_str(num.format(s.ctime_ns));
                    out.push(':');
                    out.push_str(num.format(s.ino));
                }
                None => out.push('-'),
            }
        };
        one("t=", &self.transcript, &mut out);
        one(";s=", &self.summary, &mut out);
        one(";v=", &self.values, &mut out);
        out.push_str(";th=");
        out.push_str(itoa::Buffer::new().format(self.threshold));
        // Costs are estimated from the price table: new prices, new figures.
        out.push_str(";p=");
        out.push_str(itoa::Buffer::new().format(crate::prices::current_fingerprint()));
        if let Some(links) = &self.links {
            out.push_str(";l=");
            out.push_str(links);
        }
        out
    }

    /// Whether every file in the stamp had been left alone for [`SETTLED_MS`] when the run was
    /// read at `read_ms`.
    pub(crate) fn settled_at(&self, read_ms: i64) -> bool {
        [&self.transcript, &self.summary, &self.values]
            .into_iter()
            .flatten()
            .all(|s| s.mtime_ms().saturating_add(SETTLED_MS) < read_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_the_one_the_index_keeps() {
        let file = FileStamp {
            len: 12,
            mtime_ns: 1_700_000_000_123_456_789,
            ctime_ns: -5,
            ino: 42,
        };
        let stamp = RunStamp {
            transcript: Some(file),
            summary: None,
            values: Some(FileStamp { len: 0, ..file }),
            threshold: 20_480,
            links: None,
        };
        let prices = crate::prices::current_fingerprint();
        assert_eq!(
            stamp.key(),
            format!(
                "t=12:1700000000123456789:-5:42;s=-;v=0:1700000000123456789:-5:42;th=20480;p={prices}"
            )
        );
    }
}
