//! A message's `content` as Claude Code writes it, read into the blocks the fold uses: its
//! strings borrowed from the line where they hold no escape, every field lenient
//! ([`crate::sources::lax`]), so that a line reads exactly as its `serde_json::Value` did,
//! without building one (a cold scan reads millions of these).

use crate::sources::lax::{others_are_default, present_raw, LaxBool, LaxStr, ObjectOr};
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// A `content` field: a string, or an array of blocks; any other value holds nothing.
#[derive(Debug, Default)]
pub(crate) enum Content<'a> {
    #[default]
    Other,
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

/// One block of a content array. An element that is no object is a block of no type.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: LaxStr<'a>,
    #[serde(borrow)]
    pub text: LaxStr<'a>,
    #[serde(borrow)]
    pub thinking: LaxStr<'a>,
    #[serde(borrow)]
    pub id: LaxStr<'a>,
    #[serde(borrow)]
    pub name: LaxStr<'a>,
    /// A call's input, whatever JSON it is, as the line spells it: parsed only for a timeline.
    #[serde(borrow, deserialize_with = "present_raw")]
    pub input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tool_use_id: LaxStr<'a>,
    pub is_error: LaxBool,
    /// A result's content as the line spells it: a string or blocks of its own, read by
    /// [`raw_text`]. Kept unread because a listing keeps no output's text: it measures a
    /// string on its spelling instead (`ClaudeFold::result`).
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    /// An image's data.
    #[serde(borrow)]
    pub source: ObjectOr<Source<'a>>,
}

/// Where an image block's bytes are.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Source<'a> {
    #[serde(borrow)]
    pub media_type: LaxStr<'a>,
    #[serde(borrow)]
    pub data: LaxStr<'a>,
}

