//! Ready-to-paste registrations, printed by `--check` once it has connected.
//!
//! Every harness needs the same two facts in its own format: the absolute
//! path of this binary, and the environment that discovery consulted. Both
//! are taken from the check that just reached resmon, so what a person pastes
//! is what was shown to work, not a template to fill in by hand. Paths with
//! spaces, quotes and Windows backslashes are the usual reason a stdio server
//! never starts inside a harness, so every value is quoted for where it goes:
//! POSIX shell words for the command lines, JSON strings, TOML basic strings.
//! The token is never part of a registration: the server reads it itself.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::backend::MAX_REQUEST_TIMEOUT;
use crate::config::Config;
use crate::discovery::{Environment, Platform, Trace, default_state_dir};
use crate::tools;

/// The name every registration gives the server. Harnesses build the names
/// the model sees from it: `mcp__resmon__health`, `resmon_health`, ...
pub(crate) const SERVER_NAME: &str = "resmon";

/// What a harness must be told to start this server as `--check` ran it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Registration {
    pub command: String,
    /// In the order discovery reads them, then the server's own settings.
    pub env: Vec<(String, String)>,
    /// Read-only sessions offer no write tool, so nothing needs a permission rule.
    pub read_only: bool,
    /// Sentences about what was changed or left out of `env`, and why.
    pub notes: Vec<String>,
}

impl Registration {
    pub fn new(command: String, config: &Config, trace: &Trace) -> Registration {
        let (mut env, notes) = discovery_variables(&config.env, trace);
        // Not discovery, but the mode this check ran in: a registration that
        // silently dropped read-only would hand writes to a harness chosen
        // because it cannot ask a person.
        if config.read_only {
            env.push(("RESMON_MCP_READ_ONLY".into(), "1".into()));
        }
        if config.request_timeout < MAX_REQUEST_TIMEOUT {
            env.push(("RESMON_MCP_TIMEOUT_MS".into(), config.request_timeout.as_millis().to_string()));
        }
        Registration { command, env, read_only: config.read_only, notes }
    }

    /// `claude mcp add` at user scope, so that the server is there in every
    /// project; the `--` keeps the command from being read as an option.
    pub(crate) fn claude_code(&self) -> String {
        let mut words = vec!["claude mcp add -s user".to_string(), SERVER_NAME.to_string()];
        for (key, value) in &self.env {
            words.push(format!("-e {key}={}", command_word(value)));
        }
        words.push(format!("-- {}", command_word(&self.command)));
        words.join(" ")
    }

    /// The Claude Code settings fragment that lets the read tools run without
    /// a question: `permissions.allow` naming each read as the model sees it
    /// (`mcp__resmon__<tool>`), taken from the tool table the way resmon's own
    /// assistant pre-approves its reads (contract 1.0 "Write"). Every tool
    /// it does not name, so each write, still asks. The same in read-only
    /// mode, where the reads are all there is.
    pub(crate) fn claude_code_allow(&self) -> String {
        let allow: Vec<String> =
            read_tools().map(|tool| format!("mcp__{SERVER_NAME}__{}", tool.name)).collect();
        pretty(&json!({"permissions": {"allow": allow}}))
    }

    /// A Gemini CLI policy file that lets the read tools run without a
    /// question (and offers them in headless runs, which offer no MCP tool
    /// that nothing allows). It matches on `readOnlyHint`, which the listing
    /// sets from the tool table (true exactly where `requires_confirmation`
    /// is false); this is the rule tests/harnesses/gemini_cli.py tries with
    /// Gemini CLI 0.61.0. A write matches no rule of it, so Gemini CLI's own
    /// default applies: it asks in a session and leaves the tool out of a
    /// headless run.
    pub(crate) fn gemini_policy(&self) -> String {
        format!(
            "[[rule]]\nmcpName = \"{SERVER_NAME}\"\ntoolName = \"*\"\ntoolAnnotations = {{ readOnlyHint = true }}\n\
             decision = \"allow\"\npriority = 100"
        )
    }

