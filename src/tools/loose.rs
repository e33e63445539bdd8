//! Reading resmon's JSON straight into typed rows, giving each handler
//! what `serde_json::Value`'s accessors gave it from a parsed tree:
//! - an absent field and a JSON null are both `None`;
//! - a field of another kind than the row reads it as is present but
//!   unusable: a `Scalar` whose accessors (`as_str`, `as_i64`, …) answer
//!   `None` as a Value's do, or a `List(None)` where an array was expected,
//!   so a handler can still tell "missing" from "malformed";
//! - a repeated key keeps its last value;
//! - a value of any kind reads, so a shape problem is judged by the
//!   handler, with its own sentence (contract-notes 25), never turned into
//!   "not JSON".
//!
//! Fields no row names, and the insides of a value of another kind than
//! the row reads (an array where a string was expected), are skipped without
//! being built: serde_json checks their form (brackets, quotes, commas) but
//! does not decode them, so a lone surrogate escape, a number too large for
//! a float, or nesting past the 128 levels a Value parse allows, in a part
//! the answer does not show, no longer makes the whole body unreadable.
//! What the answer shows is decoded in full, and the body must still be
//! UTF-8 throughout (`Reply::read`).
//!
//! Why not a Value: a search page is a 15 KB body whose 25 rows each carry
//! an abstract and a dozen fields the answer drops; building that tree,
//! hashing its keys and dropping it was half of the call
//! (docs/performance.md, "A typed serde projection").
//!
//! The rows are written out with `loose_row!` rather than derived. A
//! derived row refuses a field of the wrong type, and the whole body with
//! it, where the loose reading must read it as absent; and the server
//! builds without serde's derive macros (syn and quote in every build).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON value read for its scalar: strings borrow from the body unless
/// they had escapes; arrays and objects are consumed unbuilt as `Other`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar<'a> {
    Str(Cow<'a, str>),
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
    Other,
}

impl Scalar<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        if let Scalar::Str(text) = self { Some(text) } else { None }
    }

    /// As `Value::as_i64`: an integer that fits.
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Scalar::I64(n) => Some(*n),
            Scalar::U64(n) => i64::try_from(*n).ok(),
            _ => None,
        }
    }

    /// As `Value::as_f64`: any number.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Scalar::I64(n) => Some(*n as f64),
            Scalar::U64(n) => Some(*n as f64),
            Scalar::F64(n) => Some(*n),
            _ => None,
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        if let Scalar::Bool(flag) = self { Some(*flag) } else { None }
    }

    /// As `Value::is_i64() || is_u64()`: the kind `backend::Kind::Integer` holds.
    pub(crate) fn is_integer(&self) -> bool {
        matches!(self, Scalar::I64(_) | Scalar::U64(_))
    }
}

/// The text of an optional scalar field, if it is a string.
pub(crate) fn text<'r>(field: &'r Option<Scalar<'_>>) -> Option<&'r str> {
    field.as_ref().and_then(Scalar::as_str)
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(text.to_string())))
            }
            fn visit_string<E>(self, text: String) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(text)))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::I64(n))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::U64(n))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::F64(n))
            }
            fn visit_bool<E>(self, flag: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Bool(flag))
            }
            // Reached only outside an Option (an array element): a null is
            // no scalar a row can use.
            fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_none<E>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Scalar<'de>, D::Error> {
                inner.deserialize_any(Read)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'de>, A::Error> {
                drain_seq(seq).map(|()| Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'de>, A::Error> {
                drain_map(map).map(|()| Scalar::Other)
            }
        }
        deserializer.deserialize_any(Read)
    }
}

/// An object key, borrowed from the body unless it had escapes. JSON keys
/// are always strings; anything else reads as a key no row names.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Key(match Scalar::deserialize(deserializer)? {
            Scalar::Str(text) => text,
            _ => Cow::Borrowed(""),
        }))
    }
}

/// A JSON array of rows, or `None` when the value is anything else.
pub(crate) struct List<T>(pub(crate) Option<Vec<T>>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Items<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Items<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(256));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(List(Some(items)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<List<T>, A::Error> {
                drain_map(map).map(|()| List(None))
            }
        }
        deserializer.deserialize_any(OrElse { visitor: Items(PhantomData), otherwise: || List(None) })
    }
}

