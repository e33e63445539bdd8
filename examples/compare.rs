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
//! write faults on a write's routes and its read-backs, the read faults on
//! each route of a read. Between them the two lists reach every way an
//! exchange can end in the server (docs/contract-notes.md 4, 5, 16, 17, 18
//! and 26): broken, reset and closed connections with and without a status
//! line, heads and bodies that stall, trickle or are too large, an interim
//! 100 before an answer or before silence, no answer before the deadline,
//! redirects, the guard's 401 (once, when resmon restarted, and every time)
//! and 403, 400 and 422 refusals, and answers of the wrong shape or with the
//! token planted in them. The cases that wait for the deadline run with a
//! shorter per-call bound, so that the comparison stays within minutes.
//!
//! Each case runs each build against a fresh fake in the same state, and
//! compares the exit code, stdout and stderr, with what differs between two
//! starts of the fake (its port, folder, runtime id, token, the time)
//! replaced by placeholders. A case whose output holds the fake's token
//! counts as differing even when both builds printed it: no credential may
//! reach output (docs/contract-notes.md 5). Prints each difference; exits 1
//! when there is one, 0 when every case printed the same.

// The calls and the writes, without the invalid calls the clients make.
#[path = "../tests/it/calls.rs"]
#[allow(dead_code)]
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
const BOUND_MS: u64 = 1500;

/// The bound of the cases whose fault holds the answer back until the
/// deadline (a hang, a stall, a trickle): each of them costs this much per
/// build. A write is sent only with a quarter of the bound left
/// (src/backend/exchange.rs, `check_deadline`), so what comes before the
/// faulted request (the health request, a settings read) has 375 ms, far
/// more than a local answer takes even on a busy machine.
const HANG_BOUND_MS: u64 = 500;

/// What a case does to the fake before the call.
#[derive(Clone)]
enum Arrange {
    Nothing,
    /// This fault on this method and exact path.
    Route(String, String, Fault),
    /// The fake restarts (a new token and runtime id) just before the next
    /// request to this method and path arrives: that request meets one
    /// `401 token_invalid`, and a resend after rediscovery goes through.
    RestartBefore(String, String),
    /// A canned answer for this method and path.
    Answer(String, String, u16, String),
    /// No resmon: a port file naming a closed port, and a token.
    Stopped,
    /// The port file RESMON_PORT_FILE names is missing, folder and all.
    FileGone,
    /// Nothing named at all, in a home whose default folder holds no port file.
    Unnamed,
}

#[derive(Clone)]
struct Case {
    name: String,
    tool: String,
    /// With `@RUNTIME_ID@` where the fake's runtime id goes.
    arguments: Value,
    arrange: Arrange,
    /// RESMON_MCP_TIMEOUT_MS for both builds.
    bound_ms: u64,
}

/// What a faulted case does to one route.
#[derive(Clone)]
enum Meet {
    Fault(Fault),
    /// See [`Arrange::RestartBefore`].
    Restart,
}

