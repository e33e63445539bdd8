//! The registrations `--check` prints (issue 13 §2, issue 19 §5), each taken
//! at its word: the command lines are split by a real shell into the argv a
//! `claude` / `gemini` stand-in receives, the JSON blocks by serde_json and the
//! TOML block by the `toml` crate. Each one then starts the server it
//! describes, from a foreign working directory and an environment holding
//! nothing else, and must list the tools and reach the fake resmon.
//!
//! The paths are the awkward ones users have: the state directory holds a
//! space, the binary's folder a space and both kinds of quote (it is a copy of the real
//! binary, so `current_exe` reports that path).

#![cfg(unix)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::fake_backend::FakeBackend;
use crate::harness::{BIN, Launch, TempDir, WRITE_TOOLS, start_fake_at, vars};

/// How a harness would start the server, read back from one registration.
#[derive(Debug)]
struct Registered {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// A copy of the real binary in a folder whose name holds a space and both quotes.
fn awkward_binary(dir: &Path) -> PathBuf {
    let bin_dir = dir.join("bin's \"quoted\" dir");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let copy = bin_dir.join("resmon-mcp");
    // A hard link writes nothing, so no file descriptor open for writing can
    // leak into a process another test forks meanwhile (which would make
    // exec fail with "text file busy"); copy only where linking is refused.
    if std::fs::hard_link(BIN, &copy).is_err() {
        std::fs::copy(BIN, &copy).unwrap();
    }
    copy
}

/// Runs `binary --check [--json]` with exactly `env` (and an empty HOME), in `cwd`.
fn check(binary: &Path, json: bool, env: &[(String, String)], cwd: &Path, home: &Path) -> Output {
    let args = if json { &["--check", "--json"][..] } else { &["--check"] };
    Launch::new(env).program(binary).args(args).home(home).cwd(cwd).without_test_timeout().output()
}

/// Hands `line` to `sh -c` with its first word defined as a shell function
/// that records the argv it receives (NUL-separated, so no value can blur
/// two words). A function rather than a stub file: nothing is written and
/// then executed, which another test's fork could make "text file busy".
fn argv_of_shell_line(line: &str, scratch: &Path) -> Vec<String> {
    let program = line.split(' ').next().unwrap();
    let out = scratch.join(format!("{program}.argv"));
    let script =
        format!("{program}() {{ for arg do printf '%s\\0' \"$arg\"; done > \"$STUB_OUT\"; }}\n{line}\n");
    let output = Launch::new(&vars(&[("STUB_OUT", out.display().to_string())]))
        .program("sh")
        .args([OsStr::new("-c"), OsStr::new(&script)])
        .without_test_timeout()
        .output();
    assert!(output.status.success(), "sh -c {line:?}: {}", String::from_utf8_lossy(&output.stderr));
    let bytes = std::fs::read(&out).unwrap();
    let mut words: Vec<String> =
        bytes.split(|b| *b == 0).map(|w| String::from_utf8(w.to_vec()).unwrap()).collect();
    assert_eq!(words.pop().as_deref(), Some(""), "every word ends with NUL");
    words
}

/// The leading `-e K=V` options, each split by `split`, and the words after them.
fn take_env_options(
    words: &[String],
    split: impl Fn(&str) -> (String, String),
) -> (Vec<(String, String)>, &[String]) {
    let mut env = Vec::new();
    let mut rest = words;
    while let [flag, pair, tail @ ..] = rest {
        if flag != "-e" {
            break;
        }
        env.push(split(pair));
        rest = tail;
    }
    (env, rest)
}

/// `claude mcp add -s user resmon -e K=V ... -- CMD [ARGS]`.
fn claude_launch(line: &str, scratch: &Path) -> Registered {
    let words = argv_of_shell_line(line, scratch);
    let [mcp, add, scope_flag, scope, name, rest @ ..] = &words[..] else { panic!("too short: {words:?}") };
    assert_eq!([mcp, add, scope_flag, scope, name], ["mcp", "add", "-s", "user", "resmon"], "{words:?}");
    let (env, rest) = take_env_options(rest, |pair| {
        let (key, value) = pair.split_once('=').unwrap_or_else(|| panic!("no `=` in {pair:?}"));
        (key.to_string(), value.to_string())
    });
    let [separator, program, args @ ..] = rest else { panic!("no command after the options: {words:?}") };
    assert_eq!(separator, "--", "{words:?}");
    Registered { program: program.clone(), args: args.to_vec(), env }
}

/// `gemini mcp add -s user resmon -e K=V ... CMD [ARGS]`, read the way Gemini
/// CLI 0.61.0 reads `-e`: split at every `=`, the first two pieces kept.
fn gemini_launch(line: &str, scratch: &Path) -> Registered {
    let words = argv_of_shell_line(line, scratch);
    let [mcp, add, scope_flag, scope, name, rest @ ..] = &words[..] else { panic!("too short: {words:?}") };
    assert_eq!([mcp, add, scope_flag, scope, name], ["mcp", "add", "-s", "user", "resmon"], "{words:?}");
    let (env, rest) = take_env_options(rest, |pair| {
        let mut pieces = pair.split('=');
        (pieces.next().unwrap().to_string(), pieces.next().unwrap_or("").to_string())
    });
    let [program, args @ ..] = rest else { panic!("no command after the options: {words:?}") };
    Registered { program: program.clone(), args: args.to_vec(), env }
}

fn string_map(value: &Value) -> Vec<(String, String)> {
    let object = value.as_object().unwrap_or_else(|| panic!("not an object: {value}"));
    object.iter().map(|(key, value)| (key.clone(), value.as_str().unwrap().to_string())).collect()
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|item| item.as_str().unwrap().to_string()).collect()
}

