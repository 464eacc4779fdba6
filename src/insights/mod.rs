//! What retention did, told from the transcripts: which lines of each value the model was shown
//! (its stub and its peeks) and which error-looking lines it never was, what another threshold
//! would have done, and what a resume of a run sends (`docs/insights.md`).

mod coverage;
mod errors;
mod peeks;
mod resume;
mod whatif;

pub(crate) use coverage::SeenLines;
pub use coverage::{coverage, MissedErrors, PeekShown, ValueCoverage};
pub use errors::{ErrorPattern, DEFAULT_ERROR_PATTERN};
pub(crate) use peeks::PeekCall;
pub use resume::{
    resume, ProviderFunction, ProviderToolCall, ReplayShape, ResumeMessage, ResumePreview,
    StubbedResult,
};
pub use whatif::{bucket, result_sizes, what_if, what_if_runs, Bucket, Figures, WhatIf};
