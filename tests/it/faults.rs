//! Every tool against every fault the fake backend can produce, and recovery
//! after the backend restarts elsewhere (docs/fuzzing.md, "The fault matrix";
//! contract-notes 15 and 16).
//!
//! The matrix is one table-driven test: one row per (fault, tool), faults
//! applied after discovery succeeded (health is called first so the instance
//! is cached), plus rows that fault only a write tool's own request and rows
//! that fault discovery itself. Every row's failures are collected and the
//! test asserts once, naming fault, scope and tool for each.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::every_branch;
use crate::fake_backend::{FakeBackend, Fault};
use crate::harness::{
    Session, TEST_TIMEOUT_MS, TempDir, Witness, call_problems, clip, connected, dead_port, env_for,
    error_payload, start_fake_at, structured, tool_error,
};

/// The request each write tool's own call sends (its first call in
/// `every_branch`), for the rows that fault only that request.
const WRITE_ROUTES: [(&str, &str, &str); 7] = [
    ("run_sweep", "POST", "/api/search/sweep"),
    ("create_routine", "POST", "/api/routines"),
    ("create_watch_profile", "POST", "/api/profiles"),
    ("run_routine", "POST", "/api/routines/8/run"),
    ("activate_routine", "POST", "/api/routines/8/activate"),
    ("deactivate_routine", "POST", "/api/routines/8/deactivate"),
    ("update_settings", "PUT", "/api/settings/ai"),
];

/// Tools whose discovery is faulted (one read, one write).
const DISCOVERY_TOOLS: [&str; 2] = ["list_routines", "activate_routine"];

/// Strings from the fake's fault bodies (the HTML 500 and the non-JSON 200)
/// that must reach no output at all (contract-notes 5: an error names the
/// status and route, never the body).
const BODY_MARKERS: [&str; 3] = ["Traceback", "synthetic failure raised by the fake", "upstream said no"];

#[derive(Clone, Debug)]
enum Injected {
    /// The backend stopped after discovery: connects are refused.
    Refused,
    Fake(Fault),
}

fn all_faults() -> Vec<(&'static str, Injected)> {
    vec![
        ("Refused", Injected::Refused),
        ("Hang", Injected::Fake(Fault::Hang)),
        ("ResetMidBody", Injected::Fake(Fault::ResetMidBody)),
        ("LyingContentLength", Injected::Fake(Fault::LyingContentLength)),
        ("Html500", Injected::Fake(Fault::Html500)),
        ("NonJson200", Injected::Fake(Fault::NonJson200)),
        ("WrongShape200", Injected::Fake(Fault::WrongShape200)),
        ("NullsBody200", Injected::Fake(Fault::NullsBody200)),
        ("Redirect", Injected::Fake(Fault::Redirect)),
        ("Oversize", Injected::Fake(Fault::Oversize)),
        ("EchoToken", Injected::Fake(Fault::EchoToken)),
        ("Unauthorized", Injected::Fake(Fault::Unauthorized)),
        ("HostRefused", Injected::Fake(Fault::HostRefused)),
        ("CloseWithoutAnswer", Injected::Fake(Fault::CloseWithoutAnswer)),
    ]
}

/// Where a fault applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    /// Every request after discovery succeeded.
    AfterDiscovery,
    /// Only the write tool's own request (its reads before it are normal).
    WriteRequest,
    /// Only the discovery confirmation (GET /api/health), nothing cached.
    Discovery,
}

/// What a row must answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Error(&'static str),
    /// A success whose structuredContent validates against the outputSchema.
    Success,
}

