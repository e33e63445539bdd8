//! The last step of every tool call (contract 1.0 "Safety": no answer shows
//! a credential's value; contract-notes 13). `tools::call` hands each answer
//! here, a success and an error alike, so no handler has to remember it.
//!
//! A success is walked beside its tool's outputSchema. What the schema
//! declares by name is this server's own field: its name is not judged (so
//! list_sources' `credential` and `key_status` stay as they are) and its value
//! is walked with its own sub-schema. Everything else is resmon's: a key the
//! schema does not declare, and all of a value whose schema declares nothing
//! below it (no `properties` for an object, no `items` for an array), is put
//! through `settings_policy::withhold_credentials`, which replaces the value of
//! every credential-shaped key at any depth, JSON text included, and takes
//! the secrets out of free text (the answer-side rule, contract-notes 13). A paper row
//! is declared field by field, so a page of them costs a lookup a field.
//!
//! An error has no schema. Its `detail` and top-level fields are named by this
//! server, but their values may quote resmon, so every field is judged as an
//! undeclared key is; none of this server's own names is credential-shaped by
//! the answer-side rule (a unit test reads them all from the source).

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{ToolError, ToolResult};
use crate::settings_policy::{answer_holds_credential, withheld, withhold_credentials};

/// `result` as it may be shown: the answer walked beside its outputSchema's
/// `shape`, or the error's fields judged.
pub(super) fn shown(shape: &Shape, result: ToolResult) -> ToolResult {
    match result {
        Ok(mut answer) => {
            walk(shape, &mut answer);
            Ok(answer)
        }
        Err(mut error) => {
            in_error(&mut error);
            Err(error)
        }
    }
}

/// What an outputSchema declares, reduced to what the walk reads. The
/// server carries no output schema builder (a `Tool`'s `output_schema` is
/// compiled into the unit tests only), so a tool's shape is read, on its
/// first call, from its outputSchema in the listing snapshot the binary
/// already holds: the schema a client sees. A call then looks its fields up in a short list in the
/// schema's order instead of hashing each name into the schema's maps.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Shape {
    /// The declared properties of an object, in the schema's order.
    properties: Option<Vec<(String, Shape)>>,
    items: Option<Box<Shape>>,
    /// `additionalProperties`, when it is a schema.
    additional: Option<Box<Shape>>,
    /// `type`, when it is one name.
    kind: Option<String>,
}

impl Shape {
    /// The shape of the tool `name`'s outputSchema in `listing` (the compact
    /// `tools` array of tools/list). A tool the listing lacks, or a schema
    /// that cannot be read, gets a shape that declares nothing, so that all
    /// of its answer is judged: the safe side (a unit test reads every tool).
    pub(crate) fn from_listing(listing: &str, name: &str) -> Shape {
        // In compact JSON a quote inside a string is escaped, so the entry's
        // opening can occur nowhere else.
        let entry = format!("{{\"name\":{},", Value::from(name));
        let Some(at) = listing.find(&entry) else { return Shape::default() };
        let rest = &listing[at..];
        let Some(schema) = rest.find("\"outputSchema\":") else { return Shape::default() };
        let mut reader = serde_json::Deserializer::from_str(&rest[schema + "\"outputSchema\":".len()..]);
        Shape::deserialize(&mut reader).unwrap_or_default()
    }

    /// The schema's values of an open map that keeps its keys: one whose
    /// values the schema types as something other than an object
    /// (get_routine's `delivery.targets_by_channel`: counts this server adds
    /// up per channel), since `{"withheld": true}` would not fit there. An
    /// open map whose values may be objects is not one: its keys are judged
    /// like any undeclared key.
    fn open_values(&self) -> Option<&Shape> {
        let values = self.additional.as_deref()?;
        values.kind.as_deref().is_some_and(|kind| kind != "object").then_some(values)
    }
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Shape, D::Error> {
        struct Schema;
        impl<'de> Visitor<'de> for Schema {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON schema")
            }
            // `additionalProperties: false` and the like declare nothing.
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                let mut shape = Shape::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "properties" => shape.properties = Some(map.next_value::<Properties>()?.0),
                        "items" => shape.items = Some(Box::new(map.next_value()?)),
                        "additionalProperties" => shape.additional = Some(Box::new(map.next_value()?)),
                        "type" => shape.kind = map.next_value::<Value>()?.as_str().map(str::to_string),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(shape)
            }
        }
        deserializer.deserialize_any(Schema)
    }
}

/// A schema's `properties`, in order.
struct Properties(Vec<(String, Shape)>);

impl<'de> Deserialize<'de> for Properties {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Properties, D::Error> {
        struct Named;
        impl<'de> Visitor<'de> for Named {
            type Value = Properties;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a schema's properties")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Properties, A::Error> {
                let mut properties = Vec::new();
                while let Some((name, shape)) = map.next_entry::<String, Shape>()? {
                    properties.push((name, shape));
                }
                Ok(Properties(properties))
            }
        }
        deserializer.deserialize_map(Named)
    }
}

