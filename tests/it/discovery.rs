//! Discovery's edge cases through the real binary (contract-notes 1 and 2;
//! docs/setup.md, "Windows"): what is at a path is named before it is
//! opened, and nothing blocks; quoted values, an empty RESMON_PORT and files
//! as Windows editors save them are answered with what they are;
//! `call <tool> -` reads stdin.
//!
//! The Windows-only answers (a directory opened as a file, a file held open
//! by another program, `Z:\` paths, `%LOCALAPPDATA%`) are covered by the Wine
//! stage, tests/wine/run.sh.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{
    Launch, TempDir, cli_call, env_for, printed_answer, run_cli, start_fake, start_fake_at, vars,
};

/// A refusal about a local file must come at once: well under the
/// per-request bound, and nowhere near a hang.
const PROMPTLY: Duration = Duration::from_secs(3);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|_| panic!("not JSON: {}{}", self.stdout, self.stderr))
    }
}

/// Runs the binary with exactly `env` (plus PATH and an empty HOME), feeding
/// `stdin`. With `as_other_user`, a root test runs it as `nobody`, so that a
/// file without read permission is really refused. A successful `call` is
/// checked against its tool's outputSchema.
fn run(args: &[&str], env: &[(String, String)], stdin: &[u8], as_other_user: bool) -> Run {
    let mut launch = Launch::new(env).args(args).stdin(stdin);
    if as_other_user {
        launch = launch.run_as_other_user();
    }
    let started = Instant::now();
    let output = launch.output();
    let took = started.elapsed();
    if let ["call", tool, ..] = args {
        printed_answer(tool, &output);
    }
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took,
    }
}

fn show(path: &Path) -> String {
    path.display().to_string()
}

/// Removes a special file before the fake backend is dropped (declare it
/// after the fake): the fake's cleanup reads its token file, and a FIFO or a
/// link to /dev/zero there would make the test itself hang.
struct RemoveFirst(std::path::PathBuf);

impl Drop for RemoveFirst {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `call health {}` with these variables, expected to be refused as
/// `backend_unavailable` at once; returns the error object.
fn refused(vars: &[(String, String)]) -> Value {
    let run = run(&["call", "health", "{}"], vars, b"", false);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.took < PROMPTLY, "took {:?}", run.took);
    let answer = run.json();
    assert_eq!(answer["error"], "backend_unavailable", "{answer}");
    assert_eq!(answer["tried"], json!([]), "{answer}");
    answer
}

fn message(answer: &Value) -> &str {
    answer["message"].as_str().unwrap()
}

/// The advice that only a real permission denial earns.
fn advises_permissions(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("permission") || lower.contains("not allowed")
}

#[test]
fn an_empty_resmon_port_is_malformed_and_the_port_file_is_not_read() {
    let fake = start_fake();
    let mut vars = env_for(&fake);
    vars.push(("RESMON_PORT".into(), String::new()));
    let answer = refused(&vars);
    assert_eq!(answer["detail"]["source"], "RESMON_PORT");
    assert_eq!(answer["detail"]["value"], "");
    assert!(message(&answer).starts_with("RESMON_PORT is set but empty."), "{answer}");
    assert!(fake.requests().is_empty(), "the empty RESMON_PORT fell through to the port file");
    let check = run_cli(&["--check"], &vars);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout.contains("RESMON_PORT: set but empty"), "{stdout}");
    assert!(!stdout.contains("port file /"), "the port file was looked at: {stdout}");
}

#[test]
fn a_port_file_that_is_a_directory_is_called_one_and_the_file_inside_is_suggested() {
    let dir = TempDir::new();
    let vars = vars(&[("RESMON_PORT_FILE", show(dir.path())), ("RESMON_STATE_DIR", show(dir.path()))]);
    let answer = refused(&vars);
    assert_eq!(answer["detail"]["problem"], "directory");
    let text = message(&answer);
    assert!(text.contains(&format!("{} is a directory, not a file", show(dir.path()))), "{text}");
    assert!(text.contains(&show(&dir.path().join("resmon.port"))), "{text}");
    assert!(!advises_permissions(text), "{text}");
}

#[test]
fn a_port_file_or_token_file_that_is_a_fifo_answers_at_once() {
    let dir = TempDir::new();
    let fifo = dir.path().join("resmon.port");
    mkfifo(&fifo);
    let vars = vars(&[("RESMON_PORT_FILE", show(&fifo)), ("RESMON_STATE_DIR", show(dir.path()))]);
    let answer = refused(&vars);
    assert_eq!(answer["detail"]["problem"], "not_a_regular_file");
    assert!(message(&answer).contains("is a named pipe (FIFO), not a regular file"), "{answer}");
    assert!(!advises_permissions(message(&answer)), "{answer}");

    let fake_dir = TempDir::new();
    let fake = start_fake_at(fake_dir.path());
    std::fs::remove_file(fake.token_file()).unwrap();
    let _first = RemoveFirst(fake.token_file());
    mkfifo(&fake.token_file());
    let answer = refused(&env_for(&fake));
    assert_eq!(answer["detail"]["problem"], "not_a_regular_file");
    assert_eq!(answer["detail"]["port"], fake.port());
    assert!(message(&answer).contains("named pipe (FIFO)"), "{answer}");
    assert!(fake.requests().is_empty(), "a request went out without a token");
}

