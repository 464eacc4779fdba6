//! Codex's `token_count` events as model calls' usage. Each event says the last call's tokens
//! (`last_token_usage`) and the thread's running totals (`total_token_usage`). The totals are
//! the agent's own count: some versions write an event twice, and a rollout resumed many times
//! says old totals again, so an event whose totals did not pass the largest seen is a repeat
//! and counts nothing, and a run's figures end at its last totals. Input tokens count the
//! cached ones; output tokens count the reasoning ones.

use crate::model::Usage;
use serde_json::Value;

/// One reading of a usage object: input, cached input, output, reasoning.
type Reading = [u64; 4];

/// A usage object read: `Ok(None)` when there is none, `Err` when a figure is not a count (a
/// negative, a string): damage, never summed.
fn reading(v: Option<&Value>) -> Result<Option<Reading>, Damaged> {
    let Some(v) = v.and_then(Value::as_object) else {
        return Ok(None);
    };
    let get = |k: &str| match v.get(k) {
        None | Some(Value::Null) => Ok(0),
        Some(n) => n.as_u64().ok_or(Damaged),
    };
    Ok(Some([
        get("input_tokens")?,
        get("cached_input_tokens")?,
        get("output_tokens")?,
        get("reasoning_output_tokens")?,
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
    pub(super) fn count(&mut self, info: Option<&Value>) -> Result<Option<Usage>, Damaged> {
        let Some(info) = info else { return Ok(None) };
        let total = reading(info.get("total_token_usage"))?;
        let last = reading(info.get("last_token_usage"))?;
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
        let model = (info.get("model").and_then(Value::as_str))
            .map(str::to_owned)
            .or_else(|| self.model.clone());
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
    use serde_json::json;

    #[test]
    fn a_repeated_event_counts_once_and_totals_fill_in_a_missing_last() {
        let mut t = TokenCounts {
            model: Some("gpt-5-codex".into()),
            ..TokenCounts::default()
        };
        let first = json!({"total_token_usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 10},
            "last_token_usage": {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 10, "reasoning_output_tokens": 4}});
        let u = t.count(Some(&first)).unwrap().unwrap();
        assert_eq!(
            (u.prompt_tokens, u.cache_read_tokens, u.reasoning_tokens),
            (Some(100), Some(60), Some(4))
        );
        assert_eq!(t.count(Some(&first)), Ok(None), "the same totals again");
        let grown = json!({"total_token_usage": {"input_tokens": 250, "cached_input_tokens": 160, "output_tokens": 30}});
        let u = t.count(Some(&grown)).unwrap().unwrap();
        assert_eq!(
            (u.prompt_tokens, u.cache_read_tokens, u.completion_tokens),
            (Some(150), Some(100), Some(20))
        );
        assert_eq!(t.count(Some(&json!(null))), Ok(None));
        // A resumed rollout says its old totals again: nothing more was spent.
        assert_eq!(t.count(Some(&first)), Ok(None), "an old total replayed");
        let u = t
            .count(Some(
                &json!({"last_token_usage": {"input_tokens": 7, "output_tokens": 1}}),
            ))
            .unwrap()
            .unwrap();
        assert_eq!(
            u.prompt_tokens,
            Some(7),
            "no totals: the last call's own figures"
        );
        let damaged = json!({"last_token_usage": {"input_tokens": -7, "output_tokens": 1}});
        assert_eq!(t.count(Some(&damaged)), Err(Damaged));
    }
}
