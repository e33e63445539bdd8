//! How a harness should start this server: the form that still works after
//! the next release is installed.
//!
//! A binary that cargo installed, or that a person unpacked, stays where it
//! is, so its absolute path is the registration. One that npx or uvx
//! started lives in a package cache under a folder named for that one
//! release, which an update or a cache clean-up removes; registering that
//! path would break the harness later, with nothing to say why. For those
//! the registration is the launcher's own command: `npx -y resmon-mcp`,
//! `uvx resmon-mcp`.

use std::path::Path;

use crate::config::StartedBy;

/// The package name on npm and PyPI: the crate's own.
const PACKAGE: &str = env!("CARGO_PKG_NAME");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Launcher {
    /// The binary's own path.
    Binary,
    /// `npx -y <package>` (through `cmd /c` on Windows).
    Npx,
    /// `uvx <package>`.
    Uvx,
}

impl Launcher {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Launcher::Binary => "binary",
            Launcher::Npx => "npx",
            Launcher::Uvx => "uvx",
        }
    }
}

/// The program and arguments a harness runs, and what chose them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Launch {
    pub launcher: Launcher,
    pub command: String,
    pub args: Vec<String>,
    /// Sentences for the report about a launcher setting that was not used.
    pub notes: Vec<String>,
}

/// The launch for a binary at `exe` (absolute), started as `started_by`
/// says, on Windows or elsewhere.
pub(crate) fn launch(exe: &str, started_by: &StartedBy, windows: bool) -> Launch {
    let mut notes = Vec::new();
    match started_by.launcher.as_deref() {
        Some("npx") => {
            let spec = started_by.package.as_deref().unwrap_or(PACKAGE);
            if is_npm_spec(spec) {
                return npx(spec, windows);
            }
            notes.push(format!(
                "RESMON_MCP_PACKAGE holds {spec:?}, which is not a package npx can be given, so this registration \
                 names the binary npx unpacked; npx may remove it, so register `npx -y {PACKAGE}` instead"
            ));
        }
        Some(other) => notes.push(format!(
            "RESMON_MCP_LAUNCHER is {other:?}, which this server does not know (npm's launcher sets it to \
             \"npx\"), so this registration names the binary itself"
        )),
        None => {}
    }
    if runs_from_uv_environment(Path::new(exe), windows) {
        return Launch { launcher: Launcher::Uvx, command: "uvx".into(), args: vec![PACKAGE.into()], notes };
    }
    Launch { launcher: Launcher::Binary, command: exe.to_string(), args: Vec::new(), notes }
}

/// On Windows npx is a batch file (`npx.cmd`), which a harness that starts
/// programs without a shell cannot run by name; `cmd /c` runs it.
fn npx(spec: &str, windows: bool) -> Launch {
    let mut words = vec!["npx".to_string(), "-y".into(), spec.to_string()];
    if windows {
        words.splice(0..0, ["cmd".to_string(), "/c".to_string()]);
    }
    let command = words.remove(0);
    Launch { launcher: Launcher::Npx, command, args: words, notes: Vec::new() }
}

/// A package name npm accepts, optionally scoped, optionally with `@` and a
/// version or tag: nothing a shell or a config file would read otherwise.
fn is_npm_spec(spec: &str) -> bool {
    let (name, version) = match spec.strip_prefix('@') {
        Some(rest) => match rest.split_once('@') {
            Some((name, version)) => (format!("@{name}"), Some(version)),
            None => (spec.to_string(), None),
        },
        None => match spec.split_once('@') {
            Some((name, version)) => (name.to_string(), Some(version)),
            None => (spec.to_string(), None),
        },
    };
    let name_part = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._~".contains(&b))
    };
    let name_ok = match name.strip_prefix('@') {
        Some(scoped) => {
            scoped.split_once('/').is_some_and(|(scope, name)| name_part(scope) && name_part(name))
        }
        None => name_part(&name),
    };
    let version_ok = version.is_none_or(|version| {
        !version.is_empty() && version.bytes().all(|b| b.is_ascii_alphanumeric() || b"-.+_".contains(&b))
    });
    name_ok && version_ok && spec.len() <= 214
}