#[test]
fn a_token_file_that_is_a_directory_or_a_device_is_named_so() {
    let fake = start_fake();
    std::fs::remove_file(fake.token_file()).unwrap();
    let _first = RemoveFirst(fake.token_file());
    std::fs::create_dir(fake.token_file()).unwrap();
    let answer = refused(&env_for(&fake));
    assert_eq!(answer["detail"]["problem"], "directory");
    assert!(message(&answer).contains("is a directory, not a file"), "{answer}");
    assert!(!advises_permissions(message(&answer)), "{answer}");
    std::fs::remove_dir(fake.token_file()).unwrap();
    // A link to a device is followed and the device named, never read.
    std::os::unix::fs::symlink("/dev/zero", fake.token_file()).unwrap();
    let answer = refused(&env_for(&fake));
    assert_eq!(answer["detail"]["problem"], "not_a_regular_file");
    assert!(message(&answer).contains("is a character device"), "{answer}");
    assert!(fake.requests().is_empty());
}

#[test]
fn a_device_as_the_port_file_is_refused_without_reading_it() {
    let dir = TempDir::new();
    for device in ["/dev/zero", "/dev/null"] {
        let vars = vars(&[("RESMON_PORT_FILE", device.to_string()), ("RESMON_STATE_DIR", show(dir.path()))]);
        let answer = refused(&vars);
        assert_eq!(answer["detail"]["problem"], "not_a_regular_file", "{device}");
        assert!(message(&answer).contains("character device"), "{answer}");
    }
}

#[test]
fn only_a_real_permission_denial_is_answered_with_permissions_advice() {
    use std::os::unix::fs::PermissionsExt;
    let fake = start_fake();
    // The token file, unreadable to the server's user, as a second user meets it.
    std::fs::set_permissions(fake.token_file(), std::fs::Permissions::from_mode(0o000)).unwrap();
    let answer = run(&["call", "health", "{}"], &env_for(&fake), b"", true).json();
    assert_eq!(answer["error"], "backend_unavailable", "{answer}");
    assert_eq!(answer["detail"]["problem"], "permission_denied", "{answer}");
    assert!(message(&answer).contains("is not allowed to read it"), "{answer}");
    assert!(message(&answer).contains("Run this server as the user that runs resmon"), "{answer}");
    // The port file.
    std::fs::set_permissions(fake.port_file(), std::fs::Permissions::from_mode(0o000)).unwrap();
    let answer = run(&["call", "health", "{}"], &env_for(&fake), b"", true).json();
    assert_eq!(answer["detail"]["problem"], "permission_denied", "{answer}");
    assert!(message(&answer).contains("Fix its permissions"), "{answer}");
    assert!(fake.requests().is_empty());
}

#[test]
fn a_path_in_quotes_is_refused_naming_the_quotes_and_nothing_is_stripped() {
    let fake = start_fake();
    let quoted_dir = format!("\"{}\"", show(&fake.state_dir()));
    let quoted_file = format!("'{}'", show(&fake.port_file()));
    for (name, value) in [("RESMON_STATE_DIR", quoted_dir), ("RESMON_PORT_FILE", quoted_file)] {
        let mut vars: Vec<(String, String)> =
            env_for(&fake).into_iter().filter(|(key, _)| key != name).collect();
        vars.push((name.to_string(), value.clone()));
        let answer = refused(&vars);
        assert_eq!(answer["detail"]["source"], name);
        assert_eq!(answer["detail"]["value"], value);
        assert_eq!(answer["detail"]["problem"], "quoted");
        let text = message(&answer);
        assert!(text.starts_with(&format!("{name} is wrapped in quotes ({value}).")), "{text}");
        assert!(text.contains("The quotes are part of the value") && text.contains("Remove them"), "{text}");
        assert!(!advises_permissions(text), "{text}");
    }
    let mut vars = env_for(&fake);
    vars.push(("RESMON_PORT".into(), format!("\"{}\"", fake.port())));
    let answer = refused(&vars);
    assert_eq!(answer["detail"]["problem"], "quoted");
    assert!(fake.requests().is_empty(), "a quoted value was stripped and used");
}

#[test]
fn a_port_file_with_a_utf8_bom_or_crlf_is_read() {
    for (prefix, suffix) in [(&b"\xEF\xBB\xBF"[..], &b""[..]), (b"", b"\r\n")] {
        let fake = start_fake();
        let bytes = [prefix, fake.port().to_string().as_bytes(), suffix].concat();
        std::fs::write(fake.port_file(), &bytes).unwrap();
        let (code, answer, output) = cli_call("health", json!({}), &env_for(&fake));
        assert_eq!(code, Some(0), "{bytes:?}: {output}");
        assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id());
        if !prefix.is_empty() {
            let check = run_cli(&["--check"], &env_for(&fake));
            let stdout = String::from_utf8_lossy(&check.stdout);
            assert!(stdout.contains("after a UTF-8 byte-order mark, which was ignored"), "{stdout}");
        }
    }
}

