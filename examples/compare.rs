//! What `resmon-mcp call` prints, compared between two builds of the server
//! against the same fake resmon: a change meant to leave behaviour alone is
//! checked by it (`tests/compare/run.sh BEFORE AFTER` builds the two).
//!
//!     cargo run --example compare -- --before PATH --after PATH [--only TEXT]
//!
//! The cases: every call of the tests' call list (tests/it/calls.rs, one per
//! branch of every tool) as a success; one way to each error code of the
//! contract (as tests/it/readable.rs reaches them); and each call again with
//! a fault on each route it sends to (found by a first run of the call): the
//! write faults on a write's routes and its read-backs, a few answer faults
//! on a read's. Each case runs each build against a fresh fake in the same
//! state, and compares the exit code, stdout and stderr, with what differs
//! between two starts of the fake (its port, folder, runtime id, the time)
//! replaced by placeholders. Prints each difference; exits 1 when there is
//! one, 0 when every case printed the same.

#[path = "../tests/it/calls.rs"]
mod calls;
#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use fake_backend::{FakeBackend, Fault};
use serde_json::{Value, json};

const USAGE: &str = "\
Usage: cargo run --example compare -- --before PATH --after PATH [--only TEXT]

  --before PATH   the resmon-mcp binary built before the change
  --after PATH    the resmon-mcp binary built after it
  --only TEXT     run only the cases whose name contains TEXT
  --list          print the cases' names and exit
";

/// The per-call bound both builds run with, so that a stalled answer ends soon.
const BOUND_MS: &str = "1500";

/// What a case does to the fake before the call.
#[derive(Clone)]
enum Arrange {
    Nothing,
    /// This fault on this method and exact path.
    Route(String, String, Fault),
    /// A canned answer for this method and path.
    Answer(String, String, u16, String),
    /// No resmon: a port file naming a closed port, and a token.
    Stopped,
    /// No port named: the port file is missing.
    Unnamed,
}

#[derive(Clone)]
struct Case {
    name: String,
    tool: String,
    /// With `@RUNTIME_ID@` where the fake's runtime id goes.
    arguments: Value,
    arrange: Arrange,
}

/// What one build printed for one case.
#[derive(PartialEq, Eq)]
struct Printed {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
}

const RUNTIME_ID: &str = "@RUNTIME_ID@";
const OTHER_RUNTIME: &str = "0b7e9c52-6f1a-4d3e-8a2b-9c0d1e2f3a4b";

/// A fresh folder for one fake.
fn fresh_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "resmon-compare-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create a temporary folder");
    dir
}

fn with_runtime_id(value: &Value, runtime_id: &str) -> Value {
    serde_json::from_str(&value.to_string().replace(RUNTIME_ID, runtime_id)).expect("still JSON")
}

/// Replaces what differs between two starts of the fake with placeholders.
fn normalise(text: &str, fake: Option<&FakeBackend>, dir: &Path) -> String {
    let mut text = text.replace(&dir.display().to_string(), "<DIR>");
    if let Some(fake) = fake {
        text = text.replace(&fake.runtime_id(), "<RUNTIME_ID>").replace(&fake.port().to_string(), "<PORT>");
    }
    // The time a deadline left, which varies with the machine's load.
    for (opening, closing) in [("Only ", " s was left"), ("\"time_left_s\": ", "\n")] {
        text = mask_between(&text, opening, closing);
    }
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    while at < chars.len() {
        // An ISO date-time (the fake stamps what it creates with the time).
        let rest: String = chars[at..chars.len().min(at + 19)].iter().collect();
        let is_time = rest.len() == 19
            && rest.chars().enumerate().all(|(i, c)| match i {
                4 | 7 => c == '-',
                10 => c == 'T' || c == ' ',
                13 | 16 => c == ':',
                _ => c.is_ascii_digit(),
            });
        if is_time {
            out.push_str("<TIME>");
            at += 19;
            while at < chars.len()
                && (chars[at].is_ascii_digit() || matches!(chars[at], '.' | 'Z' | '+' | ':'))
            {
                at += 1;
            }
            continue;
        }
        out.push(chars[at]);
        at += 1;
    }
    out
}

/// Each number between `opening` and `closing` replaced with `<N>`.
fn mask_between(text: &str, opening: &str, closing: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(opening) {
        out.push_str(&rest[..at + opening.len()]);
        rest = &rest[at + opening.len()..];
        let number = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if number > 0 && rest[number..].trim_start_matches(',').starts_with(closing) {
            out.push_str("<N>");
            rest = &rest[number..];
        }
    }
    out.push_str(rest);
    out
}

