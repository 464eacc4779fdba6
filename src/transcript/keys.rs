//! A line's envelope and its event's type, each read in the same pass as the keys it holds.
//!
//! The fold reports keys the schema does not name (spec A.3: unknown keys are reported, not
//! refused). Listing them took a pass of its own over the line and another over its event, each
//! key copied into a map: with the envelope's and the type's own reads, four passes over every
//! byte of a line before its event was read. Here the envelope and the type are read by
//! visitors that note each key as they pass it, borrowed from the line.
//!
//! What these accept and refuse, and the words of every refusal, are those of the derived
//! reads ([`Envelope`]'s and [`EventType`]'s): the visitors read each field as the derive does
//! (the same types, `duplicate field` and `missing field` where it says them), and a line that
//! is not an object (the derive also takes an array of the fields in order) is read by the
//! derived read, its keys by [`unknown_keys`], as before.

use super::event::{unknown_keys, Envelope, EventType, ENVELOPE_KEYS};
use crate::transcript::borrowed::BorrowedStr;
use serde::de::{Deserializer, Error, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// The envelope of `text` and its keys the schema does not name, sorted, each once.
pub(crate) fn envelope_and_extra(text: &str) -> serde_json::Result<(Envelope<'_>, Vec<String>)> {
    if !is_object(text) {
        let env: Envelope<'_> = serde_json::from_str(text)?;
        return Ok((env, unknown_keys(text, ENVELOPE_KEYS, false)));
    }
    let read: Read<Envelope<'_>> = serde_json::from_str(text)?;
    let extra = read
        .keys
        .into_iter()
        .filter(|k| !ENVELOPE_KEYS.contains(&k.as_ref()));
    Ok((read.value, sorted(extra)))
}

/// The `type` of the event `raw` and all its keys, as they come (borrowed from `raw` where they
/// hold no escape): the caller keeps those its event type does not name, with [`sorted`].
pub(crate) fn event_type_and_keys(raw: &str) -> serde_json::Result<(String, Vec<Cow<'_, str>>)> {
    if !is_object(raw) {
        let kind = serde_json::from_str::<EventType>(raw)?.kind;
        let keys = unknown_keys(raw, &[], false);
        return Ok((kind, keys.into_iter().map(Cow::Owned).collect()));
    }
    let read: Read<String> = serde_json::from_str(raw)?;
    Ok((read.value, read.keys))
}

/// Whether JSON text is an object (its first byte past whitespace is `{`).
fn is_object(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
}

/// `keys` owned, sorted, each once.
pub(crate) fn sorted<'a>(keys: impl IntoIterator<Item = Cow<'a, str>>) -> Vec<String> {
    let mut keys: Vec<String> = keys.into_iter().map(Cow::into_owned).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A value read with the keys of the object it came from.
struct Read<'a, T> {
    value: T,
    keys: Vec<Cow<'a, str>>,
}

impl<'de> serde::Deserialize<'de> for Read<'de, Envelope<'de>> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("Envelope", ENVELOPE_KEYS, EnvelopeVisitor)
    }
}

impl<'de> serde::Deserialize<'de> for Read<'de, String> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("EventType", &["type"], TypeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Read<'de, Envelope<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Envelope")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut schema_version: Option<Option<u64>> = None;
        let mut run_id: Option<Option<String>> = None;
        let mut seq: Option<Option<u64>> = None;
        let mut ts: Option<Option<i64>> = None;
        let mut event: Option<&'de RawValue> = None;
        let mut keys = Vec::new();
        while let Some(key) = map.next_key_seed(BorrowedStr)? {
            match key.as_ref() {
                "schemaVersion" => once(&mut schema_version, "schemaVersion", &mut map)?,
                "runId" => once(&mut run_id, "runId", &mut map)?,
                "seq" => once(&mut seq, "seq", &mut map)?,
                "ts" => once(&mut ts, "ts", &mut map)?,
                "event" => once(&mut event, "event", &mut map)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            keys.push(key);
        }
        let event = event.ok_or_else(|| A::Error::missing_field("event"))?;
        let value = Envelope {
            schema_version: schema_version.flatten(),
            run_id: run_id.flatten(),
            seq: seq.flatten(),
            ts: ts.flatten(),
            event,
        };
        Ok(Read { value, keys })
    }
}

struct TypeVisitor;

impl<'de> Visitor<'de> for TypeVisitor {
    type Value = Read<'de, String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct EventType")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kind: Option<String> = None;
        let mut keys = Vec::new();
        while let Some(key) = map.next_key_seed(BorrowedStr)? {
            if key == "type" {
                once(&mut kind, "type", &mut map)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            keys.push(key);
        }
        let value = kind.ok_or_else(|| A::Error::missing_field("type"))?;
        Ok(Read { value, keys })
    }
}

