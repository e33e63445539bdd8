//! Ready-to-paste registrations, printed by `--check`.
//!
//! Every harness needs the same two facts in its own format: how to start
//! this server, and the environment that discovery consulted. Both are taken
//! from the check that just ran, so what a person pastes is what the check
//! used, not a template to fill in by hand. How to start it is the launcher's
//! command when npx or uvx started the check (`launch.rs`: their copies of
//! the binary live in caches that an update replaces), otherwise the
//! binary's absolute path. Paths with spaces, quotes and Windows backslashes
//! are the usual reason a stdio server never starts inside a harness, so
//! every value is quoted for where it goes (`quoting.rs`). The token is
//! never part of a registration: the server reads it itself.
//!
//! This module builds the blocks; `harnesses.rs` says, per harness, what it
//! will ask before and where its file lives, and lays out the text.

mod harnesses;
mod launch;
mod quoting;
mod variables;

use serde_json::{Map, Value, json};

use crate::backend::MAX_REQUEST_TIMEOUT;
use crate::config::Config;
use crate::discovery::Trace;
use crate::tools;
pub use harnesses::Harness;
pub(crate) use launch::{Launch, Launcher, launch};
use quoting::{command_word, toml_string, windows_word};

/// The name every registration gives the server. Harnesses build the names
/// the model sees from it: `mcp__resmon__health`, `resmon_health`, ...
pub(crate) const SERVER_NAME: &str = "resmon";

/// What a harness must be told to start this server as `--check` ran it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Registration {
    pub launch: Launch,
    /// In the order discovery reads them, then the server's own settings.
    pub env: Vec<(String, String)>,
    /// Read-only sessions offer no write tool, so nothing needs a permission rule.
    pub read_only: bool,
    /// Sentences about what was changed or left out, and why.
    pub notes: Vec<String>,
}

impl Registration {
    pub(crate) fn new(launch: Launch, config: &Config, trace: &Trace) -> Registration {
        let (mut env, mut notes) = variables::discovery_variables(&config.env, trace);
        // Not discovery, but the mode this check ran in: a registration that
        // silently dropped read-only would hand writes to a harness chosen
        // because it cannot ask a person.
        if config.read_only {
            env.push(("RESMON_MCP_READ_ONLY".into(), "1".into()));
        }
        if config.request_timeout < MAX_REQUEST_TIMEOUT {
            env.push(("RESMON_MCP_TIMEOUT_MS".into(), config.request_timeout.as_millis().to_string()));
        }
        notes.splice(0..0, launch.notes.iter().cloned());
        Registration { launch, env, read_only: config.read_only, notes }
    }

    /// The program, then its arguments.
    fn argv(&self) -> impl Iterator<Item = &String> {
        std::iter::once(&self.launch.command).chain(&self.launch.args)
    }

    /// `claude mcp add` at user scope, so that the server is there in every
    /// project; the `--` keeps the command's own options (npx's `-y`) from
    /// being read as claude's.
    pub(crate) fn claude_code(&self) -> String {
        let mut words = vec!["claude mcp add -s user".to_string(), SERVER_NAME.to_string()];
        for (key, value) in &self.env {
            words.push(format!("-e {key}={}", command_word(value)));
        }
        words.push("--".into());
        words.extend(self.argv().map(|word| command_word(word)));
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
        let mut toml =
            format!("[mcp_servers.{SERVER_NAME}]\ncommand = {}\n", toml_string(&self.launch.command));
        if !self.launch.args.is_empty() {
            let args: Vec<String> = self.launch.args.iter().map(|arg| toml_string(arg)).collect();
            toml.push_str(&format!("args = [{}]\n", args.join(", ")));
        }
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
            "command": self.launch.command,
            "args": self.launch.args,
            "env": self.env_object(),
        }}}))
    }

    /// `gemini mcp add` at user scope. Gemini CLI passes on an option it
    /// does not know (npx's `-y`) as one of the command's arguments. It
    /// splits each `-e` at every `=` and keeps the first two pieces, so a
    /// value holding `=` would arrive cut short; then the settings.json
    /// block is the only faithful form, and that is what this returns instead.
    pub(crate) fn gemini(&self) -> String {
        if self.gemini_line_is_faithful() {
            let mut words = vec!["gemini mcp add -s user".to_string(), SERVER_NAME.to_string()];
            for (key, value) in &self.env {
                words.push(format!("-e {key}={}", command_word(value)));
            }
            words.extend(self.argv().map(|word| command_word(word)));
            words.join(" ")
        } else {
            self.json()
        }
    }

    /// Whether the claude and gemini lines paste as printed in this
    /// platform's shells.
    pub(crate) fn command_lines_are_faithful(&self) -> bool {
        !cfg!(windows)
            || self
                .argv()
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
        let command: Vec<&String> = self.argv().collect();
        let mut config = json!({"mcp": {SERVER_NAME: {
            "type": "local",
            "command": command,
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

    pub(crate) fn to_json(&self) -> Value {
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

    /// How the harness starts the server: the launcher, program and arguments.
    pub(crate) fn launch_json(&self) -> Value {
        json!({"by": self.launch.launcher.as_str(), "command": self.launch.command, "args": self.launch.args})
    }

    /// What each harness will ask before, keyed by its `--for` name
    /// (`claude_code`, `codex`, `claude_desktop`, `cursor`, `gemini`, `opencode`).
    pub(crate) fn approval_json(&self) -> Value {
        Value::Object(
            Harness::ALL
                .iter()
                .map(|harness| (harness.key().to_string(), json!(self.approval(*harness))))
                .collect(),
        )
    }

    fn env_object(&self) -> Value {
        Value::Object(self.env.iter().map(|(key, value)| (key.clone(), json!(value))).collect())
    }
}

/// The read tools, in the table's order: every tool resmon runs without a
/// person's confirmation.
fn read_tools() -> impl Iterator<Item = &'static tools::Tool> {
    tools::TOOLS.iter().copied().filter(|tool| !tool.requires_confirmation)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests;