/// An `mcpServers` block (Claude Desktop, Cursor, Gemini CLI's settings.json).
fn mcp_servers_launch(block: &str) -> Registered {
    let config: Value = serde_json::from_str(block).unwrap_or_else(|error| panic!("{error}: {block}"));
    assert_eq!(config["mcpServers"].as_object().unwrap().len(), 1, "{block}");
    let server = &config["mcpServers"]["resmon"];
    Registered {
        program: server["command"].as_str().unwrap().to_string(),
        args: strings(&server["args"]),
        env: string_map(&server["env"]),
    }
}

fn codex_launch(block: &str) -> Registered {
    let config: toml::Table = block.parse().unwrap_or_else(|error| panic!("{error}: {block}"));
    assert_eq!(config.keys().collect::<Vec<_>>(), ["mcp_servers"], "{block}");
    let server = config["mcp_servers"]["resmon"].as_table().unwrap();
    let env = match server.get("env") {
        Some(env) => env
            .as_table()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect(),
        None => Vec::new(),
    };
    let args = server
        .get("args")
        .map(|args| args.as_array().unwrap().iter().map(|arg| arg.as_str().unwrap().to_string()).collect());
    Registered {
        program: server["command"].as_str().unwrap().to_string(),
        args: args.unwrap_or_default(),
        env,
    }
}

/// opencode: `command` is the whole argv. Returns the permission rules too.
fn opencode_launch(block: &str) -> (Registered, Value) {
    let config: Value = serde_json::from_str(block).unwrap_or_else(|error| panic!("{error}: {block}"));
    let server = &config["mcp"]["resmon"];
    assert_eq!(server["type"], "local", "{block}");
    let mut argv = strings(&server["command"]);
    let program = argv.remove(0);
    (
        Registered { program, args: argv, env: string_map(&server["environment"]) },
        config["permission"].clone(),
    )
}

/// Starts the server as `launch` says, from `cwd`, with nothing in its
/// environment but PATH, an empty HOME and the registration's variables, and
/// returns the tools/list answer and the health call's result.
fn run_launch(launch: &Registered, cwd: &Path, home: &Path) -> (Value, Value) {
    let mut session = Launch::new(&launch.env)
        .program(&launch.program)
        .args(&launch.args)
        .home(home)
        .cwd(cwd)
        .without_test_timeout()
        .session();
    session.handshake();
    let listing = session.request("tools/list", json!({}))["result"].clone();
    let health = session.call("health", json!({}));
    let (status, stderr) = session.finish();
    assert!(status.success(), "{launch:?}: {stderr}");
    (listing, health)
}

struct Printed {
    human: String,
    register: Value,
}

fn printed(binary: &Path, env: &[(String, String)], cwd: &Path, home: &Path, fake: &FakeBackend) -> Printed {
    let human = check(binary, false, env, cwd, home);
    let human_text = String::from_utf8(human.stdout).unwrap();
    assert_eq!(human.status.code(), Some(0), "{human_text}");
    let json = check(binary, true, env, cwd, home);
    assert_eq!(json.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    for text in [&human_text, &report.to_string()] {
        assert!(!text.contains(&fake.token()), "the token leaked: {text}");
    }
    let register = report["register"].clone();
    let keys: Vec<&String> = register.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["claude_code", "codex", "json", "gemini", "opencode"]);
    // The human form ends with the same blocks, verbatim, in the same order.
    let mut at = human_text.find("\nregistration: binary ").expect("a registration section");
    for key in keys {
        let block = register[key].as_str().unwrap();
        let found = human_text[at..].find(block).unwrap_or_else(|| panic!("{key} missing: {human_text}"));
        at += found + block.len();
    }
    assert_eq!(human_text[at..].trim(), "", "the registrations close the report");
    Printed { human: human_text, register }
}

