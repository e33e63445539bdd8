//! What the package registries take, written beside the bundles and
//! archives: the crate (crates.io), a wheel per platform (PyPI), the npm
//! launcher and a package per platform (npm), and server.json (the MCP
//! Registry). Each wheel and npm package holds the very binary its platform's
//! archive holds. None of it needs Node.js or Python; what cannot be written
//! is named with the reason, as a platform that could not be built is.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;

use crate::build::Built;
use crate::release::Release;
use crate::workspace::Workspace;
use crate::{Written, docs, npm, registry, wheel};

/// The README of the npm launcher and of the wheels.
pub const README: &str = "bundle/package-readme.md";

/// Something this run did not write, and why.
pub struct Skipped {
    pub what: String,
    pub why: String,
    /// A step that should have worked failed: the run exits 1.
    pub failed: bool,
}

pub struct Inputs<'a> {
    pub workspace: &'a Workspace,
    pub release: &'a Release,
    pub out: &'a Path,
    /// One binary per platform, as the archives hold them.
    pub binaries: &'a [&'a Built],
    /// The bundle server.json offers: the universal one when it was written.
    pub bundle: &'a str,
    pub mtime: u64,
}

pub fn write_all(inputs: &Inputs) -> anyhow::Result<(Vec<Written>, Vec<Skipped>)> {
    let root = &inputs.workspace.root;
    let package = &inputs.workspace.package;
    let template = registry::load_template(root)?;
    let script =
        std::fs::read(root.join(npm::LAUNCHER)).with_context(|| format!("cannot read {}", npm::LAUNCHER))?;
    let readme = std::fs::read_to_string(root.join(README))
        .with_context(|| format!("cannot read {README}"))?
        .replace("{repository}", &inputs.release.repository)
        .replace("{version}", &package.version)
        .replace("{registry_name}", &inputs.release.registry_name);
    let licences: Vec<(String, Vec<u8>)> = docs::LICENCES
        .iter()
        .map(|name| {
            Ok((
                name.to_string(),
                std::fs::read(root.join(name)).with_context(|| format!("cannot read {name}"))?,
            ))
        })
        .collect::<anyhow::Result<_>>()?;
    let python_version = wheel::python_version(&package.version).map_err(anyhow::Error::msg)?;
    let mut written = Vec::new();
    let mut skipped = Vec::new();

    match crate_file(inputs.workspace, inputs.out) {
        Ok(file) => written.push(file),
        Err(why) => skipped.push(Skipped { what: "crate".into(), why, failed: true }),
    }

    let mut targets = Vec::new();
    for built in inputs.binaries {
        let binary = std::fs::read(&built.file)?;
        match wheel::wheel(package, inputs.release, built, &binary, &readme, &licences, inputs.mtime) {
            Ok((name, bytes)) => {
                written.push(put(inputs.out, name, &bytes, format!("wheel, {}", built.label))?)
            }
            Err(why) => skipped.push(Skipped { what: format!("wheel {}", built.label), why, failed: false }),
        }
        match npm::target(package, built, &binary) {
            Ok(target) => {
                let (name, bytes) = npm::platform_package(
                    package,
                    inputs.release,
                    built,
                    &target,
                    &binary,
                    &licences,
                    inputs.mtime,
                )?;
                written.push(put(inputs.out, name, &bytes, format!("npm package {}", target.name))?);
                targets.push(target);
            }
            Err(why) => skipped.push(Skipped { what: format!("npm {}", built.label), why, failed: false }),
        }
    }
    if targets.is_empty() {
        skipped.push(Skipped {
            what: "npm launcher".into(),
            why: "no platform package was written for it to start".into(),
            failed: false,
        });
    } else {
        let (name, bytes) = npm::launcher_package(
            package,
            inputs.release,
            &targets,
            &script,
            &readme,
            &licences,
            inputs.mtime,
        )?;
        let names: Vec<&str> = targets.iter().map(|target| target.name.as_str()).collect();
        written.push(put(inputs.out, name, &bytes, format!("npm launcher for {}", names.join(", ")))?);
    }

    let sha256 = crate::sha256_hex(&inputs.out.join(inputs.bundle))?;
    let server =
        registry::fill(&template, package, inputs.release, &python_version, (inputs.bundle, &sha256))?;
    let what = if inputs.release.is_placeholder() {
        format!("MCP Registry entry (offers {}; bundle/release.json not filled in yet)", inputs.bundle)
    } else {
        format!("MCP Registry entry (offers {})", inputs.bundle)
    };
    written.push(put(inputs.out, "server.json".into(), format!("{server:#}\n").as_bytes(), what)?);
    Ok((written, skipped))
}

fn put(out: &Path, name: String, bytes: &[u8], what: String) -> anyhow::Result<Written> {
    std::fs::write(out.join(&name), bytes).with_context(|| format!("cannot write {name}"))?;
    Ok(Written { name, size: bytes.len(), what })
}

/// `cargo package` of the server, copied into the output folder. Not
/// verified here (that is a full build; CI installs from the unpacked file
/// instead), and allowed from a working tree with changes, which the crate's
/// `.cargo_vcs_info.json` then records.
fn crate_file(workspace: &Workspace, out: &Path) -> Result<Written, String> {
    let output = Command::new(&workspace.cargo)
        .args(["package", "--locked", "--no-verify", "--allow-dirty", "--package", "resmon-mcp"])
        .current_dir(&workspace.root)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("could not run cargo package: {error}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(format!(
            "cargo package exited with {}: {}",
            output.status,
            last.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let name = format!("resmon-mcp-{}.crate", workspace.package.version);
    let packaged = workspace.target_dir.join("package").join(&name);
    let bytes = std::fs::read(&packaged).map_err(|error| format!("{}: {error}", packaged.display()))?;
    put(out, name, &bytes, "crate, as cargo package makes it".into()).map_err(|error| format!("{error:#}"))
}
