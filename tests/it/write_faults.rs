//! A write resmon accepted is never reported as a failure (contract-notes
//! 26): whatever goes wrong after its 2xx status line, the answer opens with
//! what resmon did and says whether to repeat the call. Also what settings
//! answers may echo (no credential-shaped key's value), and messages that
//! claim only what resmon said (a duplicate sweep, a profile without an
//! ORCID, a refused boolean, an unreadable group).
//!
//! Each test checks what the fake received: a write sent once, never again.

use serde_json::{Value, json};

use crate::fake_backend::Fault;
use crate::harness::{Fake, Session, env_for, start_fake, structured, tool_error};

/// A session whose calls get `bound_ms` each.
fn bench_with_bound(bound_ms: u64) -> Bench {
    let fake = start_fake();
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), bound_ms.to_string()));
    let session = Session::initialized(&env);
    Bench { session, fake }
}

struct Bench {
    session: Session,
    fake: Fake,
}

fn bench() -> Bench {
    let fake = start_fake();
    let session = Session::initialized(&env_for(&fake));
    Bench { session, fake }
}

impl Bench {
    fn error(&mut self, tool: &str, arguments: Value) -> Value {
        tool_error(&self.session.call(tool, arguments))
    }

    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        structured(&self.session.call(tool, arguments)).clone()
    }

    fn count(&self, method: &str, path: &str) -> usize {
        self.fake.requests_to(method, path).len()
    }

    /// A fresh start for the next case: no fault but this one, and no
    /// request recorded yet.
    fn fault_only(&self, method: &str, path: &str, fault: Fault) {
        self.fake.clear_faults();
        self.fake.clear_requests();
        self.fake.set_fault_for(method, path, fault);
    }

    /// A write that resmon carried out and whose answer then went wrong: an
    /// `upstream_error` that keeps the rule of `assert_applied`.
    fn applied_error(&mut self, tool: &str, arguments: Value, opening: &str) -> Value {
        let error = self.error(tool, arguments);
        assert_eq!(error["error"], "upstream_error", "{error}");
        assert_applied(&error, opening);
        error
    }

    /// The next create's read-back of its routine (`GET /api/routines/{id}`)
    /// answered with `fault`; returns the id that routine will get.
    fn read_back_fault(&self, fault: Fault) -> i64 {
        let id = self.fake.state().next_routine_id;
        self.fake.set_fault_for("GET", "/api/routines/{id}", fault);
        id
    }
}

fn message(error: &Value) -> &str {
    error["message"].as_str().unwrap()
}

/// An answer whose `detail` sentence says `says` and never `never`.
fn assert_detail_says(answer: &Value, says: &str, never: &str) {
    let detail = answer["detail"].as_str().unwrap();
    assert!(detail.contains(says), "{answer}");
    assert!(!detail.contains(never), "{answer}");
}

/// The rule every error after acceptance keeps.
fn assert_applied(error: &Value, opening: &str) {
    assert!(message(error).starts_with(opening), "expected to open with {opening:?}: {error}");
    assert_eq!(error["detail"]["applied"], json!(true), "{error}");
    assert!(error["detail"].get("outcome_unknown").is_none(), "a status line arrived: {error}");
    assert_ne!(error["error"], "not_found", "{error}");
}

const ROUTINE: &str = r#"{"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"}"#;

fn routine_arguments() -> Value {
    serde_json::from_str(ROUTINE).unwrap()
}

// ------------------------------------------------------------------ read-back after a create

#[test]
fn a_created_routine_whose_read_back_is_404_opens_with_its_creation() {
    let mut bench = bench();
    let id = bench.read_back_fault(Fault::Status(404, r#"{"detail": "Routine not found"}"#.into()));
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], "upstream_error", "never the read-back's not_found: {error}");
    assert_applied(
        &error,
        &format!(
            "resmon created routine {id} (it answered 201), but reading it back failed: Routine not found. Do \
             not call create_routine again"
        ),
    );
    // get_routine just failed to show it, so it is not said to show it.
    assert!(
        message(&error).ends_with(&format!(
            "Do not call create_routine again: routine {id} was created even though its read-back did not show it, \
             and get_routine may show it once resmon answers for it."
        )),
        "{error}"
    );
    assert!(!message(&error).contains("get_routine shows it"), "{error}");
    assert_eq!(error["detail"]["id"], json!(id));
    assert_eq!(error["detail"]["failure"]["status"], json!(404), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1, "created once, never re-sent");
    assert!(bench.fake.state().routine(id).is_some(), "the routine exists in resmon");
}

#[test]
fn a_read_back_that_loses_the_connection_is_backend_unavailable_and_still_applied() {
    failed_read_back(Fault::CloseWithoutAnswer, "backend_unavailable");
}

/// A create whose read-back failed with `fault`: the error carries `code`,
/// opens with the creation, keeps the new id, and the create was sent once.
fn failed_read_back(fault: Fault, code: &str) -> Value {
    let mut bench = bench();
    let id = bench.read_back_fault(fault);
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], code, "{error}");
    assert_applied(
        &error,
        &format!("resmon created routine {id} (it answered 201), but reading it back failed"),
    );
    assert_eq!(error["detail"]["id"], json!(id));
    assert_eq!(bench.count("POST", "/api/routines"), 1, "created once, never re-sent");
    error
}

// ------------------------------------------------------------------ 2xx answers of another shape

#[test]
fn a_write_answered_in_an_unexpected_shape_says_what_resmon_did() {
    let mut bench = bench();
    let profile_id = bench.fake.state().next_profile_id;
    let cases: [(&str, Value, &str, &str, Fault, &str); 7] = [
        (
            "run_sweep",
            json!({"query": "graph attention", "sources": ["arxiv"]}),
            "POST",
            "/api/search/sweep",
            Fault::RenameKey("execution_id".into(), "id".into()),
            "resmon accepted the one-off search (it answered 200), but its answer did not carry an \
             integer `execution_id` (it gave `id`: ",
        ),
        (
            "run_sweep",
            json!({"query": "graph attention", "sources": ["arxiv"]}),
            "POST",
            "/api/search/sweep",
            Fault::NonJson200,
            "resmon accepted the one-off search (it answered 200), but it answered with a body that is not JSON.",
        ),
        (
            "run_sweep",
            json!({"query": "graph attention", "sources": ["arxiv"]}),
            "POST",
            "/api/search/sweep",
            Fault::Status(200, String::new()),
            "resmon accepted the one-off search (it answered 200), but it answered with an empty body (status \
             200) where JSON was expected.",
        ),
        (
            "run_routine",
            json!({"routine_id": 8}),
            "POST",
            "/api/routines/8/run",
            Fault::DropKey("execution_id".into()),
            "resmon started or queued a run of routine 8 (it answered 200), but its answer did not carry an \
             integer `execution_id` for a started run",
        ),
        (
            "create_watch_profile",
            json!({"name": "Ada Example"}),
            "POST",
            "/api/profiles",
            Fault::DropKey("id".into()),
            "resmon created a watch profile (it answered 201), but its answer did not carry an integer `id`",
        ),
        (
            "activate_routine",
            json!({"routine_id": 7}),
            "POST",
            "/api/routines/7/activate",
            Fault::RenameKey("is_active".into(), "active".into()),
            "resmon activated routine 7 (it answered 200), but its answer did not carry a boolean `is_active`.",
        ),
        (
            "create_routine",
            routine_arguments(),
            "POST",
            "/api/routines",
            Fault::RenameKey("id".into(), "routine_id".into()),
            "resmon created a routine (it answered 201), but its answer did not carry an integer `id` (it \
             gave `routine_id`: ",
        ),
    ];
    for (tool, arguments, method, path, fault, opening) in cases {
        bench.fake.clear_requests();
        bench.fake.set_fault_for(method, path, fault.clone());
        let error = bench.error(tool, arguments);
        bench.fake.clear_faults();
        assert_eq!(error["error"], "upstream_error", "{tool} {fault:?}: {error}");
        assert_applied(&error, opening);
        assert_eq!(bench.count(method, path), 1, "{tool}: sent once");
        let detail = &error["detail"];
        match tool {
            // The id comes only from the route's own key.
            "activate_routine" => assert_eq!(detail["id"], json!(7), "{error}"),
            _ => {
                assert!(detail.get("id").is_none(), "{tool}: a number under another key is no id: {error}");
                assert!(detail.get("execution_id").is_none(), "{tool}: {error}");
            }
        }
        let repeat = match tool {
            "activate_routine" => "It is done, and repeating the call is not needed",
            _ => "Do not call",
        };
        assert!(message(&error).contains(repeat), "{tool}: {error}");
    }
    // The renamed numbers were quoted as resmon's answer.
    assert!(bench.fake.state().next_profile_id > profile_id, "the profile was created");
}

#[test]
fn a_number_under_another_key_is_quoted_in_detail_not_taken_for_the_id() {
    let mut bench = bench();
    let id = bench.fake.state().next_routine_id;
    bench.fake.set_fault_for("POST", "/api/routines", Fault::RenameKey("id".into(), "routine_id".into()));
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["detail"]["answered"], json!({"routine_id": id}), "{error}");
    assert!(error["detail"].get("id").is_none(), "{error}");
    assert_eq!(bench.count("GET", &format!("/api/routines/{id}")), 0, "no read-back of a guessed id");
}

// ------------------------------------------------------------------ a 2xx whose body breaks off

#[test]
fn a_write_whose_answer_breaks_off_says_it_was_accepted() {
    let mut bench = bench();
    let cases: [(&str, Value, &str, &str, &str); 6] = [
        (
            "run_sweep",
            json!({"query": "graph attention", "sources": ["arxiv"]}),
            "POST",
            "/api/search/sweep",
            "resmon accepted the one-off search (it answered 200), but its answer broke off",
        ),
        (
            "run_routine",
            json!({"routine_id": 8}),
            "POST",
            "/api/routines/8/run",
            "resmon started or queued a run of routine 8 (it answered 200), but its answer broke off",
        ),
        (
            "create_routine",
            routine_arguments(),
            "POST",
            "/api/routines",
            "resmon created a routine (it answered 201), but its answer broke off",
        ),
        (
            "create_watch_profile",
            json!({"name": "Ada Example"}),
            "POST",
            "/api/profiles",
            "resmon created a watch profile (it answered 201), but its answer broke off",
        ),
        (
            "activate_routine",
            json!({"routine_id": 7}),
            "POST",
            "/api/routines/7/activate",
            "resmon activated routine 7 (it answered 200), but its answer broke off",
        ),
        (
            "deactivate_routine",
            json!({"routine_id": 7}),
            "POST",
            "/api/routines/7/deactivate",
            "resmon deactivated routine 7 (it answered 200), but its answer broke off",
        ),
    ];
    for (tool, arguments, method, path, opening) in cases {
        bench.fake.clear_requests();
        bench.fake.set_fault_for(method, path, Fault::BreakOff(11));
        let error = bench.error(tool, arguments);
        bench.fake.clear_faults();
        assert_eq!(error["error"], "upstream_error", "{tool}: {error}");
        assert_applied(&error, opening);
        assert_eq!(error["detail"]["failure"]["body_unread"], json!("broke_off"), "{tool}: {error}");
        assert!(error["detail"].get("id").is_none() && error["detail"].get("execution_id").is_none());
        assert_eq!(bench.count(method, path), 1, "{tool}: sent once");
    }
    // The run did start in resmon, as the answer said it may have.
    assert!(bench.fake.state().running_execution_of(8).is_some());
}

