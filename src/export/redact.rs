//! Secrets taken out of a run before it is shared: API keys and tokens of the usual shapes,
//! private key blocks, and the values of `password=`/`token=` style assignments in URLs and env
//! lines, each replaced by `[redacted: <kind>]` and counted per kind (`docs/export.md`).
//!
//! The shapes follow the rules of gitleaks' maintained configuration (the provider prefixes and
//! lengths vendors document); no maintained Rust crate carries such a set. A shape is anchored
//! on its vendor prefix and minimum length, so prose, commit hashes and UUIDs are left alone.

use regex::Regex;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;
use ts_rs::TS;

/// One kind of secret and the pattern that finds it. When the pattern has a group named
/// `secret`, only that group is replaced (the key of an assignment stays readable).
struct Rule {
    kind: &'static str,
    pattern: Regex,
    /// Whether a found secret is one (`usage tokens: 1234567` is a count, not a token).
    accept: fn(&str) -> bool,
}

/// Most specific first: `sk-ant-` is an Anthropic key before it is an `sk-` key, a JWT inside a
/// `token=` assignment is named a JWT.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    // Word boundaries are ASCII's: a key is ASCII, and a key written against a letter of another
    // script is still a key. (Unicode's boundaries would also make the regex engine give up its
    // fast automaton on any text that is not ASCII, and scan a big value many times slower.)
    let rule = |kind, pattern: &str| Rule {
        kind,
        pattern: Regex::new(&pattern.replace(r"\b", r"(?-u:\b)")).expect("a valid secret pattern"),
        accept: |_| true,
    };
    vec![
        rule(
            PRIVATE_KEY,
            // To its END line, or to the end of a text cut before it.
            &format!(r"(?s){KEY_BEGIN}.*?(?:{KEY_END}|\z)"),
        ),
        rule(
            "aws-access-key",
            r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        ),
        rule(
            "github-token",
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b",
        ),
        rule("github-token", r"\bgithub_pat_[A-Za-z0-9_]{82}\b"),
        rule(
            "gitlab-token",
            r"\bgl(?:pat|ptt|dt|rt|soat|ft)-[A-Za-z0-9_-]{20,}",
        ),
        rule(
            "slack-token",
            r"\bxox[abposre]-(?:[0-9]+-)*[A-Za-z0-9-]{10,}",
        ),
        rule(
            "slack-webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
        ),
        Rule {
            accept: has_digit,
            ..rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{32,}")
        },
        // A word like `sk-learn-compatible-estimators` is no key: keys hold digits.
        Rule {
            accept: has_digit,
            ..rule(
                "openai-key",
                r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}",
            )
        },
        rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
        rule(
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
        ),
        // user:password@ in a URL: the password only.
        rule(
            "password",
            r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s/:@?#]{1,100}:(?P<secret>[^\s/@?#]{1,200})@",
        ),
        // KEY=value and key: value, in env lines, URL queries, configs (JSON's escaped quotes
        // too): the value only, when it is a literal of 6 characters or more that ends where a
        // value ends, not `$VAR`, `${...}`, `<...>`, a call or an index.
        Rule {
            accept: literal_secret,
            ..rule(
                "secret-assignment",
                r#"(?i)\b[a-z0-9_.-]{0,40}(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|credentials?)[a-z0-9_]{0,20}(?:\\?["'])?\s{0,3}[=:]\s{0,3}(?:\\?["'])?(?P<secret>[^\s"'&,;$<{()\[\]\\][^\s"'&,;()\[\]{}\\]{5,})(?:[\s"'&,;}\\]|$)"#,
            )
        },
    ]
});

/// The lines that open and close a private key block.
const KEY_BEGIN: &str = r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----";
const KEY_END: &str = r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----";
const PRIVATE_KEY: &str = "private-key";
const REPLACED_KEY: &str = "[redacted: private-key]";

static KEY_BEGIN_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(KEY_BEGIN).expect("a valid pattern"));
static KEY_END_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(KEY_END).expect("a valid pattern"));

fn has_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
}

/// An assigned value that can be a secret: not a count (`tokens: 1234567`), not a word such as
/// a type (`token: String`, `tokenizer: BertTokenizer`) since secrets hold digits or symbols,
/// and not a URL (its password, if any, is the `password` rule's).
fn literal_secret(value: &str) -> bool {
    let digits = value.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let word = value.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    !digits && !word && !value.contains("://")
}

/// How many secrets of each kind were redacted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
pub struct Redactions(pub BTreeMap<String, u64>);

