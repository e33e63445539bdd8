//! Argument checking, driven by each tool's own `inputSchema`.
//!
//! The schema a client sees is the schema enforced here, so the two cannot
//! disagree. Only the small, portable subset the tool table uses is
//! understood: `type` (object, string, integer, number, boolean, array),
//! `properties`, `required`, `enum`, `items`, `minimum` and `maxItems`.
//! Unknown arguments are refused rather than ignored: an argument that is
//! silently dropped is a request the caller believes was honoured.
//! The one exception is `HARNESS_KEYS`: keys a harness adds to every tool for
//! its own scheduling, which no caller means as a request to resmon.
//! Every refusal names the argument and happens before any request is built.

use serde_json::{Map, Value};

use crate::error::ToolError;

/// Arguments that a harness adds to every tool's parameters for its own use,
/// with the harness that adds them. They are accepted with any value and
/// never reach a handler's decisions: refusing them would fail every call
/// that harness makes. This is the only place such keys are named; a tool
/// that declares one of them as its own argument still has it checked.
/// docs/setup.md names each of them (a unit test below checks).
pub(crate) const HARNESS_KEYS: &[HarnessKey] = &[
    // A boolean added to every tool's parameters; its system prompt tells
    // the model to set it on a call that must wait for the one before.
    HarnessKey { key: "wait_for_previous", harness: "Gemini CLI" },
];

pub(crate) struct HarnessKey {
    pub key: &'static str,
    /// Which harness adds the key: the record of why it is here, checked
    /// against docs/setup.md by a unit test rather than read at run time.
    #[cfg_attr(not(test), allow(dead_code))]
    pub harness: &'static str,
}

pub(crate) fn added_by_a_harness(key: &str) -> bool {
    HARNESS_KEYS.iter().any(|entry| entry.key == key)
}

pub fn validate(schema: &Value, arguments: &Value) -> Result<(), ToolError> {
    let Some(object) = arguments.as_object() else {
        return Err(ToolError::invalid_argument(
            "arguments",
            format!("The arguments must be a JSON object, not {}.", describe(arguments)),
        ));
    };
    // The root is always closed, even for a tool that takes no arguments.
    check_object(schema, object, "", true)
}

/// `closed`: refuse keys the schema does not name (the argument root).
fn check_object(
    schema: &Value,
    object: &Map<String, Value>,
    prefix: &str,
    closed: bool,
) -> Result<(), ToolError> {
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    // A harness's own keys are only ever allowed at the root, where it puts them.
    let allowed = |key: &str| properties.contains_key(key) || (prefix.is_empty() && added_by_a_harness(key));
    let unknown = object.keys().find(|key| !allowed(key));
    if closed && let Some(unknown) = unknown {
        let mut known: Vec<&str> = properties.keys().map(String::as_str).collect();
        known.sort_unstable();
        let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
        return Err(ToolError::invalid_argument(
            &format!("{prefix}{unknown}"),
            format!("`{prefix}{unknown}` is not an argument of this tool (it takes: {known})."),
        ));
    }
    for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = required.as_str() else { continue };
        if object.get(name).is_none_or(Value::is_null) {
            return Err(ToolError::invalid_argument(
                &format!("{prefix}{name}"),
                format!("`{prefix}{name}` is required."),
            ));
        }
    }
    for (name, value) in object {
        // An explicit null means "not given" for an optional argument.
        if value.is_null() {
            continue;
        }
        if let Some(property) = properties.get(name) {
            check_value(property, value, &format!("{prefix}{name}"))?;
        }
    }
    Ok(())
}

