//! A model call's tokens added to its run, with what it cost: the cost its store recorded,
//! else an estimate from the price table (`crate::prices`) for the call's model, else unknown,
//! which makes the run's cost unknown (never 0).

use super::Analyzer;
use crate::model::{ModelUsage, ProblemKind, Usage};
use crate::prices::{Price, Tokens};

/// More tokens than any model call spends (10^12): a figure past it is damage, not usage.
const ABSURD: u64 = 1_000_000_000_000;

impl Analyzer {
    /// Adds the usage of line `n` to the run's tokens and cost; returns the call's cost and
    /// whether it is an estimate (`None`: it records no cost and its model has no price). A
    /// usage with an absurd figure is left out with a warning, never summed.
    pub(super) fn count_usage(&mut self, n: u64, usage: &Usage) -> Option<(f64, bool)> {
        let figures = [
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cache_write_tokens,
            usage.cache_write_1h_tokens,
            usage.cache_read_tokens,
            usage.reasoning_tokens,
        ];
        let cost_absurd = usage.cost_usd.is_some_and(|c| !(0.0..1e9).contains(&c));
        if figures.iter().flatten().any(|f| *f > ABSURD) || cost_absurd {
            let msg = "a usage with figures no model call spends: left out of the run's tokens";
            self.problem(n, ProblemKind::BadUsage, msg.to_owned());
            return Some((0.0, false));
        }
        let t = Tokens::of(usage);
        let run = &mut self.run;
        let model = usage.model.as_deref().or(run.model.as_deref());
        let cost = match usage.cost_usd {
            Some(c) => Some((c, false)),
            None if t.is_empty() => Some((0.0, false)),
            None => (model.and_then(|m| price_of(&mut self.last_price, m)))
                .map(|price| (price.cost(&t), true)),
        };
        if let Some(model) = model.filter(|_| !t.is_empty()) {
            let at = match run.models.iter().position(|m| m.model == model) {
                Some(at) => at,
                None => {
                    run.models.push(ModelUsage {
                        model: model.to_owned(),
                        cost_usd: Some(0.0),
                        ..ModelUsage::default()
                    });
                    run.models.len() - 1
                }
            };
            let m = &mut run.models[at];
            add(sums!(m), usage, &t, cost);
        }
        add(sums!(run), usage, &t, cost);
        cost
    }
}

/// The price of `model` in the table in use (read once a process), looked up again only when
/// it is not the model `last` priced.
fn price_of(
    last: &mut Option<(String, Option<&'static Price>)>,
    model: &str,
) -> Option<&'static Price> {
    match last {
        Some((name, price)) if name == model => *price,
        _ => {
            let price = crate::prices::current().find(model).map(|(_, p)| p);
            *last = Some((model.to_owned(), price));
            price
        }
    }
}

/// The figures a usage adds to: a run's, or one model's in it.
struct Sums<'a> {
    input: &'a mut u64,
    uncached: &'a mut Option<u64>,
    write: &'a mut Option<u64>,
    read: &'a mut Option<u64>,
    output: &'a mut u64,
    reasoning: &'a mut Option<u64>,
    cost: &'a mut Option<f64>,
    estimated: &'a mut bool,
}

/// The [`Sums`] of a run or a model's usage: the same field names in both.
macro_rules! sums {
    ($x:expr) => {
        Sums {
            input: &mut $x.input_tokens,
            uncached: &mut $x.uncached_input_tokens,
            write: &mut $x.cache_write_tokens,
            read: &mut $x.cache_read_tokens,
            output: &mut $x.output_tokens,
            reasoning: &mut $x.reasoning_tokens,
            cost: &mut $x.cost_usd,
            estimated: &mut $x.cost_estimated,
        }
    };
}
use sums;

/// Adds one call (`usage`, split as `t`, costing `cost`) to `s`. Saturating: a hostile figure
/// must not wrap (or panic) the totals.
fn add(s: Sums<'_>, usage: &Usage, t: &Tokens, cost: Option<(f64, bool)>) {
    *s.input = s.input.saturating_add(t.input);
    *s.output = s.output.saturating_add(t.output);
    let plus =
        |total: &mut Option<u64>, n: u64| *total = Some(total.unwrap_or(0).saturating_add(n));
    if usage.cache_write_tokens.is_some() || usage.cache_read_tokens.is_some() {
        plus(s.uncached, t.uncached());
        plus(s.write, t.cache_write);
        plus(s.read, t.cache_read);
    }
    if let Some(r) = usage.reasoning_tokens {
        plus(s.reasoning, r);
    }
    match cost {
        Some((c, estimated)) => {
            *s.cost = s.cost.map(|total| total + c);
            *s.estimated |= estimated;
        }
        None => *s.cost = None,
    }
}

#[cfg(test)]
mod tests {
    /// The model last priced is priced from memory; any other is looked up: each call gets
    /// its own model's price, whatever the order the models come in.
    #[test]
    fn a_price_is_looked_up_again_for_another_model() {
        let table = crate::prices::current();
        let mut last = None;
        let models = [
            "gpt-5-codex",
            "gpt-5-codex",
            "claude-sonnet-4-5-20250929",
            "no-such-model",
            "no-such-model",
            "gpt-5-codex",
        ];
        for model in models {
            let want = table.find(model).map(|(_, p)| p as *const _);
            let got = super::price_of(&mut last, model).map(|p| p as *const _);
            assert_eq!(got, want, "{model}");
        }
        assert!(table.find("gpt-5-codex").is_some() && table.find("no-such-model").is_none());
    }
}
