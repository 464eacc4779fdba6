//! Aligning two sequences of keys: which items pair up and which stand alone, in order. The
//! diff itself is `similar`'s (Myers, with a deadline so that two runs of ten thousand tool
//! calls that share nothing still answer at once, less minimally).

use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// How long one alignment may search for the smallest diff before it settles for a larger one.
const DEADLINE: Duration = Duration::from_millis(500);

/// One step of an alignment: items of `a` and `b` paired, or an item of one side alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Both(usize, usize),
    OnlyA(usize),
    OnlyB(usize),
}

/// `a` and `b` aligned on equal keys; within each stretch that does not match, items whose
/// `loose` keys are equal are paired too (aligned the same way), so that a tool called with
/// another input on each side is one row that differs rather than two rows alone.
pub(crate) fn align<K, L>(a: &[K], b: &[K], loose_a: &[L], loose_b: &[L]) -> Vec<Step>
where
    K: Hash + Eq + Ord,
    L: Hash + Eq + Ord,
{
    let mut steps = Vec::with_capacity(a.len().max(b.len()));
    for op in diff(a, b) {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => steps.extend((0..len).map(|i| Step::Both(old_index + i, new_index + i))),
            DiffOp::Delete {
                old_index, old_len, ..
            } => steps.extend((old_index..old_index + old_len).map(Step::OnlyA)),
            DiffOp::Insert {
                new_index, new_len, ..
            } => steps.extend((new_index..new_index + new_len).map(Step::OnlyB)),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                let (ra, rb) = (
                    old_index..old_index + old_len,
                    new_index..new_index + new_len,
                );
                for step in exact(&loose_a[ra.clone()], &loose_b[rb.clone()]) {
                    steps.push(match step {
                        Step::Both(i, j) => Step::Both(ra.start + i, rb.start + j),
                        Step::OnlyA(i) => Step::OnlyA(ra.start + i),
                        Step::OnlyB(j) => Step::OnlyB(rb.start + j),
                    });
                }
            }
        }
    }
    steps
}

/// `a` and `b` aligned on equal keys only.
fn exact<K: Hash + Eq + Ord>(a: &[K], b: &[K]) -> Vec<Step> {
    let mut steps = Vec::new();
    for op in diff(a, b) {
        let (old, new) = (op.old_range(), op.new_range());
        if matches!(op, DiffOp::Equal { .. }) {
            steps.extend(old.zip(new).map(|(i, j)| Step::Both(i, j)));
        } else {
            steps.extend(old.map(Step::OnlyA));
            steps.extend(new.map(Step::OnlyB));
        }
    }
    steps
}

fn diff<K: Hash + Eq + Ord>(a: &[K], b: &[K]) -> Vec<DiffOp> {
    let deadline = Instant::now() + DEADLINE;
    capture_diff_slices_deadline(Algorithm::Myers, a, b, Some(deadline))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools<'a>(s: &[(&'a str, &str)]) -> Vec<&'a str> {
        s.iter().map(|x| x.0).collect()
    }

    fn run(a: &[(&str, &str)], b: &[(&str, &str)]) -> Vec<Step> {
        align(a, b, &tools(a), &tools(b))
    }

    #[test]
    fn equal_items_pair_and_the_rest_stand_alone_in_order() {
        let a = [("read", "x"), ("bash", "make"), ("edit", "y")];
        let b = [("read", "x"), ("grep", "z"), ("edit", "y")];
        assert_eq!(
            run(&a, &b),
            [
                Step::Both(0, 0),
                Step::OnlyA(1),
                Step::OnlyB(1),
                Step::Both(2, 2)
            ]
        );
    }

    #[test]
    fn the_same_tool_with_another_input_pairs_as_one_row() {
        let a = [("read", "x"), ("bash", "make"), ("edit", "y")];
        let b = [("read", "x"), ("bash", "make test"), ("edit", "y")];
        assert_eq!(
            run(&a, &b),
            [Step::Both(0, 0), Step::Both(1, 1), Step::Both(2, 2)]
        );
    }

    #[test]
    fn one_side_empty() {
        let a = [("read", "x"), ("bash", "make")];
        assert_eq!(run(&a, &[]), [Step::OnlyA(0), Step::OnlyA(1)]);
        assert_eq!(run(&[], &a), [Step::OnlyB(0), Step::OnlyB(1)]);
    }
}