fn check_value(schema: &Value, value: &Value, name: &str) -> Result<(), ToolError> {
    let expected = schema.get("type").and_then(Value::as_str);
    let fits = match expected {
        Some("string") => value.is_string(),
        // Beyond i64 nothing resmon stores can match, and reading it back
        // as "absent" would be worse than refusing it here.
        Some("integer") => value.is_i64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some("array") => value.is_array(),
        Some("object") => value.is_object(),
        _ => true,
    };
    if !fits {
        let expected = expected.unwrap_or("value");
        return Err(ToolError::invalid_argument(
            name,
            format!("`{name}` must be {} {expected}, not {}.", article(expected), describe(value)),
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(ToolError::invalid_argument(
            name,
            format!("`{name}` must be one of {}; got {}.", allowed.join(", "), clip(value)),
        ));
    }
    if let (Some(minimum), Some(number)) = (schema.get("minimum").and_then(Value::as_i64), value.as_i64())
        && number < minimum
    {
        return Err(ToolError::invalid_argument(
            name,
            format!("`{name}` must be at least {minimum}; got {number}."),
        ));
    }
    if let Some(items) = value.as_array() {
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && items.len() as u64 > max
        {
            return Err(ToolError::invalid_argument(
                name,
                format!("`{name}` may hold at most {max} entries; got {}.", items.len()),
            ));
        }
        if let Some(item_schema) = schema.get("items") {
            for (index, item) in items.iter().enumerate() {
                check_value(item_schema, item, &format!("{name}[{index}]"))?;
            }
        }
    }
    // A nested object is only checked for being an object. The one with
    // named properties, create_routine's `entity`, goes to resmon unexamined
    // (contract 1.0 "Watch profiles and the basis of a match"): resmon's
    // validator is the one that also governs the app's own editor.
    Ok(())
}

fn article(type_name: &str) -> &'static str {
    if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Number(number) if number.is_f64() => "a fractional number",
        Value::Number(number) if number.is_u64() && !number.is_i64() => {
            "an integer too large to be an id or count"
        }
        Value::Number(_) => "an integer",
        other => kind_of(other),
    }
}

/// A JSON value's kind in plain words ("a string", "an object"), for a
/// sentence that refuses a value of the wrong kind where the finer reading
/// of a number that `describe` gives a tool's argument does not matter (a
/// JSON-RPC envelope's fields, a prompt's arguments).
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn clip(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        format!("{}…", text.chars().take(60).collect::<String>())
    }
}

/// Typed reads of arguments that `validate` has already accepted.
pub struct Args<'a>(pub &'a Map<String, Value>);

impl<'a> Args<'a> {
    /// A list argument that must name at least one thing, none of them blank.
    pub(crate) fn non_empty_strings(&self, name: &str) -> Result<Vec<String>, ToolError> {
        let items: Vec<String> = self
            .get(name)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if items.is_empty() {
            return Err(ToolError::invalid_argument(name, format!("`{name}` is empty: name at least one.")));
        }
        if items.iter().any(|item| item.trim().is_empty()) {
            return Err(ToolError::invalid_argument(name, format!("`{name}` has a blank entry.")));
        }
        Ok(items)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&'a Value> {
        self.0.get(name).filter(|value| !value.is_null())
    }

