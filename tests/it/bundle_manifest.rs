//! bundle/manifest.json, the MCP Bundle manifest template, is generated from
//! the tool and prompt listings (and so from the tool and prompt tables) and
//! from Cargo.toml, and must match them. After changing a tool or the package metadata, regenerate it with
//! `UPDATE_BUNDLE_MANIFEST=1 cargo test --test it bundle_manifest`.
//!
//! It is a template (contract-notes 23): `cargo xtask bundle` fills in where
//! each platform's binary sits and which platforms the bundle holds
//! (`server.entry_point`, `server.mcp_config.command` and `platform_overrides`,
//! `compatibility.platforms`); everything else reaches the bundle unchanged.

use serde_json::{Value, json};

use crate::harness::Session;

/// The copyright holder LICENSE-MIT names; Cargo.toml has no `authors`.
const AUTHOR: &str = "The resmon-mcp authors";

fn names(tools: &[&Value]) -> String {
    let names: Vec<String> =
        tools.iter().map(|tool| format!("`{}`", tool["name"].as_str().unwrap())).collect();
    names.join(", ")
}

/// The prompts as an MCP Bundle manifest declares them: name, description,
/// the argument names in order, and the text with each argument standing as
/// `${arguments.<name>}` (what `prompts/get` answers once each is replaced).
/// A manifest's prompt has no condition (MCPB 0.3 gives a prompt a name, a
/// description, argument names and a text, and substitutes user_config only
/// in `mcp_config`), so a prompt a read-only session does not offer is
/// declared in every bundle; its description says so plainly.
fn render_prompts(prompts: &[Value]) -> Vec<Value> {
    prompts
        .iter()
        .map(|listed| {
            let name = listed["name"].as_str().unwrap();
            let prompt = resmon_mcp::prompts::find(name).unwrap();
            let description = if resmon_mcp::prompts::is_offered(prompt, true) {
                prompt.description.to_string()
            } else {
                format!(
                    "{} Listed in every bundle, but with Read-only on the server does not offer it and \
                     refuses the write it leads to.",
                    prompt.description
                )
            };
            let arguments: Vec<&str> =
                listed["arguments"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
            json!({
                "name": name,
                "description": description,
                "arguments": arguments,
                "text": resmon_mcp::prompts::template_text(prompt),
            })
        })
        .collect()
}

fn render(tools: &[Value], prompts: &[Value]) -> String {
    let writes: Vec<&Value> =
        tools.iter().filter(|tool| tool["requires_confirmation"] == json!(true)).collect();
    let reads = tools.len() - writes.len();
    let listed: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let title = tool["title"].as_str().unwrap();
            let description = if tool["requires_confirmation"] == json!(true) {
                format!("{title} (changes resmon; not offered when Read-only is on)")
            } else {
                title.to_string()
            };
            json!({"name": tool["name"], "description": description})
        })
        .collect();
    let long_description = format!(
        "Lets Claude read and steer the resmon research monitor on this computer: search the papers \
         your routines collected, see what a run found and why a paper matched, and, when you allow it, \
         start runs or change routines.\n\n\
         resmon must be running. This extension talks only to it, over 127.0.0.1, and finds it through the \
         port file the app writes in its state folder, so the packaged app on its default paths needs no \
         setup. For a resmon elsewhere, register the bare `resmon-mcp` binary with `RESMON_PORT_FILE` and \
         `RESMON_STATE_DIR` instead; `resmon-mcp --check` shows how it finds resmon.\n\n\
         {reads} of its {total} tools only read. The {writes} that change something ({write_names}) carry \
         `requires_confirmation`. Turn on **Read-only** to offer the {reads} reads alone: the others are \
         then neither listed nor run.\n\n\
         Its {prompt_count} prompts ({prompt_names}) are the common questions, ready to run: each tells Claude \
         which tools to call and which of resmon's caveats to keep.",
        total = tools.len(),
        writes = writes.len(),
        write_names = names(&writes),
        prompt_count = prompts.len(),
        prompt_names = names(&prompts.iter().collect::<Vec<_>>()),
    );
    let read_only = format!(
        "Offer only the {reads} tools that read. The {} that change resmon ({}) are then not listed, and \
         are refused if called. The server receives this as --read-only=true or --read-only=false.",
        writes.len(),
        names(&writes).replace('`', ""),
    );
    let manifest = json!({
        "manifest_version": "0.2",
        "name": env!("CARGO_PKG_NAME"),
        "display_name": "resmon",
        "version": env!("CARGO_PKG_VERSION"),
        "description": env!("CARGO_PKG_DESCRIPTION"),
        "long_description": long_description,
        "author": {"name": AUTHOR},
        "license": env!("CARGO_PKG_LICENSE"),
        "keywords": ["resmon", "research", "papers", "literature monitoring", "arXiv"],
        "server": {
            "type": "binary",
            // Filled in per bundle by `cargo xtask bundle`.
            "entry_point": "server/resmon-mcp",
            "mcp_config": {
                "command": "${__dirname}/server/resmon-mcp",
                // A boolean setting reaches the server as the text true or false,
                // which RESMON_MCP_READ_ONLY would not accept; --read-only does.
                "args": ["--read-only=${user_config.read_only}"],
                "env": {}
            }
        },
        "tools": listed,
        "tools_generated": false,
        "prompts": render_prompts(prompts),
        "prompts_generated": false,
        // Filled in per bundle: exactly the platforms whose binary it holds.
        "compatibility": {"platforms": []},
        // Nothing here may be left unset: an unset optional value without a
        // default reaches the server as the literal ${user_config.<name>}.
        // So no port or path fields; discovery through the port file is the
        // normal path.
        "user_config": {
            "read_only": {
                "type": "boolean",
                "title": "Read-only",
                "description": read_only,
                "default": false,
                "required": false
            }
        }
    });
    // serde_json cannot carry comments, so the ones above document the
    // generator; the file itself is plain JSON.
    format!("{}\n", serde_json::to_string_pretty(&manifest).unwrap())
}