/// The decision, fault by fault, of what each tool must answer.
fn expected(fault: &str, tool: &str, scope: Scope) -> Expect {
    use Expect::{Error, Success};
    if scope == Scope::Discovery {
        // contract-notes 3: anything but resmon's health answer leaves the
        // candidate unused, whatever went wrong with it. A planted token in
        // an otherwise correct health answer is still resmon's answer.
        return if fault == "EchoToken" { Success } else { Error("backend_unavailable") };
    }
    match fault {
        // Nothing answered, or the token was refused: the backend is not usable.
        "Refused" | "Hang" | "Unauthorized" | "CloseWithoutAnswer" => Error("backend_unavailable"),
        // update_settings never reads the PUT's body: a 2xx is acceptance,
        // and the read-back after it reports what resmon holds ("kept 0 of
        // 1"), so an odd, broken or oversized PUT body cannot mislead it
        // (contract-notes 26).
        "WrongShape200" | "NullsBody200" | "NonJson200" | "ResetMidBody" | "LyingContentLength"
        | "Oversize"
            if tool == "update_settings" && scope == Scope::WriteRequest =>
        {
            Success
        }
        // resmon answered, but not with something usable.
        "ResetMidBody" | "LyingContentLength" | "Html500" | "Redirect" | "Oversize" => {
            Error("upstream_error")
        }
        // The guard refused the Host this server sent, which names the port
        // it was given: that port is forwarded to resmon from another.
        "HostRefused" => Error("backend_unavailable"),
        // routine 8 was started by this job's after-discovery row, so the
        // second start is refused, which is the right answer.
        "EchoToken" if tool == "run_routine" && scope == Scope::WriteRequest => Error("conflict"),
        // A bibtex export is a text file; the fake's echo makes it JSON.
        "EchoToken" if tool == "export_references" => Error("upstream_error"),
        // The route's real answer with extra string fields: still a good answer.
        "EchoToken" => Success,
        "NonJson200" | "WrongShape200" => Error("upstream_error"),
        "NullsBody200" => match tool {
            // Pass-through answers whose schema has no required field: `{}`
            // is what resmon said, shown as it is.
            "explain_match" | "get_paper_lifecycle" | "get_analytics" => Success,
            _ => Error("upstream_error"),
        },
        _ => unreachable!("no expectation for {fault}"),
    }
}

/// A `detail` member a row's error must carry, beside its code.
fn expected_detail(fault: &str, scope: Scope) -> Option<(&'static str, &'static str)> {
    match (fault, scope) {
        ("Unauthorized", _) => Some(("reason", "token_invalid")),
        ("HostRefused", Scope::AfterDiscovery | Scope::WriteRequest) => Some(("reason", "host_refused")),
        _ => None,
    }
}

/// One tool call in a row, as seen from the client.
struct Observed {
    answer: Value,
    elapsed: Duration,
}

/// Per-job context for collecting failures.
struct Job<'a> {
    fault: &'static str,
    failures: &'a Mutex<Vec<String>>,
    summary: &'a Mutex<BTreeMap<String, BTreeMap<String, usize>>>,
    slowest: &'a Mutex<BTreeMap<&'static str, Duration>>,
}

impl Job<'_> {
    fn fail(&self, scope: Scope, tool: &str, why: impl std::fmt::Display) {
        self.failures.lock().unwrap().push(format!("[{} × {tool}, {scope:?}] {why}", self.fault));
    }

    fn tally(&self, scope: Scope, outcome: &str) {
        let key = format!("{} ({scope:?})", self.fault);
        *self.summary.lock().unwrap().entry(key).or_default().entry(outcome.to_string()).or_default() += 1;
    }

    fn time(&self, elapsed: Duration) {
        let mut slowest = self.slowest.lock().unwrap();
        let entry = slowest.entry(self.fault).or_default();
        *entry = (*entry).max(elapsed);
    }
}

/// The documented bound in tests: a hung request is abandoned after the
/// test timeout; a call may meet it once in discovery and once in its own
/// request. The slack absorbs a busy two-core machine.
fn bound() -> Duration {
    let timeout = Duration::from_millis(TEST_TIMEOUT_MS.parse().unwrap());
    timeout * 2 + Duration::from_secs(5)
}

fn first_call(tool: &str, runtime_id: &str) -> Value {
    every_branch(runtime_id).into_iter().find(|(name, _)| *name == tool).map(|(_, args)| args).unwrap()
}

fn tool_names() -> Vec<&'static str> {
    resmon_mcp::tools::TOOLS.iter().map(|tool| tool.name).collect()
}

fn call(session: &mut Session, tool: &str, arguments: &Value) -> Observed {
    let started = Instant::now();
    let answer = session.request("tools/call", json!({"name": tool, "arguments": arguments}));
    Observed { answer, elapsed: started.elapsed() }
}

