//! Error-looking lines: what a user scans a long output for first.

use crate::error::{Error, ErrorCode, Result};
use regex::Regex;

/// A line is error-looking when it matches this, case-insensitively (`--error-pattern`
/// replaces it).
pub const DEFAULT_ERROR_PATTERN: &str =
    r"\b(error|errors|panic|panicked|fatal|exception|traceback|failed|failure)\b";

/// The pattern error-looking lines match.
#[derive(Debug, Clone)]
pub struct ErrorPattern(Regex);

impl ErrorPattern {
    /// `pattern` as given (Rust regex syntax); `None` for the default, case-insensitively.
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        let source = match pattern {
            Some(p) => p.to_owned(),
            None => format!("(?i){DEFAULT_ERROR_PATTERN}"),
        };
        Regex::new(&source).map(Self).map_err(|e| {
            Error::new(
                ErrorCode::Invalid,
                format!("the error pattern is not a regular expression: {e}"),
            )
        })
    }

    /// Whether the pattern matches somewhere in `line`.
    pub fn matches(&self, line: &str) -> bool {
        self.0.is_match(line)
    }
}

impl Default for ErrorPattern {
    fn default() -> Self {
        Self::new(None).expect("the default pattern is valid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_in_any_case() {
        let p = ErrorPattern::default();
        for yes in [
            "ERROR: x",
            "thread panicked at",
            "Traceback (most",
            "2 tests failed",
            "Fatal",
        ] {
            assert!(p.matches(yes), "{yes}");
        }
        for no in ["errorless", "no problems", "failedover", "terrors"] {
            assert!(!p.matches(no), "{no}");
        }
        let custom = ErrorPattern::new(Some("^E[0-9]+")).unwrap();
        assert!(custom.matches("E0308 mismatched types") && !custom.matches("error"));
        assert!(ErrorPattern::new(Some("(")).is_err());
    }
}
