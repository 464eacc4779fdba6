//! The file a listing's packed runs past its budget wait in until they are printed
//! ([`super::listing`]): unnamed, in the cache folder, gone with the process however it ends.
//!
//! Runs are placed in it as they are packed, on every thread, but written a block at a time:
//! a write per run (a few hundred bytes) was a system call per run, about 7 % of a warm
//! listing's time at 28,884 runs. A block that cannot be written is kept in memory and read
//! from there, as is the last block, never full: every run placed can be read back.

use crate::sync::lock;
use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

/// How many bytes of runs are gathered before they are written: about 190 Claude Code runs.
const BLOCK: usize = 64 << 10;

/// Bytes of runs at their place in the file, kept in memory instead.
struct Block {
    at: u64,
    bytes: Vec<u8>,
}

/// What the writer changes as runs are placed, under one lock.
#[derive(Default)]
struct Pending {
    /// Where the runs gathered since the last write start in the file.
    at: u64,
    /// Those runs, in one buffer used again for every block.
    bytes: Vec<u8>,
    /// Blocks whose write failed, in the file's order.
    unwritten: Vec<Block>,
}

/// Places runs in a listing's spill file, made when the first run is placed.
pub(crate) struct SpillWriter {
    /// The folder the file is made in, if any.
    dir: Option<PathBuf>,
    /// The file; `None` when it could not be made.
    file: OnceLock<Option<File>>,
    pending: Mutex<Pending>,
    /// How many bytes are gathered before a write ([`BLOCK`]; tests write smaller ones).
    block: usize,
}

impl SpillWriter {
    /// A writer whose file, if one is needed, is made in `dir`.
    pub(crate) fn new(dir: Option<&Path>) -> Self {
        Self {
            dir: dir.map(Path::to_path_buf),
            file: OnceLock::new(),
            pending: Mutex::default(),
            block: BLOCK,
        }
    }

    /// Where in the file `bytes` (a packed run) are placed; `None` when no file can be made,
    /// and the caller holds them.
    pub(crate) fn place(&self, bytes: &[u8]) -> Option<u64> {
        let file = self.file()?;
        let mut pending = lock(&self.pending);
        let at = pending.at + pending.bytes.len() as u64;
        if pending.bytes.capacity() == 0 {
            pending.bytes.reserve(self.block + bytes.len());
        }
        pending.bytes.extend_from_slice(bytes);
        if pending.bytes.len() >= self.block {
            // Written under the lock, and the one buffer used again: a buffer made anew for
            // each block, grown as runs come, left holes among the runs held (the heap's
            // peak 0.6 MiB higher at 40,000 harness runs).
            let next = pending.at + pending.bytes.len() as u64;
            if let Err(e) = file.write_all_at(&pending.bytes, pending.at) {
                tracing::debug!("listing: a block of runs kept in memory ({e})");
                let block = Block {
                    at: pending.at,
                    bytes: pending.bytes.clone(),
                };
                pending.unwritten.push(block);
            }
            pending.bytes.clear();
            pending.at = next;
        }
        Some(at)
    }

    /// Whether a file was made (a listing within its budget makes none).
    #[cfg(test)]
    pub(crate) fn made(&self) -> bool {
        self.file.get().is_some()
    }

    /// What the runs placed are read back from.
    pub(crate) fn finish(self) -> Spill {
        let last = (self.pending.into_inner()).unwrap_or_else(PoisonError::into_inner);
        let mut kept = last.unwritten;
        if !last.bytes.is_empty() {
            kept.push(Block {
                at: last.at,
                bytes: last.bytes,
            });
        }
        Spill {
            file: self.file.into_inner().flatten(),
            kept,
        }
    }

    fn file(&self) -> Option<&File> {
        let make = || {
            let dir = self.dir.as_deref()?;
            tempfile::tempfile_in(dir)
                .inspect_err(|e| {
                    let dir = dir.display();
                    tracing::debug!("listing: no spill file in {dir} ({e}): every run held");
                })
                .ok()
        };
        self.file.get_or_init(make).as_ref()
    }
}