/// Checks one row's answer against its expectation; returns the outcome label.
fn judge(job: &Job, scope: Scope, tool: &str, observed: &Observed, expect: Expect) -> String {
    job.time(observed.elapsed);
    if observed.elapsed > bound() {
        job.fail(scope, tool, format!("answered after {:?}, over the bound {:?}", observed.elapsed, bound()));
    }
    let answer = &observed.answer;
    for problem in call_problems(tool, answer) {
        job.fail(scope, tool, problem);
    }
    let result = &answer["result"];
    let label = match result["isError"].as_bool() {
        _ if answer.get("error").is_some() => "jsonrpc-error".to_string(),
        Some(true) => {
            let payload = error_payload(result).unwrap_or(Value::Null);
            let code = payload["error"].as_str().unwrap_or("?").to_string();
            if !matches!(expect, Expect::Error(want) if want == code) {
                job.fail(scope, tool, format!("expected {expect:?}, got the error {payload}"));
            }
            if let Some((key, value)) = expected_detail(job.fault, scope)
                && payload["detail"][key] != value
            {
                job.fail(scope, tool, format!("expected detail.{key} = {value:?}: {payload}"));
            }
            code
        }
        Some(false) => {
            if expect != Expect::Success {
                let text = result["content"][0]["text"].as_str().unwrap_or("");
                job.fail(scope, tool, format!("expected {expect:?}, got a success: {}", clip(text)));
            }
            "success".into()
        }
        None => "malformed".into(),
    };
    job.tally(scope, &label);
    label
}

/// After a faulted call: the session still answers, and a write tool's own
/// request reached resmon's routes at most once. A request the guard refused
/// with 401 did no work and is not counted: it may be resent once after a
/// rediscovery (contract-notes 18).
fn after_row(job: &Job, scope: Scope, tool: &str, session: &mut Session, fakes: &[&FakeBackend]) {
    let ping = session.request("ping", json!({}));
    if ping["result"] != json!({}) {
        job.fail(scope, tool, format!("the next request was not answered normally: {ping}"));
    }
    let mut sent: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut refused: BTreeMap<(String, String), usize> = BTreeMap::new();
    for fake in fakes {
        for request in fake.requests().into_iter().filter(|request| request.method != "GET") {
            let tally = if request.status == 401 { &mut refused } else { &mut sent };
            *tally.entry((request.method.clone(), request.path.clone())).or_default() += 1;
        }
    }
    for ((method, path), count) in refused {
        if count > 2 {
            job.fail(scope, tool, format!("{method} {path} was refused {count} times: more than one resend"));
        }
    }
    for ((method, path), count) in sent {
        if count > 1 {
            job.fail(scope, tool, format!("{method} {path} reached the backend {count} times"));
        }
    }
}

/// Ends the session and checks everything it wrote for the tokens and for
/// the fault bodies.
fn finish(job: &Job, session: Session, tokens: &[String]) {
    let transcript = session.transcript.join("\n");
    let (status, stderr) = session.finish();
    if !status.success() {
        job.fail(
            Scope::AfterDiscovery,
            "(session)",
            format!("exit status {status}; stderr: {}", clip(&stderr)),
        );
    }
    for (stream, text) in [("stdout", &transcript), ("stderr", &stderr)] {
        for token in tokens {
            if text.contains(token.as_str()) {
                job.fail(Scope::AfterDiscovery, "(session)", format!("the token appears on {stream}"));
            }
        }
        for marker in BODY_MARKERS {
            if text.contains(marker) {
                job.fail(
                    Scope::AfterDiscovery,
                    "(session)",
                    format!("{stream} repeats a fault body ({marker:?})"),
                );
            }
        }
        if text.contains("panicked") {
            job.fail(Scope::AfterDiscovery, "(session)", format!("{stream} reports a panic"));
        }
    }
}

/// Caches the instance: health must succeed before the fault is set.
fn warm(job: &Job, scope: Scope, tool: &str, session: &mut Session) -> bool {
    let health = session.request("tools/call", json!({"name": "health", "arguments": {}}));
    let ok = health["result"]["isError"] == json!(false) && call_problems("health", &health).is_empty();
    if !ok {
        job.fail(scope, tool, format!("setup: health did not succeed before the fault: {health}"));
    }
    ok
}