    /// A Codex `config.toml` fragment. On the full surface it sets the
    /// server's default approval mode to `writes`: Codex then asks before
    /// every tool whose annotations do not say `readOnlyHint: true`, which
    /// are exactly the seven with `requires_confirmation`. In its default
    /// mode (`auto`) it would ask only before a tool marked destructive or
    /// open-world, and four of the writes are truthfully neither. The key and
    /// its place were checked against Codex 0.171.0 itself: under
    /// `[mcp_servers.resmon]` it loads the config, and an unknown value there
    /// is refused with "unknown variant …, expected one of `auto`, `prompt`,
    /// `writes`, `approve` in `mcp_servers.resmon.default_tools_approval_mode`".
    /// What `writes` means is Codex's rule as docs/setup.md gives it ("Codex:
    /// approvals from annotations").
    pub(crate) fn codex(&self) -> String {
        let mut toml = format!("[mcp_servers.{SERVER_NAME}]\ncommand = {}\n", toml_string(&self.command));
        if !self.read_only {
            toml.push_str("default_tools_approval_mode = \"writes\"\n");
        }
        if !self.env.is_empty() {
            toml.push_str(&format!("\n[mcp_servers.{SERVER_NAME}.env]\n"));
            for (key, value) in &self.env {
                toml.push_str(&format!("{key} = {}\n", toml_string(value)));
            }
        }
        toml.pop();
        toml
    }

    /// The `mcpServers` shape that Claude Desktop, Cursor and Gemini CLI's
    /// settings.json share.
    pub(crate) fn json(&self) -> String {
        pretty(&json!({"mcpServers": {SERVER_NAME: {
            "command": self.command,
            "args": [],
            "env": self.env_object(),
        }}}))
    }

    /// `gemini mcp add` at user scope. Gemini CLI splits each `-e` at every
    /// `=` and keeps the first two pieces, so a value holding `=` would
    /// arrive cut short; then the settings.json block is the only faithful
    /// form, and that is what this returns instead.
    pub(crate) fn gemini(&self) -> String {
        if self.gemini_line_is_faithful() {
            let mut words = vec!["gemini mcp add -s user".to_string(), SERVER_NAME.to_string()];
            for (key, value) in &self.env {
                words.push(format!("-e {key}={}", command_word(value)));
            }
            words.push(command_word(&self.command));
            words.join(" ")
        } else {
            self.json()
        }
    }

    /// Whether the claude and gemini lines paste as printed in this
    /// platform's shells.
    pub(crate) fn command_lines_are_faithful(&self) -> bool {
        !cfg!(windows)
            || std::iter::once(&self.command)
                .chain(self.env.iter().map(|(_, value)| value))
                .all(|value| windows_word(value).is_some())
    }

    pub(crate) fn gemini_line_is_faithful(&self) -> bool {
        self.env.iter().all(|(_, value)| !value.contains('='))
    }