impl Redactions {
    /// Secrets redacted, of every kind.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// `2 aws-access-key, 1 jwt`, or `none`.
    pub fn describe(&self) -> String {
        if self.0.is_empty() {
            return "none".into();
        }
        let parts: Vec<String> = self.0.iter().map(|(k, n)| format!("{n} {k}")).collect();
        parts.join(", ")
    }
}

/// Redacts a text, counting what it replaced; `enabled: false` passes every text through.
#[derive(Debug, Default)]
pub struct Redactor {
    enabled: bool,
    /// What was redacted so far, per kind.
    pub counts: Redactions,
}

impl Redactor {
    /// A redactor; `enabled: false` makes it pass every text through.
    pub fn new(enabled: bool) -> Self {
        Redactor {
            enabled,
            counts: Redactions::default(),
        }
    }

    /// Whether it replaces anything.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// `text` with every secret replaced by `[redacted: <kind>]`.
    pub fn redact(&mut self, text: &str) -> String {
        if !self.enabled {
            return text.to_owned();
        }
        let mut out = text.to_owned();
        for rule in RULES.iter() {
            let (next, n) = replace(rule, &out);
            if n > 0 {
                *self.counts.0.entry(rule.kind.to_owned()).or_default() += n;
                out = next;
            }
        }
        out
    }
}

/// A text read a piece at a time, redacted as [`Redactor::redact`] redacts it whole. Every
/// rule but one matches within a line, and pieces end at line ends where no `key = value`
/// can span them (`super::stream`); the one rule that spans lines, a private key block, is
/// followed across pieces here: a block begun in one piece is redacted up to its END line in a
/// later one, or to the end of the text.
#[derive(Debug, Default)]
pub(crate) struct PieceRedactor {
    /// Inside a private key block whose END line is still to come.
    in_key: bool,
}

impl PieceRedactor {
    /// The next piece of the text, redacted.
    pub(crate) fn redact(&mut self, r: &mut Redactor, piece: &str) -> String {
        if !r.enabled {
            return piece.to_owned();
        }
        let mut rest = piece;
        if self.in_key {
            // Taken with the block's start, in an earlier piece.
            let Some(end) = KEY_END_RE.find(rest) else {
                return String::new();
            };
            rest = &rest[end.end()..];
            self.in_key = false;
        }
        let Some(open) = open_block(rest) else {
            return r.redact(rest);
        };
        // Whole, the block is replaced first and the other rules see the text before it
        // followed by the replacement: so they see it here (a value cannot end where the
        // replacement's `[` begins, though it could end where the piece does).
        let replaced = format!("{}{REPLACED_KEY}", &rest[..open]);
        let out = r.redact(&replaced);
        self.in_key = true;
        *r.counts.0.entry(PRIVATE_KEY.to_owned()).or_default() += 1;
        out
    }
}

/// Where the private key block that `text` leaves open starts: the rule matches a BEGIN line
/// to the first END line after it, then looks for the next BEGIN after that END; a BEGIN with
/// no END after it runs to the end of the text.
fn open_block(text: &str) -> Option<usize> {
    let mut at = 0;
    while let Some(begin) = KEY_BEGIN_RE.find_at(text, at) {
        match KEY_END_RE.find_at(text, begin.end()) {
            Some(end) => at = end.end(),
            None => return Some(begin.start()),
        }
    }
    None
}

