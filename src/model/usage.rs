//! What a model call cost, as the harness records it on an assistant message (spec A.3).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Tokens and cost of one model call, as an assistant message records them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens of the prompt sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Tokens of the completion received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    /// Time the provider reports generating the completion, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_duration_ms: Option<f64>,
    /// Time the provider reports processing the prompt, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_eval_duration_ms: Option<f64>,
    /// Cost of the call in US dollars: as recorded, or estimated from the price table
    /// (`cost_estimated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Of the prompt tokens, those written to the prompt cache (when the store says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cache_write_tokens: Option<u64>,
    /// Of the cache writes, those kept for an hour (Anthropic prices them at twice the input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cache_write_1h_tokens: Option<u64>,
    /// Of the prompt tokens, those read from the prompt cache (when the store says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cache_read_tokens: Option<u64>,
    /// Of the completion tokens, those spent reasoning (when the store says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reasoning_tokens: Option<u64>,
    /// The model the call went to, when the store says per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    /// `cost_usd` is an estimate from the price table, not a recorded figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_estimated: Option<bool>,
}

/// One model's part of a run: the figures of the calls that went to it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// The model's name, as the store records it.
    pub model: String,
    /// All input, cached or not.
    pub input_tokens: u64,
    /// Of the input, the tokens read afresh (`None`: the store does not say).
    pub uncached_input_tokens: Option<u64>,
    /// Of the input, the tokens written to the prompt cache (`None`: the store does not say).
    pub cache_write_tokens: Option<u64>,
    /// Of the input, the tokens read from the prompt cache (`None`: the store does not say).
    pub cache_read_tokens: Option<u64>,
    /// All output, reasoning included.
    pub output_tokens: u64,
    /// Of the output, the reasoning tokens (`None`: the store does not say).
    pub reasoning_tokens: Option<u64>,
    /// What the calls cost (`None`: the model has no price and they record none).
    pub cost_usd: Option<f64>,
    /// Some of `cost_usd` is an estimate from the price table.
    pub cost_estimated: bool,
}

/// `93010 in (1010 fresh, 2000 cache write, 90000 cache read), 320 out (10 reasoning)`: a
/// run's tokens, with their parts only where the store says them.
pub fn tokens_text(r: &crate::model::Run) -> String {
    use std::fmt::Write as _;
    let mut out = format!("{} in", r.input_tokens);
    if let (Some(fresh), Some(write), Some(read)) = (
        r.uncached_input_tokens,
        r.cache_write_tokens,
        r.cache_read_tokens,
    ) {
        let _ = write!(
            out,
            " ({fresh} fresh, {write} cache write, {read} cache read)"
        );
    }
    let _ = write!(out, ", {} out", r.output_tokens);
    if let Some(reasoning) = r.reasoning_tokens {
        let _ = write!(out, " ({reasoning} reasoning)");
    }
    out
}

/// How long one model call took, as an assistant message records it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Timing {
    /// The whole call, in milliseconds.
    #[serde(default)]
    pub model_ms: Option<f64>,
    /// Time to the first token, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
}
