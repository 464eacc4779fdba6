//! What a model was shown by its read-backs of a value: the lines a peek's answer shows.

pub(crate) use crate::model::PeekCall;

/// The line numbers a peek's text shows: those of its `N: ` gutter lines (its header and footer
/// never look like one, spec B.4), in order.
pub(super) fn shown_lines(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| {
            let digits = l.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || !l[digits..].starts_with(": ") {
                return None;
            }
            // Lines are numbered from 1: a `0: ` gutter is no line of the value.
            l[..digits].parse().ok().filter(|n: &u64| *n > 0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gutter_lines_only() {
        let text = "peek_value #v lines 3-4 of 9:\n3: a\n4: 12: b\n--- 2 lines ---\n5 lines\n";
        assert_eq!(shown_lines(text), [3, 4]);
        assert_eq!(shown_lines("0: a\n00: b\n1: c\n"), [1]);
    }
}