#[test]
fn update_settings_never_reads_the_puts_body_and_always_reads_back() {
    let mut bench = bench();
    let arguments = json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}});
    bench.fake.set_fault_for("PUT", "/api/settings/ai", Fault::BreakOff(5));
    let answer = bench.ok("update_settings", arguments);
    assert_eq!(
        answer["changed"],
        json!({"ai_model": {"from": "claude-sonnet-4-5", "to": "synthetic-model-2"}}),
        "{answer}"
    );
    // Its body is not waited for, so nothing is said of it.
    assert!(!answer["detail"].as_str().unwrap().contains("could not be read"), "{answer}");
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1);
    assert_eq!(bench.count("GET", "/api/settings/ai"), 2, "read before and after");

    bench.fake.clear_faults();
    bench.fake.override_response(
        "PUT",
        "/api/settings/assistant",
        200,
        &[("Content-Type", "text/plain")],
        "saved",
    );
    let answer =
        bench.ok("update_settings", json!({"group": "assistant", "settings": {"assistant_effort": "low"}}));
    assert_eq!(answer["requested"], json!({"assistant_effort": "low"}));
    assert!(!answer["detail"].as_str().unwrap().contains("could not be read"), "{answer}");
}

#[test]
fn a_settings_read_back_that_fails_is_never_not_found() {
    let error =
        settings_read_back_failed(Fault::Status(404, r#"{"detail": "No such settings group"}"#.into()));
    assert_eq!(error["detail"]["requested"], json!({"ai_model": "synthetic-model-3"}));
}

/// An ai settings write whose read-back (the group's second GET) answered
/// with `fault`: an error after the accepted PUT, sent once, that says which
/// values resmon kept is not known.
fn settings_read_back_failed(fault: Fault) -> Value {
    let mut bench = bench();
    bench.fake.set_fault_after("GET", "/api/settings/ai", 1, fault);
    let error = bench.applied_error(
        "update_settings",
        json!({"group": "ai", "settings": {"ai_model": "synthetic-model-3"}}),
        "resmon accepted the change to the ai settings (it answered 200), but reading the group back failed",
    );
    assert!(message(&error).contains("which values resmon kept is not known"), "{error}");
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1, "put once, never again");
    assert_eq!(bench.count("GET", "/api/settings/ai"), 2, "read before the PUT and once after");
    error
}

// ------------------------------------------------------------------ credential-shaped keys

#[test]
fn a_credential_shaped_key_of_the_group_is_named_but_never_shown() {
    let fake = start_fake();
    {
        let mut state = fake.state();
        state.answer_mut("/api/settings/email")["smtp_password"] = json!("old-secret-4117");
        state
            .settings_side_effects
            .push(("/api/settings/email".into(), json!({"smtp_password": "new-secret-4118"})));
    }
    let mut session = Session::initialized(&env_for(&fake));
    let answer = structured(
        &session
            .call("update_settings", json!({"group": "email", "settings": {"smtp_from": "me@example.org"}})),
    )
    .clone();
    assert_eq!(answer["changed"]["smtp_password"], json!({"withheld": true}), "{answer}");
    assert!(answer["changed"]["smtp_from"]["to"] == "me@example.org", "{answer}");
    assert!(answer["detail"].as_str().unwrap().contains("smtp_password"), "named as a side effect: {answer}");
    // A refusal that lists the group's keys names it, without its value.
    let error = tool_error(
        &session.call("update_settings", json!({"group": "email", "settings": {"smtp_form": "x"}})),
    );
    assert!(error["detail"]["group_keys"].as_array().unwrap().contains(&json!("smtp_password")), "{error}");
    let transcript = session.transcript.join("\n");
    let (_, stderr) = session.finish();
    for text in [&transcript, &stderr] {
        assert!(!text.contains("secret-411"), "a credential value was shown: {text}");
    }
    assert_eq!(fake.state().setting("email", "smtp_password"), "new-secret-4118", "the fake did change it");
}

#[test]
fn the_changed_description_says_a_credential_shaped_key_is_withheld() {
    let schema = resmon_mcp::tools::output_schema("update_settings").unwrap();
    let description = schema["properties"]["changed"]["description"].as_str().unwrap();
    assert!(description.contains(r#"{"withheld": true}"#), "{description}");
}

// ------------------------------------------------------------------ claims from what resmon said

#[test]
fn a_duplicate_sweep_is_said_as_resmons_answer_not_as_a_new_run() {
    let mut bench = bench();
    let runs = bench.fake.state().executions.len();
    bench.fake.state().sweep_duplicate_of = Some(119);
    let answer = bench.ok("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]}));
    assert_eq!(answer["execution_id"], json!(119));
    assert_eq!(answer["duplicate"], json!(true));
    let detail = answer["detail"].as_str().unwrap();
    assert!(detail.starts_with("resmon answered with run 119 and `duplicate: true`"), "{detail}");
    assert!(!detail.contains("already has this search"), "resmon matches repeats by request id: {detail}");
    assert!(!detail.contains("Run 119 started"), "{detail}");
    assert!(detail.contains("started no new run"), "{detail}");
    assert_eq!(bench.fake.state().executions.len(), runs, "the fake started nothing");
    assert_eq!(bench.count("POST", "/api/search/sweep"), 1);
}

#[test]
fn a_profile_stored_without_an_orcid_is_never_said_to_have_one() {
    let mut bench = bench();
    bench.fake.set_fault_for(
        "POST",
        "/api/profiles",
        Fault::SetKeys(json!({
            "identifiers": {"openalex": {"value": "A5000000001", "cited": "resmon's lookup"}},
            "basis_warning": null,
        })),
    );
    let answer = bench.ok("create_watch_profile", json!({"name": "Ada Example"}));
    assert_eq!(answer["basis_warning"], Value::Null, "resmon gave none: {answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(!detail.contains("with an ORCID"), "{detail}");
    assert!(detail.contains("no ORCID") && detail.contains("`openalex`"), "{detail}");
    assert!(detail.contains("gave no basis warning"), "{detail}");

    // With an ORCID stored and no warning, the sentence says what the answer
    // shows and claims nothing about how firm matches will be.
    bench.fake.clear_faults();
    let answer = bench.ok(
        "create_watch_profile",
        json!({"name": "Ada Example", "orcid": "0000-0002-1825-0097", "orcid_cited": "Her homepage",
               "affiliations": ["Example University"]}),
    );
    assert_detail_says(&answer, "shows an ORCID among its identifiers", "rest on the identifier");
}

#[test]
fn a_created_profile_carries_only_what_resmon_returned() {
    let mut bench = bench();
    let orcid = json!({"name": "Ada Example", "orcid": "0000-0002-1825-0097"});
    // resmon answered with its id alone: no warning is invented from what
    // was sent, and no ORCID is claimed, though the caller gave one.
    let id = bench.fake.state().next_profile_id;
    bench.fake.set_fault_for("POST", "/api/profiles", Fault::Status(201, format!(r#"{{"id": {id}}}"#)));
    let answer = bench.ok("create_watch_profile", orcid.clone());
    assert_eq!(answer["basis_warning"], Value::Null, "{answer}");
    assert_eq!(answer["profile"], json!({"id": id}), "nothing added to resmon's row: {answer}");
    assert_eq!(
        answer["detail"],
        json!(format!(
            "Watch profile {id} was created. resmon gave no basis warning, and its answer did not show the \
             profile's identifiers; get_profile_matches shows the basis of each match."
        )),
        "{answer}"
    );
    assert!(crate::harness::output_problems("create_watch_profile", &answer).is_empty());
    // An identifier resmon returned is named as returned, with no claim
    // about what matches can rest on.
    bench.fake.set_fault_for(
        "POST",
        "/api/profiles",
        Fault::Status(201, format!(r#"{{"id": {id}, "identifiers": {{"orcid": "bogus"}}}}"#)),
    );
    let answer = bench.ok("create_watch_profile", orcid);
    assert_eq!(answer["basis_warning"], Value::Null, "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.contains(
            "resmon gave no basis warning, and its answer shows an ORCID among its identifiers (`orcid`)"
        ),
        "{detail}"
    );
    assert!(!detail.contains("rest on") && !detail.contains("created with an ORCID"), "{detail}");
    assert_eq!(bench.count("POST", "/api/profiles"), 2);
}

#[test]
fn a_refused_boolean_does_not_claim_that_nothing_was_sent() {
    let mut bench = bench();
    bench.fake.clear_requests();
    let error = bench
        .error("update_settings", json!({"group": "notifications", "settings": {"notify_manual": "yes"}}));
    assert_eq!(error["error"], "invalid_argument");
    assert!(!message(&error).contains("Nothing was sent"), "the GET was sent: {error}");
    assert!(message(&error).contains("no change was sent"), "{error}");
    assert_eq!(bench.count("GET", "/api/settings/notifications"), 1);
    assert_eq!(bench.count("PUT", "/api/settings/notifications"), 0);
}

#[test]
fn an_unreadable_group_names_what_that_group_should_hold() {
    let mut bench = bench();
    bench.fake.set_fault_for("GET", "/api/settings/ai", Fault::NullsBody200);
    let error = bench.error("update_settings", json!({"group": "ai", "settings": {"ai_model": "m"}}));
    assert!(message(&error).contains("an object holding the group's keys"), "{error}");
    assert!(!message(&error).contains("`settings` object"), "the ai group is flat: {error}");
    bench.fake.set_fault_for("GET", "/api/settings/embeddings", Fault::NullsBody200);
    let error = bench.error(
        "update_settings",
        json!({"group": "embeddings", "settings": {"embedding_model": "all-minilm"}}),
    );
    assert!(message(&error).contains("`settings` object"), "{error}");
    assert_eq!(bench.count("PUT", "/api/settings/ai") + bench.count("PUT", "/api/settings/embeddings"), 0);
}

// ------------------------------------------------------------------ credential values at any depth

#[test]
fn a_credential_shaped_key_nested_in_a_group_value_is_withheld_in_the_diff() {
    let mut bench = bench();
    bench.fake.set_fault_after(
        "GET",
        "/api/settings/ai",
        1,
        Fault::SetKeys(json!({"provider_config": {"anthropic_api_key": "sk-ant-LEAKED-7", "region": "eu"}})),
    );
    let answer =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}}));
    assert_eq!(
        answer["changed"]["provider_config"],
        json!({"from": null, "to": {"anthropic_api_key": {"withheld": true}, "region": "eu"}}),
        "{answer}"
    );
    assert!(crate::harness::output_problems("update_settings", &answer).is_empty());
    assert!(!answer.to_string().contains("LEAKED"), "{answer}");
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1);
}

#[test]
fn records_echoed_from_resmon_never_show_a_credential_value() {
    let mut bench = bench();
    let id = bench.read_back_fault(Fault::SetKeys(json!({
        "webhook_secret": "SECRET-R-3",
        "storage_settings": "{\"auth_header\": \"Bearer SECRET-R-4\", \"folder\": \"papers\"}",
        "notes": "{\"hooks\": [{\"api_token\": \"SECRET-R-5\"}]}",
        "max_tokens": 4096,
    })));
    let created = bench.ok("create_routine", routine_arguments());
    let routine = &created["routine"];
    assert_eq!(routine["webhook_secret"], json!({"withheld": true}), "{created}");
    // A header's name is no credential; the token in its value is.
    assert_eq!(
        routine["storage_settings"],
        json!({"auth_header": "Bearer <withheld>", "folder": "papers"}),
        "{created}"
    );
    // JSON text under an ordinary key is read, and written out again withheld.
    assert_eq!(routine["notes"], json!(r#"{"hooks":[{"api_token":{"withheld":true}}]}"#), "{created}");
    assert_eq!(routine["parameters"]["keywords"], json!(["k"]), "search terms are no credential");
    assert_eq!(routine["max_tokens"], json!(4096), "nor is a count of tokens");
    assert!(crate::harness::output_problems("create_routine", &created).is_empty());
    // get_routine shows the same record by the same rule.
    let shown = bench.ok("get_routine", json!({"routine_id": id}));
    assert_eq!(shown["webhook_secret"], json!({"withheld": true}), "{shown}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);

    bench.fake.set_fault_for(
        "POST",
        "/api/profiles",
        Fault::SetKeys(json!({"api_token": "SECRET-P-1", "notes": {"smtp_password": "SECRET-P-2"}})),
    );
    let profile = bench.ok("create_watch_profile", json!({"name": "Ada Example"}));
    assert_eq!(profile["profile"]["api_token"], json!({"withheld": true}), "{profile}");
    assert_eq!(profile["profile"]["notes"], json!({"smtp_password": {"withheld": true}}), "{profile}");
    let transcript = bench.session.transcript.join("\n");
    assert!(!transcript.contains("SECRET-"), "a credential value was shown: {transcript}");
}

// ------------------------------------------------------------------ a group answer of another shape

#[test]
fn a_group_read_in_an_unexpected_shape_is_resmons_not_the_callers() {
    let mut bench = bench();
    for body in [r#"{"settings": {"ai_model": "a"}}"#, r#"{"success": true}"#] {
        bench.fake.set_fault_for("GET", "/api/settings/ai", Fault::Status(200, body.into()));
        let error = bench.error("update_settings", json!({"group": "ai", "settings": {"ai_model": "m"}}));
        assert_eq!(error["error"], "upstream_error", "never the caller's key: {error}");
        assert!(
            message(&error)
                .starts_with("resmon answered GET /api/settings/ai with an object whose keys are `"),
            "{error}"
        );
        assert!(message(&error).contains("none of them a setting this server knows"), "{error}");
        assert!(!message(&error).contains("is not a setting of"), "{error}");
        let key = if body.contains("success") { "success" } else { "settings" };
        assert_eq!(error["detail"]["keys"], json!([key]), "{error}");
        assert!(error["detail"].get("applied").is_none(), "nothing was written: {error}");
    }
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 0, "refused before the PUT");
}

#[test]
fn a_read_back_in_another_shape_is_an_error_after_acceptance_not_a_diff() {
    let mut bench = bench();
    let cases = [
        (
            Fault::Status(200, r#"{"settings": {"ai_model": "synthetic-model-3"}}"#.into()),
            "none of them a setting",
        ),
        (Fault::DropKey("ai_model".into()), "its read-back of the group lacks `ai_model`"),
    ];
    for (fault, said) in cases {
        bench.fake.clear_requests();
        bench.fake.set_fault_after("GET", "/api/settings/ai", 1, fault);
        let error = bench
            .error("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-3"}}));
        bench.fake.clear_faults();
        assert_eq!(error["error"], "upstream_error", "{error}");
        assert_applied(&error, "resmon accepted the change to the ai settings (it answered 200), but ");
        assert!(message(&error).contains(said), "{error}");
        assert!(message(&error).contains("which values resmon kept is not known"), "{error}");
        assert_eq!(error["detail"]["requested"], json!({"ai_model": "synthetic-model-3"}), "{error}");
        assert_eq!(bench.count("PUT", "/api/settings/ai"), 1, "put once, never again");
        assert_eq!(bench.count("GET", "/api/settings/ai"), 2);
    }
}

/// A read of the group that gives a key twice, with two values, has said two
/// things: quoted as a contradiction, never settled by taking the last
/// (contract-notes 26). After the PUT it is an error after acceptance; in
/// the first read it stops the call before anything is sent.
#[test]
fn a_settings_read_that_gives_a_key_twice_is_quoted_never_settled() {
    let mut bench = bench();
    let arguments = json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}});
    let repeated = Fault::RepeatKey("ai_model".into(), json!("claude-sonnet-4-5"));
    bench.fake.set_fault_after("GET", "/api/settings/ai", 1, repeated);
    let error = bench.applied_error(
        "update_settings",
        arguments.clone(),
        "resmon accepted the change to the ai settings (it answered 200), but ",
    );
    let text = message(&error);
    assert!(text.contains("gave `ai_model` more than once, with different values"), "{text}");
    assert!(!text.contains("did not keep"), "no value is taken for the one it holds: {text}");
    assert_eq!(
        error["detail"]["answered"],
        json!({"ai_model": ["synthetic-model-2", "claude-sonnet-4-5"]}),
        "{error}"
    );
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1, "put once, never again");
    assert_eq!(bench.count("GET", "/api/settings/ai"), 2);

    // In the first read, nothing is sent; a credential-shaped key's values
    // are named, never shown.
    bench.fake.state().answer_mut("/api/settings/email")["smtp_password"] = json!("S-4118");
    bench.fault_only("GET", "/api/settings/email", Fault::RepeatKey("smtp_password".into(), json!("S-4119")));
    let error = bench
        .error("update_settings", json!({"group": "email", "settings": {"smtp_from": "me@example.org"}}));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert!(message(&error).contains("gave `smtp_password` more than once"), "{error}");
    assert!(!error.to_string().contains("S-411"), "{error}");
    assert_eq!(bench.count("PUT", "/api/settings/email"), 0, "nothing sent");
    assert!(error["detail"].get("applied").is_none(), "{error}");

    // Embeddings' keys sit inside its `settings` object: a key given twice
    // there is quoted the same way.
    let mut group = bench.fake.state().answer("/api/settings/embeddings").unwrap().clone();
    group["settings"]["embedding_model"] = json!("all-minilm");
    let text =
        group.to_string().replacen(r#""embedding_dims":"#, r#""embedding_dims":"1","embedding_dims":"#, 1);
    assert_ne!(text, group.to_string(), "the fixture holds embedding_dims");
    bench.fake.clear_faults();
    bench.fake.clear_requests();
    bench.fake.set_fault_after("GET", "/api/settings/embeddings", 1, Fault::Status(200, text));
    let error = bench.error(
        "update_settings",
        json!({"group": "embeddings", "settings": {"embedding_model": "all-minilm"}}),
    );
    assert_applied(&error, "resmon accepted the change to the embeddings settings (it answered 200), but ");
    assert_eq!(error["detail"]["answered"], json!({"embedding_dims": ["1", "768"]}), "{error}");
    assert_eq!(bench.count("PUT", "/api/settings/embeddings"), 1, "put once, never again");

    // The same value given twice says nothing new: the write goes through.
    let same = bench.fake.state().setting("ai", "ai_effort");
    bench.fault_only("GET", "/api/settings/ai", Fault::RepeatKey("ai_effort".into(), json!(same)));
    let answer =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-3"}}));
    assert_eq!(answer["changed"]["ai_model"]["to"], json!("synthetic-model-3"), "{answer}");
}

/// The read-back of a route that answered the first read of the same call
/// now answered the framework's 404: said as seen, after the acceptance,
/// without guessing at another release (contract-notes 16).
#[test]
fn a_settings_read_back_answered_the_frameworks_404_is_said_as_seen() {
    let error = settings_read_back_failed(Fault::Status(404, r#"{"detail":"Not Found"}"#.into()));
    let text = message(&error);
    assert!(text.contains("GET /api/settings/ai with 404 Not Found"), "{text}");
    assert!(text.contains("the same route had answered"), "{text}");
    assert!(!text.contains("older or newer"), "{text}");
    assert!(!text.contains("does not serve"), "{text}");
    assert_eq!(error["detail"]["failure"]["status"], json!(404), "{error}");
    assert!(error["detail"]["failure"].get("missing_route").is_none(), "{error}");
}

// ------------------------------------------------------------------ the code after acceptance

#[test]
fn a_read_back_refused_with_401_is_upstream_error_not_a_lost_connection() {
    // resmon answered, so no connection was lost.
    let refused = Fault::Status(401, r#"{"detail": {"reason": "token_missing"}}"#.into());
    let error = failed_read_back(refused, "upstream_error");
    assert_eq!(error["detail"]["failure"]["reason"], json!("token_missing"), "{error}");
}

#[test]
fn a_read_back_refused_for_a_rejected_token_still_names_the_token_file() {
    let mut bench = bench();
    let id = bench.read_back_fault(Fault::Unauthorized);
    let error = bench.error("create_routine", routine_arguments());
    assert_applied(
        &error,
        &format!("resmon created routine {id} (it answered 201), but reading it back failed"),
    );
    // The path is this server's pointer for the person, not a credential
    // (contract-notes 13): it is shown at any level of the error's detail.
    let token_file = bench.fake.token_file();
    assert_eq!(error["detail"]["failure"]["token_file"], json!(token_file.to_string_lossy()), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1, "created once, never re-sent");
}

// ------------------------------------------------------------------ answers that contradict themselves

#[test]
fn a_run_both_started_and_queued_is_quoted_not_resolved() {
    let mut bench = bench();
    let cases: [(&str, Value, &str, &str); 2] = [
        (
            "run_routine",
            json!({"routine_id": 8}),
            "/api/routines/8/run",
            "resmon accepted the request to run routine 8",
        ),
        (
            "run_sweep",
            json!({"query": "graph attention", "sources": ["arxiv"]}),
            "/api/search/sweep",
            "resmon accepted the one-off search",
        ),
    ];
    for (tool, arguments, path, opening) in cases {
        bench.fake.clear_requests();
        bench.fake.set_fault_for("POST", path, Fault::SetKeys(json!({"queued": true})));
        let error = bench.error(tool, arguments);
        bench.fake.clear_faults();
        assert_eq!(error["error"], "upstream_error", "{tool}: {error}");
        assert_applied(
            &error,
            &format!(
                "{opening} (it answered 200), but its answer contradicts itself: it gave `queued: true` and `execution_id` "
            ),
        );
        let execution_id = &error["detail"]["answered"]["execution_id"];
        assert!(execution_id.is_i64(), "resmon's number is quoted: {error}");
        assert_eq!(error["detail"]["answered"]["queued"], json!(true), "{error}");
        assert!(error["detail"].get("execution_id").is_none(), "{tool}: no id taken from it: {error}");
        assert!(!message(&error).contains("started run"), "{error}");
        assert!(message(&error).contains(&format!("Do not call {tool} again")), "{error}");
        // Queued may be what happened, and a queued run is not listed yet:
        // the closing never says list_executions shows it now.
        assert!(message(&error).contains("list_executions shows"), "{error}");
        assert!(message(&error).ends_with("once it has started."), "{tool}: {error}");
        assert!(!message(&error).contains("shows this one"), "{tool}: {error}");
        assert_eq!(bench.count("POST", path), 1, "{tool}: sent once");
    }
}

#[test]
fn a_key_given_twice_is_quoted_with_both_values() {
    let mut bench = bench();
    bench.fake.set_fault_for(
        "POST",
        "/api/search/sweep",
        Fault::RepeatKey("execution_id".into(), json!(9999)),
    );
    let error = bench.applied_error(
        "run_sweep",
        json!({"query": "graph attention", "sources": ["arxiv"]}),
        "resmon accepted the one-off search (it answered 200), but its answer gave `execution_id` more than \
         once, with different values",
    );
    let given = error["detail"]["answered"]["execution_id"].as_array().unwrap().clone();
    assert_eq!(given.len(), 2, "{error}");
    assert_eq!(given[1], json!(9999), "{error}");
    assert!(error["detail"].get("execution_id").is_none(), "{error}");
    assert!(!message(&error).contains("Run 9999 started"), "{error}");
    assert_eq!(bench.count("POST", "/api/search/sweep"), 1);
    // The same value twice says one thing, and is answered as usual.
    bench.fake.set_fault_for(
        "POST",
        "/api/routines/7/activate",
        Fault::RepeatKey("is_active".into(), json!(true)),
    );
    let answer = bench.ok("activate_routine", json!({"routine_id": 7}));
    assert_eq!(answer, json!({"id": 7, "is_active": true}));
}

#[test]
fn a_switch_answered_the_other_way_or_for_another_routine_is_not_passed_on() {
    let mut bench = bench();
    bench.fake.set_fault_for("POST", "/api/routines/7/activate", Fault::SetKeys(json!({"is_active": false})));
    let error = bench.applied_error(
        "activate_routine",
        json!({"routine_id": 7}),
        "resmon accepted the request to activate routine 7 (it answered 200), but its answer gave \
         `is_active: false` for routine 7, the opposite of what activate asks",
    );
    assert!(message(&error).contains("get_routine 7 shows whether it is on the schedule"), "{error}");
    assert!(!message(&error).contains("It is done"), "{error}");
    assert_eq!(error["detail"]["answered"], json!({"id": 7, "is_active": false}), "{error}");
    assert_eq!(bench.count("POST", "/api/routines/7/activate"), 1);

    let error = about_another_routine(
        &mut bench,
        ("deactivate_routine", "/api/routines/7/deactivate"),
        json!({"id": 8}),
        "resmon accepted the request to deactivate routine 7 (it answered 200), but its answer is about \
         routine 8, not routine 7",
    );
    assert!(error["detail"].get("id").is_none(), "8 is not taken for the id: {error}");
}

/// A switch or run of routine 7 or 8 whose answer (`keys`, with a token
/// beside them) is about another routine: the error after acceptance opens
/// with `opening`, quotes the answer without its token, and the write was
/// sent once.
fn about_another_routine(bench: &mut Bench, (tool, path): (&str, &str), keys: Value, opening: &str) -> Value {
    let mut answer = keys.clone();
    answer["auth_token"] = json!("SECRET-OTHER");
    bench.fake.set_fault_for("POST", path, Fault::SetKeys(answer));
    let routine_id = path.split('/').nth(3).unwrap().parse::<i64>().unwrap();
    let error = bench.applied_error(tool, json!({ "routine_id": routine_id }), opening);
    for (key, value) in keys.as_object().unwrap() {
        assert_eq!(&error["detail"]["answered"][key], value, "{error}");
    }
    assert!(!error.to_string().contains("SECRET-OTHER"), "{error}");
    assert_eq!(bench.count("POST", path), 1, "sent once");
    error
}

#[test]
fn a_read_back_of_another_routine_is_not_shown_as_the_new_one() {
    let mut bench = bench();
    let id = bench.read_back_fault(Fault::SetKeys(json!({"id": 99})));
    let error = bench.applied_error(
        "create_routine",
        routine_arguments(),
        &format!(
            "resmon created routine {id} (it answered 201), but reading it back gave routine 99 instead, so \
             this server does not show it as the new one. Do not call create_routine again: routine {id} \
             was created even though its read-back did not show it"
        ),
    );
    assert_eq!(error["detail"]["id"], json!(id), "the id is the create's own: {error}");
    assert_eq!(error["detail"]["read_back_id"], json!(99), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);
}

#[test]
fn a_field_resmon_did_not_keep_is_said_without_a_guess_at_why() {
    let mut bench = bench();
    bench.fake.set_fault_for("GET", "/api/routines/{id}", Fault::DropKey("intent".into()));
    let created = bench.ok(
        "create_routine",
        json!({"name": "All kept", "keywords": ["graph attention"], "sources": ["arxiv"],
               "schedule": "0 8 * * 1", "intent": "Graph attention for molecules"}),
    );
    assert_eq!(created["not_kept"], json!(["intent"]), "{created}");
    let detail = created["detail"].as_str().unwrap();
    assert!(
        detail.contains("the read-back lacks it, so the routine resmon holds is without it."),
        "{detail}"
    );
    assert!(!detail.contains("Updating resmon"), "no guess at a cause resmon did not give: {detail}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);
}

// ------------------------------------------------------------------ what the transport saw

/// The PUT's 2xx status line is all update_settings takes from it: a body
/// that stalls after it is not waited for, and the group is read back
/// within the call's bound.
#[test]
fn a_settings_put_whose_body_stalls_is_not_waited_for() {
    let mut bench = bench_with_bound(1000);
    bench.fake.set_fault_for("PUT", "/api/settings/ai", Fault::StallAfter(3));
    let answer =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}}));
    assert_eq!(
        answer["changed"],
        json!({"ai_model": {"from": "claude-sonnet-4-5", "to": "synthetic-model-2"}}),
        "{answer}"
    );
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1);
    assert_eq!(bench.count("GET", "/api/settings/ai"), 2, "read before and read back");
}

