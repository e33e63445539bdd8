//! server.json, the MCP Registry's description of the server: a template in
//! bundle/server.json holds what a person writes (the title, each
//! environment variable's description); packing fills in the rest from
//! Cargo.toml, bundle/release.json and the bundle that was built, so the
//! registry names exactly the packages and file this run wrote.

use std::path::Path;

use anyhow::Context;
use serde_json::{Value, json};

use crate::release::Release;
use crate::workspace::Package;

pub const TEMPLATE: &str = "bundle/server.json";
/// Every variable a person may set for the server, in the order a reader
/// meets them (docs/setup.md's table). The launcher's own variables are
/// not among them: npm's launcher sets those.
pub const VARIABLES: [&str; 6] = [
    "RESMON_PORT_FILE",
    "RESMON_PORT",
    "RESMON_STATE_DIR",
    "RESMON_DB_PATH",
    "RESMON_MCP_READ_ONLY",
    "RESMON_MCP_TIMEOUT_MS",
];
/// What the registry's schema allows a description.
const DESCRIPTION_MAX: usize = 100;

pub fn load_template(root: &Path) -> anyhow::Result<Value> {
    let path = root.join(TEMPLATE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let template: Value = serde_json::from_str(&text).with_context(|| format!("{TEMPLATE} is not JSON"))?;
    check_template(&template).map_err(|why| anyhow::anyhow!("{TEMPLATE}: {why}"))?;
    Ok(template)
}

/// The template offers an npm, a PyPI and an MCP Bundle package, each run
/// over stdio, each describing the same variables: exactly `VARIABLES`.
fn check_template(template: &Value) -> Result<(), String> {
    let packages = template["packages"].as_array().ok_or("it has no packages list")?;
    let kinds: Vec<&str> = packages.iter().filter_map(|p| p["registryType"].as_str()).collect();
    if kinds != ["npm", "pypi", "mcpb"] {
        return Err(format!("its packages are {kinds:?}, not npm, pypi and mcpb"));
    }
    for package in packages {
        let kind = package["registryType"].as_str().unwrap_or_default();
        if package["transport"] != json!({"type": "stdio"}) {
            return Err(format!("its {kind} package is not run over stdio"));
        }
        let variables = package["environmentVariables"].as_array().map(Vec::as_slice).unwrap_or_default();
        let names: Vec<&str> = variables.iter().filter_map(|v| v["name"].as_str()).collect();
        if names != VARIABLES {
            return Err(format!("its {kind} package describes the variables {names:?}, not {VARIABLES:?}"));
        }
        if let Some(bare) = variables.iter().find(|v| v["description"].as_str().is_none_or(str::is_empty)) {
            return Err(format!("its {kind} package does not describe {}", bare["name"]));
        }
        if package["environmentVariables"] != packages[0]["environmentVariables"] {
            return Err(format!("its {kind} package describes the variables differently from the npm one"));
        }
    }
    Ok(())
}

/// server.json for this run: `bundle` is the MCP Bundle the registry should
/// offer (its file name and SHA-256).
pub fn fill(
    template: &Value,
    package: &Package,
    release: &Release,
    python_version: &str,
    bundle: (&str, &str),
) -> anyhow::Result<Value> {
    anyhow::ensure!(
        package.description.chars().count() <= DESCRIPTION_MAX,
        "Cargo.toml's description is longer than the registry's {DESCRIPTION_MAX} characters"
    );
    let mut server = template.clone();
    server["name"] = json!(release.registry_name);
    server["description"] = json!(package.description);
    server["repository"]["url"] = json!(release.repository);
    server["version"] = json!(package.version);
    let (file, sha256) = bundle;
    for entry in server["packages"].as_array_mut().into_iter().flatten() {
        match entry["registryType"].as_str() {
            Some("npm") => {
                entry["identifier"] = json!(package.name);
                entry["version"] = json!(package.version);
            }
            Some("pypi") => {
                entry["identifier"] = json!(package.name);
                entry["version"] = json!(python_version);
            }
            Some("mcpb") => {
                entry["identifier"] = json!(release.asset_url(file));
                entry["version"] = json!(package.version);
                entry["fileSha256"] = json!(sha256);
            }
            other => anyhow::bail!("{TEMPLATE} has a package of type {other:?}"),
        }
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> Value {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        load_template(root).unwrap()
    }

    #[test]
    fn the_checked_in_template_describes_every_variable_for_every_package() {
        let mut fewer = template();
        fewer["packages"][1]["environmentVariables"].as_array_mut().unwrap().pop();
        assert!(check_template(&fewer).unwrap_err().contains("pypi"));
        let mut bare = template();
        bare["packages"][2]["environmentVariables"][0]["description"] = json!("");
        assert!(check_template(&bare).unwrap_err().contains("RESMON_PORT_FILE"));
        let mut http = template();
        http["packages"][0]["transport"] = json!({"type": "streamable-http", "url": "http://127.0.0.1"});
        assert!(check_template(&http).unwrap_err().contains("stdio"));
        let mut reworded = template();
        reworded["packages"][2]["environmentVariables"][1]["description"] = json!("another text");
        assert!(check_template(&reworded).unwrap_err().contains("differently"));
    }

    #[test]
    fn filling_names_this_version_s_packages_and_bundle() {
        let workspace = crate::workspace::load().unwrap();
        let release = crate::release::load(&workspace.root, &workspace.package).unwrap();
        let version = &workspace.package.version;
        let server = fill(&template(), &workspace.package, &release, "0.1.0rc1", ("b.mcpb", "ab")).unwrap();
        assert_eq!(server["name"], json!(release.registry_name));
        assert_eq!(server["version"], json!(version));
        assert_eq!(server["packages"][0]["version"], json!(version));
        assert_eq!(server["packages"][1]["version"], "0.1.0rc1");
        assert_eq!(server["packages"][2]["identifier"], json!(release.asset_url("b.mcpb")));
        assert_eq!(server["packages"][2]["fileSha256"], "ab");
    }
}
