//! Unit tests of the registrations: each harness's lines, the quoting per format and the approval settings derived from the tool table; they own no code of their own.

use super::quoting::shell_word;
// Used only by the Unix-shaped test of the variables.
#[cfg(unix)]
use super::variables::name_the_port;
use super::*;
#[cfg(unix)]
use crate::discovery::Environment;
use crate::discovery::Platform;

fn binary(path: &str) -> Launch {
    Launch { launcher: Launcher::Binary, command: path.into(), args: Vec::new(), notes: Vec::new() }
}

fn windows() -> Registration {
    Registration {
        launch: binary(r"C:\Program Files\resmon\resmon-mcp.exe"),
        env: vec![
            ("RESMON_STATE_DIR".into(), r"C:\Users\Ann O'Neil\AppData\Local\resmon".into()),
            ("RESMON_PORT_FILE".into(), "C:\\odd \"quoted\"\tname\u{7}\\resmon.port".into()),
        ],
        read_only: false,
        notes: Vec::new(),
    }
}

#[test]
fn windows_paths_survive_json_and_toml() {
    let registration = windows();
    let json: Value = serde_json::from_str(&registration.json()).unwrap();
    let server = &json["mcpServers"]["resmon"];
    assert_eq!(server["command"], registration.launch.command);
    assert_eq!(server["env"]["RESMON_STATE_DIR"], registration.env[0].1);
    assert_eq!(server["env"]["RESMON_PORT_FILE"], registration.env[1].1);

    let toml: toml::Table = registration.codex().parse().unwrap();
    let server = &toml["mcp_servers"]["resmon"];
    assert_eq!(server["command"].as_str(), Some(registration.launch.command.as_str()));
    for (key, value) in &registration.env {
        assert_eq!(server["env"][key.as_str()].as_str(), Some(value.as_str()), "{key}");
    }

    let opencode: Value = serde_json::from_str(&registration.opencode()).unwrap();
    assert_eq!(opencode["mcp"]["resmon"]["command"], json!([registration.launch.command]));
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
    let codex: toml::Table = registration.codex().parse().unwrap();
    assert_eq!(codex["mcp_servers"]["resmon"]["default_tools_approval_mode"].as_str(), Some("writes"));
    registration.read_only = true;
    let read_only: Value = serde_json::from_str(&registration.opencode()).unwrap();
    assert!(read_only.get("permission").is_none());
    let codex: toml::Table = registration.codex().parse().unwrap();
    assert!(codex["mcp_servers"]["resmon"].get("default_tools_approval_mode").is_none());
}

// Used only by the Unix-shaped test below.
#[cfg(unix)]
fn environment(pairs: &[(&str, &str)]) -> Environment {
    let mut env = Environment::default();
    for (key, value) in pairs {
        let value = Some(value.to_string());
        match *key {
            "RESMON_PORT" => env.port = value,
            "RESMON_PORT_FILE" => env.port_file = value,
            "RESMON_DB_PATH" => env.db_path = value,
            "RESMON_STATE_DIR" => env.state_dir = value,
            "HOME" => env.home = value,
            other => panic!("{other}"),
        }
    }
    env
}

// Used only by the Unix-shaped test below.
#[cfg(unix)]
fn keys(out: &[(String, String)]) -> Vec<&str> {
    out.iter().map(|(key, _)| key.as_str()).collect()
}

/// The state directory never goes without what names the port, and a
/// registration that names the port already is left as it is.
#[test]
#[cfg(unix)]
fn a_state_directory_is_registered_with_what_names_the_port() {
    let pair = |key: &str, value: &str| (key.to_string(), value.to_string());
    let env = environment(&[("HOME", "/home/ann")]);
    let mut out = vec![pair("RESMON_PORT", "7000"), pair("RESMON_STATE_DIR", "/s")];
    assert!(name_the_port(&mut out, &env, Platform::Xdg).is_empty());
    assert_eq!(keys(&out), ["RESMON_PORT", "RESMON_STATE_DIR"]);

    let mut out = vec![pair("RESMON_DB_PATH", "/data/resmon.db"), pair("RESMON_STATE_DIR", "/s")];
    let notes = name_the_port(&mut out, &env, Platform::Xdg);
    assert_eq!(out, [pair("RESMON_PORT_FILE", "/data/resmon.port"), pair("RESMON_STATE_DIR", "/s")]);
    assert!(notes[0].contains("RESMON_DB_PATH"), "{notes:?}");

    let mut out = vec![pair("RESMON_STATE_DIR", "/home/ann/.local/state/resmon")];
    name_the_port(&mut out, &env, Platform::Xdg);
    assert_eq!(keys(&out), ["RESMON_PORT_FILE", "RESMON_STATE_DIR"]);
    assert_eq!(out[0].1, "/home/ann/.local/state/resmon/resmon.port");

    // No default folder can be worked out: the state directory is left
    // out, and the note says to add the port with it.
    let mut out = vec![pair("RESMON_STATE_DIR", "/s")];
    let notes = name_the_port(&mut out, &Environment::default(), Platform::Xdg);
    assert!(out.is_empty(), "{out:?}");
    assert!(notes[0].contains("RESMON_PORT_FILE") && notes[0].contains("RESMON_PORT"), "{notes:?}");
}