/// A head too large to read, after a 201 status line: said as accepted
/// (the status line arrived), never "not running", never outcome_unknown.
#[test]
fn a_write_whose_answer_head_is_too_large_is_said_as_accepted() {
    let mut bench = bench();
    let id = bench.fake.state().next_routine_id;
    bench.fake.set_fault_for("POST", "/api/routines", Fault::BigHead(9000));
    let error = bench.applied_error(
        "create_routine",
        routine_arguments(),
        "resmon created a routine (it answered 201), but its answer was larger than this server reads",
    );
    assert!(message(&error).contains("Do not call create_routine again"), "{error}");
    assert!(!message(&error).contains("not running"), "{error}");
    assert_eq!(error["detail"]["failure"]["body_unread"], json!("too_large"), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1, "sent once");
    assert!(bench.fake.state().routine(id).is_some(), "the routine exists in resmon");
    let Bench { session, .. } = bench;
    let (_, stderr) = session.finish();
    assert!(
        stderr.contains("POST /api/routines answered 201, then failed after its status line"),
        "{stderr}"
    );
    assert!(!stderr.contains("POST /api/routines failed before"), "{stderr}");
}

/// A head that stalls after its 200 status line, and one with an invalid
/// header after its 201: the status line arrived, so each is acceptance,
/// said in words true to what happened.
#[test]
fn a_write_whose_head_fails_after_its_status_line_is_said_as_accepted() {
    let mut bench = bench_with_bound(1000);
    bench.fake.set_fault_for("POST", "/api/routines/{id}/run", Fault::StallInHead);
    let error = bench.error("run_routine", json!({"routine_id": 8}));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert_applied(
        &error,
        "resmon started or queued a run of routine 8 (it answered 200), but its answer stalled, and it was \
         not read before this call's 1 s deadline.",
    );
    assert_eq!(bench.count("POST", "/api/routines/8/run"), 1);

    bench.fake.clear_faults();
    bench.fake.set_fault_for("POST", "/api/routines", Fault::InvalidHeader);
    let error = bench.applied_error(
        "create_routine",
        routine_arguments(),
        "resmon created a routine (it answered 201), but the rest of its answer was not valid HTTP",
    );
    assert_eq!(error["detail"]["failure"]["body_unread"], json!("malformed"), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);
}

