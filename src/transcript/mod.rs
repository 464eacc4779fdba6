//! Transcripts (spec A.3): envelopes, events and a tolerant line reader. Only `runs` reads
//! transcripts; of their types, just an assistant message's usage and timing reach the API (in a
//! timeline event).

/// `static NAME`: a searcher for `bytes` in a line, built once (building one costs more than a
/// short line's search).
macro_rules! needle {
    ($name:ident, $bytes:expr) => {
        static $name: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($bytes));
    };
}
pub(crate) use needle;

pub(crate) mod borrowed;
pub(crate) mod event;
pub(crate) mod keys;
pub(crate) mod reader;
pub(crate) mod spans;
mod spied;
mod tally;

pub use event::{Timing, Usage};

pub use crate::retained::span::{BigString, SpanSource};
pub(crate) use event::SCHEMA_VERSION;
pub(crate) use reader::ReadOutcome;
pub(crate) use reader::{
    first_value, may_be_glued, read_lines, read_lines_from, read_lines_within, read_small_lines,
    read_transcript_line, read_transcript_lines, settled_tail, split_glued, Cursor, RawLine,
};
