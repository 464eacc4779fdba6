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
//!
//! The fold reads a line with [`line_at_once`] first: the same envelope visitor, its event read
//! where it meets it, with the event's keys and type noted on the way ([`super::spied`]). A line
//! that read refuses is read again in the passes above, whose refusals the fold reports.

use super::event::{unknown_keys, Envelope, Event, EventType, ENVELOPE_KEYS};
use super::spied::{Spied, SpiedEvent};
use crate::transcript::borrowed::BorrowedStr;
use serde::de::{DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

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

/// A line read in one pass ([`line_at_once`]), or in the passes before it.
pub(crate) struct LineRead<'a> {
    pub head: Head,
    /// The envelope's keys the schema does not name, sorted, each once.
    pub envelope_extra: Vec<String>,
    /// The event's `type`.
    pub kind: Cow<'a, str>,
    /// All the event's keys, as they come.
    pub event_keys: Vec<Cow<'a, str>>,
    /// The event, when it was read with the rest; else its text, to be read last.
    pub event: Result<Event, &'a RawValue>,
}

/// The line `text` read in one pass: its envelope, its event's type and the event, with the
/// keys of both. None when that pass refuses it, whatever the cause (a line that is not an
/// object, a bad envelope, an event without a type, an invalid event): the fold then reads it
/// with [`envelope_and_extra`] and [`event_type_and_keys`], and its event last, whose
/// refusals are the ones it reports. What this accepts, those accept, to the same values: the
/// same visitors read the envelope and the type, the same derive the event.
pub(crate) fn line_at_once(text: &str) -> Option<LineRead<'_>> {
    if !is_object(text) {
        return None;
    }
    let AtOnce(head, spied, keys) = serde_json::from_str(text).ok()?;
    let extra = keys
        .into_iter()
        .filter(|k| !ENVELOPE_KEYS.contains(&k.as_ref()));
    Some(LineRead {
        head,
        envelope_extra: sorted(extra),
        kind: spied.kind,
        event_keys: spied.keys,
        event: Ok(spied.event),
    })
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
        let visitor = EnvelopeVisitor(PhantomData::<&'de RawValue>);
        let (head, event, keys) = d.deserialize_struct("Envelope", ENVELOPE_KEYS, visitor)?;
        let value = Envelope {
            schema_version: head.schema_version,
            run_id: head.run_id,
            seq: head.seq,
            ts: head.ts,
            event,
        };
        Ok(Read { value, keys })
    }
}

/// An envelope with its event read in the same pass, and the keys of both.
struct AtOnce<'de>(Head, Spied<'de>, Vec<Cow<'de, str>>);

impl<'de> serde::Deserialize<'de> for AtOnce<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (head, spied, keys) =
            d.deserialize_struct("Envelope", ENVELOPE_KEYS, EnvelopeVisitor(SpiedEvent))?;
        Ok(AtOnce(head, spied, keys))
    }
}

impl<'de> serde::Deserialize<'de> for Read<'de, String> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct("EventType", &["type"], TypeVisitor)
    }
}

/// An envelope's fields but its event.
pub(crate) struct Head {
    pub schema_version: Option<u64>,
    pub run_id: Option<String>,
    pub seq: Option<u64>,
    pub ts: Option<i64>,
}

