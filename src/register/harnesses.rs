//! The registration as a person reads it: without `--for`, a few lines
//! that say how the server will be started and which command prints each
//! harness's registration; with `--for <harness>`, that harness's blocks,
//! each under a line that says where it goes on this computer and what the
//! harness will ask before a tool runs.
//!
//! The blocks are not indented, so that what is selected and copied is
//! exactly what to paste; headings end with `:` and the sentences under
//! them are indented.
//!
//! What a harness asks before comes from its own documentation (Claude
//! Code: code.claude.com/docs/en/permissions; Codex: its approval rule in
//! `codex-rs`; Gemini CLI: a server's `trust` and its policy engine;
//! opencode: opencode.ai/docs/permissions; Claude Desktop: "Connect to
//! local MCP servers" at modelcontextprotocol.io; Cursor: its "Agent
//! security" page). docs/setup.md cites the same and says which were tried.

use std::path::Path;

use super::quoting::command_word;
use super::{Launcher, Registration, read_tools};
use crate::discovery::Platform;
use crate::tools;

/// A harness `--check --for` prints the registration of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    ClaudeCode,
    Codex,
    ClaudeDesktop,
    Cursor,
    Gemini,
    Opencode,
}

impl Harness {
    pub(crate) const ALL: [Harness; 6] = [
        Harness::ClaudeCode,
        Harness::Codex,
        Harness::ClaudeDesktop,
        Harness::Cursor,
        Harness::Gemini,
        Harness::Opencode,
    ];

    /// The name `--for` takes.
    pub(crate) fn option(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::ClaudeDesktop => "claude-desktop",
            Harness::Cursor => "cursor",
            Harness::Gemini => "gemini",
            Harness::Opencode => "opencode",
        }
    }

    /// The key in `--check --json`'s `register_approval`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude_code",
            Harness::ClaudeDesktop => "claude_desktop",
            other => other.option(),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "Claude Code",
            Harness::Codex => "Codex",
            Harness::ClaudeDesktop => "Claude Desktop",
            Harness::Cursor => "Cursor",
            Harness::Gemini => "Gemini CLI",
            Harness::Opencode => "opencode",
        }
    }

    /// The harness `--for` names: its option name in any letter case, with
    /// `_` or a space for `-`, or its program's name (`claude`, `gemini-cli`).
    pub fn parse(given: &str) -> Result<Harness, String> {
        let wanted = given.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        let alias = match wanted.as_str() {
            "claude" => Some(Harness::ClaudeCode),
            "gemini-cli" => Some(Harness::Gemini),
            "claude-desktop-app" | "desktop" => Some(Harness::ClaudeDesktop),
            _ => None,
        };
        alias.or_else(|| Harness::ALL.into_iter().find(|harness| harness.option() == wanted)).ok_or_else(
            || {
                let names: Vec<&str> = Harness::ALL.iter().map(|harness| harness.option()).collect();
                format!("--for takes one of {}, not {given:?}", names.join(", "))
            },
        )
    }
}

/// The counts the sentences give, from the tool table.
struct Counts {
    reads: usize,
    writes: usize,
    /// The writes Codex's default mode asks before: those its annotations
    /// mark destructive or open-world.
    codex_default_asks: usize,
}

fn counts() -> Counts {
    let reads = read_tools().count();
    let codex_default_asks = tools::TOOLS
        .iter()
        .filter(|tool| tool.requires_confirmation && (tool.destructive || tool.open_world))
        .count();
    Counts { reads, writes: tools::TOOLS.len() - reads, codex_default_asks }
}

/// A file under the home folder, as a person on `platform` writes it.
fn in_home(platform: Platform, path: &str) -> String {
    match platform {
        Platform::Windows => format!("%USERPROFILE%\\{}", path.replace('/', "\\")),
        Platform::MacOs | Platform::Xdg => format!("~/{path}"),
    }
}

