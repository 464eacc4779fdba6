//! Exporting a run to share it (`mctl export`, the app's Export button): a self-contained HTML
//! page or a Markdown file with the run's figures and its timeline, tool cards, the stubs the
//! model saw and, on request, the full values folded. Secrets are redacted by default
//! ([`redact`]). Every text is untrusted: the HTML escapes it and forbids scripts and requests
//! with its own Content-Security-Policy; Markdown puts it in fences it cannot close
//! (`docs/export.md`).

mod doc;
mod html;
mod markdown;
pub mod redact;
mod stream;

use crate::error::Result;
use crate::runs::RunsDir;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use ts_rs::TS;

pub use redact::{Redactions, Redactor};

/// The kind of file an export makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// One HTML file: no script, no request, readable offline.
    Html,
    /// Markdown.
    Md,
}

impl ExportFormat {
    /// The file name extension of the format, without the dot (`html`, `md`).
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Html => "html",
            ExportFormat::Md => "md",
        }
    }
}

/// What of each tool result goes into an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ExportValues {
    /// What the model saw: a result at or under the threshold whole, a bigger one as its stub.
    Stub,
    /// The same, plus each bigger result's full text, folded.
    Full,
    /// No result text at all: each result's tool, size and state only.
    None,
}

/// How to export a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportOptions {
    /// The file to make.
    pub format: ExportFormat,
    /// What of each tool result goes in.
    pub values: ExportValues,
    /// Replace secrets with `[redacted: <kind>]` (the default).
    pub redact: bool,
}

/// An exported run: the document and what was redacted in it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    /// Id of the run exported.
    pub run: String,
    /// The format of the document.
    pub format: ExportFormat,
    /// What of each tool result went in.
    pub values: ExportValues,
    /// Whether secrets were redacted.
    pub redacted: bool,
    /// Secrets replaced, per kind.
    #[ts(type = "Record<string, number>")]
    pub redactions: Redactions,
    /// The document's size in bytes.
    #[ts(type = "number")]
    pub bytes: u64,
    /// The document; empty in a preview (`export_preview`), which gives only the figures.
    pub document: String,
    /// A file name to offer when saving it: from the run's title (see [`file_name`]).
    pub file_name: String,
}

/// A file name for an export of a run titled `title`: its first words, lowercased, letters and
/// digits joined by dashes (at most 60 characters, never a path, a dot file or a control
/// character), then the extension; the run's id when the title leaves nothing.
pub fn file_name(title: &str, run: &str, format: ExportFormat) -> String {
    let slug = |text: &str| {
        let mut out = String::new();
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let word: String = word.chars().flat_map(char::to_lowercase).collect();
            if out.chars().count() + word.chars().count() + 1 > 60 {
                break;
            }
            if !out.is_empty() {
                out.push('-');
            }
            out.push_str(&word);
        }
        out
    };
    let name = match slug(title) {
        s if s.is_empty() => slug(run),
        s => s,
    };
    let name = if name.is_empty() {
        "run".to_owned()
    } else {
        name
    };
    format!("{name}.{}", format.extension())
}

/// Run `run` exported as `opts` says, the document in memory (the app's export, whose
/// document goes back to its page). See [`export_to`] to write it as it is made.
pub fn export_run(dir: &RunsDir, run: &str, opts: &ExportOptions) -> Result<Export> {
    let mut document = Vec::new();
    let mut export = export_to(dir, run, opts, &mut document)?;
    export.document = String::from_utf8(document)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(export)
}

/// Run `run` exported as `opts` says, written to `out` as it is made: a full value goes from
/// its file to `out` a piece at a time, read twice (once to count its secrets, which the
/// document names before any value, and once to write it) and never held whole. The
/// [`Export`] returned has its figures and an empty `document`.
pub fn export_to(
    dir: &RunsDir,
    run: &str,
    opts: &ExportOptions,
    out: &mut dyn std::io::Write,
) -> Result<Export> {
    prepare(dir, run, opts)?.write_to(out)
}

/// An export ready to be written: what it shows, its full values still on disk, and the
/// secrets it redacts counted.
pub struct Prepared {
    doc: doc::Doc,
    redactions: Redactions,
    opts: ExportOptions,
}

/// Run `run` read for an export as `opts` says, each full value read once to count its
/// secrets (nothing of it kept): [`Prepared::write_to`] writes it.
pub fn prepare(dir: &RunsDir, run: &str, opts: &ExportOptions) -> Result<Prepared> {
    let mut redactor = Redactor::new(opts.redact);
    let mut doc = doc::build(dir, run, opts.values, &mut redactor)?;
    doc.tally(&mut redactor)?;
    Ok(Prepared {
        doc,
        redactions: redactor.counts,
        opts: *opts,
    })
}

