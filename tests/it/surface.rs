//! The tool listing as a client sees it: the contract's counts, the flags,
//! schema portability and what survives clients' rewriting of the schemas
//! (contract 1.0 "Tools"; contract-notes 7 and 22). The context budget is
//! in budgets.rs.

use serde_json::{Value, json};

use crate::harness::{Session, WRITE_TOOLS};

fn listing(env: &[(String, String)]) -> Vec<Value> {
    let mut session = Session::initialized(env);
    let answer = session.request("tools/list", json!({}));
    answer["result"]["tools"].as_array().unwrap().clone()
}

#[test]
fn the_surface_is_25_tools_18_reads_and_the_contracts_7_writes() {
    let tools = listing(&[]);
    assert_eq!(tools.len(), 25);
    let writes: Vec<&str> = tools
        .iter()
        .filter(|tool| tool["requires_confirmation"] == json!(true))
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    let reads = tools.iter().filter(|tool| tool["requires_confirmation"] == json!(false)).count();
    assert_eq!(reads, 18);
    let mut expected = WRITE_TOOLS.to_vec();
    expected.sort_unstable();
    let mut actual = writes.clone();
    actual.sort_unstable();
    assert_eq!(actual, expected);
    let mut names: Vec<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 25, "tool names are unique");
}

#[test]
fn every_tool_states_its_flags_and_hints_explicitly() {
    for tool in listing(&[]) {
        let name = tool["name"].as_str().unwrap();
        assert!(
            name.len() <= 40 && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{name}: snake_case, short enough for mcp__resmon__ prefixes"
        );
        let confirm =
            tool["requires_confirmation"].as_bool().unwrap_or_else(|| panic!("{name}: flag missing"));
        let hints = &tool["annotations"];
        assert_eq!(hints["readOnlyHint"], json!(!confirm), "{name}");
        for hint in ["destructiveHint", "idempotentHint", "openWorldHint"] {
            assert!(hints[hint].is_boolean(), "{name}: {hint} must be explicit");
        }
        if !confirm {
            assert_eq!(hints["destructiveHint"], false, "{name}: a read destroys nothing");
        }
        assert!(tool["title"].as_str().is_some_and(|title| !title.is_empty()), "{name}");
        let description = tool["description"].as_str().unwrap();
        assert!(description.len() > 40, "{name}: a real description, not a stand-in: {description:?}");
        assert!(tool["outputSchema"].is_object(), "{name}: outputSchema");
    }
}

/// Walks a schema and reports what some client or model provider rejects.
fn portability_problems(schema: &Value, path: &str, input: bool, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        problems.push(format!("{path}: a schema must be an object, not {schema}"));
        return;
    };
    for banned in ["$ref", "$defs", "oneOf", "anyOf", "allOf", "not", "if"] {
        if object.contains_key(banned) {
            problems.push(format!("{path}: uses {banned}"));
        }
    }
    if input {
        for banned in ["format", "default", "pattern", "$schema"] {
            if object.contains_key(banned) {
                problems.push(format!("{path}: uses {banned}"));
            }
        }
        if let Some(additional) = object.get("additionalProperties")
            && !admitted_additional_properties(path, object, additional)
        {
            problems.push(format!("{path}: additionalProperties {additional} is neither admitted form"));
        }
    }
    if let Some(kind) = object.get("type") {
        if !kind.is_string() {
            problems.push(format!("{path}: type must be one string"));
        }
        if kind == "array" && !object.contains_key("items") {
            problems.push(format!("{path}: array without items"));
        }
        if kind == "object" && !object.contains_key("properties") && path.matches('/').count() == 0 {
            problems.push(format!("{path}: root object without properties"));
        }
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            portability_problems(property, &format!("{path}/{name}"), input, problems);
        }
        for required in object.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !properties.contains_key(required.as_str().unwrap_or("")) {
                problems.push(format!("{path}: requires {required}, which it does not define"));
            }
        }
    }
    if let Some(items) = object.get("items") {
        portability_problems(items, &format!("{path}[]"), input, problems);
    }
}

