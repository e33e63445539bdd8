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
            let Some(problem) = npm_spec_problem(spec, windows) else {
                return npx(spec, windows);
            };
            let unpinned = npx(PACKAGE, windows);
            notes.push(format!(
                "RESMON_MCP_PACKAGE (set by npm's launcher) holds {spec:?}, which cannot follow `npx -y` in a \
                 registration: {problem}. So this registration names the binary npx unpacked, which npx may \
                 remove; `{} {}` would start the newest release instead",
                unpinned.command,
                unpinned.args.join(" ")
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

/// Why `spec` cannot follow `npx -y` in a registration on this platform, or
/// None when it can. npm takes a package name, optionally under a scope,
/// then optionally `@` and a version (`0.2.0`), a range (`^0.2.0`, `~0.2`,
/// `>=1 <2`, `0.1.x || 0.2.x`) or a dist-tag (`latest`). The npm launcher
/// passes on whatever was asked of npx, so this is the one place that
/// judges it; each printed form then quotes it for where it goes
/// (`quoting.rs`: `'>=1 <2'` for a POSIX shell, a TOML or JSON string).
fn npm_spec_problem(spec: &str, windows: bool) -> Option<String> {
    let (name, version) = match spec.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('@') {
            Some((name, version)) => (&spec[..name.len() + 1], Some(version)),
            None => (spec, None),
        },
        None => match spec.split_once('@') {
            Some((name, version)) => (name, Some(version)),
            None => (spec, None),
        },
    };
    let name_part = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '_'])
            && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._~".contains(&b))
    };
    let name_ok = match name.strip_prefix('@') {
        Some(scoped) => {
            scoped.split_once('/').is_some_and(|(scope, name)| name_part(scope) && name_part(name))
        }
        None => name_part(name),
    };
    if !name_ok || name.len() > 214 {
        return Some(format!(
            "{name:?} is not an npm package name (at most 214 lowercase letters, digits and - . _ ~, \
             optionally under an @scope/)"
        ));
    }
    let version = version?;
    if version.trim().is_empty() {
        return Some("nothing follows its `@`, where npm expects a version, a range or a tag".into());
    }
    // A range's operators, the parts of a version (`1.2.3-rc.1+build`), an
    // x-range's `x` and `*`, and a tag's letters: nothing else.
    let range_char = |c: char| c.is_ascii_alphanumeric() || ".-+_*^~<>=| ".contains(c);
    if let Some(c) = version.chars().find(|&c| !range_char(c)) {
        return Some(format!("its {c:?} is no part of an npm version, range or tag"));
    }
    // A harness starts `cmd /c npx ...` with each word quoted only when it
    // holds a space, and cmd.exe acts on these itself outside quotes: `^`
    // is its escape character, `<` `>` redirect and `|` pipes.
    if windows && let Some(c) = version.chars().find(|c| "^<>|".contains(*c)) {
        return Some(format!(
            "on Windows npx runs through cmd.exe, which reads {c:?} itself, so npx would not get the range as \
             typed; write it without ^ < > | (an x-range such as `{PACKAGE}@0.1.x`, or an exact version) and \
             run the check again"
        ));
    }
    None
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
    fn npm_specs_are_names_with_versions_ranges_or_tags() {
        for good in [
            "resmon-mcp",
            "resmon-mcp@0.2.0",
            "resmon-mcp@1.0.0-rc.1+b",
            "@acme/resmon-mcp@latest",
            "resmon-mcp@latest",
            "resmon-mcp@next",
            "resmon-mcp@^0.1.0",
            "resmon-mcp@~0.1",
            "resmon-mcp@>=1 <2",
            "resmon-mcp@0.1.x || 0.2.x",
            "resmon-mcp@*",
        ] {
            assert_eq!(npm_spec_problem(good, false), None, "{good}");
        }
        let refused = |spec: &str, windows: bool| npm_spec_problem(spec, windows).unwrap_or_default();
        for bad in ["", "Resmon", "resmon mcp", "@acme", "a'b", "file:../x.tgz", ".hidden"] {
            assert!(
                refused(bad, false).contains("is not an npm package name"),
                "{bad}: {}",
                refused(bad, false)
            );
        }
        assert!(refused("resmon-mcp@", false).contains("nothing follows its `@`"));
        assert!(refused("resmon-mcp@$(id)", false).contains("its '$' is no part of"));
        assert!(refused("resmon-mcp@1; rm -rf ~", false).contains("its ';' is no part of"));
    }

    /// On Windows the registration runs `cmd /c npx -y <spec>`: a version,
    /// a tag and a `~` or x-range pass through cmd.exe as they are; `^ < >
    /// |` would not, and the refusal says so.
    #[test]
    fn on_windows_a_range_that_cmd_would_read_is_refused_with_why() {
        for good in ["resmon-mcp@0.2.0", "resmon-mcp@latest", "resmon-mcp@~0.1.0", "resmon-mcp@0.1.x"] {
            assert_eq!(npm_spec_problem(good, true), None, "{good}");
        }
        for (bad, char) in
            [("resmon-mcp@^0.1.0", "'^'"), ("resmon-mcp@>=1 <2", "'>'"), ("resmon-mcp@1 || 2", "'|'")]
        {
            let why = npm_spec_problem(bad, true).unwrap();
            assert!(why.contains(&format!("cmd.exe, which reads {char} itself")), "{bad}: {why}");
            assert!(why.contains("resmon-mcp@0.1.x"), "{why}");
        }
    }

    /// Started as `npx -y resmon-mcp@^0.1.0`, the registration keeps the
    /// range; refused on Windows, the note gives the true reason and what
    /// the binary's path means.
    #[test]
    fn a_range_is_registered_as_typed_or_refused_with_the_reason() {
        let exe = "/home/ann/.npm/_npx/1a2b/node_modules/resmon-mcp-linux-x64/bin/resmon-mcp";
        for range in ["resmon-mcp@^0.1.0", "resmon-mcp@~0.1.0", "resmon-mcp@>=1 <2", "resmon-mcp@latest"] {
            let launch = launch(exe, &started_by(Some("npx"), Some(range)), false);
            assert_eq!((launch.command.as_str(), launch.args), ("npx", words(&["-y", range])), "{range}");
        }
        let refused = launch(exe, &started_by(Some("npx"), Some("resmon-mcp@^0.1.0")), true);
        assert_eq!((refused.launcher, refused.command.as_str()), (Launcher::Binary, exe));
        let note = refused.notes.join(" ");
        assert!(note.contains("cmd.exe, which reads '^' itself"), "{note}");
        assert!(note.contains("`cmd /c npx -y resmon-mcp` would start the newest release"), "{note}");
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
