//! A listing held compactly: each run in the index's compact binary form (a run's figures take
//! a third of the memory they take as a [`Run`]), unpacked one at a time as it is printed. A
//! cold `mctl runs` over tens of thousands of runs holds each run's figures while the others
//! are read, and the order is known only once all are: this is what it holds them in.
//!
//! Past the first [`HELD_BYTES`] of packed runs, the others are written to a file in the cache
//! folder (unnamed: it goes with the process, whatever ends it) and read back as they are
//! printed. What a listing holds per run is then only what orders it. A listing that cannot
//! write there holds every run, as it does without a cache folder.

use crate::model::family::Member;
use crate::model::Run;
use serde::{Serialize, Serializer};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How many bytes of packed runs a listing holds before it writes the rest to a file: about
/// 10,000 runs, the listings whose warm reading a file would slow for nothing.
const HELD_BYTES: usize = 2 << 20;

/// Every run of a listing, most recently active first, each packed.
pub struct Listing {
    runs: Vec<Packed>,
    /// Where the runs past [`HELD_BYTES`] are.
    spill: Option<File>,
}

/// One run, packed: what ordering the listing and adding the children's figures need, beside
/// the run in `postcard`'s form (as the index keeps it), held or written apart.
pub(crate) struct Packed {
    id: Box<str>,
    parent_id: Option<Box<str>>,
    updated_ms: Option<i64>,
    own: (u64, Option<f64>),
    with_children: (u64, Option<f64>),
    run: Bytes,
}

/// Where a packed run's bytes are.
enum Bytes {
    Held(Box<[u8]>),
    /// In the listing's spill file, `len` bytes at `at`.
    Written {
        at: u64,
        len: u32,
    },
}

/// Packs the runs of one listing, on any thread, and writes those past [`HELD_BYTES`] apart.
pub(crate) struct Packer {
    /// The folder the spill file is made in, if any.
    dir: Option<PathBuf>,
    /// How many bytes it holds before it writes ([`HELD_BYTES`]).
    budget: usize,
    /// The bytes of packed runs held so far.
    held: AtomicUsize,
    /// The spill file, made when first needed; `None` when it could not be.
    spill: OnceLock<Option<File>>,
    /// Its length: each run's bytes take the next place, whatever thread writes them.
    end: AtomicU64,
}

impl Packer {
    /// A packer whose spill file, if one is needed, is made in `dir`.
    pub(crate) fn new(dir: Option<&Path>) -> Self {
        Self {
            dir: dir.map(Path::to_path_buf),
            budget: HELD_BYTES,
            held: AtomicUsize::new(0),
            spill: OnceLock::new(),
            end: AtomicU64::new(0),
        }
    }

    pub(crate) fn pack(&self, run: Run) -> Packed {
        // A run always encodes (no field is of a kind `postcard` refuses); were it not to, its
        // empty bytes unpack as a run shown unreadable, with why.
        let bytes = pack_bytes(&run);
        Packed {
            own: run.own_figures(),
            with_children: run.own_figures(),
            updated_ms: run.updated_ms,
            parent_id: run.parent_id.map(String::into_boxed_str),
            id: run.id.into_boxed_str(),
            run: self.place(bytes),
        }
    }

    /// Where `bytes` are kept: held while the listing holds little, else written to the spill
    /// file (held still when it cannot be written: the listing shows every run either way).
    fn place(&self, bytes: Vec<u8>) -> Bytes {
        let held = self.held.fetch_add(bytes.len(), Ordering::Relaxed);
        if held < self.budget {
            return Bytes::Held(bytes.into_boxed_slice());
        }
        // The file is made only now: a listing within the budget makes none.
        if let (Some(file), Ok(len)) = (self.file(), u32::try_from(bytes.len())) {
            let at = self.end.fetch_add(u64::from(len), Ordering::Relaxed);
            if file.write_all_at(&bytes, at).is_ok() {
                self.held.fetch_sub(bytes.len(), Ordering::Relaxed);
                return Bytes::Written { at, len };
            }
        }
        Bytes::Held(bytes.into_boxed_slice())
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
        self.spill.get_or_init(make).as_ref()
    }
}

/// `run` in `postcard`'s form, encoded in a buffer each thread keeps (a run grown a byte at a
/// time reallocates its bytes again and again) and then copied out at its size.
fn pack_bytes(run: &Run) -> Vec<u8> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|buffer| {
        buffer.clear();
        let packed = match postcard::to_io(run, &mut *buffer) {
            Ok(_) => buffer.to_vec(),
            Err(_) => Vec::new(),
        };
        // A run that grew the buffer past what one usually takes gives the room back.
        if buffer.capacity() > 64 << 10 {
            *buffer = Vec::new();
        }
        packed
    })
}