/// Reads an envelope, its event with the seed it holds.
struct EnvelopeVisitor<S>(S);

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for EnvelopeVisitor<S> {
    type Value = (Head, S::Value, Vec<Cow<'de, str>>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Envelope")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut schema_version: Option<Option<u64>> = None;
        let mut run_id: Option<Option<String>> = None;
        let mut seq: Option<Option<u64>> = None;
        let mut ts: Option<Option<i64>> = None;
        let mut seed = Some(self.0);
        let mut event: Option<S::Value> = None;
        // Room for the five keys of the schema at once, where a vector grown a key at a time
        // was allocated twice a line.
        let mut keys = Vec::with_capacity(ENVELOPE_KEYS.len());
        while let Some(key) = map.next_key_seed(BorrowedStr)? {
            match key.as_ref() {
                "schemaVersion" => once(&mut schema_version, "schemaVersion", &mut map)?,
                "runId" => once(&mut run_id, "runId", &mut map)?,
                "seq" => once(&mut seq, "seq", &mut map)?,
                "ts" => once(&mut ts, "ts", &mut map)?,
                "event" => match seed.take() {
                    Some(seed) => event = Some(map.next_value_seed(seed)?),
                    None => return Err(A::Error::duplicate_field("event")),
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            keys.push(key);
        }
        let event = event.ok_or_else(|| A::Error::missing_field("event"))?;
        let head = Head {
            schema_version: schema_version.flatten(),
            run_id: run_id.flatten(),
            seq: seq.flatten(),
            ts: ts.flatten(),
        };
        Ok((head, event, keys))
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

/// What tests of the one pass check: that it reads a line as the passes do.
#[cfg(test)]
pub(crate) mod check {
    use super::*;

    /// A line's envelope fields, extra envelope keys, type, sorted event keys and event (by
    /// its `Debug` form).
    type Taken = (Head4, Vec<String>, String, Vec<String>, String);
    type Head4 = (Option<u64>, Option<String>, Option<u64>, Option<i64>);

    /// A line as the fold took it before [`line_at_once`]: the envelope's pass, the type's
    /// pass and the event's own read.
    fn in_passes(text: &str) -> Result<Taken, String> {
        let (env, extra) = envelope_and_extra(text).map_err(|e| e.to_string())?;
        let (kind, keys) = event_type_and_keys(env.event.get()).map_err(|e| e.to_string())?;
        let event: Event = serde_json::from_str(env.event.get()).map_err(|e| e.to_string())?;
        let head = (env.schema_version, env.run_id, env.seq, env.ts);
        Ok((head, extra, kind, sorted(keys), format!("{event:?}")))
    }

    fn at_once(text: &str) -> Option<Taken> {
        let read = line_at_once(text)?;
        let event = read.event.expect("read with the line");
        let h = read.head;
        let head = (h.schema_version, h.run_id, h.seq, h.ts);
        let kind = read.kind.into_owned();
        Some((
            head,
            read.envelope_extra,
            kind,
            sorted(read.event_keys),
            format!("{event:?}"),
        ))
    }

    /// Checks that each of `lines` the one pass reads, the passes read to the same envelope,
    /// keys, type and event, and that each object it refuses, they refuse (so it reads every
    /// line they read but one that is no object): how many it read.
    pub(crate) fn read_at_once_as_in_passes(lines: &[String]) -> usize {
        let mut taken = 0;
        for line in lines {
            let before = in_passes(line);
            match at_once(line) {
                Some(now) => {
                    assert_eq!(Ok(now), before, "{line}");
                    taken += 1;
                }
                None => assert!(before.is_err() || !is_object(line), "{line}"),
            }
        }
        taken
    }

    /// Every line of the `.jsonl` files in `dir`.
    pub(crate) fn lines_of(dir: &std::path::Path) -> Vec<String> {
        let mut lines = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read(path).unwrap();
                lines.extend(String::from_utf8_lossy(&text).lines().map(str::to_owned));
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::event::unknown_keys;
    use proptest::prelude::*;

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
    fn a_line_read_at_once_is_the_line_read_in_passes() {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tolerant");
        let mut lines = check::lines_of(std::path::Path::new(fixtures));
        let envelope =
            |event: &str| format!(r#"{{"schemaVersion":1,"seq":2,"ts":3,"event":{event}}}"#);
        let events = [
            r#"{"type":"user_message","text":"hi","x":1,"x":2}"#,
            r#"{"type":"user_message","text":"h\u0069 \ud83d\ude00","typ\u0065x":1}"#,
            r#"{"text":"late type","type":"user_message","runId":"r","ts":1}"#,
            r#"{"typ\u0065":"user_message","text":"escaped key"}"#,
            r#"{"type":"user_\u006dessage","text":"escaped type"}"#,
            r#"{"type":"user_message","type":"user_message"}"#,
            r#"{"type":"user_message","text":5}"#,
            r#"{"type":"user_message","text":"a","text":"b"}"#,
            r#"{"type":"hologram_beamed","intensity":9}"#,
            r#"{"type":7}"#,
            r#"{"type":null,"text":"x"}"#,
            r#"{"text":"no type"}"#,
            r#"["user_message","x"]"#,
            r#"{"type":"tool_call_finished","toolCallId":"t","result":{"ok":false,"content":"e"}}"#,
            r#"{"type":"tool_call_finished","toolCallId":42,"result":{"content":"x"}}"#,
            r#"{"type":"tool_call_finished","toolCallId":"t","result":{"content":"x","content":"y"}}"#,
            r#"{"type":"run_error","error":{"code":"aborted","message":"stop","k":"\ud800"}}"#,
            r#"{"type":"run_result","result":{"n":1e400}}"#,
            r#"{"type":"assistant_delta","delta":"\u0000"}"#,
            r#"{"type":"context_snapshot","snapshot":{"estimatedTokens":-1}}"#,
        ];
        lines.extend(events.iter().map(|e| envelope(e)));
        lines.extend([
            r#"{"event":{"type":"run_result"},"event":{"type":"run_result"}}"#.to_owned(),
            r#"{"runId":"r","shiny":true,"event":{"type":"run_result"},"a":[1]}"#.to_owned(),
            r#"{"event":{"type":"run_result"},"seq":"1"}"#.to_owned(),
            r#"{"event":{"type":"run_result"}} trailing"#.to_owned(),
            r#"[1,"r",2,3,{"type":"run_result"}]"#.to_owned(),
        ]);
        check::read_at_once_as_in_passes(&lines);
    }

    /// Event types: every known one, one unknown, one spelled with an escape.
    const TYPES: &[&str] = &[
        "run_started",
        "context_snapshot",
        "user_message",
        "assistant_message",
        "tool_call_started",
        "tool_call_finished",
        "permission_requested",
        "permission_resolved",
        "diff_proposed",
        "diff_resolved",
        "file_changed",
        "run_result",
        "run_error",
        "context_compacted",
        "steering_injected",
        "user_question_requested",
        "user_question_resolved",
        "subagent_requested",
        "subagent_resolved",
        "advisor_requested",
        "advisor_resolved",
        "assistant_delta",
        "tool_progress",
        "observed_tool_call",
        "observed_tool_result",
        "hologram_beamed",
        r"user_\u006dessage",
    ];

    /// Keys an event may hold: the schema's, the common ones, unknown ones, escaped ones.
    const KEYS: &[&str] = &[
        "cwd",
        "model",
        "snapshot",
        "messageId",
        "text",
        "attachments",
        "content",
        "usage",
        "timing",
        "toolCallId",
        "name",
        "input",
        "result",
        "request",
        "requestId",
        "decision",
        "path",
        "error",
        "summary",
        "answer",
        "task",
        "runId",
        "ts",
        "type",
        "zz",
        r"typ\u0065",
        r"t\u0065xt",
    ];

    /// Values of every kind: good and bad strings, numbers in and out of range, the shapes
    /// the schema's fields take, and values written with a key twice.
    const VALUES: &[&str] = &[
        r#""s""#,
        r#""a\u0062\n""#,
        r#""\ud800""#,
        r#""\ud83d\ude00""#,
        "5",
        "-1",
        "1e400",
        "1.5",
        "null",
        "true",
        "[]",
        r#"[1,"x",{"a":null}]"#,
        "{}",
        r#"{"ok":false,"content":"c","metadata":{"k":[1]}}"#,
        r#"{"content":"x","content":"y"}"#,
        r#"{"ok":"yes"}"#,
        r#"[{"type":"text","text":"t"},{"type":"tool_call","toolCallId":"c"}]"#,
        r#"[{"type":"image","x":"\udc00"}]"#,
        r#"{"promptTokens":3,"completionTokens":-4}"#,
        r#"{"code":"aborted","message":"m"}"#,
        r#"{"estimatedTokens":7,"lensItems":["\ud800"]}"#,
        r#"[{"path":"p","content":"c"}]"#,
        r#"{"modelMs":12}"#,
    ];

    fn line_strategy() -> impl Strategy<Value = String> {
        let field = (0..KEYS.len(), 0..VALUES.len());
        let event = (
            0..TYPES.len(),
            prop::collection::vec(field, 0..6),
            0..7usize,
            any::<bool>(),
        );
        let envelope_extra = prop::collection::vec((0..3usize, 0..VALUES.len()), 0..2);
        (event, envelope_extra, any::<bool>()).prop_map(|((t, fields, at, typed), extra, late)| {
            let mut pairs: Vec<String> = (fields.iter())
                .map(|&(k, v)| format!(r#""{}":{}"#, KEYS[k], VALUES[v]))
                .collect();
            if typed {
                let tag = format!(r#""type":"{}""#, TYPES[t]);
                pairs.insert(at.min(pairs.len()), tag);
            }
            let event = format!("{{{}}}", pairs.join(","));
            let mut env = vec![
                r#""schemaVersion":1"#.to_owned(),
                r#""runId":"r""#.to_owned(),
                r#""seq":4"#.to_owned(),
            ];
            for (k, v) in extra {
                let key = ["shiny", "seq", r"s\u0065q"][k];
                env.push(format!(r#""{key}":{}"#, VALUES[v]));
            }
            let event = format!(r#""event":{event}"#);
            match late {
                true => env.push(event),
                false => env.insert(0, event),
            }
            format!("{{{}}}", env.join(","))
        })
    }

    proptest::proptest! {
        // A case reads one short line: many cases cost little.
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Any line of these parts, however its keys, values and types fall, reads at once as
        /// it reads in passes, or is refused by both.
        #[test]
        fn any_line_reads_at_once_as_in_passes(line in line_strategy()) {
            check::read_at_once_as_in_passes(&[line]);
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
