//! Prices per model, to estimate what a model call cost when its store records tokens but no
//! cost (Claude Code, Codex). The table ships with the app (`prices.json`, built by
//! `scripts/prices.py` from LiteLLM's list, the one the usage tools read) and a user file
//! `prices.json` in the config directory overrides or adds models (docs/costs.md).
//!
//! A cost is priced as the usage tools price it, so the figures agree with theirs: each token
//! kind at its own rate (uncached input, cache write, cache read, output; reasoning is part of
//! the output), a model's name matched exactly, else to the longest table name it contains or
//! that contains it at word boundaries.

mod matching;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// USD per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rates {
    /// Input the model read afresh.
    pub input: f64,
    /// Output, reasoning included.
    pub output: f64,
    /// Input written to the prompt cache (the input rate when not given).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Input read from the prompt cache (the input rate when not given).
    #[serde(default)]
    pub cache_read: Option<f64>,
}

/// One model's prices, with its long-context tiers when it has them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Price {
    /// The rates of every call.
    #[serde(flatten)]
    pub base: Rates,
    /// Anthropic's tier: each kind's tokens past 200,000 in one call at these rates.
    #[serde(default, rename = "over200k")]
    pub over_200k: Option<Rates>,
    /// OpenAI's long context: a call whose input passes 272,000 tokens at these rates, whole.
    #[serde(default, rename = "over272k")]
    pub over_272k: Option<Rates>,
}

/// The tokens of one model call, split as they are priced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Every input token, cached or not.
    pub input: u64,
    /// Of the input, the tokens written to the prompt cache.
    pub cache_write: u64,
    /// Of the cache writes, those kept for an hour: twice the input rate (Anthropic's).
    pub cache_write_1h: u64,
    /// Of the input, the tokens read from the prompt cache.
    pub cache_read: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
}

impl Tokens {
    /// The tokens of a model call's usage, split as they are priced.
    pub fn of(u: &crate::model::Usage) -> Self {
        Self {
            input: u.prompt_tokens.unwrap_or(0),
            cache_write: u.cache_write_tokens.unwrap_or(0),
            cache_write_1h: u.cache_write_1h_tokens.unwrap_or(0),
            cache_read: u.cache_read_tokens.unwrap_or(0),
            output: u.completion_tokens.unwrap_or(0),
        }
    }

    /// Input tokens read afresh: neither written to nor read from the cache.
    pub fn uncached(&self) -> u64 {
        (self.input)
            .saturating_sub(self.cache_write)
            .saturating_sub(self.cache_read)
    }

    /// Nothing at all: a call that records no tokens costs nothing, priced or not.
    pub fn is_empty(&self) -> bool {
        self.input == 0 && self.output == 0
    }
}

const MILLION: f64 = 1_000_000.0;
const ANTHROPIC_TIER: u64 = 200_000;
const OPENAI_LONG_CONTEXT: u64 = 272_000;

impl Price {
    /// What `t` costs, in US dollars.
    pub fn cost(&self, t: &Tokens) -> f64 {
        if let Some(long) = self.over_272k.filter(|_| t.input > OPENAI_LONG_CONTEXT) {
            return at(&long, t);
        }
        let b = &self.base;
        let over = self.over_200k.as_ref();
        let tiered = |n: u64, base: f64, above: Option<f64>| match above {
            Some(above) if n > ANTHROPIC_TIER => {
                (ANTHROPIC_TIER as f64 * base + (n - ANTHROPIC_TIER) as f64 * above) / MILLION
            }
            _ => n as f64 * base / MILLION,
        };
        let hour = t.cache_write_1h.min(t.cache_write);
        tiered(t.uncached(), b.input, over.map(|o| o.input))
            + tiered(t.output, b.output, over.map(|o| o.output))
            + tiered(hour, 2.0 * b.input, over.map(|o| 2.0 * o.input))
            + tiered(
                t.cache_write - hour,
                b.cache_write.unwrap_or(b.input),
                over.map(|o| o.cache_write.unwrap_or(o.input)),
            )
            + tiered(
                t.cache_read,
                b.cache_read.unwrap_or(b.input),
                over.map(|o| o.cache_read.unwrap_or(o.input)),
            )
    }
}

/// Every token of `t` at rates `r`.
fn at(r: &Rates, t: &Tokens) -> f64 {
    (t.uncached() as f64 * r.input
        + t.output as f64 * r.output
        + t.cache_write as f64 * r.cache_write.unwrap_or(r.input)
        + t.cache_read as f64 * r.cache_read.unwrap_or(r.input))
        / MILLION
}

/// A price table: the shipped one, with a user's file over it.
#[derive(Debug, Clone, Deserialize)]
pub struct PriceTable {
    /// Where the prices come from.
    #[serde(default)]
    pub source: String,
    /// When they were taken.
    #[serde(default)]
    pub date: String,
    /// Prices by model name.
    pub models: BTreeMap<String, Price>,
    /// The user's file laid over the shipped table, when there is one.
    #[serde(skip)]
    pub user_file: Option<PathBuf>,
    /// Names in the user's file, which win over any match in the shipped table.
    #[serde(skip)]
    user_models: BTreeMap<String, Price>,
}

/// The table shipped with the app.
const SHIPPED: &str = include_str!("prices.json");

/// The user's file of prices: `prices.json` in the config directory.
pub fn user_file() -> Option<PathBuf> {
    crate::config::config_dir().map(|d| d.join("prices.json"))
}

