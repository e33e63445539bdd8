//! A write whose answer does not say whether it was carried out: a 5xx
//! (only a 4xx refusal says nothing was done), against a fake that stores
//! the write and then answers badly. The answer opens with what resmon may
//! have done, carries `outcome_unknown`, and names the read that tells,
//! never a bare "try again"; update_settings reads its group back instead
//! (contract-notes 26). Also how any 5xx is said: by its status line and
//! route, resmon's own sentence quoted only when its body gave one.

use serde_json::{Value, json};

use crate::fake_backend::Fault;
use crate::harness::{Fake, Session, connected, env_for, start_fake, tool_error};

const ROUTINE: &str = r#"{"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"}"#;

/// The answers a resmon (or something in front of it) may give after doing
/// the work: its own unhandled error in plain text, gateway statuses, and
/// its own error with a sentence.
fn server_errors() -> Vec<(u16, &'static str, &'static str, &'static str)> {
    vec![
        (500, "text/plain; charset=utf-8", "Internal Server Error", "500 Internal Server Error"),
        (502, "text/plain", "bad gateway", "502 Bad Gateway"),
        (503, "text/html", "<html>down for maintenance</html>", "503 Service Unavailable"),
        (504, "text/plain", "", "504 Gateway Timeout"),
        (500, "application/json", r#"{"detail": "database is locked"}"#, "500 Internal Server Error"),
    ]
}

/// Each write's POST, the call that sends it, what resmon may have done,
/// the read the answer must name, and how many records of its kind the
/// fake holds (to see that the write was stored).
struct Write {
    tool: &'static str,
    arguments: Value,
    path: &'static str,
    may_have: &'static str,
    read: &'static str,
    stored: fn(&Fake) -> usize,
}

fn writes() -> Vec<Write> {
    vec![
        Write {
            tool: "create_routine",
            arguments: serde_json::from_str(ROUTINE).unwrap(),
            path: "/api/routines",
            may_have: "resmon may have created a routine: it answered POST /api/routines with ",
            read: "list_routines shows whether it did",
            stored: |fake| fake.state().routines.len(),
        },
        Write {
            tool: "create_watch_profile",
            arguments: json!({"name": "Ada Example"}),
            path: "/api/profiles",
            may_have: "resmon may have created a watch profile: it answered POST /api/profiles with ",
            read: "list_watch_profiles shows whether it did",
            stored: |fake| fake.state().profiles.len(),
        },
        Write {
            tool: "run_sweep",
            arguments: json!({"query": "graph attention", "sources": ["arxiv"]}),
            path: "/api/search/sweep",
            may_have: "resmon may have started the one-off search: it answered POST /api/search/sweep with ",
            read: "list_executions shows whether a run started",
            stored: |fake| fake.state().executions.len(),
        },
        Write {
            tool: "run_routine",
            arguments: json!({"routine_id": 8}),
            path: "/api/routines/8/run",
            may_have: "resmon may have started or queued a run of routine 8: it answered POST /api/routines/8/run with ",
            read: "list_executions with routine_id 8 shows whether a run started",
            stored: |fake| fake.state().executions.len(),
        },
        Write {
            tool: "activate_routine",
            arguments: json!({"routine_id": 8}),
            path: "/api/routines/8/activate",
            may_have: "resmon may have activated routine 8: it answered POST /api/routines/8/activate with ",
            read: "get_routine 8 shows whether it is on the schedule",
            stored: |_| 0,
        },
        Write {
            tool: "deactivate_routine",
            arguments: json!({"routine_id": 7}),
            path: "/api/routines/7/deactivate",
            may_have: "resmon may have deactivated routine 7: it answered POST /api/routines/7/deactivate with ",
            read: "get_routine 7 shows whether it is on the schedule",
            stored: |_| 0,
        },
    ]
}

fn message(error: &Value) -> &str {
    error["message"].as_str().unwrap()
}

/// Every write, stored and then answered with each 5xx: the outcome is not
/// known, said first, with the tool's own read, and the write went once.
#[test]
fn a_write_stored_and_answered_with_a_server_error_is_an_outcome_not_known() {
    for write in writes() {
        for (status, content_type, body, line) in server_errors() {
            // A fresh resmon each time, so that a run stored by one case does
            // not leave its routine running for the next.
            let fake = start_fake();
            let mut session = Session::initialized(&env_for(&fake));
            fake.clear_requests();
            let before = (write.stored)(&fake);
            fake.set_fault_for(
                "POST",
                write.path,
                Fault::StoredThen(status, content_type.into(), body.into()),
            );
            let error = tool_error(&session.call(write.tool, write.arguments.clone()));
            let case = format!("{} {status} {content_type}", write.tool);
            assert_eq!(error["error"], "upstream_error", "{case}: {error}");
            assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{case}: {error}");
            assert!(error["detail"].get("applied").is_none(), "{case}: {error}");
            let text = message(&error);
            assert!(text.starts_with(&format!("{}{line}", write.may_have)), "{case}: {text}");
            assert!(text.contains(write.read), "{case}: {text}");
            assert!(text.contains("before calling"), "{case}: {text}");
            assert!(!text.to_lowercase().contains("try again"), "{case}: {text}");
            assert!(!text.contains("internal error"), "{case}: {text}");
            if content_type == "application/json" {
                assert!(
                    text.contains("and said \"database is locked\", which does not say"),
                    "{case}: {text}"
                );
            } else if !body.is_empty() && !line.contains(body) {
                assert!(!text.contains(body), "the body is never repeated: {case}: {text}");
            }
            assert_eq!(fake.requests_to("POST", write.path).len(), 1, "{case}: sent once");
            if write.path.ends_with("activate") {
                continue;
            }
            assert!((write.stored)(&fake) > before, "{case}: the fake stored the write");
        }
    }
}

/// A read answered with a 5xx stays an upstream_error, said by what came:
/// no "internal error" unless resmon's own body said one, no caveat about
/// changes.
#[test]
fn a_read_answered_with_a_server_error_names_its_status_line_and_route() {
    let (fake, mut session) = connected();
    for (status, content_type, body, line) in server_errors() {
        fake.clear_faults();
        fake.set_fault_for(
            "GET",
            "/api/routines",
            Fault::StoredThen(status, content_type.into(), body.into()),
        );
        let error = tool_error(&session.call("list_routines", json!({})));
        assert_eq!(error["error"], "upstream_error", "{error}");
        let text = message(&error);
        assert!(text.starts_with(&format!("resmon answered GET /api/routines with {line}")), "{text}");
        assert!(!text.contains("internal error"), "{text}");
        assert!(error["detail"].get("outcome_unknown").is_none(), "{error}");
        assert_eq!(error["detail"]["status"], json!(status), "{error}");
    }
}

fn settings_call(session: &mut Session, value: &str) -> Value {
    tool_error(&session.call("update_settings", json!({"group": "ai", "settings": {"ai_model": value}})))
}

/// update_settings answered 500 after the value was saved: the group is
/// read back, and since it holds what was asked, the change is said as done.
#[test]
fn a_settings_write_answered_500_after_saving_reads_back_and_says_it_is_done() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::StoredThen(500, "text/plain".into(), "oops".into()));
    let error = settings_call(&mut session, "synthetic-model-2");
    assert_eq!(fake.state().setting("ai", "ai_model"), "synthetic-model-2", "the fake saved it");
    let text = message(&error);
    assert!(
        text.starts_with(
            "The ai settings now hold every value asked for (read back just now), although resmon answered \
             PUT /api/settings/ai with 500 Internal Server Error."
        ),
        "{text}"
    );
    assert!(text.contains("repeating the call is not needed"), "{text}");
    assert!(!text.contains("resmon saved"), "a save nobody saw is not claimed: {text}");
    assert_eq!(error["detail"]["applied"], json!(true), "{error}");
    assert!(error["detail"].get("outcome_unknown").is_none(), "{error}");
    assert_eq!(
        error["detail"]["read_back"]["ai_model"],
        json!({"asked": "synthetic-model-2", "now": "synthetic-model-2", "state": "set"}),
        "{error}"
    );
    assert_eq!(error["detail"]["changed"]["ai_model"]["to"], json!("synthetic-model-2"), "{error}");
    assert_eq!(fake.requests_to("PUT", "/api/settings/ai").len(), 1, "the PUT went once");
    assert_eq!(fake.requests_to("GET", "/api/settings/ai").len(), 2, "read before and once after");
}

