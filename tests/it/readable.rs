//! What harnesses need from the server beyond the protocol (docs/setup.md,
//! "What the model reads"):
//! every error code reaches a client as a plain sentence followed by the
//! error object (contract-notes 21), keys that a harness adds to every tool
//! are accepted and change nothing, and `--check` states the per-call bound.
//!
//! The real clients' side of the same rules is in tests/harnesses/.

use std::collections::BTreeSet;
use std::net::TcpListener;

use serde_json::{Value, json};

use crate::calls::every_branch;
use crate::fake_backend::{FakeBackend, Fault};
use crate::harness::{Session, TempDir, cli_call, env_for, run_cli, start_fake_at, structured, tool_error};

/// The codes of contract 1.0 "Error model", all of them.
const EVERY_CODE: [&str; 8] = [
    "backend_unavailable",
    "not_found",
    "invalid_argument",
    "conflict",
    "upstream_error",
    "internal_error",
    "instance_mismatch",
    "identity_unavailable",
];

const OTHER_RUNTIME: &str = "0b7e9c52-6f1a-4d3e-8a2b-9c0d1e2f3a4b";

/// One way to make the server answer one code, set up on `fake` by `arrange`
/// and undone by `Fault::None` / `clear_overrides` afterwards.
struct Case {
    code: &'static str,
    tool: &'static str,
    arguments: Value,
    arrange: fn(&FakeBackend),
}

fn nothing(_: &FakeBackend) {}

