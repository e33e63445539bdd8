//! The per-call bound holds whatever the backend does (contract-notes 4):
//! a backend that accepts and never answers, trickles its head or its body a
//! byte at a time (so no single read ever waits long), stalls mid-body, or
//! answers slowly on a second request of the same call. Each test lowers
//! RESMON_MCP_TIMEOUT_MS and checks the rule: the call is answered, and the
//! answer says the bound in the server's own sentence. Times are checked only
//! against a wide guard (the bound plus 2 s) that catches a hang, never as a
//! figure; examples/bound.rs measures the overshoot (docs/performance.md).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::every_branch;
use crate::fake_backend::{FakeBackend, Fault};
use crate::harness::{Session, call_problems, env_for, error_payload, start_fake, structured, tool_error};

/// The faults no per-read timeout can end: only the call's deadline does.
fn stalls() -> [(&'static str, Fault); 4] {
    [
        ("Hang", Fault::Hang),
        ("TrickleHead", Fault::TrickleHead),
        ("TrickleBody", Fault::TrickleBody),
        ("StallMidBody", Fault::StallMidBody),
    ]
}

/// A session whose calls get `bound_ms` each.
fn session_with_bound(fake: &FakeBackend, bound_ms: u64) -> Session {
    let mut env = env_for(fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), bound_ms.to_string()));
    Session::initialized(&env)
}

/// How the server writes the bound in its sentences ("0.6 s").
fn said(bound_ms: u64) -> String {
    format!("{} s", bound_ms as f32 / 1000.0)
}

/// Whether a text carries the server's deadline sentence for this bound:
/// a request abandoned, an answer's rest not arrived, or a later request
/// not sent, each "before this call's 0.6 s deadline".
fn names_the_bound(text: &str, bound_ms: u64) -> bool {
    text.contains(&format!("before this call's {} deadline", said(bound_ms)))
}

/// One `tools/call`, its answer held to the documented shapes, and the time
/// it took checked against the hang guard only.
fn timed_call(session: &mut Session, tool: &str, arguments: &Value, bound_ms: u64) -> (Value, Duration) {
    let started = Instant::now();
    let answer = session.request("tools/call", json!({"name": tool, "arguments": arguments}));
    let took = started.elapsed();
    let problems = call_problems(tool, &answer);
    assert!(problems.is_empty(), "{tool}: {}\n{answer}", problems.join("; "));
    let guard = Duration::from_millis(bound_ms) + Duration::from_secs(2);
    assert!(took < guard, "{tool} answered after {took:?}, past the hang guard {guard:?}: {answer}");
    (answer["result"].clone(), took)
}

