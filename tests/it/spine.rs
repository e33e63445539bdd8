//! Discovery, the HTTP client's rules, the error model, `health`, and the
//! command line, against the fake backend (contract 1.0 "Port discovery",
//! "The local API token", "Error model"; contract-notes 1-5).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_backend::{FakeBackend, Fault};
use crate::harness::{
    Session, TempDir, Witness, cli_call, connected, dead_port, env_for, run_cli, start_fake, structured,
    tool_error, vars,
};

fn assert_no_token(fake: &FakeBackend, text: &str) {
    assert!(!text.contains(&fake.token()), "the token leaked: {text}");
}

#[test]
fn health_end_to_end_over_stdio_carries_the_identity() {
    let (fake, mut session) = connected();
    let result = session.call("health", json!({}));
    let health = structured(&result);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], "2.3.0");
    assert_eq!(health["identity"]["runtime_id"], fake.runtime_id());
    assert_eq!(health["identity"]["contract_version"], 1);
    for key in ["schema_version", "scheduler", "daemon"] {
        assert!(health.get(key).is_some(), "{key} missing: {health}");
    }
    let (status, stderr) = session.finish();
    assert!(status.success());
    assert_no_token(&fake, &stderr);
}

#[test]
fn every_request_carries_the_token_and_the_exact_host_and_no_origin() {
    let fake = start_fake();
    let (code, _, _) = cli_call("health", json!({}), &env_for(&fake));
    assert_eq!(code, Some(0));
    let requests = fake.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        assert_eq!(request.header("authorization"), Some(format!("Bearer {}", fake.token()).as_str()));
        assert_eq!(request.header("host"), Some(format!("127.0.0.1:{}", fake.port()).as_str()));
        assert_eq!(request.header("origin"), None);
        let hosts = request.headers.iter().filter(|(name, _)| name == "host").count();
        assert_eq!(hosts, 1);
        assert_eq!(request.status, 200);
    }
}

#[test]
fn discovery_is_cached_for_the_session() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    let after_first = fake.requests().len();
    assert_eq!(after_first, 2, "discovery's confirmation plus the call itself");
    structured(&session.call("health", json!({})));
    structured(&session.call("health", json!({})));
    assert_eq!(fake.requests().len(), after_first + 2, "no second discovery");
}

#[test]
fn call_prints_health_and_exits_zero() {
    let fake = start_fake();
    let (code, answer, all_output) = cli_call("health", json!({}), &env_for(&fake));
    assert_eq!(code, Some(0), "{all_output}");
    assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id());
    assert_no_token(&fake, &all_output);
}

#[test]
fn resmon_port_wins_and_a_named_port_that_does_not_answer_is_never_widened() {
    // A live resmon whose port file and token are right there...
    let other = start_fake();
    // ...but RESMON_PORT names a port where nothing listens.
    let port = dead_port();
    let vars = vars(&[
        ("RESMON_PORT", port.to_string()),
        ("RESMON_PORT_FILE", other.port_file().display().to_string()),
        ("RESMON_STATE_DIR", other.state_dir().display().to_string()),
    ]);
    std::fs::write(other.dir().join(format!("api-token-{port}")), "a".repeat(43)).unwrap();
    let (code, answer, output) = cli_call("health", json!({}), &vars);
    assert_eq!(code, Some(1));
    assert_eq!(answer["error"], "backend_unavailable");
    // Contract 1.0's meaning for this case, in this server's words: resmon
    // is not running, start it; then the port that was tried.
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.starts_with("resmon is not running on the port this server was given; start the resmon app"),
        "{message}"
    );
    assert!(message.contains(&format!("port {port}, which RESMON_PORT names")), "{message}");
    assert_eq!(answer["tried"], json!([format!("http://127.0.0.1:{port}")]));
    assert!(other.requests().is_empty(), "a port nobody named was reached: {output}");
}

#[test]
fn a_malformed_resmon_port_is_refused_without_falling_through() {
    let fake = start_fake();
    for bad in ["abc", "0", "70000", "80 81", "-1"] {
        let mut vars = env_for(&fake);
        vars.push(("RESMON_PORT".into(), bad.into()));
        let (code, answer, _) = cli_call("health", json!({}), &vars);
        assert_eq!(code, Some(1));
        assert_eq!(answer["error"], "backend_unavailable", "{bad}");
        assert_eq!(answer["detail"]["source"], "RESMON_PORT");
        assert_eq!(answer["detail"]["value"], bad);
        assert!(answer["message"].as_str().unwrap().contains("RESMON_PORT"));
    }
    assert!(fake.requests().is_empty(), "a malformed RESMON_PORT fell through to the port file");
}