/// Reads the value of field `name` into `slot`, refused as the derive refuses a field written
/// twice.
fn once<'de, T: serde::Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut Option<T>,
    name: &'static str,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(A::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::event::unknown_keys;

    type Fields = (Option<u64>, Option<u64>, Option<i64>, String, Vec<String>);

    fn fields((env, extra): (Envelope<'_>, Vec<String>)) -> Fields {
        let event = env.event.get().to_owned();
        (env.schema_version, env.seq, env.ts, event, extra)
    }

    /// What the fold did before: the derived read, then a pass of its own for the keys.
    fn before_envelope(text: &str) -> Result<Fields, String> {
        let env = serde_json::from_str::<Envelope<'_>>(text);
        let read = env.map(|env| (env, unknown_keys(text, ENVELOPE_KEYS, false)));
        read.map(fields).map_err(|e| e.to_string())
    }

    fn now_envelope(text: &str) -> Result<Fields, String> {
        envelope_and_extra(text)
            .map(fields)
            .map_err(|e| e.to_string())
    }

    fn before_type(raw: &str) -> Result<(String, Vec<String>), String> {
        let kind = serde_json::from_str::<EventType>(raw)
            .map_err(|e| e.to_string())?
            .kind;
        Ok((kind, unknown_keys(raw, &[], false)))
    }

    fn now_type(raw: &str) -> Result<(String, Vec<String>), String> {
        let (kind, keys) = event_type_and_keys(raw).map_err(|e| e.to_string())?;
        Ok((kind, sorted(keys)))
    }

    #[test]
    fn an_envelope_reads_and_fails_as_the_derived_read_did_with_the_same_keys() {
        let lines = [
            r#"{"schemaVersion":1,"runId":"r","seq":3,"ts":5,"event":{"type":"x"}}"#,
            r#"  {"event":{"type":"x"},"zeta":[1,{"a":"}"}],"alpha":null,"zeta":2}"#,
            r#"{"event":{"type":"x"},"se\u0071":4,"extra\"key":1}"#,
            r#"{"event":{"type":"x"},"seq":null,"ts":-7,"schemaVersion":null}"#,
            r#"{"seq":1}"#,
            r#"{}"#,
            r#"{"event":{"type":"x"},"seq":1,"seq":2}"#,
            r#"{"event":{"type":"x"},"event":{"type":"y"}}"#,
            r#"{"event":{"type":"x"},"seq":"3"}"#,
            r#"{"event":{"type":"x"},"seq":-1}"#,
            r#"{"event":{"type":"x"},"ts":1.5}"#,
            r#"{"event":{"type":"x"},"runId":7}"#,
            r#"{"event":{"type":"x"},"runId":"a\ud800"}"#,
            r#"{"event":{"type":"x"}"#,
            r#"{"event":{"type":"x"}} trailing"#,
            r#"{"event":{"type":"x"},}"#,
            r#"[1,"r",2,3,{"type":"x"}]"#,
            r#"[1]"#,
            r#""event""#,
            r#"null"#,
            "{\"event\":{\"type\":\"x\"},\"k\":\"a\u{1}\"}",
        ];
        for line in lines {
            assert_eq!(now_envelope(line), before_envelope(line), "{line}");
        }
    }

    #[test]
    fn an_event_type_reads_and_fails_as_the_derived_read_did_with_the_same_keys() {
        let events = [
            r#"{"type":"tool_call_finished","toolCallId":"c","result":{"ok":true}}"#,
            r#"{"runId":"r","ts":1,"type":"x","b":1,"a":2,"b":3}"#,
            r#"{"typ\u0065":"x"}"#,
            r#"{"type":"x","type":"y"}"#,
            r#"{"type":5}"#,
            r#"{"type":null}"#,
            r#"{"kind":"x"}"#,
            r#"{}"#,
            r#"["x"]"#,
            r#"[]"#,
            r#"{"type":"x\n"}"#,
        ];
        for event in events {
            assert_eq!(now_type(event), before_type(event), "{event}");
        }
    }

    #[test]
    fn keys_are_borrowed_from_the_line_unless_escaped() {
        let read: Read<'_, String> =
            serde_json::from_str(r#"{"type":"x","a\nb":1,"c":2}"#).unwrap();
        assert!(matches!(read.keys[0], Cow::Borrowed("type")));
        assert!(matches!(read.keys[1], Cow::Owned(ref k) if k == "a\nb"));
        assert!(matches!(read.keys[2], Cow::Borrowed("c")));
    }
}