/// A 5xx whose read-back shows the key as before, or holding another value,
/// or that cannot be read at all, stays an outcome not known, key by key.
#[test]
fn a_settings_write_answered_5xx_tells_each_key_as_the_read_back_shows_it() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    let before = fake.state().setting("ai", "ai_model");

    // Not stored: the value is as before.
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::Status(503, String::new()));
    let error = settings_call(&mut session, "synthetic-model-2");
    let text = message(&error);
    assert!(text.starts_with("resmon does not appear to have saved the change to the ai settings: resmon answered PUT /api/settings/ai with 503 Service Unavailable, and reading the group back shows `ai_model` unchanged."), "{text}");
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert_eq!(error["detail"]["read_back"]["ai_model"]["state"], json!("unchanged"), "{error}");
    assert_eq!(error["detail"]["read_back"]["ai_model"]["now"], json!(before), "{error}");

    // Stored, then overwritten (normalised, or another writer): neither value.
    fake.clear_faults();
    fake.state()
        .settings_side_effects
        .push(("/api/settings/ai".into(), json!({"ai_model": "normalised-model"})));
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::StoredThen(502, "text/plain".into(), String::new()));
    let error = settings_call(&mut session, "synthetic-model-3");
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert_eq!(
        error["detail"]["read_back"]["ai_model"],
        json!({"asked": "synthetic-model-3", "now": "normalised-model", "state": "other"}),
        "{error}"
    );
    assert!(message(&error).contains("`ai_model` holding another value"), "{error}");
    assert!(
        message(&error)
            .starts_with("resmon may have saved the change to the ai settings, in part or in another form"),
        "{error}"
    );
    fake.state().settings_side_effects.clear();

    // The read-back fails too: nothing is known of the group now.
    fake.clear_faults();
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::StoredThen(500, "text/plain".into(), String::new()));
    fake.set_fault_after("GET", "/api/settings/ai", 1, Fault::Status(500, String::new()));
    let error = settings_call(&mut session, "claude-opus-4-1");
    let text = message(&error);
    assert!(text.starts_with("resmon may have saved the change to the ai settings: resmon answered PUT /api/settings/ai with 500 Internal Server Error, and reading the group back failed as well"), "{text}");
    assert!(
        text.contains("Check the settings in the resmon app before calling update_settings again"),
        "{text}"
    );
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert_eq!(
        error["detail"]["read_back"]["ai_model"],
        json!({"asked": "claude-opus-4-1", "now": null, "state": "unknown"}),
        "{error}"
    );
    assert_eq!(fake.requests_to("PUT", "/api/settings/ai").len(), 3, "each PUT went once");

    // No status line at all (the connection closed): read back the same way,
    // and still said as the lost connection it was. Without a status line,
    // the old value does not say the change was not saved.
    fake.clear_faults();
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::CloseWithoutAnswer);
    let error = settings_call(&mut session, "synthetic-model-2");
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert!(
        message(&error).starts_with(
            "resmon may have saved the change to the ai settings, or may still be saving it: no status of \
             resmon's answer to PUT /api/settings/ai was read"
        ),
        "{error}"
    );
    assert_eq!(error["detail"]["read_back"]["ai_model"]["state"], json!("unchanged"), "{error}");
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
}

