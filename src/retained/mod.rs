//! Retained values (spec Part B): value ids, the line model, the stub and peek. Each is one
//! pure function used by every caller: the CLI, the desktop app and GC.

mod format_chars;
pub(crate) mod json_measure;
pub(crate) mod json_string;
pub(crate) mod lines;
pub(crate) mod open;
pub(crate) mod peek;
pub(crate) mod query;
pub(crate) mod source;
pub(crate) mod span;
pub(crate) mod stub;
pub(crate) mod value_id;

pub use format_chars::{count_format_chars, format_label, is_format_char};
pub use lines::{LineIndex, LineSpan};
pub use open::{LinesPage, OpenValue, PageLine, ValueText, PAGE_LINE_MAX, PAGE_MAX_LINES};
pub use peek::{
    peek, peek_source, peek_text, Peek, PeekError, PeekRequest, PEEK_MAX_BYTES, PEEK_MAX_LINES,
};
pub use query::{scan_query_chunked, QueryHit, QueryScan};
pub use source::{read_elsewhere, ByteSource, ElsewhereSource, FileSource, OpenElsewhere};
pub use span::{BigString, SpanSource};
pub use stub::{stub_for, stub_from_source, stub_layout, Stub, STUB_MAX};
pub use value_id::{fnv1a32, value_id, ValueIdPair};

pub(crate) use lines::count_lines;
pub(crate) use value_id::value_file_name;

/// Default retention threshold: a result longer than this many bytes is retained (spec B.1).
pub const DEFAULT_THRESHOLD: u64 = 20_480;
