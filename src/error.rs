//! Errors of the core, with a small code enum that a UI can branch on and a CLI can map to an
//! exit status. Messages are one line, meant for people.

use serde::Serialize;
use ts_rs::TS;

/// What kind of failure an [`Error`] is: what a UI branches on and a CLI maps to its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The runs directory is missing or unreadable.
    RunsDir,
    /// No run has that id (or the prefix given names none, or several).
    UnknownRun,
    /// The run has no result for that tool call id or value id (nor, for a peek, a value file).
    UnknownCall,
    /// A stub was asked for a result at or under the threshold.
    NotRetained,
    /// A peek request that cannot be answered (its message is what the model would get).
    Peek,
    /// A file could not be read.
    Io,
    /// An argument that can never be valid (a run id with a `/`, a bad duration...).
    Invalid,
    /// Something else holds what this needs (another garbage collection is running): nothing
    /// was done, and the same request can succeed later.
    Busy,
    /// Not allowed to this front end: a change asked of a read-only server, or what only the
    /// desktop app can do.
    Forbidden,
}

/// A failure of the core: its kind, and a one-line message for people.
#[derive(Debug, Clone, thiserror::Error, Serialize, TS)]
#[error("{message}")]
pub struct Error {
    /// What kind of failure it is.
    pub code: ErrorCode,
    /// What went wrong, in one line.
    pub message: String,
}

impl Error {
    /// An error of kind `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// An `io` error: what was being done (`what`), then the system's error.
    pub fn io(what: impl std::fmt::Display, e: &std::io::Error) -> Self {
        Self::new(ErrorCode::Io, format!("{what}: {e}"))
    }
}

/// The result of the core's fallible operations.
pub type Result<T> = std::result::Result<T, Error>;
