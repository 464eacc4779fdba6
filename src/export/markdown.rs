//! The Markdown export. Every verbatim text goes in a fence longer than any run of backticks
//! in it, so no text can close its fence and be read as Markdown or raw HTML; one-line values
//! (the title, headings, facts) have Markdown's and HTML's special characters escaped.

use super::doc::{Block, Doc};
use super::html::summary;
use super::stream::Ticks;
use super::{ExportOptions, Redactions};
use std::io::{self, Write};

pub(crate) fn render(
    doc: &Doc,
    redactions: &Redactions,
    opts: &ExportOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(out, "# {}\n", inline(&doc.title))?;
    for (label, value) in &doc.facts {
        writeln!(out, "- **{label}:** {}", inline(value))?;
    }
    writeln!(out, "\n> {}\n", inline(&summary(redactions, opts)))?;
    for item in &doc.items {
        writeln!(out, "## {} (line {})\n", inline(&item.heading), item.line)?;
        for block in &item.blocks {
            match block {
                Block::Text(t) => out.write_all(fenced("text", t).as_bytes())?,
                Block::Code { label, text } => {
                    writeln!(out, "*{}*\n", inline(label))?;
                    out.write_all(fenced("", text).as_bytes())?;
                }
                Block::Folded { summary, text } => {
                    writeln!(out, "*{}*\n", inline(summary))?;
                    let fence = fence(text.longest_ticks());
                    writeln!(out, "{fence}")?;
                    text.write_cleaned(opts.redact, &mut |piece| out.write_all(piece.as_bytes()))?;
                    writeln!(out, "\n{fence}\n")?;
                }
                Block::Note(n) => writeln!(out, "*{}*\n", inline(n))?,
            }
        }
    }
    writeln!(
        out,
        "---\n*Exported by Mission Control {}.*",
        env!("CARGO_PKG_VERSION")
    )
}

/// `text` in a fence of backticks one longer than its longest run of them (at least three).
fn fenced(info: &str, text: &str) -> String {
    let mut ticks = Ticks::default();
    ticks.feed(text);
    let fence = fence(ticks.longest);
    format!("{fence}{info}\n{text}\n{fence}\n\n")
}

/// A fence no text with runs of `longest` backticks can close.
fn fence(longest: usize) -> String {
    "`".repeat((longest + 1).max(3))
}

/// A one-line value: newlines as spaces, Markdown's and HTML's special characters escaped.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '.'
            | '!' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{fenced, inline};

    #[test]
    fn no_text_closes_its_fence() {
        let out = fenced("", "a ```` b\n```\n<script>");
        assert!(out.starts_with("`````\n"));
        assert!(out.ends_with("\n`````\n\n"));
    }

    #[test]
    fn one_line_values_are_inert() {
        assert_eq!(
            inline("# <b>x</b>\n[a](b)"),
            "\\# &lt;b&gt;x&lt;/b&gt; \\[a\\]\\(b\\)"
        );
    }
}