/// A fake fault: the discovery rows, then every listed tool after discovery,
/// then (when asked) the write-request rows.
fn run_fake_fault(job: &Job, fault: &Fault, tools: &[&'static str], discovery: bool, writes: bool) {
    let (fake, mut session) = connected();
    let runtime_id = fake.runtime_id();
    if discovery {
        for tool in DISCOVERY_TOOLS {
            let scope = Scope::Discovery;
            fake.clear_requests();
            fake.set_fault_for("GET", "/api/health", fault.clone());
            let observed = call(&mut session, tool, &first_call(tool, &runtime_id));
            fake.clear_faults();
            let label = judge(job, scope, tool, &observed, expected(job.fault, tool, scope));
            if label != "success" {
                let others: Vec<String> = fake
                    .requests()
                    .into_iter()
                    .filter(|request| request.path != "/api/health")
                    .map(|request| format!("{} {}", request.method, request.path))
                    .collect();
                if !others.is_empty() {
                    job.fail(scope, tool, format!("discovery failed, yet it sent {others:?}"));
                }
            }
            after_row(job, scope, tool, &mut session, &[&fake]);
        }
    }
    for &tool in tools {
        let scope = Scope::AfterDiscovery;
        if !warm(job, scope, tool, &mut session) {
            continue;
        }
        fake.clear_requests();
        fake.set_fault(fault.clone());
        let observed = call(&mut session, tool, &first_call(tool, &runtime_id));
        fake.clear_faults();
        judge(job, scope, tool, &observed, expected(job.fault, tool, scope));
        after_row(job, scope, tool, &mut session, &[&fake]);
    }
    if writes {
        for (tool, method, path) in WRITE_ROUTES {
            let scope = Scope::WriteRequest;
            if !warm(job, scope, tool, &mut session) {
                continue;
            }
            fake.clear_requests();
            fake.set_fault_for(method, path, fault.clone());
            let observed = call(&mut session, tool, &first_call(tool, &runtime_id));
            fake.clear_faults();
            judge(job, scope, tool, &observed, expected(job.fault, tool, scope));
            if fake.requests_to(method, path).is_empty() {
                job.fail(scope, tool, format!("{method} {path} was never sent, so its fault was not met"));
            }
            after_row(job, scope, tool, &mut session, &[&fake]);
        }
    }
    // The session is healthy once the fault is gone.
    fake.clear_faults();
    let health = session.request("tools/call", json!({"name": "health", "arguments": {}}));
    if health["result"]["isError"] != json!(false) || !call_problems("health", &health).is_empty() {
        job.fail(
            Scope::AfterDiscovery,
            "health",
            format!("no recovery once the fault was cleared: {health}"),
        );
    }
    if matches!(fault, Fault::Redirect) && fake.redirect_target_hits() > 0 {
        job.fail(Scope::AfterDiscovery, "(session)", "a redirect was followed to the port it named");
    }
    finish(job, session, &[fake.token()]);
}

/// Connection refused after discovery: for each tool, a fresh fake in the
/// same state directory is discovered, then stopped before the call.
fn run_refused(job: &Job, tools: &[&'static str]) {
    let dir = TempDir::new();
    let first = start_fake_at(dir.path());
    let env = env_for(&first);
    first.stop();
    let mut session = Session::initialized(&env);
    let mut tokens = vec![first.token()];
    for &tool in tools {
        let scope = Scope::AfterDiscovery;
        let fake = start_fake_at(dir.path());
        tokens.push(fake.token());
        if !warm(job, scope, tool, &mut session) {
            continue;
        }
        fake.stop();
        let observed = call(&mut session, tool, &first_call(tool, &fake.runtime_id()));
        if judge(job, scope, tool, &observed, expected("Refused", tool, scope)) == "backend_unavailable" {
            let payload = error_payload(&observed.answer["result"]).unwrap_or(Value::Null);
            if payload["tried"] != json!([fake.base_url()]) {
                job.fail(scope, tool, format!("`tried` should name the stopped instance only: {payload}"));
            }
        }
        after_row(job, scope, tool, &mut session, &[&fake]);
    }
    finish(job, session, &tokens);
    // Discovery refused: a named port with a token file and nothing listening.
    let dir = TempDir::new();
    let port = dead_port();
    std::fs::write(dir.path().join(format!("api-token-{port}")), "q".repeat(43)).unwrap();
    let env = vec![
        ("RESMON_PORT".to_string(), port.to_string()),
        ("RESMON_STATE_DIR".to_string(), dir.path().display().to_string()),
    ];
    let mut session = Session::initialized(&env);
    for tool in DISCOVERY_TOOLS {
        let scope = Scope::Discovery;
        let observed = call(&mut session, tool, &first_call(tool, &"0".repeat(36)));
        if judge(job, scope, tool, &observed, expected("Refused", tool, scope)) == "backend_unavailable" {
            let payload = error_payload(&observed.answer["result"]).unwrap_or(Value::Null);
            if payload["tried"] != json!([format!("http://127.0.0.1:{port}")]) {
                job.fail(scope, tool, format!("`tried` should name the dead port only: {payload}"));
            }
        }
        after_row(job, scope, tool, &mut session, &[]);
    }
    finish(job, session, &["q".repeat(43)]);
}

#[test]
fn every_tool_meets_every_backend_fault_with_a_structured_answer() {
    let failures = Mutex::new(Vec::new());
    let summary = Mutex::new(BTreeMap::new());
    let slowest = Mutex::new(BTreeMap::new());
    let tools = tool_names();
    assert_eq!(tools.len(), 25);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (name, injected) in all_faults() {
            let job = Job { fault: name, failures: &failures, summary: &summary, slowest: &slowest };
            let tools = &tools;
            match injected {
                Injected::Refused => {
                    scope.spawn(move || run_refused(&job, tools));
                }
                // A hung request costs the whole timeout: split its rows over
                // several sessions so they wait side by side.
                Injected::Fake(Fault::Hang) => {
                    let chunks: Vec<&[&'static str]> = tools.chunks(7).collect();
                    for (index, chunk) in chunks.into_iter().enumerate() {
                        let job =
                            Job { fault: name, failures: &failures, summary: &summary, slowest: &slowest };
                        scope.spawn(move || run_fake_fault(&job, &Fault::Hang, chunk, index == 0, false));
                    }
                    scope.spawn(move || run_fake_fault(&job, &Fault::Hang, &[], false, true));
                }
                Injected::Fake(fault) => {
                    scope.spawn(move || run_fake_fault(&job, &fault, tools, true, true));
                }
            }
        }
    });
    let elapsed = started.elapsed();
    let summary = summary.into_inner().unwrap();
    let slowest = slowest.into_inner().unwrap();
    let mut report = format!("fault matrix: {elapsed:?}\n");
    for (fault, outcomes) in &summary {
        report.push_str(&format!("  {fault}: {outcomes:?}\n"));
    }
    for (fault, time) in &slowest {
        report.push_str(&format!("  slowest answer under {fault}: {time:?}\n"));
    }
    eprintln!("{report}");
    let rows: usize = summary.values().flat_map(BTreeMap::values).sum();
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} failing rows:\n{}\n\n{report}", failures.len(), failures.join("\n"));
    // 14 faults × 25 tools, 13 faults × 7 write requests, 14 × 2 discovery rows.
    assert_eq!(rows, 14 * 25 + 13 * 7 + 14 * 2, "{report}");
}