    /// An opencode.json fragment. opencode runs MCP tools without asking
    /// unless told otherwise, so a full-surface registration asks before
    /// each of the write tools, as Claude Code does by default.
    pub(crate) fn opencode(&self) -> String {
        let mut config = json!({"mcp": {SERVER_NAME: {
            "type": "local",
            "command": [self.command],
            "environment": self.env_object(),
        }}});
        if !self.read_only {
            let ask: Map<String, Value> = tools::TOOLS
                .iter()
                .filter(|tool| tool.requires_confirmation)
                .map(|tool| (format!("{SERVER_NAME}_{}", tool.name), json!("ask")))
                .collect();
            config["permission"] = Value::Object(ask);
        }
        pretty(&config)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "claude_code": self.claude_code(),
            "claude_code_allow": self.claude_code_allow(),
            "codex": self.codex(),
            "json": self.json(),
            "gemini": self.gemini(),
            "gemini_policy": self.gemini_policy(),
            "opencode": self.opencode(),
        })
    }

    /// One sentence per harness, keyed as in `to_json`: whether it asks
    /// before a write with no help, and what the printed block adds.
    pub fn approval_json(&self) -> Value {
        Value::Object(
            HARNESSES.iter().map(|harness| (harness.to_string(), json!(self.approval(harness)))).collect(),
        )
    }

    /// What `harness` does before a read and before a write, registered as
    /// printed. Each claim names where it comes from: CI's harness stages
    /// (tests/agents/, tests/harnesses/), the harness's own documentation or
    /// source, or "not verified". A harness's interactive questions are not
    /// tried in CI, which runs each one headless.
    pub(crate) fn approval(&self, harness: &str) -> String {
        let reads = read_tools().count();
        let writes = tools::TOOLS.len() - reads;
        // The writes Codex's default mode asks before: those its annotations
        // mark destructive or open-world.
        let codex_asks = tools::TOOLS
            .iter()
            .filter(|tool| tool.requires_confirmation && (tool.destructive || tool.open_world))
            .count();
        let documented = "by their documentation both ask before each tool call, reads included (Claude Desktop: \
                          modelcontextprotocol.io \"Connect to local MCP servers\"; Cursor: its \"Agent security\" \
                          page), not verified here";
        if self.read_only {
            let rest = match harness {
                "claude_code" => format!(
                    "Claude Code asks before each tool by default ({CLAUDE_CODE_DOCS}), and the permissions \
                     fragment lets the {reads} reads run unasked"
                ),
                "codex" => format!("Codex runs the {reads} reads unasked (in CI)"),
                "json" => documented.to_string(),
                "gemini" => format!(
                    "Gemini CLI asks before each tool of a server it does not trust ({GEMINI_DOCS}), and the policy \
                     file lets the {reads} reads run unasked (in `-p`, in CI)"
                ),
                "opencode" => format!("opencode runs the {reads} reads unasked ({OPENCODE_SOURCE})"),
                _ => "not verified what it does before a read".to_string(),
            };
            return format!("read-only: no write is offered; {rest}");
        }
        let read_only_choice =
            "RESMON_MCP_READ_ONLY=1 (`resmon-mcp --check --read-only` prints that registration)";
        match harness {
            "claude_code" => format!(
                "Claude Code asks before every tool by default, reads included ({CLAUDE_CODE_DOCS}); with the \
                 permissions fragment the {reads} reads run unasked and each of the {writes} writes still asks (in \
                 CI, `claude -p` runs the reads and denies each write)"
            ),
            "codex" => format!(
                "Codex by default asks only before writes marked destructive or open-world ({codex_asks} of the \
                 {writes}; its approval rule as read in its source, not verified in CI); \
                 `default_tools_approval_mode = \"writes\"` in this block makes it ask before all {writes}, and \
                 the {reads} reads run unasked (in CI, under approval policy never, the reads run and all {writes} \
                 writes are refused)"
            ),
            "json" => format!(
                "this block cannot carry an approval setting; {documented}; where nobody can answer, register with \
                 {read_only_choice}"
            ),
            "gemini" => format!(
                "in a session Gemini CLI asks before each tool of a server it does not trust, reads included, and \
                 with the policy file the {reads} reads run unasked and each of the {writes} writes still asks \
                 ({GEMINI_DOCS}); in `-p` (in CI) it offers no tool without the file, and with it runs the reads \
                 and leaves the writes out; `trust` or `--yolo` would run the writes unasked"
            ),
            "opencode" => format!(
                "opencode runs every MCP tool unasked by default, and the `permission` entries in this block make \
                 it ask before each of the {writes} writes, so the reads run unasked ({OPENCODE_SOURCE}, where \
                 `opencode run` rejected each write)"
            ),
            _ => format!("not verified; where nobody can answer, register with {read_only_choice}"),
        }
    }

    /// The closing part of `--check`'s human report. The blocks are not
    /// indented, so that what is selected and copied is exactly what to paste.
    pub(crate) fn human_text(&self) -> String {
        let names: Vec<&str> = self.env.iter().map(|(key, _)| key.as_str()).collect();
        let names =
            if names.is_empty() { "none (the defaults worked)".to_string() } else { names.join(", ") };
        let mut text = format!(
            "\nregistration: binary {}\n  environment: {names} (never the token; the server reads it itself)\n",
            self.command
        );
        if is_cargo_build_output(Path::new(&self.command)) {
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
                 command lines below cannot be pasted in both; use the JSON or TOML block instead\n",
            );
        }
        for note in &self.notes {
            text.push_str(&format!("  note: {note}\n"));
        }
        let gemini_heading = if self.gemini_line_is_faithful() {
            "Gemini CLI (a command; user scope):"
        } else {
            "Gemini CLI (~/.gemini/settings.json: `gemini mcp add -e` would cut a value at its `=`):"
        };
        let opencode_heading = if self.read_only {
            "opencode (opencode.json):"
        } else {
            "opencode (opencode.json; asks before each write tool):"
        };
        // (heading, the harness whose approval line goes under it, block)
        let blocks = [
            (
                "Claude Code (a command; user scope, so every project sees it):",
                Some("claude_code"),
                self.claude_code(),
            ),
            (
                "Claude Code permissions (merge into ~/.claude/settings.json; lets the reads run unasked):",
                None,
                self.claude_code_allow(),
            ),
            ("Codex (~/.codex/config.toml):", Some("codex"), self.codex()),
            (
                "Claude Desktop (claude_desktop_config.json) and Cursor (~/.cursor/mcp.json):",
                Some("json"),
                self.json(),
            ),
            (gemini_heading, Some("gemini"), self.gemini()),
            (
                "Gemini CLI policy (~/.gemini/policies/resmon.toml; lets the reads run unasked):",
                None,
                self.gemini_policy(),
            ),
            (opencode_heading, Some("opencode"), self.opencode()),
        ];
        for (heading, harness, block) in blocks {
            text.push_str(&format!("\n{heading}\n"));
            if let Some(harness) = harness {
                text.push_str(&format!("  approval: {}\n", self.approval(harness)));
            }
            text.push_str(&format!("{block}\n"));
        }
        text
    }

    fn env_object(&self) -> Value {
        Value::Object(self.env.iter().map(|(key, value)| (key.clone(), json!(value))).collect())
    }
}