impl Content<'_> {
    /// The text a result's content gives: a string, or its text blocks joined by lines (an
    /// image as `[image]`); `None` for anything else.
    pub(crate) fn text(self) -> Option<String> {
        match self {
            Content::Text(s) => Some(s.into_owned()),
            Content::Blocks(blocks) => Some(
                blocks
                    .iter()
                    .filter_map(|b| match b.kind.as_deref() {
                        Some("text") => b.text.as_deref(),
                        Some("image") => Some("[image]"),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Content::Other => None,
        }
    }
}

/// Whether a `content` kept unparsed reads as it did when the line's own parse read it as a
/// [`Content`]: `Err` with why not, which makes its line unreadable as it did. A kept value is
/// checked as JSON text, but not as far as that parse: a `\u` escape that is half a surrogate
/// pair passes, and so does a block with a field twice. A string without a `\u` escape needs
/// no more; any other string and an array of blocks are parsed (each block's own `content`
/// checked in turn); any other value read as nothing, then as now.
pub(crate) fn check_raw(content: &RawValue) -> Result<(), serde_json::Error> {
    let json = content.get();
    match json.as_bytes().first() {
        Some(b'"') if memchr::memmem::find(json.as_bytes(), b"\\u").is_none() => Ok(()),
        Some(b'"' | b'[') => {
            if let Content::Blocks(blocks) = serde_json::from_str::<Content<'_>>(json)? {
                for inner in blocks.iter().filter_map(|b| b.content) {
                    check_raw(inner)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The text of a result's `content` as the line spells it (as [`Content::text`]).
pub(crate) fn raw_text(content: &RawValue) -> Option<String> {
    serde_json::from_str::<Content<'_>>(content.get())
        .ok()?
        .text()
}

/// The text of a result's `content` held as a JSON value (as [`Content::text`]). Read from its
/// JSON text: a block keeps its own `content` as text borrowed from a line, which a value
/// cannot lend (the values read so are few: a saved output's, a peek's).
pub(crate) fn value_text(content: &Value) -> Option<String> {
    raw_text(&serde_json::value::to_raw_value(content).ok()?)
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Content<'de>, E> {
                Ok(Content::Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Content<'de>, E> {
                Ok(Content::Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Content<'de>, E> {
                Ok(Content::Text(Cow::Owned(s)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content<'de>, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(ObjectOr(b)) = seq.next_element::<ObjectOr<Block<'de>>>()? {
                    blocks.push(b);
                }
                Ok(Content::Blocks(blocks))
            }
            others_are_default!(map, bool, numbers, unit);
        }
        d.deserialize_any(Any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the fold read of a content through a whole `Value` before: the reference.
    fn by_value(content: &Value) -> Option<String> {
        match content {
            Value::String(s) => Some(s.clone()),
            Value::Array(blocks) => Some(
                blocks
                    .iter()
                    .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                        Some("text") => b.get("text").and_then(Value::as_str).map(str::to_owned),
                        Some("image") => Some("[image]".to_owned()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            _ => None,
        }
    }

    #[test]
    fn content_reads_as_its_json_value_did_whatever_its_shape() {
        let shapes = [
            r#""plain""#,
            r#""with \"escapes\"\n\u00e9""#,
            "null",
            "7",
            "true",
            r#"{"type":"text","text":"an object"}"#,
            r#"[]"#,
            r#"[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]"#,
            r#"[1,"s",null,[{"type":"text"}],{"type":"text","text":5},{"type":7,"text":"t"}]"#,
            r#"[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]"#,
            r#"[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}},{"type":"text","text":"y"}]"#,
        ];
        for shape in shapes {
            let value: Value = serde_json::from_str(shape).unwrap();
            let typed: Content<'_> = serde_json::from_str(shape).expect(shape);
            assert_eq!(typed.text(), by_value(&value), "{shape}");
            assert_eq!(value_text(&value), by_value(&value), "{shape}");
        }
    }

    #[test]
    fn a_kept_content_is_refused_where_its_parse_refused_it() {
        let refused = [
            r#""half a pair \ud800""#,
            r#""\udc00 the other half""#,
            r#"[{"type":"text","type":"text","text":"x"}]"#,
            r#"[{"type":"text","text":"\ud800"}]"#,
            r#"[{"type":"tool_result","content":"\ud800"}]"#,
            r#"[{"type":"tool_result","content":[{"type":"text","text":"\udfff"}]}]"#,
        ];
        for json in refused {
            let raw = RawValue::from_string(json.to_owned()).unwrap();
            assert!(
                serde_json::from_str::<Content<'_>>(json).is_err() || json.contains("tool_result")
            );
            assert!(check_raw(&raw).is_err(), "{json}");
        }
        let read = [
            r#""plain\n""#,
            r#""\u00e9 \ud83d\ude00 \\u is no escape""#,
            r#"[{"type":"text","text":"a"},{"type":"image","source":{}}]"#,
            r#"[{"type":"tool_result","content":"\u00e9"}]"#,
            "null",
            "7",
            // An object reads as nothing, its strings passed over as before.
            r#"{"text":"\ud800"}"#,
        ];
        for json in read {
            let raw = RawValue::from_string(json.to_owned()).unwrap();
            assert!(check_raw(&raw).is_ok(), "{json}");
        }
    }

    #[test]
    fn blocks_keep_what_the_fold_reads() {
        let json = r#"[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}},
            {"type":"tool_use","id":"t2","name":"X","input":null},
            {"type":"tool_result","tool_use_id":"t1","is_error":true,
             "content":[{"type":"text","text":"out"}]},
            {"type":"image","source":{"media_type":"image/png","data":"AAAA"}},
            {"type":"image","source":"not an object"},
            {"type":"thinking","thinking":"hm","signature":"zzz"}]"#;
        let Content::Blocks(mut b) = serde_json::from_str::<Content<'_>>(json).unwrap() else {
            panic!("blocks")
        };
        assert_eq!(b.len(), 6);
        assert_eq!(b[0].input.map(RawValue::get), Some(r#"{"command":"ls"}"#));
        assert_eq!(
            b[1].input.map(RawValue::get),
            Some("null"),
            "a null input is still an input"
        );
        assert_eq!(b[2].is_error, LaxBool(Some(true)));
        assert_eq!(
            b[2].content.take().and_then(raw_text).as_deref(),
            Some("out")
        );
        assert_eq!(b[3].source.0.media_type.as_deref(), Some("image/png"));
        assert_eq!(b[4].source.0.data.as_deref(), None);
        assert_eq!(b[5].thinking.as_deref(), Some("hm"));
    }
}
