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

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::backend::MAX_REQUEST_TIMEOUT;
use crate::check::Report;
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
}

/// Adds the registrations to a connected report; a report that did not
/// connect already names the variable to set and gets nothing.
pub(crate) fn attach(report: &mut Report, config: &Config, trace: &Trace) {
    if !report.connected {
        return;
    }
    // Made absolute: on some systems current_exe is the path as the binary
    // was started, which may be relative to a working directory.
    let exe = std::env::current_exe()
        .and_then(std::path::absolute)
        .map_err(|error| format!("this binary's path cannot be read ({error})"));
    let exe = exe.and_then(|path| match path.to_str() {
        Some(text) => Ok(text.to_string()),
        None => Err(format!(
            "this binary's path {} is not valid Unicode, which no harness config can hold",
            path.display()
        )),
    });
    let registration = match exe {
        Ok(command) => Registration::new(command, config, trace),
        Err(why) => {
            let sentence =
                format!("No registration was printed: {why}. Register the binary by hand (docs/setup.md).");
            report.text.push_str(&format!("registration: {sentence}\n"));
            report.json["register_error"] = json!(sentence);
            return;
        }
    };
    report.text.push_str(&registration.human_text());
    report.json["register"] = registration.to_json();
}

impl Registration {
    pub fn new(command: String, config: &Config, trace: &Trace) -> Registration {
        let mut env = discovery_variables(&config.env, trace);
        // Not discovery, but the mode this check ran in: a registration that
        // silently dropped read-only would hand writes to a harness chosen
        // because it cannot ask a person.
        if config.read_only {
            env.push(("RESMON_MCP_READ_ONLY".into(), "1".into()));
        }
        if config.request_timeout < MAX_REQUEST_TIMEOUT {
            env.push(("RESMON_MCP_TIMEOUT_MS".into(), config.request_timeout.as_millis().to_string()));
        }
        Registration { command, env, read_only: config.read_only }
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

    /// A Codex `config.toml` fragment.
    pub(crate) fn codex(&self) -> String {
        let mut toml = format!("[mcp_servers.{SERVER_NAME}]\ncommand = {}\n", toml_string(&self.command));
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
            "codex": self.codex(),
            "json": self.json(),
            "gemini": self.gemini(),
            "opencode": self.opencode(),
        })
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
        let gemini_heading = if self.gemini_line_is_faithful() {
            "Gemini CLI (a command; user scope):".to_string()
        } else {
            "Gemini CLI (~/.gemini/settings.json: `gemini mcp add -e` would cut a value at its `=`):"
                .to_string()
        };
        let blocks = [
            (
                "Claude Code (a command; user scope, so every project sees it):".to_string(),
                self.claude_code(),
            ),
            ("Codex (~/.codex/config.toml):".to_string(), self.codex()),
            (
                "Claude Desktop (claude_desktop_config.json) and Cursor (~/.cursor/mcp.json):".to_string(),
                self.json(),
            ),
            (gemini_heading, self.gemini()),
            (
                if self.read_only {
                    "opencode (opencode.json):".to_string()
                } else {
                    "opencode (opencode.json; asks before each write tool):".to_string()
                },
                self.opencode(),
            ),
        ];
        for (heading, block) in blocks {
            text.push_str(&format!("\n{heading}\n{block}\n"));
        }
        text
    }

    fn env_object(&self) -> Value {
        Value::Object(self.env.iter().map(|(key, value)| (key.clone(), json!(value))).collect())
    }
}

/// The discovery variables that were set and that discovery consulted: the
/// trace names each variable it looked at, and a set variable it never
/// reached (RESMON_PORT_FILE when RESMON_PORT named the port) stays out.
/// Paths are made absolute, because a harness starts the server in a working
/// directory of its own.
fn discovery_variables(env: &Environment, trace: &Trace) -> Vec<(String, String)> {
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
    out
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
mod tests {
    use super::*;

    fn windows() -> Registration {
        Registration {
            command: r"C:\Program Files\resmon\resmon-mcp.exe".into(),
            env: vec![
                ("RESMON_STATE_DIR".into(), r"C:\Users\Ann O'Neil\AppData\Local\resmon".into()),
                ("RESMON_PORT_FILE".into(), "C:\\odd \"quoted\"\tname\u{7}\\resmon.port".into()),
            ],
            read_only: false,
        }
    }

    #[test]
    fn windows_paths_survive_json_and_toml() {
        let registration = windows();
        let json: Value = serde_json::from_str(&registration.json()).unwrap();
        let server = &json["mcpServers"]["resmon"];
        assert_eq!(server["command"], registration.command);
        assert_eq!(server["env"]["RESMON_STATE_DIR"], registration.env[0].1);
        assert_eq!(server["env"]["RESMON_PORT_FILE"], registration.env[1].1);

        let toml: toml::Table = registration.codex().parse().unwrap();
        let server = &toml["mcp_servers"]["resmon"];
        assert_eq!(server["command"].as_str(), Some(registration.command.as_str()));
        for (key, value) in &registration.env {
            assert_eq!(server["env"][key.as_str()].as_str(), Some(value.as_str()), "{key}");
        }

        let opencode: Value = serde_json::from_str(&registration.opencode()).unwrap();
        assert_eq!(opencode["mcp"]["resmon"]["command"], json!([registration.command]));
        assert_eq!(opencode["mcp"]["resmon"]["environment"]["RESMON_STATE_DIR"], registration.env[0].1);
    }

    #[test]
    fn shell_words_quote_only_what_needs_it() {
        assert_eq!(shell_word("/usr/local/bin/resmon-mcp"), "/usr/local/bin/resmon-mcp");
        assert_eq!(shell_word("/tmp/a b"), "'/tmp/a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("~/x"), "'~/x'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(windows_word(r"C:\resmon\resmon-mcp.exe").as_deref(), Some(r"C:\resmon\resmon-mcp.exe"));
        assert_eq!(
            windows_word(r"C:\Program Files\resmon\resmon-mcp.exe").as_deref(),
            Some(r#""C:\Program Files\resmon\resmon-mcp.exe""#)
        );
        assert_eq!(
            windows_word(r"C:\Users\Ann O'Neil\state\").as_deref(),
            Some(r#""C:\Users\Ann O'Neil\state\\""#)
        );
        assert_eq!(windows_word("%LOCALAPPDATA%"), None);
        assert_eq!(windows_word("a\"b"), None);
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word(r"C:\x"), r"'C:\x'");
    }

    #[test]
    fn a_value_with_an_equals_sign_moves_gemini_to_its_settings_file() {
        let mut registration = windows();
        assert!(registration.gemini().starts_with("gemini mcp add -s user resmon -e RESMON_STATE_DIR="));
        registration.env.push(("RESMON_DB_PATH".into(), "/data/a=b/resmon.db".into()));
        assert_eq!(registration.gemini(), registration.json());
    }

    #[test]
    fn read_only_registrations_ask_for_nothing() {
        let mut registration = windows();
        let full: Value = serde_json::from_str(&registration.opencode()).unwrap();
        assert_eq!(full["permission"].as_object().unwrap().len(), 7);
        assert_eq!(full["permission"]["resmon_update_settings"], "ask");
        registration.read_only = true;
        let read_only: Value = serde_json::from_str(&registration.opencode()).unwrap();
        assert!(read_only.get("permission").is_none());
    }
}
