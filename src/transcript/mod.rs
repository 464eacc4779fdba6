//! Transcripts (spec A.3): envelopes, events and a tolerant line reader.

pub mod event;
pub mod reader;

pub use event::{Event, SCHEMA_VERSION};
pub use reader::{read_lines, Cursor, RawLine, ReadOutcome};