/// Whether `exe` sits in an environment uv made for a tool: one uvx made in
/// its cache (`<cache>/archive-v0/<id>/bin/`, reached directly or through
/// `<cache>/environments-v2/<name>/`, removed by `uv cache clean` and made
/// anew for another release), or one `uv tool install` made
/// (`<tools>/<name>/bin/`, with uv's `uv-receipt.toml` beside `bin`), which
/// `uvx` also runs. Windows names the folder `Scripts`.
///
/// The layout is read rather than the folders uv would choose: the cache
/// and tools folders move with UV_CACHE_DIR, UV_TOOL_DIR, XDG_CACHE_HOME,
/// XDG_DATA_HOME, `--cache-dir` and uv's own config file (by default
/// `~/.cache/uv` and `~/.local/share/uv/tools` on Linux and macOS,
/// `%LOCALAPPDATA%\uv\cache` and `%APPDATA%\uv\data\tools` on Windows), and
/// this process sees none of the settings uv was given.
fn runs_from_uv_environment(exe: &Path, windows: bool) -> bool {
    let Some(scripts) = exe.parent() else { return false };
    let scripts_name = scripts.file_name().and_then(|name| name.to_str()).unwrap_or("");
    let is_scripts =
        if windows { scripts_name.eq_ignore_ascii_case("Scripts") } else { scripts_name == "bin" };
    let Some(environment) = scripts.parent().filter(|_| is_scripts) else { return false };
    if !environment.join("pyvenv.cfg").is_file() {
        return false;
    }
    if environment.join("uv-receipt.toml").is_file() {
        return true;
    }
    let bucket = environment.parent().and_then(Path::file_name).and_then(|name| name.to_str()).unwrap_or("");
    bucket.starts_with("archive-v") || bucket.starts_with("environments-v")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| word.to_string()).collect()
    }

    fn started_by(launcher: Option<&str>, package: Option<&str>) -> StartedBy {
        StartedBy { launcher: launcher.map(str::to_string), package: package.map(str::to_string) }
    }

    #[test]
    fn npx_is_registered_as_npx_keeping_a_pinned_version() {
        let exe = "/home/ann/.npm/_npx/1a2b/node_modules/@resmon-mcp/linux-x64/bin/resmon-mcp";
        let unix = launch(exe, &started_by(Some("npx"), Some("resmon-mcp@0.2.0")), false);
        assert_eq!((unix.command.as_str(), unix.args.clone()), ("npx", words(&["-y", "resmon-mcp@0.2.0"])));
        assert_eq!(unix.launcher, Launcher::Npx);
        let windows = launch(exe, &started_by(Some("npx"), Some("resmon-mcp")), true);
        assert_eq!(
            (windows.command.as_str(), windows.args),
            ("cmd", words(&["/c", "npx", "-y", "resmon-mcp"]))
        );
        // No package named: the launcher's own.
        assert_eq!(launch(exe, &started_by(Some("npx"), None), false).args, ["-y", "resmon-mcp"]);
    }

    #[test]
    fn a_launcher_setting_that_cannot_be_used_is_said_and_the_binary_named() {
        for (launcher, package) in [(Some("npx"), "resmon-mcp; rm -rf ~"), (Some("bunx"), "resmon-mcp")] {
            let launch = launch("/opt/resmon-mcp", &started_by(launcher, Some(package)), false);
            assert_eq!((launch.launcher, launch.command.as_str()), (Launcher::Binary, "/opt/resmon-mcp"));
            assert_eq!(launch.notes.len(), 1, "{launch:?}");
        }
    }

    #[test]
    fn npm_specs_are_names_and_versions_only() {
        for good in ["resmon-mcp", "resmon-mcp@0.2.0", "@acme/resmon-mcp@latest", "resmon-mcp@1.0.0-rc.1+b"] {
            assert!(is_npm_spec(good), "{good}");
        }
        for bad in ["", "Resmon", "resmon mcp", "resmon-mcp@", "@acme", "a'b", "x@$(id)", "file:../x.tgz"] {
            assert!(!is_npm_spec(bad), "{bad}");
        }
    }

    /// uv's layouts, made on disk: uvx's cache (directly and through the
    /// link folder), a `uv tool install` environment, and lookalikes.
    #[test]
    fn a_binary_in_a_uv_tool_environment_is_registered_as_uvx() {
        let root = std::env::temp_dir().join(format!("resmon-mcp-launch-{}", std::process::id()));
        let make = |environment: &str, scripts: &str, receipt: bool| {
            let environment = root.join(environment);
            std::fs::create_dir_all(environment.join(scripts)).unwrap();
            std::fs::write(environment.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
            if receipt {
                std::fs::write(environment.join("uv-receipt.toml"), "[tool]\n").unwrap();
            }
            environment.join(scripts).join("resmon-mcp").to_string_lossy().into_owned()
        };
        let nobody = StartedBy::default();
        let cases = [
            (make("cache/uv/archive-v0/AbC123", "bin", false), false, Launcher::Uvx),
            (make("cache/uv/environments-v2/resmon-mcp-1f2e", "bin", false), false, Launcher::Uvx),
            (make("share/uv/tools/resmon-mcp", "bin", true), false, Launcher::Uvx),
            (make("Local/uv/cache/archive-v0/XyZ", "Scripts", false), true, Launcher::Uvx),
            // A virtual environment of a person's own, and a folder that only looks like uv's.
            (make("project/.venv", "bin", false), false, Launcher::Binary),
            (make("elsewhere/archive-v0/AbC123", "libexec", false), false, Launcher::Binary),
        ];
        for (exe, windows, expected) in &cases {
            let launch = launch(exe, &nobody, *windows);
            assert_eq!(launch.launcher, *expected, "{exe}");
            if *expected == Launcher::Uvx {
                assert_eq!((launch.command.as_str(), launch.args), ("uvx", words(&["resmon-mcp"])));
            }
        }
        // Without its pyvenv.cfg, a folder named archive-v0 is not uv's.
        let bare = root.join("bare/archive-v0/id/bin");
        std::fs::create_dir_all(&bare).unwrap();
        assert_eq!(
            launch(&bare.join("resmon-mcp").to_string_lossy(), &nobody, false).launcher,
            Launcher::Binary
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