/// Withholds inside `value` what its shape does not declare.
fn walk(shape: &Shape, value: &mut Value) {
    match value {
        Value::Object(object) if shape.properties.is_some() || shape.open_values().is_some() => {
            let declared = shape.properties.as_deref().unwrap_or_default();
            // Answers mostly list their fields in the schema's order, so the
            // search starts after the last field found.
            let mut next = 0;
            for (key, inner) in object.iter_mut() {
                match find(declared, key, next) {
                    Some(at) => {
                        next = at + 1;
                        walk(&declared[at].1, inner);
                    }
                    None => match shape.open_values() {
                        Some(values) => walk(values, inner),
                        None => judge(key, inner),
                    },
                }
            }
        }
        Value::Array(rows) if shape.items.is_some() => {
            let items = shape.items.as_deref().expect("checked above");
            rows.iter_mut().for_each(|row| walk(items, row));
        }
        _ => {
            withhold_credentials(value);
        }
    }
}

/// Where `key` is in `declared`, searched from `from` on, then from the start.
fn find(declared: &[(String, Shape)], key: &str, from: usize) -> Option<usize> {
    let from = from.min(declared.len());
    let (before, after) = declared.split_at(from);
    after
        .iter()
        .position(|(name, _)| name == key)
        .map(|at| from + at)
        .or_else(|| before.iter().position(|(name, _)| name == key))
}

/// One undeclared key and its value: withheld whole when the name is
/// credential-shaped (`answer_holds_credential`, by its name and value), else searched for such keys at
/// any depth.
fn judge(key: &str, value: &mut Value) {
    if answer_holds_credential(key, value) {
        if *value != withheld() {
            *value = withheld();
        }
    } else {
        withhold_credentials(value);
    }
}

/// An error's fields, each judged as an undeclared key of an answer is.
/// This server's own names (`token_file`, `credential_shaped`, `keys`, and
/// the `failure` an error after acceptance nests its cause's fields in) are
/// not credential-shaped by the answer-side rule, so they and their values
/// stay shown; a unit test below holds every name the source gives an
/// error's field to that.
fn judge_error_fields(fields: &mut Map<String, Value>) {
    for (key, value) in fields.iter_mut() {
        judge(key, value);
    }
}