#[test]
fn a_backend_restarted_on_a_new_port_is_found_again_without_restarting_the_server() {
    let witness = Witness::start();
    let dir = TempDir::new();
    let first = start_fake_at(dir.path());
    let mut session = Session::initialized(&env_for(&first));
    let health = session.call("health", json!({}));
    assert_eq!(health["structuredContent"]["identity"]["runtime_id"], first.runtime_id());

    // resmon restarts: the old process is gone, a new one on another port
    // writes a new port file and a new token file into the same directory.
    first.stop();
    let second = start_fake_at(dir.path());
    assert_ne!(second.port(), first.port());
    assert_ne!(second.token(), first.token());

    // Nothing listens where the cached instance was: the port file, read
    // again, names the new instance, and the call goes there once
    // (contract-notes 18), never to a port nobody named.
    let listed = session.call("list_routines", json!({}));
    assert_eq!(listed["isError"], false, "{listed}");
    assert_eq!(second.requests_to("GET", "/api/routines").len(), 1);

    // Later calls keep to the new instance.
    let found = session.call("health", json!({}));
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(found["structuredContent"]["identity"]["runtime_id"], second.runtime_id());
    let listed = session.call("list_routines", json!({}));
    assert_eq!(listed["isError"], false, "{listed}");
    for request in second.requests() {
        assert_eq!(request.header("host"), Some(format!("127.0.0.1:{}", second.port()).as_str()));
        assert_eq!(request.header("authorization"), Some(format!("Bearer {}", second.token()).as_str()));
    }
    assert_eq!(witness.hits(), 0, "a port nobody named was reached");
    assert_eq!(second.redirect_target_hits() + first.redirect_target_hits(), 0);

    let transcript = session.transcript.join("\n");
    let (status, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    for token in [first.token(), second.token()] {
        assert!(!transcript.contains(&token) && !stderr.contains(&token), "a token leaked");
    }
}

/// Past the 16 MiB limit, "ask for a smaller page" only where the request
/// asked for a page; elsewhere the answer says the call cannot get under it.
#[test]
fn the_size_refusal_advises_a_smaller_page_only_on_a_paged_route() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    let cases = [
        (
            "search_corpus",
            json!({"query": "graph attention", "limit": 5}),
            "POST",
            "/api/explorer/search",
            true,
        ),
        ("find_similar", json!({"doc_id": 801, "limit": 5}), "GET", "/api/documents/801/similar", true),
        ("get_routine", json!({"routine_id": 7}), "GET", "/api/routines/7", false),
        ("list_routines", json!({}), "GET", "/api/routines", false),
        // A page whose size this server chose (the tool pages its answer
        // itself) is not the caller's to make smaller.
        ("list_executions", json!({"status": "completed", "limit": 1}), "GET", "/api/executions", false),
    ];
    for (tool, arguments, method, path, paged) in cases {
        fake.clear_faults();
        fake.set_fault_for(method, path, Fault::Oversize);
        let error = tool_error(&session.call(tool, arguments));
        assert_eq!(error["error"], "upstream_error", "{tool}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("larger than this server accepts (16 MiB)"), "{tool}: {message}");
        assert_eq!(message.contains("Ask for a smaller page."), paged, "{tool}: {message}");
        if !paged {
            assert!(message.contains("repeating the call will meet the same limit"), "{tool}: {message}");
        }
    }
}

/// A profile's totals come from a one-row page this server asks for: a
/// refusal of its size gives no page advice, since the caller chose none.
#[test]
fn a_size_refusal_of_a_page_this_server_chose_gives_no_page_advice() {
    let (fake, mut session) = connected();
    fake.set_fault_for("GET", "/api/profiles/5/matches", Fault::Oversize);
    let answer = structured(&session.call("get_watch_profile", json!({"profile_id": 5}))).clone();
    let why = answer["totals_unavailable"].as_str().unwrap_or_default();
    assert!(why.contains("larger than this server accepts"), "{answer}");
    assert!(!why.contains("smaller page"), "{answer}");
    let sent = fake.requests_to("GET", "/api/profiles/5/matches");
    assert!(sent.iter().all(|r| r.query_pairs.iter().any(|(k, v)| k == "limit" && v == "1")), "{sent:?}");
}

/// Health refused with a 401 by something never confirmed as resmon: said
/// of what is on the port, not of resmon.
#[test]
fn a_401_from_a_listener_never_confirmed_is_not_called_resmon() {
    let (fake, mut session) = connected();
    fake.override_response("GET", "/api/health", 401, &[("Content-Type", "text/plain")], "Unauthorized");
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("Something on port {} (", fake.port())),
        "nothing has answered as resmon: {message}"
    );
    assert!(message.contains("refused this server's local API token"), "{message}");
    assert!(!message.contains("resmon on port") && !message.contains("resmon at"), "{message}");
    assert!(fake.requests_to("GET", "/api/routines").is_empty(), "nothing past health");
}

