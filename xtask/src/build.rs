//! Which release binaries this machine can build, and building them.
//!
//! A bundle names platforms, not CPUs, so each platform gets one binary that
//! serves all of it: a static x86_64 Linux binary (musl, so any distribution
//! runs it), one universal macOS file (arm64 and x86_64), and an x86_64
//! Windows `.exe` (which Windows on Arm also runs, under emulation).
//! Anything that cannot be built here is reported with the reason and the
//! command that would fix it; a failed build is reported as a failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::workspace::Workspace;
use crate::{inspect, universal};

const MUSL: &str = "x86_64-unknown-linux-musl";
const WINDOWS_GNU: &str = "x86_64-pc-windows-gnu";
const MAC_ARM: &str = "aarch64-apple-darwin";
const MAC_INTEL: &str = "x86_64-apple-darwin";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Platform {
    Darwin,
    Win32,
    Linux,
}

impl Platform {
    /// The key bundle hosts use (Node's `process.platform`).
    pub fn key(self) -> &'static str {
        match self {
            Platform::Darwin => "darwin",
            Platform::Win32 => "win32",
            Platform::Linux => "linux",
        }
    }

    pub fn executable(self) -> &'static str {
        if self == Platform::Win32 { "resmon-mcp.exe" } else { "resmon-mcp" }
    }
}

pub struct Built {
    pub platform: Platform,
    /// The folder under `server/` in a bundle, e.g. `linux-x86_64`.
    pub label: String,
    /// Names the archive: a Rust target triple, or `universal-apple-darwin`.
    pub triple: String,
    pub file: PathBuf,
    pub notes: String,
}

pub struct NotBuilt {
    pub what: &'static str,
    pub why: String,
    /// The tools were there and the build or its check failed: an error,
    /// not a missing tool.
    pub failed: bool,
}

impl NotBuilt {
    fn missing(what: &'static str, why: impl Into<String>) -> NotBuilt {
        NotBuilt { what, why: why.into(), failed: false }
    }

    fn failed(what: &'static str, why: impl Into<String>) -> NotBuilt {
        NotBuilt { what, why: why.into(), failed: true }
    }
}

enum Linker {
    /// cargo's own build with the target's default linker.
    Native,
    /// `cargo zigbuild`, zig as the cross linker.
    Zig,
}

pub struct Builder<'a> {
    workspace: &'a Workspace,
    /// `--prebuilt DIR`: take each target's binary from DIR/<target>/
    /// instead of building it (the release builds each on its own machine).
    prebuilt: Option<PathBuf>,
    host: String,
    sysroot: PathBuf,
    /// Ok when `cargo zigbuild` can run here, else why not.
    zig: Result<(), String>,
    done: HashMap<String, PathBuf>,
}

const GET_ZIG: &str = "pip install cargo-zigbuild ziglang, with its bin folder on PATH";

