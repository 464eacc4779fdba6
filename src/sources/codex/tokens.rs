//! Codex's `token_count` events as model calls' usage. Each event says the last call's tokens
//! (`last_token_usage`) and the thread's running totals (`total_token_usage`). The totals are
//! the agent's own count: some versions write an event twice, and a rollout resumed many times
//! says old totals again, so an event whose totals did not pass the largest seen is a repeat
//! and counts nothing, and a run's figures end at its last totals. Input tokens count the
//! cached ones; output tokens count the reasoning ones.
//!
//! An event's `info` is read into the fields below, not into a JSON value (a rollout holds an
//! event per model call, and building a value of each was most of the allocations of a cold
//! listing). The fields read as their values did: anything but an object holds no usage, a
//! figure absent or `null` is 0, one that is no count damages its event. The rest of `info` is
//! passed over as a line's other fields are, checked for JSON's syntax only (a number out of
//! range or a lone surrogate there no longer damages the line), and a key written twice
//! damages the line (see `sources/lax.rs`).

use crate::model::Usage;
use crate::sources::lax::{others_are_default, LaxStr, Object};
use serde::de::Visitor;
use serde::{Deserialize, Deserializer};
use std::fmt;

/// One reading of a usage object: input, cached input, output, reasoning.
type Reading = [u64; 4];

/// A `token_count` event's `info`.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
pub(super) struct Info<'a> {
    /// A usage object's figures: `None` when absent or not an object.
    total_token_usage: Object<Figures>,
    last_token_usage: Object<Figures>,
    #[serde(borrow)]
    model: LaxStr<'a>,
}

#[derive(Deserialize, Default, Debug)]
#[serde(default)]
struct Figures {
    input_tokens: Option<Figure>,
    cached_input_tokens: Option<Figure>,
    output_tokens: Option<Figure>,
    reasoning_output_tokens: Option<Figure>,
}

/// A figure as written (`null` reads as absent): a count, or anything else.
#[derive(Debug, Clone, Copy, Default)]
enum Figure {
    Count(u64),
    #[default]
    Damaged,
}

