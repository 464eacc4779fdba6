//! An optional string field read without a copy where the line allows it.
//!
//! serde's derive borrows a field typed `Cow<str>` and marked `borrow`, but not one inside an
//! `Option`: an `Option<Cow<str>>` is read through `String` and always copied. A cold listing
//! reads several such fields on every line (its type, time, ids), so each field of that type is
//! read with [`opt_str`] instead: borrowed from the line when the string holds no escape,
//! copied only when it does. What it accepts and refuses is what the derive's reading did: a
//! string, `null` or an absent field (`None`, with `#[serde(default)]`); any other value fails
//! the line with serde's own words for a field that wants a string.

use serde::de::{DeserializeSeed, Deserializer, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Reads an `Option<Cow<str>>` field, borrowed where the input allows it. Use it as
/// `#[serde(default, borrow, deserialize_with = "opt_str")]`.
pub(crate) fn opt_str<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Cow<'a, str>>, D::Error> {
    d.deserialize_option(OptionalStr)
}

/// `null` or a string.
struct OptionalStr;

impl<'de> Visitor<'de> for OptionalStr {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        BorrowedStr.deserialize(d).map(Some)
    }
}

/// A string (a value or an object's key), borrowed when the input hands it over whole.
pub(crate) struct BorrowedStr;

impl<'de> DeserializeSeed<'de> for BorrowedStr {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for BorrowedStr {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(s))
    }
}

#[cfg(test)]
mod tests {
    use super::opt_str;
    use serde::Deserialize;
    use std::borrow::Cow;

    #[derive(Deserialize)]
    struct Borrowing<'a> {
        #[serde(default, borrow, deserialize_with = "opt_str")]
        id: Option<Cow<'a, str>>,
    }

    /// The field as serde's derive reads it on its own.
    #[derive(Deserialize)]
    struct Derived<'a> {
        #[serde(borrow)]
        id: Option<Cow<'a, str>>,
    }

    fn both(
        json: &str,
    ) -> (
        Result<Option<String>, String>,
        Result<Option<String>, String>,
    ) {
        let ours = serde_json::from_str::<Borrowing<'_>>(json)
            .map(|l| l.id.map(Cow::into_owned))
            .map_err(|e| e.to_string());
        let derived = serde_json::from_str::<Derived<'_>>(json)
            .map(|l| l.id.map(Cow::into_owned))
            .map_err(|e| e.to_string());
        (ours, derived)
    }

    #[test]
    fn a_field_reads_as_the_derive_reads_it_whatever_its_value() {
        for json in [
            r#"{"id":"abc"}"#,
            r#"{"id":"a\"b\u00e9"}"#,
            r#"{"id":""}"#,
            r#"{"id":null}"#,
            r#"{}"#,
            r#"{"id":5}"#,
            r#"{"id":true}"#,
            r#"{"id":["a"]}"#,
            r#"{"id":{"a":1}}"#,
            r#"{"id":"a","id":"b"}"#,
            r#"{"id":"\ud800"}"#,
        ] {
            let (ours, derived) = both(json);
            assert_eq!(ours, derived, "{json}");
        }
    }

    #[test]
    fn a_string_without_an_escape_is_borrowed_and_one_with_is_copied() {
        let line = r#"{"id":"plain"}"#;
        let read: Borrowing<'_> = serde_json::from_str(line).unwrap();
        assert!(matches!(read.id, Some(Cow::Borrowed("plain"))));
        let read: Borrowing<'_> = serde_json::from_slice(line.as_bytes()).unwrap();
        assert!(matches!(read.id, Some(Cow::Borrowed("plain"))));
        let read: Borrowing<'_> = serde_json::from_str(r#"{"id":"a\nb"}"#).unwrap();
        assert!(matches!(read.id, Some(Cow::Owned(ref s)) if s == "a\nb"));
        // What the derive alone does, and why this module is: it copies even a plain string.
        let derived: super::tests::Derived<'_> = serde_json::from_str(line).unwrap();
        assert!(matches!(derived.id, Some(Cow::Owned(_))));
    }
}