/// A health answer whose head is larger than this server reads: said as
/// what it is, of what is on the port, never as "not running".
#[test]
fn a_health_head_too_large_is_said_as_seen() {
    let (fake, mut session) = connected();
    fake.set_fault_for("GET", "/api/health", Fault::BigHead(9000));
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with(&format!("Something on port {} (", fake.port())), "{message}");
    assert!(
        message.contains(
            "answered GET /api/health with status 200, but its headers are larger than this server \
             reads (8 KiB)"
        ),
        "{message}"
    );
    assert!(!message.contains("not running") && !message.contains("resmon at"), "{message}");
    assert_eq!(error["tried"], json!([fake.base_url()]), "{error}");
    let (_, stderr) = session.finish();
    assert!(stderr.contains("GET /api/health answered 200, then failed after its status line"), "{stderr}");
}

/// A read whose 200 status line arrived and whose body stalled, trickled,
/// or was reset: said as answered, with what did not arrive.
#[test]
fn a_read_whose_body_fails_after_its_status_line_says_it_was_answered() {
    let fake = crate::harness::start_fake();
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), "600".into()));
    let mut session = Session::initialized(&env);
    structured(&session.call("health", json!({})));
    let mut cases = vec![
        (
            "StallAfter",
            Fault::StallAfter(3),
            "backend_unavailable",
            "the rest of its answer did not arrive before this call's 0.6 s deadline",
        ),
        (
            "TrickleBody",
            Fault::TrickleBody,
            "backend_unavailable",
            "the rest of its answer did not arrive before this call's 0.6 s deadline",
        ),
        (
            "BreakOff",
            Fault::BreakOff(3),
            "upstream_error",
            "the connection closed before the whole answer arrived.",
        ),
    ];
    if cfg!(target_os = "linux") {
        cases.push((
            "ResetAfter",
            Fault::ResetAfter(3),
            "backend_unavailable",
            "the connection was reset before the whole answer arrived.",
        ));
    }
    for (name, fault, code, what) in cases {
        fake.clear_faults();
        fake.set_fault_for("GET", "/api/routines", fault);
        let error = tool_error(&session.call("list_routines", json!({})));
        assert_eq!(error["error"], code, "{name}: {error}");
        let message = error["message"].as_str().unwrap();
        let opening =
            format!("resmon at {} answered GET /api/routines with status 200, but {what}", fake.base_url());
        assert!(message.starts_with(&opening), "{name}: {message}");
        assert!(!message.contains("did not answer"), "{name}: it answered 200: {message}");
        assert_eq!(error["detail"]["status"], json!(200), "{name}: {error}");
    }
    let (_, stderr) = session.finish();
    assert!(stderr.contains("GET /api/routines answered 200, then failed after its status line"), "{stderr}");
    assert!(!stderr.contains("GET /api/routines failed before"), "{stderr}");
}

