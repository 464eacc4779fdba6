//! A listing held compactly: each run in the index's compact binary form (a run's figures take
//! a third of the memory they take as a [`Run`]), unpacked one at a time as it is printed. A
//! cold `mctl runs` over tens of thousands of runs holds each run's figures while the others
//! are read, and the order is known only once all are: this is what it holds them in.

use crate::model::family::Member;
use crate::model::Run;
use serde::{Serialize, Serializer};

/// Every run of a listing, most recently active first, each packed.
pub struct Listing {
    runs: Vec<Packed>,
}

/// One run, packed: what ordering the listing and adding the children's figures need, beside
/// the run in `postcard`'s form (as the index keeps it).
pub(crate) struct Packed {
    id: Box<str>,
    parent_id: Option<Box<str>>,
    updated_ms: Option<i64>,
    own: (u64, Option<f64>),
    with_children: (u64, Option<f64>),
    run: Box<[u8]>,
}

impl Packed {
    pub(crate) fn pack(run: Run) -> Self {
        // A run always encodes (no field is of a kind `postcard` refuses); were it not to, its
        // empty bytes unpack as a run shown unreadable, with why.
        let bytes = postcard::to_stdvec(&run).unwrap_or_default();
        Self {
            own: run.own_figures(),
            with_children: run.own_figures(),
            updated_ms: run.updated_ms,
            parent_id: run.parent_id.map(String::into_boxed_str),
            id: run.id.into_boxed_str(),
            run: bytes.into_boxed_slice(),
        }
    }

    /// The run as it was packed, with its figures with its children as the listing told them.
    fn unpack(&self) -> Run {
        let mut run =
            postcard::from_bytes(&self.run).unwrap_or_else(|e| super::unreadable_run(&self.id, &e));
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
    pub(crate) fn of(mut runs: Vec<Packed>) -> Self {
        crate::model::family::add_children(&mut runs);
        // Ids are unique: an unstable sort gives the one order, and allocates nothing.
        runs.sort_unstable_by(|a, b| {
            super::by_recency((a.updated_ms, &a.id), (b.updated_ms, &b.id))
        });
        Self { runs }
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
        self.runs.iter().map(Packed::unpack)
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

    #[test]
    fn a_packed_listing_prints_what_the_runs_print_in_a_listings_order() {
        let runs = vec![
            run("b", None, Some(5), 100),
            run("child", Some("b"), Some(9), 10),
            run("a", None, Some(5), 1),
            run("old", None, None, 7),
        ];
        let listing = Listing::of(runs.iter().cloned().map(Packed::pack).collect());
        let mut want = runs;
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
