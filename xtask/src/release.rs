//! bundle/release.json: where a release is published, the one setting that
//! every registry artifact reads (the npm packages, the wheels, server.json).
//! Whoever releases fills it in, and Cargo.toml's `repository` with it; the
//! check below refuses the two when they disagree, so no artifact can name
//! one repository while another names a different one.

use std::path::Path;

use anyhow::Context;
use serde_json::Value;

use crate::workspace::Package;

pub const SETTING: &str = "bundle/release.json";
/// What the checked-in setting says until someone fills it in.
const PLACEHOLDER_OWNER: &str = "OWNER";
const KEYS: [&str; 3] = ["registry_name", "repository", "release_assets"];

#[derive(Debug)]
pub struct Release {
    /// The MCP Registry's name for the server, `io.github.<owner>/<name>`.
    pub registry_name: String,
    /// The source repository, as Cargo.toml's `repository` gives it.
    pub repository: String,
    /// Where the release's files can be downloaded, with `{version}` in it.
    assets: String,
    pub version: String,
}

impl Release {
    /// The download address of one file attached to this version's release.
    pub fn asset_url(&self, file: &str) -> String {
        format!("{}/{file}", self.assets.replace("{version}", &self.version).trim_end_matches('/'))
    }

    /// Whether the setting still holds the placeholder owner: fine for
    /// building and testing, not for publishing.
    pub fn is_placeholder(&self) -> bool {
        self.registry_name.contains(PLACEHOLDER_OWNER)
    }
}

pub fn load(root: &Path, package: &Package) -> anyhow::Result<Release> {
    let path = root.join(SETTING);
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{SETTING} is not JSON"))?;
    parse(&value, package).map_err(|why| anyhow::anyhow!("{SETTING}: {why}"))
}

fn parse(value: &Value, package: &Package) -> Result<Release, String> {
    let object = value.as_object().ok_or("it is not a JSON object")?;
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut wanted = KEYS;
    wanted.sort_unstable();
    if keys != wanted {
        return Err(format!("it has the keys {keys:?}; it should have exactly {wanted:?}"));
    }
    let text = |key: &str| object[key].as_str().map(str::to_string).ok_or(format!("{key} is not a string"));
    let release = Release {
        registry_name: text("registry_name")?,
        repository: text("repository")?,
        assets: text("release_assets")?,
        version: package.version.clone(),
    };
    if release.repository != package.repository {
        return Err(format!(
            "its repository is {:?} but Cargo.toml's is {:?}; fill in both with the same address",
            release.repository, package.repository
        ));
    }
    let owner = release
        .repository
        .strip_prefix("https://github.com/")
        .and_then(|rest| rest.split('/').next())
        .filter(|owner| !owner.is_empty())
        .ok_or(format!(
            "its repository {:?} is not a https://github.com/<owner>/<name> address, which the registry name \
             io.github.<owner>/... is proven by",
            release.repository
        ))?;
    let expected = format!("io.github.{owner}/{}", package.name);
    if !release.registry_name.eq_ignore_ascii_case(&expected) {
        return Err(format!(
            "its registry_name is {:?}; for the repository {:?} it must be {expected:?}",
            release.registry_name, release.repository
        ));
    }
    if !release.assets.starts_with("https://") || !release.assets.contains("{version}") {
        return Err(format!(
            "its release_assets {:?} must be an https:// address with {{version}} where the version goes",
            release.assets
        ));
    }
    // The release workflow attaches the files to this repository's release,
    // so server.json's download address must lie there too.
    let releases = format!("{}/releases/", release.repository.trim_end_matches('/'));
    if !release.assets.starts_with(&releases) {
        return Err(format!(
            "its release_assets {:?} is not an address of its repository's releases ({releases}...); \
             for a GitHub release it is {releases}download/v{{version}}",
            release.assets
        ));
    }
    Ok(release)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn package() -> Package {
        Package {
            name: "resmon-mcp".into(),
            version: "1.2.3".into(),
            description: "d".into(),
            license: "MIT OR Apache-2.0".into(),
            repository: "https://github.com/ada/resmon-mcp".into(),
        }
    }

    fn setting() -> Value {
        json!({
            "registry_name": "io.github.ada/resmon-mcp",
            "repository": "https://github.com/ada/resmon-mcp",
            "release_assets": "https://github.com/ada/resmon-mcp/releases/download/v{version}"
        })
    }

    #[test]
    fn the_checked_in_setting_agrees_with_cargo_toml() {
        let workspace = crate::workspace::load().unwrap();
        let release = load(&workspace.root, &workspace.package).unwrap();
        assert_eq!(release.version, workspace.package.version);
        assert!(release.asset_url("x.mcpb").ends_with(&format!("/v{}/x.mcpb", workspace.package.version)));
    }

    #[test]
    fn a_filled_in_setting_gives_the_names_and_addresses() {
        let release = parse(&setting(), &package()).unwrap();
        assert_eq!(
            release.asset_url("resmon-mcp-1.2.3.mcpb"),
            "https://github.com/ada/resmon-mcp/releases/download/v1.2.3/resmon-mcp-1.2.3.mcpb"
        );
        assert!(!release.is_placeholder());
    }

    #[test]
    fn a_setting_that_disagrees_is_refused_with_what_differs() {
        let other = Package { repository: "https://github.com/bob/resmon-mcp".into(), ..package() };
        assert!(parse(&setting(), &other).unwrap_err().contains("Cargo.toml"));
        let mut name = setting();
        name["registry_name"] = json!("io.github.bob/resmon-mcp");
        assert!(parse(&name, &package()).unwrap_err().contains("io.github.ada/resmon-mcp"));
        let mut assets = setting();
        assets["release_assets"] = json!("https://github.com/ada/resmon-mcp/releases/latest");
        assert!(parse(&assets, &package()).unwrap_err().contains("{version}"));
        assets["release_assets"] = json!("https://github.com/bob/resmon-mcp/releases/download/v{version}");
        let elsewhere = parse(&assets, &package()).unwrap_err();
        assert!(
            elsewhere.contains("https://github.com/ada/resmon-mcp/releases/download/v{version}"),
            "{elsewhere}"
        );
        let mut extra = setting();
        extra["owner"] = json!("ada");
        assert!(parse(&extra, &package()).unwrap_err().contains("keys"));
    }
}