/// Reads a JSON array for one page of it: the rows from `offset` on, at
/// most `limit` of them, are read as `T`, the others are checked for their
/// form and skipped undecoded, and every row is counted. `None` when the value is
/// not an array. A whole run's references arrive as one list, of which a
/// call shows a page (get_execution_results).
pub(crate) struct Window<T> {
    pub(crate) offset: usize,
    pub(crate) limit: usize,
    pub(crate) rows: PhantomData<T>,
}

/// The page a `Window` read, and how many rows the list had.
pub(crate) struct Windowed<T> {
    pub(crate) rows: Vec<T>,
    pub(crate) total: usize,
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Window<T> {
    type Value = Option<Windowed<T>>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(OrElse { visitor: self, otherwise: || None })
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Window<T> {
    type Value = Option<Windowed<T>>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut rows = Vec::with_capacity(self.limit.min(256));
        let mut total = 0;
        loop {
            let in_page = total >= self.offset && rows.len() < self.limit;
            let more = if in_page {
                seq.next_element::<T>()?.map(|row| rows.push(row)).is_some()
            } else {
                seq.next_element::<IgnoredAny>()?.is_some()
            };
            if !more {
                break;
            }
            total += 1;
        }
        Ok(Some(Windowed { rows, total }))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        drain_map(map).map(|()| None)
    }
}

/// Hands an object or an array to `visitor` and answers `otherwise()` for
/// any other JSON value, consuming it: the loose reading's one fallback.
pub(crate) struct OrElse<V, F> {
    pub(crate) visitor: V,
    pub(crate) otherwise: F,
}

impl<'de, V, F> Visitor<'de> for OrElse<V, F>
where
    V: Visitor<'de>,
    F: FnOnce() -> V::Value,
{
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.visitor.expecting(f)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(seq)
    }
    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        inner.deserialize_any(self)
    }
    fn visit_bool<E>(self, _: bool) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
    fn visit_i64<E>(self, _: i64) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
    fn visit_u64<E>(self, _: u64) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
    fn visit_f64<E>(self, _: f64) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
    fn visit_str<E>(self, _: &str) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
    fn visit_unit<E>(self) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
    fn visit_none<E>(self) -> Result<V::Value, E> {
        Ok((self.otherwise)())
    }
}

/// The default `visit_seq` of a visitor that reads objects only: an array
/// where a row was expected is consumed and reads as an empty row.
pub(crate) fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