/// A create whose read-back is answered 5xx is still a create that happened:
/// applied, with the read-back's failure said after it.
#[test]
fn a_create_whose_read_back_is_answered_5xx_stays_applied() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    let id = fake.state().next_routine_id;
    fake.set_fault_for("GET", "/api/routines/{id}", Fault::Status(503, String::new()));
    let error = tool_error(&session.call("create_routine", serde_json::from_str(ROUTINE).unwrap()));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert!(
        message(&error).starts_with(&format!(
            "resmon created routine {id} (it answered 201), but reading it back failed: resmon answered GET \
             /api/routines/{id} with 503 Service Unavailable"
        )),
        "{error}"
    );
    assert_eq!(error["detail"]["applied"], json!(true), "{error}");
    assert!(error["detail"].get("outcome_unknown").is_none(), "{error}");
}

/// A write's status line that leaves the outcome unknown (a 5xx, a
/// redirect) is enough: the rest of the answer breaking off or stalling
/// after it does not turn the answer into a plain failure that invites a
/// retry. A 4xx cut short is still a refusal, and says so.
#[test]
fn a_write_whose_5xx_or_redirect_head_is_cut_short_is_still_an_outcome_not_known() {
    let head = |line: &str| {
        format!("HTTP/1.1 {line}\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n{{")
    };
    let cases = [
        (
            head("500 Internal Server Error"),
            Fault::Hang,
            "500 Internal Server Error, and the rest of its answer did not arrive before this call's deadline.",
        ),
        (
            head("502 Bad Gateway"),
            Fault::CloseWithoutAnswer,
            "502 Bad Gateway, and the connection closed before the rest of its answer arrived.",
        ),
        (
            head("303 See Other"),
            Fault::CloseWithoutAnswer,
            "303 See Other, and the connection closed before the rest of its answer arrived.",
        ),
    ];
    for (first, then, said) in cases {
        let fake = start_fake();
        let mut session = Session::initialized(&env_for(&fake));
        fake.set_fault_for("POST", "/api/routines", Fault::Preceded(first.clone(), Box::new(then)));
        let error = tool_error(&session.call("create_routine", serde_json::from_str(ROUTINE).unwrap()));
        let text = message(&error);
        assert!(
            text.starts_with(&format!(
                "resmon may have created a routine: it answered POST /api/routines with {said}"
            )),
            "{first:?}: {text}"
        );
        assert!(text.contains("list_routines shows whether it did"), "{text}");
        assert!(!text.to_lowercase().contains("try again"), "{text}");
        assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
        assert_eq!(fake.requests_to("POST", "/api/routines").len(), 1);
    }
    // A refusal's head is a refusal, whatever became of its body.
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    fake.set_fault_for(
        "POST",
        "/api/routines/8/run",
        Fault::Preceded(head("409 Conflict"), Box::new(Fault::CloseWithoutAnswer)),
    );
    let error = tool_error(&session.call("run_routine", json!({"routine_id": 8})));
    assert!(
        message(&error).starts_with("resmon refused POST /api/routines/8/run with 409 Conflict, so it did nothing, but the connection closed"),
        "{error}"
    );
    assert!(error["detail"].get("outcome_unknown").is_none(), "{error}");
}

