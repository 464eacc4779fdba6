//! The big outputs Gemini CLI keeps out of its model's context (docs/agents.md): the model gets
//! a stub that names the file the whole output was saved to. Three generations of stub, and the
//! masking of older outputs:
//!
//! - v0.5–v0.25: `Tool output was too large and has been truncated.` … `The full output has
//!   been saved to: <path>`, the file `<tmp>/<call id>.output`;
//! - v0.26–v0.28: `Output too large. Showing the last <n> of <total> lines… For full output
//!   see: <path>`, the file `<tmp>/tool_output/<tool>_<call id>.txt`;
//! - v0.29+: `Output too large. Showing first <h> and last <t> characters. For full output
//!   see: <path>`, the file in `<tmp>/tool-outputs/session-<id>/`;
//! - masking (v0.29+): `<tool_output_masked>` … `Full output available at: <path>`, the file
//!   holding the whole response object as JSON.

use regex::Regex;
use std::path::PathBuf;
use std::sync::LazyLock;

/// Where a stub says the whole output is.
static SAVED_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)(?:For full output see|The full output has been saved to|Full output available at): (\S[^\r\n]*?)\s*$",
    )
    .expect("valid regex")
});

/// How many lines a v0.26–v0.28 stub says the whole output had.
static STATED_LINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Output too large\. Showing the last [\d,]+ of ([\d,]+) lines")
        .expect("valid regex")
});

/// How a stub begins: the text the model got in place of the output.
const OPENINGS: [&str; 3] = [
    "Output too large. Showing ",
    "Tool output was too large and has been truncated.",
    "<tool_output_masked>",
];

/// A stub the model got for a saved output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SavedStub {
    /// The file the whole output was saved to.
    pub path: PathBuf,
    /// The file holds the response as JSON (a masked output), not the text.
    pub json: bool,
}

/// The saved output the text the model got names, when it is one of Gemini CLI's stubs.
pub(crate) fn saved_stub(seen: &str) -> Option<SavedStub> {
    let opening = seen.trim_start();
    if !OPENINGS.iter().any(|o| opening.starts_with(o)) {
        return None;
    }
    let path = SAVED_AT.captures(seen)?.get(1)?.as_str();
    Some(SavedStub {
        path: PathBuf::from(path),
        json: opening.starts_with("<tool_output_masked>"),
    })
}

/// The lines of the whole output, when the stub states them (v0.26–v0.28: `Showing the last
/// <n> of <total> lines`); the other generations state characters or nothing.
pub(crate) fn stated_lines(seen: &str) -> Option<u64> {
    let total = STATED_LINES.captures(seen.trim_start())?.get(1)?.as_str();
    total.replace(',', "").parse().ok()
}

/// The value id of a saved output: its file's name without the extension
/// (`run_shell_command_<call id>`), as GC lists the session's `tool-outputs/` folder.
pub(crate) fn value_id(stub: &SavedStub, call: &str) -> String {
    (stub.path.file_stem())
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(call)
        .to_owned()
}

/// The text of a saved output file's contents: a masked output's file is the response object
/// (its `output`, else its `error`); any other file is the text itself.
pub(crate) fn saved_text(contents: String, json: bool) -> String {
    if !json {
        return contents;
    }
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&contents) else {
        return contents;
    };
    (v.get("output").or_else(|| v.get("error")))
        .and_then(serde_json::Value::as_str)
        .map_or(contents, str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_generation_of_stub_names_its_file() {
        let new = "Output too large. Showing first 8,000 and last 32,000 characters. For full output see: /home/u/.gemini/tmp/p/tool-outputs/session-s1/run_shell_command-1.txt\nhead\n\n... [60,000 characters omitted] ...\n\ntail";
        assert_eq!(
            saved_stub(new).unwrap().path,
            PathBuf::from("/home/u/.gemini/tmp/p/tool-outputs/session-s1/run_shell_command-1.txt")
        );
        let mid = "Output too large. Showing the last 100 of 5,000 lines. For full output see: /tmp/g/tool_output/shell_c1.txt\n...\nlast";
        assert!(saved_stub(mid).is_some());
        assert_eq!(stated_lines(mid), Some(5000));
        assert_eq!(stated_lines(new), None);
        assert_eq!(value_id(&saved_stub(mid).unwrap(), "c1"), "shell_c1");
        let old = "Tool output was too large and has been truncated.\nThe full output has been saved to: /tmp/g/c1.output\nTo read it...";
        assert_eq!(
            saved_stub(old).unwrap().path,
            PathBuf::from("/tmp/g/c1.output")
        );
        let masked = "<tool_output_masked>\nhead\n\nOutput too large. Full output available at: /tmp/g/shell_c1_x.txt\n</tool_output_masked>";
        assert!(saved_stub(masked).unwrap().json);
        assert_eq!(
            saved_stub("ordinary output that says For full output see: x"),
            None
        );
        assert_eq!(
            saved_text(r#"{"output":"all of it"}"#.into(), true),
            "all of it"
        );
    }
}
