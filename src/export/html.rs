//! The HTML export: one file, styles inline, no script and no request of any kind. Its own
//! Content-Security-Policy forbids both, so that even a text that escaped escaping could run
//! nothing; every text is escaped, inside elements that show it verbatim.

use super::doc::{Block, Doc};
use super::{ExportOptions, ExportValues, Redactions};
use std::io::{self, Write};

const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1000px; padding: 24px; color: #1b2330; background: #f6f7f9; }
h1 { font-size: 20px; margin: 0 0 8px; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; font-size: 13px; }
dl.facts dt { color: #64707f; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.banner { padding: 8px 12px; border-left: 3px solid #a86200; background: #fff7e8; margin: 12px 0; font-size: 13px; }
article { background: #fff; border: 1px solid #dfe3e8; border-left: 3px solid #dfe3e8; border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
article.user { border-left-color: #0b7fc7; } article.assistant { border-left-color: #6d4fc2; }
article.tool, article.result { border-left-color: #1a7f45; } article.error { border-left-color: #c0392b; }
article header { display: flex; gap: 8px; align-items: baseline; font-weight: 600; overflow-wrap: anywhere; }
article header .line { color: #64707f; font-weight: 400; font-size: 12px; margin-left: auto; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 6px 0; }
.note { color: #64707f; font-size: 12px; margin: 4px 0; }
.label { color: #64707f; font-size: 12px; margin: 6px 0 2px; }
pre { background: #f0f2f5; padding: 8px; border-radius: 4px; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.4 ui-monospace, monospace; margin: 0; }
details { margin: 6px 0; } summary { cursor: pointer; color: #0b7fc7; font-size: 12px; }
footer.doc { color: #64707f; font-size: 12px; margin-top: 24px; }
";

pub(crate) fn render(
    doc: &Doc,
    redactions: &Redactions,
    opts: &ExportOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    out.write_all(b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")?;
    writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
    )?;
    out.write_all(b"<meta name=\"referrer\" content=\"no-referrer\">\n")?;
    out.write_all(b"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")?;
    writeln!(out, "<title>{}</title>", esc(&doc.title))?;
    writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>")?;
    writeln!(out, "<h1>{}</h1>", esc(&doc.title))?;
    out.write_all(b"<dl class=\"facts\">\n")?;
    for (label, value) in &doc.facts {
        writeln!(out, "<dt>{label}</dt><dd>{}</dd>", esc(value))?;
    }
    out.write_all(b"</dl>\n")?;
    writeln!(
        out,
        "<p class=\"banner\" data-redactions=\"{}\">{}</p>",
        redactions.total(),
        esc(&summary(redactions, opts))
    )?;
    for item in &doc.items {
        writeln!(
            out,
            "<article class=\"{}\" data-type=\"{}\" id=\"line-{}\">",
            item.class,
            esc(&item.kind),
            item.line
        )?;
        writeln!(
            out,
            "<header><span>{}</span><span class=\"line\">line {}</span></header>",
            esc(&item.heading),
            item.line
        )?;
        for block in &item.blocks {
            match block {
                Block::Text(t) => writeln!(out, "<div class=\"text\">{}</div>", esc(t))?,
                Block::Code { label, text } => writeln!(
                    out,
                    "<p class=\"label\">{}</p><pre>\n{}</pre>",
                    esc(label),
                    esc(text)
                )?,
                Block::Folded { summary, text } => {
                    writeln!(out, "<details><summary>{}</summary><pre>", esc(summary))?;
                    text.write_cleaned(opts.redact, &mut |piece| {
                        out.write_all(esc(piece).as_bytes())
                    })?;
                    out.write_all(b"</pre></details>\n")?;
                }
                Block::Note(n) => writeln!(out, "<p class=\"note\">{}</p>", esc(n))?,
            }
        }
        out.write_all(b"</article>\n")?;
    }
    writeln!(
        out,
        "<footer class=\"doc\">Exported by Mission Control {}.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION")
    )
}

/// What the reader is told first: what was redacted, and which values are in the file.
pub(crate) fn summary(redactions: &Redactions, opts: &ExportOptions) -> String {
    let secrets = if !opts.redact {
        "Secrets were NOT redacted: this file may hold keys and passwords.".to_owned()
    } else if redactions.total() == 0 {
        "Secrets redacted: none found.".to_owned()
    } else {
        format!("Secrets redacted: {}.", redactions.describe())
    };
    let values = match opts.values {
        ExportValues::Stub => "Results as the model saw them: stubs for retained values.",
        ExportValues::Full => {
            "Results as the model saw them, and each retained value in full, folded."
        }
        ExportValues::None => "Results are left out: only their sizes and states.",
    };
    format!("{secrets} {values}")
}

/// Escapes text for element content and attribute values alike.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
