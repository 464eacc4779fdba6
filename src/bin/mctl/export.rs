//! `mctl export RUN`: the run as a self-contained HTML page or Markdown, secrets redacted
//! unless `--no-redact`. To `--out FILE` (written whole, then renamed into place) or stdout;
//! what was redacted is said on stderr, or in `--json`.

use crate::cli::{ExportArgs, Format, Values};
use crate::output::{print_json, print_text};
use anyhow::Context;
use mission_control::export::{save, Export, ExportFormat, ExportOptions, ExportValues};
use mission_control::runs::RunsDir;
use serde::Serialize;

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
    let mut export = mission_control::export::export_run(&dir, &args.run, &opts)?;
    let bytes = export.bytes;
    let redacted = if opts.redact {
        format!("secrets redacted: {}", export.redactions.describe())
    } else {
        "secrets NOT redacted".into()
    };
    match &args.out {
        Some(out) => {
            save(out, &export.document).with_context(|| format!("writing {}", out.display()))?;
            export.document.clear();
            if json {
                print_json(&Exported {
                    export: &export,
                    out: Some(out.to_string_lossy().into_owned()),
                })
            } else {
                print_text(&format!(
                    "exported run {} to {} ({bytes} bytes); {redacted}\n",
                    export.run,
                    out.display()
                ))
            }
        }
        None if json => print_json(&Exported {
            export: &export,
            out: None,
        }),
        None => {
            eprintln!("mctl: {redacted}");
            print_text(&export.document)
        }
    }
}
