//! Small builders for the portable JSON Schema subset the table uses:
//! object roots with `properties`, one `type` per property, arrays with
//! `items`, no `$ref` and no top-level composition (issue 2 §6).

use serde_json::{Map, Value, json};

/// An object schema with the given properties and required names.
pub fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), properties);
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Value::Object(schema)
}

/// A property that is always present but may be null (clarification 7): it
/// names no `type`, so it stays portable and accepts null and a value alike.
pub fn nullable(description: &str) -> Value {
    json!({"description": description})
}

/// The compact paper every list of papers uses (contract 1.0 "Tools › Read").
pub fn paper_schema() -> Value {
    object(
        json!({
            "id": {"type": "integer", "description": "Stored document id; usable as doc_id."},
            "title": {"type": "string"},
            "authors": {"type": "array", "items": {"type": "string"}},
            "date": nullable("Publication date as resmon stores it (usually YYYY-MM-DD), or null."),
            "source": {"type": "string", "description": "Source slug, e.g. arxiv."},
            "doi": nullable("DOI, or null."),
            "url": nullable("Link to the paper, or null."),
        }),
        &["id", "title", "authors", "date", "source", "doi", "url"],
    )
}

/// A page size: 25 unless given, larger values clamped to 100 by the handler.
pub fn limit_property() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "Default 25, max 100."})
}

pub fn offset_property() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "Default 0."})
}
