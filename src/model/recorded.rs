//! What another agent's store recorded of a result: the same doors as the harness's results
//! (`crate::runs::access`), with that store's rule for each text, which its source gives
//! (`crate::sources::Source::recorded_texts`).
//!
//! - The stub is the text the model got, verbatim (Claude Code's `<persisted-output>` block).
//!   Only a persisted result has one.
//! - The full text is the value file the stub names (a `.json` value shown as its text blocks),
//!   else the raw output the transcript still holds ("recovered from the transcript"), else the
//!   text the model got (a Codex output cut in place is all there is).

use super::layout::Layout;
use crate::retained::open::ValueText;
use crate::retained::{FileSource, Stub};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a foreign result's full text was found.
pub(crate) enum FullText {
    /// A value file (`.txt`, read in place).
    File(PathBuf),
    /// A `.json` value file, shown as its text blocks.
    JsonFile(PathBuf, String),
    /// The raw output the transcript kept after the value file went.
    Recovered(String),
    /// The text the model got is all there is.
    Seen,
}

/// The texts a store recorded of one result.
pub(crate) struct RecordedTexts {
    /// What the model got.
    pub seen: String,
    /// The stub the model got instead of the output, read from `seen` by its store's rule;
    /// `None` when the model got the output itself (whole, or cut in place).
    pub stub: Option<Stub>,
    pub full: FullText,
}

impl RecordedTexts {
    /// The stub the model got, when it got one instead of the output.
    pub(crate) fn stub(&self) -> Option<Stub> {
        self.stub.clone()
    }

    /// The full text, to view or peek.
    pub(crate) fn value_text(self) -> io::Result<ValueText> {
        Ok(match self.full {
            FullText::File(path) => ValueText::File(FileSource::open(&path)?),
            FullText::JsonFile(_, text) | FullText::Recovered(text) => {
                ValueText::Memory(Arc::new(text))
            }
            FullText::Seen => ValueText::Memory(Arc::new(self.seen)),
        })
    }

    pub(crate) fn value_path(&self) -> Option<&Path> {
        match &self.full {
            FullText::File(p) | FullText::JsonFile(p, _) => Some(p),
            _ => None,
        }
    }
}

/// The transcript of run `id`, which a recorded result is read from.
pub(crate) fn transcript_of(layout: &Layout, id: &str) -> io::Result<PathBuf> {
    layout
        .runs
        .get(id)
        .and_then(|f| f.transcript.clone())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("run {id} has no transcript"),
            )
        })
}