/// update_settings reads its group back after every answer that leaves the
/// outcome unknown: a redirect, and a 5xx head whose body never came.
#[test]
fn a_settings_write_answered_with_a_redirect_or_a_cut_short_5xx_reads_the_group_back() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::RedirectTo(307, "/x?token=abc".into(), "{}".into()));
    let error = settings_call(&mut session, "synthetic-model-2");
    // The fake's redirect comes after the work: the group holds the value.
    assert_eq!(error["detail"]["read_back"]["ai_model"]["state"], json!("set"), "{error}");
    assert!(
        message(&error).contains("resmon answered PUT /api/settings/ai with 307 Temporary Redirect"),
        "{error}"
    );
    assert_eq!(fake.requests_to("GET", "/api/settings/ai").len(), 2, "read before and after");

    fake.clear_faults();
    let head = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 80\r\n\r\n{".to_string();
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::Preceded(head, Box::new(Fault::CloseWithoutAnswer)));
    let error = settings_call(&mut session, "synthetic-model-3");
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert_eq!(error["detail"]["read_back"]["ai_model"]["state"], json!("unchanged"), "{error}");
}

/// A status line that is not HTTP/1.x as a client reads it (another version,
/// a four-digit code) is no acceptance: nothing is said to have been created.
#[test]
fn a_malformed_status_line_is_no_acceptance() {
    for first in ["HTTP/1.2 201 Created\r\n\r\n", "HTTP/1.1 2010 Created\r\n\r\n"] {
        let fake = start_fake();
        let mut session = Session::initialized(&env_for(&fake));
        fake.set_fault_for(
            "POST",
            "/api/routines",
            Fault::Preceded(first.into(), Box::new(Fault::CloseWithoutAnswer)),
        );
        let error = tool_error(&session.call("create_routine", serde_json::from_str(ROUTINE).unwrap()));
        assert!(error["detail"].get("applied").is_none(), "{first:?}: {error}");
        assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{first:?}: {error}");
        assert!(message(&error).starts_with("resmon may have created a routine"), "{error}");
    }
}