impl<'a> Builder<'a> {
    pub fn new(workspace: &'a Workspace, prebuilt: Option<PathBuf>) -> anyhow::Result<Builder<'a>> {
        let rustc = |args: &[&str]| -> anyhow::Result<String> {
            let output = Command::new("rustc").args(args).current_dir(&workspace.root).output()?;
            if !output.status.success() {
                bail!("rustc {args:?} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
            }
            Ok(String::from_utf8(output.stdout)?.trim().to_string())
        };
        let version = rustc(&["-vV"]).context("could not ask rustc for the host target")?;
        let host = version
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .context("rustc -vV names no host")?
            .to_string();
        let sysroot = PathBuf::from(rustc(&["--print", "sysroot"])?);
        Ok(Builder { workspace, prebuilt, host, sysroot, zig: zig_available(), done: HashMap::new() })
    }

    pub fn host_triple(&self) -> &str {
        &self.host
    }

    /// Whether rustup (or whoever installed Rust) put `triple`'s standard
    /// library here.
    fn has_std(&self, triple: &str) -> bool {
        let dir = self.sysroot.join("lib/rustlib").join(triple).join("lib");
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with("libstd-"))
        })
    }

    fn need_std(&self, what: &'static str, triple: &str) -> Result<(), NotBuilt> {
        if self.prebuilt.is_some() || self.has_std(triple) {
            Ok(())
        } else {
            Err(NotBuilt::missing(
                what,
                format!(
                    "the Rust standard library for {triple} is not installed (rustup target add {triple})"
                ),
            ))
        }
    }

    /// `cargo build --release` (or zigbuild) of the server for one target;
    /// built once per run.
    fn cargo(&mut self, what: &'static str, triple: &str, linker: Linker) -> Result<PathBuf, NotBuilt> {
        if let Some(file) = self.done.get(triple) {
            return Ok(file.clone());
        }
        if let Some(dir) = &self.prebuilt {
            let name = if triple.contains("windows") { "resmon-mcp.exe" } else { "resmon-mcp" };
            let file = dir.join(triple).join(name);
            if !file.is_file() {
                return Err(NotBuilt::missing(what, format!("no prebuilt {}", file.display())));
            }
            self.done.insert(triple.to_string(), file.clone());
            return Ok(file);
        }
        let mut command = Command::new(&self.workspace.cargo);
        if triple.ends_with("-apple-darwin") && std::env::var_os("MACOSX_DEPLOYMENT_TARGET").is_none() {
            // zig, unlike Apple's linker, does not default to the oldest macOS
            // rustc supports: left alone, the binary demands the newest.
            let oldest = self.oldest_macos(triple).map_err(|why| NotBuilt::failed(what, why))?;
            command.env("MACOSX_DEPLOYMENT_TARGET", oldest);
        }
        let (subcommand, how) = match linker {
            Linker::Native => ("build", "cargo build"),
            Linker::Zig => ("zigbuild", "cargo zigbuild"),
        };
        eprintln!("== {what}: {how} --release --target {triple}");
        let status = command
            .args([subcommand, "--release", "--locked", "--package", "resmon-mcp", "--bin", "resmon-mcp"])
            .args(["--target", triple])
            .current_dir(&self.workspace.root)
            .stdin(Stdio::null())
            .status();
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => {
                return Err(NotBuilt::failed(what, format!("{how} --target {triple} exited with {status}")));
            }
            Err(error) => return Err(NotBuilt::failed(what, format!("could not run {how}: {error}"))),
        }
        let name = if triple.contains("windows") { "resmon-mcp.exe" } else { "resmon-mcp" };
        let file = self.workspace.target_dir.join(triple).join("release").join(name);
        if !file.is_file() {
            return Err(NotBuilt::failed(what, format!("{how} succeeded but wrote no {}", file.display())));
        }
        self.done.insert(triple.to_string(), file.clone());
        Ok(file)
    }

    /// The oldest macOS rustc builds `triple` for (its default deployment target).
    fn oldest_macos(&self, triple: &str) -> Result<String, String> {
        let output = Command::new("rustc")
            .args(["--print", "deployment-target", "--target", triple])
            .current_dir(&self.workspace.root)
            .output()
            .map_err(|error| format!("could not run rustc: {error}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        text.trim()
            .strip_prefix("MACOSX_DEPLOYMENT_TARGET=")
            .map(str::to_string)
            .ok_or_else(|| format!("rustc --print deployment-target --target {triple} said {text:?}"))
    }

    /// The binary for the machine this runs on. On x86_64 Linux it is the
    /// static musl build when that target is installed, else the host's own
    /// (glibc) build, said so in its notes.
    pub fn host(&mut self) -> Result<Built, NotBuilt> {
        let what = "host";
        let arch = std::env::consts::ARCH;
        match std::env::consts::OS {
            "linux" if arch == "x86_64" && (self.prebuilt.is_some() || self.has_std(MUSL)) => self.linux(),
            "macos" if self.has_std(MAC_ARM) && self.has_std(MAC_INTEL) => self.macos(),
            "macos" => {
                let host = self.host.clone();
                let file = self.cargo(what, &host, Linker::Native)?;
                let (cpu, oldest) =
                    inspect::check_thin_macos(&read(&file)?).map_err(|why| NotBuilt::failed(what, why))?;
                Ok(Built {
                    platform: Platform::Darwin,
                    label: format!("darwin-{cpu}"),
                    triple: host,
                    file,
                    notes: format!(
                        "{cpu} only, macOS {oldest} and later: Macs of the other kind cannot run it \
                         (rustup target add {MAC_ARM} {MAC_INTEL} for a universal file)"
                    ),
                })
            }
            "windows" => {
                let host = self.host.clone();
                let file = self.cargo(what, &host, Linker::Native)?;
                if arch == "x86_64" {
                    inspect::check_windows_x86_64(&read(&file)?)
                        .map_err(|why| NotBuilt::failed(what, why))?;
                }
                Ok(Built {
                    platform: Platform::Win32,
                    label: format!("win32-{arch}"),
                    triple: host,
                    file,
                    notes: String::new(),
                })
            }
            "linux" => {
                let host = self.host.clone();
                let file = self.cargo(what, &host, Linker::Native)?;
                let notes = match inspect::linux_x86_64_needs_loader(&read(&file)?) {
                    Ok(false) => "static".to_string(),
                    _ => format!(
                        "dynamically linked against this system's libc; for a static binary that runs on \
                         any distribution: rustup target add {MUSL}"
                    ),
                };
                Ok(Built {
                    platform: Platform::Linux,
                    label: format!("linux-{arch}"),
                    triple: host,
                    file,
                    notes,
                })
            }
            other => Err(NotBuilt::missing(
                what,
                format!("bundle hosts run on macOS, Windows and Linux, not {other}"),
            )),
        }
    }

    /// The static x86_64 Linux binary.
    pub fn linux(&mut self) -> Result<Built, NotBuilt> {
        let what = "linux-x86_64";
        self.need_std(what, MUSL)?;
        let linker = if cfg!(target_os = "linux") || self.prebuilt.is_some() {
            Linker::Native
        } else {
            self.zig
                .clone()
                .map_err(|why| NotBuilt::missing(what, format!("no linker for {MUSL} here: {why}")))?;
            Linker::Zig
        };
        let file = self.cargo(what, MUSL, linker)?;
        match inspect::linux_x86_64_needs_loader(&read(&file)?) {
            Ok(false) => {}
            Ok(true) => {
                return Err(NotBuilt::failed(
                    what,
                    "the musl build names a dynamic loader, so it is not static",
                ));
            }
            Err(why) => return Err(NotBuilt::failed(what, why)),
        }
        Ok(Built {
            platform: Platform::Linux,
            label: what.to_string(),
            triple: MUSL.to_string(),
            file,
            notes: "static (musl)".to_string(),
        })
    }

    /// One universal macOS file: arm64 and x86_64, each built on its own
    /// (natively on a Mac, with zig elsewhere) and then joined.
    pub fn macos(&mut self) -> Result<Built, NotBuilt> {
        let what = "darwin-universal";
        if self.prebuilt.is_some() {
            return self.prebuilt_macos(what);
        }
        self.need_std(what, MAC_ARM)?;
        self.need_std(what, MAC_INTEL)?;
        let linker = || {
            if cfg!(target_os = "macos") {
                Ok(Linker::Native)
            } else {
                self.zig.clone().map(|()| Linker::Zig).map_err(|why| format!("no macOS linker here: {why}"))
            }
        };
        let arm_linker = linker().map_err(|why| NotBuilt::missing(what, why))?;
        let intel_linker = linker().map_err(|why| NotBuilt::missing(what, why))?;
        let arm = read(&self.cargo(what, MAC_ARM, arm_linker)?)?;
        let intel = read(&self.cargo(what, MAC_INTEL, intel_linker)?)?;
        let joined = universal::join(&[&intel, &arm]).map_err(|why| NotBuilt::failed(what, why))?;
        let dir = self.workspace.target_dir.join("universal-apple-darwin/release");
        let file = dir.join("resmon-mcp");
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&file, &joined))
            .map_err(|error| NotBuilt::failed(what, format!("{}: {error}", file.display())))?;
        let halves = inspect::check_universal_macos(&joined).map_err(|why| NotBuilt::failed(what, why))?;
        Ok(Built {
            platform: Platform::Darwin,
            label: what.to_string(),
            triple: "universal-apple-darwin".to_string(),
            file,
            notes: format!(
                "arm64 {} for macOS {}+, x86_64 {} for macOS {}+; the arm64 half carries the linker's \
                 ad-hoc signature",
                crate::size(halves.arm64 as u64),
                halves.arm64_oldest,
                crate::size(halves.intel as u64),
                halves.intel_oldest,
            ),
        })
    }

    /// A universal macOS file built elsewhere (on a Mac, by this task).
    fn prebuilt_macos(&mut self, what: &'static str) -> Result<Built, NotBuilt> {
        let triple = "universal-apple-darwin";
        let file = self.cargo(what, triple, Linker::Native)?;
        let halves =
            inspect::check_universal_macos(&read(&file)?).map_err(|why| NotBuilt::failed(what, why))?;
        Ok(Built {
            platform: Platform::Darwin,
            label: what.to_string(),
            triple: triple.to_string(),
            file,
            notes: format!(
                "prebuilt; arm64 for macOS {}+, x86_64 for macOS {}+",
                halves.arm64_oldest, halves.intel_oldest
            ),
        })
    }

    /// The x86_64 Windows `.exe`.
    pub fn windows(&mut self) -> Result<Built, NotBuilt> {
        let what = "win32-x86_64";
        let msvc = "x86_64-pc-windows-msvc";
        let triple = if cfg!(windows) && self.host.starts_with("x86_64-pc-windows") {
            self.host.clone()
        } else if self.prebuilt.as_ref().is_some_and(|dir| dir.join(msvc).is_dir()) {
            msvc.to_string()
        } else {
            WINDOWS_GNU.to_string()
        };
        self.need_std(what, &triple)?;
        let linker = if cfg!(windows) || self.prebuilt.is_some() || on_path("x86_64-w64-mingw32-gcc") {
            Linker::Native
        } else {
            self.zig.clone().map_err(|why| {
                NotBuilt::missing(what, format!("no Windows linker here (MinGW-w64's gcc, or zig): {why}"))
            })?;
            Linker::Zig
        };
        let file = self.cargo(what, &triple, linker)?;
        inspect::check_windows_x86_64(&read(&file)?).map_err(|why| NotBuilt::failed(what, why))?;
        Ok(Built { platform: Platform::Win32, label: what.to_string(), triple, file, notes: String::new() })
    }
}