#[test]
fn a_malformed_port_file_is_refused_naming_the_file() {
    let dir = TempDir::new();
    let port_file = dir.path().join("resmon.port");
    std::fs::write(&port_file, "not-a-port").unwrap();
    let vars = vars(&[
        ("RESMON_PORT_FILE", port_file.display().to_string()),
        ("RESMON_STATE_DIR", dir.path().display().to_string()),
    ]);
    let (code, answer, _) = cli_call("health", json!({}), &vars);
    assert_eq!(code, Some(1));
    assert_eq!(answer["error"], "backend_unavailable");
    assert_eq!(answer["detail"]["value"], "not-a-port");
    assert!(answer["message"].as_str().unwrap().contains(&port_file.display().to_string()));
}

#[test]
fn the_port_file_beside_resmon_db_path_names_the_instance() {
    let fake = start_fake();
    let vars = vars(&[
        ("RESMON_DB_PATH", fake.dir().join("resmon.db").display().to_string()),
        ("RESMON_STATE_DIR", fake.state_dir().display().to_string()),
    ]);
    let (code, answer, _) = cli_call("health", json!({}), &vars);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id());
}

#[test]
fn nothing_named_is_refused_without_claiming_resmon_is_down() {
    let (code, answer, _) = cli_call("health", json!({}), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(answer["error"], "backend_unavailable");
    assert_eq!(answer["no_port_named"], true);
    assert_eq!(answer["tried"], json!([]));
    let message = answer["message"].as_str().unwrap();
    assert!(!message.contains("not running"), "{message}");
    assert!(message.contains("RESMON_PORT") && message.contains("RESMON_PORT_FILE"));
    assert!(message.contains("resmon.port"), "names the port-file path it looked for: {message}");
}

#[test]
fn check_without_resmon_prints_the_no_port_diagnosis_and_fails() {
    let output = run_cli(&["--check"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("RESMON_PORT: not set"), "{stdout}");
    assert!(stdout.contains("RESMON_PORT_FILE: not set"), "{stdout}");
    assert!(stdout.contains("resmon.port: does not exist"), "{stdout}");
    assert!(stdout.contains("No resmon instance was named"), "{stdout}");
    let json_output = run_cli(&["--check", "--json"], &[]);
    let report: Value = serde_json::from_slice(&json_output.stdout).unwrap();
    assert_eq!(json_output.status.code(), Some(1));
    assert_eq!(report["connected"], false);
    assert_eq!(report["error"]["no_port_named"], true);
}

#[test]
fn check_against_a_running_resmon_tells_each_step_and_never_the_token() {
    let fake = start_fake();
    let output = run_cli(&["--check"], &env_for(&fake));
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(&format!("holds \"{}\"", fake.port())), "{stdout}");
    assert!(stdout.contains("present and well-formed"), "{stdout}");
    assert!(stdout.contains(&fake.runtime_id()), "{stdout}");
    assert!(stdout.contains("mode: full surface"), "{stdout}");
    assert_no_token(&fake, &stdout);
    assert_no_token(&fake, &String::from_utf8_lossy(&output.stderr));
    let mut vars = env_for(&fake);
    vars.push(("RESMON_MCP_READ_ONLY".into(), "1".into()));
    let json_output = run_cli(&["--check", "--json"], &vars);
    let report: Value = serde_json::from_slice(&json_output.stdout).unwrap();
    assert_eq!(report["connected"], true);
    assert_eq!(report["read_only"], true);
    assert_eq!(report["health"]["identity"]["runtime_id"], fake.runtime_id());
}

#[test]
fn a_missing_or_unusable_token_file_names_the_instance_and_sends_nothing() {
    let fake = start_fake();
    std::fs::remove_file(fake.token_file()).unwrap();
    let (code, answer, _) = cli_call("health", json!({}), &env_for(&fake));
    assert_eq!(code, Some(1));
    assert_eq!(answer["error"], "backend_unavailable");
    assert_eq!(answer["detail"]["port"], fake.port());
    assert_eq!(answer["detail"]["token_file"], fake.token_file().display().to_string());
    std::fs::write(fake.token_file(), "too short\n").unwrap();
    let (_, answer, _) = cli_call("health", json!({}), &env_for(&fake));
    assert_eq!(answer["error"], "backend_unavailable");
    assert!(answer["message"].as_str().unwrap().contains("usable token"));
    assert!(fake.requests().is_empty(), "a request went out without a usable token");
}

#[test]
fn a_same_port_restart_is_rediscovered_and_the_call_sent_once_more() {
    // contract-notes 18: a 401 token_invalid from a cached instance means
    // resmon restarted with a new token; the guard refused before any work,
    // so one rediscovery and one resend repeat nothing.
    let fake = start_fake();
    let old_token = fake.token();
    let old_runtime = fake.runtime_id();
    let mut session = Session::initialized(&env_for(&fake));
    structured(&session.call("health", json!({})));
    fake.restart_with_new_token();
    fake.clear_requests();
    let routines = session.call("list_routines", json!({}));
    structured(&routines);
    let sent: Vec<String> =
        fake.requests().iter().map(|r| format!("{} {} {}", r.method, r.path, r.status)).collect();
    assert_eq!(
        sent,
        ["GET /api/routines 401", "GET /api/health 200", "GET /api/routines 200"],
        "one refusal, one rediscovery, one resend"
    );
    // A pinned call after another restart is checked against the new instance.
    fake.restart_with_new_token();
    fake.clear_requests();
    let pinned = tool_error(
        &session.call("get_execution", json!({"exec_id": 115, "expected_runtime_id": old_runtime})),
    );
    assert_eq!(pinned["error"], "instance_mismatch", "{pinned}");
    assert!(fake.requests_to("GET", "/api/executions/115").is_empty(), "the execution was asked for");
    let transcript = session.transcript.join("\n");
    let (_, stderr) = session.finish();
    for token in [old_token, fake.token()] {
        assert!(!transcript.contains(&token) && !stderr.contains(&token));
    }
}

#[test]
fn a_token_refused_again_after_rediscovery_is_reported_without_a_second_resend() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.set_fault(Fault::Unauthorized);
    fake.clear_requests();
    let refused = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(refused["error"], "backend_unavailable");
    assert_eq!(refused["detail"]["reason"], "token_invalid");
    let sent: Vec<String> = fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    assert_eq!(sent, ["GET /api/routines", "GET /api/health"], "at most one rediscovery, no second resend");
    // When resmon takes the token again, the next call finds it by itself.
    fake.clear_faults();
    structured(&session.call("health", json!({})));
}