impl Prepared {
    /// The file name to offer when saving it (see [`file_name`]).
    pub fn file_name(&self) -> String {
        file_name(&self.doc.title, &self.doc.run_id, self.opts.format)
    }

    /// Writes the document to `out` as it is made; its figures, with an empty `document`.
    pub fn write_to(&self, out: &mut dyn std::io::Write) -> Result<Export> {
        let (doc, opts) = (&self.doc, &self.opts);
        let mut counted = Counted { out, bytes: 0 };
        let written = match opts.format {
            ExportFormat::Html => html::render(doc, &self.redactions, opts, &mut counted),
            ExportFormat::Md => markdown::render(doc, &self.redactions, opts, &mut counted),
        };
        written
            .and_then(|()| counted.flush())
            .map_err(|e| crate::Error::io("writing the export", &e))?;
        Ok(Export {
            run: doc.run_id.clone(),
            format: opts.format,
            values: opts.values,
            redacted: opts.redact,
            redactions: self.redactions.clone(),
            bytes: counted.bytes,
            document: String::new(),
            file_name: self.file_name(),
        })
    }
}

/// A writer that counts what goes through it.
struct Counted<'a> {
    out: &'a mut dyn std::io::Write,
    bytes: u64,
}

impl std::io::Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Exports run `run` to `path` whole or not at all (the project's one atomic write: a
/// temporary file of its own beside it, written as the export is made, then renamed over
/// it), so that a reader never sees half an export and a failed one leaves what was there.
pub fn save_to(
    path: &std::path::Path,
    dir: &RunsDir,
    run: &str,
    opts: &ExportOptions,
) -> Result<Export> {
    // Read first: an unknown run or an unreadable value leaves nothing behind.
    let prepared = prepare(dir, run, opts)?;
    // A write that fails keeps the export's own error; the file's is the write's.
    let mut made: Option<Result<Export>> = None;
    let written = crate::config::write_atomic_with(path, |file| {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        let export = prepared.write_to(&mut out);
        let failed = export.is_err();
        made = Some(export);
        if failed {
            return Err(std::io::Error::other("the export failed"));
        }
        out.flush()
    });
    match (made, written) {
        (Some(Err(e)), _) => Err(e),
        (_, Err(e)) => Err(crate::Error::io(format!("writing {}", path.display()), &e)),
        (Some(Ok(export)), Ok(())) => Ok(export),
        (None, Ok(())) => unreachable!("the export is made before the file is renamed"),
    }
}

/// Writes an export to `path` whole or not at all (the project's one atomic write: a temporary
/// file of its own beside it, then renamed over it), so that a reader never sees half an
/// export and a failed write leaves what was there.
pub fn save(path: &std::path::Path, document: &str) -> std::io::Result<()> {
    crate::config::write_atomic(path, document.as_bytes())
}

/// `text` as an export shows it, with `redact` run in the middle: terminal escape sequences
/// removed first (so that no escape hides a key from the patterns), then the secrets replaced,
/// then every other control character (but newline and tab) and every invisible format
/// character shown as `⟨U+XXXX⟩`, so that what a reader sees is what the text holds.
pub(crate) fn visible(text: &str, redact: impl FnOnce(&str) -> String) -> String {
    let redacted = redact(&strip_escapes(text));
    let mut out = String::with_capacity(redacted.len());
    for c in redacted.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || crate::retained::is_format_char(c) {
            out.push_str(&crate::retained::format_label(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` without its terminal escape sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ...`
/// ended by BEL, `ESC \` or, when it is never ended, the line's end) and two-character ones.
/// A line ending `\r\n` ends `\n`. A lone ESC stays, to be shown as a mark.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    while let Some(c) = chars.next_if(|&c| c != '\n') {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next_if(|&c| c != '\n') {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                Some('@'..='_') => {
                    chars.next();
                }
                _ => out.push(c),
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::visible;

    fn shown(text: &str) -> String {
        visible(text, |t| super::Redactor::new(true).redact(t))
    }

    #[test]
    fn escapes_go_and_invisible_characters_show() {
        assert_eq!(shown("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(shown("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(shown("x\u{202e}y"), "x⟨U+202E⟩y");
        assert_eq!(shown("bell\u{7}\n\tok\r\n"), "bell⟨U+0007⟩\n\tok\n");
        // An escape never ended hides nothing past its line; a lone ESC is shown.
        assert_eq!(shown("a\u{1b}]8;;x\nnext"), "a\nnext");
        assert_eq!(shown("a\u{1b}1b"), "a⟨U+001B⟩1b");
    }

    /// A key in colour is still a key.
    #[test]
    fn escapes_are_removed_before_secrets_are_looked_for() {
        assert_eq!(
            shown("\u{1b}[32mAKIAIOSFODNN7EXAMPLE\u{1b}[0m"),
            "[redacted: aws-access-key]"
        );
    }
}
