//! The harness's own runs directory (spec Parts A-C, docs/runs-dir.md): `<id>.jsonl`
//! transcripts of envelopes, `<id>.summary.json`, and `<id>.values/<value id>.txt` for each
//! result over the retention threshold. Its envelopes are the run model's own events, so the
//! analyzer folds them itself, and its stubs are made by the spec's rule from the full text.

mod folders;
mod layout;
mod peeks;

use crate::model::layout::{value_dir_name, RunPaths};
use crate::model::values::{list_value_files, ValueFile};
use crate::model::PeekCall;
use crate::model::{Layout, RunFiles, RunOptions};
use crate::sources::{Capabilities, Source, SourceInfo, SourceKind, StoreFold, ValueFolders};
use crate::transcript::{read_transcript_lines, split_glued, Cursor, RawLine, ReadOutcome};
use peeks::peek_calls;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The harness's runs directory.
pub(crate) struct Harness;

/// What the user and the app are told of this store.
static INFO: SourceInfo = SourceInfo {
    kind: SourceKind::Klide,
    label: Cow::Borrowed("harness runs"),
    noun: Cow::Borrowed("harness run"),
    mark: Cow::Borrowed("H"),
    read_tool: Cow::Borrowed("peek_value"),
    color: Cow::Borrowed(""),
    capabilities: Capabilities {
        retention_threshold: true,
        resume_replay: true,
        agent_sweep: false,
        value_files: true,
        flat_names: true,
    },
};

impl Source for Harness {
    fn info(&self) -> &'static SourceInfo {
        &INFO
    }

    fn envelopes(&self) -> bool {
        true
    }

    fn read_layout(&self, root: &Path, _cache: Option<&Path>) -> io::Result<Layout> {
        Layout::read(root)
    }

    /// A harness run's files are named from its id, and no run nests in another's folder.
    fn read_run_layout(
        &self,
        root: &Path,
        id: &str,
        _cache: Option<&Path>,
    ) -> io::Result<Option<Layout>> {
        Layout::read_one(root, id)
    }

    /// A transcript line holds its result's full text: a line over the bound is streamed, its
    /// big strings kept as spans of the file, so no result is held whole.
    fn read_records(
        &self,
        path: &Path,
        _run: &str,
        each: &mut dyn FnMut(RawLine<'_>),
    ) -> io::Result<ReadOutcome> {
        let mut each = |line: RawLine<'_>| split_glued(line, &mut &mut *each);
        read_transcript_lines(path, Cursor::default(), &mut each)
    }

    fn fold(
        &self,
        _layout: &Layout,
        _id: &str,
        _opts: &RunOptions,
    ) -> io::Result<Option<Box<dyn StoreFold>>> {
        Ok(None)
    }

    fn run_values(&self, layout: &Layout, id: &str) -> io::Result<BTreeMap<String, ValueFile>> {
        match layout.value_dir(id) {
            Some(dir) => list_value_files(dir),
            None => Ok(BTreeMap::new()),
        }
    }

    fn list_values(&self, dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
        list_value_files(dir)
    }

    fn value_file(&self, layout: &Layout, id: &str, call: &str) -> Option<PathBuf> {
        value_file_in(layout, id, call)
    }

    fn read_backs(
        &self,
        transcript: &Path,
        _run: &str,
        _files: &RunFiles,
    ) -> io::Result<Vec<PeekCall>> {
        peek_calls(transcript)
    }

    fn value_folders(&self, layout: &Layout) -> Box<dyn ValueFolders> {
        Box::new(folders::HarnessFolders {
            root: layout.root.clone(),
        })
    }

    fn value_folder_name(&self, id: &str) -> String {
        value_dir_name(id)
    }
}

/// The value file of `call` in run `id` of `layout`, if it is a regular file in a real value
/// directory.
fn value_file_in(layout: &Layout, id: &str, call: &str) -> Option<PathBuf> {
    layout.value_dir(id)?;
    let path = RunPaths::new(&layout.root, id).value_file(call);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() => Some(path),
        _ => None,
    }
}