/// Where the approval lines' claims about a harness's interactive questions
/// come from: CI runs each harness headless, so these are its documentation
/// (or, for opencode, which has no CI stage, a run by hand).
const CLAUDE_CODE_DOCS: &str = "its permissions documentation, code.claude.com/docs/en/permissions";
const GEMINI_DOCS: &str =
    "its documentation of a server's `trust` and of its policy engine; not verified in CI";
const OPENCODE_SOURCE: &str = "its \"Permissions\" documentation, opencode.ai/docs/permissions; tried by hand with opencode 1.18.33, \
     not verified in CI";

/// The harnesses, as keyed in `--check --json`'s `register` and `register_approval`.
const HARNESSES: [&str; 5] = ["claude_code", "codex", "json", "gemini", "opencode"];

/// The read tools, in the table's order: every tool resmon runs without a
/// person's confirmation.
fn read_tools() -> impl Iterator<Item = &'static tools::Tool> {
    tools::TOOLS.iter().copied().filter(|tool| !tool.requires_confirmation)
}

/// The discovery variables that were set and that discovery consulted: the
/// trace names each variable it looked at, and a set variable it never
/// reached (RESMON_PORT_FILE when RESMON_PORT named the port) stays out.
/// Paths are made absolute, because a harness starts the server in a working
/// directory of its own.
///
/// Returns the variables and the notes that say what was changed.
fn discovery_variables(env: &Environment, trace: &Trace) -> (Vec<(String, String)>, Vec<String>) {
    let variables = [
        ("RESMON_PORT", env.port.as_ref(), false),
        ("RESMON_PORT_FILE", env.port_file.as_ref(), true),
        ("RESMON_DB_PATH", env.db_path.as_ref(), true),
        ("RESMON_STATE_DIR", env.state_dir.as_ref(), true),
    ];
    let mut out: Vec<(String, String)> = variables
        .into_iter()
        .filter(|(name, _, _)| trace.iter().any(|step| step.what == *name))
        .filter_map(|(name, value, is_path)| {
            let value = value?;
            let value = if is_path { absolute(value) } else { value.trim().to_string() };
            Some((name.to_string(), value))
        })
        .collect();
    // A default folder derived from XDG_STATE_HOME or LOCALAPPDATA holds only
    // while the harness passes that variable on, and many pass just a short
    // list (HOME, PATH, ...). So the folder discovery used is written out.
    let platform = Platform::current();
    let derived = match platform {
        Platform::Xdg => env.xdg_state_home.is_some(),
        Platform::Windows => env.local_app_data.is_some(),
        Platform::MacOs => false,
    };
    if derived
        && env.state_dir.is_none()
        && let Some(dir) = default_state_dir(platform, env).and_then(|dir| dir.to_str().map(str::to_string))
    {
        let port_from_default = env.port.is_none() && env.port_file.is_none() && env.db_path.is_none();
        if port_from_default {
            let file = std::path::Path::new(&dir).join("resmon.port");
            out.push(("RESMON_PORT_FILE".into(), file.to_string_lossy().into_owned()));
        }
        out.push(("RESMON_STATE_DIR".into(), dir));
    }
    let notes = name_the_port(&mut out, env, platform);
    (out, notes)
}

