//! Packaging tasks for resmon-mcp, run as `cargo xtask <task>` (the alias is
//! in .cargo/config.toml; docs/packaging.md says what each file is for).

mod archive;
mod build;
mod docs;
mod inspect;
mod manifest;
mod npm;
mod packages;
mod registry;
mod release;
mod universal;
mod wheel;
mod workspace;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::Context;
use sha2::{Digest, Sha256};

use build::{Builder, Built, NotBuilt, Platform};
use workspace::Workspace;

const HELP: &str = "\
cargo xtask: packaging tasks for resmon-mcp

Usage:
  cargo xtask bundle            the MCP Bundle for this platform, its binary's
                                archive, the crate, a wheel and npm packages for
                                it, server.json and SHA256SUMS, in target/bundle/
  cargo xtask bundle --all      also every platform this machine can build for
                                (Linux x86_64 static, macOS universal, Windows
                                x86_64) and one bundle holding them all
  cargo xtask bundle --strict   with --all: exit 1 when any platform is missing
  cargo xtask bundle --all --prebuilt DIR
                                pack binaries built elsewhere instead of building:
                                DIR/<target>/resmon-mcp[.exe], <target> being
                                x86_64-unknown-linux-musl, universal-apple-darwin,
                                x86_64-pc-windows-msvc or -gnu (the release does this)

Cross builds need each target's standard library (rustup target add ...) and,
for macOS and (without MinGW-w64) Windows, cargo-zigbuild with zig:
  pip install cargo-zigbuild ziglang
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    let rest: Vec<String> = args.collect();
    let result = match task.as_deref() {
        Some("bundle") => parse_bundle(&rest).and_then(bundle),
        None | Some("help" | "--help" | "-h") => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(anyhow::anyhow!("no task named {other:?}\n\n{HELP}")),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::from(1)
        }
    }
}

struct Options {
    all: bool,
    strict: bool,
    prebuilt: Option<PathBuf>,
}

fn parse_bundle(args: &[String]) -> anyhow::Result<Options> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut options = Options { all: false, strict: false, prebuilt: None };
    while let Some(arg) = parser.next()? {
        match arg {
            lexopt::Arg::Long("all") => options.all = true,
            lexopt::Arg::Long("strict") => options.strict = true,
            lexopt::Arg::Long("prebuilt") => options.prebuilt = Some(parser.value()?.into()),
            other => return Err(other.unexpected().into()),
        }
    }
    anyhow::ensure!(!options.strict || options.all, "--strict goes with --all");
    anyhow::ensure!(options.prebuilt.is_none() || options.all, "--prebuilt goes with --all");
    Ok(options)
}

/// One file written into target/bundle/, for the closing note.
pub struct Written {
    pub name: String,
    pub size: usize,
    pub what: String,
}