/// What one build printed for one case.
#[derive(PartialEq, Eq)]
struct Printed {
    exit: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Printed {
    fn holds(&self, text: &str) -> bool {
        self.stdout.contains(text) || self.stderr.contains(text)
    }
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

/// What differs between two starts of the fake, each with its placeholder.
struct Varying {
    /// The runtime ids and tokens the fake had before and after the call
    /// (they differ when it restarted during it).
    runtime_ids: [String; 2],
    tokens: [String; 2],
    port: u16,
}

impl Varying {
    fn of(fake: &FakeBackend, runtime_id: String, token: String) -> Varying {
        Varying {
            runtime_ids: [runtime_id, fake.runtime_id()],
            tokens: [token, fake.token()],
            port: fake.port(),
        }
    }
}

/// Stands where the fake's token was found in an output.
const TOKEN_SEEN: &str = "<TOKEN>";

/// Replaces what differs between two starts of the fake with placeholders.
fn normalise(text: &str, varying: Option<&Varying>, dir: &Path) -> String {
    let mut text = text.replace(&dir.display().to_string(), "<DIR>");
    if let Some(varying) = varying {
        for token in &varying.tokens {
            text = text.replace(token.as_str(), TOKEN_SEEN);
        }
        let [first, second] = &varying.runtime_ids;
        text = text.replace(first.as_str(), "<RUNTIME_ID>").replace(second.as_str(), "<RUNTIME_ID_2>");
        text = text.replace(&varying.port.to_string(), "<PORT>");
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
    let mut env: Vec<(String, String)> = vec![("RESMON_MCP_TIMEOUT_MS".into(), case.bound_ms.to_string())];
    let mut runtime_id = OTHER_RUNTIME.to_string();
    let mut token = String::new();
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
        Arrange::FileGone => {
            env.push(("RESMON_PORT_FILE".into(), dir.join("elsewhere/resmon.port").display().to_string()));
        }
        // This machine's own default folder is never read: the home is the case's folder.
        Arrange::Unnamed => {
            env.push(("HOME".into(), dir.display().to_string()));
        }
        other => {
            let backend = FakeBackend::start(&dir);
            match other {
                Arrange::Route(method, path, fault) => backend.set_fault_for(method, path, fault.clone()),
                Arrange::RestartBefore(method, path) => backend.restart_before(method, path),
                Arrange::Answer(method, path, status, body) => {
                    backend.override_response(method, path, *status, &[], body)
                }
                _ => {}
            }
            env.push(("RESMON_PORT_FILE".into(), backend.port_file().display().to_string()));
            env.push(("RESMON_STATE_DIR".into(), backend.state_dir().display().to_string()));
            runtime_id = backend.runtime_id();
            token = backend.token();
            fake = Some(backend);
        }
    }
    let arguments = with_runtime_id(&case.arguments, &runtime_id);
    let output = Command::new(server)
        .args(["call", &case.tool, &arguments.to_string()])
        .env_remove("RESMON_PORT")
        .env_remove("RESMON_PORT_FILE")
        .env_remove("RESMON_STATE_DIR")
        .env_remove("RESMON_DB_PATH")
        .env_remove("XDG_STATE_HOME")
        .env_remove("RESMON_MCP_READ_ONLY")
        .envs(env)
        .output()
        .expect("start the server");
    let varying = fake.as_ref().map(|fake| Varying::of(fake, runtime_id, token));
    let printed = Printed {
        exit: output.status.code(),
        stdout: normalise(&String::from_utf8_lossy(&output.stdout), varying.as_ref(), &dir),
        stderr: normalise(&String::from_utf8_lossy(&output.stderr), varying.as_ref(), &dir),
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
        .env("RESMON_MCP_TIMEOUT_MS", BOUND_MS.to_string())
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

/// An interim status line, as resmon's server may send one before its answer.
const CONTINUE: &str = "HTTP/1.1 100 Continue\r\n\r\n";

/// One fault of a list: its name, what it does, and the bound its cases run with.
type Faulted = (&'static str, Meet, u64);

fn fault(name: &'static str, fault: Fault) -> Faulted {
    (name, Meet::Fault(fault), BOUND_MS)
}

/// A fault that holds the answer back until the call's deadline.
fn held(name: &'static str, fault: Fault) -> Faulted {
    (name, Meet::Fault(fault), HANG_BOUND_MS)
}

fn preceded(then: Fault) -> Fault {
    Fault::Preceded(CONTINUE.into(), Box::new(then))
}

/// The faults both lists share: those a read and a write meet alike,
/// though what the server makes of them differs (a write whose outcome
/// nothing shows is `outcome_unknown`, docs/contract-notes.md 26).
fn shared_faults() -> Vec<Faulted> {
    vec![
        fault("CloseWithoutAnswer", Fault::CloseWithoutAnswer),
        fault("ResetWithoutAnswer", Fault::ResetWithoutAnswer),
        fault("BreakOff(8)", Fault::BreakOff(8)),
        fault("ResetAfter(8)", Fault::ResetAfter(8)),
        fault("InvalidHeader", Fault::InvalidHeader),
        fault("BigHead(20000)", Fault::BigHead(20_000)),
        fault("Oversize", Fault::Oversize),
        fault("Html500", Fault::Html500),
        // The work done (a write stored), then a 5xx: resmon's own plain
        // text, a gateway's, and resmon's own error with a sentence.
        fault(
            "StoredThen(500 text)",
            Fault::StoredThen(500, "text/plain".into(), "Internal Server Error".into()),
        ),
        fault("StoredThen(503 text)", Fault::StoredThen(503, "text/plain".into(), String::new())),
        fault(
            "StoredThen(500 json)",
            Fault::StoredThen(500, "application/json".into(), r#"{"detail":"database is locked"}"#.into()),
        ),
        // A kept connection closed under the request (docs/contract-notes.md 18).
        fault("CloseIfReused", Fault::CloseIfReused),
        fault("NonJson200", Fault::NonJson200),
        fault("WrongShape200", Fault::WrongShape200),
        fault("NullsBody200", Fault::NullsBody200),
        fault("EchoToken", Fault::EchoToken),
        fault("Preceded(100)", preceded(Fault::None)),
        fault("Redirect(302)", Fault::Redirect),
        // The guard's 401 on every request to the route: the one resend
        // after rediscovery meets it again (docs/contract-notes.md 18).
        fault("Unauthorized", Fault::Unauthorized),
        // One 401: resmon restarted just before the request.
        ("RestartBefore (401 once)", Meet::Restart, BOUND_MS),
        fault("HostRefused (403)", Fault::HostRefused),
        fault(
            "Status(400 framework)",
            Fault::Status(400, r#"{"detail":"There was an error parsing the body"}"#.into()),
        ),
        held("Hang", Fault::Hang),
        held("TrickleHead", Fault::TrickleHead),
        held("TrickleBody", Fault::TrickleBody),
        held("Preceded(100, Hang)", preceded(Fault::Hang)),
    ]
}

/// The faults a write meets on its own route and its read-backs.
fn write_faults() -> Vec<Faulted> {
    let mut faults = shared_faults();
    faults.extend([
        held("StallAfter(8)", Fault::StallAfter(8)),
        held("StallInHead", Fault::StallInHead),
        // A final 2xx head after the interim one is acceptance, though it stalls.
        held("Preceded(100, StallInHead)", preceded(Fault::StallInHead)),
        fault("RedirectTo(303)", Fault::RedirectTo(303, "/api/routines/9".into(), String::new())),
        fault("RedirectTo(307)", Fault::RedirectTo(307, "/elsewhere".into(), r#"{"detail":"moved"}"#.into())),
        fault("Status(409)", Fault::Status(409, r#"{"detail":"Already running"}"#.into())),
        fault("Status(422)", Fault::Status(422, r#"{"detail":"Value not accepted"}"#.into())),
        // A validation list naming a field a create's caller supplies.
        fault(
            "Status(422 loc name)",
            Fault::Status(
                422,
                r#"{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}}]}"#
                    .into(),
            ),
        ),
        fault("RenameKey(id)", Fault::RenameKey("id".into(), "ident".into())),
        fault("RepeatKey(id)", Fault::RepeatKey("id".into(), json!(424242))),
        // Answered with a fifth of the bound left: a write's read-back still
        // goes, a settings PUT after a slow read does not (a write needs a
        // quarter of the bound).
        ("Slow(1200)", Meet::Fault(Fault::Slow(1200)), BOUND_MS),
    ]);
    faults
}

/// The faults a read meets on each of its routes.
fn read_faults() -> Vec<Faulted> {
    let mut faults = shared_faults();
    faults.extend([
        fault("Status(404 framework)", Fault::Status(404, r#"{"detail":"Not Found"}"#.into())),
        fault("RedirectTo(301)", Fault::RedirectTo(301, "/api/v2/elsewhere".into(), r#"{"detail":"moved"}"#.into())),
        // A validation list naming the page size, which the caller chose on
        // some calls and this server on others (docs/contract-notes.md 17).
        fault(
            "Status(422 loc limit)",
            Fault::Status(
                422,
                r#"{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"too big","input":"900"}]}"#
                    .into(),
            ),
        ),
        fault("DropKey(id)", Fault::DropKey("id".into())),
        fault("NullKey(id)", Fault::NullKey("id".into())),
    ]);
    faults
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
            bound_ms: BOUND_MS,
        });
    }
    // One way to each error code (tests/it/readable.rs).
    let error = |code: &str, tool: &str, arguments: Value, arrange: Arrange| Case {
        name: format!("error {code} {tool} {arguments}"),
        tool: tool.into(),
        arguments,
        arrange,
        bound_ms: BOUND_MS,
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
        error("backend_unavailable (named port file gone)", "health", json!({}), Arrange::FileGone),
        error("backend_unavailable (no port named)", "health", json!({}), Arrange::Unnamed),
        error("no such tool", "no_such_tool", json!({}), Arrange::Nothing),
    ]);
    // Each call again with a fault on each route it sends to.
    let writes = calls::WRITE_TOOLS;
    for (index, (tool, arguments)) in calls.iter().enumerate() {
        let faults = if writes.contains(tool) { write_faults() } else { read_faults() };
        for (method, path) in routes_of(after, tool, arguments) {
            for (fault_name, meet, bound_ms) in &faults {
                let arrange = match meet {
                    Meet::Fault(fault) => Arrange::Route(method.clone(), path.clone(), fault.clone()),
                    Meet::Restart => Arrange::RestartBefore(method.clone(), path.clone()),
                };
                cases.push(Case {
                    name: format!("fault {fault_name} on {method} {path}: #{index} {tool} {arguments}"),
                    tool: tool.to_string(),
                    arguments: arguments.clone(),
                    arrange,
                    bound_ms: *bound_ms,
                });
            }
        }
    }
    cases
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
        // The two builds run side by side: most of a case's time is a wait
        // for the deadline, and both face the same load.
        let (old, new) = std::thread::scope(|scope| {
            let old = scope.spawn(|| run(&before, case));
            let new = run(&after, case);
            (old.join().expect("the run of the build before"), new)
        });
        let leaks = [&old, &new].iter().any(|printed| printed.holds(TOKEN_SEEN));
        if old == new && !leaks {
            continue;
        }
        differing += 1;
        println!("DIFFERS: {}", case.name);
        if leaks {
            println!("  the fake's token reached the output (shown as {TOKEN_SEEN})");
        }
        if old.exit != new.exit {
            println!("  exit: {:?} -> {:?}", old.exit, new.exit);
        }
        for (what, old, new) in [("stdout", &old.stdout, &new.stdout), ("stderr", &old.stderr, &new.stderr)] {
            if old != new || old.contains(TOKEN_SEEN) {
                println!("  {what} before: {}", old.trim_end());
                println!("  {what} after:  {}", new.trim_end());
            }
        }
    }
    println!("{} cases, {differing} differ", cases.len());
    std::process::exit(if differing == 0 { 0 } else { 1 });
}
