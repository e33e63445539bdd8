//! A first try of resmon-mcp without resmon (README.md, "Try it without
//! resmon"):
//!
//!     cargo run --release --example demo
//!
//! It builds the server, starts the test suite's fake resmon (real HTTP, the
//! real token check, a small synthetic corpus) in this process, and runs
//! the real `resmon-mcp` binary over stdio through the session a harness
//! would hold: discovery, tools/list, health, a page of search_corpus,
//! get_execution, and a write refused by a read-only session. Each step
//! shows what the client sent and, readably, what came back. It exits 0
//! only when every answer is the one expected, so CI runs it as a test.

#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use fake_backend::FakeBackend;
use serde_json::{Value, json};

const USAGE: &str = "\
Usage: cargo run --release --example demo [-- OPTIONS]

Runs the real resmon-mcp binary against a fake resmon and prints the session.

Options:
  --no-build   do not run `cargo build` first (target/<profile>/resmon-mcp must exist)
  -h, --help   print this help
";

/// Longest the demo waits for one answer before calling the server stuck.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
/// An execution in the fixture corpus: a completed sweep that was restarted
/// from an interrupted one, with a source that answered in part.
const EXECUTION: i64 = fake_backend::corpus::EXEC_RESTARTED;

fn main() {
    let mut build = true;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--no-build" => build = false,
            "-h" | "--help" => {
                print!("{USAGE}");
                return;
            }
            other => fail(&format!("unexpected argument {other:?}\n\n{USAGE}")),
        }
    }
    let profile_dir = profile_dir();
    if build {
        build_server(&profile_dir);
    }
    let server = profile_dir.join(format!("resmon-mcp{}", std::env::consts::EXE_SUFFIX));
    if !server.is_file() {
        fail(&format!("{} is missing; run `cargo build --release`", server.display()));
    }

    let work = std::env::temp_dir().join(format!("resmon-mcp-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let home = work.join("home");
    std::fs::create_dir_all(&home)
        .unwrap_or_else(|e| fail(&format!("cannot create {}: {e}", home.display())));
    let fake = FakeBackend::start(&work.join("state"));
    let outcome = run(&server, &fake, &home);
    fake.stop();
    let _ = std::fs::remove_dir_all(&work);
    if let Err(problem) = outcome {
        fail(&problem);
    }
}

fn run(server: &Path, fake: &FakeBackend, home: &Path) -> Result<(), String> {
    let env = vec![
        ("RESMON_PORT_FILE".to_string(), fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR".to_string(), fake.state_dir().display().to_string()),
    ];
    println!("resmon-mcp demo: the real server over stdio, against a fake resmon\n");
    println!("A fake resmon serves a small synthetic corpus on {}.", fake.base_url());
    println!("The server is started as a harness starts it: {}", server.display());
    println!("with only these variables (and PATH, HOME) in its environment:");
    for (key, value) in &env {
        println!("  {key}={value}");
    }
    println!("Lines marked > are what the client sends; the answers follow, shortened for reading.");

    let mut session = Session::start(server, &env, home)?;
    heading("1. discovery");
    let discover = session.request(
        "server/discover",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    )?;
    let versions: Vec<&str> =
        discover["supportedVersions"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    expect(!versions.is_empty(), "server/discover named no protocol version", &discover)?;
    println!("  protocol versions: {}", versions.join(", "));
    let instructions = discover["instructions"].as_str().unwrap_or("");
    println!("  instructions for the model ({} characters), opening with:", instructions.len());
    println!("    {}", first_sentence(instructions));
    println!("A client of the 2025 protocol era sends initialize instead; this session goes on that way.");
    let initialize = session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo", "version": "0"}}),
    )?;
    let info = &initialize["serverInfo"];
    expect(initialize["protocolVersion"] == "2025-11-25", "initialize to settle on 2025-11-25", &initialize)?;
    println!(
        "  server {} \"{}\", contract {}",
        text(&info["name"]),
        text(&info["title"]),
        text(&info["version"])
    );
    session.notify("notifications/initialized")?;

    heading("2. tools/list");
    let listing = session.request("tools/list", json!({}))?;
    let tools = listing["tools"].as_array().cloned().unwrap_or_default();
    let writes = tools.iter().filter(|tool| tool["requires_confirmation"] == true).count();
    println!(
        "  {} tools: {} read, {writes} write (marked requires_confirmation: true, to ask the person first)",
        tools.len(),
        tools.len() - writes
    );
    for tool in &tools {
        let kind = if tool["requires_confirmation"] == true { "write" } else { "read " };
        println!("    {kind}  {:<24} {}", text(&tool["name"]), text(&tool["title"]));
    }
    expect(tools.len() == 25, "the full surface is 25 tools", &listing)?;

    heading("3. health");
    let health = session.call("health", json!({}))?;
    println!(
        "  resmon {} answers (status {}); runtime_id {}, schema {}",
        text(&health["version"]),
        text(&health["status"]),
        text(&health["identity"]["runtime_id"]),
        text(&health["schema_version"])
    );
    expect(
        health["identity"]["runtime_id"] == fake.runtime_id(),
        "health came from another resmon",
        &health,
    )?;

    heading("4. search_corpus, one page");
    let page = session.call("search_corpus", json!({"query": "graph", "limit": 3}))?;
    let papers = page["papers"].as_array().cloned().unwrap_or_default();
    println!("  {} of {} papers ({} search)", papers.len(), text(&page["total"]), text(&page["mode"]));
    for paper in &papers {
        println!(
            "    {:>4}  {}  {:<7}  {}",
            text(&paper["id"]),
            text(&paper["date"]),
            text(&paper["source"]),
            text(&paper["title"])
        );
    }
    println!("  next page: pass cursor {} back", page["next_cursor"]);
    expect(papers.len() == 3 && page["has_more"] == true, "a first page of 3 with more to come", &page)?;

    heading("5. get_execution");
    let execution = session.call("get_execution", json!({"exec_id": EXECUTION}))?;
    println!(
        "  execution {} ({}): {}, {} results, {} new; restarted from {}",
        text(&execution["id"]),
        text(&execution["execution_type"]),
        text(&execution["status"]),
        text(&execution["result_count"]),
        text(&execution["new_result_count"]),
        text(&execution["restarted_from"])
    );
    println!("  coverage: {}", text(&execution["coverage"]["summary"]));
    for source in execution["coverage"]["sources"].as_array().into_iter().flatten() {
        println!("    {:<9} {}", text(&source["source"]), text(&source["note"]));
    }
    expect(execution["id"] == EXECUTION, "the execution asked for", &execution)?;
    let exited_cleanly = session.finish()?;
    expect(exited_cleanly, "the server to exit 0 when stdin closes", &Value::Null)?;

    heading("6. a write in a read-only session");
    let mut read_only_env = env.clone();
    read_only_env.push(("RESMON_MCP_READ_ONLY".into(), "1".into()));
    println!(
        "  a second server, started with RESMON_MCP_READ_ONLY=1 (for a harness that cannot ask a person)"
    );
    let mut session = Session::start(server, &read_only_env, home)?;
    session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "demo", "version": "0"}}),
    )?;
    session.notify("notifications/initialized")?;
    let listing = session.request("tools/list", json!({}))?;
    let offered = listing["tools"].as_array().cloned().unwrap_or_default();
    let only_reads = offered.iter().all(|tool| tool["requires_confirmation"] == false);
    println!("  tools/list offers {} tools: the reads only", offered.len());
    let before = fake.requests().len();
    // A complete, valid call: only the read-only gate can refuse it.
    let refused =
        session.call_result("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]}))?;
    let sentence = refused["content"][0]["text"].as_str().unwrap_or("");
    println!("  isError: {}; the first block, which the model reads:", refused["isError"]);
    println!("    {sentence}");
    let reached = fake.requests().len() - before;
    println!("  requests that reached resmon for it: {reached}");
    expect(
        refused["isError"] == true
            && sentence.starts_with("invalid_argument: ")
            && refused["content"][1]["text"]
                .as_str()
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .is_some_and(|error| error["detail"]["read_only"] == true)
            && reached == 0,
        "the write is refused before anything reaches resmon",
        &refused,
    )?;
    expect(offered.len() == 18 && only_reads, "a read-only session to offer the 18 reads", &listing)?;
    let exited_cleanly = session.finish()?;
    expect(exited_cleanly, "the server to exit 0 when stdin closes", &Value::Null)?;

    println!(
        "\ndemo passed: 25 tools offered (18 in a read-only session); every answer was the one expected."
    );
    println!(
        "`resmon-mcp --check --for <harness>` prints the registration for your harness; resmon need not be running yet."
    );
    Ok(())
}