/// The runs a [`SpillWriter`] placed, read back by their place.
pub(crate) struct Spill {
    file: Option<File>,
    /// The blocks not in the file, in the file's order: any whose write failed, and the last.
    kept: Vec<Block>,
}

impl Spill {
    /// The `len` bytes placed at `at`.
    pub(crate) fn read(&self, at: u64, len: u32) -> Result<Cow<'_, [u8]>, String> {
        // A run is placed whole in one block: the last kept one starting at or before it.
        let before = self.kept.partition_point(|b| b.at <= at);
        if let Some(block) = before.checked_sub(1).map(|i| &self.kept[i]) {
            let from = (at - block.at) as usize;
            if let Some(bytes) = block.bytes.get(from..from + len as usize) {
                return Ok(Cow::Borrowed(bytes));
            }
        }
        let file = (self.file.as_ref()).ok_or_else(|| "its listing's file is gone".to_owned())?;
        let mut bytes = vec![0; len as usize];
        file.read_exact_at(&mut bytes, at)
            .map_err(|e| e.to_string())?;
        Ok(Cow::Owned(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of 1 to 900 bytes (placed from two threads at once by [`placed`]).
    fn runs() -> Vec<Vec<u8>> {
        (0..300u32)
            .map(|i| vec![(i % 251) as u8; (i as usize * 37) % 900 + 1])
            .collect()
    }

    fn placed(writer: &SpillWriter) -> Vec<(u64, Vec<u8>)> {
        let runs = runs();
        let (a, b) = runs.split_at(runs.len() / 2);
        let place = |runs: &[Vec<u8>]| -> Vec<(u64, Vec<u8>)> {
            (runs.iter())
                .map(|r| (writer.place(r).expect("a file"), r.clone()))
                .collect()
        };
        let (mut a, b) = std::thread::scope(|s| {
            let b = s.spawn(|| place(b));
            (place(a), b.join().unwrap())
        });
        a.extend(b);
        a
    }

    fn reads_back(spill: &Spill, placed: &[(u64, Vec<u8>)]) {
        for (at, bytes) in placed {
            let read = spill.read(*at, bytes.len() as u32).unwrap();
            assert_eq!(&*read, bytes.as_slice(), "the run at {at}");
        }
    }

    #[test]
    fn every_run_placed_reads_back_written_a_block_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        for block in [1, 1000, 4096, BLOCK] {
            let writer = SpillWriter {
                block,
                ..SpillWriter::new(Some(dir.path()))
            };
            let placed = placed(&writer);
            let spill = writer.finish();
            let total: usize = placed.iter().map(|(_, b)| b.len()).sum();
            let file = spill.file.as_ref().unwrap().metadata().unwrap().len();
            let kept: usize = spill.kept.iter().map(|b| b.bytes.len()).sum();
            assert_eq!(file as usize + kept, total, "block {block}");
            assert!(kept < block, "only the last block is kept: {kept} bytes");
            reads_back(&spill, &placed);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no name");
    }

    #[test]
    fn a_block_that_cannot_be_written_is_kept_and_read_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read-only");
        std::fs::write(&path, b"").unwrap();
        let writer = SpillWriter {
            block: 1000,
            file: OnceLock::from(Some(File::open(&path).unwrap())),
            ..SpillWriter::new(Some(dir.path()))
        };
        let placed = placed(&writer);
        let spill = writer.finish();
        assert!(spill.kept.len() > 10, "{} blocks kept", spill.kept.len());
        reads_back(&spill, &placed);
        assert!(spill.read(1 << 40, 10).is_err(), "a place no run has");
    }

    #[test]
    fn nowhere_to_make_the_file_places_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let writer = SpillWriter::new(Some(&dir.path().join("missing")));
        assert_eq!(writer.place(b"run"), None);
        assert_eq!(SpillWriter::new(None).place(b"run"), None);
    }
}
