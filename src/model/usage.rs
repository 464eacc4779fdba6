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
    /// Cost of the call in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
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