/// One server process and its stdout, read line by line on a thread so that
/// a stuck server costs ANSWER_WITHIN, not forever.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
}

impl Session {
    fn start(server: &Path, env: &[(String, String)], home: &Path) -> Result<Session, String> {
        let mut child = Command::new(server)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .envs(env.iter().cloned())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Session { stdin: child.stdin.take(), child, lines, next_id: 1 })
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        writeln!(stdin, "{message}").and_then(|()| stdin.flush()).map_err(|e| format!("cannot write: {e}"))
    }

    /// Sends a request, prints it, and returns its `result`.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let shown = if method == "tools/call" {
            format!("tools/call {} {}", text(&params["name"]), params["arguments"])
        } else {
            method.to_string()
        };
        println!("> {shown}");
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let line = self
            .lines
            .recv_timeout(ANSWER_WITHIN)
            .map_err(|_| format!("no answer to {method} within {ANSWER_WITHIN:?}"))?;
        let answer: Value =
            serde_json::from_str(&line).map_err(|e| format!("the answer is not JSON ({e}): {line}"))?;
        if answer["id"] != id {
            return Err(format!("an answer to another request: {line}"));
        }
        if let Some(error) = answer.get("error") {
            return Err(format!("{method} failed: {error}"));
        }
        Ok(answer["result"].clone())
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        println!("> {method}");
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }

    fn call_result(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// A tool call that must succeed; returns its structuredContent and
    /// notes how much text the model receives.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let result = self.call_result(tool, arguments)?;
        if result["isError"] != false {
            return Err(format!("{tool} answered an error: {}", result["content"][0]["text"]));
        }
        let bytes = result["content"][0]["text"].as_str().map_or(0, str::len);
        println!("  (the model receives {bytes} bytes of JSON text; below, a few of its fields)");
        Ok(result["structuredContent"].clone())
    }

    /// Closes stdin and waits for the server to exit; true when it exits 0.
    fn finish(mut self) -> Result<bool, String> {
        self.stdin.take();
        for _ in 0..(ANSWER_WITHIN.as_millis() / 10) {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status.success());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        Err("the server did not exit after stdin closed".into())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn heading(title: &str) {
    println!("\n== {title}");
}

fn expect(holds: bool, what: &str, seen: &Value) -> Result<(), String> {
    if holds { Ok(()) } else { Err(format!("expected {what}; got {seen}")) }
}

/// A value for reading: strings without their quotes, null as "none".
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

fn first_sentence(text: &str) -> &str {
    text.find(". ").map_or(text, |end| &text[..=end])
}

/// target/<profile>/, found from this example's own path
/// (target/<profile>/examples/demo), so CARGO_TARGET_DIR is respected.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| fail(&format!("cannot find this program: {e}")));
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| fail("not under target/<profile>/"))
}

/// Builds the server in the profile this example was built in.
fn build_server(profile_dir: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut args = vec!["build", "--quiet", "--bin", "resmon-mcp"];
    match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("release") => args.push("--release"),
        Some("debug") | None => {}
        Some(other) => args.extend(["--profile", other]),
    }
    eprintln!("demo: cargo {}", args.join(" "));
    let mut command = Command::new(cargo);
    command.args(&args);
    let status = command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|e| fail(&format!("cannot run cargo: {e}")));
    if !status.success() {
        fail(&format!("cargo build failed ({status})"));
    }
}

fn fail(problem: &str) -> ! {
    eprintln!("demo: {problem}");
    std::process::exit(1);
}