/// Whether a run that could not be read back was said on the log (once is enough).
static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Packed {
    /// The run as it was packed, with its figures with its children as the listing told them.
    fn unpack(&self, spill: Option<&File>) -> Run {
        let read = match &self.run {
            Bytes::Held(bytes) => postcard::from_bytes(bytes).map_err(|e| e.to_string()),
            Bytes::Written { at, len } => {
                let mut bytes = vec![0; *len as usize];
                let file = spill.ok_or_else(|| "its listing's file is gone".to_owned());
                (file.and_then(|f| f.read_exact_at(&mut bytes, *at).map_err(|e| e.to_string())))
                    .and_then(|()| postcard::from_bytes(&bytes).map_err(|e| e.to_string()))
            }
        };
        let mut run = read.unwrap_or_else(|e| {
            if matches!(self.run, Bytes::Written { .. }) && !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!("listing: a run could not be read back from its file ({e})");
            }
            super::unreadable_run(&self.id, &e)
        });
        run.set_with_children(self.with_children);
        run
    }
}

impl Member for Packed {
    fn id(&self) -> &str {
        &self.id
    }
    fn parent_id(&self) -> Option<&str> {
        self.parent_id.as_deref()
    }
    fn own_figures(&self) -> (u64, Option<f64>) {
        self.own
    }
    fn set_with_children(&mut self, figures: (u64, Option<f64>)) {
        self.with_children = figures;
    }
}

impl Listing {
    /// The runs, packed, in a listing's order and with their figures with their children.
    pub(crate) fn of(mut runs: Vec<Packed>, packer: Packer) -> Self {
        crate::model::family::add_children(&mut runs);
        // Ids are unique: an unstable sort gives the one order, and allocates nothing.
        runs.sort_unstable_by(|a, b| {
            super::by_recency((a.updated_ms, &a.id), (b.updated_ms, &b.id))
        });
        let spill = packer.spill.into_inner().flatten();
        Self { runs, spill }
    }

    /// A listing of `runs`, held, as a listing orders them (for tests of what prints one).
    #[cfg(feature = "test-hooks")]
    pub fn of_runs(runs: Vec<Run>) -> Self {
        let packer = Packer::new(None);
        let packed = runs.into_iter().map(|r| packer.pack(r)).collect();
        Self::of(packed, packer)
    }

    /// How many runs.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether there is no run.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The runs' ids, in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.runs.iter().map(|r| &*r.id)
    }

    /// The runs, in order, each unpacked when it is reached.
    pub fn runs(&self) -> impl ExactSizeIterator<Item = Run> + '_ {
        self.runs.iter().map(|r| r.unpack(self.spill.as_ref()))
    }

    /// The run at place `at` in the order, unpacked (on any thread: a printer unpacks a window
    /// of runs on every core).
    pub fn run_at(&self, at: usize) -> Option<Run> {
        Some(self.runs.get(at)?.unpack(self.spill.as_ref()))
    }
}

/// A JSON array of the runs, written as each is unpacked: never every run at once.
impl Serialize for Listing {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.runs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, parent: Option<&str>, updated: Option<i64>, tokens: u64) -> Run {
        Run {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            updated_ms: updated,
            input_tokens: tokens,
            cost_usd: Some(tokens as f64 / 100.0),
            title: format!("run {id}"),
            tools: vec!["Bash".into(), "Read".into()],
            ..Run::default()
        }
    }

    fn runs() -> Vec<Run> {
        vec![
            run("b", None, Some(5), 100),
            run("child", Some("b"), Some(9), 10),
            run("a", None, Some(5), 1),
            run("old", None, None, 7),
        ]
    }

    fn listing(packer: Packer) -> Listing {
        let packed = runs().into_iter().map(|r| packer.pack(r)).collect();
        Listing::of(packed, packer)
    }

    fn written(listing: &Listing) -> usize {
        let written = |r: &&Packed| matches!(r.run, Bytes::Written { .. });
        listing.runs.iter().filter(written).count()
    }

    #[test]
    fn a_listing_past_its_budget_writes_its_runs_apart_and_prints_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let packer = Packer::new(Some(dir.path()));
        let small: Vec<Packed> = runs().into_iter().map(|r| packer.pack(r)).collect();
        assert!(
            packer.spill.get().is_none(),
            "a small listing makes no file"
        );
        let held = Listing::of(small, packer);
        assert_eq!(written(&held), 0, "a small listing holds its runs");
        let spilled = listing(Packer {
            budget: 0,
            ..Packer::new(Some(dir.path()))
        });
        assert_eq!(written(&spilled), 4);
        assert_eq!(
            serde_json::to_string(&spilled).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "the spill file has no name"
        );
        // Nowhere to write it: every run held, the same listing.
        let nowhere = listing(Packer {
            budget: 0,
            ..Packer::new(Some(&dir.path().join("missing")))
        });
        assert_eq!(written(&nowhere), 0);
        assert_eq!(
            serde_json::to_string(&nowhere).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
    }

    #[test]
    fn a_packed_listing_prints_what_the_runs_print_in_a_listings_order() {
        let listing = listing(Packer::new(None));
        let mut want = runs();
        crate::model::family::add_children(&mut want);
        super::super::sort_runs(&mut want);
        assert_eq!(
            listing.ids().collect::<Vec<_>>(),
            ["child", "a", "b", "old"],
            "newest first, ties by id, no time last"
        );
        assert_eq!(
            serde_json::to_string_pretty(&listing).unwrap(),
            serde_json::to_string_pretty(&want).unwrap()
        );
        let b = listing.runs().find(|r| r.id == "b").unwrap();
        assert_eq!(b.tokens_with_children, 110);
        assert_eq!(b.input_tokens, 100, "its own figures are its own");
    }
}