fn cases(runtime_id: &str) -> Vec<Case> {
    vec![
        Case {
            code: "not_found",
            tool: "get_execution",
            arguments: json!({"exec_id": 99_999}),
            arrange: nothing,
        },
        Case {
            code: "invalid_argument",
            tool: "search_corpus",
            arguments: json!({"query": "graph attention", "limit": 0}),
            arrange: nothing,
        },
        // Routine 9 has execution 121 running in the fixtures.
        Case { code: "conflict", tool: "run_routine", arguments: json!({"routine_id": 9}), arrange: nothing },
        Case {
            code: "upstream_error",
            tool: "list_routines",
            arguments: json!({}),
            arrange: |fake| fake.set_fault_for("GET", "/api/routines", Fault::Html500),
        },
        Case {
            code: "internal_error",
            tool: "list_routines",
            arguments: json!({}),
            arrange: |fake| {
                fake.set_fault_for(
                    "GET",
                    "/api/routines",
                    Fault::Status(413, r#"{"detail": "too big"}"#.into()),
                )
            },
        },
        Case {
            code: "instance_mismatch",
            tool: "health",
            arguments: json!({"expected_runtime_id": OTHER_RUNTIME}),
            arrange: nothing,
        },
        Case {
            code: "identity_unavailable",
            tool: "get_execution",
            arguments: json!({"exec_id": 119, "expected_runtime_id": runtime_id}),
            arrange: |fake| {
                let row = json!({"id": 119, "status": "completed", "identity": null});
                fake.override_response(
                    "GET",
                    "/api/executions/119",
                    200,
                    &[("Content-Type", "application/json")],
                    &row.to_string(),
                );
            },
        },
    ]
}

/// The environment of a resmon that has stopped but left its port file and
/// token behind, as a crashed app does: the port is named and refuses.
fn stopped_resmon(dir: &TempDir) -> Vec<(String, String)> {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(dir.path().join("resmon.port"), port.to_string()).unwrap();
    std::fs::write(dir.path().join(format!("api-token-{port}")), "t".repeat(43)).unwrap();
    vec![
        ("RESMON_PORT_FILE".into(), dir.path().join("resmon.port").display().to_string()),
        ("RESMON_STATE_DIR".into(), dir.path().display().to_string()),
    ]
}

/// The error a session answers and the object `resmon-mcp call` prints for
/// the same call must be the same object, and the session's result must be
/// shaped as contract-notes 21 says (`tool_error` checks the shape: a first
/// block that is `<code>: <message>` and not JSON, a second that parses to
/// the error object, no structuredContent).
fn same_error_both_ways(
    session: &mut Session,
    env: &[(String, String)],
    tool: &str,
    arguments: &Value,
) -> Value {
    let from_session = tool_error(&session.call(tool, arguments.clone()));
    let (exit, printed, output) = cli_call(tool, arguments.clone(), env);
    assert_eq!(exit, Some(1), "`call {tool}` should exit 1 on an error: {output}");
    assert_eq!(printed, from_session, "`call {tool}` printed another object than the session answered");
    from_session
}

#[test]
fn every_error_code_opens_with_its_sentence_and_call_prints_the_same_object() {
    let mut seen = BTreeSet::new();

    let dir = TempDir::new();
    let fake = start_fake_at(dir.path());
    let env = env_for(&fake);
    let mut session = Session::initialized(&env);
    for case in cases(&fake.runtime_id()) {
        (case.arrange)(&fake);
        let error = same_error_both_ways(&mut session, &env, case.tool, &case.arguments);
        assert_eq!(error["error"], case.code, "{} {}: {error}", case.tool, case.arguments);
        fake.clear_faults();
        fake.clear_overrides();
        seen.insert(case.code);
    }
    // The session is still usable after every one of them.
    structured(&session.call("health", json!({})));

    let gone = TempDir::new();
    let env = stopped_resmon(&gone);
    let mut session = Session::initialized(&env);
    let error = same_error_both_ways(&mut session, &env, "health", &json!({}));
    assert_eq!(error["error"], "backend_unavailable");
    // The contract's meaning ("When the backend is not named, or not
    // running") opens the sentence; discovery.rs pins the rest.
    assert!(error["message"].as_str().unwrap_or_default().starts_with("resmon is not running"), "{error}");
    seen.insert("backend_unavailable");

    // The port file a person named is missing: the other backend_unavailable
    // a new user meets first. It is no "nothing named" (contract-notes 1).
    let missing = gone.path().join("elsewhere").join("resmon.port").display().to_string();
    let env = vec![("RESMON_PORT_FILE".to_string(), missing)];
    let mut session = Session::initialized(&env);
    let error = same_error_both_ways(&mut session, &env, "health", &json!({}));
    assert_eq!(error["detail"]["problem"], json!("absent"), "{error}");
    assert!(error.get("no_port_named").is_none(), "{error}");

    assert_eq!(seen, BTreeSet::from(EVERY_CODE), "not every code of the contract was checked");
}

#[test]
fn a_read_only_refusal_is_shaped_like_every_other_error() {
    let dir = TempDir::new();
    let fake = start_fake_at(dir.path());
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_READ_ONLY".into(), "1".into()));
    let mut session = Session::initialized(&env);
    let error = same_error_both_ways(&mut session, &env, "run_routine", &json!({"routine_id": 8}));
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(error["detail"]["read_only"], json!(true));
    assert!(fake.requests().is_empty(), "a read-only write reached resmon");
}

/// One request as (method, path, query pairs, body).
type Sent = (String, String, Vec<(String, String)>, String);

/// Every request as the fake saw it, with the instance's own runtime id
/// replaced, so that two fakes' traffic can be compared.
fn traffic(fake: &FakeBackend) -> Vec<Sent> {
    let runtime_id = fake.runtime_id();
    fake.requests()
        .into_iter()
        .map(|request| {
            let query = request
                .query_pairs
                .iter()
                .map(|(key, value)| (key.clone(), value.replace(&runtime_id, "<runtime>")))
                .collect();
            let body = String::from_utf8_lossy(&request.body).replace(&runtime_id, "<runtime>");
            (request.method.clone(), request.path.clone(), query, body)
        })
        .collect()
}

fn with_key(arguments: &Value, key: &str, value: Value) -> Value {
    let mut arguments = arguments.clone();
    arguments.as_object_mut().unwrap().insert(key.to_string(), value);
    arguments
}

#[test]
fn wait_for_previous_is_accepted_by_every_tool_and_changes_nothing_sent() {
    // Two identical fakes: one sees every branch plain, the other the same
    // calls with Gemini CLI's key added. resmon must see the same requests.
    let plain_dir = TempDir::new();
    let plain = start_fake_at(plain_dir.path());
    let marked_dir = TempDir::new();
    let marked = start_fake_at(marked_dir.path());
    let mut plain_session = Session::initialized(&env_for(&plain));
    let mut marked_session = Session::initialized(&env_for(&marked));
    let plain_calls = every_branch(&plain.runtime_id());
    let marked_calls = every_branch(&marked.runtime_id());
    let mut tools = BTreeSet::new();
    for (index, ((tool, arguments), (_, marked_arguments))) in
        plain_calls.iter().zip(&marked_calls).enumerate()
    {
        structured(&plain_session.call(tool, arguments.clone()));
        // Both values the harness sends, and the null a client may send for "unset".
        let flag = [json!(true), json!(false), json!(null)][index % 3].clone();
        let result = marked_session.call(tool, with_key(marked_arguments, "wait_for_previous", flag));
        assert_eq!(result["isError"], json!(false), "{tool} refused wait_for_previous: {result}");
        structured(&result);
        tools.insert(*tool);
    }
    assert_eq!(tools.len(), 25, "every tool was called with the key");
    assert_eq!(traffic(&plain), traffic(&marked), "wait_for_previous changed what resmon was sent");

    // The `call` subcommand takes the same arguments a harness sends.
    let (exit, answer, output) = cli_call("health", json!({"wait_for_previous": true}), &env_for(&marked));
    assert_eq!(exit, Some(0), "{output}");
    assert_eq!(answer["status"], "ok");
}

#[test]
fn other_unknown_arguments_are_still_refused_by_name_and_send_nothing() {
    let dir = TempDir::new();
    let fake = start_fake_at(dir.path());
    let env = env_for(&fake);
    let mut session = Session::initialized(&env);
    let refusals = [
        ("health", json!({"wait_for_previous": true, "surplus": 1}), "surplus"),
        ("list_sources", json!({"wait_for_prev": true}), "wait_for_prev"),
        ("search_corpus", json!({"query": "x", "Wait_For_Previous": true}), "Wait_For_Previous"),
        ("search_corpus", json!({"query": "x", "wait_for_previous": true, "limit": 0}), "limit"),
        // The key does not stand in for a required argument.
        ("get_routine", json!({"wait_for_previous": true}), "routine_id"),
    ];
    for (tool, arguments, argument) in refusals {
        fake.clear_requests();
        let error = same_error_both_ways(&mut session, &env, tool, &arguments);
        assert_eq!(error["error"], "invalid_argument", "{tool} {arguments}: {error}");
        assert_eq!(error["detail"]["argument"], argument, "{tool} {arguments}: {error}");
        assert!(fake.requests().is_empty(), "{tool} {arguments} reached resmon");
    }
    // Inside a nested object the key is an ordinary key: resmon judges it.
    let error = tool_error(&session.call(
        "update_settings",
        json!({"group": "ai", "settings": {"wait_for_previous": "true"}, "wait_for_previous": true}),
    ));
    assert_eq!(error["error"], "invalid_argument", "{error}");
    assert!(error["message"].as_str().unwrap().contains("wait_for_previous"), "{error}");
}

#[test]
fn check_states_the_per_call_bound_in_force() {
    let dir = TempDir::new();
    let fake = start_fake_at(dir.path());
    // The harness rig lowers the bound for every test; the line must say so.
    let output = run_cli(&["--check"], &env_for(&fake));
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    let line = text.lines().find(|line| line.starts_with("per-call bound in force:"));
    let line = line.unwrap_or_else(|| panic!("--check names no per-call bound:\n{text}"));
    assert!(line.starts_with("per-call bound in force: 1.5 s"), "{line}");
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), "4000".into()));
    let text = String::from_utf8_lossy(&run_cli(&["--check"], &env).stdout).to_string();
    assert!(text.contains("per-call bound in force: 4 s"), "{text}");
    // It can be lowered, never raised past the 30 s of contract-notes 4, and
    // a value that is not used as written says so on stderr.
    for (value, bound) in [("90000", "30 s"), ("4s", "30 s"), ("20", "0.1 s")] {
        env.push(("RESMON_MCP_TIMEOUT_MS".into(), value.into()));
        let output = run_cli(&["--check"], &env);
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(text.contains(&format!("per-call bound in force: {bound} ")), "{value}: {text}");
        let warned =
            stderr.lines().any(|line| line.contains("RESMON_MCP_TIMEOUT_MS") && line.contains(value));
        assert!(warned, "{value}: no warning in {stderr:?}");
    }
}
