//! Claude Code's `<persisted-output>` stubs (docs/agents.md): where the stub says the full output
//! went, which file of the session's `tool-results/` that is, and what the transcript still
//! holds of the raw output.

use super::content::value_text;
use regex::Regex;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::path::{Component, Path};
use std::sync::LazyLock;

/// How Claude Code marks a result it persisted: the text the model got starts with this.
pub(crate) const STUB_PREFIX: &str = "<persisted-output>";

/// `Full output saved to: <path>` (and the older `Tool result saved to: <path>`).
static SAVED_TO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?:Full output|Tool result) saved to:\s*(.+?)\s*$").expect("valid regex")
});

/// `Output too large (141KB)`: the size the stub states.
static TOO_LARGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Output too large \(([0-9.]+)\s*(bytes|KB|MB|GB)\)").expect("valid regex")
});

/// A value file named by a stub: its stem and extension, in the `tool-results/` of `session`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub session: String,
    pub stem: String,
    pub json: bool,
}

/// The path a persisted result names: `toolUseResult.persistedOutputPath`, else the stub's
/// `saved to:` line.
pub(crate) fn saved_path(stub: &str, raw: Option<&RawOutput>) -> Option<String> {
    if let Some(p) = raw.and_then(|r| r.persisted_path.clone()) {
        return Some(p);
    }
    SAVED_TO
        .captures(stub)
        .map(|c| c[1].trim_end_matches('.').to_owned())
}

/// The file `path` names, when it lies in some session's `tool-results/` folder directly: only
/// its last three components count (`<session>/tool-results/<name>`), since the path is
/// absolute and tied to the machine that wrote it. Anything else is refused with the reason.
pub(crate) fn target_of(path: &str) -> Result<Target, String> {
    let parts: Vec<Component<'_>> = Path::new(path).components().collect();
    if parts
        .iter()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(format!("the stub's path {path} climbs out of its folder"));
    }
    let names: Vec<&str> = parts
        .iter()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let [.., session, folder, name] = names.as_slice() else {
        return Err(format!(
            "the stub's path {path} is not in a tool-results folder"
        ));
    };
    if *folder != "tool-results" {
        return Err(format!(
            "the stub's path {path} is not in a tool-results folder"
        ));
    }
    let (stem, json) = match (name.strip_suffix(".txt"), name.strip_suffix(".json")) {
        (Some(stem), _) => (stem, false),
        (_, Some(stem)) => (stem, true),
        _ => {
            return Err(format!(
                "the stub's path {path} names no .txt or .json file"
            ))
        }
    };
    if stem.is_empty() || stem.starts_with('.') {
        return Err(format!("the stub's path {path} names no value file"));
    }
    Ok(Target {
        session: (*session).to_owned(),
        stem: stem.to_owned(),
        json,
    })
}

/// The size a stub states, in bytes (`141KB` is 141 × 1024), when it states one.
pub(crate) fn stated_size(stub: &str) -> Option<u64> {
    let c = TOO_LARGE.captures(stub)?;
    let n: f64 = c[1].parse().ok()?;
    let unit = match &c[2] {
        "bytes" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        _ => 1024.0 * 1024.0 * 1024.0,
    };
    Some((n * unit).round() as u64)
}

/// What `toolUseResult` still holds of a tool's raw output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawOutput {
    pub text: Option<String>,
    /// Whether `text` is the whole output (Bash's `stdout` is only its start when the output was
    /// spooled to a task file, which `persistedOutputPath` says).
    pub complete: bool,
    /// Whether a value file should hold exactly `text` (or start with it): Bash's `stdout`, or a
    /// result whose content the transcript kept whole. Other tools' raw data need not be the
    /// text Claude Code persisted, so a file is never called damaged against it.
    pub comparable: bool,
    pub persisted_path: Option<String>,
    pub persisted_size: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUseResult {
    stdout: Option<String>,
    stderr: Option<String>,
    content: Option<serde_json::Value>,
    persisted_output_path: Option<String>,
    persisted_output_size: Option<u64>,
}

/// The raw output in a `toolUseResult`: a string, Bash's `stdout` (with no `stderr`), or a
/// tool's `content` (Grep's text, an MCP tool's blocks).
pub(crate) fn raw_output(raw: &RawValue) -> RawOutput {
    if let Ok(s) = serde_json::from_str::<String>(raw.get()) {
        return RawOutput {
            text: Some(s),
            complete: true,
            ..Default::default()
        };
    }
    let Ok(r) = serde_json::from_str::<ToolUseResult>(raw.get()) else {
        return RawOutput::default();
    };
    let spooled = r.persisted_output_path.is_some();
    let own_notes = r.stderr.as_deref().is_none_or(only_own_notes);
    // With a note on stderr, what Claude Code saved may hold it too: the output is recovered
    // from stdout, never compared with the file.
    let quiet = r.stderr.as_deref().is_none_or(str::is_empty);
    let (text, comparable) = match (r.stdout, own_notes, r.content) {
        (Some(out), true, _) => (Some(out), quiet),
        (Some(_), false, _) => (None, false),
        (None, _, Some(c)) => (value_text(&c), false),
        _ => (None, false),
    };
    RawOutput {
        complete: text.is_some() && !spooled,
        comparable,
        text,
        persisted_path: r.persisted_output_path,
        persisted_size: r.persisted_output_size,
    }
}