/// A reset after part of a 2xx body is told from a close: the connection
/// was lost, so backend_unavailable, and still applied. (Only Linux lets
/// the fake reset a connection.)
#[cfg(target_os = "linux")]
#[test]
fn a_write_whose_answer_is_reset_midway_is_backend_unavailable_and_applied() {
    let mut bench = bench();
    bench.fake.set_fault_for("POST", "/api/routines", Fault::ResetAfter(5));
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert_applied(
        &error,
        "resmon created a routine (it answered 201), but the connection was reset before its answer was read.",
    );
    assert_eq!(error["detail"]["failure"]["body_unread"], json!("reset"), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);
}

// ------------------------------------------------------------------ run answers read as their kind

/// Every run of the fake marked finished, so the next run of a routine is
/// not refused as already running.
fn finish_runs(fake: &Fake) {
    for execution in fake.state().executions.iter_mut() {
        if execution["status"] == "running" {
            execution["status"] = json!("completed");
        }
    }
}

#[test]
fn a_run_answer_about_another_routine_is_quoted_not_passed_on() {
    let mut bench = bench();
    let error = about_another_routine(
        &mut bench,
        ("run_routine", "/api/routines/8/run"),
        json!({"routine_id": 9}),
        "resmon accepted the request to run routine 8 (it answered 200), but its answer is about routine 9, \
         not routine 8. Do not call run_routine again",
    );
    assert!(error["detail"]["answered"]["execution_id"].is_i64(), "resmon's answer is quoted: {error}");
    assert!(error["detail"].get("execution_id").is_none(), "no id taken from it: {error}");
}

#[test]
fn a_run_answer_with_a_field_of_another_kind_is_quoted_not_guessed() {
    let mut bench = bench();
    // (answer keys set, status the fake answers with, opening, whether the
    // execution id stays in `detail`)
    let cases: [(Value, u16, &str, bool); 5] = [
        (
            json!({"queued": "no", "queue_position": 3, "was_inactive": "maybe", "detail": "Queued at position 3."}),
            200,
            "resmon accepted the request to run routine 8 (it answered 200), but its `queued` was neither \
             true nor false (it gave \"no\"), so this server cannot tell whether the run started or was queued.",
            false,
        ),
        (
            json!({"was_inactive": "maybe"}),
            200,
            "(it answered 200), but its `was_inactive` was neither true nor false (it gave \"maybe\"). Do not \
             call run_routine again",
            true,
        ),
        (
            json!({"was_inactive": {"api_key": "SECRET-FLAG"}}),
            200,
            "(it answered 200), but its `was_inactive` was neither true nor false (it gave \
             {\"api_key\":{\"withheld\":true}}).",
            true,
        ),
        (
            json!({"detail": {"auth": "SECRET-DETAIL"}}),
            200,
            "(it answered 200), but its `detail` was not a sentence (it gave {\"auth\":{\"withheld\":true}}).",
            true,
        ),
        (
            json!({"queue_position": "3"}),
            202,
            "resmon queued a run of routine 8 (it answered 202), but its `queue_position` was not a positive \
             integer (it gave \"3\").",
            false,
        ),
    ];
    for (keys, status, opening, keeps_id) in cases {
        finish_runs(&bench.fake);
        bench.fake.clear_requests();
        bench.fake.state().run_limit = if status == 202 { 0 } else { 3 };
        bench.fake.set_fault_for("POST", "/api/routines/8/run", Fault::SetKeys(keys.clone()));
        let error = bench.error("run_routine", json!({"routine_id": 8}));
        bench.fake.clear_faults();
        assert_eq!(error["error"], "upstream_error", "{keys}: {error}");
        if opening.starts_with('(') {
            assert!(message(&error).starts_with("resmon started run "), "{keys}: {error}");
            assert!(message(&error).contains(&format!(" of routine 8 {opening}")), "{keys}: {error}");
            assert_applied(&error, "resmon started run ");
        } else {
            assert_applied(&error, opening);
        }
        assert!(message(&error).contains("Do not call run_routine again"), "{keys}: {error}");
        assert_eq!(error["detail"].get("execution_id").is_some(), keeps_id, "{keys}: {error}");
        // resmon's answer is quoted whole, its credential-shaped values withheld.
        if !keys.to_string().contains("SECRET") {
            for (key, value) in keys.as_object().unwrap() {
                assert_eq!(&error["detail"]["answered"][key], value, "{keys}: {error}");
            }
        }
        assert!(!error.to_string().contains("SECRET"), "{keys}: {error}");
        assert_eq!(bench.count("POST", "/api/routines/8/run"), 1, "{keys}: sent once");
    }
    // resmon's sentence is passed on, never read for words.
    finish_runs(&bench.fake);
    bench.fake.state().run_limit = 3;
    bench.fake.set_fault_for(
        "POST",
        "/api/routines/8/run",
        Fault::SetKeys(
            json!({"queued": false, "was_inactive": 1, "detail": "It was not queued; it runs now."}),
        ),
    );
    let answer = bench.ok("run_routine", json!({"routine_id": 8}));
    assert_eq!(answer["queued"], json!(false), "{answer}");
    assert!(answer["execution_id"].is_i64(), "{answer}");
    assert_eq!(answer["was_inactive"], json!(true), "1 is read as the flag it is: {answer}");
}

