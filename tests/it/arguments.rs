//! How a tool call's arguments are read, through both ways in (`tools/call`
//! over stdio and the `call` subcommand), against the fake: an integer is
//! one by value and within its range (contract-notes 29), and a key given
//! twice is refused (contract-notes 30). Each refused call is shown to have
//! sent nothing.

use serde_json::{Value, json};

use crate::calls::invalid_calls;
use crate::harness::{
    Fake, Launch, Session, cli_call, connected, env_for, error_payload, printed_answer, run_cli, start_fake,
    tool_error,
};

/// One `tools/call` written out by hand, so that its arguments reach the
/// server exactly as typed (`2e0`, a key given twice), which building a
/// `Value` would rewrite. Answers the `result`.
fn call_as_written(session: &mut Session, id: i64, tool: &str, arguments: &str) -> Value {
    session.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    ));
    let answer = session.recv();
    assert_eq!(answer["id"], json!(id), "{answer}");
    answer["result"].clone()
}

/// The requests the fake recorded since it was last cleared, apart from
/// discovery's health check, as `METHOD /path?query`.
fn sent(fake: &Fake) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|request| request.path != "/api/health")
        .map(|request| {
            let query = if request.query.is_empty() { String::new() } else { format!("?{}", request.query) };
            format!("{} {}{query}", request.method, request.path)
        })
        .collect()
}

