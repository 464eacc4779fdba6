//! Fields of a store's lines read as a `serde_json::Value` would give them, without building
//! one: a field of an unexpected type reads as absent (it never fails its line), an object
//! read into a struct is that struct's default when it is no object, and a string without an
//! escape is borrowed from the line instead of copied. A cold scan reads millions of lines,
//! and most of their small fields are strings. (Unlike a `Value`, a struct read so refuses a
//! key written twice: its line is then damaged.)

use serde::de::{value::MapAccessDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::fmt;

/// A string field: `None` when absent or of another type.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LaxStr<'a>(pub Option<Cow<'a, str>>);

impl LaxStr<'_> {
    pub(crate) fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }

    pub(crate) fn owned(&self) -> Option<String> {
        self.0.as_deref().map(str::to_owned)
    }
}

/// A boolean field: `None` when absent or of another type.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaxBool(pub Option<bool>);

/// An object read into `T`; any other value gives `T::default()`.
#[derive(Debug, Default)]
pub(crate) struct ObjectOr<T>(pub T);

/// An object read into `T`; any other value gives `None` (where an object that holds nothing
/// and no object at all read differently).
#[derive(Debug)]
pub(crate) struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

/// The visitor methods of every JSON type a field does not take: each value is passed over
/// and reads as `Default::default()`.
macro_rules! others_are_default {
    ($($skip:ident),*) => {
        $(others_are_default!(@one $skip);)*
    };
    (@one seq) => {
        fn visit_seq<A: ::serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<::serde::de::IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
    (@one map) => {
        fn visit_map<A: ::serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<::serde::de::IgnoredAny, ::serde::de::IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
    (@one str) => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
    (@one bool) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
    (@one numbers) => {
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
    (@one unit) => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}
pub(crate) use others_are_default;

impl<'de: 'a, 'a> Deserialize<'de> for LaxStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Str;
        impl<'de> Visitor<'de> for Str {
            type Value = LaxStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<LaxStr<'de>, E> {
                Ok(LaxStr(Some(Cow::Borrowed(s))))
            }
            fn visit_str<E>(self, s: &str) -> Result<LaxStr<'de>, E> {
                Ok(LaxStr(Some(Cow::Owned(s.to_owned()))))
            }
            fn visit_string<E>(self, s: String) -> Result<LaxStr<'de>, E> {
                Ok(LaxStr(Some(Cow::Owned(s))))
            }
            others_are_default!(seq, map, bool, numbers, unit);
        }
        d.deserialize_any(Str)
    }
}

impl<'de> Deserialize<'de> for LaxBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bool;
        impl<'de> Visitor<'de> for Bool {
            type Value = LaxBool;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<LaxBool, E> {
                Ok(LaxBool(Some(b)))
            }
            others_are_default!(seq, map, str, numbers, unit);
        }
        d.deserialize_any(Bool)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Map<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Map<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Object(Some(t)))
            }
            others_are_default!(seq, str, bool, numbers, unit);
        }
        d.deserialize_any(Map(std::marker::PhantomData))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for ObjectOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Object(object) = Object::deserialize(d)?;
        Ok(ObjectOr(object.unwrap_or_default()))
    }
}

/// A field that is kept as whatever JSON value it holds, `null` included (an `Option<Value>`
/// alone reads `null` as absent).
pub(crate) fn present<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// A field kept as the JSON text it holds, `null` included, like [`present`] but unparsed and
/// borrowed from the line: a listing needs only whether it is there, and building its value (a
/// tool's whole input), or even copying its text, costs more than reading the line.
pub(crate) fn present_raw<'a, 'de: 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<&'a serde_json::value::RawValue>, D::Error> {
    <&'de serde_json::value::RawValue>::deserialize(d).map(Some)
}

/// The value of a field kept by [`present_raw`] (its text was checked as JSON when read).
pub(crate) fn value_of(raw: Option<&serde_json::value::RawValue>) -> Option<serde_json::Value> {
    raw.and_then(|r| serde_json::from_str(r.get()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Fields<'a> {
        #[serde(borrow)]
        s: LaxStr<'a>,
        b: LaxBool,
        o: ObjectOr<Inner>,
        #[serde(deserialize_with = "present")]
        v: Option<serde_json::Value>,
        after: LaxStr<'a>,
    }

    #[derive(Deserialize, Default, Debug, PartialEq)]
    struct Inner {
        n: Option<u64>,
    }

    #[test]
    fn a_field_of_another_type_reads_as_absent_and_the_line_still_reads() {
        for other in [
            r#"7"#,
            "-1.5",
            "true",
            "null",
            r#"[1,{"a":"\""}]"#,
            r#"{"k":[1]}"#,
        ] {
            let json = format!(r#"{{"s":{other},"b":{other},"o":{other},"after":"x"}}"#);
            let f: Fields<'_> = serde_json::from_str(&json).expect(other);
            assert_eq!(f.after.as_deref(), Some("x"), "{other}");
            assert!(f.o.0.n.is_none() || other.starts_with('{'), "{other}");
            if other != "true" {
                assert_eq!(f.b, LaxBool(None), "{other}");
            }
            assert_eq!(f.s, LaxStr(None), "{other}");
        }
    }

    #[test]
    fn strings_are_borrowed_unless_escaped_and_null_is_kept_where_asked() {
        let f: Fields<'_> =
            serde_json::from_str(r#"{"s":"plain","after":"a\nb","b":false,"v":null,"o":{"n":3}}"#)
                .unwrap();
        assert!(matches!(f.s.0, Some(Cow::Borrowed("plain"))));
        assert!(matches!(f.after.0, Some(Cow::Owned(ref s)) if s == "a\nb"));
        assert_eq!(f.b, LaxBool(Some(false)));
        assert_eq!(f.v, Some(serde_json::Value::Null));
        assert_eq!(f.o.0, Inner { n: Some(3) });
        let none: Fields<'_> = serde_json::from_str("{}").unwrap();
        assert_eq!((none.v, none.s.owned()), (None, None));
    }

    #[test]
    fn a_torn_value_still_fails_its_line() {
        assert!(serde_json::from_str::<Fields<'_>>(r#"{"s":[1,"#).is_err());
        assert!(serde_json::from_str::<Fields<'_>>(r#"{"o":{"n":"#).is_err());
    }
}
