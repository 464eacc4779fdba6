//! A run's figures with its subagents': beside a parent's own tokens and cost, the totals over
//! it and every run under it (its subagents, theirs...), as usage tools that fold a subagent's
//! transcript into its session count a session. A run with no children has its own figures
//! there.

use crate::model::Run;
use std::collections::HashMap;

/// How deep a chain of parents is followed: a loop of parents (a damaged summary) stops here.
const DEPTH_MAX: usize = 64;

/// A run as a listing holds it: what its figures with its children are told from.
pub(crate) trait Member {
    fn id(&self) -> &str;
    fn parent_id(&self) -> Option<&str>;
    /// Its own tokens and cost.
    fn own_figures(&self) -> (u64, Option<f64>);
    /// Sets its tokens and cost with its children.
    fn set_with_children(&mut self, figures: (u64, Option<f64>));
}

impl Member for Run {
    fn id(&self) -> &str {
        &self.id
    }
    fn parent_id(&self) -> Option<&str> {
        self.parent_id.as_deref()
    }
    fn own_figures(&self) -> (u64, Option<f64>) {
        own_figures(self)
    }
    fn set_with_children(&mut self, figures: (u64, Option<f64>)) {
        (self.tokens_with_children, self.cost_with_children_usd) = figures;
    }
}

/// Sets every run's `tokens_with_children` and `cost_with_children_usd` from the runs' own
/// figures (the runs of one listing: a child is found by its `parent_id`).
pub(crate) fn add_children<M: Member>(runs: &mut [M]) {
    let at: HashMap<&str, usize> = (runs.iter().enumerate())
        .map(|(i, r)| (r.id(), i))
        .collect();
    let own: Vec<(u64, Option<f64>)> = runs.iter().map(M::own_figures).collect();
    let parents: Vec<Option<usize>> = (runs.iter())
        .map(|r| r.parent_id().and_then(|p| at.get(p).copied()))
        .collect();
    drop(at);
    for (r, figures) in runs.iter_mut().zip(totals(&own, &parents)) {
        r.set_with_children(figures);
    }
}

/// Each run's figures with its children's: `own` are the runs' own figures, `parents` the
/// place of each run's parent among them (none when it has none, or it is not one of them).
pub(crate) fn totals(
    own: &[(u64, Option<f64>)],
    parents: &[Option<usize>],
) -> Vec<(u64, Option<f64>)> {
    let mut totals = own.to_vec();
    for (child, figures) in own.iter().enumerate() {
        let mut next = parents[child];
        for _ in 0..DEPTH_MAX {
            let Some(p) = next.filter(|p| *p != child) else {
                break;
            };
            totals[p] = add(totals[p], *figures);
            next = parents[p];
        }
    }
    totals
}

/// Sets `run`'s figures with its children, given theirs (`children`: every run under it).
pub(crate) fn add_children_of(run: &mut Run, children: &[Run]) {
    let totals = (children.iter()).fold(own_figures(run), |sum, c| add(sum, own_figures(c)));
    run.set_with_children(totals);
}

fn own_figures(r: &Run) -> (u64, Option<f64>) {
    (r.input_tokens.saturating_add(r.output_tokens), r.cost_usd)
}

fn add(
    (tokens, cost): (u64, Option<f64>),
    (more, more_cost): (u64, Option<f64>),
) -> (u64, Option<f64>) {
    let cost = match (cost, more_cost) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    (tokens.saturating_add(more), cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, parent: Option<&str>, tokens: u64, cost: Option<f64>) -> Run {
        Run {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            input_tokens: tokens,
            cost_usd: cost,
            ..Run::default()
        }
    }

    #[test]
    fn a_parent_counts_every_run_under_it_and_a_loop_ends() {
        let mut runs = vec![
            run("child", Some("parent"), 10, Some(0.1)),
            run("parent", None, 100, Some(1.0)),
            run("grandchild", Some("child"), 1, Some(0.01)),
            run("a", Some("b"), 5, None),
            run("b", Some("a"), 7, Some(0.5)),
        ];
        add_children(&mut runs);
        let by = |id: &str| runs.iter().find(|r| r.id == id).unwrap();
        assert_eq!(by("parent").tokens_with_children, 111);
        assert!((by("parent").cost_with_children_usd.unwrap() - 1.11).abs() < 1e-12);
        assert_eq!(by("child").tokens_with_children, 11);
        assert_eq!(by("grandchild").tokens_with_children, 1);
        assert_eq!(
            by("parent").input_tokens,
            100,
            "its own figures are its own"
        );
        // A loop of parents: each counts the other's once per step, and never hangs.
        assert!(
            by("b").cost_with_children_usd.is_none(),
            "a child with no price"
        );
    }
}
