//! Retained values (spec Part B): value ids, the line model, the stub and peek. Each is one
//! pure function used by every caller: the CLI, the desktop app and GC.

pub mod lines;
pub mod open;
pub mod peek;
pub mod query;
pub mod source;
pub mod stub;
pub mod value_id;

pub use lines::{count_lines, LineIndex, LineSpan};
pub use peek::{
    peek, peek_source, peek_text, Peek, PeekError, PeekRequest, PEEK_MAX_BYTES, PEEK_MAX_LINES,
};
pub use source::{ByteSource, FileSource};
pub use stub::{stub_for, stub_from_source, stub_layout, Stub, STUB_MAX};
pub use value_id::{value_file_name, value_id, ValueIdPair};

/// Default retention threshold: a result longer than this many bytes is retained (spec B.1).
pub const DEFAULT_THRESHOLD: u64 = 20_480;