#[test]
fn a_utf16_port_file_is_named_as_utf16_and_its_value_shown_decoded() {
    let fake = start_fake();
    let port = fake.port().to_string();
    let le: Vec<u8> = format!("{port}\r\n").encode_utf16().flat_map(u16::to_le_bytes).collect();
    let with_bom = [vec![0xFF, 0xFE], le.clone()].concat();
    for bytes in [with_bom, le] {
        std::fs::write(fake.port_file(), &bytes).unwrap();
        let answer = refused(&env_for(&fake));
        assert_eq!(answer["detail"]["encoding"], "UTF-16LE");
        assert_eq!(answer["detail"]["value"], port, "shown decoded, not garbled");
        let text = message(&answer);
        assert!(text.contains("is saved as UTF-16") && text.contains("Save it as plain text"), "{text}");
        assert!(!text.contains('\u{fffd}') && !text.contains("\\u{0}"), "{text}");
    }
    assert!(fake.requests().is_empty());
}

#[test]
fn no_token_file_names_the_older_release_and_a_missing_folder() {
    let fake = start_fake();
    std::fs::remove_file(fake.token_file()).unwrap();
    let answer = refused(&env_for(&fake));
    assert_eq!(answer["detail"]["problem"], "absent");
    let text = message(&answer);
    // What was seen first, and no resmon said to be there; the likeliest
    // cause (a state folder elsewhere) before the rarer ones.
    assert!(
        text.starts_with(&format!(
            "There is no token file for port {} at {}, so nothing was sent to that port",
            fake.port(),
            show(&fake.token_file())
        )),
        "{text}"
    );
    assert!(!text.contains("resmon published"), "{text}");
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle:?} missing: {text}"));
    assert!(at("set RESMON_STATE_DIR") < at("start it again"), "{text}");
    assert!(at("start it again") < at("older than the local-API token"), "{text}");
    assert!(text.contains("must be updated"), "{text}");
    assert!(!text.contains("does not exist either"), "the folder exists: {text}");
    let missing = fake.dir().join("no such folder");
    let vars = vars(&[("RESMON_PORT_FILE", show(&fake.port_file())), ("RESMON_STATE_DIR", show(&missing))]);
    let answer = refused(&vars);
    assert!(
        message(&answer).contains(&format!("The folder {} does not exist either.", show(&missing))),
        "{answer}"
    );
}

#[test]
fn an_empty_state_dir_counts_as_unset_and_is_named() {
    let fake = start_fake();
    let empty_dir =
        vars(&[("RESMON_PORT_FILE", show(&fake.port_file())), ("RESMON_STATE_DIR", String::new())]);
    let answer = refused(&empty_dir);
    let text = message(&answer);
    assert!(text.contains("RESMON_STATE_DIR is set but empty, which counts as unset"), "{text}");
    let check = run_cli(&["--check"], &empty_dir);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(stdout.contains("RESMON_STATE_DIR: set but empty, which counts as unset"), "{stdout}");
    let answer = refused(&vars(&[("RESMON_PORT_FILE", String::new())]));
    assert_eq!(answer["no_port_named"], true);
    assert!(
        message(&answer).contains("RESMON_PORT_FILE is set but empty, which counts as unset."),
        "{answer}"
    );
}

#[test]
fn without_home_the_platforms_variables_are_named() {
    let output = Launch::new(&[]).args(["call", "health", "{}"]).without_home().output();
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["no_port_named"], true, "{answer}");
    assert!(message(&answer).contains("(neither XDG_STATE_HOME nor HOME is set)"), "{answer}");
    assert_eq!(answer["detail"]["missing"], json!(["XDG_STATE_HOME", "HOME"]));
}

#[test]
fn call_with_dash_reads_the_arguments_from_stdin() {
    let fake = start_fake();
    for stdin in [b"{}\n".to_vec(), b"\xEF\xBB\xBF{}\r\n".to_vec()] {
        let run = run(&["call", "health", "-"], &env_for(&fake), &stdin, false);
        assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
        assert_eq!(run.json()["identity"]["runtime_id"], fake.runtime_id());
    }
    let arguments = br#"{"query": "graph", "limit": 2}"#;
    let run = run(&["call", "search_corpus", "-"], &env_for(&fake), arguments, false);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let searches = fake.requests_to("POST", "/api/explorer/search");
    let sent = searches.last().and_then(|request| request.json()).unwrap_or(Value::Null);
    assert!(sent.to_string().contains("graph"), "the stdin arguments were not sent: {sent}");
}