/// A state directory names no instance (contract 1.0 "The local API token";
/// contract-notes 1), so a registration never carries RESMON_STATE_DIR
/// without RESMON_PORT or RESMON_PORT_FILE. When discovery found the port
/// through a port file that no such variable named, that file is named:
/// the one beside RESMON_DB_PATH (which it then replaces, being the only
/// thing discovery read it for), or the one in the default state directory.
/// Where neither can be worked out, RESMON_STATE_DIR is left out and a note
/// says to register it together with the port. No port number is invented.
fn name_the_port(out: &mut Vec<(String, String)>, env: &Environment, platform: Platform) -> Vec<String> {
    let has = |out: &[(String, String)], name: &str| out.iter().any(|(key, _)| key == name);
    if !has(out, "RESMON_STATE_DIR") || has(out, "RESMON_PORT") || has(out, "RESMON_PORT_FILE") {
        return Vec::new();
    }
    let beside_database = out.iter().position(|(key, _)| key == "RESMON_DB_PATH");
    if let Some(at) = beside_database {
        let database = PathBuf::from(&out[at].1);
        let folder = database.parent().map(Path::to_path_buf).unwrap_or_default();
        if let Some(file) = folder.join("resmon.port").to_str().map(str::to_string) {
            out[at] = ("RESMON_PORT_FILE".into(), file);
            return vec![
                "RESMON_DB_PATH is registered as the port file beside the database (RESMON_PORT_FILE), the file \
                 discovery read the port from, so that RESMON_STATE_DIR goes with what names the port"
                    .to_string(),
            ];
        }
    } else if let Some(file) = default_state_dir(platform, env)
        .map(|dir| absolute(&dir.join("resmon.port").to_string_lossy()))
        .filter(|file| !file.contains('\u{FFFD}'))
    {
        let at = out.iter().position(|(key, _)| key == "RESMON_STATE_DIR").unwrap_or(out.len());
        out.insert(at, ("RESMON_PORT_FILE".into(), file));
        return vec![
            "RESMON_PORT_FILE names the port file in the default state directory, which discovery read, so that \
             RESMON_STATE_DIR goes with what names the port"
                .to_string(),
        ];
    }
    let dir =
        out.iter().find(|(key, _)| key == "RESMON_STATE_DIR").map(|(_, dir)| dir.clone()).unwrap_or_default();
    out.retain(|(key, _)| key != "RESMON_STATE_DIR");
    vec![format!(
        "RESMON_STATE_DIR ({dir}) was left out: nothing named the port, and the port file discovery read cannot be \
         written out; register it together with RESMON_PORT_FILE (the resmon.port file that resmon writes) or \
         RESMON_PORT"
    )]
}

fn absolute(path: &str) -> String {
    std::path::absolute(path)
        .ok()
        .and_then(|absolute| absolute.to_str().map(str::to_string))
        .unwrap_or_else(|| path.to_string())
}

/// Cargo's profile directories (target/release, target/debug) hold a
/// `.fingerprint` folder; an installed binary's directory does not.
fn is_cargo_build_output(binary: &Path) -> bool {
    binary.parent().is_some_and(|dir| dir.join(".fingerprint").is_dir())
}

/// One word for a POSIX shell (sh, bash, zsh): left bare when it holds only
/// characters no shell treats specially, otherwise single-quoted, inside
/// which nothing is special; a single quote itself is closed, escaped and
/// reopened. `~` is never left bare: bash expands it after `=` even in an
/// argument.
pub(crate) fn shell_word(value: &str) -> String {
    let bare = |c: char| c.is_ascii_alphanumeric() || "@%+:,./_-".contains(c);
    if !value.is_empty() && value.chars().all(bare) {
        return value.to_string();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// One word for the command lines on this platform: POSIX shell quoting,
/// or on Windows double quotes, which cmd.exe and PowerShell both honour
/// (single quotes mean nothing to cmd.exe). A value that no double-quoted
/// form carries unchanged through both falls back to POSIX quoting, and the
/// human report then says to use a JSON block (`command_lines_are_faithful`).
fn command_word(value: &str) -> String {
    if cfg!(windows) { windows_word(value).unwrap_or_else(|| shell_word(value)) } else { shell_word(value) }
}

/// A word for cmd.exe and PowerShell alike: bare when it holds only plain
/// characters, else in double quotes, with trailing backslashes doubled so
/// the closing quote is not read as escaped (the rule the C runtime and
/// Node.js use to split a Windows command line). None when the value holds
/// a character one of the two shells would act on inside double quotes
/// (`"`, `%` for cmd.exe; `$` and `` ` `` for PowerShell).
pub(crate) fn windows_word(value: &str) -> Option<String> {
    if value.chars().any(|c| "\"%$`".contains(c) || c.is_control()) {
        return None;
    }
    let bare = |c: char| c.is_ascii_alphanumeric() || "@+:,./\\_-".contains(c);
    if !value.is_empty() && value.chars().all(bare) {
        return Some(value.to_string());
    }
    let trailing = value.len() - value.trim_end_matches('\\').len();
    Some(format!("\"{value}{}\"", "\\".repeat(trailing)))
}

/// A TOML basic string: backslashes and quotes escaped, and every control
/// character written as an escape, since TOML allows none of them raw.
pub(crate) fn toml_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests;