impl<'de> Deserialize<'de> for Figure {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Count;
        impl<'de> Visitor<'de> for Count {
            type Value = Figure;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E>(self, n: u64) -> Result<Figure, E> {
                Ok(Figure::Count(n))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Figure, E> {
                Ok(u64::try_from(n).map_or(Figure::Damaged, Figure::Count))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Figure, E> {
                Ok(Figure::Damaged)
            }
            others_are_default!(seq, map, str, bool, unit);
        }
        d.deserialize_any(Count)
    }
}

/// A usage object read: `Ok(None)` when there is none, `Err` when a figure is not a count (a
/// negative, a string): damage, never summed.
fn reading(v: &Object<Figures>) -> Result<Option<Reading>, Damaged> {
    let Some(f) = &v.0 else {
        return Ok(None);
    };
    let get = |figure: Option<Figure>| match figure {
        None => Ok(0),
        Some(Figure::Count(n)) => Ok(n),
        Some(Figure::Damaged) => Err(Damaged),
    };
    Ok(Some([
        get(f.input_tokens)?,
        get(f.cached_input_tokens)?,
        get(f.output_tokens)?,
        get(f.reasoning_output_tokens)?,
    ]))
}

/// A `token_count` event whose figures are not counts.
#[derive(Debug, PartialEq)]
pub(super) struct Damaged;

/// What the token events of one rollout have said so far.
#[derive(Default)]
pub(super) struct TokenCounts {
    /// The model of the current turn: its calls are priced by it.
    pub model: Option<String>,
    /// The largest totals said so far.
    last_total: Option<Reading>,
}

/// Input and output: how far a reading of the totals has come.
fn reach(r: &Reading) -> u64 {
    r[0].saturating_add(r[2])
}

impl TokenCounts {
    /// The usage of the call a `token_count` event's `info` reports, or `None` for a repeat
    /// (or an event with no figures).
    pub(super) fn count(&mut self, info: &Info<'_>) -> Result<Option<Usage>, Damaged> {
        let total = reading(&info.total_token_usage)?;
        let last = reading(&info.last_token_usage)?;
        let last = match total {
            // What the totals grew by (the last call's figures, when events are distinct).
            Some(now) => {
                let before = self.last_total.unwrap_or_default();
                if reach(&now) <= reach(&before) {
                    return Ok(None);
                }
                self.last_total = Some(now);
                let grown: Reading = std::array::from_fn(|i| now[i].saturating_sub(before[i]));
                // The last call's own figures say its reasoning, when they are what grew.
                last.filter(|l| reach(l) == reach(&grown)).unwrap_or(grown)
            }
            None => match last {
                Some(last) => last,
                None => return Ok(None),
            },
        };
        let model = info.model.owned().or_else(|| self.model.clone());
        let [input, cached, output, reasoning] = last;
        Ok(Some(Usage {
            prompt_tokens: Some(input),
            completion_tokens: Some(output),
            cache_write_tokens: Some(0),
            cache_read_tokens: Some(cached.min(input)),
            reasoning_tokens: Some(reasoning),
            model,
            ..Usage::default()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::lax::ObjectOr;

    /// Counts the event whose `info` is the JSON text `info`, read as a line's payload reads it.
    fn count(t: &mut TokenCounts, info: &str) -> Result<Option<Usage>, Damaged> {
        let info: ObjectOr<Info<'_>> = serde_json::from_str(info).expect(info);
        t.count(&info.0)
    }

    #[test]
    fn a_repeated_event_counts_once_and_totals_fill_in_a_missing_last() {
        let mut t = TokenCounts {
            model: Some("gpt-5-codex".into()),
            ..TokenCounts::default()
        };
        let first = r#"{"total_token_usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 10},
            "last_token_usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 10, "reasoning_output_tokens": 4}}"#;
        let u = count(&mut t, first).unwrap().unwrap();
        assert_eq!(
            (u.prompt_tokens, u.cache_read_tokens, u.reasoning_tokens),
            (Some(100), Some(60), Some(4))
        );
        assert_eq!(count(&mut t, first), Ok(None), "the same totals again");
        let grown = r#"{"total_token_usage": {"input_tokens": 250, "cached_input_tokens": 160, "output_tokens": 30}}"#;
        let u = count(&mut t, grown).unwrap().unwrap();
        assert_eq!(
            (u.prompt_tokens, u.cache_read_tokens, u.completion_tokens),
            (Some(150), Some(100), Some(20))
        );
        assert_eq!(count(&mut t, "null"), Ok(None));
        // A resumed rollout says its old totals again: nothing more was spent.
        assert_eq!(count(&mut t, first), Ok(None), "an old total replayed");
        let last = r#"{"last_token_usage": {"input_tokens": 7, "output_tokens": 1}}"#;
        let u = count(&mut t, last).unwrap().unwrap();
        assert_eq!(
            u.prompt_tokens,
            Some(7),
            "no totals: the last call's own figures"
        );
        let damaged = r#"{"last_token_usage": {"input_tokens": -7, "output_tokens": 1}}"#;
        assert_eq!(count(&mut t, damaged), Err(Damaged));
    }

    #[test]
    fn figures_read_as_their_json_values_did() {
        let mut t = TokenCounts::default();
        // No object, no usage: never damage.
        for info in [
            "5",
            r#""x""#,
            "[1]",
            r#"{"total_token_usage": 5, "last_token_usage": [1]}"#,
            r#"{"total_token_usage": null}"#,
            "{}",
        ] {
            assert_eq!(count(&mut t, info), Ok(None), "{info}");
        }
        // A figure absent or null is 0; a model named there prices the call.
        let info = r#"{"last_token_usage": {"input_tokens": 9, "output_tokens": null,
            "other": {"k": [1, "x"]}}, "model": "gpt-5", "rate_limits": null}"#;
        let u = count(&mut t, info).unwrap().unwrap();
        assert_eq!(
            (u.prompt_tokens, u.completion_tokens, u.model.as_deref()),
            (Some(9), Some(0), Some("gpt-5"))
        );
        // Anything but a count damages the event.
        for figure in ["-1", "1.5", "1e3", r#""7""#, "true", "[7]", r#"{"n": 7}"#] {
            let info = format!(r#"{{"last_token_usage": {{"input_tokens": {figure}}}}}"#);
            assert_eq!(count(&mut t, &info), Err(Damaged), "{figure}");
        }
    }
}