/// Every registration starts a server that lists `tools` tools and reaches
/// the fake; returns each one's launch for further checks.
fn every_launch_works(
    printed: &Printed,
    scratch: &Path,
    fake: &FakeBackend,
    tools: usize,
) -> Vec<(&'static str, Registered)> {
    let register = &printed.register;
    let block = |key: &str| register[key].as_str().unwrap().to_string();
    let gemini = block("gemini");
    let gemini = if gemini.starts_with("gemini ") {
        gemini_launch(&gemini, scratch)
    } else {
        mcp_servers_launch(&gemini)
    };
    let launches = vec![
        ("claude_code", claude_launch(&block("claude_code"), scratch)),
        ("codex", codex_launch(&block("codex"))),
        ("json", mcp_servers_launch(&block("json"))),
        ("gemini", gemini),
        ("opencode", opencode_launch(&block("opencode")).0),
    ];
    let elsewhere = TempDir::new();
    let home = TempDir::new();
    for (name, launch) in &launches {
        let (listing, health) = run_launch(launch, elsewhere.path(), home.path());
        assert_eq!(listing["tools"].as_array().unwrap().len(), tools, "{name}: {listing}");
        assert_eq!(health["isError"], false, "{name} did not reach resmon: {health}");
        assert_eq!(health["structuredContent"]["identity"]["runtime_id"], fake.runtime_id(), "{name}");
    }
    launches
}

/// Variables as a set (the `toml` crate reads a table back in key order).
fn sorted(env: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = env.to_vec();
    env.sort();
    env
}

fn pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect()
}

#[test]
fn every_printed_registration_starts_a_server_that_reaches_resmon() {
    let dir = TempDir::new();
    let fake = start_fake_at(&dir.path().join("state dir"));
    let binary = awkward_binary(dir.path());
    let env = pairs(&[
        ("RESMON_PORT_FILE", &fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR", &fake.state_dir().display().to_string()),
    ]);
    let home = TempDir::new();
    let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
    assert!(printed.human.contains("user scope"), "{}", printed.human);
    // Only a binary inside cargo's target directory is warned about `cargo clean`.
    assert!(!printed.human.contains("cargo's build output"), "{}", printed.human);
    let from_target = check(Path::new(BIN), false, &env, dir.path(), home.path());
    let from_target = String::from_utf8(from_target.stdout).unwrap();
    assert!(
        from_target.contains("cargo's build output") && from_target.contains("cargo install"),
        "{from_target}"
    );
    let scratch = TempDir::new();
    let launches = every_launch_works(&printed, scratch.path(), &fake, 25);
    for (name, launch) in &launches {
        assert_eq!(launch.program, binary.display().to_string(), "{name}: the absolute path of the binary");
        assert!(launch.args.is_empty(), "{name}: {launch:?}");
        assert_eq!(sorted(&launch.env), sorted(&env), "{name}: exactly the variables discovery read");
    }
    // opencode asks before exactly the tools the listing marks as writes.
    let (_, permission) = opencode_launch(printed.register["opencode"].as_str().unwrap());
    let mut asked: Vec<&str> = permission.as_object().unwrap().keys().map(String::as_str).collect();
    asked.sort_unstable();
    let mut writes: Vec<String> = WRITE_TOOLS.iter().map(|tool| format!("resmon_{tool}")).collect();
    writes.sort_unstable();
    assert_eq!(asked, writes);
    assert!(permission.as_object().unwrap().values().all(|rule| rule == "ask"));
}

/// RESMON_PORT wins, so the port file it shadows is left out; a relative
/// state directory is made absolute; read-only and the lowered bound travel
/// with the registration; and a value holding `=`, which `gemini mcp add -e`
/// would cut, moves Gemini CLI to its settings.json block.
#[test]
fn registrations_carry_only_what_discovery_used_and_the_mode_in_force() {
    let dir = TempDir::new();
    let fake = start_fake_at(&dir.path().join("a=b state"));
    let binary = awkward_binary(dir.path());
    let env = pairs(&[
        ("RESMON_PORT", &fake.port().to_string()),
        ("RESMON_PORT_FILE", "/nowhere/resmon.port"),
        ("RESMON_STATE_DIR", "a=b state"),
        ("RESMON_MCP_READ_ONLY", "1"),
        ("RESMON_MCP_TIMEOUT_MS", "4000"),
    ]);
    let home = TempDir::new();
    let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
    assert!(!printed.register["gemini"].as_str().unwrap().starts_with("gemini "), "{}", printed.register);
    assert!(printed.human.contains("~/.gemini/settings.json"), "{}", printed.human);
    assert!(printed.human.contains(&format!("RESMON_PORT pins port {}", fake.port())), "{}", printed.human);
    let scratch = TempDir::new();
    let launches = every_launch_works(&printed, scratch.path(), &fake, 25 - WRITE_TOOLS.len());
    let expected = pairs(&[
        ("RESMON_PORT", &fake.port().to_string()),
        ("RESMON_STATE_DIR", &fake.state_dir().display().to_string()),
        ("RESMON_MCP_READ_ONLY", "1"),
        ("RESMON_MCP_TIMEOUT_MS", "4000"),
    ]);
    for (name, launch) in &launches {
        assert_eq!(sorted(&launch.env), sorted(&expected), "{name}");
    }
    let (_, permission) = opencode_launch(printed.register["opencode"].as_str().unwrap());
    assert!(permission.is_null(), "a read-only session has no write to ask about: {permission}");
    // The command line would have been read as Gemini CLI reads it, and lost data.
    let line = printed.register["claude_code"]
        .as_str()
        .unwrap()
        .replacen("claude", "gemini", 1)
        .replacen(" -- ", " ", 1);
    let cut = gemini_launch(&line, scratch.path());
    assert_ne!(sorted(&cut.env), sorted(&expected), "the `=` rule the fallback exists for");
}

#[test]
fn a_check_that_does_not_connect_prints_no_registration() {
    let dir = TempDir::new();
    let home = TempDir::new();
    let env = pairs(&[("RESMON_PORT_FILE", &dir.path().join("resmon.port").display().to_string())]);
    let human = check(Path::new(BIN), false, &env, dir.path(), home.path());
    let text = String::from_utf8(human.stdout).unwrap();
    assert_eq!(human.status.code(), Some(1), "{text}");
    assert!(text.contains("RESMON_PORT"), "it still says what to set: {text}");
    assert!(!text.contains("registration") && !text.contains("mcp add"), "{text}");
    let json = check(Path::new(BIN), true, &env, dir.path(), home.path());
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["connected"], false);
    assert!(report.get("register").is_none(), "{report}");
}

