//! `--read-only[=true|false]` (contract-notes 23): what a bundle's checkbox
//! reaches the server as. It turns read-only on exactly like
//! RESMON_MCP_READ_ONLY=1; `=false` never turns the variable's choice off;
//! any other value stops the server before it serves anything.

use serde_json::{Value, json};

use crate::harness::{Session, WRITE_TOOLS, env_for, printed_answer, run_cli, start_fake, tool_error};

fn read_only_var() -> (String, String) {
    ("RESMON_MCP_READ_ONLY".into(), "1".into())
}

/// Starts a session with `args` and `env`, shakes hands, and returns it with
/// the names it lists.
fn listed(args: &[&str], env: &[(String, String)]) -> (Session, Vec<String>) {
    let mut session = Session::start_with_args(args, env);
    session.handshake();
    let tools = session.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    let names = tools.iter().map(|tool| tool["name"].as_str().unwrap().to_string()).collect();
    (session, names)
}

#[test]
fn the_flag_alone_or_true_offers_only_the_reads() {
    let (_, full) = listed(&[], &[]);
    assert_eq!(full.len(), 25);
    for args in [&["--read-only"][..], &["--read-only=true"], &["--read-only=false", "--read-only"]] {
        let (_, names) = listed(args, &[]);
        assert_eq!(names.len(), 18, "{args:?}: {names:?}");
        assert!(names.iter().all(|name| !WRITE_TOOLS.contains(&name.as_str())), "{args:?}: {names:?}");
        let reads: Vec<&String> = full.iter().filter(|name| !WRITE_TOOLS.contains(&name.as_str())).collect();
        assert_eq!(names.iter().collect::<Vec<_>>(), reads, "{args:?}: same reads, same order");
    }
}

#[test]
fn false_leaves_the_full_surface_and_never_undoes_the_variable() {
    let (_, names) = listed(&["--read-only=false"], &[]);
    assert_eq!(names.len(), 25, "--read-only=false with no variable: {names:?}");
    // Read-only wins whichever of the two asks for it.
    let (_, names) = listed(&["--read-only=false"], &[read_only_var()]);
    assert_eq!(names.len(), 18, "--read-only=false must not undo RESMON_MCP_READ_ONLY=1: {names:?}");
    // The variable keeps its contract meaning beside the flag: only "1" counts.
    let (_, names) = listed(&["--read-only=false"], &[("RESMON_MCP_READ_ONLY".into(), "true".into())]);
    assert_eq!(names.len(), 25, "RESMON_MCP_READ_ONLY=true is not read-only: {names:?}");
}

#[test]
fn a_flagged_session_refuses_writes_before_anything_is_sent_and_still_reads() {
    let fake = start_fake();
    let mut session = Session::start_with_args(&["--read-only=true"], &env_for(&fake));
    session.handshake();
    for tool in WRITE_TOOLS {
        let error = tool_error(&session.call(tool, json!({"routine_id": 8})));
        assert_eq!(error["error"], "invalid_argument", "{tool}: {error}");
        assert_eq!(error["detail"], json!({"read_only": true}), "{tool}: {error}");
    }
    assert!(fake.requests().is_empty(), "a refused write must not even run discovery");
    let health = session.call("health", json!({}));
    assert_eq!(health["structuredContent"]["status"], "ok", "{health}");
    assert_eq!(fake.state().routine(8).unwrap()["is_active"], json!(0), "routine 8 untouched");
}

#[test]
fn the_flag_reaches_check_and_call() {
    let fake = start_fake();
    let output = run_cli(&["--read-only", "--check", "--json"], &env_for(&fake));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report}");
    assert_eq!(report["read_only"], true, "{report}");
    let output = run_cli(&["--check", "--json", "--read-only=false"], &env_for(&fake));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["read_only"], false, "{report}");

    let output =
        run_cli(&["--read-only=true", "call", "activate_routine", r#"{"routine_id": 8}"#], &env_for(&fake));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{answer}");
    assert_eq!(answer["detail"], json!({"read_only": true}), "{answer}");
    assert_eq!(fake.state().routine(8).unwrap()["is_active"], json!(0));
    let output =
        run_cli(&["--read-only=false", "call", "activate_routine", r#"{"routine_id": 8}"#], &env_for(&fake));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    assert_eq!(printed_answer("activate_routine", &output)["is_active"], json!(true));
    assert_eq!(fake.state().routine(8).unwrap()["is_active"], json!(1), "=false lets the write through");
}

#[test]
fn any_other_value_is_a_usage_error_that_says_what_to_give() {
    let cases: [(&str, &str); 6] = [
        ("--read-only=yes", "not \"yes\""),
        ("--read-only=1", "not \"1\""),
        ("--read-only=TRUE", "not \"TRUE\""),
        ("--read-only=", "not \"\""),
        // What an unsubstituted bundle setting looks like.
        ("--read-only=${user_config.read_only}", "did not fill in its setting"),
        ("--read-only=false=true", "not \"false=true\""),
    ];
    for (arg, says) in cases {
        let output = run_cli(&[arg], &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{arg}: {stderr}");
        assert!(output.stdout.is_empty(), "{arg}: nothing on stdout, not even a listing");
        assert!(stderr.contains(says), "{arg}: {stderr}");
        assert!(stderr.contains("--read-only=true or --read-only=false") || stderr.contains("true or false"));
    }
}