fn run(server: &Path, case: &Case) -> Printed {
    let dir = fresh_dir();
    let mut fake = None;
    let mut env: Vec<(String, String)> = vec![("RESMON_MCP_TIMEOUT_MS".into(), BOUND_MS.into())];
    let mut runtime_id = OTHER_RUNTIME.to_string();
    match &case.arrange {
        Arrange::Stopped => {
            // A port nothing listens on, the same for both builds.
            static DEAD: std::sync::OnceLock<u16> = std::sync::OnceLock::new();
            let port =
                *DEAD.get_or_init(|| TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port());
            std::fs::write(dir.join("resmon.port"), port.to_string()).unwrap();
            std::fs::write(dir.join(format!("api-token-{port}")), "t".repeat(43)).unwrap();
            env.push(("RESMON_PORT_FILE".into(), dir.join("resmon.port").display().to_string()));
            env.push(("RESMON_STATE_DIR".into(), dir.display().to_string()));
        }
        Arrange::Unnamed => {
            env.push(("RESMON_PORT_FILE".into(), dir.join("elsewhere/resmon.port").display().to_string()));
        }
        other => {
            let backend = FakeBackend::start(&dir);
            match other {
                Arrange::Route(method, path, fault) => backend.set_fault_for(method, path, fault.clone()),
                Arrange::Answer(method, path, status, body) => {
                    backend.override_response(method, path, *status, &[], body)
                }
                _ => {}
            }
            env.push(("RESMON_PORT_FILE".into(), backend.port_file().display().to_string()));
            env.push(("RESMON_STATE_DIR".into(), backend.state_dir().display().to_string()));
            runtime_id = backend.runtime_id();
            fake = Some(backend);
        }
    }
    let arguments = with_runtime_id(&case.arguments, &runtime_id);
    let output = Command::new(server)
        .args(["call", &case.tool, &arguments.to_string()])
        .env_remove("RESMON_PORT")
        .env_remove("RESMON_PORT_FILE")
        .env_remove("RESMON_STATE_DIR")
        .env_remove("RESMON_MCP_READ_ONLY")
        .envs(env)
        .output()
        .expect("start the server");
    let printed = Printed {
        exit: output.status.code(),
        stdout: normalise(&String::from_utf8_lossy(&output.stdout), fake.as_ref(), &dir),
        stderr: normalise(&String::from_utf8_lossy(&output.stderr), fake.as_ref(), &dir),
    };
    if let Some(fake) = fake {
        fake.stop();
    }
    let _ = std::fs::remove_dir_all(&dir);
    printed
}

/// The routes one call sends to, other than the health request that
/// confirms the fake: (method, path), in order, each once.
fn routes_of(server: &Path, tool: &str, arguments: &Value) -> Vec<(String, String)> {
    let dir = fresh_dir();
    let fake = FakeBackend::start(&dir);
    let arguments = with_runtime_id(arguments, &fake.runtime_id());
    let _ = Command::new(server)
        .args(["call", tool, &arguments.to_string()])
        .env("RESMON_PORT_FILE", fake.port_file())
        .env("RESMON_STATE_DIR", fake.state_dir())
        .env("RESMON_MCP_TIMEOUT_MS", BOUND_MS)
        .output();
    let mut routes: Vec<(String, String)> = Vec::new();
    for (index, request) in fake.requests().into_iter().enumerate() {
        let route = (request.method.clone(), request.path.clone());
        let confirming = index == 0 && route.1 == "/api/health";
        if !confirming && !routes.contains(&route) {
            routes.push(route);
        }
    }
    fake.stop();
    let _ = std::fs::remove_dir_all(&dir);
    routes
}