#[test]
fn a_sweep_whose_duplicate_is_unreadable_is_not_said_as_started() {
    let mut bench = bench();
    bench.fake.set_fault_for("POST", "/api/search/sweep", Fault::SetKeys(json!({"duplicate": "yes"})));
    let error = bench.applied_error("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]}), "resmon accepted the one-off search (it answered 200), but its `duplicate` was neither true nor false \
         (it gave \"yes\"), so this server cannot tell whether run ");
    assert!(!message(&error).contains("started run"), "{error}");
    assert!(message(&error).contains("Do not call run_sweep again"), "{error}");
    let execution_id = error["detail"]["execution_id"].clone();
    assert!(execution_id.is_i64(), "the run named under the route's own key: {error}");
    assert_eq!(error["detail"]["answered"]["duplicate"], json!("yes"), "{error}");
    assert_eq!(error["detail"]["answered"]["execution_id"], execution_id, "{error}");
    assert_eq!(bench.count("POST", "/api/search/sweep"), 1, "sent once");
}

// ------------------------------------------------------------------ what the settings read-back shows

#[test]
fn a_settings_value_not_kept_is_named_as_resmon_holds_it() {
    let mut bench = bench();
    let held = bench.fake.state().setting("ai", "ai_model");
    // A PUT answered 200 that stores nothing.
    bench.fake.override_response("PUT", "/api/settings/ai", 200, &[], "{}");
    let answer =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-7"}}));
    assert_eq!(answer["changed"], json!({}), "{answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("It did not keep the value sent for `ai_model` (it holds \"{held}\").")),
        "{detail}"
    );
    assert!(!detail.contains("`changed` shows"), "{detail}");
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1, "put once");
    assert_eq!(bench.count("GET", "/api/settings/ai"), 2);
}

#[test]
fn a_key_the_settings_read_back_no_longer_carries_is_not_called_changed() {
    let mut bench = bench();
    let keys = bench.fake.state().answer("/api/settings/ai").unwrap().as_object().unwrap().len();
    bench.fake.set_fault_after("GET", "/api/settings/ai", 1, Fault::DropKey("ai_effort".into()));
    let answer =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}}));
    assert_eq!(answer["changed"].as_object().unwrap().keys().collect::<Vec<_>>(), ["ai_model"], "{answer}");
    assert_eq!(answer["unchanged_key_count"], json!(keys - 2), "neither changed nor unchanged: {answer}");
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.contains("The read-back did not carry `ai_effort`, which the first read held, so it is not counted as changed"),
        "{detail}"
    );
    assert!(!detail.contains("Also changed"), "{detail}");
    assert_eq!(bench.count("PUT", "/api/settings/ai"), 1, "put once");
}

// ------------------------------------------------------------------ interim statuses

const CONTINUE: &str = "HTTP/1.1 100 Continue\r\n\r\n";