pub(crate) fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A row read from a JSON object by field name. Every field is an
/// `Option`: absent, null, and (for `Scalar` fields) of a kind the field's
/// type does not read all come out as the same absence a `Value` lookup
/// gives. A value that is not an object reads as a row with every field
/// absent and `is_object` false.
///
/// The macro names this module's helpers by their full path and `Result`
/// in full, so that a row declared in any module of the crate expands
/// alike, whatever that module imports.
macro_rules! loose_row {
    ($(#[$meta:meta])* $name:ident { $($(#[$field_meta:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Default)]
        pub(crate) struct $name<'a> {
            $($(#[$field_meta])* pub(crate) $field: Option<$ty>,)*
            /// Whether the value read was a JSON object at all (a row
            /// inside a list is judged by its fields instead).
            #[allow(dead_code)]
            pub(crate) is_object: bool,
            _body: ::std::marker::PhantomData<&'a ()>,
        }

        impl<'de> ::serde::Deserialize<'de> for $name<'de> {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct Fields;
                impl<'de> ::serde::de::Visitor<'de> for Fields {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter) -> ::std::fmt::Result {
                        f.write_str(concat!("an object (", stringify!($name), ")"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> ::std::result::Result<$name<'de>, A::Error> {
                        let mut row = $name { is_object: true, ..$name::default() };
                        while let Some($crate::tools::loose::Key(key)) = map.next_key()? {
                            match key.as_ref() {
                                $(stringify!($field) => row.$field = map.next_value()?,)*
                                _ => {
                                    map.next_value::<::serde::de::IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(row)
                    }
                    fn visit_seq<A: ::serde::de::SeqAccess<'de>>(
                        self,
                        seq: A,
                    ) -> ::std::result::Result<$name<'de>, A::Error> {
                        $crate::tools::loose::drain_seq(seq).map(|()| $name::default())
                    }
                }
                deserializer.deserialize_any($crate::tools::loose::OrElse {
                    visitor: Fields,
                    otherwise: $name::default,
                })
            }
        }
    };
}

// Rows elsewhere in the crate name the macro through this module.
pub(crate) use loose_row;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    loose_row!(Probe { name: Scalar<'a>, count: Scalar<'a>, items: List<Scalar<'a>>, raw: Value });

    fn read(text: &str) -> Probe<'_> {
        serde_json::from_str(text).expect("any JSON reads")
    }

    #[test]
    fn fields_read_as_a_value_lookup_would() {
        let row = read(
            r#"{"name": "A\u00e9", "count": 18446744073709551615, "items": [1, "x", null, {}], "raw": {"k": [1]}, "other": {"deep": [1, 2]}}"#,
        );
        assert!(row.is_object);
        assert_eq!(text(&row.name), Some("Aé"));
        let count = row.count.unwrap();
        assert!(count.is_integer());
        assert_eq!(count.as_i64(), None, "as Value::as_i64: a u64 past i64::MAX does not fit");
        assert_eq!(count.as_f64(), Some(18446744073709551615.0));
        let items = row.items.unwrap().0.unwrap();
        assert_eq!(items, vec![Scalar::U64(1), Scalar::Str("x".into()), Scalar::Other, Scalar::Other]);
        assert_eq!(row.raw, Some(json!({"k": [1]})));
    }

    #[test]
    fn null_absent_and_mistyped_fields_read_as_absent() {
        let row = read(r#"{"name": null, "items": {"not": "a list"}, "raw": null}"#);
        assert!(row.name.is_none() && row.count.is_none() && row.raw.is_none());
        assert!(row.items.unwrap().0.is_none(), "an object where a list was expected is no list");
        let mistyped = read(r#"{"name": [1, 2], "count": "7"}"#);
        assert_eq!(mistyped.name, Some(Scalar::Other));
        assert_eq!(text(&mistyped.name), None);
        assert_eq!(mistyped.count.unwrap().as_i64(), None);
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        assert_eq!(text(&read(r#"{"name": "first", "name": "last"}"#).name), Some("last"));
    }

    #[test]
    fn any_json_value_reads_and_only_broken_json_fails() {
        for text in ["[]", "[1, {\"name\": 2}]", "7", "\"s\"", "null", "true", "1.5"] {
            let row: Probe = serde_json::from_str(text).expect(text);
            assert!(!row.is_object, "{text}");
            assert!(row.name.is_none(), "{text}");
        }
        for broken in ["", "{", "{\"name\": }", "[1,", "{} x"] {
            assert!(serde_json::from_str::<Probe>(broken).is_err(), "{broken}");
        }
    }

    #[test]
    fn a_parsed_value_reads_the_same_as_its_text() {
        let text = r#"{"name": "n", "count": -3, "items": ["a"], "raw": [true]}"#;
        let tree: Value = serde_json::from_str(text).unwrap();
        let (from_text, from_tree) = (read(text), Probe::deserialize(&tree).unwrap());
        assert_eq!(from_text.name, from_tree.name);
        assert_eq!(from_text.count, from_tree.count);
        assert_eq!(from_text.items.unwrap().0, from_tree.items.unwrap().0);
        assert_eq!(from_text.raw, from_tree.raw);
    }

    #[test]
    fn deep_nesting_in_a_skipped_field_is_skipped_without_recursion() {
        // serde_json skips an unused value iteratively, so a body nested far
        // past the 128 levels a Value parse allows neither overflows the
        // stack nor hides the fields a row does name. A named Value field
        // keeps the Value limit.
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let deep = format!("{{\"skipped\": {}, \"name\": \"kept\"}}", nested(100_000));
        assert_eq!(text(&read(&deep).name), Some("kept"));
        assert!(serde_json::from_str::<Probe>(&format!("{{\"raw\": {}}}", nested(200))).is_err());
        let list = format!("[{}, {{\"name\": \"row\"}}]", nested(100_000));
        let window = Window { offset: 1, limit: 1, rows: PhantomData::<Probe> };
        let page = window.deserialize(&mut serde_json::Deserializer::from_str(&list)).unwrap().unwrap();
        assert_eq!((page.total, text(&page.rows[0].name)), (2, Some("row")));
    }
}