/// contract-notes 22 admits `additionalProperties` in an input schema in two
/// forms only: `false` at the root of a tool that takes no arguments, and a
/// described schema without a `type` on update_settings' `settings` map.
fn admitted_additional_properties(
    path: &str,
    object: &serde_json::Map<String, Value>,
    value: &Value,
) -> bool {
    let root = !path.contains('/');
    let no_arguments = object.get("properties").and_then(Value::as_object).is_some_and(|p| p.is_empty());
    let described_untyped = value.as_object().is_some_and(|schema| {
        schema.get("description").and_then(Value::as_str).is_some_and(|text| !text.is_empty())
            && !schema.contains_key("type")
    });
    (root && no_arguments && *value == json!(false))
        || (path == "update_settings.inputSchema/settings" && described_untyped)
}

#[test]
fn every_schema_is_portable_across_clients_and_providers() {
    let mut problems = Vec::new();
    for tool in listing(&[]) {
        let name = tool["name"].as_str().unwrap();
        for (key, input) in [("inputSchema", true), ("outputSchema", false)] {
            let schema = &tool[key];
            assert_eq!(schema["type"], "object", "{name} {key}: root must be an object");
            assert!(schema["properties"].is_object(), "{name} {key}: root needs properties");
            portability_problems(schema, &format!("{name}.{key}"), input, &mut problems);
        }
    }
    assert!(problems.is_empty(), "unportable schemas:\n{}", problems.join("\n"));
}

#[test]
fn the_two_admitted_forms_are_used_where_they_belong() {
    let tools = listing(&[]);
    let schema = |name: &str| tools.iter().find(|tool| tool["name"] == name).unwrap()["inputSchema"].clone();
    for tool in &tools {
        let input = &tool["inputSchema"];
        let takes_none = input["properties"].as_object().unwrap().is_empty();
        assert_eq!(
            input.get("additionalProperties") == Some(&json!(false)),
            takes_none,
            "{}: a tool without arguments, and only such a tool, closes its root",
            tool["name"]
        );
    }
    let open = &schema("update_settings")["properties"]["settings"]["additionalProperties"];
    assert!(open["description"].is_string() && open.get("type").is_none(), "{open}");
}

/// Pydantic AI's OpenAI schema transformer, as far as open objects go: every
/// object schema that does not declare `additionalProperties` is closed with
/// `additionalProperties: false`, and nested schemas are walked.
fn close_open_objects(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    if object.get("type") == Some(&json!("object")) && !object.contains_key("additionalProperties") {
        object.insert("additionalProperties".into(), json!(false));
    }
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        properties.values_mut().for_each(close_open_objects);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(nested) = object.get_mut(key) {
            close_open_objects(nested);
        }
    }
}

#[test]
fn settings_stay_an_open_map_after_a_client_closes_open_objects() {
    let tools = listing(&[]);
    let mut input =
        tools.iter().find(|tool| tool["name"] == "update_settings").unwrap()["inputSchema"].clone();
    close_open_objects(&mut input);
    let settings = &input["properties"]["settings"];
    assert_eq!(settings["type"], "object");
    assert_ne!(
        settings["additionalProperties"],
        json!(false),
        "a closed settings map would tell the model no key is allowed: {settings}"
    );
    assert!(settings["additionalProperties"]["description"].is_string(), "{settings}");
    // The rule itself closes what it should, so the check above can fail.
    let mut bare = json!({"type": "object", "properties": {"settings": {"type": "object"}}});
    close_open_objects(&mut bare);
    assert_eq!(bare["properties"]["settings"]["additionalProperties"], json!(false));
    // Every tool's root is closed by it either way, which matches the server:
    // unknown arguments are refused by name.
    for tool in &tools {
        let mut input = tool["inputSchema"].clone();
        close_open_objects(&mut input);
        assert_eq!(input["additionalProperties"], json!(false), "{}", tool["name"]);
    }
}

#[test]
fn a_read_only_session_lists_only_the_reads() {
    let tools = listing(&[("RESMON_MCP_READ_ONLY".into(), "1".into())]);
    assert_eq!(tools.len(), 18);
    assert!(tools.iter().all(|tool| tool["requires_confirmation"] == json!(false)));
    for value in ["true", "0", "1 ", "yes", ""] {
        let tools = listing(&[("RESMON_MCP_READ_ONLY".into(), value.into())]);
        assert_eq!(tools.len(), 25, "RESMON_MCP_READ_ONLY={value:?} must leave the full surface");
    }
}
