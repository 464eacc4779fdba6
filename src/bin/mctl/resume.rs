//! `mctl resume RUN [--shape structured|text-fold] [--without-values]`: the messages resuming
//! the run now would replay.

use crate::cli::Shape;
use crate::human::{bytes, count, plurals};
use crate::output::{print_json, print_text};
use mission_control::insights::{ReplayShape, ResumePreview};
use mission_control::retained::{format_label, is_format_char};
use mission_control::runs::RunsDir;
use std::fmt::Write as _;

pub fn run(
    dir: RunsDir,
    run: &str,
    shape: Option<Shape>,
    without_values: bool,
    json: bool,
) -> anyhow::Result<()> {
    let shape = shape.map(|s| match s {
        Shape::Structured => ReplayShape::Structured,
        Shape::TextFold => ReplayShape::TextFold,
    });
    let preview = mission_control::insights::resume(&dir, run, shape, without_values)?;
    if json {
        print_json(&preview)
    } else {
        print_text(&text(&preview))
    }
}

/// Each message under a header line, its text as the provider gets it (control characters
/// other than newlines and tabs shown as `\u{..}`: transcript text is untrusted).
fn text(p: &ResumePreview) -> String {
    let mut out = String::new();
    let shape = match p.shape {
        ReplayShape::Structured => "structured",
        ReplayShape::TextFold => "text-fold",
    };
    let _ = writeln!(
        out,
        "{}, {} (~{} tokens), {shape} shape{}; {} stubbed",
        plurals(p.messages.len() as u64, "message"),
        bytes(p.bytes),
        count(p.estimated_tokens),
        if p.without_values {
            ", without value files"
        } else {
            ""
        },
        count(p.stubbed),
    );
    out.push_str(
        "(The harness may also rewrite old results in memory when the prompt outgrows its \
         window; the transcript does not record that, so it is not shown.)\n",
    );
    for m in &p.messages {
        let mut head = format!("── {} (line {})", m.role, m.line);
        if let Some(name) = &m.name {
            let _ = write!(head, " {}", safe(name));
        }
        if let Some(id) = &m.tool_call_id {
            let _ = write!(head, " #{}", safe(id));
        }
        for s in &m.stubs {
            let _ = write!(
                head,
                " [stub of #{}: {} instead of {}]",
                s.value_id,
                bytes(s.stub_bytes),
                bytes(s.full_bytes)
            );
        }
        let _ = writeln!(out, "\n{head}");
        out.push_str(&safe(&m.content));
        out.push('\n');
        for c in m.tool_calls.iter().flatten() {
            let _ = writeln!(
                out,
                "→ call {} {}({})",
                safe(&c.id),
                safe(&c.function.name),
                safe(&c.function.arguments)
            );
        }
        if let Some(images) = &m.images {
            let _ = writeln!(out, "+ {}", plurals(images.len() as u64, "image"));
        }
    }
    out
}

/// Transcript text for a terminal: newlines and tabs kept, other control characters as
/// `\u{..}`, invisible format characters (a right-to-left override) as their label.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c if is_format_char(c) => format_label(c),
            c => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_overrides_never_reach_the_terminal() {
        assert_eq!(
            safe("a\u{1b}[31mb\u{202E}c\nd"),
            "a\\u{1b}[31mb⟨U+202E⟩c\nd"
        );
    }
}