#[test]
fn call_with_bad_arguments_shows_a_form_for_every_shell() {
    let fake = start_fake();
    // What cmd.exe hands over for '{}': the single quotes stay.
    let quoted = run(&["call", "health", "'{}'"], &env_for(&fake), b"", false);
    assert_eq!(quoted.code, Some(2));
    let text = &quoted.stderr;
    assert!(text.contains("The arguments given for health are not valid JSON"), "{text}");
    assert!(text.contains("wrapped in single quotes, which cmd.exe passes on as they are"), "{text}");
    assert!(text.contains(r#""{\"key\":\"value\"}""#), "{text}");
    assert!(text.contains("resmon-mcp call health - < arguments.json"), "{text}");
    assert!(!text.contains("'{}'"), "the hint that fails in cmd.exe is gone: {text}");
    for (stdin, expected) in [
        (b"{\"a\":".to_vec(), "The arguments read from stdin for health are not valid JSON"),
        (Vec::new(), "No arguments for health arrived on stdin"),
        ([&[0xFFu8, 0xFE][..], &[b'{', 0, b'}', 0]].concat(), "are UTF-16LE; save them as UTF-8"),
    ] {
        let run = run(&["call", "health", "-"], &env_for(&fake), &stdin, false);
        assert_eq!(run.code, Some(2), "{stdin:?}");
        assert!(run.stderr.contains(expected), "{stdin:?}: {}", run.stderr);
    }
    assert!(fake.requests().is_empty(), "bad arguments reached resmon");
}

#[test]
fn an_unknown_tool_is_named_before_stdin_is_read() {
    // Stdin stays open, so a server that read it first would not answer.
    let mut running = Launch::new(&[]).args(["call", "no_such_tool", "-"]).spawn();
    let started = Instant::now();
    while running.child.try_wait().unwrap().is_none() {
        if started.elapsed() > PROMPTLY {
            panic!("an unknown tool waited on stdin");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let output = running.wait("call no_such_tool -");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("No tool is named \"no_such_tool\"."), "{stderr}");
}

#[test]
fn a_reference_no_shell_expanded_is_named_with_the_path_written_out() {
    let fake = start_fake();
    let home = TempDir::new();
    let cases = [
        (
            "RESMON_STATE_DIR",
            "~/.local/state/resmon".to_string(),
            "~",
            show(&home.path().join(".local/state/resmon")),
        ),
        (
            "RESMON_PORT_FILE",
            "$HOME/resmon.port".to_string(),
            "$HOME",
            show(&home.path().join("resmon.port")),
        ),
        (
            "RESMON_STATE_DIR",
            r"%LOCALAPPDATA%\resmon".to_string(),
            "%LOCALAPPDATA%",
            r"C:\Users\me\AppData\Local\resmon".into(),
        ),
    ];
    for (name, value, reference, written_out) in cases {
        let mut vars: Vec<(String, String)> =
            env_for(&fake).into_iter().filter(|(key, _)| key != name).collect();
        vars.push((name.to_string(), value.clone()));
        vars.push(("HOME".into(), show(home.path())));
        vars.push(("LOCALAPPDATA".into(), r"C:\Users\me\AppData\Local".into()));
        let answer = refused(&vars);
        assert_eq!(answer["detail"]["problem"], "not_expanded", "{answer}");
        assert_eq!(answer["detail"]["written_out"], written_out, "{answer}");
        let text = message(&answer);
        assert!(
            text.starts_with(&format!("{name} holds {value}, in which {reference} was never expanded")),
            "{text}"
        );
        assert!(text.contains(&format!("Here that would be {written_out}.")), "{text}");
    }
    assert!(fake.requests().is_empty());
    // A folder that really has such a name is used as it is.
    let literal = fake.dir().join("$HOME");
    std::fs::create_dir(&literal).unwrap();
    std::fs::copy(fake.token_file(), literal.join(format!("api-token-{}", fake.port()))).unwrap();
    let vars = vars(&[("RESMON_PORT_FILE", show(&fake.port_file())), ("RESMON_STATE_DIR", show(&literal))]);
    let (code, answer, output) = cli_call("health", json!({}), &vars);
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id());
}

/// A named port whose state folder cannot be worked out is reported as that
/// instance, never as "no instance was named".
#[test]
fn a_named_port_without_a_state_folder_is_named_as_such() {
    let output = Launch::new(&[("RESMON_PORT".to_string(), "8742".to_string())])
        .args(["call", "health", "{}"])
        .without_home()
        .output();
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["error"], "backend_unavailable", "{answer}");
    assert!(answer.get("no_port_named").is_none(), "a port was named: {answer}");
    assert!(message(&answer).starts_with("Port 8742 was named, but the state directory"), "{answer}");
    assert!(message(&answer).contains("RESMON_STATE_DIR"), "{answer}");
}

/// A RESMON_* value that is not valid Unicode is set, so it is refused by
/// name instead of read as unset (which would fall through to a port file).
#[test]
fn a_value_that_is_not_unicode_is_refused_by_name() {
    use std::os::unix::ffi::OsStrExt;
    let fake = start_fake();
    let home = TempDir::new();
    let default_state = home.path().join(".local/state/resmon");
    std::fs::create_dir_all(&default_state).unwrap();
    // A port file in the default folder that would be used if the bad value were ignored.
    std::fs::copy(fake.port_file(), default_state.join("resmon.port")).unwrap();
    for name in ["RESMON_PORT", "RESMON_PORT_FILE", "RESMON_STATE_DIR"] {
        fake.clear_requests();
        let output = Launch::new(&[])
            .args(["call", "health", "{}"])
            .home(home.path())
            .raw_env(name, std::ffi::OsStr::from_bytes(b"/tmp/\xff").to_os_string())
            .output();
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(answer["error"], "backend_unavailable", "{name}: {answer}");
        assert_eq!(answer["detail"]["source"], name, "{answer}");
        assert!(message(&answer).contains("not valid Unicode"), "{answer}");
        assert!(fake.requests().is_empty(), "{name}: nothing may be sent anywhere");
    }
}

/// A home whose default state folder (the XDG one, as on Linux) holds a live
/// resmon, with its port file and token there, as the packaged app leaves them.
fn resmon_in_the_default_folder() -> (TempDir, std::path::PathBuf, crate::fake_backend::FakeBackend) {
    let home = TempDir::new();
    let default = home.path().join(".local/state/resmon");
    std::fs::create_dir_all(&default).unwrap();
    let fake = start_fake_at(&default);
    (home, default, fake)
}

fn call_at_home(home: &Path, env: &[(String, String)]) -> Run {
    let started = Instant::now();
    let output = Launch::new(env).args(["call", "health", "{}"]).home(home).output();
    let took = started.elapsed();
    printed_answer("health", &output);
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        took,
    }
}