fn in_error(error: &mut ToolError) {
    judge_error_fields(&mut error.detail);
    judge_error_fields(&mut error.top_level);
    // A message is resmon's sentence more often than not; when that sentence
    // is, whole, JSON text, it is judged as any other JSON text is.
    let mut message = Value::String(std::mem::take(&mut error.message));
    withhold_credentials(&mut message);
    if let Value::String(text) = message {
        error.message = text;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::Code;

    fn shape_of(schema: &Value) -> Shape {
        Shape::deserialize(schema).unwrap()
    }

    fn walked(schema: Value, mut value: Value) -> Value {
        walk(&shape_of(&schema), &mut value);
        value
    }

    #[test]
    fn declared_names_are_kept_and_everything_else_is_judged() {
        let schema = json!({"type": "object", "properties": {
            "credential": {"description": "an alias"},
            "key_status": {"description": "present or absent"},
            "rows": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "integer"}, "title": {"description": "free"}}}},
            "evidence": {"description": "resmon's, untyped"},
        }});
        let answer = walked(
            schema,
            json!({
                "credential": "openalex_api_key",
                "key_status": "present",
                "rows": [{"id": 1, "title": {"auth_token": "T1"}, "api_key": "T2"}],
                "evidence": {"api_key": "T3", "terms": ["a"], "nested": [{"password": "T4"}]},
                "smtp_password": "T5",
                "parameters": "{\"ai_api_key\": \"T6\", \"query\": \"q\"}",
            }),
        );
        assert_eq!(answer["credential"], "openalex_api_key");
        assert_eq!(answer["key_status"], "present");
        assert_eq!(
            answer["rows"][0],
            json!({"id": 1, "title": {"auth_token": withheld()}, "api_key": withheld()})
        );
        assert_eq!(
            answer["evidence"],
            json!({"api_key": withheld(), "terms": ["a"], "nested": [{"password": withheld()}]})
        );
        assert_eq!(answer["smtp_password"], withheld());
        let parameters: Value = serde_json::from_str(answer["parameters"].as_str().unwrap()).unwrap();
        assert_eq!(parameters, json!({"ai_api_key": withheld(), "query": "q"}));
        assert!(!answer.to_string().contains("\"T"), "{answer}");
    }

    #[test]
    fn a_value_of_another_shape_than_declared_is_judged_whole() {
        let schema = json!({"type": "object", "properties": {
            "row": {"type": "object", "properties": {"id": {"type": "integer"}}},
            "list": {"type": "array", "items": {"type": "string"}},
        }});
        let answer = walked(schema, json!({"row": [{"token": "T1"}], "list": {"secret": "T2"}}));
        assert_eq!(answer, json!({"row": [{"token": withheld()}], "list": {"secret": withheld()}}));
    }

    #[test]
    fn an_open_map_of_counts_keeps_its_keys() {
        let schema = json!({"type": "object", "properties": {"email": {"type": "integer"}},
            "additionalProperties": {"type": "integer"}});
        assert_eq!(walked(schema, json!({"email": 1, "auth_hook": 2})), json!({"email": 1, "auth_hook": 2}));
        let untyped =
            json!({"type": "object", "properties": {}, "additionalProperties": {"description": "x"}});
        assert_eq!(walked(untyped, json!({"api_key": "T"})), json!({"api_key": withheld()}));
    }

    #[test]
    fn an_errors_fields_are_judged_by_the_answer_side_rule() {
        let error = ToolError::new(Code::UpstreamError, "resmon said: Bearer T6-a1b2c3d4 is not valid")
            .with_detail("token_file", json!("/state/api-token-8765"))
            .with_detail("keys", json!(["ai_api_key"]))
            .with_detail("credential_shaped", json!(["ai_api_key"]))
            .with_detail(
                "answered",
                json!({"id": 7, "auth": "T1", "note": "{\"secret\": \"T2\"}", "max_tokens": 5,
                       "url": "https://x.org/?api_key=T5-k3y-9af2", "openai_key": "sk-4f9aB82c71dE0a9b3C5d"}),
            )
            .with_detail("session_token", json!("T3"))
            .with_detail(
                "failure",
                json!({"token_file": "/state/api-token-8765", "keys": ["ai_api_key"], "session_token": "T4"}),
            )
            .with_top_level("tried", json!(["http://127.0.0.1:8765"]));
        let Err(error) = shown(&Shape::default(), Err(error)) else { panic!() };
        assert_eq!(
            error.detail["failure"],
            json!({"token_file": "/state/api-token-8765", "keys": ["ai_api_key"], "session_token": withheld()}),
            "the nested detail of what failed after a write is this server's too"
        );
        assert_eq!(error.detail["token_file"], "/state/api-token-8765");
        assert_eq!(error.detail["keys"], json!(["ai_api_key"]));
        assert_eq!(error.detail["credential_shaped"], json!(["ai_api_key"]));
        assert_eq!(
            error.detail["answered"],
            json!({"id": 7, "auth": withheld(), "note": "{\"secret\":{\"withheld\":true}}", "max_tokens": 5,
                   "url": "https://x.org/?api_key=<withheld>", "openai_key": withheld()})
        );
        assert_eq!(error.detail["session_token"], withheld());
        assert_eq!(error.top_level["tried"], json!(["http://127.0.0.1:8765"]));
        assert_eq!(error.message, "resmon said: Bearer <withheld> is not valid");
    }

    /// The shape each tool's answer is walked beside is its outputSchema as
    /// the listing shows it, which is the one its builder gives.
    #[test]
    fn every_tools_shape_is_read_from_the_listing() {
        for tool in crate::tools::TOOLS {
            let read = Shape::from_listing(crate::tools::listing_json(false), tool.name);
            assert_eq!(read, shape_of(&(tool.output_schema)()), "{}", tool.name);
            assert!(
                read.properties.as_ref().is_some_and(|properties| !properties.is_empty()),
                "{}",
                tool.name
            );
        }
        assert_eq!(Shape::from_listing(crate::tools::listing_json(false), "no_such_tool"), Shape::default());
    }

    /// Every name the source gives an error's field is one the answer-side
    /// rule shows, whatever its value (one that looks like a secret under a
    /// `…_key` included), or the error would hide this server's own field.
    #[test]
    fn no_error_field_the_source_names_is_credential_shaped() {
        let mut names = Vec::new();
        let mut pending = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(path) = pending.pop() {
            if path.is_dir() {
                pending.extend(std::fs::read_dir(&path).unwrap().map(|entry| entry.unwrap().path()));
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for opening in ["with_detail(\"", "with_top_level(\"", "detail.insert(\"", "top_level.insert(\""]
            {
                for (at, _) in text.match_indices(opening) {
                    let rest = &text[at + opening.len()..];
                    if let Some(end) = rest.find('"') {
                        names.push(rest[..end].to_string());
                    }
                }
            }
        }
        assert!(names.iter().any(|name| name == "route"), "the scan found the fields");
        assert!(names.iter().any(|name| name == "token_file"), "the scan found the fields");
        let secret_like = json!("sk-4f9aB82c71dE0a9b3C5d");
        for name in names.iter().filter(|name| *name != "session_token") {
            assert!(
                !answer_holds_credential(name, &secret_like),
                "`{name}` names an error field and is credential-shaped: its value would be withheld; \
                 name the field otherwise"
            );
        }
    }
}
