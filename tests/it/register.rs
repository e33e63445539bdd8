//! The registrations `--check` prints, each taken at its word: the command lines are split by a real shell into the argv a
//! `claude` / `gemini` stand-in receives, the JSON blocks by serde_json and the
//! TOML block by the `toml` crate. Each one then starts the server it
//! describes, from a foreign working directory and an environment holding
//! nothing else, and must list the tools and reach the fake resmon.
//!
//! Each carries the approval settings its harness can hold (the Codex
//! approval mode, Claude Code's allow list, Gemini CLI's policy, opencode's
//! `permission`), checked against the binary's own tools/list, and says in
//! one line per harness what it asks before.
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
pub(crate) struct Registered {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
}

/// A copy of the real binary in a folder whose name holds a space and both quotes.
pub(crate) fn awkward_binary(dir: &Path) -> PathBuf {
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
    check_with(binary, args, env, cwd, home)
}

fn check_with(binary: &Path, args: &[&str], env: &[(String, String)], cwd: &Path, home: &Path) -> Output {
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

pub(crate) struct Printed {
    /// `--check` without `--for`.
    pub(crate) human: String,
    /// `--check --for <harness>` for each harness, by its `--for` name.
    per_harness: Vec<(&'static str, String)>,
    register: Value,
    /// The whole `--check --json` report.
    pub(crate) report: Value,
}

/// The keys of `register`.
const BLOCKS: [&str; 7] =
    ["claude_code", "claude_code_allow", "codex", "json", "gemini", "gemini_policy", "opencode"];
/// The harnesses `--for` takes, the blocks each one's text carries (in
/// order), and its key in `register_approval`.
const HARNESSES: [(&str, &[&str], &str); 6] = [
    ("claude-code", &["claude_code", "claude_code_allow"], "claude_code"),
    ("codex", &["codex"], "codex"),
    ("claude-desktop", &["json"], "claude_desktop"),
    ("cursor", &["json"], "cursor"),
    ("gemini", &["gemini", "gemini_policy"], "gemini"),
    ("opencode", &["opencode"], "opencode"),
];

/// What `--check` prints for `env`: `code` is its exit status (0 connected,
/// 1 not). Without `--for` the text is short: how the server will be started
/// and one line per harness naming the command that prints its
/// registration. With `--for` it ends with that harness's blocks, verbatim
/// and in order, its approval sentence above them; the JSON carries every
/// block either way.
fn printed_with_code(
    binary: &Path,
    env: &[(String, String)],
    cwd: &Path,
    home: &Path,
    token: Option<&str>,
    code: i32,
) -> Printed {
    let human = check(binary, false, env, cwd, home);
    let human_text = String::from_utf8(human.stdout).unwrap();
    assert_eq!(human.status.code(), Some(code), "{human_text}");
    let json = check(binary, true, env, cwd, home);
    assert_eq!(json.status.code(), Some(code));
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    let register = report["register"].clone();
    let keys: Vec<&String> = register.as_object().unwrap_or_else(|| panic!("{report}")).keys().collect();
    assert_eq!(keys, BLOCKS);
    let approval = report["register_approval"].as_object().unwrap_or_else(|| panic!("{report}"));
    let keys: Vec<&str> = HARNESSES.iter().map(|(_, _, key)| *key).collect();
    assert_eq!(approval.keys().collect::<Vec<_>>(), keys, "{report}");
    let registration = &human_text[human_text.find("\nregistration: ").expect("a registration section")..];
    assert!(registration.lines().count() < 20, "the short form stays short: {registration}");
    for block in BLOCKS {
        let text = register[block].as_str().unwrap();
        assert!(!registration.contains(text), "{block} is printed only with --for: {human_text}");
    }
    let mut per_harness = Vec::new();
    for (option, blocks, key) in HARNESSES {
        assert!(
            registration.contains(&format!(" --check --for {option}\n")),
            "the short form names the command for {option}: {human_text}"
        );
        let output = check_with(binary, &["--check", "--for", option], env, cwd, home);
        let text = String::from_utf8(output.stdout).unwrap();
        assert_eq!(output.status.code(), Some(code), "{text}");
        let sentence = format!("  {}\n", approval[key].as_str().unwrap());
        let mut at = text.find(&sentence).unwrap_or_else(|| panic!("{option}: {sentence:?} missing: {text}"));
        for block in blocks {
            let block = register[*block].as_str().unwrap();
            let found = text[at..].find(block).unwrap_or_else(|| panic!("{option}: {block} missing: {text}"));
            assert!(text[at..at + found].lines().all(|line| !line.starts_with('{')), "{text}");
            at += found + block.len();
        }
        assert_eq!(text[at..].trim(), "", "{option}: the registration closes the report: {text}");
        for other in BLOCKS.iter().filter(|other| !blocks.contains(other)) {
            let other = register[*other].as_str().unwrap();
            if !blocks.iter().any(|block| register[*block].as_str().unwrap().contains(other)) {
                assert!(!text.contains(other), "{option} printed another harness's block: {text}");
            }
        }
        per_harness.push((option, text));
    }
    for text in std::iter::once(&human_text).chain(per_harness.iter().map(|(_, text)| text)) {
        if let Some(token) = token {
            assert!(!text.contains(token), "the token leaked: {text}");
        }
        // Every note is printed, and none of the notes leaves a variable out silently.
        for note in report["register_notes"].as_array().unwrap() {
            assert!(text.contains(&format!("  note: {}\n", note.as_str().unwrap())), "{text}");
        }
    }
    if let Some(token) = token {
        assert!(!report.to_string().contains(token), "the token leaked: {report}");
    }
    assert_eq!(report["register_verified"], code == 0, "{report}");
    Printed { human: human_text, per_harness, register, report }
}

pub(crate) fn printed(
    binary: &Path,
    env: &[(String, String)],
    cwd: &Path,
    home: &Path,
    fake: &FakeBackend,
) -> Printed {
    printed_with_code(binary, env, cwd, home, Some(&fake.token()), 0)
}

/// The tools the binary lists, split into (reads, writes) by their
/// `requires_confirmation`, each read also marked `readOnlyHint: true`.
fn listed_reads_and_writes() -> (Vec<String>, Vec<String>) {
    let mut session = crate::harness::Session::initialized(&[]);
    let listing = session.request("tools/list", json!({}));
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for tool in listing["result"]["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap().to_string();
        match tool["requires_confirmation"].as_bool() {
            Some(false) => {
                assert_eq!(tool["annotations"]["readOnlyHint"], true, "{tool}");
                reads.push(name);
            }
            Some(true) => {
                assert_eq!(tool["annotations"]["readOnlyHint"], false, "{tool}");
                writes.push(name);
            }
            None => panic!("no requires_confirmation: {tool}"),
        }
    }
    (reads, writes)
}

/// The rule tests/harnesses/gemini_cli.py hands Gemini CLI, read from that
/// script, so that the printed policy is the one the harness stage tries.
fn gemini_policy_the_harness_stage_tries() -> String {
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harnesses/gemini_cli.py"))
            .unwrap();
    let opening = "READ_ONLY_POLICY = \"\"\"\\\n";
    let start = script.find(opening).expect("the policy constant") + opening.len();
    let end = start + script[start..].find("\"\"\"").unwrap();
    script[start..end].to_string()
}

/// What each printed block asks before, checked against the binary's own
/// listing: Codex's approval mode, Claude Code's allow list (exactly the
/// reads), Gemini CLI's policy (the one its harness run tries), opencode's
/// `ask` (exactly the writes), and a line per harness saying so.
fn approvals_hold(printed: &Printed, read_only: bool) {
    let register = &printed.register;
    let block = |key: &str| register[key].as_str().unwrap().to_string();
    let (reads, writes) = listed_reads_and_writes();
    assert_eq!((reads.len(), writes.len()), (18, WRITE_TOOLS.len()));

    let codex: toml::Table =
        block("codex").parse().unwrap_or_else(|error| panic!("{error}: {}", block("codex")));
    let mode =
        codex["mcp_servers"]["resmon"].get("default_tools_approval_mode").and_then(|mode| mode.as_str());
    assert_eq!(mode, if read_only { None } else { Some("writes") }, "{}", block("codex"));

    let allow: Value = serde_json::from_str(&block("claude_code_allow")).unwrap();
    assert_eq!(allow.as_object().unwrap().len(), 1, "{allow}");
    assert_eq!(allow["permissions"].as_object().unwrap().len(), 1, "{allow}");
    let expected: Vec<String> = reads.iter().map(|name| format!("mcp__resmon__{name}")).collect();
    assert_eq!(
        strings(&allow["permissions"]["allow"]),
        expected,
        "exactly the reads, in the listing's order"
    );

    assert_eq!(format!("{}\n", block("gemini_policy")), gemini_policy_the_harness_stage_tries());
    let policy: toml::Table = block("gemini_policy").parse().unwrap();
    assert_eq!(policy["rule"][0]["decision"].as_str(), Some("allow"));

    let (_, permission) = opencode_launch(&block("opencode"));
    if read_only {
        assert!(permission.is_null(), "a read-only session has no write to ask about: {permission}");
    } else {
        let mut asked: Vec<&str> = permission.as_object().unwrap().keys().map(String::as_str).collect();
        asked.sort_unstable();
        let mut expected: Vec<String> = writes.iter().map(|tool| format!("resmon_{tool}")).collect();
        expected.sort_unstable();
        assert_eq!(asked, expected);
        assert!(permission.as_object().unwrap().values().all(|rule| rule == "ask"));
    }

    let line = |harness: &str| printed.report["register_approval"][harness].as_str().unwrap().to_string();
    // Each sentence speaks to the person: what the harness will ask, never
    // how this project tested it.
    for (_, _, key) in HARNESSES {
        let sentence = line(key);
        for word in ["CI", "verified", "tried", "tests/", "in `-p` (", "documentation"] {
            assert!(!sentence.contains(word), "{key}: {word:?} in {sentence}");
        }
        assert!(read_only || sentence.contains(" you "), "{key} speaks to the person: {sentence}");
    }
    if read_only {
        for (_, _, key) in HARNESSES {
            assert!(line(key).starts_with("Read-only: none of the 7 writes is offered."), "{}", line(key));
        }
        assert!(
            line("claude_code").contains("the 18 reads run without a question"),
            "{}",
            line("claude_code")
        );
    } else {
        let claude = line("claude_code");
        assert!(claude.contains("asks you before each tool call, reads included"), "{claude}");
        assert!(
            claude.contains("~/.claude/settings.json") && claude.contains("each of the 7 writes still asks")
        );
        let codex = line("codex");
        assert!(codex.contains("asks you before each of the 7 writes and runs the 18 reads"), "{codex}");
        // run_sweep and run_routine reach the internet; update_settings is destructive.
        assert!(codex.contains("ask before only 3 of the writes"), "{codex}");
        assert!(line("gemini").contains("each of the 7 writes still asks"), "{}", line("gemini"));
        assert!(line("gemini").contains("in `gemini -p`, where nobody can answer"), "{}", line("gemini"));
        assert!(line("opencode").contains("ask you before each of the 7 writes"), "{}", line("opencode"));
        // Where nobody can answer: the read-only registration, as a command to run.
        for key in ["claude_desktop", "cursor"] {
            let sentence = line(key);
            let option = key.replace('_', "-");
            assert!(sentence.contains(&format!("--read-only --check --for {option}")), "{sentence}");
        }
    }
}

/// Every registration starts a server that lists `tools` tools and reaches
/// the fake; returns each one's launch for further checks.
fn every_launch_works(
    printed: &Printed,
    scratch: &Path,
    fake: &FakeBackend,
    tools: usize,
) -> Vec<(&'static str, Registered)> {
    let launches = every_launch(printed, scratch);
    let elsewhere = TempDir::new();
    let home = TempDir::new();
    for (name, launch) in &launches {
        // A state directory names no instance: it never goes without the port.
        let has = |key: &str| launch.env.iter().any(|(name, _)| name == key);
        assert!(
            !has("RESMON_STATE_DIR") || has("RESMON_PORT") || has("RESMON_PORT_FILE"),
            "{name}: RESMON_STATE_DIR without what names the port: {launch:?}"
        );
        let (listing, health) = run_launch(launch, elsewhere.path(), home.path());
        assert_eq!(listing["tools"].as_array().unwrap().len(), tools, "{name}: {listing}");
        assert_eq!(health["isError"], false, "{name} did not reach resmon: {health}");
        assert_eq!(health["structuredContent"]["identity"]["runtime_id"], fake.runtime_id(), "{name}");
    }
    launches
}

/// Each printed registration read back as its harness reads it.
pub(crate) fn every_launch(printed: &Printed, scratch: &Path) -> Vec<(&'static str, Registered)> {
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
    launches
}

/// Variables as a set (the `toml` crate reads a table back in key order).
pub(crate) fn sorted(env: &[(String, String)]) -> Vec<(String, String)> {
    let mut env = env.to_vec();
    env.sort();
    env
}

pub(crate) fn pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
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
    let claude = &printed.per_harness[0].1;
    assert!(claude.contains("user scope"), "{claude}");
    assert!(
        printed.human.contains(&format!("registration: binary {}\n", binary.display())),
        "{}",
        printed.human
    );
    assert!(!printed.human.contains("not yet verified"), "{}", printed.human);
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
    approvals_hold(&printed, false);
    assert_eq!(printed.report["register_notes"], json!([]), "nothing was changed");
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
    let gemini = &printed.per_harness[4].1;
    assert!(gemini.contains("Gemini CLI (merge into ~/.gemini/settings.json;"), "{gemini}");
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
    approvals_hold(&printed, true);
    // The command line would have been read as Gemini CLI reads it, and lost data.
    let line = printed.register["claude_code"]
        .as_str()
        .unwrap()
        .replacen("claude", "gemini", 1)
        .replacen(" -- ", " ", 1);
    let cut = gemini_launch(&line, scratch.path());
    assert_ne!(sorted(&cut.env), sorted(&expected), "the `=` rule the fallback exists for");
}

/// Set up while resmon is closed: the variables name its port file, which
/// does not exist yet. The check still fails, and still prints every
/// registration, marked as not yet verified; once resmon starts, each one
/// reaches it as printed.
#[test]
fn a_check_while_resmon_is_closed_prints_the_registration_not_yet_verified() {
    let dir = TempDir::new();
    let state = dir.path().join("state dir");
    let binary = awkward_binary(dir.path());
    let env = pairs(&[
        ("RESMON_PORT_FILE", &state.join("resmon.port").display().to_string()),
        ("RESMON_STATE_DIR", &state.display().to_string()),
    ]);
    let home = TempDir::new();
    let printed = printed_with_code(&binary, &env, dir.path(), home.path(), None, 1);
    for text in std::iter::once(&printed.human).chain(printed.per_harness.iter().map(|(_, text)| text)) {
        assert!(text.contains("result: not connected"), "{text}");
        assert!(text.contains("\n  not yet verified: resmon did not answer"), "{text}");
    }
    assert_eq!(printed.report["connected"], false);
    let fake = start_fake_at(&state);
    let scratch = TempDir::new();
    for (name, launch) in every_launch_works(&printed, scratch.path(), &fake, 25) {
        assert_eq!(sorted(&launch.env), sorted(&env), "{name}");
    }
    approvals_hold(&printed, false);

    // The packaged app on its default paths, closed: nothing to set.
    let printed = printed_with_code(&binary, &[], dir.path(), home.path(), None, 1);
    assert!(printed.human.contains("environment: none, the defaults are enough"), "{}", printed.human);
    let json: Value = serde_json::from_str(printed.register["json"].as_str().unwrap()).unwrap();
    assert_eq!(json["mcpServers"]["resmon"]["env"], json!({}), "{json}");
}

/// Variables that name no instance, or that discovery refuses, get no
/// registration: the report names what to fix instead, and a registration
/// would carry the mistake into the harness.
#[test]
fn a_check_whose_variables_name_no_instance_prints_no_registration() {
    let dir = TempDir::new();
    let home = TempDir::new();
    let elsewhere = dir.path().join("elsewhere");
    for env in [
        pairs(&[("RESMON_STATE_DIR", &elsewhere.display().to_string())]),
        pairs(&[("RESMON_PORT_FILE", &format!("\"{}\"", dir.path().join("resmon.port").display()))]),
        pairs(&[("RESMON_PORT", "seven")]),
        pairs(&[("RESMON_PORT", "")]),
    ] {
        let human = check(Path::new(BIN), false, &env, dir.path(), home.path());
        let text = String::from_utf8(human.stdout).unwrap();
        assert_eq!(human.status.code(), Some(1), "{text}");
        assert!(!text.contains("registration") && !text.contains("--for"), "{env:?}: {text}");
        let json = check(Path::new(BIN), true, &env, dir.path(), home.path());
        let report: Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(report["connected"], false);
        assert!(report.get("register").is_none(), "{report}");
    }
}

/// docs/setup.md's Claude Code allow list names exactly the tools the
/// listing marks as reads, so that following it never pre-approves a write;
/// and its Codex approval key is the one the printed block carries.
#[test]
fn the_documented_claude_code_allow_list_is_exactly_the_reads() {
    let setup = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/setup.md")).unwrap();
    let start = setup.find("```json\n{\n  \"permissions\": {").expect("the allow block in docs/setup.md") + 8;
    let end = start + setup[start..].find("```").unwrap();
    let block: Value = serde_json::from_str(&setup[start..end]).unwrap();
    let allowed: Vec<String> = strings(&block["permissions"]["allow"]);
    let (reads, _) = listed_reads_and_writes();
    let reads: Vec<String> = reads.iter().map(|name| format!("mcp__resmon__{name}")).collect();
    assert_eq!(reads.len(), 25 - WRITE_TOOLS.len());
    assert_eq!(allowed, reads);
    assert!(setup.contains("default_tools_approval_mode = \"writes\""));
}

/// A state directory that discovery used with nothing naming the port (the
/// default folder, named outright) is registered with the port file that
/// discovery read there; a database path beside it is registered as that
/// port file. Either way every printed launch reaches resmon.
#[test]
fn a_state_directory_is_registered_with_the_port_file_discovery_read() {
    let home = TempDir::new();
    let default = home.path().join(".local/state/resmon");
    let fake = start_fake_at(&default);
    let dir = TempDir::new();
    let binary = awkward_binary(dir.path());
    let state_dir = fake.state_dir().display().to_string();
    let expected = pairs(&[
        ("RESMON_PORT_FILE", &fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR", &state_dir),
    ]);
    let scratch = TempDir::new();
    for (env, note) in [
        (pairs(&[("RESMON_STATE_DIR", &state_dir)]), "the port file in the default state directory"),
        (
            pairs(&[
                ("RESMON_DB_PATH", &fake.state_dir().join("resmon.db").display().to_string()),
                ("RESMON_STATE_DIR", &state_dir),
            ]),
            "RESMON_DB_PATH is registered as the port file beside the database",
        ),
    ] {
        let printed = printed(&binary, &env, dir.path(), home.path(), &fake);
        let notes = printed.report["register_notes"].as_array().unwrap();
        assert!(notes.iter().any(|line| line.as_str().unwrap().contains(note)), "{notes:?}");
        for (name, launch) in every_launch_works(&printed, scratch.path(), &fake, 25) {
            assert_eq!(sorted(&launch.env), sorted(&expected), "{name}");
        }
    }
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
