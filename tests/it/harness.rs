//! Drives the real `resmon-mcp` binary over pipes, the way a harness does.
//!
//! Every spawn starts from an empty environment (plus PATH), so a test says
//! exactly which variables the server sees, as SDK clients and Codex do.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_backend::FakeBackend;

pub const BIN: &str = env!("CARGO_BIN_EXE_resmon-mcp");
/// Longest any single answer may take in a test before it counts as a hang.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(15);
/// The per-request bound tests give the server, so that a backend that never
/// answers costs seconds, not the production 30 s.
pub const TEST_TIMEOUT_MS: &str = "1500";

/// The seven write tools contract 1.0's Write table names.
pub const WRITE_TOOLS: [&str; 7] = [
    "run_sweep",
    "create_routine",
    "create_watch_profile",
    "run_routine",
    "activate_routine",
    "deactivate_routine",
    "update_settings",
];

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

/// The environment a harness would pass: the fake's port file and state dir.
pub fn env_for(fake: &FakeBackend) -> Vec<(String, String)> {
    vec![
        ("RESMON_PORT_FILE".into(), fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR".into(), fake.state_dir().display().to_string()),
    ]
}

fn command(env: &[(String, String)], home: &Path) -> Command {
    let mut command = Command::new(BIN);
    command.env_clear();
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    // HOME points at an empty folder so the OS default state dir never finds a real resmon.
    command.env("HOME", home);
    command.env("RESMON_MCP_TIMEOUT_MS", TEST_TIMEOUT_MS);
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

/// Runs the binary once with arguments (e.g. `--check`, `call health {}`).
pub fn run_cli(args: &[&str], env: &[(String, String)]) -> Output {
    let home = TempDir::new();
    let mut child = command(env, home.path())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn resmon-mcp");
    let deadline = Instant::now() + ANSWER_WITHIN;
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("resmon-mcp {args:?} did not finish within {ANSWER_WITHIN:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `call <tool> <json>` and its parsed stdout.
pub fn cli_call(tool: &str, arguments: Value, env: &[(String, String)]) -> (Option<i32>, Value, String) {
    let output = run_cli(&["call", tool, &arguments.to_string()], env);
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (output.status.code(), value, format!("{stdout}{stderr}"))
}

/// One running server session over pipes.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    next_id: i64,
    /// Every line the server wrote to stdout, for token checks.
    pub transcript: Vec<String>,
    _home: TempDir,
}

impl Session {
    pub fn start(env: &[(String, String)]) -> Session {
        Session::start_with_args(&[], env)
    }

    /// A session whose server gets command-line arguments (e.g. `--read-only=true`).
    pub fn start_with_args(args: &[&str], env: &[(String, String)]) -> Session {
        let home = TempDir::new();
        let mut child = command(env, home.path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn resmon-mcp");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let stdin = child.stdin.take();
        Session { child, stdin, lines, stderr: Some(stderr), next_id: 1, transcript: Vec::new(), _home: home }
    }

    /// A session already through the handshake.
    pub fn initialized(env: &[(String, String)]) -> Session {
        let mut session = Session::start(env);
        let answer = session.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}));
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
        session.notify("notifications/initialized", json!({}));
        session
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
    /// structuredContent). Every success is checked against the tool's
    /// outputSchema here, so no test can forget to.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(answer.get("error").is_none(), "protocol error for {tool}: {answer}");
        let result = answer["result"].clone();
        if result["isError"] == json!(false) {
            let problems = output_problems(tool, &result["structuredContent"]);
            assert!(problems.is_empty(), "{tool} answered outside its outputSchema: {problems:?}\n{result}");
        }
        result
    }

    /// Closes stdin and waits for the exit; returns the status and stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        self.stdin.take();
        let deadline = Instant::now() + ANSWER_WITHIN;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let stderr = self.stderr.take().unwrap().join().unwrap_or_default();
        (status, stderr)
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    match resmon_mcp::tools::find(tool) {
        Some(tool) => schema_problems(&(tool.output_schema)(), answer, "$"),
        None => Vec::new(),
    }
}

/// The part of JSON Schema the output schemas use (type, enum, required,
/// properties, items), checked the way an SDK's validator would. Returns
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
        for (name, property) in schema["properties"].as_object().into_iter().flatten() {
            if let Some(inner) = object.get(name) {
                problems.extend(schema_problems(property, inner, &format!("{path}.{name}")));
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
