//! The npm packages, so that `npx -y resmon-mcp` runs the release binary the
//! way Claude Code and Codex ship theirs: one small launcher package,
//! `resmon-mcp`, whose `optionalDependencies` name one package per platform
//! built; each of those holds that platform's binary and says, in `os` and
//! `cpu`, where it applies, so npm installs exactly the one that fits. No
//! package has an install script and nothing is downloaded at install time.
//!
//! The tarballs are written here (npm's format: a gzipped tar whose entries
//! lie under `package/`), so that packing needs no Node.js.

use serde_json::{Map, Value, json};

use crate::archive;
use crate::build::{Built, Platform};
use crate::release::Release;
use crate::workspace::Package;

/// The launcher's `bin` script, checked in beside the bundle's manifest.
pub const LAUNCHER: &str = "bundle/npm/resmon-mcp.js";

/// One platform package: its name and where it applies, in Node's names
/// (`process.platform`, `process.arch`).
pub struct Target {
    pub name: String,
    pub os: &'static str,
    pub cpus: Vec<&'static str>,
}

/// The platform package for one binary. Only the static Linux binary gets
/// one, as with the wheels (wheel::platform_tags says why).
pub fn target(package: &Package, built: &Built, binary: &[u8]) -> Result<Target, String> {
    let (suffix, os, cpus) = match built.platform {
        Platform::Linux => {
            if crate::inspect::linux_x86_64_needs_loader(binary)? {
                return Err("the Linux binary is linked against this machine's glibc; an npm package that \
                            runs on any distribution needs the static one (rustup target add \
                            x86_64-unknown-linux-musl)"
                    .into());
            }
            ("linux-x64", "linux", vec!["x64"])
        }
        Platform::Darwin if built.triple == "universal-apple-darwin" => {
            ("darwin-universal", "darwin", vec!["arm64", "x64"])
        }
        Platform::Darwin => match crate::inspect::check_thin_macos(binary)?.0 {
            "arm64" => ("darwin-arm64", "darwin", vec!["arm64"]),
            _ => ("darwin-x64", "darwin", vec!["x64"]),
        },
        // Windows 11 on arm64 runs the x86_64 binary under emulation.
        Platform::Win32 => ("win32-x64", "win32", vec!["x64", "arm64"]),
    };
    Ok(Target { name: format!("{}-{suffix}", package.name), os, cpus })
}

fn common(package: &Package, release: &Release) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("version".into(), json!(package.version));
    fields.insert("license".into(), json!(package.license));
    fields.insert(
        "repository".into(),
        json!({"type": "git", "url": format!("git+{}.git", release.repository)}),
    );
    fields.insert("homepage".into(), json!(release.repository));
    fields
}

/// `<name>-<version>.tgz`, as `npm pack` names a package.
fn tarball_name(name: &str, version: &str) -> String {
    format!("{name}-{version}.tgz")
}

/// A platform package: its manifest, the binary, a short README and the licences.
pub fn platform_package(
    package: &Package,
    release: &Release,
    built: &Built,
    target: &Target,
    binary: &[u8],
    licences: &[(String, Vec<u8>)],
    mtime: u64,
) -> anyhow::Result<(String, Vec<u8>)> {
    let mut manifest = Map::new();
    manifest.insert("name".into(), json!(target.name));
    manifest.extend(common(package, release));
    manifest.insert(
        "description".into(),
        json!(format!("The resmon-mcp binary for {}; install resmon-mcp, which starts it.", built.label)),
    );
    manifest.insert("os".into(), json!([target.os]));
    manifest.insert("cpu".into(), json!(target.cpus));
    // Yarn's hint to keep the binary as a file on disk rather than in a zip.
    manifest.insert("preferUnplugged".into(), json!(true));
    let readme = format!(
        "# {}\n\nThe `resmon-mcp` binary for {}, the same file as in the release archive \
         `resmon-mcp-{}-{}`. It is started by the `resmon-mcp` package (`npx -y resmon-mcp`); \
         install that one instead.\n\nSource: {}\n",
        target.name, built.label, package.version, built.triple, release.repository
    );
    let mut entries = vec![
        archive::Entry::file("package.json", format!("{:#}\n", Value::Object(manifest)).into_bytes()),
        archive::Entry::executable(format!("bin/{}", built.platform.executable()), binary.to_vec()),
        archive::Entry::file("README.md", readme.into_bytes()),
    ];
    entries.extend(licences.iter().map(|(name, data)| archive::Entry::file(name.clone(), data.clone())));
    let bytes = archive::tar_gz("package", &entries, mtime)?;
    Ok((tarball_name(&target.name, &package.version), bytes))
}

/// The launcher package: its manifest names every platform package built
/// (exact versions) and, under `resmonMcpBinaries`, which one serves each
/// `<platform>-<arch>`, so that the script can name the one it is missing.
pub fn launcher_package(
    package: &Package,
    release: &Release,
    targets: &[Target],
    script: &[u8],
    readme: &str,
    licences: &[(String, Vec<u8>)],
    mtime: u64,
) -> anyhow::Result<(String, Vec<u8>)> {
    anyhow::ensure!(!targets.is_empty(), "the launcher needs at least one platform package");
    let mut manifest = Map::new();
    manifest.insert("name".into(), json!(package.name));
    manifest.extend(common(package, release));
    manifest.insert("description".into(), json!(package.description));
    manifest.insert("mcpName".into(), json!(release.registry_name));
    manifest.insert("keywords".into(), json!(["mcp", "mcp-server", "resmon", "claude", "codex"]));
    manifest.insert("bin".into(), json!({package.name.as_str(): "bin/resmon-mcp.js"}));
    manifest.insert("engines".into(), json!({"node": ">=18"}));
    let mut optional = Map::new();
    let mut binaries = Map::new();
    for target in targets {
        optional.insert(target.name.clone(), json!(package.version));
        for cpu in &target.cpus {
            binaries.insert(format!("{}-{cpu}", target.os), json!(target.name));
        }
    }
    manifest.insert("optionalDependencies".into(), Value::Object(optional));
    manifest.insert("resmonMcpBinaries".into(), Value::Object(binaries));
    let mut entries = vec![
        archive::Entry::file("package.json", format!("{:#}\n", Value::Object(manifest)).into_bytes()),
        archive::Entry::executable("bin/resmon-mcp.js", script.to_vec()),
        archive::Entry::file("README.md", readme.as_bytes().to_vec()),
    ];
    entries.extend(licences.iter().map(|(name, data)| archive::Entry::file(name.clone(), data.clone())));
    let bytes = archive::tar_gz("package", &entries, mtime)?;
    Ok((tarball_name(&package.name, &package.version), bytes))
}
