//! Unit tests of the registrations: each harness's lines, the quoting per format and the approval settings derived from the tool table; they own no code of their own.

use super::*;

fn windows() -> Registration {
    Registration {
        command: r"C:\Program Files\resmon\resmon-mcp.exe".into(),
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
