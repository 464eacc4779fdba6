//! Errors of the core, with a small code enum that a UI can branch on and a CLI can map to an
//! exit status. Messages are one line, meant for people.

use serde::Serialize;
use ts_rs::TS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The runs directory is missing or unreadable.
    RunsDir,
    UnknownRun,
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

#[derive(Debug, Clone, thiserror::Error, Serialize, TS)]
#[error("{message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn io(what: impl std::fmt::Display, e: &std::io::Error) -> Self {
        Self::new(ErrorCode::Io, format!("{what}: {e}"))
    }
}

pub type Result<T> = std::result::Result<T, Error>;