    pub(crate) fn str(&self, name: &str) -> Option<&'a str> {
        self.get(name).and_then(Value::as_str)
    }

    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    pub(crate) fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    /// A page size: the default when absent, clamped to `max` when larger.
    pub(crate) fn limit(&self, name: &str, default: i64, max: i64) -> i64 {
        self.int(name).unwrap_or(default).clamp(1, max)
    }

    /// A required string the schema has already made present.
    pub(crate) fn required_str(&self, name: &str) -> Result<&'a str, ToolError> {
        self.str(name).ok_or_else(|| ToolError::invalid_argument(name, format!("`{name}` is required.")))
    }

    pub(crate) fn required_int(&self, name: &str) -> Result<i64, ToolError> {
        self.int(name).ok_or_else(|| ToolError::invalid_argument(name, format!("`{name}` is required.")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "query": {"type": "string"},
            "mode": {"type": "string", "enum": ["keyword", "semantic"]},
            "limit": {"type": "integer", "minimum": 1},
            "sources": {"type": "array", "items": {"type": "string"}},
            "entity": {"type": "object", "properties": {"profile_id": {"type": "integer"}}, "required": ["profile_id"]}
        }, "required": ["query"]})
    }

    fn refused_argument(arguments: Value) -> String {
        let error = validate(&schema(), &arguments).unwrap_err();
        assert_eq!(error.code, Code::InvalidArgument);
        error.detail["argument"].as_str().unwrap().to_string()
    }

    #[test]
    fn accepts_a_valid_call() {
        validate(&schema(), &json!({"query": "x", "mode": "semantic", "limit": 5, "sources": ["arxiv"]}))
            .unwrap();
        validate(&schema(), &json!({"query": "x", "limit": null})).unwrap();
    }

    #[test]
    fn names_the_argument_it_refuses() {
        assert_eq!(refused_argument(json!({})), "query");
        assert_eq!(refused_argument(json!({"query": 3})), "query");
        assert_eq!(refused_argument(json!({"query": "x", "mode": "fuzzy"})), "mode");
        assert_eq!(refused_argument(json!({"query": "x", "limit": 2.5})), "limit");
        assert_eq!(refused_argument(json!({"query": "x", "limit": 0})), "limit");
        assert_eq!(refused_argument(json!({"query": "x", "limit": u64::MAX})), "limit");
        assert_eq!(refused_argument(json!({"query": "x", "sources": ["a", 1]})), "sources[1]");
        assert_eq!(refused_argument(json!({"query": "x", "offset": 5})), "offset");
        assert_eq!(refused_argument(json!({"query": "x", "entity": 5})), "entity");
        // Inside a nested object nothing is judged here: resmon judges `entity`.
        validate(&schema(), &json!({"query": "x", "entity": {"profile_id": "p", "x": 1}})).unwrap();
        assert_eq!(validate(&schema(), &json!([1])).unwrap_err().code, Code::InvalidArgument);
        let no_arguments = json!({"type": "object", "properties": {}});
        assert_eq!(validate(&no_arguments, &json!({"x": 1})).unwrap_err().detail["argument"], "x");
        let open_map = json!({"type": "object", "properties": {"settings": {"type": "object"}}});
        validate(&open_map, &json!({"settings": {"any_key": "v"}})).unwrap();
    }

    #[test]
    fn keys_a_harness_adds_are_accepted_with_any_value_and_nothing_else_is() {
        for entry in HARNESS_KEYS {
            for value in [json!(true), json!(false), json!(null), json!("yes")] {
                validate(&schema(), &json!({"query": "x", entry.key: value})).unwrap();
            }
            let no_arguments = json!({"type": "object", "properties": {}, "additionalProperties": false});
            validate(&no_arguments, &json!({entry.key: true})).unwrap();
            // The exemption does not hide a real mistake beside it.
            let error =
                validate(&schema(), &json!({"query": "x", entry.key: true, "wait": true})).unwrap_err();
            assert_eq!(error.detail["argument"], "wait");
            // Nor does it stop the required check.
            assert_eq!(refused_argument(json!({entry.key: true})), "query");
        }
        // A near miss is still somebody's mistake, named as such.
        assert_eq!(refused_argument(json!({"query": "x", "wait_for_previous_": true})), "wait_for_previous_");
        assert_eq!(refused_argument(json!({"query": "x", "WAIT_FOR_PREVIOUS": true})), "WAIT_FOR_PREVIOUS");
    }

    #[test]
    fn docs_setup_names_every_harness_key_and_its_harness() {
        let setup = include_str!("../docs/setup.md");
        for entry in HARNESS_KEYS {
            let line = setup.lines().find(|line| line.contains(&format!("`{}`", entry.key)));
            let line = line.unwrap_or_else(|| panic!("docs/setup.md does not name `{}`", entry.key));
            assert!(
                line.contains(entry.harness),
                "docs/setup.md names `{}` without {}",
                entry.key,
                entry.harness
            );
        }
    }

    #[test]
    fn a_tool_that_declares_a_harness_key_has_it_checked() {
        let declares = json!({"type": "object", "properties": {"wait_for_previous": {"type": "integer"}}});
        assert_eq!(
            validate(&declares, &json!({"wait_for_previous": true})).unwrap_err().detail["argument"],
            "wait_for_previous"
        );
    }
}