/// A state folder other than the default names no instance (contract-notes
/// 1): with nothing naming a port, the default port file is not read, even
/// though it names a live resmon and the named folder holds a token for it.
/// With RESMON_PORT_FILE or RESMON_PORT beside it, the named instance is used.
#[test]
fn a_state_dir_other_than_the_default_names_no_instance() {
    let (home, _default, at_default) = resmon_in_the_default_folder();
    let elsewhere = TempDir::new();
    let other = start_fake_at(elsewhere.path());
    // Were the default port file read, this token would let the call through.
    std::fs::copy(at_default.token_file(), elsewhere.path().join(format!("api-token-{}", at_default.port())))
        .unwrap();
    let state_only = vars(&[("RESMON_STATE_DIR", show(elsewhere.path()))]);
    let run = call_at_home(home.path(), &state_only);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.took < PROMPTLY, "took {:?}", run.took);
    let answer = run.json();
    assert_eq!(answer["error"], "backend_unavailable", "{answer}");
    assert_eq!(answer["tried"], json!([]), "{answer}");
    assert_eq!(answer["no_port_named"], true, "{answer}");
    assert_eq!(answer["detail"]["problem"], "state_dir_names_no_port", "{answer}");
    assert_eq!(answer["detail"]["state_dir"], show(elsewhere.path()), "{answer}");
    let text = message(&answer);
    for needle in
        ["A state directory names no instance", "Set RESMON_PORT", "RESMON_PORT_FILE to the port file"]
    {
        assert!(text.contains(needle), "{needle:?} missing: {text}");
    }
    assert!(text.contains(&show(&home.path().join(".local/state/resmon"))), "the default is named: {text}");
    assert!(!text.contains("not running"), "{text}");
    assert!(at_default.requests().is_empty(), "the default instance was reached");
    assert!(other.requests().is_empty(), "nothing named the other instance's port");

    // --check says the same, and its trace says why the port file was left alone.
    let check = Launch::new(&state_only).args(["--check"]).home(home.path()).output();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("default state directory: ")
            && stdout.contains("not the folder RESMON_STATE_DIR names; a state directory names no instance"),
        "{stdout}"
    );
    assert!(!stdout.contains("port file /"), "a port file was read: {stdout}");
    assert!(stdout.contains("A state directory names no instance"), "{stdout}");
    assert!(at_default.requests().is_empty(), "--check reached the default instance");

    // Naming the port as well reaches the named instance, and only it.
    let with_file =
        vars(&[("RESMON_STATE_DIR", show(elsewhere.path())), ("RESMON_PORT_FILE", show(&other.port_file()))]);
    let with_port =
        vars(&[("RESMON_STATE_DIR", show(elsewhere.path())), ("RESMON_PORT", other.port().to_string())]);
    for env in [with_file, with_port] {
        let run = call_at_home(home.path(), &env);
        assert_eq!(run.code, Some(0), "{env:?}: {}{}", run.stdout, run.stderr);
        assert_eq!(run.json()["identity"]["runtime_id"], other.runtime_id());
    }
    assert!(at_default.requests().is_empty(), "the default instance was reached");
}

/// The default state folder named however a person may write it is still the
/// default: its port file is read and the instance there answers.
#[test]
fn the_default_state_dir_spelled_differently_is_still_the_default() {
    let (home, default, fake) = resmon_in_the_default_folder();
    let home_text = show(home.path());
    let spellings = [
        show(&default),
        format!("{}/", show(&default)),
        format!("{home_text}//.local/state//resmon//"),
        format!("{home_text}/.local/./state/resmon"),
        // Relative to the working directory, made absolute before comparing.
        ".local/state/resmon/".to_string(),
    ];
    for spelling in &spellings {
        let output = Launch::new(&vars(&[("RESMON_STATE_DIR", spelling)]))
            .args(["call", "health", "{}"])
            .home(home.path())
            .cwd(home.path())
            .output();
        let answer = printed_answer("health", &output);
        assert_eq!(output.status.code(), Some(0), "{spelling}: {answer}");
        assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id(), "{spelling}");
    }
    let check = Launch::new(&vars(&[("RESMON_STATE_DIR", format!("{}/", show(&default)))]))
        .args(["--check"])
        .home(home.path())
        .output();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("the folder RESMON_STATE_DIR names, so its port file is read"), "{stdout}");
    // Linux file systems tell case apart: there another case is another folder.
    if cfg!(not(any(windows, target_os = "macos"))) {
        fake.clear_requests();
        let run = call_at_home(
            home.path(),
            &vars(&[("RESMON_STATE_DIR", format!("{home_text}/.local/state/Resmon"))]),
        );
        assert_eq!(run.json()["detail"]["problem"], "state_dir_names_no_port", "{}", run.stdout);
        assert!(fake.requests().is_empty());
    }
    // A default taken from XDG_STATE_HOME, spelled with a trailing separator.
    let xdg = home.path().join("xdg state");
    let at_xdg = start_fake_at(&xdg.join("resmon"));
    let env =
        vars(&[("XDG_STATE_HOME", show(&xdg)), ("RESMON_STATE_DIR", format!("{}/resmon/", show(&xdg)))]);
    let run = call_at_home(home.path(), &env);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["identity"]["runtime_id"], at_xdg.runtime_id());
}

