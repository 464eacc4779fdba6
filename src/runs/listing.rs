//! A listing held compactly: each run in the index's compact binary form (a run's figures take
//! a third of the memory they take as a [`Run`]; a run taken from the index is held in its
//! row's bytes), unpacked one at a time as it is printed. A
//! cold `mctl runs` over tens of thousands of runs holds each run's figures while the others
//! are read, and the order is known only once all are: this is what it holds them in.
//!
//! Past the first [`HELD_BYTES`] of packed runs, the others are written to a file in the cache
//! folder (unnamed: it goes with the process, whatever ends it; written a block at a time, see
//! `spill.rs`) and read back as they are printed. What a listing holds per run is then only
//! what orders it: no id, only where the id sorts among the layout's ([`Packer::rank`]), about
//! 80 bytes a run. A listing that cannot make that file holds every run, as it does without a
//! cache folder.

use super::spill::{Spill, SpillWriter};
use crate::model::family::Member;
use crate::model::Run;
use serde::{Serialize, Serializer};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many bytes of packed runs a listing holds before it writes the rest to a file: about
/// 6,000 Claude Code runs (about 350 bytes a run packed), the listings whose warm reading a
/// file would slow for nothing.
const HELD_BYTES: usize = 2 << 20;

/// Every run of a listing, most recently active first, each packed.
pub struct Listing {
    runs: Vec<Packed>,
    /// Where the runs past [`HELD_BYTES`] are.
    spill: Spill,
}

/// One run, packed: what ordering the listing and adding the children's figures need, beside
/// the run in `postcard`'s form (as the index keeps it), held or written apart. Neither its id
/// nor its parent's is held (a listing of 100,000 runs held 7 MB of them): their ranks stand
/// in for them.
pub(crate) struct Packed {
    /// Where its id sorts among the layout's ([`Packer::rank`]): a tie of recency is broken
    /// by it as by the id.
    rank: u32,
    /// Its parent's rank, when its parent is a run of the layout.
    parent: Option<u32>,
    updated_ms: Option<i64>,
    /// Its own tokens and cost; once the listing is made, with its children's.
    figures: (u64, Option<f64>),
    run: Bytes,
}

/// Where a packed run's bytes are.
enum Bytes {
    Held(Box<[u8]>),
    /// Placed in the listing's spill file, `len` bytes at `at`.
    Written {
        at: u64,
        len: u32,
    },
}

/// Packs the runs of one listing, on any thread, and writes those past [`HELD_BYTES`] apart.
pub(crate) struct Packer<'a> {
    /// The ids of the layout's runs, in their order (bytewise): what a run's rank is told by.
    ids: &'a [&'a str],
    /// How many bytes it holds before it writes ([`HELD_BYTES`]).
    budget: usize,
    /// The bytes of packed runs held so far.
    held: AtomicUsize,
    /// Where the runs past the budget go.
    spill: SpillWriter,
}

impl<'a> Packer<'a> {
    /// A packer of the runs of a layout whose ids are `ids` (in order), whose spill file, if
    /// one is needed, is made in `dir`.
    pub(crate) fn new(dir: Option<&Path>, ids: &'a [&'a str]) -> Self {
        Self {
            ids,
            budget: HELD_BYTES,
            held: AtomicUsize::new(0),
            spill: SpillWriter::new(dir),
        }
    }

    /// `run` packed, its rank had from its id (a listing packs each run by its place: see
    /// [`pack_at`](Self::pack_at)).
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn pack(&self, run: Run) -> Packed {
        let rank = self.rank(&run.id);
        self.packed(rank, run, None)
    }

    /// [`pack`](Self::pack) of a run read as the layout's run at place `at` (in the order of
    /// `ids`): its rank is had from its place, not searched for among the ids (a search reads
    /// a dozen ids from all over the heap, for each of thousands of runs). `packed`: the run
    /// already in `postcard`'s form (as the index keeps it), else it is encoded.
    pub(crate) fn pack_at(&self, at: usize, run: Run, packed: Option<Vec<u8>>) -> Packed {
        let rank = match self.ids.get(at) {
            Some(id) if *id == run.id => found_rank(at),
            _ => self.rank(&run.id),
        };
        self.packed(rank, run, packed)
    }

    fn packed(&self, rank: u32, run: Run, packed: Option<Vec<u8>>) -> Packed {
        // A run always encodes (no field is of a kind `postcard` refuses); were it not to, its
        // empty bytes unpack as a run shown unreadable, with why.
        let bytes = packed.unwrap_or_else(|| pack_bytes(&run));
        Packed {
            rank,
            // Only a parent the layout has is one of the listing's runs.
            parent: (run.parent_id.as_deref())
                .and_then(|p| self.ids.binary_search(&p).ok())
                .map(found_rank),
            updated_ms: run.updated_ms,
            figures: run.own_figures(),
            run: self.place(bytes),
        }
    }

    /// Where `id` sorts among the layout's ids: twice its place, and one more when it is one
    /// of them, so that ranks order as the ids do whether or not they are. (Every run of a
    /// listing is one of the layout's: a store reads a run under the id it is asked for. Were
    /// two runs not, and between the same two of the layout's ids, they would share a rank:
    /// their order would not be told by their ids, and neither is anyone's parent.)
    fn rank(&self, id: &str) -> u32 {
        match self.ids.binary_search(&id) {
            Ok(at) => found_rank(at),
            Err(at) => u32::try_from(2 * at).unwrap_or(u32::MAX),
        }
    }

    /// Where `bytes` are kept: held while the listing holds little, else placed in the spill
    /// file (held still when none can be made: the listing shows every run either way).
    fn place(&self, bytes: Vec<u8>) -> Bytes {
        let held = self.held.fetch_add(bytes.len(), Ordering::Relaxed);
        if held < self.budget {
            return Bytes::Held(bytes.into_boxed_slice());
        }
        // The file is made only now: a listing within the budget makes none.
        if let Ok(len) = u32::try_from(bytes.len()) {
            if let Some(at) = self.spill.place(&bytes) {
                self.held.fetch_sub(bytes.len(), Ordering::Relaxed);
                return Bytes::Written { at, len };
            }
        }
        Bytes::Held(bytes.into_boxed_slice())
    }

    /// What the runs placed apart are read back from.
    pub(crate) fn into_spill(self) -> Spill {
        self.spill.finish()
    }
}