#[test]
fn proxy_variables_are_ignored() {
    let fake = start_fake();
    let proxy = Witness::start();
    let mut vars = env_for(&fake);
    for name in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY"] {
        vars.push((name.into(), format!("http://127.0.0.1:{}", proxy.port)));
    }
    let (code, _, output) = cli_call("health", json!({}), &vars);
    assert_eq!(code, Some(0), "{output}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(proxy.hits(), 0, "the proxy received a request (and so the token)");
}

#[test]
fn a_redirect_is_an_error_and_is_not_followed() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    let target = Witness::start();
    fake.override_response(
        "GET",
        "/api/health",
        302,
        &[("Location", &format!("http://127.0.0.1:{}/api/health", target.port))],
        "",
    );
    let error = tool_error(&session.call("health", json!({})));
    assert_eq!(error["error"], "upstream_error");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(target.hits(), 0, "the redirect was followed");
}

#[test]
fn a_backend_that_never_answers_is_abandoned_within_the_bound() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.set_fault(Fault::Hang);
    let started = Instant::now();
    let error = tool_error(&session.call("health", json!({})));
    let took = started.elapsed();
    assert_eq!(error["error"], "backend_unavailable");
    assert!(took < Duration::from_secs(6), "took {took:?} with a 1.5 s bound");
    fake.set_fault(Fault::None);
    // The session survives, and the next call reaches resmon again.
    structured(&session.call("health", json!({})));
}