#[test]
fn a_request_that_never_completes_ends_at_the_bound_in_discovery_and_after() {
    const BOUND_MS: u64 = 400;
    for (name, fault) in stalls() {
        for discovered in [false, true] {
            let fake = start_fake();
            let mut session = session_with_bound(&fake, BOUND_MS);
            if discovered {
                structured(&session.call("health", json!({})));
            }
            fake.clear_requests();
            fake.set_fault(fault.clone());
            let (result, _) = timed_call(&mut session, "list_routines", &json!({}), BOUND_MS);
            let error = tool_error(&result);
            assert_eq!(error["error"], "backend_unavailable", "{name}, discovered {discovered}: {error}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(names_the_bound(message, BOUND_MS), "{name}, discovered {discovered}: {message}");
            // Discovery that stalled sends nothing more; a stalled request is
            // sent once and not again.
            let sent: Vec<String> =
                fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
            let expected = if discovered { "GET /api/routines" } else { "GET /api/health" };
            assert_eq!(sent, vec![expected.to_string()], "{name}, discovered {discovered}");
            // The session goes on once the backend answers again.
            fake.clear_faults();
            structured(&session.call("list_routines", json!({})));
        }
    }
}

#[test]
fn every_tool_answers_within_the_bound_under_every_stall() {
    const BOUND_MS: u64 = 300;
    std::thread::scope(|scope| {
        for (name, fault) in stalls() {
            scope.spawn(move || {
                let fake = start_fake();
                let mut session = session_with_bound(&fake, BOUND_MS);
                for (tool, arguments) in every_branch(&fake.runtime_id()) {
                    fake.clear_faults();
                    structured(&session.call("health", json!({})));
                    fake.set_fault(fault.clone());
                    let (result, _) = timed_call(&mut session, tool, &arguments, BOUND_MS);
                    // An error says the bound; a success whose secondary
                    // route stalled says it where it reports that route.
                    let text = match error_payload(&result) {
                        Some(error) => error.to_string(),
                        None => result["structuredContent"].to_string(),
                    };
                    assert!(names_the_bound(&text, BOUND_MS), "{name} × {tool} {arguments}: {result}");
                }
            });
        }
    });
}

#[test]
fn a_slow_second_request_shares_the_call_s_deadline() {
    const BOUND_MS: u64 = 600;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    structured(&session.call("health", json!({})));
    // Each answer alone fits the bound; the routine's and its audit's
    // together do not.
    fake.set_fault_for("GET", "/api/routines/{id}", Fault::Slow(400));
    fake.set_fault_for("GET", "/api/routines/{id}/coverage", Fault::Slow(400));
    fake.clear_requests();
    let (result, _) = timed_call(&mut session, "get_routine", &json!({"routine_id": 7}), BOUND_MS);
    let answer = structured(&result);
    assert_eq!(answer["id"], 7, "the primary route answered in time: {answer}");
    let coverage = answer["coverage_unavailable"].as_str().unwrap_or_default();
    assert!(names_the_bound(coverage, BOUND_MS), "{answer}");
    let delivery = answer["delivery_unavailable"].as_str().unwrap_or_default();
    assert!(names_the_bound(delivery, BOUND_MS) && delivery.contains("was not sent"), "{answer}");
    // Said of no made-up address: the cache was dropped, not forgotten.
    assert!(!delivery.contains("resmon at resmon"), "{answer}");
    assert!(
        fake.requests_to("GET", "/api/routines/7/deliveries").is_empty(),
        "a request was sent after the call's deadline had passed"
    );
}

#[test]
fn discovery_and_the_call_s_request_share_one_deadline() {
    const BOUND_MS: u64 = 600;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    fake.set_fault_for("GET", "/api/health", Fault::Slow(400));
    fake.set_fault_for("GET", "/api/routines", Fault::Slow(400));
    let (result, _) = timed_call(&mut session, "list_routines", &json!({}), BOUND_MS);
    let error = tool_error(&result);
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert!(names_the_bound(error["message"].as_str().unwrap_or_default(), BOUND_MS), "{error}");
    assert_eq!(fake.requests_to("GET", "/api/routines").len(), 1);
}

#[test]
fn a_write_s_read_back_that_stalls_ends_at_the_bound() {
    const BOUND_MS: u64 = 1000;
    for (name, fault) in [("TrickleBody", Fault::TrickleBody), ("Slow", Fault::Slow(1500))] {
        let fake = start_fake();
        let mut session = session_with_bound(&fake, BOUND_MS);
        structured(&session.call("health", json!({})));
        // The group's first read answers; the read after the write stalls.
        fake.set_fault_after("GET", "/api/settings/ai", 1, fault.clone());
        let arguments = json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}});
        let (result, _) = timed_call(&mut session, "update_settings", &arguments, BOUND_MS);
        let error = tool_error(&result);
        assert!(names_the_bound(&error.to_string(), BOUND_MS), "{name}: {error}");
        assert_eq!(fake.requests_to("PUT", "/api/settings/ai").len(), 1, "{name}: the write was sent once");
        assert_eq!(fake.requests_to("GET", "/api/settings/ai").len(), 2, "{name}: read, then read back");

        // A create whose read-back stalls: the create was sent once.
        fake.clear_faults();
        fake.set_fault_for("GET", "/api/routines/{id}", fault.clone());
        let arguments = json!({"name": "Synthetic routine", "keywords": ["graph attention"],
            "sources": ["arxiv"], "schedule": "0 8 * * 1"});
        let (result, _) = timed_call(&mut session, "create_routine", &arguments, BOUND_MS);
        let error = tool_error(&result);
        assert!(names_the_bound(&error.to_string(), BOUND_MS), "{name}: {error}");
        assert_eq!(fake.requests_to("POST", "/api/routines").len(), 1, "{name}");
    }
}