/// docs/setup.md's Claude Code allow list names exactly the tools the
/// listing marks as reads, so that following it never pre-approves a write.
#[test]
fn the_documented_claude_code_allow_list_is_exactly_the_reads() {
    let setup = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/setup.md")).unwrap();
    let start = setup.find("{\"permissions\": {\"allow\": [").expect("the allow block in docs/setup.md");
    let end = start + setup[start..].find("]}}").unwrap() + 3;
    let block: Value = serde_json::from_str(&setup[start..end]).unwrap();
    let mut allowed: Vec<String> = strings(&block["permissions"]["allow"]);
    let mut session = crate::harness::Session::initialized(&[]);
    let listing = session.request("tools/list", json!({}));
    let mut reads: Vec<String> = listing["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["annotations"]["readOnlyHint"] == true)
        .map(|tool| format!("mcp__resmon__{}", tool["name"].as_str().unwrap()))
        .collect();
    allowed.sort();
    reads.sort();
    assert_eq!(reads.len(), 25 - WRITE_TOOLS.len());
    assert_eq!(allowed, reads);
}

/// A default state folder that only XDG_STATE_HOME gave is written out: a
/// harness that passes just HOME and PATH would not find it otherwise.
#[test]
fn a_default_from_xdg_state_home_is_written_out() {
    let dir = TempDir::new();
    let xdg = dir.path().join("xdg state");
    let fake = start_fake_at(&xdg.join("resmon"));
    let binary = awkward_binary(dir.path());
    let env = pairs(&[("XDG_STATE_HOME", &xdg.display().to_string())]);
    let home = TempDir::new();
    let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
    let scratch = TempDir::new();
    // Every launch gets only PATH, an empty HOME and what was printed.
    let launches = every_launch_works(&printed, scratch.path(), &fake, 25);
    let expected = pairs(&[
        ("RESMON_PORT_FILE", &fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR", &fake.state_dir().display().to_string()),
    ]);
    for (name, launch) in &launches {
        assert_eq!(sorted(&launch.env), sorted(&expected), "{name}");
    }
}
