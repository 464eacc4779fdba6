//! The pattern of a search, compiled once: ripgrep's own matcher (`grep-regex`), for a literal
//! or a Rust regex, line by line (a match never spans a `\n`).

use crate::error::{Error, ErrorCode, Result};
use grep_matcher::Matcher as _;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

/// How a pattern is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    pub text: String,
    pub regex: bool,
    pub ignore_case: bool,
}

/// A compiled pattern, with what tells a transcript line that cannot hold a match.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    pub inner: RegexMatcher,
    /// Set when a JSON line without this match (and without a `\u` escape) cannot hold a match
    /// in any of its decoded strings: a literal whose every byte JSON writes as itself.
    prefilter: bool,
    /// The pattern's bytes when it is a case-sensitive literal: what a query peek's own scan
    /// can look for in a line too long to hold.
    pub literal: Option<Vec<u8>>,
}

impl Matcher {
    pub(crate) fn new(p: &Pattern) -> Result<Self> {
        if p.text.is_empty() {
            return Err(Error::new(
                ErrorCode::Invalid,
                "the pattern is empty: it would match every line; give some text",
            ));
        }
        let mut b = RegexMatcherBuilder::new();
        // `^` and `$` at each line's ends (the searcher hands the matcher many lines at once).
        b.case_insensitive(p.ignore_case)
            .multi_line(true)
            .fixed_strings(!p.regex)
            .line_terminator(Some(b'\n'))
            .crlf(true);
        let inner = b
            .build(&p.text)
            .map_err(|e| invalid(&p.text, p.regex, &e.to_string()))?;
        // `"`, `\` and `/` may be written escaped, control characters always are: a literal
        // holding one cannot be looked for in the raw line.
        let plain = p
            .text
            .bytes()
            .all(|b| b >= 0x20 && b != b'"' && b != b'\\' && b != b'/');
        Ok(Self {
            inner,
            prefilter: !p.regex && plain,
            literal: (!p.regex && !p.ignore_case).then(|| p.text.as_bytes().to_vec()),
        })
    }

    /// The first match in `line`, as a byte range.
    pub(crate) fn find(&self, line: &[u8]) -> Option<(usize, usize)> {
        match self.inner.find(line) {
            Ok(Some(m)) => Some((m.start(), m.end())),
            _ => None,
        }
    }

    /// Whether the raw JSON `line` may hold a match in one of its strings: always, unless the
    /// prefilter proves it cannot (the literal is absent and nothing is `\u`-escaped).
    pub(crate) fn may_match_json(&self, line: &[u8]) -> bool {
        !self.prefilter || self.find(line).is_some() || memchr::memmem::find(line, b"\\u").is_some()
    }
}

/// A one-line error naming what is wrong with the pattern (a regex parse error spans several
/// lines, with a caret under the problem: its last line names the problem).
fn invalid(pattern: &str, regex: bool, detail: &str) -> Error {
    let problem = detail
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(detail)
        .trim_start_matches("error: ");
    let what = if regex { "regex" } else { "pattern" };
    let shown = serde_json::to_string(pattern).unwrap_or_default();
    Error::new(
        ErrorCode::Invalid,
        format!("invalid {what} {shown}: {problem}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(text: &str, regex: bool, ignore_case: bool) -> Pattern {
        Pattern {
            text: text.into(),
            regex,
            ignore_case,
        }
    }

    #[test]
    fn a_bad_regex_is_one_line_naming_the_problem() {
        let e = Matcher::new(&pat("a(b", true, false)).unwrap_err();
        assert!(!e.message.contains('\n'), "{}", e.message);
        assert!(e.message.contains("unclosed group"), "{}", e.message);
        assert!(
            e.message.starts_with("invalid regex \"a(b\""),
            "{}",
            e.message
        );
    }

    #[test]
    fn literals_are_literal_and_case_is_an_option() {
        let m = Matcher::new(&pat("a.b", false, false)).unwrap();
        assert_eq!(m.find(b"xa.b"), Some((1, 4)));
        assert_eq!(m.find(b"axb"), None);
        let m = Matcher::new(&pat("NEEDLE", false, true)).unwrap();
        assert_eq!(m.find(b"a needle"), Some((2, 8)));
        assert!(Matcher::new(&pat("", false, false)).is_err());
    }

    #[test]
    fn the_prefilter_never_drops_a_line_that_could_match() {
        let m = Matcher::new(&pat("héllo", false, false)).unwrap();
        assert!(!m.may_match_json(br#"{"text":"hello"}"#));
        assert!(m.may_match_json(br#"{"text":"h\u00e9llo"}"#));
        // A quote is written escaped: no prefilter.
        let m = Matcher::new(&pat("a\"b", false, false)).unwrap();
        assert!(m.may_match_json(br#"{"text":"nothing"}"#));
        let m = Matcher::new(&pat("x+", true, false)).unwrap();
        assert!(m.may_match_json(br#"{"text":"nothing"}"#));
    }
}