/// The rank of the layout's id at place `at` (see [`Packer::rank`]). (A listing of more than
/// two billion runs would share the last rank.)
fn found_rank(at: usize) -> u32 {
    u32::try_from(2 * at + 1).unwrap_or(u32::MAX)
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
    fn unpack(&self, spill: &Spill) -> Run {
        let read = self.decode(spill, |bytes| postcard::from_bytes(bytes));
        let mut run = read.unwrap_or_else(|e| super::unreadable_run(&self.lost_id(), &e));
        run.set_with_children(self.figures);
        run
    }

    /// The run's id alone: the first field of its packed bytes, the rest not decoded.
    fn id(&self, spill: &Spill) -> String {
        let read = self.decode(spill, |bytes| {
            postcard::take_from_bytes(bytes).map(|(id, _)| id)
        });
        read.unwrap_or_else(|_| self.lost_id())
    }

    /// What `decode` makes of the run's packed bytes, held or read back from `spill`.
    fn decode<T>(
        &self,
        spill: &Spill,
        decode: impl FnOnce(&[u8]) -> postcard::Result<T>,
    ) -> Result<T, String> {
        let read = match &self.run {
            Bytes::Held(bytes) => decode(bytes).map_err(|e| e.to_string()),
            Bytes::Written { at, len } => {
                (spill.read(*at, *len)).and_then(|bytes| decode(&bytes).map_err(|e| e.to_string()))
            }
        };
        if let Err(e) = &read {
            if matches!(self.run, Bytes::Written { .. }) && !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!("listing: a run could not be read back from its file ({e})");
            }
        }
        read
    }

    /// What stands for the id of a run that could not be read back (its id went with its
    /// bytes): where its id sorted among the layout's.
    fn lost_id(&self) -> String {
        format!("(unreadable: place {} in the layout)", self.rank / 2)
    }
}

impl Listing {
    /// The runs, packed, in a listing's order and with their figures with their children;
    /// `spill` is their packer's ([`Packer::into_spill`]).
    pub(crate) fn of(mut runs: Vec<Packed>, spill: Spill) -> Self {
        // Each run's parent found by its rank.
        let mut at: Vec<(u32, usize)> = (runs.iter().enumerate())
            .map(|(i, r)| (r.rank, i))
            .collect();
        at.sort_unstable();
        let parents: Vec<Option<usize>> = (runs.iter())
            .map(|r| {
                let p = r.parent?;
                at.binary_search_by_key(&p, |&(rank, _)| rank)
                    .ok()
                    .map(|k| at[k].1)
            })
            .collect();
        drop(at);
        let own: Vec<(u64, Option<f64>)> = runs.iter().map(|r| r.figures).collect();
        let totals = crate::model::family::totals(&own, &parents);
        drop((own, parents));
        for (r, figures) in runs.iter_mut().zip(totals) {
            r.figures = figures;
        }
        // Ranks are unique (ids are): an unstable sort gives the one order, and allocates
        // nothing. Most recently active first (a run with no time last), then by id.
        runs.sort_unstable_by(|a, b| (b.updated_ms.cmp(&a.updated_ms)).then(a.rank.cmp(&b.rank)));
        Self { runs, spill }
    }

    /// A listing of `runs`, held, as a listing orders them (for tests of what prints one).
    #[cfg(feature = "test-hooks")]
    pub fn of_runs(runs: Vec<Run>) -> Self {
        let mut ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        let packer = Packer::new(None, &ids);
        let packed = runs.iter().map(|r| packer.pack(r.clone())).collect();
        Self::of(packed, packer.into_spill())
    }