fn npx(windows: bool) -> Registration {
    let started_by =
        crate::config::StartedBy { launcher: Some("npx".into()), package: Some("resmon-mcp@0.2.0".into()) };
    Registration {
        launch: launch(
            "/home/ann/.npm/_npx/9f/node_modules/resmon-mcp-linux-x64/resmon-mcp",
            &started_by,
            windows,
        ),
        env: vec![("RESMON_PORT_FILE".into(), "/home/ann/resmon/resmon.port".into())],
        read_only: false,
        notes: Vec::new(),
    }
}

/// Every format carries the launcher's program and its arguments, in order:
/// a command line after `--`, TOML's and JSON's `args`, opencode's one array.
#[test]
fn a_launch_with_arguments_reaches_every_format() {
    let registration = npx(false);
    let suffix = " -- npx -y resmon-mcp@0.2.0";
    assert!(registration.claude_code().ends_with(suffix), "{}", registration.claude_code());
    assert!(registration.gemini().ends_with(" npx -y resmon-mcp@0.2.0"), "{}", registration.gemini());
    let toml: toml::Table = registration.codex().parse().unwrap();
    let server = &toml["mcp_servers"]["resmon"];
    assert_eq!(server["command"].as_str(), Some("npx"));
    let args: Vec<&str> =
        server["args"].as_array().unwrap().iter().map(|arg| arg.as_str().unwrap()).collect();
    assert_eq!(args, ["-y", "resmon-mcp@0.2.0"]);
    let json: Value = serde_json::from_str(&registration.json()).unwrap();
    assert_eq!(json["mcpServers"]["resmon"]["command"], "npx");
    assert_eq!(json["mcpServers"]["resmon"]["args"], json!(["-y", "resmon-mcp@0.2.0"]));
    let opencode: Value = serde_json::from_str(&registration.opencode()).unwrap();
    assert_eq!(opencode["mcp"]["resmon"]["command"], json!(["npx", "-y", "resmon-mcp@0.2.0"]));
    // On Windows, npx is a batch file that only cmd runs; a person types npx itself.
    let windows = npx(true);
    let json: Value = serde_json::from_str(&windows.json()).unwrap();
    assert_eq!(json["mcpServers"]["resmon"]["command"], "cmd");
    assert_eq!(json["mcpServers"]["resmon"]["args"], json!(["/c", "npx", "-y", "resmon-mcp@0.2.0"]));
    assert_eq!(windows.check_command(Harness::Codex, false), "npx -y resmon-mcp@0.2.0 --check --for codex");
}

/// Where each harness's file lives, as a person on that system writes it.
#[test]
fn each_harness_names_its_file_on_this_system() {
    let registration = windows();
    let text = |harness, platform| registration.harness_text_on(harness, true, platform);
    assert!(text(Harness::Codex, Platform::Xdg).contains("Codex (add to ~/.codex/config.toml"));
    assert!(
        text(Harness::Codex, Platform::Windows).contains(r"Codex (add to %USERPROFILE%\.codex\config.toml")
    );
    assert!(text(Harness::ClaudeDesktop, Platform::MacOs).contains(
        "merge into ~/Library/Application Support/Claude/claude_desktop_config.json, then restart"
    ));
    assert!(
        text(Harness::ClaudeDesktop, Platform::Windows)
            .contains(r"merge into %APPDATA%\Claude\claude_desktop_config.json, then restart")
    );
    // No Claude Desktop for Linux: where it lives on the two systems it runs on.
    let linux = text(Harness::ClaudeDesktop, Platform::Xdg);
    assert!(linux.contains("Claude Desktop runs on macOS and Windows"), "{linux}");
    assert!(text(Harness::Gemini, Platform::Windows).contains(r"%USERPROFILE%\.gemini\policies\resmon.toml"));
    assert!(text(Harness::Opencode, Platform::MacOs).contains("~/.config/opencode/opencode.json"));
    assert!(text(Harness::Cursor, Platform::Xdg).contains("~/.cursor/mcp.json"));
    assert!(text(Harness::ClaudeCode, Platform::Xdg).contains("user scope"));
}

#[test]
fn harness_names_are_read_as_a_person_writes_them() {
    assert_eq!(Harness::parse("Claude_Code"), Ok(Harness::ClaudeCode));
    assert_eq!(Harness::parse("claude"), Ok(Harness::ClaudeCode));
    assert_eq!(Harness::parse("gemini-cli"), Ok(Harness::Gemini));
    assert_eq!(Harness::parse(" OpenCode "), Ok(Harness::Opencode));
    for harness in Harness::ALL {
        assert_eq!(Harness::parse(harness.option()), Ok(harness));
    }
    assert!(Harness::parse("vscode").unwrap_err().contains("claude-code, codex"));
}

/// Without `--for`, the registration is a handful of lines: how the server
/// will be started, and the command that prints each harness's blocks.
#[test]
fn the_summary_names_a_command_per_harness_and_no_block() {
    let registration = npx(false);
    let summary = registration.summary_text(false);
    assert!(summary.lines().count() <= 12, "{summary}");
    assert!(summary.contains("not yet verified"), "{summary}");
    for harness in Harness::ALL {
        let line = format!("npx -y resmon-mcp@0.2.0 --check --for {}\n", harness.option());
        assert!(summary.contains(&line), "{summary}");
    }
    assert!(!summary.contains("mcp add") && !summary.contains('{'), "{summary}");
    assert!(!registration.summary_text(true).contains("not yet verified"));
}