fn bundle(options: Options) -> anyhow::Result<ExitCode> {
    let Options { all, strict, prebuilt } = options;
    let workspace = workspace::load()?;
    let template = manifest::load_template(&workspace.root, &workspace.package)?;
    let release = release::load(&workspace.root, &workspace.package)?;
    let mtime = source_date(&workspace.root);
    let mut builder = Builder::new(&workspace, prebuilt)?;

    let host = builder
        .host()
        .map_err(|not| anyhow::anyhow!("the {} binary was not built: {}", not.what, not.why))?;
    let mut missing: Vec<NotBuilt> = Vec::new();
    // One binary per platform for the bundle holding them all.
    let mut every: Vec<Built> = Vec::new();
    if all {
        for result in [builder.macos(), builder.windows(), builder.linux()] {
            match result {
                Ok(built) => every.push(built),
                Err(not) => missing.push(not),
            }
        }
    }

    let out = workspace.target_dir.join("bundle");
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("cannot clear {}", out.display()))?;
    }
    std::fs::create_dir_all(&out)?;
    let docs = docs::read(&workspace.root, &release)?;
    let version = &workspace.package.version;
    let mut written = Vec::new();

    let host_name = format!("resmon-mcp-{version}.mcpb");
    written.push(write_bundle(&out, &host_name, &template, std::slice::from_ref(&host), &docs, mtime)?);
    let universal = every.len() > 1 || every.first().is_some_and(|built| built.platform != host.platform);
    let mut offered = host_name;
    if universal {
        let name = format!("resmon-mcp-{version}-universal.mcpb");
        written.push(write_bundle(&out, &name, &template, &every, &docs, mtime)?);
        offered = name;
    }

    let mut archived: Vec<&Built> = vec![&host];
    for built in &every {
        if archived.iter().all(|done| done.triple != built.triple) {
            archived.push(built);
        }
    }
    for built in &archived {
        written.push(write_archive(&out, version, built, &docs, mtime)?);
    }
    let (registry_files, skipped) = packages::write_all(&packages::Inputs {
        workspace: &workspace,
        release: &release,
        out: &out,
        binaries: &archived,
        bundle: &offered,
        mtime,
    })?;
    written.extend(registry_files);
    let sums: String = written
        .iter()
        .map(|file| Ok(format!("{}  {}\n", sha256_hex(&out.join(&file.name))?, file.name)))
        .collect::<anyhow::Result<_>>()?;
    std::fs::write(out.join("SHA256SUMS"), &sums)?;
    written.push(Written {
        name: "SHA256SUMS".into(),
        size: sums.len(),
        what: "sha256sum -c SHA256SUMS".into(),
    });

    print_note(&workspace, &builder, &out, &archived, &missing, &written, all && !universal);
    if !skipped.is_empty() {
        println!("not written:");
        for item in &skipped {
            let kind = if item.failed { "FAILED" } else { "skipped" };
            println!("  {:<18} {kind}: {}", item.what, item.why);
        }
    }
    let failed = missing.iter().any(|not| not.failed) || skipped.iter().any(|item| item.failed);
    Ok(if failed || (strict && !missing.is_empty()) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn in_bundle(built: &Built) -> String {
    format!("server/{}/{}", built.label, built.platform.executable())
}

fn write_bundle(
    out: &Path,
    name: &str,
    template: &serde_json::Value,
    binaries: &[Built],
    docs: &[(String, Vec<u8>)],
    mtime: u64,
) -> anyhow::Result<Written> {
    let placed: Vec<(Platform, String)> =
        binaries.iter().map(|built| (built.platform, in_bundle(built))).collect();
    let manifest = manifest::fill(template, &placed)?;
    let mut entries = vec![archive::Entry::file("manifest.json", format!("{manifest:#}\n").into_bytes())];
    for built in binaries {
        entries.push(archive::Entry::executable(in_bundle(built), std::fs::read(&built.file)?));
    }
    entries.extend(docs.iter().map(|(name, data)| archive::Entry::file(name.clone(), data.clone())));
    let bytes = archive::zip(&entries, mtime)?;
    std::fs::write(out.join(name), &bytes)?;
    let platforms: Vec<&str> = binaries.iter().map(|built| built.platform.key()).collect();
    Ok(Written {
        name: name.to_string(),
        size: bytes.len(),
        what: format!("bundle for {}", platforms.join(", ")),
    })
}

/// `resmon-mcp-<version>-<triple>.tar.gz` (or `.zip` for Windows), holding a
/// folder of the same name with the binary, the README, the user pages it
/// links to (docs.rs) and the licences.
fn write_archive(
    out: &Path,
    version: &str,
    built: &Built,
    docs: &[(String, Vec<u8>)],
    mtime: u64,
) -> anyhow::Result<Written> {
    let folder = format!("resmon-mcp-{version}-{}", built.triple);
    let binary = std::fs::read(&built.file)?;
    let (name, bytes) = if built.platform == Platform::Win32 {
        let mut entries = vec![archive::Entry::executable(format!("{folder}/resmon-mcp.exe"), binary)];
        entries.extend(
            docs.iter().map(|(name, data)| archive::Entry::file(format!("{folder}/{name}"), data.clone())),
        );
        (format!("{folder}.zip"), archive::zip(&entries, mtime)?)
    } else {
        let mut entries = vec![archive::Entry::executable("resmon-mcp", binary)];
        entries.extend(docs.iter().map(|(name, data)| archive::Entry::file(name.clone(), data.clone())));
        (format!("{folder}.tar.gz"), archive::tar_gz(&folder, &entries, mtime)?)
    };
    std::fs::write(out.join(&name), &bytes)?;
    Ok(Written { name, size: bytes.len(), what: format!("bare binary, {}", built.label) })
}

/// The archives' timestamp: SOURCE_DATE_EPOCH when set (the reproducible
/// builds convention), else the last commit's time, else 1980-01-01.
fn source_date(root: &Path) -> u64 {
    if let Some(seconds) = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|text| text.trim().parse().ok()) {
        return seconds;
    }
    Command::new("git")
        .args(["log", "-1", "--format=%ct"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok()?.trim().parse().ok())
        .unwrap_or(315_532_800)
}

/// The SHA-256 of a file this run wrote. A file that cannot be read is an
/// error: the hash of nothing would go into SHA256SUMS and server.json as if
/// it were the file's.
fn sha256_hex(path: &Path) -> anyhow::Result<String> {
    let data = std::fs::read(path).with_context(|| format!("cannot read {} to hash it", path.display()))?;
    Ok(Sha256::digest(&data).iter().map(|byte| format!("{byte:02x}")).collect())
}

fn size(bytes: u64) -> String {
    if bytes < 10_000 {
        format!("{bytes} bytes")
    } else {
        format!("{:.2} MB ({bytes} bytes)", bytes as f64 / 1_000_000.0)
    }
}

fn print_note(
    workspace: &Workspace,
    builder: &Builder,
    out: &Path,
    built: &[&Built],
    missing: &[NotBuilt],
    written: &[Written],
    no_universal: bool,
) {
    let shown = out.strip_prefix(&workspace.root).unwrap_or(out);
    println!(
        "== resmon-mcp {} (host {}): {}/",
        workspace.package.version,
        builder.host_triple(),
        shown.display()
    );
    println!("binaries:");
    for binary in built {
        let bytes = std::fs::metadata(&binary.file).map(|meta| meta.len()).unwrap_or(0);
        println!("  {:<18} {:<28} {}  {}", binary.label, binary.triple, size(bytes), binary.notes);
    }
    if !missing.is_empty() {
        println!("not built:");
        for not in missing {
            let kind = if not.failed { "FAILED" } else { "skipped" };
            println!("  {:<18} {kind}: {}", not.what, not.why);
        }
    }
    if no_universal {
        println!("no universal bundle: nothing beyond the host platform was built");
    }
    println!("files:");
    for file in written {
        println!("  {:<52} {}  {}", file.name, size(file.size as u64), file.what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_hashed_and_one_that_cannot_be_read_is_an_error() {
        let file = std::env::temp_dir().join(format!("xtask-sha256-{}", std::process::id()));
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(
            sha256_hex(&file).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::remove_file(&file).unwrap();
        let missing = sha256_hex(&file).unwrap_err();
        assert!(format!("{missing:#}").contains("cannot read"), "{missing:#}");
    }
}