#[test]
fn bundle_manifest_json_matches_the_tool_table_and_cargo_toml() {
    let mut session = Session::initialized(&[]);
    let answer = session.request("tools/list", json!({}));
    let tools = answer["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 25, "the template names the full surface");
    let answer = session.request("prompts/list", json!({}));
    let prompts = answer["result"]["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), resmon_mcp::prompts::PROMPTS.len(), "and every prompt");
    let rendered = render(tools, prompts);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bundle/manifest.json");
    if std::env::var("UPDATE_BUNDLE_MANIFEST").is_ok_and(|value| value == "1") {
        std::fs::write(path, &rendered).unwrap();
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == rendered,
        "bundle/manifest.json is out of date with the tool table or Cargo.toml; \
         run UPDATE_BUNDLE_MANIFEST=1 cargo test --test it bundle_manifest"
    );
}

#[test]
fn the_template_offers_no_setting_that_could_arrive_unset() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bundle/manifest.json")).unwrap(),
    )
    .unwrap();
    let settings = manifest["user_config"].as_object().unwrap();
    for (name, setting) in settings {
        assert!(
            setting.get("default").is_some(),
            "{name} has no default, so it could arrive as ${{user_config.{name}}}"
        );
    }
    // The read-only checkbox goes to the flag, never to the contract's variable.
    let config = &manifest["server"]["mcp_config"];
    assert_eq!(config["args"], json!(["--read-only=${user_config.read_only}"]));
    assert!(!config.to_string().contains("RESMON_MCP_READ_ONLY"), "{config}");
    assert!(!config.to_string().contains("RESMON_PORT"), "no port field: {config}");
    assert_eq!(manifest["compatibility"]["platforms"], json!([]), "a template claims no platform");
}