/// The faults a write meets on its own route and its read-backs.
fn write_faults() -> Vec<(&'static str, Fault)> {
    vec![
        ("CloseWithoutAnswer", Fault::CloseWithoutAnswer),
        ("BreakOff(8)", Fault::BreakOff(8)),
        ("ResetAfter(8)", Fault::ResetAfter(8)),
        ("StallAfter(8)", Fault::StallAfter(8)),
        ("StallInHead", Fault::StallInHead),
        ("InvalidHeader", Fault::InvalidHeader),
        ("BigHead(20000)", Fault::BigHead(20_000)),
        ("Html500", Fault::Html500),
        ("NonJson200", Fault::NonJson200),
        ("WrongShape200", Fault::WrongShape200),
        ("NullsBody200", Fault::NullsBody200),
        ("Unauthorized", Fault::Unauthorized),
        ("Status(409)", Fault::Status(409, r#"{"detail":"Already running"}"#.into())),
        ("Status(422)", Fault::Status(422, r#"{"detail":"Value not accepted"}"#.into())),
        ("RenameKey(id)", Fault::RenameKey("id".into(), "ident".into())),
        ("RepeatKey(id)", Fault::RepeatKey("id".into(), json!(424242))),
        ("Slow(1200)", Fault::Slow(1200)),
    ]
}

/// The faults a read meets on each of its routes.
fn read_faults() -> Vec<(&'static str, Fault)> {
    vec![
        ("Html500", Fault::Html500),
        ("NonJson200", Fault::NonJson200),
        ("WrongShape200", Fault::WrongShape200),
        ("NullsBody200", Fault::NullsBody200),
        ("CloseWithoutAnswer", Fault::CloseWithoutAnswer),
        ("Status(404 framework)", Fault::Status(404, r#"{"detail":"Not Found"}"#.into())),
    ]
}

fn cases(after: &Path) -> Vec<Case> {
    let calls = calls::every_branch(RUNTIME_ID);
    let mut cases = Vec::new();
    for (index, (tool, arguments)) in calls.iter().enumerate() {
        cases.push(Case {
            name: format!("success #{index} {tool} {arguments}"),
            tool: tool.to_string(),
            arguments: arguments.clone(),
            arrange: Arrange::Nothing,
        });
    }
    // One way to each error code (tests/it/readable.rs).
    let error = |code: &str, tool: &str, arguments: Value, arrange: Arrange| Case {
        name: format!("error {code} {tool} {arguments}"),
        tool: tool.into(),
        arguments,
        arrange,
    };
    let route = |method: &str, path: &str, fault: Fault| Arrange::Route(method.into(), path.into(), fault);
    cases.extend([
        error("not_found", "get_execution", json!({"exec_id": 99_999}), Arrange::Nothing),
        error(
            "invalid_argument",
            "search_corpus",
            json!({"query": "graph attention", "limit": 0}),
            Arrange::Nothing,
        ),
        error(
            "invalid_argument (declined)",
            "search_corpus",
            json!({"query": "q", "offset": 5}),
            Arrange::Nothing,
        ),
        error("conflict", "run_routine", json!({"routine_id": 9}), Arrange::Nothing),
        error("upstream_error", "list_routines", json!({}), route("GET", "/api/routines", Fault::Html500)),
        error(
            "internal_error",
            "list_routines",
            json!({}),
            route("GET", "/api/routines", Fault::HostRefused),
        ),
        error("instance_mismatch", "health", json!({"expected_runtime_id": OTHER_RUNTIME}), Arrange::Nothing),
        error(
            "identity_unavailable",
            "get_execution",
            json!({"exec_id": 119, "expected_runtime_id": RUNTIME_ID}),
            Arrange::Answer(
                "GET".into(),
                "/api/executions/119".into(),
                200,
                json!({"id": 119, "status": "completed", "identity": null}).to_string(),
            ),
        ),
        error("backend_unavailable (stopped)", "health", json!({}), Arrange::Stopped),
        error("backend_unavailable (no port named)", "health", json!({}), Arrange::Unnamed),
        error("no such tool", "no_such_tool", json!({}), Arrange::Nothing),
    ]);
    // Each call again with a fault on each route it sends to.
    let writes: Vec<&str> = fake_tools_that_write();
    for (index, (tool, arguments)) in calls.iter().enumerate() {
        let faults = if writes.contains(tool) { write_faults() } else { read_faults() };
        for (method, path) in routes_of(after, tool, arguments) {
            for (fault_name, fault) in &faults {
                cases.push(Case {
                    name: format!("fault {fault_name} on {method} {path}: #{index} {tool} {arguments}"),
                    tool: tool.to_string(),
                    arguments: arguments.clone(),
                    arrange: Arrange::Route(method.clone(), path.clone(), fault.clone()),
                });
            }
        }
    }
    cases
}

/// The write tools of contract 1.0 "Write" (the builds under comparison may
/// differ in their table, so the list is the contract's, not either build's).
fn fake_tools_that_write() -> Vec<&'static str> {
    vec![
        "run_sweep",
        "create_routine",
        "create_watch_profile",
        "run_routine",
        "activate_routine",
        "deactivate_routine",
        "update_settings",
    ]
}

fn usage(problem: &str) -> ! {
    eprintln!("compare: {problem}\n\n{USAGE}");
    std::process::exit(2);
}

fn main() {
    let (mut before, mut after, mut only, mut list) = (None, None, String::new(), false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--before" => {
                before = Some(PathBuf::from(args.next().unwrap_or_else(|| usage("--before needs a path"))))
            }
            "--after" => {
                after = Some(PathBuf::from(args.next().unwrap_or_else(|| usage("--after needs a path"))))
            }
            "--only" => only = args.next().unwrap_or_else(|| usage("--only needs a text")),
            "--list" => list = true,
            "-h" | "--help" => {
                print!("{USAGE}");
                return;
            }
            other => usage(&format!("unknown option {other}")),
        }
    }
    let (Some(before), Some(after)) = (before, after) else { usage("give both --before and --after") };
    let cases: Vec<Case> = cases(&after).into_iter().filter(|case| case.name.contains(&only)).collect();
    if list {
        for case in &cases {
            println!("{}", case.name);
        }
        return;
    }
    let mut differing = 0;
    for case in &cases {
        let (old, new) = (run(&before, case), run(&after, case));
        if old == new {
            continue;
        }
        differing += 1;
        println!("DIFFERS: {}", case.name);
        if old.exit != new.exit {
            println!("  exit: {:?} -> {:?}", old.exit, new.exit);
        }
        for (what, old, new) in [("stdout", &old.stdout, &new.stdout), ("stderr", &old.stderr, &new.stderr)] {
            if old != new {
                println!("  {what} before: {}", old.trim_end());
                println!("  {what} after:  {}", new.trim_end());
            }
        }
    }
    println!("{} cases, {differing} differ", cases.len());
    std::process::exit(if differing == 0 { 0 } else { 1 });
}