fn read(file: &Path) -> Result<Vec<u8>, NotBuilt> {
    std::fs::read(file).map_err(|error| NotBuilt::failed("read", format!("{}: {error}", file.display())))
}

fn on_path(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else { return false };
    let names: Vec<String> = if cfg!(windows) {
        vec![format!("{program}.exe"), program.to_string()]
    } else {
        vec![program.to_string()]
    };
    std::env::split_paths(&path).any(|dir| names.iter().any(|name| dir.join(name).is_file()))
}

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// cargo-zigbuild looks for zig as CARGO_ZIGBUILD_ZIG_PATH, then `zig` on
/// PATH, then `python3 -m ziglang` (the PyPI package); so does this.
fn zig_available() -> Result<(), String> {
    if !runs("cargo-zigbuild", &["--version"]) {
        return Err(format!("cargo-zigbuild is not installed ({GET_ZIG})"));
    }
    let zig = std::env::var("CARGO_ZIGBUILD_ZIG_PATH").ok();
    let found = match &zig {
        Some(path) => runs(path, &["version"]),
        None => runs("zig", &["version"]) || runs("python3", &["-m", "ziglang", "version"]),
    };
    if found { Ok(()) } else { Err(format!("cargo-zigbuild is installed but zig is not ({GET_ZIG})")) }
}