/// When the default state folder cannot be worked out, a named state folder
/// cannot be shown to be it, and is refused the same way, saying why.
#[test]
fn without_a_default_a_named_state_dir_is_not_taken_for_it() {
    let dir = TempDir::new();
    let output = Launch::new(&vars(&[("RESMON_STATE_DIR", show(dir.path()))]))
        .args(["call", "health", "{}"])
        .without_home()
        .output();
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["no_port_named"], true, "{answer}");
    assert_eq!(answer["detail"]["problem"], "state_dir_names_no_port", "{answer}");
    assert_eq!(answer["detail"]["default_state_dir"], Value::Null, "{answer}");
    let text = message(&answer);
    assert!(text.contains("cannot be shown to be the default state directory"), "{text}");
    assert!(text.contains("(neither XDG_STATE_HOME nor HOME is set)"), "{text}");
}

/// docs/setup.md's Claude Desktop block names the macOS default state folder
/// and the port file in it. It is run as printed, with only the example user's folder
/// replaced; on Linux XDG_STATE_HOME puts the default in the same place, so
/// the same block is the default there too (on macOS HOME alone does).
#[test]
fn the_macos_registration_in_setup_md_connects_as_printed() {
    let setup = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/setup.md")).unwrap();
    let section = setup.split("\n## Claude Desktop and Cursor\n").nth(1).unwrap();
    let block = section.split("```json\n").nth(1).unwrap().split("```").next().unwrap();
    let home = TempDir::new();
    let server: Value = serde_json::from_str(&block.replace("/Users/me", &show(home.path()))).unwrap();
    let server = &server["mcpServers"]["resmon"];
    let mut env: Vec<(String, String)> = server["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, value)| (key.clone(), value.as_str().unwrap().to_string()))
        .collect();
    let named = |key: &str| env.iter().find(|(name, _)| name == key).map(|(_, value)| value.clone());
    assert_eq!(env.len(), 2, "the block names the state folder and its port file: {block}");
    let folder = Path::new(&named("RESMON_STATE_DIR").expect(block)).to_path_buf();
    assert!(folder.ends_with("Library/Application Support/resmon"), "{block}");
    let port_file = named("RESMON_PORT_FILE").expect("a block naming the state folder names the port too");
    assert_eq!(Path::new(&port_file), folder.join("resmon.port"), "{block}");
    let fake = start_fake_at(&folder);
    env.push(("XDG_STATE_HOME".into(), show(folder.parent().unwrap())));
    let run = call_at_home(home.path(), &env);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["identity"]["runtime_id"], fake.runtime_id());
    // Pointed at another folder with the port file left out, the block is
    // refused and says to name the port.
    let moved = vec![
        ("RESMON_STATE_DIR".to_string(), show(&home.path().join("elsewhere"))),
        ("XDG_STATE_HOME".to_string(), show(folder.parent().unwrap())),
    ];
    let run = call_at_home(home.path(), &moved);
    assert!(message(&run.json()).contains("names no instance"), "{}", run.stdout);
}

/// Until its health answer confirms it, a listener on the named port is not
/// called resmon: the answer names the port and what named it.
#[test]
fn a_listener_that_never_confirmed_is_not_called_resmon() {
    use crate::fake_backend::Fault;
    let fake = start_fake();
    for fault in [Fault::Hang, Fault::ResetMidBody, Fault::Html500] {
        fake.set_fault_for("GET", "/api/health", fault.clone());
        let answer = refused_or_tried(&env_for(&fake));
        let text = message(&answer);
        assert!(!text.contains("resmon at") && !text.contains("resmon's answer"), "{fault:?}: {text}");
        assert!(text.contains("names the right instance"), "{fault:?}: {text}");
        assert!(text.contains(&format!("port {}", fake.port())), "{fault:?}: {text}");
        assert!(text.contains(&show(&fake.port_file())), "{fault:?}: what named the port: {text}");
        fake.clear_faults();
    }
    // Named by RESMON_PORT, the sentence says so.
    fake.set_fault_for("GET", "/api/health", Fault::Hang);
    let env =
        vars(&[("RESMON_PORT", fake.port().to_string()), ("RESMON_STATE_DIR", show(&fake.state_dir()))]);
    let answer = refused_or_tried(&env);
    assert!(message(&answer).contains("RESMON_PORT names that port"), "{answer}");
}