/// A redirect on a read names the status and the path it pointed to (never
/// the other address), keeps resmon's sentence, and is not followed.
#[test]
fn a_redirect_on_a_read_says_what_came_back_and_is_not_followed() {
    let (fake, mut session) = connected();
    fake.set_fault_for(
        "GET",
        "/api/routines/{id}",
        Fault::RedirectTo(307, "/api/v2/routines/7".into(), r#"{"detail": "moved"}"#.into()),
    );
    let error = tool_error(&session.call("get_routine", json!({"routine_id": 7})));
    assert_eq!(error["error"], "upstream_error", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "resmon answered GET /api/routines/7 with a redirect (307 to /api/v2/routines/7) (resmon said: moved). \
             This server does not follow redirects"
        ),
        "{message}"
    );
    assert!(!message.contains("127.0.0.1") && !message.contains("carried"), "{message}");
    assert!(error["detail"].get("outcome_unknown").is_none(), "a read changes nothing: {error}");
    assert_eq!(fake.redirect_target_hits(), 0, "the redirect was followed");
}

/// An empty 2xx body is said as empty, and a body in a Content-Encoding this
/// server does not read is named, rather than either being "not JSON".
#[test]
fn an_empty_or_encoded_body_is_said_as_what_it_is() {
    let (fake, mut session) = connected();
    fake.override_response("GET", "/api/routines/7", 200, &[], "");
    let error = tool_error(&session.call("get_routine", json!({"routine_id": 7})));
    assert_eq!(error["error"], "upstream_error", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("with an empty body (status 200) where JSON was expected"), "{message}");
    assert!(!message.contains("not JSON"), "{message}");

    fake.override_response(
        "GET",
        "/api/routines/7",
        200,
        &[("Content-Encoding", "gzip")],
        "\u{1f}\u{8b}\u{8}\u{0}compressed",
    );
    let error = tool_error(&session.call("get_routine", json!({"routine_id": 7})));
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("with a body in the `gzip` content encoding, which this server does not read"),
        "{message}"
    );
    assert_eq!(error["detail"]["content_encoding"], json!("gzip"), "{error}");
    // Nothing asked for an encoding, so a gzip answer was resmon's choice.
    let sent = fake.requests_to("GET", "/api/routines/7");
    assert!(sent.iter().all(|r| r.header("accept-encoding").is_none()), "{sent:?}");
}

// ------------------------------------------------------------------ a kept connection closed