    /// How many runs.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// Whether there is no run.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The runs' ids, in order (each read from its packed bytes: the listing holds no id).
    pub fn ids(&self) -> impl Iterator<Item = String> + '_ {
        self.runs.iter().map(|r| r.id(&self.spill))
    }

    /// The runs, in order, each unpacked when it is reached.
    pub fn runs(&self) -> impl ExactSizeIterator<Item = Run> + '_ {
        self.runs.iter().map(|r| r.unpack(&self.spill))
    }

    /// The run at place `at` in the order, unpacked (on any thread: a printer unpacks a window
    /// of runs on every core).
    pub fn run_at(&self, at: usize) -> Option<Run> {
        Some(self.runs.get(at)?.unpack(&self.spill))
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

    /// The layout's ids of [`runs`], in order.
    const IDS: &[&str] = &["a", "b", "child", "old"];

    fn listing(packer: Packer) -> Listing {
        let packed = runs().into_iter().map(|r| packer.pack(r)).collect();
        Listing::of(packed, packer.into_spill())
    }

    fn written(listing: &Listing) -> usize {
        let written = |r: &&Packed| matches!(r.run, Bytes::Written { .. });
        listing.runs.iter().filter(written).count()
    }

    #[test]
    fn a_listing_past_its_budget_writes_its_runs_apart_and_prints_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let packer = Packer::new(Some(dir.path()), IDS);
        let small: Vec<Packed> = runs().into_iter().map(|r| packer.pack(r)).collect();
        assert!(!packer.spill.made(), "a small listing makes no file");
        let held = Listing::of(small, packer.into_spill());
        assert_eq!(written(&held), 0, "a small listing holds its runs");
        let spilled = listing(Packer {
            budget: 0,
            ..Packer::new(Some(dir.path()), IDS)
        });
        assert_eq!(written(&spilled), 4);
        assert_eq!(
            serde_json::to_string(&spilled).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
        // An id alone is read from a run's bytes, held or written.
        for listing in [&held, &spilled] {
            let ids: Vec<String> = listing.ids().collect();
            assert_eq!(ids, ["child", "a", "b", "old"]);
            assert_eq!(ids, listing.runs().map(|r| r.id).collect::<Vec<_>>());
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "the spill file has no name"
        );
        // Nowhere to write it: every run held, the same listing.
        let nowhere = listing(Packer {
            budget: 0,
            ..Packer::new(Some(&dir.path().join("missing")), IDS)
        });
        assert_eq!(written(&nowhere), 0);
        assert_eq!(
            serde_json::to_string(&nowhere).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
    }

    #[test]
    fn a_packed_listing_prints_what_the_runs_print_in_a_listings_order() {
        let listing = listing(Packer::new(None, IDS));
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

    #[test]
    fn ranks_order_and_nest_runs_as_their_ids_do() {
        // Runs of a few times (many ties), each under a run of the listing, under an id no run
        // has, or under none; some of the layout's runs gone before the listing, and one run
        // whose id the layout lacks. The listing holds no id: it must order the runs and add
        // up their children as the runs themselves are.
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..50 {
            let n = rng.usize(1..60);
            let id = |i: usize| format!("r{:03}", i * 7 % 101);
            let layout: Vec<String> = (0..n).map(id).collect();
            let kept: Vec<usize> = (0..n).filter(|_| rng.u8(..) > 40).collect();
            let mut runs: Vec<Run> = (kept.into_iter())
                .map(|i| {
                    let parent = match rng.u8(..4) {
                        0 => Some(id(rng.usize(..n))),
                        1 => Some("gone".to_owned()),
                        _ => None,
                    };
                    let updated = (rng.u8(..5) > 0).then(|| rng.i64(0..4));
                    run(&id(i), parent.as_deref(), updated, rng.u64(..1000))
                })
                .collect();
            if round % 2 == 0 {
                runs.push(run("r050x", Some(&id(0)), Some(2), 5));
            }
            let mut ids: Vec<&str> = layout.iter().map(String::as_str).collect();
            ids.sort_unstable();
            let packer = Packer::new(None, &ids);
            // Packed by their place among the layout's ids, as a listing packs them: a place
            // that is not the run's (every third round, and for an id the layout lacks) falls
            // back to the run's id.
            let packed = (runs.iter())
                .map(|r| {
                    let at = match ids.binary_search(&r.id.as_str()) {
                        Ok(at) if round % 3 == 0 => (at + 1) % (n + 1),
                        Ok(at) => at,
                        Err(_) => rng.usize(..=n),
                    };
                    packer.pack_at(at, r.clone(), None)
                })
                .collect();
            let listing = Listing::of(packed, packer.into_spill());
            let mut want = runs.clone();
            crate::model::family::add_children(&mut want);
            super::super::sort_runs(&mut want);
            assert_eq!(
                serde_json::to_string(&listing).unwrap(),
                serde_json::to_string(&want).unwrap(),
                "round {round}"
            );
        }
    }
}
