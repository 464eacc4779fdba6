//! A Codex tool's output as a rollout line holds it: a string (a JSON document in it unwrapped),
//! or blocks, and whether the call succeeded.

use super::fold::block_texts;
use crate::sources::lax::{present, LaxStr, ObjectOr};
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::LazyLock;

/// `Exit code: N` (freeform) or `Process exited with code N` (unified exec).
static EXIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?:Exit code:|Process exited with code)\s*(-?\d+)\s*$").expect("valid regex")
});

/// A tool's output as written: a string (what Codex writes), decoded as it is read, or any
/// other JSON value.
pub(super) enum Output<'a> {
    Text(Cow<'a, str>),
    Other(Value),
}

/// An output present, `null` included (which reads as its JSON text).
pub(super) fn some_output<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Output<'de>>, D::Error> {
    use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
    use serde::de::{MapAccess, SeqAccess, Visitor};
    struct Any;
    impl<'de> Visitor<'de> for Any {
        type Value = Output<'de>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Output<'de>, E> {
            Ok(Output::Text(Cow::Borrowed(s)))
        }
        fn visit_str<E>(self, s: &str) -> Result<Output<'de>, E> {
            Ok(Output::Text(Cow::Owned(s.to_owned())))
        }
        fn visit_string<E>(self, s: String) -> Result<Output<'de>, E> {
            Ok(Output::Text(Cow::Owned(s)))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Output<'de>, A::Error> {
            Value::deserialize(SeqAccessDeserializer::new(seq)).map(Output::Other)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Output<'de>, A::Error> {
            Value::deserialize(MapAccessDeserializer::new(map)).map(Output::Other)
        }
        fn visit_bool<E>(self, b: bool) -> Result<Output<'de>, E> {
            Ok(Output::Other(Value::Bool(b)))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Output<'de>, E> {
            Ok(Output::Other(n.into()))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Output<'de>, E> {
            Ok(Output::Other(n.into()))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Output<'de>, E> {
            Ok(Output::Other(n.into()))
        }
        fn visit_unit<E>(self) -> Result<Output<'de>, E> {
            Ok(Output::Other(Value::Null))
        }
    }
    d.deserialize_any(Any).map(Some)
}

/// An output that is a JSON document (`{"output": ..., "metadata": {"exit_code": ...}}`), read
/// for those fields only: an exit code present in `metadata` is the one, whatever its type.
#[derive(Deserialize)]
struct OutputDoc<'a> {
    #[serde(default, borrow)]
    output: LaxStr<'a>,
    #[serde(default)]
    metadata: ObjectOr<ExitCode>,
    #[serde(default, deserialize_with = "present")]
    exit_code: Option<Value>,
}

#[derive(Deserialize, Default)]
struct ExitCode {
    #[serde(default, deserialize_with = "present")]
    exit_code: Option<Value>,
}

/// The text of an output and whether it succeeded: a JSON document `{"output", "metadata":
/// {"exit_code"}}` in a string is unwrapped; else the exit code the text states decides.
pub(super) fn output_of(v: Option<Output<'_>>) -> (String, bool) {
    let raw = match v {
        Some(Output::Text(s)) => s.into_owned(),
        Some(Output::Other(v @ Value::Array(_))) => block_texts(Some(&v)),
        Some(Output::Other(other)) => other.to_string(),
        None => String::new(),
    };
    if raw.starts_with('{') {
        if let Ok(doc) = serde_json::from_str::<OutputDoc<'_>>(&raw) {
            let code = (doc.metadata.0.exit_code)
                .or(doc.exit_code)
                .and_then(|c| c.as_i64());
            let ok = code.is_none_or(|c| c == 0);
            if let Some(out) = doc.output.0 {
                return (out.into_owned(), ok);
            }
            if code.is_some() {
                return (raw, ok);
            }
        }
    }
    // The exit code is stated in the header, before the output: a line of the output that
    // looks like one says nothing.
    let header = raw.split_once("\nOutput:").map_or(raw.as_str(), |(h, _)| h);
    let code = EXIT.captures(header).and_then(|c| c[1].parse::<i64>().ok());
    let ok = code.is_none_or(|c| c == 0);
    (raw, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_unwrapped_and_their_exit_codes_read() {
        let out = |v: serde_json::Value| {
            let json = v.to_string();
            output_of(some_output(&mut serde_json::Deserializer::from_str(&json)).unwrap())
        };
        let v = |s: &str| Value::String(s.to_owned());
        assert_eq!(
            out(v(r#"{"output":"done\n","metadata":{"exit_code":1}}"#)),
            ("done\n".to_owned(), false)
        );
        assert!(!out(v("Exit code: 101\nWall time: 4 seconds\nOutput:\nx")).1);
        assert!(out(v("Process exited with code 0\nOutput:\n")).1);
        assert_eq!(out(v("plain \u{1} é")), ("plain \u{1} é".to_owned(), true));
        // The `exec` tool's own shape, and an output given as content blocks.
        assert!(!out(v(r#"{"exit_code":7,"stdout":"x"}"#)).1);
        // An exit code in `metadata` is the one, whatever its type; a field of another type
        // reads as absent.
        let doc = r#"{"output":"o","metadata":{"exit_code":"x"},"exit_code":3}"#;
        assert_eq!(out(v(doc)), ("o".to_owned(), true));
        let doc = r#"{"output":"o","metadata":[1],"exit_code":3}"#;
        assert_eq!(out(v(doc)), ("o".to_owned(), false));
        let doc = r#"{"output":5,"metadata":{"exit_code":0},"extra":{"k":[1]}}"#;
        assert_eq!(out(v(doc)), (doc.to_owned(), true));
        let blocks = serde_json::json!([{"type": "input_text", "text": "Cargo.toml"}]);
        assert_eq!(out(blocks), ("Cargo.toml".to_owned(), true));
        // Anything else reads as its JSON text; no output is empty.
        assert_eq!(out(serde_json::json!({"a": 1})).0, r#"{"a":1}"#);
        assert_eq!(out(Value::Null).0, "null");
        assert_eq!(out(serde_json::json!(5)).0, "5");
        assert_eq!(output_of(None), (String::new(), true));
    }
}