#[test]
fn a_paged_read_whose_pages_are_slow_stops_within_the_bound() {
    const BOUND_MS: u64 = 700;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    structured(&session.call("health", json!({})));
    fake.set_fault_for("GET", "/api/executions", Fault::Slow(250));
    // Whatever it makes of the pages it got, it answers in time.
    timed_call(&mut session, "list_executions", &json!({"routine_id": 7}), BOUND_MS);
    assert!(!fake.requests_to("GET", "/api/executions").is_empty());
}

/// A write goes out only with its margin left at the moment it is sent:
/// discovery that used most of the call leaves it unsent, said as a lack of
/// time, not as resmon failing to answer (contract-notes 4).
#[test]
fn a_write_is_not_sent_when_discovery_used_its_margin() {
    const BOUND_MS: u64 = 2000;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    fake.set_fault_for("GET", "/api/health", Fault::Slow(1750));
    let runs = fake.state().executions.len();
    let (result, _) = timed_call(&mut session, "run_routine", &json!({"routine_id": 8}), BOUND_MS);
    let error = tool_error(&result);
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("Only "), "{message}");
    assert!(
        message.contains("before this call's 2 s deadline when POST /api/routines/8/run was due"),
        "{message}"
    );
    assert!(message.contains("it was not sent and changed nothing"), "{message}");
    assert_eq!(error["detail"]["sent"], json!(false), "{error}");
    assert!(error["detail"].get("outcome_unknown").is_none(), "{error}");
    assert_eq!(error["tried"], json!([fake.base_url()]), "{error}");
    assert!(fake.requests_to("POST", "/api/routines/8/run").is_empty(), "the write was sent");
    assert_eq!(fake.state().executions.len(), runs);
}

/// A read that sends its question in a POST needs only a read's moment of
/// the call, not a write's margin: after the same slow discovery the search
/// still goes out and is answered (contract-notes 4 and 26).
#[test]
fn a_read_that_posts_is_sent_where_a_write_would_not_be() {
    const BOUND_MS: u64 = 2000;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    fake.set_fault_for("GET", "/api/health", Fault::Slow(1750));
    let (result, _) = timed_call(&mut session, "search_corpus", &json!({"query": "synthetic"}), BOUND_MS);
    structured(&result);
    assert_eq!(fake.requests_to("POST", "/api/explorer/search").len(), 1, "the search was not sent");
}

/// The same after the one resend: a 401 token_invalid leads to a second
/// discovery, and the write goes out again only with its margin left.
#[test]
fn a_write_is_not_resent_when_rediscovery_used_its_margin() {
    const BOUND_MS: u64 = 2000;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    structured(&session.call("health", json!({})));
    fake.clear_requests();
    fake.restart_with_new_token();
    fake.set_fault_for("GET", "/api/health", Fault::Slow(1700));
    let runs = fake.state().executions.len();
    let (result, _) = timed_call(&mut session, "run_routine", &json!({"routine_id": 8}), BOUND_MS);
    let error = tool_error(&result);
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("when POST /api/routines/8/run was due"), "{message}");
    assert_eq!(error["detail"]["sent"], json!(false), "{error}");
    let posts = fake.requests_to("POST", "/api/routines/8/run");
    assert_eq!(posts.len(), 1, "refused once by the guard, not sent again");
    assert_eq!(posts[0].status, 401);
    assert_eq!(fake.requests_to("GET", "/api/health").len(), 1, "rediscovered once");
    assert_eq!(fake.state().executions.len(), runs);
}

/// A settings write whose first read left too little of the call: the PUT
/// is not sent, the sentence says the time left was too short (every
/// request sent was answered), and `tried` holds URLs only.
#[test]
fn a_settings_write_refused_for_lack_of_margin_says_so() {
    const BOUND_MS: u64 = 1000;
    let fake = start_fake();
    let mut session = session_with_bound(&fake, BOUND_MS);
    structured(&session.call("health", json!({})));
    fake.set_fault_for("GET", "/api/settings/ai", Fault::Slow(800));
    let arguments = json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}});
    let (result, _) = timed_call(&mut session, "update_settings", &arguments, BOUND_MS);
    let error = tool_error(&result);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("before this call's 1 s deadline when PUT /api/settings/ai was due"),
        "{message}"
    );
    assert!(!message.contains("did not finish") && !message.contains("did not answer"), "{message}");
    assert_eq!(error["tried"], json!([fake.base_url()]), "{error}");
    assert!(fake.requests_to("PUT", "/api/settings/ai").is_empty());
}
