//! docs/tools.md is generated from the tool listing (and so from the tool
//! table) and must match it. After changing a tool, regenerate with
//! `UPDATE_DOCS=1 cargo test --test it docs`.

use serde_json::{Value, json};

use crate::harness::Session;

fn type_of(schema: &Value) -> String {
    let base = match schema["type"].as_str() {
        Some("array") => format!("array of {}", type_of(&schema["items"])),
        Some(kind) => kind.to_string(),
        None => "any (may be null)".to_string(),
    };
    match schema["enum"].as_array() {
        Some(values) => {
            let values: Vec<String> =
                values.iter().map(|value| format!("`{}`", value.as_str().unwrap_or(""))).collect();
            format!("{base}: {}", values.join(" \\| "))
        }
        None => base,
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn render(tools: &[Value]) -> String {
    let mut out = String::from(
        "# Tools\n\n\
         Generated from the tool table by `UPDATE_DOCS=1 cargo test --test it docs`; a test fails when this file \
         and the table disagree. Contract 1.0 \"Tools\" is the specification.\n\n\
         Every tool answers either its result (as `structuredContent`, and the same JSON as text) or an error \
         result with `isError: true` and no `structuredContent`: its first text block is a sentence, `<code>: <message>`, \
         and its second holds the error object `{\"error\", \"message\", \"detail\"}` as JSON. Error codes: \
         `backend_unavailable` (resmon not named, not running, or refusing the token: see docs/setup.md), \
         `invalid_argument` (the arguments, before anything is sent; also every write in a read-only session), \
         `not_found`, `conflict`, `upstream_error` (resmon failed or answered something unusable), \
         `internal_error`, and for calls that name `expected_runtime_id`, `instance_mismatch` and \
         `identity_unavailable`.\n\n",
    );
    out.push_str("| Tool | Changes something | Asks for confirmation |\n|---|---|---|\n");
    for tool in tools {
        let writes = tool["requires_confirmation"] == json!(true);
        let name = tool["name"].as_str().unwrap();
        out.push_str(&format!(
            "| [`{name}`](#{name}) | {} | {} |\n",
            if writes { "yes" } else { "no" },
            if writes { "yes (`requires_confirmation: true`)" } else { "no" }
        ));
    }
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        out.push_str(&format!("\n## {name}\n\n{}\n\n", tool["title"].as_str().unwrap()));
        out.push_str(&format!("{}\n\n", tool["description"].as_str().unwrap()));
        let hints = &tool["annotations"];
        out.push_str(&format!(
            "- requires_confirmation: `{}`; readOnlyHint `{}`, destructiveHint `{}`, idempotentHint `{}`, openWorldHint `{}`\n",
            tool["requires_confirmation"],
            hints["readOnlyHint"],
            hints["destructiveHint"],
            hints["idempotentHint"],
            hints["openWorldHint"]
        ));
        let meta = &tool["_meta"];
        out.push_str(&format!(
            "- Claude Code: {}; search words `{}` (docs/findability.md)\n",
            if meta["anthropic/alwaysLoad"] == json!(true) {
                "loaded before any search"
            } else {
                "deferred until a tool search finds it"
            },
            meta["anthropic/searchHint"].as_str().unwrap_or("")
        ));
        let input = &tool["inputSchema"];
        let required: Vec<&str> =
            input["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let properties = input["properties"].as_object().unwrap();
        if properties.is_empty() {
            out.push_str("\nArguments: none.\n");
        } else {
            out.push_str("\n| Argument | Type | Required | Notes |\n|---|---|---|---|\n");
            for (argument, schema) in properties {
                let mut notes = schema["description"].as_str().unwrap_or("").to_string();
                if let Some(minimum) = schema["minimum"].as_i64() {
                    notes = format!("{notes} (at least {minimum})").trim().to_string();
                }
                if let Some(max) = schema["maxItems"].as_u64() {
                    notes = format!("{notes} (at most {max} entries)").trim().to_string();
                }
                if let Some(values) = schema["additionalProperties"]["description"].as_str() {
                    notes = format!("{notes} Values: {values}").trim().to_string();
                }
                out.push_str(&format!(
                    "| `{argument}` | {} | {} | {} |\n",
                    cell(&type_of(schema)),
                    if required.contains(&argument.as_str()) { "yes" } else { "no" },
                    cell(&notes)
                ));
            }
        }
        let output = &tool["outputSchema"];
        let always: Vec<&str> =
            output["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        out.push_str("\n| Answer field | Type | Always present | Notes |\n|---|---|---|---|\n");
        for (field, schema) in output["properties"].as_object().unwrap() {
            out.push_str(&format!(
                "| `{field}` | {} | {} | {} |\n",
                cell(&type_of(schema)),
                if always.contains(&field.as_str()) { "yes" } else { "no" },
                cell(schema["description"].as_str().unwrap_or(""))
            ));
        }
    }
    out
}

#[test]
fn docs_tools_md_matches_the_tool_table() {
    let mut session = Session::initialized(&[]);
    let answer = session.request("tools/list", json!({}));
    let rendered = render(answer["result"]["tools"].as_array().unwrap());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md");
    if std::env::var("UPDATE_DOCS").is_ok_and(|value| value == "1") {
        std::fs::write(path, &rendered).unwrap();
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == rendered,
        "docs/tools.md is out of date with the tool table; run UPDATE_DOCS=1 cargo test --test it docs"
    );
}
