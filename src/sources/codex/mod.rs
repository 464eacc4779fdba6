//! Codex CLI's rollouts as runs. Codex keeps no full outputs: it cuts a big one in the middle,
//! in place, and the rollout keeps only that cut text. Read-only: there is nothing to collect.

mod fold;
mod items;
mod layout;
mod output_line;
mod reasoning;
mod search;
mod tokens;

pub(crate) use fold::{output_on_line, CodexFold};
pub(crate) use layout::{read as read_layout, rollout_id};

use crate::model::recorded::{transcript_of, FullText, RecordedTexts};
use crate::model::{Layout, ResultInfo, RunOptions};
use crate::sources::{Capabilities, Piece, Source, SourceInfo, SourceKind, StoreFold};
use crate::transcript::RawLine;
use serde_json::Value;
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Codex CLI's sessions directory.
pub(crate) struct Codex;

impl StoreFold for CodexFold {
    fn line(&mut self, into: &mut crate::fold::Analyzer, line: RawLine<'_>) {
        CodexFold::line(self, into, line)
    }
}

/// What the user and the app are told of this store.
static INFO: SourceInfo = SourceInfo {
    kind: SourceKind::Codex,
    label: Cow::Borrowed("Codex"),
    noun: Cow::Borrowed("Codex rollout"),
    mark: Cow::Borrowed("CX"),
    read_tool: Cow::Borrowed(""),
    color: Cow::Borrowed("#2a6fb4"),
    capabilities: Capabilities {
        retention_threshold: false,
        resume_replay: false,
        agent_sweep: false,
        value_files: false,
        flat_names: false,
    },
};

impl Source for Codex {
    fn info(&self) -> &'static SourceInfo {
        &INFO
    }

    fn read_layout(&self, root: &Path, _cache: Option<&Path>) -> io::Result<Layout> {
        read_layout(root)
    }

    fn fold(
        &self,
        _layout: &Layout,
        _id: &str,
        _opts: &RunOptions,
    ) -> io::Result<Option<Box<dyn StoreFold>>> {
        Ok(Some(Box::new(CodexFold::default())))
    }

    /// The cut text the model got is all there is.
    fn recorded_texts(
        &self,
        layout: &Layout,
        id: &str,
        info: &ResultInfo,
    ) -> Option<io::Result<RecordedTexts>> {
        let texts = transcript_of(layout, id).and_then(|t| {
            Ok(RecordedTexts {
                seen: output_at(&t, info.offset)?,
                stub: None,
                full: FullText::Seen,
            })
        });
        Some(texts)
    }

    /// A Codex model has no tool to read a cut output back.
    fn search_pieces<'v>(&self, line: &'v Value) -> Option<Vec<Piece<'v>>> {
        Some(search::pieces(line))
    }
}

/// The output on the rollout line at `offset` (of the decompressed text for a `.zst`).
fn output_at(path: &Path, offset: u64) -> io::Result<String> {
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
    output_on_line(crate::transcript::first_value(&line)).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the line changed since it was read",
        )
    })
}
