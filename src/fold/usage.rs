//! A model call's tokens added to its run, with what it cost: the cost its store recorded,
//! else an estimate from the price table (`crate::prices`) for the call's model, else unknown,
//! which makes the run's cost unknown (never 0).

use super::Analyzer;
use crate::model::Usage;

impl Analyzer {
    /// Adds `usage` to the run's tokens and cost; returns the call's cost and whether it is an
    /// estimate (`None`: it records no cost and its model has no price).
    pub(super) fn count_usage(&mut self, usage: &Usage) -> Option<(f64, bool)> {
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