/// `text` with each match of the rule (its `secret` group when it has one) replaced; how many.
/// A value already replaced (a JWT inside a `token=`) starts with `[`, which no rule takes.
fn replace(rule: &Rule, text: &str) -> (String, u64) {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut n = 0;
    for caps in rule.pattern.captures_iter(text) {
        let Some(m) = caps.name("secret").or_else(|| caps.get(0)) else {
            continue;
        };
        if !(rule.accept)(m.as_str()) {
            continue;
        }
        out.push_str(&text[last..m.start()]);
        out.push_str("[redacted: ");
        out.push_str(rule.kind);
        out.push(']');
        last = m.end();
        n += 1;
    }
    if n == 0 {
        return (String::new(), 0);
    }
    out.push_str(&text[last..]);
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::Redactor;

    fn redact(text: &str) -> (String, String) {
        let mut r = Redactor::new(true);
        let out = r.redact(text);
        (out, r.counts.describe())
    }

    /// Each kind, in a sentence of its own, leaves the sentence and names its kind.
    #[test]
    fn each_secret_kind_is_replaced_and_counted() {
        let cases = [
            ("aws-access-key", "key AKIAIOSFODNN7EXAMPLE here"),
            ("github-token", "ghp_0123456789abcdefghijABCDEFGHIJ012345 pushed"),
            ("github-token", &format!("github_pat_11ABCDEFG0{} ok", "a1".repeat(36))),
            ("gitlab-token", "use glpat-Ab3dEf6hIj9kLm2nOp5q please"),
            ("slack-token", "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx sent"),
            ("slack-webhook", "POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now"),
            ("anthropic-key", "ANTHROPIC_KEY is sk-ant-api03-Zx9fQ2mN7pL4kR8sT1vW6yB3cD5eF0gH-aBc_dEf"),
            ("openai-key", "key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78 set"),
            ("openai-key", "key sk-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St set"),
            ("google-api-key", "maps AIzaSyD4f8Gk2Lm9Np3Qr7St1Uv5Wx0Yz6Ab2Cd works"),
            ("jwt", "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end"),
            ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----\nafter"),
            ("password", "postgres://admin:s3cr3t-Pass@db.internal:5432/app"),
            ("secret-assignment", "export DB_PASSWORD=hunter2hunter2"),
            ("secret-assignment", "GET /api?access_token=abcdef123456&page=2"),
            ("secret-assignment", r#"{"password":"correct-horse-battery"}"#),
            ("secret-assignment", r#"{"command":"export DB_PASSWORD=\"hunter2hunter2\""}"#),
            ("secret-assignment", "DB_PASSWORD=Pa$$w0rd!"),
            ("private-key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIx (cut here"),
            ("google-api-key", "AIzaSyD4f8Gk2Lm9Np3Qr7St1Uv5Wx0Yz6Ab2C-"),
        ];
        for (kind, text) in cases {
            let (out, counts) = redact(text);
            assert_eq!(counts, format!("1 {kind}"), "{text} gave {out}");
            assert!(out.contains(&format!("[redacted: {kind}]")), "{out}");
        }
        // What surrounds a secret stays.
        assert_eq!(
            redact("key AKIAIOSFODNN7EXAMPLE here").0,
            "key [redacted: aws-access-key] here"
        );
        assert_eq!(
            redact("postgres://admin:s3cr3t-Pass@db.internal:5432/app").0,
            "postgres://admin:[redacted: password]@db.internal:5432/app"
        );
        assert_eq!(
            redact("GET /api?access_token=abcdef123456&page=2").0,
            "GET /api?access_token=[redacted: secret-assignment]&page=2"
        );
        let (out, _) = redact(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY-----\ntail",
        );
        assert_eq!(out, "[redacted: private-key]\ntail");
    }

    /// A key written against a letter of another script is still found: word boundaries are
    /// ASCII's.
    #[test]
    fn a_key_beside_a_letter_of_another_script_is_found() {
        let (out, counts) = redact("clé:AKIAIOSFODNN7EXAMPLEé");
        assert_eq!(counts, "1 aws-access-key");
        assert_eq!(out, "clé:[redacted: aws-access-key]é");
        let (_, counts) = redact("日本sk-ant-api03-Zx9fQ2mN7pL4kR8sT1vW6yB3cD5eF0gH-aBc_dEf");
        assert_eq!(counts, "1 anthropic-key");
    }

    /// A JWT given as a token is named a JWT, once.
    #[test]
    fn the_most_specific_kind_wins() {
        let (out, counts) =
            redact("TOKEN=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhYmMxMjMifQ.c2lnbmF0dXJlLWJ5dGVz");
        assert_eq!(counts, "1 jwt");
        assert_eq!(out, "TOKEN=[redacted: jwt]");
        let (_, counts) = redact("sk-ant-api03-Zx9fQ2mN7pL4kR8sT1vW6yB3cD5eF0gH-aBc_dEf");
        assert_eq!(counts, "1 anthropic-key");
    }

    #[test]
    fn look_alikes_are_left_alone() {
        for text in [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "input tokens: 1234567, output tokens: 890",
            "password: ${DB_PASSWORD}",
            "token=$GITHUB_TOKEN make release",
            "api_key = os.environ[\"API_KEY\"]",
            "sk-short and AKIA1234 and ghp_abc",
            "pip install sk-learn-compatible-estimators-for-everyone",
            "Set the password in the vault, never in the code.",
            "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----",
            "pub token: String,",
            "password: string;",
            "tokenizer: BertTokenizer",
            "password_reset_link: https://example.invalid/reset",
            "http://localhost:8080?x=user@host",
        ] {
            let (out, counts) = redact(text);
            assert_eq!(out, text, "{counts}");
        }
    }

    #[test]
    fn turned_off_it_changes_nothing() {
        let mut r = Redactor::new(false);
        assert_eq!(r.redact("AKIAIOSFODNN7EXAMPLE"), "AKIAIOSFODNN7EXAMPLE");
        assert_eq!(r.counts.total(), 0);
    }
}
