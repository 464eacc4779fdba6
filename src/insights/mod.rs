//! What retention did to a run, told from its transcript: which lines of each value the model
//! was shown (its stub and its peeks) and which error-looking lines it never was
//! (`docs/insights.md`).

mod coverage;
mod errors;
mod peeks;

pub use coverage::{MissedErrors, PeekShown, ValueCoverage};
pub use errors::{ErrorPattern, DEFAULT_ERROR_PATTERN};
