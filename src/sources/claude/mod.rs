//! Claude Code's sessions as runs (docs/agents.md): one run per session file, its subagents'
//! files and the side conversations inside an older session's file as runs under it, and each `<persisted-output>` result a value whose full text is the
//! file the stub names in the session's `tool-results/`.

mod content;
mod fold;
mod folders;
mod layout;
mod measured;
pub(crate) mod peeks;
pub(crate) mod persisted;
mod scan_cache;
mod source;
pub mod sweep;
pub(crate) mod threads;

pub(crate) use fold::{replacements_in, ClaudeFold};
pub(crate) use layout::{read as read_layout, SUBAGENTS, TOOL_RESULTS};
pub(crate) use scan_cache::forget as forget_scans;
pub(crate) use scan_cache::one_look;
pub(crate) use source::ClaudeCode;
pub use threads::SideKey;

use crate::model::values::{value_file_of, ValueFile};
use crate::transcript::{read_lines, Cursor};
use persisted::RawOutput;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

/// The value files of a `tool-results/` folder, by stem: regular `*.txt` and `*.json` files
/// directly inside (a `.txt` wins over a `.json` of the same stem). Links and folders are not
/// values here.
pub(crate) fn list_values(dir: &Path) -> io::Result<BTreeMap<String, ValueFile>> {
    let mut out: BTreeMap<String, ValueFile> = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type().is_ok_and(|k| k.is_file()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let (stem, json) = match (name.strip_suffix(".txt"), name.strip_suffix(".json")) {
            (Some(s), _) => (s, false),
            (_, Some(s)) => (s, true),
            _ => continue,
        };
        if stem.is_empty() || (json && out.contains_key(stem)) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        out.insert(stem.to_owned(), value_file_of(stem, entry.path(), &meta));
    }
    Ok(out)
}

/// Every `content-replacement` record of a session file from offset `from` (the start of a
/// line) on: what the model got instead of a result, by call id.
pub(crate) fn read_replacements(path: &Path, from: u64) -> io::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    // A file shorter than that now was rewritten: all of it is read.
    let from = if fs::metadata(path)?.len() < from {
        0
    } else {
        from
    };
    let at = Cursor {
        offset: from,
        lines: 0,
    };
    read_lines(path, at, |l| out.extend(replacements_in(l.bytes)))?;
    Ok(out)
}

/// What the transcript holds for one result: the text the model got and the raw output.
pub(crate) struct ResultTexts {
    pub seen: String,
    pub raw: RawOutput,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultLine<'a> {
    message: Option<ResultMessage>,
    #[serde(borrow)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ResultMessage {
    content: Option<serde_json::Value>,
}

/// The texts of result `call` on the line at `offset` of a session file.
pub(crate) fn result_texts(path: &Path, offset: u64, call: &str) -> io::Result<ResultTexts> {
    let changed = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the line changed since it was read",
        )
    };
    let mut file = fs::File::open(path)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut line = Vec::new();
    BufReader::new(file).read_until(b'\n', &mut line)?;
    // A value of a glued line is read up to its end, not the line's.
    let l: ResultLine<'_> =
        serde_json::from_slice(crate::transcript::first_value(&line)).map_err(|_| changed())?;
    let blocks = l.message.and_then(|m| m.content).ok_or_else(changed)?;
    let block = blocks
        .as_array()
        .and_then(|b| {
            b.iter()
                .find(|b| b.get("tool_use_id").and_then(|i| i.as_str()) == Some(call))
        })
        .ok_or_else(changed)?;
    let replaced = read_replacements(path, 0)?
        .into_iter()
        .rev()
        .find(|(id, _)| id == call)
        .map(|(_, stub)| stub);
    let content = block
        .get("content")
        .and_then(content::value_text)
        .unwrap_or_default();
    let raw = l
        .tool_use_result
        .map(persisted::raw_output)
        .unwrap_or_default();
    Ok(match replaced {
        Some(stub) => ResultTexts {
            seen: stub,
            raw: fold::replaced_output(content, raw),
        },
        None => ResultTexts { seen: content, raw },
    })
}
