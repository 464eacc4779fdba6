//! The run model, at the bottom of the crate: what a run, its results, its timeline, its files
//! and their stamps are, whatever store they came from. It depends on nothing else in the crate
//! but `crate::retained`, the spec's pure functions on retained values; everything else is
//! built on it (docs/architecture.md).

pub(crate) mod family;
pub(crate) mod figures;
pub(crate) mod kind;
pub(crate) mod layout;
pub(crate) mod options;
pub(crate) mod peek_call;
pub(crate) mod recorded;
pub(crate) mod run;
pub(crate) mod stamp;
pub(crate) mod usage;
pub(crate) mod values;

pub use figures::{cost_text, duration_text};
pub use kind::SourceKind;
pub use layout::{Layout, LineStart, RunFiles, SideKey};
pub use options::{now_ms, RunOptions, Verify};
pub(crate) use peek_call::PeekCall;
pub use run::*;
pub use usage::{tokens_text, ModelUsage, Timing, Usage};
