//! The test rig: the one place that starts the real `resmon-mcp` binary
//! (`Launch`, `Session`, `run_cli`, `cli_call`) and the fake resmon (`fake`),
//! and the one place that says what a good answer is (`call_problems`,
//! `output_problems`, `error_payload`).
//!
//! Every launch starts from an empty environment (plus PATH and an empty
//! HOME), so a test says exactly which variables the server sees, as SDK
//! clients and Codex do.

#![allow(dead_code)]

use std::ffi::{OsStr, OsString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_backend::{Corpus, FakeBackend};

pub const BIN: &str = env!("CARGO_BIN_EXE_resmon-mcp");
/// Longest any single answer may take in a test before it counts as a hang.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(15);
/// The per-request bound tests give the server, so that a backend that never
/// answers costs seconds, not the production 30 s.
pub const TEST_TIMEOUT_MS: &str = "1500";

pub use crate::calls::WRITE_TOOLS;

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("resmon-mcp-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fake resmon in a state folder of its own. Fields drop in order: the
/// fake stops (and removes its port and token files) before its folder goes.
pub struct Fake {
    backend: FakeBackend,
    dir: TempDir,
}

impl Fake {
    /// The fake's state folder, for files a test plants beside its own.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl std::ops::Deref for Fake {
    type Target = FakeBackend;

    fn deref(&self) -> &FakeBackend {
        &self.backend
    }
}

/// A fake resmon serving the short synthetic corpus.
pub fn start_fake() -> Fake {
    start_fake_with(Corpus::Short)
}

/// A fake resmon serving `corpus`.
pub fn start_fake_with(corpus: Corpus) -> Fake {
    let dir = TempDir::new();
    Fake { backend: FakeBackend::start_with(dir.path(), corpus), dir }
}

/// A fake resmon, and a session through the handshake whose server finds it.
pub fn connected() -> (Fake, Session) {
    let fake = start_fake();
    let session = Session::initialized(&env_for(&fake));
    (fake, session)
}

/// A fake resmon in a folder the test owns: a state folder with an awkward
/// name, or the folder a restarted resmon writes its new files into.
pub fn start_fake_at(state_dir: &Path) -> FakeBackend {
    FakeBackend::start(state_dir)
}

/// The environment a harness would pass: the fake's port file and state dir.
pub fn env_for(fake: &FakeBackend) -> Vec<(String, String)> {
    vec![
        ("RESMON_PORT_FILE".into(), fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR".into(), fake.state_dir().display().to_string()),
    ]
}

/// Variables written as `(name, value)` pairs.
pub fn vars<V: AsRef<str>>(pairs: &[(&str, V)]) -> Vec<(String, String)> {
    pairs.iter().map(|(key, value)| (key.to_string(), value.as_ref().to_string())).collect()
}

/// A loopback port with nothing listening on it.
pub fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A loopback listener that nothing may reach (a proxy, a redirect target, a
/// port nobody named): it counts the connections it accepts.
pub struct Witness {
    pub port: u16,
    hits: Arc<AtomicUsize>,
}

impl Witness {
    pub fn start() -> Witness {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { break };
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
                let _ = stream.read(&mut [0u8; 1024]);
            }
        });
        Witness { port, hits }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The first 300 characters of a text, for failure messages.
pub fn clip(text: &str) -> String {
    text.chars().take(300).collect()
}

/// Where HOME points for a launch.
enum Home {
    /// A fresh empty folder, so the OS default state dir never finds a real resmon.
    Fresh,
    At(PathBuf),
    Unset,
}

/// How one process of the binary is started. Every launch begins from an
/// empty environment and adds PATH, HOME and the short per-request bound
/// (each can be changed), then exactly the variables the test names, as SDK
/// clients and Codex start a server.
pub struct Launch {
    program: PathBuf,
    other_user: bool,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    /// Variables whose values need not be text (bytes that are not Unicode).
    raw_env: Vec<(String, OsString)>,
    home: Home,
    test_timeout: bool,
    cwd: Option<PathBuf>,
    stdin: Vec<u8>,
}

/// A process started by `Launch::spawn`, killed when dropped. It owns the
/// launch's HOME folder, so that outlives it.
pub struct Running {
    pub child: Child,
    _home: Option<TempDir>,
}

impl Running {
    /// Closes stdin, waits for the exit (panicking after `ANSWER_WITHIN`)
    /// and collects whatever stdout and stderr still hold.
    pub fn wait(mut self, what: &str) -> Output {
        self.child.stdin.take();
        let stdout = self.child.stdout.take().map(read_in_background);
        let stderr = self.child.stderr.take().map(read_in_background);
        let deadline = Instant::now() + ANSWER_WITHIN;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("{what} did not finish within {ANSWER_WITHIN:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let collect =
            |reader: Option<JoinHandle<Vec<u8>>>| reader.map(|r| r.join().unwrap()).unwrap_or_default();
        Output { status, stdout: collect(stdout), stderr: collect(stderr) }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

impl Launch {
    /// The binary under test with `env`.
    pub fn new(env: &[(String, String)]) -> Launch {
        Launch {
            program: PathBuf::from(BIN),
            other_user: false,
            args: Vec::new(),
            env: env.to_vec(),
            home: Home::Fresh,
            raw_env: Vec::new(),
            test_timeout: true,
            cwd: None,
            stdin: Vec::new(),
        }
    }

    /// Another program in the binary's place: a copy of it, or the command a
    /// printed registration names.
    pub fn program(mut self, program: impl Into<PathBuf>) -> Launch {
        self.program = program.into();
        self
    }

    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Launch {
        self.args.extend(args.into_iter().map(|arg| arg.as_ref().to_os_string()));
        self
    }

    pub fn home(mut self, home: &Path) -> Launch {
        self.home = Home::At(home.to_path_buf());
        self
    }

    /// One variable whose value is given as raw bytes (unix), for values that
    /// are not valid Unicode.
    pub fn raw_env(mut self, key: &str, value: OsString) -> Launch {
        self.raw_env.push((key.to_string(), value));
        self
    }

    pub fn without_home(mut self) -> Launch {
        self.home = Home::Unset;
        self
    }

    /// Leaves RESMON_MCP_TIMEOUT_MS out, so the server sees only PATH, HOME
    /// and `env` (what a printed registration must carry by itself).
    pub fn without_test_timeout(mut self) -> Launch {
        self.test_timeout = false;
        self
    }

    pub fn cwd(mut self, dir: &Path) -> Launch {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// Bytes written to stdin before it is closed (`output` only).
    pub fn stdin(mut self, bytes: &[u8]) -> Launch {
        self.stdin = bytes.to_vec();
        self
    }

    /// When the tests run as root, runs the binary as `nobody` instead, so
    /// that a file without read permission is really refused (root reads
    /// anything). Needs `setpriv` (util-linux).
    pub fn run_as_other_user(mut self) -> Launch {
        self.other_user = is_root();
        self
    }

    /// Starts the process with all three streams piped.
    pub fn spawn(self) -> Running {
        let (home, home_path) = match &self.home {
            Home::Fresh => {
                let home = TempDir::new();
                let path = home.path().to_path_buf();
                (Some(home), Some(path))
            }
            Home::At(path) => (None, Some(path.clone())),
            Home::Unset => (None, None),
        };
        let mut command = if self.other_user {
            let mut command = Command::new("setpriv");
            command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&self.program);
            command
        } else {
            Command::new(&self.program)
        };
        command.args(&self.args).env_clear();
        command.env("PATH", std::env::var("PATH").unwrap_or_default());
        if let Some(home) = home_path {
            command.env("HOME", home);
        }
        if self.test_timeout {
            command.env("RESMON_MCP_TIMEOUT_MS", TEST_TIMEOUT_MS);
        }
        command.envs(self.env.iter().cloned());
        command.envs(self.raw_env.iter().cloned());
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        Running { child: spawn_patiently(&mut command), _home: home }
    }

    /// Runs to the end, feeding `stdin`; panics after `ANSWER_WITHIN`.
    pub fn output(mut self) -> Output {
        let what = format!("{} {:?}", self.program.display(), self.args);
        let bytes = std::mem::take(&mut self.stdin);
        let mut running = self.spawn();
        let mut input = running.child.stdin.take().unwrap();
        // A writer of its own: a server that never reads stdin must not block the test.
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&bytes);
        });
        let output = running.wait(&what);
        let _ = writer.join();
        output
    }

    /// A server session over the pipes, before the handshake.
    pub fn session(self) -> Session {
        let mut running = self.spawn();
        let stdout = running.child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => (),
                }
                // Only the newline goes: a `\r` before it stays in the line,
                // so a test of the framing can see it.
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                let line = String::from_utf8(line)
                    .unwrap_or_else(|error| format!("<not UTF-8: {:?}>", error.as_bytes()));
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = running.child.stderr.take().map(read_in_background);
        let stdin = running.child.stdin.take();
        Session { running, stdin, lines, stderr, next_id: 1, transcript: Vec::new() }
    }
}

/// Spawns, waiting out "text file busy": a freshly copied binary's write
/// descriptor may live on for a moment in a child that another test forked.
fn spawn_patiently(command: &mut Command) -> Child {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Err(error) if error.kind() == std::io::ErrorKind::ExecutableFileBusy && attempts < 100 => {
                attempts += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other.unwrap_or_else(|error| panic!("cannot start {command:?}: {error}")),
        }
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// Runs the binary once with arguments (e.g. `--check`, `call health {}`).
pub fn run_cli(args: &[&str], env: &[(String, String)]) -> Output {
    Launch::new(env).args(args).output()
}

/// `call <tool> <json>`: the exit code, the printed answer (`printed_answer`)
/// and all the text written.
pub fn cli_call(tool: &str, arguments: Value, env: &[(String, String)]) -> (Option<i32>, Value, String) {
    let output = run_cli(&["call", tool, &arguments.to_string()], env);
    let answer = printed_answer(tool, &output);
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code(), answer, text)
}

/// What `call <tool> ...` printed on stdout, parsed (null when it is not
/// JSON). A success (exit 0) is checked against the tool's outputSchema, as
/// `Session::call` checks every successful tools/call.
pub fn printed_answer(tool: &str, output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    if output.status.code() == Some(0) {
        let problems = output_problems(tool, &answer);
        assert!(
            problems.is_empty(),
            "call {tool} printed an answer outside its outputSchema: {problems:?}\n{stdout}"
        );
    }
    answer
}

/// One running server session over pipes.
pub struct Session {
    running: Running,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    next_id: i64,
    /// Every line the server wrote to stdout, for token checks.
    pub transcript: Vec<String>,
}

impl Session {
    pub fn start(env: &[(String, String)]) -> Session {
        Launch::new(env).session()
    }

    /// A session whose server gets command-line arguments (e.g. `--read-only=true`).
    pub fn start_with_args(args: &[&str], env: &[(String, String)]) -> Session {
        Launch::new(env).args(args).session()
    }

    /// A session already through the handshake.
    pub fn initialized(env: &[(String, String)]) -> Session {
        let mut session = Session::start(env);
        session.handshake();
        session
    }

    /// `initialize` at 2025-11-25 and `notifications/initialized`.
    pub fn handshake(&mut self) {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
        self.notify("notifications/initialized", json!({}));
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next line the server writes, parsed; panics after `ANSWER_WITHIN`.
    pub fn recv(&mut self) -> Value {
        match self.lines.recv_timeout(ANSWER_WITHIN) {
            Ok(line) => {
                self.transcript.push(line.clone());
                serde_json::from_str(&line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"))
            }
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {ANSWER_WITHIN:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
        }
    }

    /// True when the server writes nothing within `wait`.
    pub fn silent_for(&mut self, wait: Duration) -> bool {
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                self.transcript.push(line);
                false
            }
            Err(_) => true,
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        let answer = self.recv();
        assert_eq!(answer["id"], json!(id), "answer to another id: {answer}");
        answer
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send_raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// `tools/call`, returning the `result` object (content, isError,
    /// structuredContent). Every answer is held to `call_problems` here, so
    /// no test can forget to check a success against its outputSchema.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let problems = call_problems(tool, &answer);
        assert!(problems.is_empty(), "{tool}: {}\n{answer}", problems.join("; "));
        answer["result"].clone()
    }

    /// Closes stdin and waits for the exit; returns the status and stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        self.stdin.take();
        let deadline = Instant::now() + ANSWER_WITHIN;
        let child = &mut self.running.child;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the server did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let stderr = self.stderr.take().map(|reader| reader.join().unwrap_or_default()).unwrap_or_default();
        (status, String::from_utf8_lossy(&stderr).into_owned())
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.running.child
    }
}

/// Where the JSON-RPC answer to a `tools/call` of `tool` breaks the rules
/// every answer keeps (empty when it keeps them): a tool result, never a
/// protocol error; a success whose one text block holds the same JSON as its
/// structuredContent, which fits the tool's outputSchema; an error of the
/// documented shape (`error_payload`).
pub fn call_problems(tool: &str, answer: &Value) -> Vec<String> {
    if let Some(error) = answer.get("error") {
        return vec![format!("a JSON-RPC error instead of a tool result: {error}")];
    }
    let result = &answer["result"];
    match result["isError"].as_bool() {
        None => vec![format!("no isError in the result: {}", clip(&result.to_string()))],
        Some(true) if error_payload(result).is_none() => {
            vec![format!("the error result is not of the documented shape: {}", clip(&result.to_string()))]
        }
        Some(true) => Vec::new(),
        Some(false) => {
            let structured = &result["structuredContent"];
            let text = result["content"][0]["text"]
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok());
            let mut problems = Vec::new();
            if text.as_ref() != Some(structured) {
                problems.push("the text content and structuredContent differ".to_string());
            }
            problems.extend(
                output_problems(tool, structured)
                    .into_iter()
                    .map(|problem| format!("outside its outputSchema: {problem}")),
            );
            problems
        }
    }
}

/// The answer of a successful tool call.
pub fn structured(result: &Value) -> &Value {
    assert_eq!(result["isError"], json!(false), "expected success, got {result}");
    let structured = &result["structuredContent"];
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, structured, "text content and structuredContent differ");
    structured
}

/// The error object of a failed tool call, read the one way every test reads
/// it (docs/contract-notes.md, note 21): `isError`, no structuredContent, a
/// first text block `<code>: <message>` that is not JSON, and a second block
/// holding the error object as JSON. None when the result is not so shaped.
pub fn error_payload(result: &Value) -> Option<Value> {
    if result["isError"] != json!(true) || result.get("structuredContent").is_some() {
        return None;
    }
    let content = result["content"].as_array()?;
    if content.len() != 2 || content.iter().any(|block| block["type"] != "text") {
        return None;
    }
    let sentence = content[0]["text"].as_str()?;
    if serde_json::from_str::<Value>(sentence).is_ok() {
        return None;
    }
    let payload: Value = serde_json::from_str(content[1]["text"].as_str()?).ok()?;
    let code = payload["error"].as_str()?;
    let message = payload["message"].as_str()?;
    if !payload["detail"].is_object() || sentence != format!("{code}: {message}") {
        return None;
    }
    Some(payload)
}

/// The error payload of a failed tool call; fails the test when the result
/// is not an error of the documented shape.
pub fn tool_error(result: &Value) -> Value {
    error_payload(result)
        .unwrap_or_else(|| panic!("expected a tool error of the documented shape, got {result}"))
}

/// Where a tool's successful answer breaks its outputSchema (empty when it
/// does not, or when no tool has that name). The one output-schema checker
/// of the test suite.
pub fn output_problems(tool: &str, answer: &Value) -> Vec<String> {
    match resmon_mcp::tools::output_schema(tool) {
        Some(schema) => schema_problems(&schema, answer, "$"),
        None => Vec::new(),
    }
}

/// The part of JSON Schema the output schemas use (type, enum, required,
/// properties, additionalProperties, items), checked the way an SDK's validator would. Returns
/// every violation with its path.
pub fn schema_problems(schema: &Value, value: &Value, path: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let fits = |kind: &str| match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    };
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !kinds.is_empty() && !kinds.iter().any(|kind| fits(kind)) {
        let shown: String = value.to_string().chars().take(300).collect();
        problems.push(format!("{path} is not {}: {shown}", kinds.join(" or ")));
        return problems;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        problems.push(format!("{path}: {value} is not one of {allowed:?}"));
    }
    if let Some(object) = value.as_object() {
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap_or("");
            if !object.contains_key(name) {
                problems.push(format!("{path}.{name} is missing"));
            }
        }
        let declared = schema["properties"].as_object();
        for (name, property) in declared.into_iter().flatten() {
            if let Some(inner) = object.get(name) {
                problems.extend(schema_problems(property, inner, &format!("{path}.{name}")));
            }
        }
        // Keys the schema does not declare: refused when it is closed, held
        // to its `additionalProperties` schema when it gives one.
        let undeclared = object.iter().filter(|(name, _)| !declared.is_some_and(|d| d.contains_key(*name)));
        for (name, inner) in undeclared {
            match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => problems.push(format!("{path}.{name} is not allowed")),
                Some(extra @ Value::Object(_)) => {
                    problems.extend(schema_problems(extra, inner, &format!("{path}.{name}")));
                }
                _ => {}
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (index, item) in array.iter().enumerate() {
            problems.extend(schema_problems(items, item, &format!("{path}[{index}]")));
        }
    }
    problems
}

