//! The names a JSON object's text gives more than once.
//!
//! JSON (RFC 8259) leaves what a repeated name means to each reader, and
//! serde_json keeps the last value without a word. Whatever reads a text
//! for meaning and must not pick one of two values in silence reads it once
//! more with this reader, names only: a tool call's arguments, refused when
//! one is given twice (`args::refuse_repeats`, contract-notes 30), and a
//! write's answer from resmon, quoted when a key in it has two values
//! (tools/accepted.rs). One reader for both, so both see the same keys.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What an object's text gave more than once.
#[derive(Debug, Default, PartialEq)]
pub struct Repeats {
    /// Each of its keys given more than once, with every value given to it,
    /// in order, as a JSON array.
    pub keys: Map<String, Value>,
    /// Each of its members whose value is an object that gives a key more
    /// than once, with that object's keys as in `keys`: one level down, and
    /// no further.
    pub inside: Vec<(String, Map<String, Value>)>,
}

impl Repeats {
    /// What the JSON object that is the whole of `text` gives more than once;
    /// nothing when the text is no object.
    pub fn in_object(text: &[u8]) -> Repeats {
        Repeats::at(text, &[])
    }

    /// The same for the object found by following `path`'s member names
    /// from the top of `text` (a name given twice on the way is followed to
    /// its last value, the one serde_json keeps); nothing when that is no
    /// object or is not there.
    pub(crate) fn at(text: &[u8], path: &[&str]) -> Repeats {
        let mut reader = serde_json::Deserializer::from_slice(text);
        Within(path).deserialize(&mut reader).ok().flatten().unwrap_or_default()
    }

    /// Whether the text gave nothing twice (the unit tests' question).
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.inside.is_empty()
    }

    /// The top-level keys that were given different values, each with every
    /// value given: what an answer said two things about.
    pub(crate) fn with_different_values(self) -> Map<String, Value> {
        let mut keys = self.keys;
        keys.retain(|_, values| {
            let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
            values.iter().any(|value| *value != values[0])
        });
        keys
    }
}

/// Reads an object's keys and answers what it gives more than once (a seed
/// for a reader that holds the text, such as a reply's `read_with`). Fails
/// on anything but an object.
pub(crate) struct TwiceGiven;

impl<'de> DeserializeSeed<'de> for TwiceGiven {
    type Value = Repeats;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Repeats, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TwiceGiven {
    type Value = Repeats;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Repeats, A::Error> {
        let mut entries = Entries::default();
        let mut inside: Vec<(String, Map<String, Value>)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let (value, repeated) = map.next_value_seed(Member)?;
            // Of a member given twice, only the last counts, as only its value is kept.
            inside.retain(|(member, _)| *member != key);
            if !repeated.is_empty() {
                inside.push((key.clone(), repeated));
            }
            entries.add(key, value);
        }
        Ok(Repeats { keys: entries.finish().1, inside })
    }
}

/// An object's entries kept as serde_json keeps them (a repeated key keeps
/// its first place and its last value), beside every earlier value of each
/// key given more than once.
#[derive(Default)]
struct Entries {
    object: Map<String, Value>,
    earlier: Map<String, Value>,
}

impl Entries {
    fn add(&mut self, key: String, value: Value) {
        if let Some(replaced) = self.object.insert(key.clone(), value) {
            match self.earlier.get_mut(&key) {
                Some(Value::Array(values)) => values.push(replaced),
                _ => {
                    self.earlier.insert(key, Value::Array(vec![replaced]));
                }
            }
        }
    }

    /// The object, and each key given more than once with all its values.
    fn finish(self) -> (Map<String, Value>, Map<String, Value>) {
        let Entries { object, mut earlier } = self;
        for (key, values) in &mut earlier {
            if let (Value::Array(values), Some(last)) = (values, object.get(key)) {
                values.push(last.clone());
            }
        }
        (object, earlier)
    }
}

/// One member's value as serde_json reads it, and, when it is an object,
/// the keys that object gives more than once.
struct Member;

