//! The Markdown export. Every verbatim text goes in a fence longer than any run of backticks
//! in it, so no text can close its fence and be read as Markdown or raw HTML; one-line values
//! (the title, headings, facts) have Markdown's and HTML's special characters escaped.

use super::doc::{Block, Doc};
use super::html::summary;
use super::{ExportOptions, Redactions};
use std::fmt::Write;

pub(crate) fn render(doc: &Doc, redactions: &Redactions, opts: &ExportOptions) -> String {
    let mut out = String::with_capacity(4096 + doc.items.len() * 512);
    let _ = writeln!(out, "# {}\n", inline(&doc.title));
    for (label, value) in &doc.facts {
        let _ = writeln!(out, "- **{label}:** {}", inline(value));
    }
    let _ = writeln!(out, "\n> {}\n", inline(&summary(redactions, opts)));
    for item in &doc.items {
        let _ = writeln!(out, "## {} (line {})\n", inline(&item.heading), item.line);
        for block in &item.blocks {
            match block {
                Block::Text(t) => fenced(&mut out, "text", t),
                Block::Code { label, text } => {
                    let _ = writeln!(out, "*{}*\n", inline(label));
                    fenced(&mut out, "", text);
                }
                Block::Folded { summary, text } => {
                    let _ = writeln!(out, "*{}*\n", inline(summary));
                    fenced(&mut out, "", text);
                }
                Block::Note(n) => {
                    let _ = writeln!(out, "*{}*\n", inline(n));
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "---\n*Exported by Mission Control {}.*",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// `text` in a fence of backticks one longer than its longest run of them (at least three).
fn fenced(out: &mut String, info: &str, text: &str) {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let _ = writeln!(out, "{fence}{info}\n{text}\n{fence}\n");
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
        let mut out = String::new();
        fenced(&mut out, "", "a ```` b\n```\n<script>");
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