/// An interim 100 Continue says nothing of the outcome: the final 201 after
/// it is the acceptance, and a write that got only the 100 is said as one
/// whose outcome is unknown, never as accepted.
#[test]
fn an_interim_status_is_passed_over_for_the_final_one() {
    let mut bench = bench_with_bound(1000);
    // 100, then a 201 head that stalls: accepted, by the 201.
    bench.fake.set_fault_for(
        "POST",
        "/api/routines",
        Fault::Preceded(CONTINUE.into(), Box::new(Fault::StallInHead)),
    );
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert_applied(&error, "resmon created a routine (it answered 201), but its answer stalled");
    assert_eq!(error["detail"]["failure"]["status"], json!(201), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);

    // The same reply after a stray blank line, as ureq reads it: a 201.
    bench.fault_only("POST", "/api/routines", Fault::Preceded("\r\n".into(), Box::new(Fault::StallInHead)));
    let error = bench.error("create_routine", routine_arguments());
    assert_applied(&error, "resmon created a routine (it answered 201), but its answer stalled");
    assert_eq!(bench.count("POST", "/api/routines"), 1);

    // 100, then nothing: no final status, so the outcome is unknown.
    bench.fault_only("POST", "/api/routines", Fault::Preceded(CONTINUE.into(), Box::new(Fault::Hang)));
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert_eq!(error["detail"]["interim_status"], json!(100), "{error}");
    assert!(error["detail"].get("applied").is_none(), "{error}");
    assert!(message(&error).contains("beyond the interim status 100"), "{error}");
    assert!(message(&error).contains("only the interim 100, which says nothing of the outcome"), "{error}");
    assert!(message(&error).starts_with("resmon may have created a routine; no final status"), "{error}");
    assert!(message(&error).contains("list_routines shows whether"), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);

    // 100, then the whole answer: a plain success.
    bench.fault_only("POST", "/api/routines", Fault::Preceded(CONTINUE.into(), Box::new(Fault::None)));
    let answer = bench.ok("create_routine", routine_arguments());
    assert!(answer["routine"]["id"].is_i64(), "{answer}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);
}

/// update_settings takes only the PUT's 2xx status line: once it arrived,
/// neither the rest of the head nor the body is waited for, and the group
/// is read back at once, well within the call's bound.
#[test]
fn update_settings_reads_back_as_soon_as_the_puts_2xx_status_line_arrives() {
    let mut bench = bench_with_bound(3000);
    let cases = [
        (Fault::StallInHead, "synthetic-model-2"),
        (Fault::Preceded(CONTINUE.into(), Box::new(Fault::StallInHead)), "synthetic-model-3"),
    ];
    for (fault, model) in cases {
        bench.fake.clear_requests();
        bench.fake.set_fault_for("PUT", "/api/settings/ai", fault.clone());
        let started = std::time::Instant::now();
        let answer = bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": model}}));
        let elapsed = started.elapsed();
        assert_eq!(answer["changed"]["ai_model"]["to"], json!(model), "{fault:?}: {answer}");
        assert!(elapsed < std::time::Duration::from_millis(2500), "{fault:?}: waited {elapsed:?}");
        assert_eq!(bench.count("PUT", "/api/settings/ai"), 1, "{fault:?}");
        assert_eq!(bench.count("GET", "/api/settings/ai"), 2, "{fault:?}: read before and after");
    }
    // A PUT whose only status was an interim 100 was not accepted: its
    // outcome is unknown, and the group is read back to tell (contract-notes 26).
    bench.fake.clear_requests();
    bench.fake.set_fault_for(
        "PUT",
        "/api/settings/ai",
        Fault::Preceded(CONTINUE.into(), Box::new(Fault::Hang)),
    );
    let error =
        bench.error("update_settings", json!({"group": "ai", "settings": {"ai_model": "claude-opus-4-1"}}));
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert!(error["detail"].get("applied").is_none(), "{error}");
    assert_eq!(error["detail"]["read_back"]["ai_model"]["state"], json!("unchanged"), "{error}");
    assert!(message(&error).contains("only with the interim status 100"), "{error}");
    assert_eq!(bench.count("GET", "/api/settings/ai"), 2, "read before and after");
}

// ------------------------------------------------------------------ redirects

/// A 3xx is neither acceptance nor refusal: the answer names the status and
/// the path it pointed to (never the other address), says it was not
/// followed, and for a write that it may have been done.
#[test]
fn a_redirect_after_a_write_says_it_may_have_been_done_and_is_not_followed() {
    let mut bench = bench();
    let routines_before = bench.fake.state().routines.len();
    bench.fake.set_fault_for(
        "POST",
        "/api/routines",
        Fault::RedirectTo(303, "/api/routines/9".into(), String::new()),
    );
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], "upstream_error", "{error}");
    let text = message(&error);
    assert!(
        text.starts_with(
            "resmon may have created a routine: it answered POST /api/routines with a redirect (303 to \
             /api/routines/9), which this server does not follow"
        ),
        "{error}"
    );
    assert!(text.contains("A 303 after a write usually means it was done"), "{error}");
    assert!(text.contains("list_routines shows whether"), "{error}");
    assert!(
        !error.to_string().contains(&format!(":{}", bench.fake.port() + 1)) && !text.contains("127.0.0.1"),
        "{error}"
    );
    assert_eq!(error["detail"]["location"], json!("/api/routines/9"), "{error}");
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert!(error["detail"].get("applied").is_none(), "{error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1, "sent once");
    assert_eq!(bench.fake.state().routines.len(), routines_before + 1, "resmon did create it");
    assert_eq!(bench.fake.redirect_target_hits(), 0, "the redirect was followed");

    // A 307 whose body carries a sentence is still said to be a redirect.
    bench.fake.clear_faults();
    bench.fake.set_fault_for(
        "POST",
        "/api/routines/{id}/activate",
        Fault::RedirectTo(307, "/elsewhere".into(), r#"{"detail": "moved"}"#.into()),
    );
    let error = bench.error("activate_routine", json!({"routine_id": 7}));
    assert_eq!(error["error"], "upstream_error", "{error}");
    let text = message(&error);
    assert!(text.contains("with a redirect (307 to /elsewhere) (resmon said: moved)"), "{error}");
    assert!(text.starts_with("resmon may have activated routine 7:"), "{error}");
    assert!(text.contains("get_routine 7 shows whether it is on the schedule"), "{error}");
    assert_eq!(bench.fake.redirect_target_hits(), 0, "the redirect was followed");
}

/// The corpus search and the reference export send their question in a POST
/// body, but they are reads: whatever becomes of that POST, nothing in
/// resmon changed, so no answer says it may have (contract 1.0 "Error
/// model": outcome_unknown is for writes).
#[test]
fn a_read_that_posts_its_question_is_never_said_to_maybe_have_changed_resmon() {
    let mut bench = bench();
    let reads = [
        ("POST", "/api/explorer/search", "search_corpus", json!({"query": "graph"})),
        (
            "POST",
            "/api/export/references",
            "export_references",
            json!({"doc_ids": [801, 802], "format": "json"}),
        ),
    ];
    for (method, path, tool, arguments) in reads {
        for fault in [Fault::RedirectTo(302, "/elsewhere".into(), String::new()), Fault::CloseWithoutAnswer] {
            bench.fake.clear_faults();
            bench.fake.set_fault_for(method, path, fault.clone());
            let error = bench.error(tool, arguments.clone());
            assert!(error["detail"].get("outcome_unknown").is_none(), "{tool} {fault:?}: {error}");
            let text = message(&error);
            assert!(!text.contains("This was a write"), "{tool} {fault:?}: {error}");
            assert!(!text.contains("carried it out"), "{tool} {fault:?}: {error}");
            assert!(!text.contains("may have"), "{tool} {fault:?}: {error}");
        }
    }
    // A write's POST meeting the same faults still says it may have been done.
    bench.fake.clear_faults();
    bench.fake.set_fault_for("POST", "/api/routines", Fault::CloseWithoutAnswer);
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
}

// ------------------------------------------------------------------ what a run's answer can say

/// A run is "started" only when an `execution_id` was read under its key and
/// nothing says queued; a queue position alone says queued, and an answer
/// that could not be read says "started or queued".
#[test]
fn a_run_is_said_as_started_only_when_its_answer_says_so() {
    let mut bench = bench();
    // A queue position alone says queued, and with no id that is the whole
    // answer, not an error about a started run's missing id.
    finish_runs(&bench.fake);
    bench.fake.state().run_limit = 3;
    bench.fake.set_fault_for(
        "POST",
        "/api/routines/8/run",
        Fault::SetKeys(json!({"execution_id": null, "queued": null, "queue_position": 3})),
    );
    let answer = bench.ok("run_routine", json!({"routine_id": 8}));
    bench.fake.clear_faults();
    assert_eq!(
        (answer["queued"].clone(), answer["queue_position"].clone()),
        (json!(true), json!(3)),
        "{answer}"
    );
    assert_eq!(answer["execution_id"], Value::Null, "{answer}");
    let cases = [
        (Fault::NonJson200, "resmon started or queued a run of routine 8 (it answered 200)"),
        (Fault::Status(200, String::new()), "resmon started or queued a run of routine 8 (it answered 200)"),
    ];
    for (fault, opening) in cases {
        finish_runs(&bench.fake);
        bench.fake.clear_requests();
        bench.fake.state().run_limit = 3;
        bench.fake.set_fault_for("POST", "/api/routines/8/run", fault.clone());
        let error = bench.error("run_routine", json!({"routine_id": 8}));
        bench.fake.clear_faults();
        assert_applied(&error, opening);
        assert!(message(&error).contains("Do not call run_routine again"), "{fault:?}: {error}");
        assert_eq!(bench.count("POST", "/api/routines/8/run"), 1, "{fault:?}: sent once");
    }
}

/// A sweep whose `duplicate` is null said neither: quoted, never read as false.
#[test]
fn a_sweep_whose_duplicate_is_null_is_quoted() {
    let mut bench = bench();
    bench.fake.set_fault_for("POST", "/api/search/sweep", Fault::SetKeys(json!({"duplicate": null})));
    let error = bench.error("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]}));
    assert_applied(
        &error,
        "resmon accepted the one-off search (it answered 200), but its `duplicate` was neither",
    );
    assert_eq!(bench.count("POST", "/api/search/sweep"), 1);
}

/// A refusal whose sentence is, whole, JSON text is judged as JSON text is:
/// a credential-shaped key in it keeps its name and loses its value. A
/// write's keeps it whole in `detail.said`, so that the sentence saying the
/// write was not done does not turn it into free text.
#[test]
fn a_refusal_sentence_that_is_json_text_withholds_credential_values() {
    let mut bench = bench();
    let body = json!({"detail": "{\"password\": \"SECRET-MESSAGE-1\", \"field\": \"query\"}"}).to_string();
    bench.fake.set_fault_for("POST", "/api/search/sweep", Fault::Status(400, body));
    let error = bench.error("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]}));
    // Kept whole beside the message, which says the write was not done.
    let said = error["detail"]["said"].as_str().unwrap();
    assert!(said.contains(r#""password":{"withheld":true}"#), "{error}");
    assert!(
        message(&error).ends_with("resmon did nothing: it has not started the one-off search."),
        "{error}"
    );
    let transcript = bench.session.transcript.join("\n");
    assert!(!transcript.contains("SECRET-MESSAGE"), "a credential value was shown: {transcript}");
}

/// A create whose id came back as text is quoted as it came, so the person
/// sees what resmon said instead of only that no integer was there.
#[test]
fn a_create_whose_id_is_not_an_integer_quotes_what_resmon_gave() {
    let mut bench = bench();
    bench.fake.set_fault_for("POST", "/api/routines", Fault::SetKeys(json!({"id": "12"})));
    let error = bench.error("create_routine", routine_arguments());
    let text = message(&error);
    assert!(
        text.contains(
            r#"did not carry an integer `id` (it gave `id`: "12", which this server does not take for it)"#
        ),
        "{text}"
    );
    assert_eq!(error["detail"]["answered"]["id"], json!("12"), "{error}");
    assert_eq!(error["detail"]["applied"], json!(true), "{error}");
}

/// The warning a create's answer carries is said on every error after the
/// create was accepted, since no later answer repeats it; and a warning in
/// another shape than text is passed on, never said as none.
#[test]
fn a_creates_warning_survives_an_error_after_acceptance_and_any_shape() {
    let mut bench = bench();
    let warning = "None of these sources can be asked about an author, so it will find nothing.";
    bench.fake.set_fault_for("POST", "/api/routines", Fault::SetKeys(json!({"entity_warning": warning})));
    bench.fake.set_fault_for("GET", "/api/routines/{id}", Fault::Status(500, String::new()));
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["detail"]["applied"], json!(true), "{error}");
    assert_eq!(error["detail"]["entity_warning"], json!(warning), "{error}");
    assert!(
        message(&error).ends_with(&format!("resmon's answer to the create also warned: {warning}")),
        "{error}"
    );

    bench.fake.clear_faults();
    let odd = json!({"message": "Name only: matches may be another person's."});
    bench.fake.set_fault_for("POST", "/api/profiles", Fault::SetKeys(json!({"basis_warning": odd})));
    let answer = bench.ok("create_watch_profile", json!({"name": "Ada Example"}));
    assert_eq!(answer["basis_warning"], odd, "{answer}");
    assert_detail_says(&answer, "in a form this server does not read", "gave no basis warning");
}

// ------------------------------------------------------------------ what a create's read-back holds

/// A read-back that holds other values than were sent is still the routine
/// resmon created, but never a clean success: each difference is named by
/// the caller's argument, with both values, in `kept_otherwise` and in the
/// sentence (contract-notes 26). A value this server sent as its default
/// (`ai_enabled`, not given) is named as that default, never as the
/// caller's argument.
#[test]
fn a_routine_read_back_with_other_values_names_each_difference() {
    let mut bench = bench();
    let id = bench.read_back_fault(Fault::SetKeys(json!({
        "name": "Another routine",
        "schedule_cron": "0 0 * * *",
        "ai_enabled": 1,
        "parameters": {"query": "x", "repositories": ["pubmed"], "keywords": ["x"]},
    })));
    let created = bench.ok(
        "create_routine",
        json!({"name": "Synthetic routine", "keywords": ["graph attention"], "sources": ["arxiv"],
               "schedule": "0 8 * * 1"}),
    );
    assert_eq!(created["routine"]["id"], json!(id), "{created}");
    assert_eq!(created["not_kept"], json!([]), "{created}");
    let differences = created["kept_otherwise"].as_array().expect("kept_otherwise").clone();
    let named: Vec<(Value, &str, Value)> = differences
        .iter()
        .map(|difference| {
            let field = difference["field"].as_str().unwrap();
            (difference["argument"].clone(), field, difference["server_default"].clone())
        })
        .collect();
    let caller = |argument: &str, field| (json!(argument), field, json!(false));
    assert_eq!(
        named,
        [
            caller("name", "name"),
            caller("schedule", "schedule_cron"),
            caller("keywords", "parameters.query"),
            caller("sources", "parameters.repositories"),
            caller("keywords", "parameters.keywords"),
            (Value::Null, "ai_enabled", json!(true)),
        ],
        "{created}"
    );
    let schedule = &differences[1];
    assert_eq!((&schedule["sent"], &schedule["held"]), (&json!("0 8 * * 1"), &json!("0 0 * * *")));
    assert_eq!((&differences[3]["sent"], &differences[3]["held"]), (&json!(["arxiv"]), &json!(["pubmed"])));
    // The flag is quoted as resmon gave it; 1 is not false.
    assert_eq!((&differences[5]["sent"], &differences[5]["held"]), (&json!(false), &json!(1)));
    let detail = created["detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("Routine {id} was created inactive")), "{detail}");
    for said in [
        r#"`name` "Another routine" where "Synthetic routine" was sent"#,
        r#"`schedule` "0 0 * * *" where "0 8 * * 1" was sent"#,
        r#"`sources` ["pubmed"] where ["arxiv"] was sent"#,
        r#"the search text built from `keywords` (`parameters.query`) "x" where "graph attention" was sent"#,
        "`ai_enabled` 1 where this server sent its default false",
    ] {
        assert!(detail.contains(said), "expected {said:?} in {detail}");
    }
    assert!(!detail.contains("`ai_enabled` 1 where false was sent"), "{detail}");
    assert!(detail.contains("`kept_otherwise` gives both values of each"), "{detail}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);

    // A schedule that comes back null is not kept, and named once.
    bench.fake.set_fault_for("GET", "/api/routines/{id}", Fault::NullKey("schedule_cron".into()));
    let created = bench.ok("create_routine", routine_arguments());
    assert_eq!((&created["not_kept"], &created["kept_otherwise"]), (&json!(["schedule"]), &json!([])));
}

/// What resmon adds or writes in its own form is not a difference: keys
/// beside the ones sent (in the record, its parameters and the entity), a
/// number written as 5.0, a flag as 0/1. A key sent inside the entity that
/// comes back otherwise or not at all is one, named by its path.
#[test]
fn a_read_back_is_compared_only_on_what_was_sent_and_by_value() {
    let mut bench = bench();
    let arguments = json!({"name": "Watch", "keywords": [], "sources": ["biorxiv", "medrxiv"],
        "schedule": "0 6 * * *", "intent": "New papers by this author",
        "entity": {"profile_id": 5, "mode": "retractions"},
        "ai_enabled": true, "email_enabled": true, "notify_on_complete": false});
    let parameters = |entity: Value| {
        json!({"query": "", "repositories": ["biorxiv", "medrxiv"], "keywords": [], "entity": entity,
               "default_starts": {"biorxiv": {"days": 3}}})
    };
    bench.fake.set_fault_for(
        "GET",
        "/api/routines/{id}",
        Fault::SetKeys(json!({
            "parameters": parameters(json!({"profile_id": 5.0, "mode": "retractions", "display_name": "M. Okafor"})),
            "ai_enabled": 1, "email_enabled": true, "notify_on_complete": 0, "execution_location": "local",
        })),
    );
    let created = bench.ok("create_routine", arguments.clone());
    assert_eq!(created["kept_otherwise"], json!([]), "{created}");
    assert_eq!(created["not_kept"], json!([]), "{created}");
    assert!(!created["detail"].as_str().unwrap().contains("differs"), "{created}");

    bench.fake.set_fault_for(
        "GET",
        "/api/routines/{id}",
        Fault::SetKeys(json!({"parameters": parameters(json!({"mode": "new_papers"}))})),
    );
    let created = bench.ok("create_routine", arguments);
    assert_eq!(
        created["kept_otherwise"],
        json!([
            {"argument": "entity.profile_id", "field": "parameters.entity.profile_id", "sent": 5, "held": null,
             "server_default": false},
            {"argument": "entity.mode", "field": "parameters.entity.mode", "sent": "retractions",
             "held": "new_papers", "server_default": false},
        ]),
        "{created}"
    );
    let detail = created["detail"].as_str().unwrap();
    assert!(detail.contains("no `entity.profile_id` where 5 was sent"), "{detail}");
    assert!(detail.contains(r#"`entity.mode` "new_papers" where "retractions" was sent"#), "{detail}");
    // resmon's warning is still said, and said first.
    assert!(created["entity_warning"].is_string(), "{created}");
}

/// A read-back that gives a key twice with two values has said two things:
/// quoted, never settled by keeping the last (contract-notes 26). The same
/// value twice says one thing.
#[test]
fn a_create_read_back_that_gives_a_key_twice_is_quoted() {
    let mut bench = bench();
    let id = bench.read_back_fault(Fault::RepeatKey("is_active".into(), json!(true)));
    let error = bench.applied_error("create_routine", routine_arguments(), &format!(
            "resmon created routine {id} (it answered 201), but its read-back gave `is_active` more than once, \
             with different values, so this server cannot tell which resmon meant. Do not call create_routine \
             again: routine {id} was created"
        ));
    assert_eq!(error["detail"]["answered"], json!({"is_active": [false, true]}), "{error}");
    assert_eq!(error["detail"]["id"], json!(id), "the create's own id is kept: {error}");
    assert!(!message(&error).contains("ACTIVE"), "neither value is taken: {error}");
    assert_eq!(bench.count("POST", "/api/routines"), 1);

    bench.fake.set_fault_for("GET", "/api/routines/{id}", Fault::RepeatKey("is_active".into(), json!(false)));
    let created = bench.ok("create_routine", routine_arguments());
    assert!(created["detail"].as_str().unwrap().contains("was created inactive"), "{created}");
}

// ------------------------------------------------------------------ a sweep resmon queued

/// A sweep resmon queued has no execution yet: said as queued, and never
/// pointed at list_executions as if the run were there already.
#[test]
fn a_queued_sweep_is_said_as_queued_not_as_a_run_to_look_up() {
    let mut bench = bench();
    let arguments = json!({"query": "graph attention", "sources": ["arxiv"]});
    let cases = [
        (
            Fault::Status(202, r#"{"execution_id": null, "queued": true, "queue_position": 1}"#.into()),
            "resmon queued the one-off search (it answered 202), but run_sweep answers with a started run's \
             `execution_id`, and a queued search has none yet (resmon said it was queued with status 202, \
             `queued: true` and `queue_position` 1).",
            json!({"execution_id": null, "queued": true, "queue_position": 1}),
        ),
        (
            Fault::SetKeys(json!({"execution_id": null, "queue_position": 2})),
            "resmon queued the one-off search (it answered 200), but run_sweep answers with a started run's \
             `execution_id`, and a queued search has none yet (resmon said it was queued with \
             `queue_position` 2).",
            json!(2),
        ),
    ];
    for (fault, opening, answered) in cases {
        bench.fault_only("POST", "/api/search/sweep", fault.clone());
        let error = bench.error("run_sweep", arguments.clone());
        assert_eq!(error["error"], "upstream_error", "{fault:?}: {error}");
        assert_applied(&error, opening);
        assert!(
            message(&error).ends_with(
                "Do not call run_sweep again: that would queue or start a second search. This one has no \
                 execution yet; resmon starts it by itself when one of its run slots frees, and \
                 list_executions shows it once it has started."
            ),
            "{error}"
        );
        assert!(!message(&error).contains("shows this one"), "{error}");
        assert_eq!(error["detail"]["queued"], json!(true), "{error}");
        let quoted = if answered.is_object() {
            &error["detail"]["answered"]
        } else {
            &error["detail"]["answered"]["queue_position"]
        };
        assert_eq!(quoted, &answered, "{error}");
        assert!(error["detail"].get("execution_id").is_none(), "{error}");
        assert_eq!(bench.count("POST", "/api/search/sweep"), 1, "{fault:?}: sent once");
    }
}

// ------------------------------------------------------------------ a write resmon refused

/// The writes whose body carries fields this server chose beside the
/// caller's (a sweep's `max_results`, a create's `is_active: false` and
/// `parameters.query`, a profile's `kind`), each with what resmon would
/// have done, as a refusal of it says it was not done.
fn body_writes() -> Vec<(&'static str, Value, &'static str, &'static str, &'static str)> {
    vec![
        (
            "run_sweep",
            json!({"query": "graph attention", "sources": ["arxiv"]}),
            "POST",
            "/api/search/sweep",
            "started the one-off search",
        ),
        ("create_routine", routine_arguments(), "POST", "/api/routines", "created a routine"),
        (
            "create_watch_profile",
            json!({"name": "Ada Example"}),
            "POST",
            "/api/profiles",
            "created a watch profile",
        ),
        (
            "update_settings",
            json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}}),
            "PUT",
            "/api/settings/ai",
            "saved the change to the ai settings",
        ),
    ]
}

/// contract-notes 17: a refusal that shows nothing of whose it is (the
/// framework's body-parse 400, a 422 without a `loc`) is never blamed on
/// the caller, on a route whose body is mostly the caller's too: it is
/// `upstream_error` quoting resmon's status and route, and it says that the
/// write was not carried out.
#[test]
fn a_refusal_of_a_writes_body_that_names_nothing_of_the_call_blames_no_argument() {
    let mut bench = bench();
    for (tool, arguments, method, path, would_have) in body_writes() {
        for (status, said) in [(400, "There was an error parsing the body"), (422, "Value not accepted")] {
            let body = json!({ "detail": said }).to_string();
            bench.fault_only(method, path, Fault::Status(status, body));
            let error = bench.error(tool, arguments.clone());
            let case = format!("{tool} {status}");
            assert_eq!(error["error"], "upstream_error", "{case}: {error}");
            let text = message(&error);
            assert!(text.contains(&format!("refused {method} {path} ({status}: {said})")), "{case}: {text}");
            assert!(
                text.contains(
                    "this server cannot tell from resmon's answer whether an argument of this call was at fault"
                ),
                "{case}: {text}"
            );
            assert!(
                text.ends_with(&format!("resmon did nothing: it has not {would_have}.")),
                "{case}: {text}"
            );
            assert_eq!(error["detail"]["status"], json!(status), "{case}: {error}");
            assert_eq!(error["detail"]["route"], json!(format!("{method} {path}")), "{case}: {error}");
            assert!(error["detail"].get("outcome_unknown").is_none(), "{case}: {error}");
            assert_eq!(bench.count(method, path), 1, "{case}: sent once");
        }
    }
}

/// The evidence that makes a refusal of a write's body the caller's: a
/// field of the call's own named (a settings key, the entity), or one of
/// its values quoted; a sentence that speaks of neither stays resmon's.
#[test]
fn a_refusal_of_a_writes_body_is_the_callers_only_with_evidence() {
    let mut bench = bench();
    let sweep = json!({"query": "graph attention", "sources": ["arxiv"]});
    let watch = json!({"name": "W", "keywords": [], "sources": ["arxiv"], "schedule": "0 8 * * 1",
                       "entity": {"profile_id": 5, "mode": "new_papers"}});
    let settings = json!({"group": "ai", "settings": {"ai_model": "synthetic-model-2"}});
    let cases = [
        // One of the caller's values, quoted.
        (
            "run_sweep",
            sweep.clone(),
            "POST",
            "/api/search/sweep",
            "Source 'arxiv' is not configured.",
            "invalid_argument",
        ),
        // The caller's own key inside `settings`.
        (
            "update_settings",
            settings.clone(),
            "PUT",
            "/api/settings/ai",
            "ai_model must name an installed model",
            "invalid_argument",
        ),
        // The profile the call's entity names.
        (
            "create_routine",
            watch,
            "POST",
            "/api/routines",
            "That profile does not exist.",
            "invalid_argument",
        ),
        // A create without an entity names no profile: nothing shows whose.
        (
            "create_routine",
            routine_arguments(),
            "POST",
            "/api/routines",
            "That profile does not exist.",
            "upstream_error",
        ),
        // A word that is no field and no value of the call.
        ("run_sweep", sweep, "POST", "/api/search/sweep", "Search is paused.", "upstream_error"),
        ("update_settings", settings, "PUT", "/api/settings/ai", "Settings are locked.", "upstream_error"),
    ];
    for (tool, arguments, method, path, said, code) in cases {
        bench.fault_only(method, path, Fault::Status(400, json!({ "detail": said }).to_string()));
        let error = bench.error(tool, arguments);
        assert_eq!(error["error"], code, "{tool} {said}: {error}");
        assert!(message(&error).contains(said), "{tool} {said}: {error}");
        assert_eq!(bench.count(method, path), 1, "{tool} {said}");
    }
}

/// A write resmon refused (a 4xx) says, after what resmon said, that it was
/// not carried out; a read, and a write whose outcome is not known (a 5xx),
/// say nothing of the kind.
#[test]
fn a_refused_write_says_that_it_was_not_carried_out() {
    let mut bench = bench();
    // The token refused twice (the one resend after rediscovery included).
    bench.fault_only("POST", "/api/routines", Fault::Unauthorized);
    let error = bench.error("create_routine", routine_arguments());
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    let text = message(&error);
    assert!(text.contains("refused this server's local API token"), "{text}");
    assert!(text.contains("resmon did nothing: it has not created a routine."), "{text}");
    assert!(text.find("did nothing") < text.find("Restart resmon"), "said before the advice: {text}");
    // resmon's own sentence first, then what was not done.
    let already = json!({"detail": "Already running"}).to_string();
    bench.fault_only("POST", "/api/routines/8/run", Fault::Status(409, already.clone()));
    let error = bench.error("run_routine", json!({"routine_id": 8}));
    assert_eq!(error["error"], "conflict", "{error}");
    assert_eq!(
        message(&error),
        "Already running. resmon did nothing: it has not started or queued a run of routine 8.",
        "{error}"
    );
    let gone = json!({"detail": "Routine not found"}).to_string();
    bench.fault_only("POST", "/api/routines/8/activate", Fault::Status(404, gone));
    let error = bench.error("activate_routine", json!({"routine_id": 8}));
    assert_eq!(error["error"], "not_found", "{error}");
    assert_eq!(message(&error), "Routine not found. resmon did nothing: it has not activated routine 8.");
    let invalid = json!({"detail": [{"loc": ["body", "settings", "ai_model"], "msg": "Value error"}]});
    bench.fault_only("PUT", "/api/settings/ai", Fault::Status(422, invalid.to_string()));
    let error = bench.error("update_settings", json!({"group": "ai", "settings": {"ai_model": "x"}}));
    assert_eq!(error["error"], "invalid_argument", "{error}");
    assert!(message(&error).ends_with("resmon did nothing: it has not saved the change to the ai settings."));
    // A read changes nothing, and says nothing of it.
    bench.fault_only("GET", "/api/routines", Fault::Status(409, already));
    let error = bench.error("list_routines", json!({}));
    assert_eq!(message(&error), "Already running", "{error}");
    bench.fault_only("GET", "/api/routines", Fault::Unauthorized);
    let error = bench.error("list_routines", json!({}));
    assert!(!message(&error).contains("did nothing"), "{error}");
    // A 5xx does not say whether the write was done.
    bench.fault_only("POST", "/api/routines/8/run", Fault::Status(503, String::new()));
    let error = bench.error("run_routine", json!({"routine_id": 8}));
    assert_eq!(error["detail"]["outcome_unknown"], json!(true), "{error}");
    assert!(!message(&error).contains("did nothing"), "{error}");
}

/// contract 1.0 "Safety" (contract-notes 13): a refusal whose reason is, or
/// holds, JSON text never shows a credential-shaped key's value, on a read
/// POST, a write POST, the settings PUT and a GET alike, whether resmon's
/// reason is judged the caller's, this server's or nobody's. The reason goes
/// to `detail.said` and the message names the status and route instead.
#[test]
fn a_refusal_reason_holding_json_text_shows_no_credential_value() {
    let mut bench = bench();
    let routine_get = json!({"routine_id": bench.fake.state().routines[0]["id"].clone()});
    let places = [
        ("search_corpus", json!({"query": "graph"}), "POST", "/api/explorer/search"),
        ("run_sweep", json!({"query": "graph", "sources": ["arxiv"]}), "POST", "/api/search/sweep"),
        ("create_routine", routine_arguments(), "POST", "/api/routines"),
        ("update_settings", json!({"group": "ai", "settings": {"ai_model": "m"}}), "PUT", "/api/settings/ai"),
        ("get_routine", routine_get, "GET", "/api/routines/{id}"),
    ];
    let reasons = [
        r#"{"ephemeral_credentials": {"core_api_key": "LEAKED-CORE-KEY"}}"#,
        r#"{"api_key": "sk-ant-LEAKED123456", "smtp_password": "LEAKED-hunter2"}"#,
        // Quoting one of the call's values, so that it is judged the caller's.
        r#"{"query": "graph", "name": "R", "ai_model": "m", "api_key": "LEAKED-QUOTED"}"#,
        r#"Refused: {"smtp_password": "LEAKED-EMBEDDED"} was not accepted"#,
    ];
    for (tool, arguments, method, path) in &places {
        for status in [400, 422, 409, 418, 500] {
            for reason in reasons {
                let body = json!({ "detail": reason }).to_string();
                bench.fault_only(method, path, Fault::Status(status, body));
                bench.session.transcript.clear();
                let error = bench.error(tool, arguments.clone());
                let case = format!("{tool} {status} {reason}");
                let text = message(&error);
                assert!(text.contains(&status.to_string()), "{case}: the status is named: {text}");
                if status < 500 {
                    // Whole JSON text as it came; a sentence as its parts, each object a value.
                    let said = &error["detail"]["said"];
                    assert!(said.is_string() || said.is_array(), "{case}: {error}");
                }
                let transcript = bench.session.transcript.join("\n");
                assert!(!transcript.contains("LEAKED"), "{case}: a credential value was shown: {transcript}");
            }
        }
    }
}

/// A credential in resmon's own words is never shown however they carry it:
/// a JSON object inside its `detail.message`, a 422 problem's `msg`, JSON
/// that does not parse (a trailing comma, cut short, a Python dict), and
/// JSON quoted inside a value of JSON (contract-notes 13, "Secrets in text").
#[test]
fn a_credential_in_resmons_own_words_is_never_shown_in_any_form() {
    let mut bench = bench();
    let routine_get = json!({"routine_id": bench.fake.state().routines[0]["id"].clone()});
    let places = [
        ("search_corpus", json!({"query": "graph"}), "POST", "/api/explorer/search"),
        ("run_sweep", json!({"query": "graph", "sources": ["arxiv"]}), "POST", "/api/search/sweep"),
        ("update_settings", json!({"group": "ai", "settings": {"ai_model": "m"}}), "PUT", "/api/settings/ai"),
        ("get_routine", routine_get, "GET", "/api/routines/{id}"),
    ];
    let bodies = [
        json!({"detail": {"message": r#"Refused {"api_key": "LEAKED-1abcdef"}"#, "code": "c"}}),
        json!({"detail": {"message": "no", "reason": r#"x {"api_key": "LEAKED-2abcdef"}"#}}),
        json!({"detail": [{"loc": ["body", "query"], "msg": r#"bad {"api_key": "LEAKED-3abcdef"}"#}]}),
        json!({"detail": r#"Refused {"api_key": "LEAKED-4abcdef",}"#}),
        json!({"detail": r#"Refused {"api_key": "LEAKED-5abc"#}),
        json!({"detail": "Refused {'api_key': 'LEAKED-6abcdef'}"}),
        json!({"detail": r#"Refused {"body": "x {\"api_key\": \"LEAKED-7abcdef\"} y"}"#}),
    ];
    for (tool, arguments, method, path) in &places {
        for status in [400, 409, 422, 500] {
            for body in &bodies {
                bench.fault_only(method, path, Fault::Status(status, body.to_string()));
                bench.session.transcript.clear();
                let error = bench.error(tool, arguments.clone());
                let transcript = bench.session.transcript.join("\n");
                assert!(!transcript.contains("LEAKED"), "{tool} {status} {body}: {error}");
            }
        }
    }
}

/// contract-notes 17: a word of resmon's sentence that only happens to
/// match the call (a number, a common word that is a key inside an object,
/// a key this server built around the caller's value) is no evidence, so
/// none of these is blamed on the caller; a sentence that names the
/// caller's field, quotes a nested key or one of the call's values still is.
#[test]
fn a_refusal_is_not_blamed_on_the_caller_by_coincidence() {
    let mut bench = bench();
    let watch = json!({"name": "W", "keywords": [], "sources": ["arxiv"], "schedule": "0 8 * * 1",
                       "entity": {"profile_id": 5, "mode": "new_papers"}});
    let sweep = json!({"query": "graph", "sources": ["arxiv"], "max_results": 1});
    let storage = json!({"group": "storage", "settings": {"archive_after_days": "30"}});
    let profile = json!({"name": "Jane Doe", "orcid": "0000-0002-1825-0097"});
    let cases = [
        (
            "run_sweep",
            &sweep,
            "POST",
            "/api/search/sweep",
            "There was an error parsing the body at line 1",
            "upstream_error",
        ),
        (
            "create_routine",
            &watch,
            "POST",
            "/api/routines",
            "Expecting ',' delimiter: line 1 column 5",
            "upstream_error",
        ),
        (
            "update_settings",
            &storage,
            "PUT",
            "/api/settings/storage",
            "Settings are rate limited to 30 writes a minute",
            "upstream_error",
        ),
        (
            "create_routine",
            &watch,
            "POST",
            "/api/routines",
            "The database is in read-only mode",
            "upstream_error",
        ),
        ("create_watch_profile", &profile, "POST", "/api/profiles", "Value not accepted", "upstream_error"),
        // Evidence that stays evidence.
        (
            "create_routine",
            &watch,
            "POST",
            "/api/routines",
            "entity mode must be new_papers or retractions",
            "invalid_argument",
        ),
        (
            "create_routine",
            &watch,
            "POST",
            "/api/routines",
            "'mode' must be new_papers or retractions",
            "invalid_argument",
        ),
        ("create_routine", &watch, "POST", "/api/routines", "mode: not allowed here", "invalid_argument"),
        (
            "create_routine",
            &watch,
            "POST",
            "/api/routines",
            "No watch profile with id 5.",
            "invalid_argument",
        ),
        (
            "update_settings",
            &storage,
            "PUT",
            "/api/settings/storage",
            "archive_after_days must be at least 60",
            "invalid_argument",
        ),
        (
            "run_sweep",
            &sweep,
            "POST",
            "/api/search/sweep",
            "max_results must be at least 10",
            "invalid_argument",
        ),
        (
            "create_watch_profile",
            &profile,
            "POST",
            "/api/profiles",
            "'0000-0002-1825-0097' is not a known ORCID iD",
            "invalid_argument",
        ),
    ];
    for (tool, arguments, method, path, said, code) in cases {
        bench.fault_only(method, path, Fault::Status(400, json!({ "detail": said }).to_string()));
        let error = bench.error(tool, arguments.clone());
        assert_eq!(error["error"], code, "{tool} {said}: {error}");
        assert_eq!(bench.count(method, path), 1, "{tool} {said}");
    }
}

/// A refusal that names nothing this server can place says only what is
/// known: resmon may name the argument in its own words ("At least one
/// keyword is required"), so the message does not claim that no argument
/// was at fault, and it blames none.
#[test]
fn an_unplaced_refusal_claims_only_that_it_cannot_be_told() {
    // An array of plain values in a sentence names no key: it stays in the
    // message as resmon's words.
    let mut bench = bench();
    let said = "Unknown sources: [\"nowhere\", 7]";
    bench.fault_only("POST", "/api/search/sweep", Fault::Status(400, json!({ "detail": said }).to_string()));
    let error = bench.error("run_sweep", json!({"query": "graph", "sources": ["arxiv"]}));
    assert!(message(&error).contains(said), "{error}");
    for said in ["At least one keyword is required", "Invalid schedule: hour 25 is out of range"] {
        bench.fault_only("POST", "/api/routines", Fault::Status(400, json!({ "detail": said }).to_string()));
        let error = bench.error("create_routine", routine_arguments());
        assert_eq!(error["error"], "upstream_error", "{said}: {error}");
        let text = message(&error);
        assert!(!text.contains("nothing shows"), "{said}: {text}");
        assert!(
            text.contains(
                "this server cannot tell from resmon's answer whether an argument of this call was at fault"
            ),
            "{said}: {text}"
        );
    }
}

/// A single-word field name is too common a word to blame the caller by
/// itself (contract-notes 17): "Rate limit exceeded" is about no `limit`
/// argument, and "Query planner timed out" about no `query`. It counts only
/// written as a key (quoted or backticked, or followed by `:` or `=`) or
/// within a longer name or path in a row; a name of more words, and a
/// quoted value, still count.
#[test]
fn a_single_word_field_named_in_passing_is_no_evidence() {
    let mut bench = bench();
    let search = json!({"query": "graph", "limit": 10});
    let sweep = json!({"query": "graph", "sources": ["arxiv"], "max_results": 5});
    let cases = [
        (
            "search_corpus",
            &search,
            "POST",
            "/api/explorer/search",
            "Rate limit exceeded, try again later",
            false,
        ),
        ("search_corpus", &search, "POST", "/api/explorer/search", "The query is too long.", false),
        (
            "run_sweep",
            &sweep,
            "POST",
            "/api/search/sweep",
            "Query planner timed out; the database is busy",
            false,
        ),
        ("run_sweep", &sweep, "POST", "/api/search/sweep", "The query queue is full", false),
        // A colon after another word ends a phrase of prose, not a label.
        (
            "search_corpus",
            &search,
            "POST",
            "/api/explorer/search",
            "Rate limit: 30 requests per minute",
            false,
        ),
        ("search_corpus", &search, "POST", "/api/explorer/search", "Refused (limit: at most 5)", true),
        // Written as a key, the same word is evidence.
        ("search_corpus", &search, "POST", "/api/explorer/search", "limit: must be at most 5", true),
        ("search_corpus", &search, "POST", "/api/explorer/search", "limit=10 is too large", true),
        ("search_corpus", &search, "POST", "/api/explorer/search", "'query' must not be empty", true),
        ("search_corpus", &search, "POST", "/api/explorer/search", "`query` is too long", true),
        ("run_sweep", &sweep, "POST", "/api/search/sweep", "\"query\" must not be empty", true),
        // A name of more than one word, and a quoted value.
        ("run_sweep", &sweep, "POST", "/api/search/sweep", "max_results: 5 is below the minimum", true),
        ("run_sweep", &sweep, "POST", "/api/search/sweep", "max results must be at least 10", true),
        ("search_corpus", &search, "POST", "/api/explorer/search", "No results for 'graph'", true),
    ];
    for (tool, arguments, method, path, said, callers) in cases {
        bench.fault_only(method, path, Fault::Status(400, json!({ "detail": said }).to_string()));
        let error = bench.error(tool, arguments.clone());
        let text = message(&error);
        assert!(text.contains(said), "{tool} {said}: {error}");
        if callers {
            assert_eq!(error["error"], "invalid_argument", "{tool} {said}: {error}");
        } else {
            assert_eq!(error["error"], "upstream_error", "{tool} {said}: {error}");
            assert!(
                text.contains(
                    "this server cannot tell from resmon's answer whether an argument of this call was at fault"
                ),
                "{tool} {said}: {text}"
            );
            assert!(error["detail"].get("arguments").is_none(), "{tool} {said}: {error}");
        }
        assert_eq!(bench.count(method, path), 1, "{tool} {said}");
    }
}

/// An accepted sweep whose answer could not be read might have said it was
/// queued (contract-notes 26): the closing holds for a started run and a
/// queued one alike, and "shows this one" is kept for an execution id read.
#[test]
fn a_sweep_whose_answer_was_not_read_is_not_said_to_be_listed() {
    let mut bench = bench();
    let sweep = json!({"query": "graph", "sources": ["arxiv"]});
    let path = "/api/search/sweep";
    for (case, fault) in
        [("broke off", Fault::BreakOff(3)), ("no id", Fault::SetKeys(json!({"execution_id": null})))]
    {
        bench.fault_only("POST", path, fault);
        let error = bench.applied_error("run_sweep", sweep.clone(), "resmon accepted the one-off search");
        let text = message(&error);
        assert!(!text.contains("shows this one"), "{case}: {text}");
        assert!(
            text.ends_with(
                "Do not call run_sweep again: that would start or queue a second search; list_executions \
                 shows the run, a queued one once it starts."
            ),
            "{case}: {text}"
        );
        assert_eq!(bench.count("POST", path), 1, "{case}: sent once");
    }
    // An execution id read, and nothing saying queued: the run is listed.
    bench.fault_only("POST", path, Fault::SetKeys(json!({"duplicate": null})));
    let error = bench.error("run_sweep", sweep);
    assert!(message(&error).ends_with("list_executions shows this one."), "{error}");
}
