//! The bundle manifest: bundle/manifest.json is a template (contract-notes
//! 23), generated from the tool and prompt tables and Cargo.toml by a test in
//! tests/it.
//! Packing fills in the platform parts and nothing else: where each binary
//! lies, the launch command for each platform, and `compatibility.platforms`,
//! which names exactly the platforms whose binary is inside.

use std::path::Path;

use anyhow::Context;
use serde_json::{Map, Value, json};

use crate::build::Platform;
use crate::workspace::Package;

pub const TEMPLATE: &str = "bundle/manifest.json";
const REGENERATE: &str = "UPDATE_BUNDLE_MANIFEST=1 cargo test --test it bundle_manifest";

/// Reads the template and refuses one that no longer matches the package,
/// the tool table or the prompt table, so a bundle never ships a stale
/// version, tool list or prompt.
pub fn load_template(root: &Path, package: &Package) -> anyhow::Result<Value> {
    let path = root.join(TEMPLATE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let template: Value = serde_json::from_str(&text).with_context(|| format!("{TEMPLATE} is not JSON"))?;
    let tools: Vec<(&str, bool)> =
        resmon_mcp::tools::TOOLS.iter().map(|tool| (tool.name, tool.requires_confirmation)).collect();
    check_template(&template, package, &tools).map_err(|why| {
        anyhow::anyhow!("{TEMPLATE} is out of date: {why}; regenerate it with {REGENERATE}")
    })?;
    check_prompts(&template, &server_prompts()).map_err(|why| {
        anyhow::anyhow!("{TEMPLATE} is out of date: {why}; regenerate it with {REGENERATE}")
    })?;
    check_blank_rendering(&template).map_err(|why| anyhow::anyhow!("{TEMPLATE}: {why}"))?;
    Ok(template)
}

/// A host fills in a manifest prompt's text itself, and writes an optional
/// argument the person left out as nothing. Filled in that way, with the
/// required arguments given, each declared text must be exactly what the
/// server's `prompts/get` serves for the same call, so the blank reads as
/// the server means it (a default, or every routine) and not as a value.
fn check_blank_rendering(template: &Value) -> Result<(), String> {
    use resmon_mcp::prompts::Kind;
    for entry in template["prompts"].as_array().into_iter().flatten() {
        let name = entry["name"].as_str().unwrap_or_default();
        let prompt = resmon_mcp::prompts::find(name)
            .ok_or_else(|| format!("it declares a prompt {name:?} the server lacks"))?;
        let mut text = entry["text"].as_str().unwrap_or_default().to_string();
        let mut given = Map::new();
        for argument in prompt.arguments {
            let value = match (argument.required, argument.kind) {
                (false, _) => "",
                (true, Kind::Days | Kind::Id) => "7",
                (true, Kind::IdOrName | Kind::Text) => "Ada",
                (true, Kind::Format) => "ris",
            };
            text = text.replace(&format!("${{arguments.{}}}", argument.name), value);
            if argument.required {
                given.insert(argument.name.to_string(), json!(value));
            }
        }
        let served = resmon_mcp::prompts::get(&json!({"name": name, "arguments": given}), false)
            .map_err(|refusal| format!("prompts/get {name} was refused: {}", refusal.message))?;
        if served["messages"][0]["content"]["text"].as_str() != Some(text.as_str()) {
            return Err(format!(
                "prompt {name}, filled in with its optional arguments left blank, is not what the server serves"
            ));
        }
    }
    Ok(())
}

/// One prompt as the server serves it and the manifest must declare it.
struct DeclaredPrompt {
    name: String,
    arguments: Vec<String>,
    /// The text with each argument as `${arguments.<name>}`.
    text: String,
}

/// The server's prompt table, as a manifest declares it.
fn server_prompts() -> Vec<DeclaredPrompt> {
    resmon_mcp::prompts::PROMPTS
        .iter()
        .map(|prompt| DeclaredPrompt {
            name: prompt.name.to_string(),
            arguments: prompt.arguments.iter().map(|argument| argument.name.to_string()).collect(),
            text: resmon_mcp::prompts::template_text(prompt),
        })
        .collect()
}

/// The manifest's `prompts` are the server's, in its order, each with the
/// same argument names in the same order and the same text, so what a host
/// shows before starting the server is what the server will serve.
fn check_prompts(template: &Value, prompts: &[DeclaredPrompt]) -> Result<(), String> {
    let declared: Vec<&Value> = template["prompts"].as_array().into_iter().flatten().collect();
    let declared_names: Vec<&str> = declared.iter().filter_map(|prompt| prompt["name"].as_str()).collect();
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    if declared_names != names {
        return Err(format!("it declares the prompts {declared_names:?}, the server serves {names:?}"));
    }
    for (entry, prompt) in declared.iter().zip(prompts) {
        let arguments: Vec<&str> =
            entry["arguments"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if arguments != prompt.arguments {
            return Err(format!(
                "its prompt {} takes {arguments:?}, the server's takes {:?}",
                prompt.name, prompt.arguments
            ));
        }
        if entry["text"].as_str() != Some(prompt.text.as_str()) {
            return Err(format!("its prompt {}'s text is not the server's", prompt.name));
        }
    }
    Ok(())
}

fn check_template(template: &Value, package: &Package, tools: &[(&str, bool)]) -> Result<(), String> {
    for (key, want) in [
        ("name", &package.name),
        ("version", &package.version),
        ("description", &package.description),
        ("license", &package.license),
    ] {
        if template[key].as_str() != Some(want.as_str()) {
            return Err(format!("its {key} is {} but Cargo.toml says {want:?}", template[key]));
        }
    }
    let listed: Vec<&str> =
        template["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    let names: Vec<&str> = tools.iter().map(|(name, _)| *name).collect();
    if listed != names {
        return Err(format!("it lists the tools {listed:?}, the tool table has {names:?}"));
    }
    let reads = tools.iter().filter(|(_, writes)| !writes).count();
    let described = template["user_config"]["read_only"]["description"].as_str().unwrap_or_default();
    if !described.contains(&format!("Offer only the {reads} tools that read.")) {
        return Err(format!("its read-only setting does not say that {reads} tools remain"));
    }
    if template["server"]["type"] != "binary" || template["compatibility"]["platforms"] != json!([]) {
        return Err("it should be a binary server that claims no platform until packed".into());
    }
    configuration_cannot_lie(template)
}

/// The settings a person can change must reach the server in a form it
/// reads correctly in every state (docs/contract-notes.md, note 23): only the
/// read-only checkbox, with a default so it never arrives unset, passed as
/// `--read-only=…`, and no environment the host fills from a setting (a
/// checkbox mapped to RESMON_MCP_READ_ONLY would arrive as "true" and leave
/// every write on; an unset optional value arrives as its placeholder).
fn configuration_cannot_lie(template: &Value) -> Result<(), String> {
    let settings: Vec<&String> =
        template["user_config"].as_object().map(|map| map.keys().collect()).unwrap_or_default();
    if settings != ["read_only"] {
        return Err(format!(
            "it offers the settings {settings:?}; only read_only is read correctly in every state"
        ));
    }
    let read_only = &template["user_config"]["read_only"];
    if read_only["type"] != "boolean" || !read_only["default"].is_boolean() {
        return Err("its read_only setting must be a boolean with a default".into());
    }
    let config = &template["server"]["mcp_config"];
    if config["args"] != json!(["--read-only=${user_config.read_only}"]) {
        return Err(format!(
            "its arguments are {}, not --read-only=${{user_config.read_only}}",
            config["args"]
        ));
    }
    if config["env"].as_object().is_some_and(|env| !env.is_empty()) {
        return Err(format!(
            "it passes the environment {}, which a setting could fill wrongly",
            config["env"]
        ));
    }
    Ok(())
}

/// The manifest for a bundle holding `binaries` (platform, path inside the
/// bundle). Every platform gets its own launch command; the base command is
/// the first one's, which a host uses only for a platform not overridden,
/// and `compatibility.platforms` keeps hosts from choosing any such platform.
pub fn fill(template: &Value, binaries: &[(Platform, String)]) -> anyhow::Result<Value> {
    let (_, first) = binaries.first().context("a bundle needs at least one binary")?;
    let mut manifest = template.clone();
    let server = &mut manifest["server"];
    server["entry_point"] = json!(first);
    server["mcp_config"]["command"] = json!(format!("${{__dirname}}/{first}"));
    let mut overrides = Map::new();
    for (platform, path) in binaries {
        anyhow::ensure!(!overrides.contains_key(platform.key()), "two binaries for {}", platform.key());
        overrides.insert(platform.key().to_string(), json!({"command": format!("${{__dirname}}/{path}")}));
    }
    server["mcp_config"]["platform_overrides"] = Value::Object(overrides);
    manifest["compatibility"]["platforms"] =
        json!(binaries.iter().map(|(platform, _)| platform.key()).collect::<Vec<_>>());
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package() -> Package {
        Package {
            name: "resmon-mcp".into(),
            version: "0.1.0".into(),
            description: "d".into(),
            license: "MIT OR Apache-2.0".into(),
            repository: "https://github.com/o/resmon-mcp".into(),
        }
    }

    fn template() -> Value {
        json!({
            "name": "resmon-mcp", "version": "0.1.0", "description": "d", "license": "MIT OR Apache-2.0",
            "server": {"type": "binary", "entry_point": "server/resmon-mcp", "mcp_config": {
                "command": "${__dirname}/server/resmon-mcp", "args": ["--read-only=${user_config.read_only}"], "env": {}}},
            "tools": [{"name": "health"}, {"name": "run_sweep"}],
            "compatibility": {"platforms": []},
            "user_config": {"read_only": {"type": "boolean", "default": false,
                "description": "Offer only the 1 tools that read."}}
        })
    }

    #[test]
    fn the_checked_in_template_matches_this_workspace() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let workspace = crate::workspace::load().unwrap();
        load_template(root, &workspace.package).unwrap();
    }

    #[test]
    fn a_stale_template_is_refused_with_what_differs() {
        let tools = [("health", false), ("run_sweep", true)];
        assert_eq!(check_template(&template(), &package(), &tools), Ok(()));
        let newer = Package { version: "0.2.0".into(), ..package() };
        assert!(check_template(&template(), &newer, &tools).unwrap_err().contains("version"));
        let more = [("health", false), ("run_sweep", true), ("get_routine", false)];
        assert!(check_template(&template(), &package(), &more).unwrap_err().contains("tools"));
        let mut claimed = template();
        claimed["compatibility"]["platforms"] = json!(["linux"]);
        assert!(check_template(&claimed, &package(), &tools).is_err());
    }

    #[test]
    fn prompts_that_differ_from_the_server_s_are_refused() {
        let served = || {
            vec![DeclaredPrompt {
                name: "paper".into(),
                arguments: vec!["doc_id".into()],
                text: "Paper ${arguments.doc_id}.".into(),
            }]
        };
        let mut manifest = template();
        manifest["prompts"] =
            json!([{"name": "paper", "arguments": ["doc_id"], "text": "Paper ${arguments.doc_id}."}]);
        assert_eq!(check_prompts(&manifest, &served()), Ok(()));
        assert!(check_prompts(&template(), &served()).unwrap_err().contains("prompts"), "none declared");
        let mut renamed = manifest.clone();
        renamed["prompts"][0]["arguments"] = json!(["id"]);
        assert!(check_prompts(&renamed, &served()).unwrap_err().contains("takes"));
        let mut edited = manifest.clone();
        edited["prompts"][0]["text"] = json!("Paper.");
        assert!(check_prompts(&edited, &served()).unwrap_err().contains("text"));
        let mut more = served();
        more.push(DeclaredPrompt { name: "export".into(), arguments: vec![], text: String::new() });
        assert!(check_prompts(&manifest, &more).unwrap_err().contains("export"));
    }

    /// The checked-in template passes, and a text that writes a blank
    /// where the server writes its default does not.
    #[test]
    fn a_prompt_left_blank_reads_as_the_server_serves_it() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(TEMPLATE);
        let manifest: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(check_blank_rendering(&manifest), Ok(()));
        let mut older = manifest.clone();
        let recent =
            older["prompts"].as_array_mut().unwrap().iter_mut().find(|p| p["name"] == "recent").unwrap();
        recent["text"] = json!(recent["text"].as_str().unwrap().replace(" (blank means 7)", ""));
        assert!(check_blank_rendering(&older).unwrap_err().contains("recent"));
    }

    #[test]
    fn a_template_whose_settings_could_lie_is_refused() {
        let tools = [("health", false), ("run_sweep", true)];
        let mut env = template();
        env["server"]["mcp_config"]["env"] = json!({"RESMON_MCP_READ_ONLY": "${user_config.read_only}"});
        assert!(check_template(&env, &package(), &tools).unwrap_err().contains("environment"));
        let mut port = template();
        port["user_config"]["port"] = json!({"type": "number", "required": false});
        assert!(check_template(&port, &package(), &tools).unwrap_err().contains("settings"));
        let mut no_default = template();
        no_default["user_config"]["read_only"].as_object_mut().unwrap().remove("default");
        assert!(check_template(&no_default, &package(), &tools).unwrap_err().contains("default"));
    }

    #[test]
    fn filling_claims_exactly_the_platforms_inside() {
        let binaries = [
            (Platform::Darwin, "server/darwin-universal/resmon-mcp".to_string()),
            (Platform::Win32, "server/win32-x86_64/resmon-mcp.exe".to_string()),
        ];
        let manifest = fill(&template(), &binaries).unwrap();
        assert_eq!(manifest["compatibility"]["platforms"], json!(["darwin", "win32"]));
        let config = &manifest["server"]["mcp_config"];
        assert_eq!(
            config["platform_overrides"]["win32"]["command"],
            "${__dirname}/server/win32-x86_64/resmon-mcp.exe"
        );
        assert_eq!(
            config["platform_overrides"]["darwin"]["command"],
            "${__dirname}/server/darwin-universal/resmon-mcp"
        );
        assert!(config["platform_overrides"].get("linux").is_none());
        assert_eq!(config["command"], "${__dirname}/server/darwin-universal/resmon-mcp");
        assert_eq!(manifest["server"]["entry_point"], "server/darwin-universal/resmon-mcp");
        assert_eq!(
            config["args"],
            template()["server"]["mcp_config"]["args"],
            "the template's arguments stay"
        );
        assert!(fill(&template(), &[]).is_err());
        let twice = [binaries[0].clone(), binaries[0].clone()];
        assert!(fill(&template(), &twice).is_err());
    }
}