/// The notes Claude Code itself writes to a Bash call's `stderr`, which are no part of the
/// command's output: its `stdout` is still the whole output (docs/agents.md).
const OWN_NOTES: &[&str] = &["Shell cwd was reset to "];

/// Whether `stderr` holds nothing but Claude Code's own notes (or nothing at all).
fn only_own_notes(stderr: &str) -> bool {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| OWN_NOTES.iter().any(|n| l.trim_start().starts_with(n)))
}

/// The full text of a `.json` value: a pretty-printed array of content blocks, shown as its
/// text blocks joined. A file that is not such an array is shown as it is.
pub(crate) fn json_value_text(bytes: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v @ serde_json::Value::Array(_)) => value_text(&v).unwrap_or_default(),
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_path_is_taken_from_its_last_three_components_only() {
        let t =
            target_of("/home/ana/.claude/projects/-home-ana-app/9e0c/tool-results/toolu_01Q.txt")
                .unwrap();
        assert_eq!(
            (t.session.as_str(), t.stem.as_str(), t.json),
            ("9e0c", "toolu_01Q", false)
        );
        assert!(target_of("/x/s/tool-results/v.json").unwrap().json);
        for bad in [
            "/etc/passwd",
            "/x/s/tool-results/../../etc/passwd.txt",
            "/x/s/other/v.txt",
            "/x/s/tool-results/v.sh",
            "tool-results/v.txt",
        ] {
            assert!(target_of(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_stub_says_where_and_how_big() {
        let stub = "<persisted-output>\nOutput too large (61.2KB). Full output saved to: /a/s/tool-results/t.txt\n\nPreview (first 2KB):\nx\n</persisted-output>";
        assert_eq!(
            saved_path(stub, None).as_deref(),
            Some("/a/s/tool-results/t.txt")
        );
        assert_eq!(stated_size(stub), Some(62669));
        let raw = RawOutput {
            persisted_path: Some("/b/s/tool-results/bk3f.txt".into()),
            ..Default::default()
        };
        assert_eq!(
            saved_path(stub, Some(&raw)).as_deref(),
            Some("/b/s/tool-results/bk3f.txt")
        );
    }

    #[test]
    fn raw_outputs_are_read_by_tool_shape() {
        let raw = |s: &str| raw_output(&RawValue::from_string(s.to_owned()).unwrap());
        let bash = raw(r#"{"stdout":"all","stderr":"","interrupted":false}"#);
        assert_eq!(
            (bash.text.as_deref(), bash.complete, bash.comparable),
            (Some("all"), true, true)
        );
        let grep = raw(r#"{"mode":"content","content":"grep"}"#);
        assert!(
            grep.complete && !grep.comparable,
            "recoverable, never compared"
        );
        let spooled = raw(
            r#"{"stdout":"start","stderr":"","persistedOutputPath":"/p","persistedOutputSize":9}"#,
        );
        assert_eq!(
            (spooled.text.as_deref(), spooled.complete),
            (Some("start"), false)
        );
        assert_eq!(spooled.persisted_size, Some(9));
        assert_eq!(raw(r#"{"stdout":"o","stderr":"e"}"#).text, None);
        // Claude Code's own note on stderr is no part of the output: stdout is still all of it.
        let noted = raw(r#"{"stdout":"all","stderr":"Shell cwd was reset to /home/ana/app"}"#);
        assert_eq!((noted.text.as_deref(), noted.complete), (Some("all"), true));
        assert!(
            !noted.comparable,
            "the saved file may hold the note: never called damaged"
        );
        let mixed = r#"{"stdout":"o","stderr":"Shell cwd was reset to /x\nerror: boom"}"#;
        assert_eq!(raw(mixed).text, None, "anything else on stderr is refused");
        assert_eq!(
            raw(r#"{"mode":"content","content":"grep"}"#)
                .text
                .as_deref(),
            Some("grep")
        );
        assert_eq!(raw(r#""an error""#).text.as_deref(), Some("an error"));
        assert_eq!(raw(r#"{"filenames":[]}"#), RawOutput::default());
    }

    #[test]
    fn json_values_are_their_text_blocks() {
        let file = br#"[
  {"type": "text", "text": "one"},
  {"type": "image", "source": {}},
  {"type": "text", "text": "two"}
]"#;
        assert_eq!(json_value_text(file), "one\n[image]\ntwo");
        assert_eq!(json_value_text(b"not json"), "not json");
    }
}
