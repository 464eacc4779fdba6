//! A model call's tokens added to its run, with what it cost: the cost its store recorded,
//! else an estimate from the price table (`crate::prices`) for the call's model, else unknown,
//! which makes the run's cost unknown (never 0).

use super::Analyzer;
use crate::model::{ProblemKind, Usage};

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
        let t = crate::prices::Tokens::of(usage);
        let run = &mut self.run;
        // Saturating: a hostile figure must not wrap (or panic) the totals.
        run.input_tokens = run.input_tokens.saturating_add(t.input);
        run.output_tokens = run.output_tokens.saturating_add(t.output);
        if usage.cache_write_tokens.is_some() || usage.cache_read_tokens.is_some() {
            let add = |total: &mut Option<u64>, n: u64| {
                *total = Some(total.unwrap_or(0).saturating_add(n));
            };
            add(&mut run.uncached_input_tokens, t.uncached());
            add(&mut run.cache_write_tokens, t.cache_write);
            add(&mut run.cache_read_tokens, t.cache_read);
        }
        if let Some(r) = usage.reasoning_tokens {
            run.reasoning_tokens = Some(run.reasoning_tokens.unwrap_or(0).saturating_add(r));
        }
        let model = usage.model.as_deref().or(run.model.as_deref());
        let cost = match usage.cost_usd {
            Some(c) => Some((c, false)),
            None if t.is_empty() => Some((0.0, false)),
            None => (model.and_then(|m| crate::prices::current().find(m)))
                .map(|(_, price)| (price.cost(&t), true)),
        };
        match cost {
            Some((c, estimated)) => {
                run.cost_usd = run.cost_usd.map(|total| total + c);
                run.cost_estimated |= estimated;
            }
            None => run.cost_usd = None,
        }
        cost
    }
}