/// `call health` that fails after something was tried on the named port.
fn refused_or_tried(env: &[(String, String)]) -> Value {
    let run = run(&["call", "health", "{}"], env, b"", false);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    let answer = run.json();
    assert_eq!(answer["error"], "backend_unavailable", "{answer}");
    answer
}

/// `call health {}` and `--check` with `env` at `home`: both fail, and
/// `--check` prints as its result the very sentence `call` printed. Returns
/// what `call` printed.
fn refused_both_ways(home: &Path, env: &[(String, String)]) -> Value {
    let run = call_at_home(home, env);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(run.took < PROMPTLY, "took {:?}", run.took);
    let answer = run.json();
    assert_eq!(answer["error"], "backend_unavailable", "{answer}");
    let check = Launch::new(env).args(["--check"]).home(home).output();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{stdout}");
    let result = format!("result: not connected (backend_unavailable)\n  {}\n", message(&answer));
    assert!(stdout.contains(&result), "--check said another thing than `call`: {stdout}");
    answer
}

/// What a sentence-reader meets first. A path or a value never holds ". ".
fn first_sentence(text: &str) -> &str {
    text.split(". ").next().unwrap()
}

/// Where `needle` is in `text`, which must hold it.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle).unwrap_or_else(|| panic!("{needle:?} missing: {text}"))
}

/// A named port where nothing accepts a connection: contract 1.0's "not
/// running" case. The first sentence says resmon is not running and to
/// start it; the port tried and what named it come next. A stale token file
/// (what a crash leaves) lets discovery get as far as connecting.
#[test]
fn a_named_port_where_nothing_listens_says_first_that_resmon_is_not_running() {
    let home = TempDir::new();
    let live = start_fake();
    let port = crate::harness::dead_port();
    std::fs::write(live.dir().join(format!("api-token-{port}")), "s".repeat(43)).unwrap();
    let stale = TempDir::new();
    let stale_port_file = stale.path().join("resmon.port");
    std::fs::write(&stale_port_file, port.to_string()).unwrap();
    let by_variable = vars(&[
        ("RESMON_PORT", port.to_string()),
        ("RESMON_PORT_FILE", show(&live.port_file())),
        ("RESMON_STATE_DIR", show(&live.state_dir())),
    ]);
    let by_file =
        vars(&[("RESMON_PORT_FILE", show(&stale_port_file)), ("RESMON_STATE_DIR", show(&live.state_dir()))]);
    for (env, named_by) in [
        (by_variable, "RESMON_PORT".to_string()),
        (by_file, format!("the port file {}", show(&stale_port_file))),
    ] {
        let answer = refused_both_ways(home.path(), &env);
        let text = message(&answer);
        assert_eq!(
            first_sentence(text),
            "resmon is not running on the port this server was given; start the resmon app, then call again",
            "{text}"
        );
        assert!(
            text.contains(&format!("Nothing accepted a connection on port {port}, which {named_by} names")),
            "{text}"
        );
        assert_eq!(answer["tried"], json!([format!("http://127.0.0.1:{port}")]), "{answer}");
        assert_eq!(answer["detail"]["io"], "ConnectionRefused", "{answer}");
        assert!(answer.get("no_port_named").is_none(), "{answer}");
    }
    assert!(live.requests().is_empty(), "a port nobody named was reached");
}

/// RESMON_PORT names a port and no token file for it is there. A running
/// resmon keeps its token file and a clean shutdown removes it, so the first
/// sentence says no resmon appears to run there; starting it comes next, and
/// a state folder elsewhere and a release too old to publish a token after.
/// The fake still listens on that port, and hears nothing.
#[test]
fn a_named_port_without_its_token_file_says_first_that_no_resmon_runs_there() {
    let home = TempDir::new();
    let fake = start_fake();
    std::fs::remove_file(fake.token_file()).unwrap();
    let env =
        vars(&[("RESMON_PORT", fake.port().to_string()), ("RESMON_STATE_DIR", show(&fake.state_dir()))]);
    let answer = refused_both_ways(home.path(), &env);
    let text = message(&answer);
    assert_eq!(
        first_sentence(text),
        format!(
            "No resmon appears to be running on port {}, which RESMON_PORT names: there is no token file \
             for that port at {}, and a running resmon keeps its token file until it stops (a clean \
             shutdown removes it)",
            fake.port(),
            show(&fake.token_file())
        ),
        "{text}"
    );
    let start = at(text, "Start resmon and call again.");
    let elsewhere = at(text, "set RESMON_STATE_DIR to that folder");
    let too_old = at(text, "older than the local-API token");
    assert!(start < elsewhere && elsewhere < too_old, "likeliest first: {text}");
    assert_eq!(answer["tried"], json!([]), "{answer}");
    assert_eq!(answer["detail"]["problem"], "absent", "{answer}");
    assert_eq!(answer["detail"]["port"], fake.port(), "{answer}");
    assert_eq!(answer["detail"]["token_file"], show(&fake.token_file()), "{answer}");
    assert!(answer.get("no_port_named").is_none(), "{answer}");

    // A state folder that does not exist is what was seen first, then.
    let nowhere = fake.dir().join("no such folder");
    let env = vars(&[("RESMON_PORT", fake.port().to_string()), ("RESMON_STATE_DIR", show(&nowhere))]);
    let answer = refused_both_ways(home.path(), &env);
    let text = message(&answer);
    assert_eq!(
        first_sentence(text),
        format!(
            "Port {} was named by RESMON_PORT, but the folder that would hold its token file, {}, does \
             not exist, so nothing was sent to that port",
            fake.port(),
            show(&nowhere)
        ),
        "{text}"
    );
    assert!(fake.requests().is_empty(), "a request reached the port without a token");
}