#[test]
fn an_integer_written_with_a_fraction_part_or_an_exponent_is_sent_as_that_integer() {
    let (fake, mut session) = connected();
    fake.clear_requests();
    let result = call_as_written(&mut session, 10, "get_routine", r#"{"routine_id": 7.0}"#);
    assert!(error_payload(&result).is_none(), "{result}");
    assert_eq!(sent(&fake).first().map(String::as_str), Some("GET /api/routines/7"), "{:?}", sent(&fake));

    fake.clear_requests();
    let result = call_as_written(&mut session, 11, "list_executions", r#"{"limit": 2e0, "offset": 1.000}"#);
    assert!(error_payload(&result).is_none(), "{result}");
    assert_eq!(result["structuredContent"]["executions"].as_array().map(Vec::len), Some(2), "{result}");

    fake.clear_requests();
    let result = call_as_written(
        &mut session,
        12,
        "export_references",
        r#"{"doc_ids": [801.0, 8.05e2], "format": "ris"}"#,
    );
    assert!(error_payload(&result).is_none(), "{result}");
    let export = fake.requests().into_iter().find(|request| request.method == "POST").expect("the export");
    let body: Value = serde_json::from_slice(&export.body).unwrap();
    assert_eq!(body["document_ids"].to_string(), "[801,805]", "resmon is sent integers: {body}");

    fake.clear_requests();
    let result = call_as_written(&mut session, 13, "run_routine", r#"{"routine_id": 8.0}"#);
    assert!(error_payload(&result).is_none(), "{result}");
    assert_eq!(sent(&fake), ["POST /api/routines/8/run"]);
}

#[test]
fn an_integer_out_of_its_range_or_fractional_is_refused_with_its_true_reason_and_nothing_is_sent() {
    let (fake, mut session) = connected();
    let max = "9223372036854775807";
    let cases: [(&str, &str, &str, &[&str]); 9] = [
        (
            "get_routine",
            r#"{"routine_id": 18446744073709551616}"#,
            "routine_id",
            &["an id", "from 1 to", max],
        ),
        (
            "run_routine",
            r#"{"routine_id": 18446744073709551616}"#,
            "routine_id",
            &["an id", "from 1 to", max],
        ),
        (
            "get_routine",
            r#"{"routine_id": 9223372036854775808}"#,
            "routine_id",
            &["from 1 to", max, "9223372036854775808 is larger than"],
        ),
        ("get_routine", r#"{"routine_id": 0}"#, "routine_id", &["an id", "from 1 to", max, "got 0"]),
        ("get_watch_profile", r#"{"profile_id": -2}"#, "profile_id", &["from 1 to", max, "got -2"]),
        ("get_execution", r#"{"exec_id": 1.5}"#, "exec_id", &["not a fractional number (1.5)"]),
        ("export_references", r#"{"doc_ids": [801, 0], "format": "ris"}"#, "doc_ids[1]", &["from 1 to", max]),
        (
            "list_executions",
            r#"{"limit": 1e30}"#,
            "limit",
            &["an integer of at least 1", "is larger than", max],
        ),
        ("list_executions", r#"{"offset": -1.0}"#, "offset", &["an integer of at least 0", "got -1"]),
    ];
    for (index, (tool, arguments, argument, needles)) in cases.into_iter().enumerate() {
        fake.clear_requests();
        let result = call_as_written(&mut session, 20 + index as i64, tool, arguments);
        let error = tool_error(&result);
        assert_eq!(error["error"], "invalid_argument", "{tool} {arguments}: {error}");
        assert_eq!(error["detail"]["argument"], argument, "{tool} {arguments}: {error}");
        let message = error["message"].as_str().unwrap();
        for needle in needles {
            assert!(message.contains(needle), "{tool} {arguments}: {message:?} does not say {needle:?}");
        }
        if !needles[0].starts_with("not a fractional") {
            assert!(!message.contains("fractional"), "{tool} {arguments}: {message}");
        }
        assert!(sent(&fake).is_empty(), "{tool} {arguments} was refused but sent {:?}", sent(&fake));
    }
}

#[test]
fn the_invalid_calls_every_client_makes_are_refused_naming_their_argument_and_send_nothing() {
    // The client stages expect these refusals through each client (via
    // tests/clients/dump_calls.rs); here the list is held to the server.
    let (fake, mut session) = connected();
    for (tool, arguments, argument) in invalid_calls() {
        fake.clear_requests();
        let error = tool_error(&session.call(tool, arguments.clone()));
        let named = (error["error"].as_str(), error["detail"]["argument"].as_str());
        assert_eq!(named, (Some("invalid_argument"), Some(argument)), "{tool} {arguments}: {error}");
        // Every request counts here, the health check too: one of the calls
        // is to `health`, whose own request sent() would pass over.
        let requests = fake.requests();
        assert!(requests.is_empty(), "{tool} {arguments} was refused but sent {} requests", requests.len());
    }
}

#[test]
fn the_call_subcommand_reads_integers_the_same_way() {
    let fake = start_fake();
    let env = env_for(&fake);
    let (code, answer, text) = cli_call("get_routine", json!({"routine_id": 7.0}), &env);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(answer["id"], 7, "{answer}");
    fake.clear_requests();
    let (code, answer, text) = cli_call("get_routine", json!({"routine_id": 1e20}), &env);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(answer["detail"]["argument"], "routine_id", "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("from 1 to 9223372036854775807"), "{answer}");
    assert!(sent(&fake).is_empty(), "{:?}", sent(&fake));
}

/// A refusal of a key given twice: `invalid_argument` naming it, and not a
/// byte sent to resmon, discovery's health check included.
fn refused_as_given_twice(fake: &Fake, error: &Value, argument: &str, what: &str) {
    assert_eq!(error["error"], "invalid_argument", "{what}: {error}");
    assert_eq!(error["detail"]["argument"], argument, "{what}: {error}");
    let message = error["message"].as_str().unwrap();
    let key = argument.rsplit('.').next().unwrap();
    assert!(message.contains(&format!("`{key}` is given 2 times")), "{what}: {message}");
    assert!(
        message.contains("nothing was sent") && message.contains(&format!("Give `{key}` once")),
        "{message}"
    );
    let reached: Vec<String> =
        fake.requests().iter().map(|request| format!("{} {}", request.method, request.path)).collect();
    assert!(reached.is_empty(), "{what} was refused but reached resmon: {reached:?}");
}

#[test]
fn a_key_given_twice_in_a_tool_calls_arguments_is_refused_before_anything_is_sent() {
    let (fake, mut session) = connected();
    let cases = [
        ("run_routine", r#"{"routine_id": 1, "routine_id": 2}"#, "routine_id"),
        ("run_routine", r#"{"routine_id": 8, "routine_id": 8}"#, "routine_id"),
        ("get_routine", r#"{"routine_id": 7, "routine_id": 8}"#, "routine_id"),
        (
            "run_sweep",
            r#"{"query": "graph", "sources": ["arxiv"], "query": "attention", "max_results": 5}"#,
            "query",
        ),
        (
            "update_settings",
            r#"{"group": "ai", "settings": {"ai_model": "claude-sonnet-4-5", "ai_model": "gpt-5"}}"#,
            "settings.ai_model",
        ),
        (
            "update_settings",
            r#"{"group": "notifications", "group": "ai", "settings": {"ai_model": "x"}}"#,
            "group",
        ),
    ];
    for (index, (tool, arguments, argument)) in cases.into_iter().enumerate() {
        fake.clear_requests();
        let result = call_as_written(&mut session, 40 + index as i64, tool, arguments);
        refused_as_given_twice(&fake, &tool_error(&result), argument, &format!("{tool} {arguments}"));
    }
    // The same key inside create_routine's `entity` is refused too: the
    // values of `entity` go to resmon unexamined, but a repeated name in the
    // text would be resolved here, to the last value, which a confirmation
    // card showing the first would not match (contract-notes 30).
    fake.clear_requests();
    let entity = r#"{"name": "By author", "keywords": [], "sources": ["arxiv"], "schedule": "0 8 * * 1",
        "entity": {"profile_id": 5, "profile_id": 7, "mode": "new_papers"}}"#
        .replace('\n', " ");
    let result = call_as_written(&mut session, 60, "create_routine", &entity);
    refused_as_given_twice(&fake, &tool_error(&result), "entity.profile_id", "create_routine entity");
}

#[test]
fn the_call_subcommand_refuses_a_key_given_twice_on_its_command_line_and_on_stdin() {
    let fake = start_fake();
    let env = env_for(&fake);
    let arguments = r#"{"routine_id": 7, "routine_id": 8}"#;
    fake.clear_requests();
    let output = run_cli(&["call", "run_routine", arguments], &env);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    refused_as_given_twice(&fake, &printed_answer("run_routine", &output), "routine_id", "the command line");
    fake.clear_requests();
    let output = Launch::new(&env).args(["call", "run_routine", "-"]).stdin(arguments.as_bytes()).output();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    refused_as_given_twice(&fake, &printed_answer("run_routine", &output), "routine_id", "stdin");
}

/// A tools/call whose params give the tool's name or its arguments twice is
/// refused as a whole: which call was meant cannot be told, and nothing runs.
#[test]
fn a_tools_call_that_names_its_tool_or_arguments_twice_runs_nothing() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    fake.clear_requests();
    for (id, line) in [
        (
            90,
            r#"{"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"activate_routine","name":"deactivate_routine","arguments":{"routine_id":7}}}"#,
        ),
        (
            91,
            r#"{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{"name":"run_routine","arguments":{"routine_id":7},"arguments":{"routine_id":8}}}"#,
        ),
    ] {
        session.send_raw(line);
        let answer = session.recv();
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("more than once"), "{answer}");
    }
    assert!(fake.requests().is_empty(), "nothing reached resmon: {:?}", sent(&fake));
}
