//! Unit tests of the rule after acceptance: the code by the cause's kind,
//! the id under the route's own key, keys given twice, causes cut short.

use serde_json::json;

use super::*;

fn accepted(act: Act, status: u16, body: Result<&str, ToolError>) -> Accepted {
    let body = body.map(|text| Reply {
        status,
        headers: Vec::new(),
        bytes: text.as_bytes().to_vec(),
        route: "POST /api/routines/7/run".into(),
        backend_version: None,
        server_chosen: Vec::new(),
        caller_supplied: Vec::new(),
        offered: Vec::new(),
        write: Some(crate::backend::WriteCheck::unnamed()),
    });
    Accepted {
        act,
        route: "POST /api/routines/7/run".into(),
        status,
        id_key: Some("execution_id"),
        id: None,
        body,
        contradicted: false,
    }
}

fn unread(why: &str, code: Code) -> ToolError {
    ToolError::new(code, "resmon at http://127.0.0.1:9 did not answer in time. Wait and try again.")
        .with_detail("route", json!("POST /api/routines/7/run"))
        .with_detail("status", json!(200))
        .with_detail("body_unread", json!(why))
        .with_detail("outcome_unknown", json!(true))
}

/// A body that stalled or was reset after a 2xx: backend_unavailable,
/// applied, said in its own words (not the cause's "did not answer"),
/// and never outcome_unknown.
#[test]
fn a_stalled_or_reset_body_after_acceptance_is_backend_unavailable() {
    for (why, said) in [("timed_out", "its answer stalled"), ("reset", "the connection was reset")] {
        let mut run = accepted(Act::RoutineRun { routine_id: 7 }, 200, Err(unread(why, Code::UpstreamError)));
        let error = run.object().unwrap_err();
        assert_eq!(error.code, Code::BackendUnavailable, "{why}");
        assert!(
            error.message.starts_with(&format!(
                "resmon started or queued a run of routine 7 (it answered 200), but {said}"
            )),
            "{}",
            error.message
        );
        assert!(!error.message.contains("did not answer"), "{}", error.message);
        assert_eq!(error.detail["applied"], json!(true));
        assert!(!error.detail.contains_key("outcome_unknown"));
        assert!(!error.detail["failure"].as_object().unwrap().contains_key("outcome_unknown"));
    }
    let mut run =
        accepted(Act::RoutineRun { routine_id: 7 }, 202, Err(unread("broke_off", Code::UpstreamError)));
    let error = run.object().unwrap_err();
    assert_eq!(error.code, Code::UpstreamError);
    assert!(
        error.message.starts_with("resmon queued a run of routine 7 (it answered 202)"),
        "{}",
        error.message
    );
}

#[test]
fn the_id_is_read_only_under_the_routes_own_key() {
    let mut run = accepted(Act::RoutineRun { routine_id: 7 }, 200, Ok(r#"{"execution_id": 12}"#));
    run.object().unwrap();
    assert_eq!(run.id(), Some(12));
    let error =
        run.fail("reading it back failed", Some(ToolError::new(Code::NotFound, "Execution not found")));
    assert_eq!(error.code, Code::UpstreamError, "never the cause's not_found");
    assert_eq!(error.detail["execution_id"], json!(12));
    assert!(error.message.starts_with("resmon started run 12 of routine 7"), "{}", error.message);
    assert!(
        error.message.contains("failed: Execution not found. Do not call run_routine again"),
        "{}",
        error.message
    );
    let mut other =
        accepted(Act::RoutineRun { routine_id: 7 }, 200, Ok(r#"{"id": 12, "api_key": 5, "token_count": 3}"#));
    let object = other.object().unwrap();
    assert_eq!(other.id(), None);
    let error = other.without_id(&object, "an integer `execution_id`");
    assert_eq!(
        error.detail["answered"],
        json!({"id": 12, "token_count": 3}),
        "a credential-shaped key is not quoted; a count of tokens is no credential (contract-notes 13)"
    );
    assert!(!error.detail.contains_key("execution_id") && !error.detail.contains_key("id"));
}

/// backend_unavailable after acceptance only for a timeout, a reset or
/// closed connection, or a refused one: by the cause's kind, not its code.
#[test]
fn the_code_after_acceptance_follows_the_kind_of_the_cause() {
    let mut run = accepted(Act::RoutineRun { routine_id: 7 }, 200, Ok(r#"{"execution_id": 12}"#));
    run.object().unwrap();
    let unavailable = |message: &str| ToolError::new(Code::BackendUnavailable, message);
    let lost = [
        unavailable("late").with_detail("deadline_s", json!(2.0)),
        unavailable("not sent").with_detail("sent", json!(false)),
        unavailable("closed").with_detail("io", json!("ConnectionReset")),
        unavailable("refused").with_detail("io", json!("ConnectionRefused")),
        // A connection not accepted in time is known by its detail, as the
        // exchange gives it, never by its sentence.
        unavailable("Nothing on http://127.0.0.1:9 accepted a connection within 3 s, so it was not sent.")
            .with_detail("sent", json!(false)),
    ];
    for cause in lost {
        let error = run.fail("reading it back failed", Some(cause.clone()));
        assert_eq!(error.code, Code::BackendUnavailable, "{cause:?}");
    }
    let answered = [
        unavailable("resmon on port 9 refused this server's local API token.")
            .with_detail("reason", json!("token_missing")),
        unavailable("odd").with_detail("io", json!("PermissionDenied")),
        ToolError::new(Code::UpstreamError, "late").with_detail("deadline_s", json!(2.0)),
    ];
    for cause in answered {
        let error = run.fail("reading it back failed", Some(cause.clone()));
        assert_eq!(error.code, Code::UpstreamError, "{cause:?}");
    }
}

#[test]
fn a_key_given_twice_with_two_values_is_found() {
    let mut run =
        accepted(Act::RoutineRun { routine_id: 7 }, 200, Ok(r#"{"execution_id": 5, "execution_id": 6}"#));
    let error = run.object().unwrap_err();
    assert_eq!(error.detail["answered"], json!({"execution_id": [5, 6]}));
    assert!(!error.detail.contains_key("execution_id"));
    assert!(error.message.starts_with("resmon accepted the request to run routine 7"), "{}", error.message);
    let mut same =
        accepted(Act::RoutineRun { routine_id: 7 }, 200, Ok(r#"{"execution_id": 5, "execution_id": 5}"#));
    same.object().unwrap();
    assert_eq!(same.id(), Some(5));
}

#[test]
fn a_cause_is_cut_at_its_first_sentence() {
    assert_eq!(first_sentence("Routine not found"), "Routine not found");
    assert_eq!(first_sentence("It broke off. Try again."), "It broke off.");
    assert_eq!(
        first_sentence("resmon at http://127.0.0.1:5 stalled. Wait."),
        "resmon at http://127.0.0.1:5 stalled."
    );
}
