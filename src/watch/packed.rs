//! Runs a watcher holds while it waits for them to change, in the index's compact form.

use crate::model::Run;

/// A run in `postcard`'s compact binary form (the index's): a third of a [`Run`]'s memory. A
/// watcher holds one per run it watches (tens of thousands in a big store) and unpacks it when
/// the run is asked for.
pub(super) struct PackedRun(Box<[u8]>);

impl PackedRun {
    /// `run` packed; `None` when it cannot be.
    pub(super) fn new(run: &Run) -> Option<Self> {
        let bytes = postcard::to_stdvec(run).ok()?;
        Some(Self(bytes.into_boxed_slice()))
    }

    /// The run. Packed here from a `Run`, it unpacks; were it not to, it shows by its id alone.
    pub(super) fn unpack(&self, id: &str) -> Run {
        postcard::from_bytes(&self.0).unwrap_or_else(|_| Run {
            id: id.to_owned(),
            ..Run::default()
        })
    }
}

/// A run held packed, or whole when it cannot be packed.
pub(super) enum HeldRun {
    Packed(PackedRun),
    Whole(Box<Run>),
}

impl HeldRun {
    pub(super) fn new(run: Run) -> Self {
        match PackedRun::new(&run) {
            Some(packed) => Self::Packed(packed),
            None => Self::Whole(Box::new(run)),
        }
    }

    pub(super) fn run(&self, id: &str) -> Run {
        match self {
            Self::Packed(packed) => packed.unpack(id),
            Self::Whole(run) => (**run).clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_run_gives_back_the_run_it_was_given() {
        let run = Run {
            id: "r1".to_owned(),
            title: "fix the parser".to_owned(),
            model: Some("m".to_owned()),
            input_tokens: 1234,
            cost_usd: Some(0.125),
            tools: vec!["bash".to_owned(), "read".to_owned()],
            ..Run::default()
        };
        let held = HeldRun::new(run.clone());
        assert!(matches!(held, HeldRun::Packed(_)), "a run packs");
        let back = serde_json::to_value(held.run("r1")).unwrap();
        assert_eq!(back, serde_json::to_value(&run).unwrap());
    }
}
