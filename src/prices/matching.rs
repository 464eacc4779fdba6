//! A model's name matched to a price table's, as the usage tools match it: the exact name, else
//! the longest table name that the model's name contains, or that contains it, at word
//! boundaries (`claude-sonnet-4` is in `claude-sonnet-4-20250514`, but `gpt-5` is not in
//! `gpt-5.1`), `.` and `@` read as `-`.

use std::collections::BTreeMap;

/// Not a letter or a digit: where a name's word ends.
fn boundary(c: char) -> bool {
    !c.is_ascii_alphanumeric()
}

/// `.` and `@` as `-`: `claude-opus-4.5` is `claude-opus-4-5`.
fn normalized(s: &str) -> String {
    s.replace(['.', '@'], "-")
}

/// Whether `rest`, after a key that ends in a digit, starts another version number
/// (`gpt-5` + `.1`), which makes it another model; an 8-digit date (`-20250514`) does not.
fn another_version(key: &str, rest: &str) -> bool {
    if !key.ends_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let Some(after) = rest.strip_prefix(['-', '.']) else {
        return false;
    };
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let date = digits == 8 && after[digits..].chars().next().is_none_or(boundary);
    !date
}

/// Whether `value` holds `key` as whole words.
fn contains(value: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    value.match_indices(key).any(|(i, _)| {
        let before = value[..i].chars().next_back().is_none_or(boundary);
        let rest = &value[i + key.len()..];
        let after = rest.chars().next().is_none_or(boundary) && !another_version(key, rest);
        before && after
    })
}

fn matches(candidate: &str, model: &str, normal_model: &str) -> bool {
    if contains(model, candidate) || contains(candidate, model) {
        return true;
    }
    let normal = normalized(candidate);
    contains(normal_model, &normal) || contains(&normal, normal_model)
}

/// The entry of `table` for `model`, and its name there.
pub(super) fn find<'t, P>(table: &'t BTreeMap<String, P>, model: &str) -> Option<(&'t str, &'t P)> {
    if let Some((name, p)) = table.get_key_value(model) {
        return Some((name, p));
    }
    let normal_model = normalized(model);
    // The longest name wins; of two as long, the first in order.
    let mut best: Option<(&String, &P)> = None;
    for (name, p) in table {
        if matches(name, model, &normal_model) && best.is_none_or(|(b, _)| name.len() > b.len()) {
            best = Some((name, p));
        }
    }
    best.map(|(name, p)| (name.as_str(), p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str]) -> BTreeMap<String, ()> {
        names.iter().map(|n| (n.to_string(), ())).collect()
    }

    #[test]
    fn names_match_at_word_boundaries_and_the_longest_wins() {
        let t = table(&[
            "claude-sonnet-4",
            "claude-sonnet-4-5",
            "gpt-5",
            "gpt-5.1",
            "o3",
            "zai/glm-4.5-flash",
            "glm-4.5",
        ]);
        let name = |m: &str| find(&t, m).map(|(n, _)| n);
        assert_eq!(name("claude-sonnet-4-20250514"), Some("claude-sonnet-4"));
        assert_eq!(
            name("claude-sonnet-4-5-20250929"),
            Some("claude-sonnet-4-5")
        );
        assert_eq!(name("gpt-5.1"), Some("gpt-5.1"));
        assert_eq!(name("gpt-5.1-codex"), Some("gpt-5.1"));
        assert_eq!(name("gpt-5-codex"), Some("gpt-5"));
        assert_eq!(name("glm-4.5"), Some("glm-4.5"), "an exact name wins");
        assert_eq!(name("o3-mini"), Some("o3"));
        assert_eq!(name("llama3"), None);
        assert_eq!(name("go3"), None, "inside a word is no match");
    }
}
