//! `mctl export RUN`: the run as a self-contained HTML page or Markdown, secrets redacted
//! unless `--no-redact`. To `--out FILE` (written whole, then renamed into place) or stdout;
//! what was redacted is said on stderr, or in `--json`.

use crate::cli::{ExportArgs, Format, Values};
use crate::output::{print_json, print_text};
use mission_control::export::{
    export_to, save_to, Export, ExportFormat, ExportOptions, ExportValues,
};
use mission_control::runs::RunsDir;
use serde::Serialize;
use std::io::{self, Write};

/// `--json`: the export's figures, and the document itself only when it went nowhere else.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Exported<'a> {
    #[serde(flatten)]
    export: &'a Export,
    out: Option<String>,
}

pub fn run(dir: RunsDir, args: &ExportArgs, json: bool) -> anyhow::Result<()> {
    let opts = ExportOptions {
        format: match args.format {
            Format::Html => ExportFormat::Html,
            Format::Md => ExportFormat::Md,
        },
        values: match args.values {
            Values::Stub => ExportValues::Stub,
            Values::Full => ExportValues::Full,
            Values::None => ExportValues::None,
        },
        redact: !args.no_redact,
    };
    let redacted = |export: &Export| {
        if opts.redact {
            format!("secrets redacted: {}", export.redactions.describe())
        } else {
            "secrets NOT redacted".into()
        }
    };
    match &args.out {
        Some(out) => {
            let export = save_to(out, &dir, &args.run, &opts)?;
            if json {
                print_json(&Exported {
                    export: &export,
                    out: Some(out.to_string_lossy().into_owned()),
                })
            } else {
                print_text(&format!(
                    "exported run {} to {} ({} bytes); {}\n",
                    export.run,
                    out.display(),
                    export.bytes,
                    redacted(&export)
                ))
            }
        }
        None if json => print_with_document(&dir, &args.run, &opts),
        None => {
            let mut stdout = Pipe::new();
            let made = export_to(&dir, &args.run, &opts, &mut stdout);
            let export = stdout.done(made)?;
            eprintln!("mctl: {}", redacted(&export));
            Ok(())
        }
    }
}

/// `--json` with no `--out`: the figures and the document in one JSON object, the document
/// written into it as it is made. Its `bytes` come first, so the export is made once to count
/// them, then again into the object.
fn print_with_document(dir: &RunsDir, run: &str, opts: &ExportOptions) -> anyhow::Result<()> {
    let mut export = export_to(dir, run, opts, &mut io::sink())?;
    // A mark no run's text can hold (it is drawn now), where the document goes.
    let mark = format!(
        "mctl-document-{:016x}{:016x}",
        fastrand::u64(..),
        fastrand::u64(..)
    );
    export.document = mark.clone();
    let framed = serde_json::to_string_pretty(&Exported {
        export: &export,
        out: None,
    })?;
    let quoted = serde_json::to_string(&mark)?;
    let (head, tail) = framed
        .split_once(&quoted)
        .ok_or_else(|| anyhow::anyhow!("the document's place in the JSON was not found"))?;
    let mut stdout = Pipe::new();
    stdout.write_all(head.as_bytes())?;
    stdout.write_all(b"\"")?;
    let made = export_to(dir, run, opts, &mut JsonString(&mut stdout));
    stdout.done(made)?;
    stdout.write_all(b"\"")?;
    stdout.write_all(tail.as_bytes())?;
    stdout.write_all(b"\n")?;
    stdout.flush()?;
    Ok(())
}

/// Standard output, buffered, remembering why a write failed: a closed pipe (`| head`) ends
/// the command quietly, as every command's output does, rather than as an export error.
struct Pipe {
    out: io::BufWriter<io::StdoutLock<'static>>,
    failed: Option<io::ErrorKind>,
}

impl Pipe {
    fn new() -> Self {
        Self {
            out: io::BufWriter::with_capacity(1 << 16, io::stdout().lock()),
            failed: None,
        }
    }

    /// The export's answer, or the write error it stopped on as it was (a closed pipe
    /// included), then the output flushed.
    fn done<T>(&mut self, made: mission_control::Result<T>) -> anyhow::Result<T> {
        match (made, self.failed) {
            (Err(_), Some(kind)) => Err(io::Error::from(kind).into()),
            (made, _) => {
                let made = made?;
                self.flush()?;
                Ok(made)
            }
        }
    }
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out
            .write(buf)
            .inspect_err(|e| self.failed = Some(e.kind()))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out
            .flush()
            .inspect_err(|e| self.failed = Some(e.kind()))
    }
}

/// Writes the text written to it as the inside of a JSON string, as serde_json escapes it.
/// An export writes whole characters in each write (its pieces are `str`s).
struct JsonString<'a, W: Write>(&'a mut W);

impl<W: Write> Write for JsonString<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = std::str::from_utf8(buf).map_err(io::Error::other)?;
        let quoted = serde_json::to_string(text).map_err(io::Error::other)?;
        self.0.write_all(&quoted.as_bytes()[1..quoted.len() - 1])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}