#[test]
fn faults_become_structured_errors_and_never_leak_the_token_or_the_body() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    let cases = [
        (Fault::Html500, "upstream_error"),
        (Fault::NonJson200, "upstream_error"),
        (Fault::WrongShape200, "upstream_error"),
        (Fault::ResetMidBody, "upstream_error"),
        (Fault::LyingContentLength, "upstream_error"),
        (Fault::Oversize, "upstream_error"),
        (Fault::HostRefused, "backend_unavailable"),
        (Fault::Status(413, r#"{"detail": "too big"}"#.into()), "internal_error"),
    ];
    for (fault, code) in cases {
        fake.set_fault(fault.clone());
        let result = session.call("health", json!({}));
        let error = tool_error(&result);
        assert_eq!(error["error"], code, "{fault:?}: {error}");
        let text = result.to_string();
        assert!(!text.contains("<html") && !text.contains("Traceback"), "{fault:?} leaked the body: {text}");
        fake.set_fault(Fault::None);
        structured(&session.call("health", json!({})));
    }
    fake.set_fault(Fault::EchoToken);
    let echoed = session.call("health", json!({}));
    assert!(!echoed.to_string().contains(&fake.token()));
    fake.set_fault(Fault::None);
    let token = fake.token();
    let transcript = session.transcript.join("\n");
    let (_, stderr) = session.finish();
    assert!(!transcript.contains(&token), "token on stdout");
    assert!(!stderr.contains(&token), "token on stderr");
}

#[test]
fn expected_runtime_id_is_checked_before_anything_and_against_the_reply() {
    let fake = start_fake();
    let vars = env_for(&fake);
    for bad in
        ["", "NOT-A-UUID", "3F6B2A1E-9C4D-4E8A-B2F1-7D0C5E6A9B13", "3f6b2a1e-9c4d-1e8a-b2f1-7d0c5e6a9b13"]
    {
        let (code, answer, _) = cli_call("health", json!({"expected_runtime_id": bad}), &vars);
        assert_eq!(code, Some(1));
        assert_eq!(answer["error"], "invalid_argument", "{bad:?}");
        assert_eq!(answer["detail"]["argument"], "expected_runtime_id");
    }
    assert!(fake.requests().is_empty(), "a malformed expectation reached the network");
    let other = "0b7e9c52-6f1a-4d3e-8a2b-9c0d1e2f3a4b";
    let (_, answer, _) = cli_call("health", json!({"expected_runtime_id": other}), &vars);
    assert_eq!(answer["error"], "instance_mismatch");
    assert_eq!(answer["detail"]["actual_runtime_id"], fake.runtime_id());
    let (code, answer, _) = cli_call("health", json!({"expected_runtime_id": fake.runtime_id()}), &vars);
    assert_eq!(code, Some(0), "{answer}");
    let sent = fake.requests();
    let last = sent.last().unwrap();
    assert_eq!(last.query_pairs, vec![("expected_runtime_id".to_string(), fake.runtime_id())]);
}

#[test]
fn a_backend_without_a_usable_identity_serves_unpinned_calls_only() {
    // contract-notes 3 and 6: identity is not part of confirming a backend;
    // only a pinned call needs it, and it is refused before the execution
    // request.
    let fake = start_fake();
    fake.override_response(
        "GET",
        "/api/health",
        200,
        &[("Content-Type", "application/json")],
        r#"{"status":"ok","version":"2.1.0"}"#,
    );
    let mut session = Session::initialized(&env_for(&fake));
    let health = structured(&session.call("health", json!({}))).clone();
    assert_eq!(health["identity"], Value::Null, "{health}");
    assert_eq!(health["version"], "2.1.0");
    structured(&session.call("list_routines", json!({})));
    fake.clear_requests();
    let pinned = tool_error(
        &session.call("get_execution", json!({"exec_id": 115, "expected_runtime_id": fake.runtime_id()})),
    );
    assert_eq!(pinned["error"], "identity_unavailable", "{pinned}");
    assert!(fake.requests_to("GET", "/api/executions/115").is_empty(), "the execution was asked for");
}

#[test]
fn usage_errors_exit_two_and_help_and_version_work() {
    assert_eq!(run_cli(&["--bogus"], &[]).status.code(), Some(2));
    assert_eq!(run_cli(&["call"], &[]).status.code(), Some(2));
    assert_eq!(run_cli(&["call", "health", "{not json"], &[]).status.code(), Some(2));
    assert_eq!(run_cli(&["call", "no_such_tool", "{}"], &[]).status.code(), Some(2));
    let help = run_cli(&["--help"], &[]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--check"));
    let version = run_cli(&["--version"], &[]);
    assert!(String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")));
}
