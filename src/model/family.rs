//! A run's figures with its subagents': beside a parent's own tokens and cost, the totals over
//! it and every run under it (its subagents, theirs...), as usage tools that fold a subagent's
//! transcript into its session count a session. A run with no children has its own figures
//! there.

use crate::model::Run;
use std::collections::HashMap;

/// How deep a chain of parents is followed: a loop of parents (a damaged summary) stops here.
const DEPTH_MAX: usize = 64;

/// Sets every run's `tokens_with_children` and `cost_with_children_usd` from the runs' own
/// figures (the runs of one listing: a child is found by its `parent_id`).
pub(crate) fn add_children(runs: &mut [Run]) {
    let at: HashMap<String, usize> = (runs.iter().enumerate())
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    let own: Vec<(u64, Option<f64>)> = runs.iter().map(own_figures).collect();
    let parents: Vec<Option<usize>> = (runs.iter())
        .map(|r| r.parent_id.as_ref().and_then(|p| at.get(p).copied()))
        .collect();
    for r in runs.iter_mut() {
        (r.tokens_with_children, r.cost_with_children_usd) = own_figures(r);
    }
    for (child, figures) in own.iter().enumerate() {
        let mut next = parents[child];
        for _ in 0..DEPTH_MAX {
            let Some(p) = next.filter(|p| *p != child) else {
                break;
            };
            add(&mut runs[p], *figures);
            next = parents[p];
        }
    }
}

/// Sets `run`'s figures with its children, given theirs (`children`: every run under it).
pub(crate) fn add_children_of(run: &mut Run, children: &[Run]) {
    (run.tokens_with_children, run.cost_with_children_usd) = own_figures(run);
    for c in children {
        add(run, own_figures(c));
    }
}

fn own_figures(r: &Run) -> (u64, Option<f64>) {
    (r.input_tokens.saturating_add(r.output_tokens), r.cost_usd)
}

fn add(run: &mut Run, (tokens, cost): (u64, Option<f64>)) {
    run.tokens_with_children = run.tokens_with_children.saturating_add(tokens);
    run.cost_with_children_usd = match (run.cost_with_children_usd, cost) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
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