impl PriceTable {
    /// The shipped table alone.
    pub fn shipped() -> Self {
        serde_json::from_str(SHIPPED).expect("the shipped price table is valid")
    }

    /// The shipped table with the user's file at `path` over it. A file that cannot be read as
    /// a price table is an error that says where and why; a missing one is no error.
    pub fn with_user_file(path: &Path) -> Result<Self, String> {
        let mut table = Self::shipped();
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(table),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let user: UserFile =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        table.user_models = user.models;
        table.user_file = Some(path.to_owned());
        Ok(table)
    }

    /// The price of `model` and the name it was found under: a user's name first (exact, then
    /// matched), then the shipped table's.
    pub fn find(&self, model: &str) -> Option<(&str, &Price)> {
        matching::find(&self.user_models, model).or_else(|| matching::find(&self.models, model))
    }

    /// A number that changes whenever a price does: what a run's figures were priced with.
    pub fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for (name, p) in self.user_models.iter().chain(&self.models) {
            name.hash(&mut h);
            format!("{p:?}").hash(&mut h);
        }
        h.finish()
    }
}

#[derive(Deserialize)]
struct UserFile {
    models: BTreeMap<String, Price>,
}

/// The table in use: the shipped one with the user's file over it, read once. A broken user
/// file is reported once on stderr and left out: the shipped prices still count.
pub fn current() -> &'static PriceTable {
    static TABLE: LazyLock<PriceTable> = LazyLock::new(|| {
        let Some(path) = user_file() else {
            return PriceTable::shipped();
        };
        PriceTable::with_user_file(&path).unwrap_or_else(|e| {
            tracing::warn!("price file left out: {e}");
            eprintln!("warning: price file left out: {e}");
            PriceTable::shipped()
        })
    });
    &TABLE
}

/// The fingerprint of the table in use, computed once: the index keeps a run's figures only
/// while the prices they were estimated with are the same.
pub fn current_fingerprint() -> u64 {
    static PRINT: LazyLock<u64> = LazyLock::new(|| current().fingerprint());
    *PRINT
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(model: &str) -> Price {
        PriceTable::shipped().find(model).unwrap().1.clone()
    }

    #[test]
    fn each_kind_of_token_has_its_rate() {
        // 10,000 input of which 8,000 cached, 500 output: $0.0085 on gpt-5-codex.
        let t = Tokens {
            input: 10_000,
            cache_read: 8_000,
            output: 500,
            ..Tokens::default()
        };
        assert!((price("gpt-5-codex").cost(&t) - 0.0085).abs() < 1e-12);
        let t = Tokens {
            input: 1_000 + 2_000 + 50_000,
            cache_write: 2_000,
            cache_read: 50_000,
            output: 300,
            ..Tokens::default()
        };
        // 1,000 × 3 + 2,000 × 3.75 + 50,000 × 0.3 + 300 × 15, per million.
        let want = (3_000.0 + 7_500.0 + 15_000.0 + 4_500.0) / MILLION;
        assert!((price("claude-sonnet-4-5-20250929").cost(&t) - want).abs() < 1e-12);
    }

    #[test]
    fn an_hours_cache_write_costs_twice_the_input() {
        let t = Tokens {
            input: 10_000,
            cache_write: 10_000,
            cache_write_1h: 4_000,
            ..Tokens::default()
        };
        let want = (4_000.0 * 6.0 + 6_000.0 * 3.75) / MILLION;
        assert!((price("claude-sonnet-4-5-20250929").cost(&t) - want).abs() < 1e-12);
    }

    #[test]
    fn long_contexts_are_priced_by_their_tier() {
        // Anthropic: only the tokens past 200,000 of a kind, in one call, at the higher rate.
        let reads = Tokens {
            input: 300_000,
            cache_read: 300_000,
            ..Tokens::default()
        };
        let want = (200_000.0 * 0.3 + 100_000.0 * 0.6) / MILLION;
        assert!((price("claude-sonnet-4-20250514").cost(&reads) - want).abs() < 1e-12);
        // OpenAI: a call whose input passes 272,000 tokens at the long rates, whole.
        let long = Tokens {
            input: 300_000,
            cache_read: 250_000,
            output: 1_000,
            ..Tokens::default()
        };
        let want = (50_000.0 * 10.0 + 250_000.0 * 1.0 + 1_000.0 * 45.0) / MILLION;
        assert!((price("gpt-5.5").cost(&long) - want).abs() < 1e-12);
    }

    #[test]
    fn a_users_file_wins_and_a_broken_one_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.json");
        std::fs::write(
            &path,
            r#"{"models": {"claude-sonnet-4-5": {"input": 1, "output": 2}, "my-llama": {"input": 0.5, "output": 0.5}}}"#,
        )
        .unwrap();
        let table = PriceTable::with_user_file(&path).unwrap();
        let (name, p) = table.find("claude-sonnet-4-5-20250929").unwrap();
        assert_eq!((name, p.base.input), ("claude-sonnet-4-5", 1.0));
        assert!(table.find("my-llama").is_some());
        assert_ne!(table.fingerprint(), PriceTable::shipped().fingerprint());
        std::fs::write(&path, r#"{"models": {"x": {"input": "free"}}}"#).unwrap();
        let e = PriceTable::with_user_file(&path).unwrap_err();
        assert!(e.contains("prices.json"), "{e}");
        let missing = PriceTable::with_user_file(&dir.path().join("none.json")).unwrap();
        assert!(missing.user_file.is_none());
    }
}
