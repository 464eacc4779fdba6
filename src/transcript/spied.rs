//! An event read in the pass that reads its envelope, its type and keys noted on the way.
//!
//! The fold reads a line's envelope with its keys ([`super::keys`]), then its event's type with
//! the event's keys, then the event itself: serde reads an internally tagged enum by buffering
//! every field but the tag, so a harness line was passed over three times (the event skipped by
//! the envelope's read, skipped again by the type's, then buffered and read). Here the event is
//! read where the envelope meets it, through a deserializer that hands serde each of the
//! event's keys, and its tag, after noting them: one pass for all three.
//!
//! Only an event that reads whole this way is taken from it. Any refusal, whatever its cause,
//! sends the caller back to the three reads, whose verdicts and words are the fold's (see
//! `keys::line_at_once`): this read need only give, for what it accepts, what those give.

use super::borrowed::BorrowedStr;
use super::event::Event;
use serde::de::value::{BorrowedStrDeserializer, StrDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error, MapAccess, Visitor};
use serde::forward_to_deserialize_any;
use std::borrow::Cow;
use std::fmt;

/// An event, its `type` and its keys as they come (borrowed where they hold no escape).
pub(crate) struct Spied<'de> {
    pub event: Event,
    pub kind: Cow<'de, str>,
    pub keys: Vec<Cow<'de, str>>,
}

/// Reads an event object as a [`Spied`].
pub(crate) struct SpiedEvent;

impl<'de> DeserializeSeed<'de> for SpiedEvent {
    type Value = Spied<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        // Room for the keys of most events at once (`type`, `runId`, `ts` and up to five).
        let mut noted = Noted {
            kind: None,
            keys: Vec::with_capacity(8),
        };
        let event = serde::Deserialize::deserialize(Spy {
            inner: d,
            noted: &mut noted,
        })?;
        // serde refuses an event without its tag, so one was read.
        let kind = noted.kind.ok_or_else(|| D::Error::missing_field("type"))?;
        Ok(Spied {
            event,
            kind,
            keys: noted.keys,
        })
    }
}

/// What the spy saw of the event's object.
struct Noted<'de> {
    kind: Option<Cow<'de, str>>,
    keys: Vec<Cow<'de, str>>,
}

/// The event's deserializer, handing its object to serde through [`SpyMap`]. Anything but an
/// object is refused (the caller then reads the line the usual way).
struct Spy<'n, 'de, D> {
    inner: D,
    noted: &'n mut Noted<'de>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Spy<'_, 'de, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(SpyVisitor {
            inner: visitor,
            noted: self.noted,
        })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

struct SpyVisitor<'n, 'de, V> {
    inner: V,
    noted: &'n mut Noted<'de>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for SpyVisitor<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(SpyMap {
            inner: map,
            noted: self.noted,
            at_type: false,
        })
    }
}

/// The event's object: each key read as a string and noted before serde gets it, and the
/// value of `type` likewise.
struct SpyMap<'n, 'de, A> {
    inner: A,
    noted: &'n mut Noted<'de>,
    /// Whether the key just handed over was `type`.
    at_type: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SpyMap<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.inner.next_key_seed(BorrowedStr)? else {
            return Ok(None);
        };
        self.at_type = key == "type";
        let handed = hand(&key, seed)?;
        self.noted.keys.push(key);
        Ok(Some(handed))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        if !std::mem::take(&mut self.at_type) {
            return self.inner.next_value_seed(seed);
        }
        let kind = self.inner.next_value_seed(BorrowedStr)?;
        let handed = hand(&kind, seed)?;
        self.noted.kind = Some(kind);
        Ok(handed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// `seed` read from the string `s`, borrowed when `s` is.
fn hand<'de, S: DeserializeSeed<'de>, E: Error>(s: &Cow<'de, str>, seed: S) -> Result<S::Value, E> {
    match s {
        Cow::Borrowed(s) => seed.deserialize(BorrowedStrDeserializer::new(s)),
        Cow::Owned(s) => seed.deserialize(StrDeserializer::new(s)),
    }
}