impl<'de> DeserializeSeed<'de> for Member {
    type Value = (Value, Map<String, Value>);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Member {
    type Value = (Value, Map<String, Value>);

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Entries::default();
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            entries.add(key, value);
        }
        let (object, repeated) = entries.finish();
        Ok((Value::Object(object), repeated))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok((Value::Array(items), Map::new()))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(value), Map::new()))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Self::Value, E> {
        Ok((Value::from(value), Map::new()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Self::Value, E> {
        Ok((Value::from(value), Map::new()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Self::Value, E> {
        Ok((Value::from(value), Map::new()))
    }

    fn visit_str<E>(self, value: &str) -> Result<Self::Value, E> {
        Ok((Value::from(value), Map::new()))
    }

    fn visit_string<E>(self, value: String) -> Result<Self::Value, E> {
        Ok((Value::String(value), Map::new()))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, Map::new()))
    }
}

/// Follows a path of member names to the object it names, then reads that
/// object as `TwiceGiven` does. `None` when the path leads to no object; a
/// value of another kind on the way is passed over, not an error, so that a
/// name given twice is still followed to its last value.
struct Within<'p>(&'p [&'p str]);

impl<'de> DeserializeSeed<'de> for Within<'_> {
    type Value = Option<Repeats>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Within<'_> {
    type Value = Option<Repeats>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let [first, rest @ ..] = self.0 else { return TwiceGiven.visit_map(map).map(Some) };
        let mut found = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == *first {
                found = map.next_value_seed(Within(rest))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_every_key_given_more_than_once_with_its_values() {
        let repeats = Repeats::in_object(br#"{"a": 1, "b": 2, "a": 1, "c": {"x": 1}, "a": [3]}"#);
        assert_eq!(Value::Object(repeats.keys), json!({"a": [1, 1, [3]]}));
        assert!(repeats.inside.is_empty());
        assert!(Repeats::in_object(br#"{"a": 1, "b": {"a": 2}}"#).is_empty());
        for not_an_object in [&b"[1, 1]"[..], b"3", b"\"a\"", b"null", b"{\"a\": ", b""] {
            assert!(Repeats::in_object(not_an_object).is_empty());
        }
    }

    #[test]
    fn looks_one_level_inside_each_member_and_no_further() {
        let text = br#"{"settings": {"k": "1", "j": "2", "k": "3"}, "deep": {"d": {"z": 1, "z": 2}}}"#;
        let repeats = Repeats::in_object(text);
        assert!(repeats.keys.is_empty());
        assert_eq!(repeats.inside.len(), 1);
        assert_eq!(repeats.inside[0].0, "settings");
        assert_eq!(Value::Object(repeats.inside[0].1.clone()), json!({"k": ["1", "3"]}));
        // A member given twice counts inside as the value serde_json keeps.
        let last = Repeats::in_object(br#"{"s": {"k": 1, "k": 2}, "s": {"k": 1}}"#);
        assert!(last.inside.is_empty());
        assert_eq!(last.keys.keys().collect::<Vec<_>>(), ["s"]);
    }

    #[test]
    fn a_member_is_read_as_serde_json_reads_it() {
        let text = br#"{"v": {"k": 1, "j": [true, null, 2.5, -3, 18446744073709551615, "\u00e9"], "k": {"n": 2}}, "v": 0}"#;
        let repeats = Repeats::in_object(text);
        let first = &repeats.keys["v"][0];
        let whole: Value = serde_json::from_slice(&text[5..text.len() - 9]).unwrap();
        assert_eq!(first, &whole);
        assert_eq!(first.to_string(), whole.to_string(), "the same order of keys");
    }

    #[test]
    fn follows_a_path_to_the_object_it_reads() {
        let line = br#"{"id": 1, "params": {"name": "t", "arguments": {"a": 1, "a": 2}}}"#;
        assert_eq!(Repeats::at(line, &["params", "arguments"]).keys.keys().collect::<Vec<_>>(), ["a"]);
        let params = Repeats::at(line, &["params"]);
        assert!(params.keys.is_empty() && params.inside[0].0 == "arguments", "{params:?}");
        assert!(Repeats::at(line, &["params", "nothing"]).is_empty());
        assert!(Repeats::at(br#"{"params": {"arguments": [1]}}"#, &["params", "arguments"]).is_empty());
        // A name given twice on the way is followed to its last value.
        let twice = br#"{"params": {"arguments": {"a": 1, "a": 2}}, "params": {"arguments": {"b": 1}}}"#;
        assert!(Repeats::at(twice, &["params", "arguments"]).is_empty());
        let then_an_object = br#"{"params": 5, "params": {"arguments": {"a": 1, "a": 2}}}"#;
        assert!(!Repeats::at(then_an_object, &["params", "arguments"]).is_empty());
        let then_a_list = br#"{"params": {"arguments": {"a": 1, "a": 2}}, "params": [{"x": 1}]}"#;
        assert!(Repeats::at(then_a_list, &["params", "arguments"]).is_empty());
        let escaped = br#"{"par\u0061ms": {"arguments": {"a": 1, "\u0061": 2}}}"#;
        assert_eq!(Repeats::at(escaped, &["params", "arguments"]).keys.keys().collect::<Vec<_>>(), ["a"]);
    }

    #[test]
    fn keeps_only_the_keys_given_different_values_when_asked() {
        let repeats = Repeats::in_object(br#"{"a": 1, "a": 1, "b": 1, "b": 2}"#);
        assert_eq!(Value::Object(repeats.with_different_values()), json!({"b": [1, 2]}));
    }
}
