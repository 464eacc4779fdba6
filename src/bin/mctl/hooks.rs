//! Durations the tests shorten. A build with the `test-hooks` feature takes each from its
//! `MCTL_TEST_…_MS` variable when set; a release build has no such hook and always answers the
//! default.

use std::time::Duration;

/// `default`, or the milliseconds `_variable` names in a build with the test hooks.
pub fn duration(_variable: &str, default: Duration) -> Duration {
    #[cfg(feature = "test-hooks")]
    if let Some(ms) = std::env::var(_variable).ok().and_then(|v| v.parse().ok()) {
        return Duration::from_millis(ms);
    }
    default
}
