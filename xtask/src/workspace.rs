//! Where the workspace is and what Cargo.toml says about the server, asked of
//! `cargo metadata` so that a custom target directory is honoured.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

pub struct Workspace {
    /// The cargo this task was started by (`cargo xtask` sets CARGO).
    pub cargo: PathBuf,
    pub root: PathBuf,
    pub target_dir: PathBuf,
    pub package: Package,
}

/// The server package's metadata, the fields the bundle manifest and the
/// registry packages repeat.
pub struct Package {
    pub name: String,
    pub version: String,
    pub description: String,
    pub license: String,
    /// Where the source lives; bundle/release.json must say the same.
    pub repository: String,
}

pub fn load() -> anyhow::Result<Workspace> {
    let cargo = PathBuf::from(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(here)
        .output()
        .with_context(|| format!("could not run {}", cargo.display()))?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).context("cargo metadata printed no JSON")?;
    let text = |value: &Value, key: &str| value[key].as_str().map(str::to_string);
    let root = PathBuf::from(text(&metadata, "workspace_root").context("no workspace_root")?);
    let target_dir = PathBuf::from(text(&metadata, "target_directory").context("no target_directory")?);
    let server_manifest = root.join("Cargo.toml");
    let server = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|package| package["manifest_path"].as_str().map(Path::new) == Some(&server_manifest))
        .context("the workspace root holds no package")?;
    let field = |key: &str| text(server, key).with_context(|| format!("Cargo.toml has no {key}"));
    let package = Package {
        name: field("name")?,
        version: field("version")?,
        description: field("description")?,
        license: field("license")?,
        repository: field("repository")?,
    };
    Ok(Workspace { cargo, root, target_dir, package })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version such as "1.89" or "1.85.0", as numbers to compare.
    fn version(text: &str) -> Vec<u64> {
        let mut parts: Vec<u64> = text.split('.').map(|part| part.parse().unwrap()).collect();
        parts.resize(3, 0);
        parts
    }

    /// Cargo.toml's `rust-version` is what crates.io shows as the oldest Rust
    /// that builds the crate, and `cargo install --locked` builds it with the
    /// versions in Cargo.lock. So it must be at least the newest
    /// `rust-version` among them, or a person on the stated Rust meets a
    /// refusal from a dependency instead.
    #[test]
    fn the_stated_rust_version_builds_every_locked_dependency() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--locked"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
        let packages = metadata["packages"].as_array().unwrap();
        let server = packages.iter().find(|package| package["name"] == "resmon-mcp").unwrap();
        let stated = server["rust_version"].as_str().expect("Cargo.toml states a rust-version");
        let newer: Vec<String> = packages
            .iter()
            .filter(|package| !package["source"].is_null())
            .filter_map(|package| {
                let needs = package["rust_version"].as_str()?;
                let (name, locked) = (package["name"].as_str()?, package["version"].as_str()?);
                (version(needs) > version(stated)).then(|| format!("{name} {locked} needs Rust {needs}"))
            })
            .collect();
        assert!(
            newer.is_empty(),
            "Cargo.toml says rust-version = {stated:?}, but in Cargo.lock {}; raise it to the newest of these",
            newer.join(", ")
        );
    }
}