impl Registration {
    /// What `harness`, registered as printed, will ask the person before a
    /// tool runs: one sentence or two, to the person.
    pub(crate) fn approval(&self, harness: Harness) -> String {
        let Counts { reads, writes, codex_default_asks } = counts();
        let claude_settings = in_home(Platform::current(), ".claude/settings.json");
        if self.read_only {
            let rest = match harness {
                Harness::ClaudeCode => format!(
                    "Claude Code asks you before each tool call; merged into {claude_settings}, the permissions \
                     block lets the {reads} reads run without a question."
                ),
                Harness::Codex => format!("Codex runs the {reads} reads without asking."),
                Harness::ClaudeDesktop => "Claude Desktop asks you before each tool call.".into(),
                Harness::Cursor => "Cursor asks you before each tool call unless you allow the tool.".into(),
                Harness::Gemini => format!(
                    "Gemini CLI asks you before each tool call of a server you have not marked trusted; with the \
                     policy file the {reads} reads run without a question."
                ),
                Harness::Opencode => format!("opencode runs the {reads} reads without asking."),
            };
            return format!("Read-only: none of the {writes} writes is offered. {rest}");
        }
        match harness {
            Harness::ClaudeCode => format!(
                "Claude Code asks you before each tool call, reads included. Merged into {claude_settings}, the \
                 permissions block lets the {reads} reads run without a question; each of the {writes} writes \
                 still asks."
            ),
            Harness::Codex => format!(
                "With this block Codex asks you before each of the {writes} writes and runs the {reads} reads \
                 without asking; left to its default (without `default_tools_approval_mode = \"writes\"`) it would \
                 ask before only {codex_default_asks} of the writes."
            ),
            Harness::ClaudeDesktop => format!(
                "Claude Desktop asks you before each tool call, reads included; its file has no setting to change \
                 that. Where nobody will be there to answer, register the read-only way: {}.",
                self.check_command(Harness::ClaudeDesktop, true)
            ),
            Harness::Cursor => format!(
                "Cursor asks you before each tool call in Agent mode unless you allow the tool. With auto-run on, \
                 the writes would run unasked; register the read-only way then: {}.",
                self.check_command(Harness::Cursor, true)
            ),
            Harness::Gemini => format!(
                "Gemini CLI asks you before each tool call of a server you have not marked trusted, reads \
                 included. With the policy file the {reads} reads run without a question and each of the {writes} \
                 writes still asks; in `gemini -p`, where nobody can answer, the writes are left out. Marking the \
                 server trusted, or `--yolo`, would run the writes unasked."
            ),
            Harness::Opencode => format!(
                "opencode runs MCP tools without asking unless told otherwise; the `permission` entries in this \
                 block make it ask you before each of the {writes} writes, and `opencode run`, where nobody can \
                 answer, turns them down."
            ),
        }
    }

    /// The command a person types to print `harness`'s registration from
    /// this same installation: the launcher's own words, quoted for this
    /// platform's shells.
    pub(crate) fn check_command(&self, harness: Harness, read_only: bool) -> String {
        let launch = &self.launch;
        // `cmd /c` is for harnesses that start programs without a shell; a
        // person types npx in one.
        let skip = usize::from(launch.launcher == Launcher::Npx && launch.command == "cmd") * 2;
        let mut words: Vec<String> = std::iter::once(&launch.command)
            .chain(&launch.args)
            .skip(skip)
            .map(|word| command_word(word))
            .collect();
        if read_only || self.read_only {
            words.push("--read-only".into());
        }
        words.push(format!("--check --for {}", harness.option()));
        words.join(" ")
    }

    /// The opening lines, shared by both forms: how the harness will start
    /// the server, with which variables, whether a running resmon confirmed
    /// them, and every note.
    fn heading(&self, verified: bool) -> String {
        let names: Vec<&str> = self.env.iter().map(|(key, _)| key.as_str()).collect();
        let names =
            if names.is_empty() { "none, the defaults are enough".to_string() } else { names.join(", ") };
        let started = match self.launch.launcher {
            Launcher::Binary => format!("binary {}", self.launch.command),
            Launcher::Npx => format!(
                "{} (npx started this check; the binary it ran sits in npm's cache, which an update replaces)",
                self.check_words()
            ),
            Launcher::Uvx => format!(
                "{} (uvx started this check; the binary it ran sits in uv's tool environment, which an update \
                 replaces)",
                self.check_words()
            ),
        };
        let mut text = format!(
            "\nregistration: {started}\n  environment: {names}; never the token, which the server reads itself\n"
        );
        if !verified {
            text.push_str(
                "  not yet verified: resmon did not answer, so this is built from the variables alone; run this \
                 check again once resmon is running to confirm it\n",
            );
        }
        if self.launch.launcher == Launcher::Uvx {
            text.push_str(&format!(
                "  note: uvx keeps the release it fetched until its cache is refreshed; `uvx {0}@latest` fetches \
                 the newest, and `uvx {0}@{1}` stays on this one\n",
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION")
            ));
        }
        if self.launch.launcher == Launcher::Binary && is_cargo_build_output(Path::new(&self.launch.command))
        {
            text.push_str(
                "  note: this binary is cargo's build output, which moves or disappears with `cargo clean`; \
                 `cargo install --locked --path .` puts a lasting copy in ~/.cargo/bin (run its --check)\n",
            );
        }
        if let Some((_, port)) = self.env.iter().find(|(key, _)| key == "RESMON_PORT") {
            text.push_str(&format!(
                "  note: RESMON_PORT pins port {port}; if resmon may start on another port, register the port \
                 file it writes (RESMON_PORT_FILE) instead, which follows it\n"
            ));
        }
        if cfg!(windows) && !self.command_lines_are_faithful() {
            text.push_str(
                "  note: a value holds \", %, $ or `, which cmd.exe and PowerShell read differently, so the \
                 command lines cannot be pasted in both; use the JSON or TOML block instead\n",
            );
        }
        for note in &self.notes {
            text.push_str(&format!("  note: {note}\n"));
        }
        text
    }

