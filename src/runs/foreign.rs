//! Opening a result of another agent's store (`crate::sources`): the same doors as the
//! harness's results (access.rs), with that store's rule for each text.
//!
//! - The stub is the text the model got, verbatim: Claude Code's `<persisted-output>` block.
//!   Only a persisted result has one.
//! - The full text is the value file the stub names (a `.json` value shown as its text blocks),
//!   else the raw output the transcript still holds ("recovered from the transcript"), else the
//!   text the model got (a Codex output cut in place is all there is).

use super::layout::Layout;
use super::{ResultInfo, RetentionState};
use crate::retained::open::ValueText;
use crate::retained::{FileSource, Stub};
use crate::sources::{claude, SourceKind};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
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

/// The texts of one foreign result.
pub(crate) struct ForeignTexts {
    /// What the model got.
    pub seen: String,
    pub full: FullText,
}

impl ForeignTexts {
    /// The stub the model got, when it got one instead of the output.
    pub(crate) fn stub(&self, info: &ResultInfo) -> Option<Stub> {
        // The lines its preview shows are the first ones of the full text.
        info.stub_bytes
            .map(|_| crate::sources::claude::peeks::stub_of(&self.seen))
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

    /// The full text in memory.
    pub(crate) fn into_string(self) -> io::Result<String> {
        Ok(match self.full {
            FullText::File(path) => String::from_utf8_lossy(&std::fs::read(path)?).into_owned(),
            FullText::JsonFile(_, text) | FullText::Recovered(text) => text,
            FullText::Seen => self.seen,
        })
    }

    pub(crate) fn value_path(&self) -> Option<&Path> {
        match &self.full {
            FullText::File(p) | FullText::JsonFile(p, _) => Some(p),
            _ => None,
        }
    }
}

/// The value file of a foreign run's result: `<value id>.txt` (else `.json`) in the run's
/// `tool-results/`, else in its parent session's. Only a regular file there counts.
pub(crate) fn value_file(layout: &Layout, id: &str, value_id: &str) -> Option<PathBuf> {
    if layout.source != SourceKind::Claude || !crate::runs::layout::is_valid_run_id(value_id) {
        return None;
    }
    let files = layout.runs.get(id);
    let dirs = [
        layout.value_dir(id),
        files.and_then(|f| f.parent_values.as_deref()),
    ];
    for dir in dirs.into_iter().flatten() {
        // A `tool-results/` that is a link is never read through.
        if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        for ext in ["txt", "json"] {
            let path = dir.join(format!("{value_id}.{ext}"));
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                return Some(path);
            }
        }
    }
    None
}

/// The texts of result `info` of foreign run `id`.
pub(crate) fn texts(layout: &Layout, id: &str, info: &ResultInfo) -> io::Result<ForeignTexts> {
    let transcript = layout
        .runs
        .get(id)
        .and_then(|f| f.transcript.clone())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("run {id} has no transcript"),
            )
        })?;
    match layout.source {
        SourceKind::Claude => {
            let t = claude::result_texts(&transcript, info.offset, &info.tool_call_id)?;
            let retained = matches!(
                info.state,
                RetentionState::Retained | RetentionState::Damaged
            );
            let file = retained
                .then(|| value_file(layout, id, &info.value_id))
                .flatten();
            let full = match file {
                Some(p) if p.extension().is_some_and(|e| e == "json") => {
                    let text = claude::persisted::json_value_text(&std::fs::read(&p)?);
                    FullText::JsonFile(p, text)
                }
                Some(p) => FullText::File(p),
                None => match (t.raw.text, t.raw.complete) {
                    (Some(raw), true) if info.stub_bytes.is_some() => FullText::Recovered(raw),
                    _ => FullText::Seen,
                },
            };
            Ok(ForeignTexts { seen: t.seen, full })
        }
        SourceKind::Codex => Ok(ForeignTexts {
            seen: codex_output(&transcript, info.offset)?,
            full: FullText::Seen,
        }),
        SourceKind::Klide => Err(io::Error::other("a runs directory is not a foreign store")),
    }
}

/// The output on the rollout line at `offset` (of the decompressed text for a `.zst`).
fn codex_output(path: &Path, offset: u64) -> io::Result<String> {
    let mut line = Vec::new();
    let file = std::fs::File::open(path)?;
    if path.extension().is_some_and(|e| e == "zst") {
        let mut reader = BufReader::new(zstd::stream::read::Decoder::new(file)?);
        io::copy(&mut (&mut reader).take(offset), &mut io::sink())?;
        reader.read_until(b'\n', &mut line)?;
    } else {
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        BufReader::new(file).read_until(b'\n', &mut line)?;
    }
    crate::sources::codex::output_on_line(&line).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the line changed since it was read",
        )
    })
}
