//! Small builders for the portable JSON Schema subset the table uses:
//! object roots with `properties`, one `type` per property, arrays with
//! `items`, no `$ref` and no top-level composition (contract-notes 7 and 22).

use serde_json::{Map, Value, json};

/// An object schema with the given properties and required names.
pub(crate) fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Value::Object(schema)
}

/// A property that is always present but may be null (contract-notes 7): it
/// names no `type`, so it stays portable and accepts null and a value alike.
pub(crate) fn nullable(description: &str) -> Value {
    json!({"description": description})
}

/// An answer passed through from resmon (contract-notes 9 and 10): its
/// fields are described but not typed below the root, since any of them
/// may come back null or in a shape a newer release chose, and the answer
/// must still validate (contract-notes 7 and 25). Fields this server computes
/// itself are typed by the caller after this.
pub(crate) fn passed_through(mut schema: Value) -> Value {
    fn strip(schema: &mut Value) {
        if let Some(object) = schema.as_object_mut() {
            object.remove("type");
            for key in ["properties"] {
                if let Some(Value::Object(properties)) = object.get_mut(key) {
                    properties.values_mut().for_each(strip);
                }
            }
            if let Some(items) = object.get_mut("items") {
                strip(items);
            }
        }
    }
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.values_mut().for_each(strip);
    }
    schema
}

/// A page size: 25 unless given, larger values clamped to 100 by the handler.
pub(crate) fn limit_property() -> Value {
    limit_up_to(MAX_PAGE)
}

/// A page size with its own largest value (find_similar's is resmon's own
/// clamp, backend-facts 6).
pub(crate) fn limit_up_to(max: i64) -> Value {
    json!({"type": "integer", "minimum": 1, "description": format!("Default {DEFAULT_PAGE}, max {max}.")})
}

/// The page size when the caller names none, and the largest this server
/// asks for: small pages are a contract term (contract 1.0 "Safety": token
/// efficiency), and these two numbers are the whole of that rule here.
pub(crate) const DEFAULT_PAGE: i64 = 25;
pub(crate) const MAX_PAGE: i64 = 100;

/// A page offset. Its default of 0 goes without saying, so it is not said:
/// every byte of an input schema is paid in every conversation (contract-notes 14).
pub(crate) fn offset_property() -> Value {
    json!({"type": "integer", "minimum": 0})
}

/// The input schema of a tool that takes no arguments. The closed root says
/// so outright, which clients that make schemas strict need (the OpenAI
/// Agents SDK gives up on `properties: {}` alone); contract-notes 22.
pub(crate) fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// The `identity` block health and get_execution carry (contract 1.0
/// "Instance identity").
pub(crate) fn identity_schema() -> Value {
    object(
        json!({
            "contract_version": {"type": "integer"},
            "runtime_id": {"type": "string", "description": "Random id of the serving process; new after every restart."},
            "schema_version": nullable("Database schema version, or null when unknown."),
            "corpus_id": nullable("Always null in contract 1.0."),
            "build_id": nullable("Always null in contract 1.0."),
        }),
        &["contract_version", "runtime_id"],
    )
}

/// Null only on an unpinned call to a resmon that reported no usable
/// identity; when present it has the shape above. (No `type`, so that null
/// and the object both validate; `properties` apply only to the object.)
pub(crate) fn identity_property() -> Value {
    let mut schema = nullable(
        "The answering resmon's identity, or null when it reported none usable (unpinned calls only).",
    );
    schema["properties"] = identity_schema()["properties"].clone();
    schema
}