/// A settings PUT whose answer never comes leaves time for the read-back
/// that tells what the group holds: the deadline does not swallow it.
#[test]
fn a_settings_write_that_stalls_past_the_deadline_is_still_read_back() {
    let fake = start_fake();
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), "1500".into()));
    let mut session = Session::initialized(&env);
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::Hang);
    let error = settings_call(&mut session, "synthetic-model-2");
    assert_eq!(error["detail"]["read_back"]["ai_model"]["state"], json!("unchanged"), "{error}");
    assert!(error["detail"].get("read_back_failure").is_none(), "the read-back had time: {error}");
    assert_eq!(fake.requests_to("GET", "/api/settings/ai").len(), 2, "read before and after");
}

/// A settings PUT still being worked on when the call's deadline cut it
/// off: no status line was read, so a read-back that shows the old value
/// shows only that the value was old then, never that it was not saved.
/// The fake saves it after its delay, as resmon did.
#[test]
fn a_settings_write_cut_off_before_its_status_line_is_never_said_not_saved() {
    let fake = start_fake();
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), "1500".into()));
    let mut session = Session::initialized(&env);
    let before = fake.state().setting("ai", "ai_model");
    // Well past the PUT's share of the deadline, so that the read-back
    // comes before the fake saves, however slow the machine.
    fake.set_fault_for("PUT", "/api/settings/ai", Fault::Slow(3000));
    let error = settings_call(&mut session, "synthetic-model-2");
    let text = message(&error);
    let first = text.find(". ").map_or(text, |end| &text[..=end]);
    assert_eq!(
        first,
        "resmon may have saved the change to the ai settings, or may still be saving it: no status of \
         resmon's answer to PUT /api/settings/ai was read, and reading the group back shows `ai_model` \
         still holding its old value.",
        "{text}"
    );
    assert!(text.contains("resmon may still have been working on the PUT"), "{text}");
    assert!(text.contains("the outcome is not known"), "{text}");
    for claim in ["not saved", "does not appear", "was not saved", "did not save"] {
        assert!(!text.contains(claim), "{claim:?}: {text}");
    }
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert!(error["detail"].get("applied").is_none(), "{error}");
    assert_eq!(
        error["detail"]["read_back"]["ai_model"],
        json!({"asked": "synthetic-model-2", "now": before, "state": "unchanged"}),
        "{error}"
    );
    assert_eq!(error["detail"]["changed"], json!({}), "{error}");
    assert!(error["detail"]["failure"].get("status").is_none(), "{error}");
    assert_eq!(fake.requests_to("PUT", "/api/settings/ai").len(), 1, "the PUT went once");
    // And resmon (here the fake) did save it once its delay was over.
    let saved = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while fake.state().setting("ai", "ai_model") != "synthetic-model-2" {
        assert!(std::time::Instant::now() < saved, "the fake never saved the slow PUT");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