/// resmon may close an idle keep-alive connection just as the next request
/// goes out on it. A GET that meets that (closed before any byte of an
/// answer) is sent once more on a new connection, within the call; a POST
/// or PUT never is, read or write, since nothing shows it did not arrive.
#[test]
fn a_get_on_a_kept_connection_closed_under_it_is_sent_once_more_on_a_new_one() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    // A plain read on the connection health left open.
    fake.set_fault_for("GET", "/api/routines", Fault::CloseIfReused);
    let routines = structured(&session.call("list_routines", json!({}))).clone();
    assert!(routines["routines"].is_array(), "{routines}");
    let sent = fake.requests_to("GET", "/api/routines");
    assert_eq!(sent.len(), 2, "closed once, answered on a new connection");
    assert_eq!((sent[0].status, sent[1].status), (0, 200));

    // A create's read-back on the connection its POST used: the routine
    // reads back instead of "created, could not read back".
    fake.clear_faults();
    fake.set_fault_for("GET", "/api/routines/{id}", Fault::CloseIfReused);
    let created = structured(&session.call(
        "create_routine",
        json!({"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"}),
    ))
    .clone();
    assert_eq!(created["routine"]["is_active"], json!(false), "{created}");
    assert_eq!(fake.requests_to("POST", "/api/routines").len(), 1);

    // Closed again on the new connection too: one resend only, then the error.
    fake.clear_faults();
    fake.clear_requests();
    fake.set_fault_for("GET", "/api/routines", Fault::CloseWithoutAnswer);
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert!(fake.requests_to("GET", "/api/routines").len() <= 2, "at most one resend");

    // A POST, even a read's, is never sent again.
    for (tool, arguments, path) in [
        ("search_corpus", json!({"query": "graph"}), "/api/explorer/search"),
        ("run_sweep", json!({"query": "graph", "sources": ["arxiv"]}), "/api/search/sweep"),
    ] {
        fake.clear_faults();
        structured(&session.call("health", json!({})));
        fake.clear_requests();
        fake.set_fault_for("POST", path, Fault::CloseIfReused);
        let error = tool_error(&session.call(tool, arguments));
        assert_eq!(fake.requests_to("POST", path).len(), 1, "{tool}: {error}");
        // Said as the kept connection it was, not as one accepted for it.
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(&format!("closed the kept connection POST {path} went out on")), "{text}");
        assert!(!text.contains("accepted the connection for"), "{text}");
    }
}

// ------------------------------------------------------------------ resmon restarted on another port

/// resmon restarted and its port file now names another port: a call that
/// finds nothing on the port it cached reads the port file again and goes
/// there once, a write included (nothing went to the old port), instead of
/// saying resmon is not running while it is.
#[test]
fn a_resmon_restarted_on_another_port_is_found_again_through_its_port_file() {
    let dir = TempDir::new();
    let first = start_fake_at(dir.path());
    let mut session = Session::initialized(&env_for(&first));
    structured(&session.call("health", json!({})));
    let old_port = first.port();
    first.stop();
    let second = start_fake_at(dir.path());
    assert_ne!(second.port(), old_port);
    let routines = structured(&session.call("list_routines", json!({}))).clone();
    assert!(routines["routines"].is_array(), "{routines}");
    assert_eq!(second.requests_to("GET", "/api/routines").len(), 1);

    let old_port = second.port();
    second.stop();
    let third = start_fake_at(dir.path());
    assert_ne!(third.port(), old_port);
    structured(&session.call("activate_routine", json!({"routine_id": 8})));
    assert_eq!(
        third.requests_to("POST", "/api/routines/8/activate").len(),
        1,
        "sent once, to the new resmon"
    );

    // Stopped for good: the port file is gone, and the answer says so.
    third.stop();
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert!(error["message"].as_str().unwrap().contains("not running"), "{error}");
}

/// When the port file, read again, names a port without its token file, the
/// answer says that, what was seen last, rather than that resmon is not
/// running.
#[test]
fn a_port_file_read_again_that_leads_to_a_port_without_its_token_says_so() {
    let dir = TempDir::new();
    let first = start_fake_at(dir.path());
    let mut session = Session::initialized(&env_for(&first));
    structured(&session.call("health", json!({})));
    first.stop();
    let second = start_fake_at(dir.path());
    std::fs::remove_file(second.token_file()).unwrap();
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    let text = error["message"].as_str().unwrap();
    assert!(text.contains(&format!("no token file for port {}", second.port())), "{text}");
    assert!(!text.contains("not running on the port this server was given"), "{text}");
    assert_eq!(error["detail"]["first_tried"], json!(first.base_url()), "{error}");
    assert!(second.requests().is_empty(), "nothing went to a port without its token");
}