/// A port file a person named and resmon removed as it closed: through
/// RESMON_PORT_FILE, or as the one beside the database RESMON_DB_PATH names.
/// The first sentence says that file is missing and resmon is probably not
/// running; never that nothing was named. No other port file is read in its
/// place: neither the one beside RESMON_DB_PATH (a live resmon's) nor the
/// default folder's (another live resmon's).
#[test]
fn a_named_port_file_that_is_gone_says_first_that_resmon_is_probably_not_running() {
    let (home, _default, at_default) = resmon_in_the_default_folder();
    let beside_db = start_fake();
    let closed = start_fake();
    std::fs::remove_file(closed.port_file()).unwrap();
    let closing = "which is what resmon leaves when it stops (it removes that file as it closes), so resmon \
                   is probably not running: start it and call again";
    let named_file = vars(&[
        ("RESMON_PORT_FILE", show(&closed.port_file())),
        ("RESMON_DB_PATH", show(&beside_db.dir().join("resmon.db"))),
        ("RESMON_STATE_DIR", show(&closed.state_dir())),
    ]);
    let named_db = vars(&[
        ("RESMON_DB_PATH", show(&closed.dir().join("resmon.db"))),
        ("RESMON_STATE_DIR", show(&closed.state_dir())),
    ]);
    let cases = [
        (
            named_file,
            "RESMON_PORT_FILE",
            format!(
                "The port file {} that RESMON_PORT_FILE names is not there, {closing}",
                show(&closed.port_file())
            ),
        ),
        (
            named_db,
            "RESMON_DB_PATH",
            format!(
                "There is no port file beside the database RESMON_DB_PATH names ({} is not there), {closing}",
                show(&closed.port_file())
            ),
        ),
    ];
    for (env, source, expected) in cases {
        let answer = refused_both_ways(home.path(), &env);
        let text = message(&answer);
        assert_eq!(first_sentence(text), expected, "{text}");
        assert!(!text.contains("No resmon instance was named") && !text.contains("neither named"), "{text}");
        assert!(answer.get("no_port_named").is_none(), "an instance was named: {answer}");
        assert_eq!(answer["tried"], json!([]), "{answer}");
        assert_eq!(answer["detail"]["port_file"], show(&closed.port_file()), "{answer}");
        assert_eq!(answer["detail"]["source"], source, "{answer}");
        assert_eq!(answer["detail"]["problem"], "absent", "{answer}");
    }

    // A missing folder as well points at the path, not at a closed resmon.
    let typo = closed.dir().join("no such folder").join("resmon.port");
    let answer = refused_both_ways(
        home.path(),
        &vars(&[("RESMON_PORT_FILE", show(&typo)), ("RESMON_STATE_DIR", show(&closed.state_dir()))]),
    );
    let text = message(&answer);
    assert_eq!(
        first_sentence(text),
        format!(
            "The port file {} that RESMON_PORT_FILE names is not there, and neither is its folder {}",
            show(&typo),
            show(&closed.dir().join("no such folder"))
        ),
        "{text}"
    );
    assert!(text.contains("probably not the one resmon writes to"), "{text}");
    assert!(answer.get("no_port_named").is_none(), "{answer}");
    for fake in [&at_default, &*beside_db, &*closed] {
        assert!(fake.requests().is_empty(), "a resmon was reached: {}", fake.port());
    }
}

/// Nothing named at all: contract 1.0's "nothing named" refusal, which may
/// not say resmon is not running. Still, a closed app is why a person on the
/// default paths meets it, so starting resmon is the advice that comes
/// right after the refusal itself, before why no port is guessed.
#[test]
fn nothing_named_advises_starting_resmon_right_after_the_refusal() {
    let home = TempDir::new();
    let unnamed = start_fake();
    let answer = refused_both_ways(home.path(), &[]);
    let text = message(&answer);
    let sentences: Vec<&str> = text.split(". ").collect();
    assert!(sentences[0].starts_with("No resmon instance was named"), "{text}");
    assert!(sentences[1].starts_with("Start resmon and call again"), "{text}");
    assert!(at(text, "Start resmon") < at(text, "wrong corpus"), "{text}");
    assert!(!text.contains("not running"), "{text}");
    assert_eq!(answer["no_port_named"], true, "{answer}");
    assert_eq!(answer["tried"], json!([]), "{answer}");
    assert!(unnamed.requests().is_empty(), "a resmon nobody named was reached");
}