    /// The launcher's words as a person types them (npx without `cmd /c`).
    fn check_words(&self) -> String {
        let command = self.check_command(Harness::ClaudeCode, false);
        let cut = command.find(" --").unwrap_or(command.len());
        command[..cut].to_string()
    }

    /// `--check`'s closing part without `--for`: the heading, then one line
    /// per harness naming the command that prints its registration.
    pub(crate) fn summary_text(&self, verified: bool) -> String {
        let mut text = self.heading(verified);
        text.push_str(
            "  to register it, run the line for your harness, with the same variables as this check:\n",
        );
        let width = Harness::ALL.iter().map(|harness| harness.name().len()).max().unwrap_or(0);
        for harness in Harness::ALL {
            text.push_str(&format!(
                "    {:width$}  {}\n",
                harness.name(),
                self.check_command(harness, false)
            ));
        }
        text
    }

    /// `--check --for <harness>`'s closing part: the heading, then each block
    /// the harness takes under where it goes and what the harness will ask.
    pub(crate) fn harness_text(&self, harness: Harness, verified: bool) -> String {
        self.harness_text_on(harness, verified, Platform::current())
    }

    pub(crate) fn harness_text_on(&self, harness: Harness, verified: bool, platform: Platform) -> String {
        let mut text = self.heading(verified);
        let home = |path: &str| in_home(platform, path);
        let approval = self.approval(harness);
        let mut block = |heading: String, sentences: &[&str], body: String| {
            text.push_str(&format!("\n{heading}\n"));
            for sentence in sentences.iter().filter(|sentence| !sentence.is_empty()) {
                text.push_str(&format!("  {sentence}\n"));
            }
            text.push_str(&format!("{body}\n"));
        };
        match harness {
            Harness::ClaudeCode => {
                block(
                    "Claude Code (run this once; user scope, so the server is there in every project):"
                        .into(),
                    &[&approval],
                    self.claude_code(),
                );
                block(
                    format!("Claude Code permissions (merge into {}):", home(".claude/settings.json")),
                    &[],
                    self.claude_code_allow(),
                );
            }
            Harness::Codex => block(
                format!(
                    "Codex (add to {}, or to $CODEX_HOME/config.toml when CODEX_HOME is set):",
                    home(".codex/config.toml")
                ),
                &[&approval],
                self.codex(),
            ),
            Harness::ClaudeDesktop => {
                let (file, where_) = match platform {
                    Platform::MacOs => {
                        ("~/Library/Application Support/Claude/claude_desktop_config.json".to_string(), "")
                    }
                    Platform::Windows => ("%APPDATA%\\Claude\\claude_desktop_config.json".to_string(), ""),
                    Platform::Xdg => (
                        "claude_desktop_config.json".to_string(),
                        "Claude Desktop runs on macOS and Windows: its file is \
                         ~/Library/Application Support/Claude/claude_desktop_config.json on macOS and \
                         %APPDATA%\\Claude\\claude_desktop_config.json on Windows.",
                    ),
                };
                block(
                    format!("Claude Desktop (merge into {file}, then restart Claude Desktop):"),
                    &[where_, &approval],
                    self.json(),
                );
            }
            Harness::Cursor => block(
                format!(
                    "Cursor (merge into {}, or into a project's .cursor/mcp.json):",
                    home(".cursor/mcp.json")
                ),
                &[&approval],
                self.json(),
            ),
            Harness::Gemini => {
                let settings = home(".gemini/settings.json");
                let heading = if self.gemini_line_is_faithful() {
                    format!("Gemini CLI (run this once; user scope, written to {settings}):")
                } else {
                    format!(
                        "Gemini CLI (merge into {settings}; `gemini mcp add -e` would cut a value at its `=`):"
                    )
                };
                block(
                    heading,
                    &[&approval, "Gemini CLI starts MCP servers only in folders you have marked trusted."],
                    self.gemini(),
                );
                block(
                    format!("Gemini CLI policy (save as {}):", home(".gemini/policies/resmon.toml")),
                    &[],
                    self.gemini_policy(),
                );
            }
            Harness::Opencode => block(
                format!(
                    "opencode (merge into {}, or into a project's opencode.json):",
                    home(".config/opencode/opencode.json")
                ),
                &[&approval],
                self.opencode(),
            ),
        }
        text
    }
}

/// Cargo's profile directories (target/release, target/debug) hold a
/// `.fingerprint` folder; an installed binary's directory does not.
fn is_cargo_build_output(binary: &Path) -> bool {
    binary.parent().is_some_and(|dir| dir.join(".fingerprint").is_dir())
}