#[test]
fn schema_problems_holds_undeclared_keys_to_additional_properties() {
    let open = json!({"type": "object", "properties": {"a": {"type": "integer"}},
                      "additionalProperties": {"type": "integer"}});
    assert!(schema_problems(&open, &json!({"a": 1, "b": 2}), "$").is_empty());
    assert_eq!(schema_problems(&open, &json!({"a": 1, "b": "x"}), "$").len(), 1);
    let closed =
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": false});
    assert_eq!(
        schema_problems(&closed, &json!({"a": 1, "b": 2}), "$"),
        vec!["$.b is not allowed".to_string()]
    );
    let silent = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    assert!(schema_problems(&silent, &json!({"a": 1, "b": "x"}), "$").is_empty());
}

/// The checker itself must catch what it is for, or every test that leans
/// on it passes for nothing.
#[test]
fn call_problems_catches_every_rule_an_answer_breaks() {
    let text = |value: &Value| json!([{"type": "text", "text": value.to_string()}]);
    let health = json!({"status": "ok", "version": "2.3.0", "schema_version": null, "scheduler": null,
                        "daemon": null, "identity": null});
    let good = json!({"result": {"isError": false, "content": text(&health), "structuredContent": health}});
    assert!(output_problems("health", &health).is_empty(), "the sample must fit health's outputSchema");
    assert_eq!(call_problems("health", &good), Vec::<String>::new());
    let broken_answers = [
        json!({"error": {"code": -32602, "message": "x"}}),
        json!({"result": {"content": text(&health), "structuredContent": health}}),
        json!({"result": {"isError": false, "content": text(&json!({})), "structuredContent": health}}),
        json!({"result": {"isError": false, "content": text(&json!({"status": 7})), "structuredContent": {"status": 7}}}),
        json!({"result": {"isError": true, "content": [{"type": "text", "text": "upstream_error: no"}]}}),
    ];
    for answer in broken_answers {
        assert!(!call_problems("health", &answer).is_empty(), "passed: {answer}");
    }
}
