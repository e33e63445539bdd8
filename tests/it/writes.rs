//! The seven write tools, read-only sessions and the settings guards
//! (contract 1.0 "Tools › Write", "Safety", "A read-only session", "The
//! settings update_settings may change"; contract-notes 7, 11-13). The
//! routes no tool may reach ("Excluded on purpose") are routes.rs's.
//!
//! Every refusal is checked against the fake's request log: a guard that
//! answers correctly but still sent something has failed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};

use crate::fake_backend::Fault;

use crate::harness::{Fake, Session, WRITE_TOOLS, cli_call, env_for, start_fake, structured, tool_error};

// ------------------------------------------------------------------ helpers

struct Bench {
    session: Session,
    fake: Fake,
}

fn bench() -> Bench {
    bench_with(&[])
}

fn bench_with(extra: &[(&str, &str)]) -> Bench {
    let fake = start_fake();
    let mut env = env_for(&fake);
    env.extend(extra.iter().map(|(key, value)| (key.to_string(), value.to_string())));
    let session = Session::initialized(&env);
    Bench { session, fake }
}

impl Bench {
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.session.call(tool, arguments)
    }

    /// A successful call (Session::call has checked it against the outputSchema).
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        structured(&self.call(tool, arguments)).clone()
    }

    /// The requests a call sent, discovery's health check left out.
    fn sent(&self) -> Vec<(String, String)> {
        self.fake
            .requests()
            .iter()
            .filter(|request| request.path != "/api/health")
            .map(|request| (request.method.clone(), request.path.clone()))
            .collect()
    }

    /// The JSON body of the last request to `method path`.
    fn body(&self, method: &str, path: &str) -> Value {
        let requests = self.fake.requests();
        let request = requests
            .iter()
            .rev()
            .find(|request| request.method == method && request.path == path)
            .unwrap_or_else(|| panic!("no {method} {path} was sent"));
        request.json().unwrap_or_else(|| panic!("{method} {path} had no JSON body"))
    }

    /// Calls, expects a tool error, and requires that nothing reached resmon.
    fn refused_with_nothing_sent(&mut self, tool: &str, arguments: Value) -> Value {
        self.fake.clear_requests();
        let result = self.call(tool, arguments.clone());
        let error = tool_error(&result);
        assert!(
            self.fake.requests().is_empty(),
            "{tool} {arguments} sent {:?} before refusing",
            self.fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect::<Vec<_>>()
        );
        error
    }

    fn clear(&self) {
        self.fake.clear_requests();
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(method, path)| (method.to_string(), path.to_string())).collect()
}

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The app's keys by group, as data (fixtures/settings_keys.json).
fn app_keys() -> BTreeMap<String, Vec<String>> {
    let data = fixture("settings_keys.json");
    data["groups"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(group, keys)| {
            let keys = keys.as_array().unwrap().iter().map(|key| key.as_str().unwrap().to_string()).collect();
            (group.clone(), keys)
        })
        .collect()
}

/// The keys contract 1.0 lists as withheld, each refused on its name.
const CONTRACT_WITHHELD: [&str; 19] = [
    "ai_cli_path",
    "assistant_runtime",
    "ai_provider",
    "assistant_provider",
    "ai_custom_base_url",
    "ai_local_endpoint",
    "ai_custom_header_prefix",
    "ai_chain",
    "embedding_provider",
    "embedding_endpoint",
    "embedding_base_url",
    "smtp_server",
    "smtp_port",
    "smtp_to",
    "export_directory",
    "ai_extraction_goals",
    "ai_tone",
    "ai_summary_length",
    "ai_show_audit_prefix",
];

fn group_of(key: &str) -> String {
    app_keys().into_iter().find(|(_, keys)| keys.iter().any(|k| k == key)).map(|(group, _)| group).unwrap()
}

// ------------------------------------------------------------------ run_sweep

#[test]
fn run_sweep_sends_the_routes_own_body_and_answers_the_execution_at_once() {
    let mut bench = bench();
    let answer = bench.ok("run_sweep", json!({"query": "graph attention", "sources": ["arxiv", "crossref"]}));
    assert_eq!(bench.sent(), pairs(&[("POST", "/api/search/sweep")]));
    assert_eq!(
        bench.body("POST", "/api/search/sweep"),
        json!({"query": "graph attention", "repositories": ["arxiv", "crossref"], "max_results": 50})
    );
    let id = answer["execution_id"].as_i64().expect("an integer execution_id");
    assert_eq!(answer["duplicate"], json!(false));
    assert!(answer["detail"].as_str().unwrap().contains("get_execution"));
    assert!(
        bench.fake.state().executions.iter().any(|execution| execution["id"] == json!(id)),
        "the answered id is the run resmon started"
    );

    bench.clear();
    bench.ok(
        "run_sweep",
        json!({"query": "q", "sources": ["pubmed"], "date_from": "2026-01-01", "date_to": "2026-02-01",
               "max_results": 10, "ai_enabled": true}),
    );
    assert_eq!(
        bench.body("POST", "/api/search/sweep"),
        json!({"query": "q", "repositories": ["pubmed"], "max_results": 10, "date_from": "2026-01-01",
               "date_to": "2026-02-01", "ai_enabled": true})
    );
    bench.clear();
    bench.ok("run_sweep", json!({"query": "q", "sources": ["pubmed"], "ai_enabled": false}));
    assert_eq!(bench.body("POST", "/api/search/sweep")["ai_enabled"], json!(false), "a given false is sent");
}

#[test]
fn run_sweep_refuses_bad_arguments_before_anything_is_sent() {
    let mut bench = bench();
    for (arguments, argument) in [
        (json!({"sources": ["arxiv"]}), "query"),
        (json!({"query": "   ", "sources": ["arxiv"]}), "query"),
        (json!({"query": "q"}), "sources"),
        (json!({"query": "q", "sources": []}), "sources"),
        (json!({"query": "q", "sources": ["arxiv", " "]}), "sources"),
        (json!({"query": "q", "sources": "arxiv"}), "sources"),
        (json!({"query": "q", "sources": ["arxiv"], "max_results": 0}), "max_results"),
        (json!({"query": "q", "sources": ["arxiv"], "keywords": ["x"]}), "keywords"),
        (json!({"query": "q", "sources": ["arxiv"], "ai_enabled": "yes"}), "ai_enabled"),
    ] {
        let error = bench.refused_with_nothing_sent("run_sweep", arguments.clone());
        assert_eq!(error["error"], "invalid_argument", "{arguments}");
        assert_eq!(error["detail"]["argument"], argument, "{arguments}: {error}");
    }
}

#[test]
fn run_sweep_at_the_run_limit_is_a_conflict_in_resmons_words() {
    let mut bench = bench();
    let limit = bench.fake.state().run_limit;
    bench.fake.state().running_count = limit;
    let error = tool_error(&bench.call("run_sweep", json!({"query": "q", "sources": ["arxiv"]})));
    assert_eq!(error["error"], "conflict");
    assert!(error["message"].as_str().unwrap().contains("maximum of 3 concurrent executions"), "{error}");
    assert_eq!(error["detail"]["retry_after_seconds"], json!(5));

    bench.fake.override_response("POST", "/api/search/sweep", 500, &[], "Internal Server Error");
    let error = tool_error(&bench.call("run_sweep", json!({"query": "q", "sources": ["arxiv"]})));
    assert_eq!(error["error"], "upstream_error");
    bench.fake.override_response(
        "POST",
        "/api/search/sweep",
        422,
        &[("Content-Type", "application/json")],
        r#"{"detail": [{"type": "missing", "loc": ["body", "query"], "msg": "Field required", "input": {}}]}"#,
    );
    let error = tool_error(&bench.call("run_sweep", json!({"query": "q", "sources": ["arxiv"]})));
    assert_eq!(error["error"], "invalid_argument");
}

#[test]
fn run_sweep_says_how_to_follow_a_run_and_that_interrupted_is_not_failed() {
    let mut session = Session::initialized(&[]);
    let answer = session.request("tools/list", json!({}));
    let tools = answer["result"]["tools"].as_array().unwrap();
    let sweep = tools.iter().find(|tool| tool["name"] == "run_sweep").unwrap();
    let description = sweep["description"].as_str().unwrap();
    assert!(description.contains("get_execution"), "{description}");
    assert!(description.contains("`interrupted`") && description.contains("not `failed`"), "{description}");
}

// ------------------------------------------------------------------ run_routine

#[test]
fn run_routine_started_runs_even_an_inactive_routine_and_says_so() {
    let mut bench = bench();
    let answer = bench.ok("run_routine", json!({"routine_id": 8}));
    assert_eq!(bench.sent(), pairs(&[("POST", "/api/routines/8/run")]));
    assert_eq!(answer["queued"], json!(false));
    assert!(answer["execution_id"].is_i64(), "{answer}");
    assert_eq!(answer["queue_position"], Value::Null);
    assert_eq!(answer["routine_id"], json!(8));
    assert_eq!(answer["was_inactive"], json!(true));
    assert!(answer["detail"].as_str().unwrap().contains("not scheduled"), "{answer}");
}

#[test]
fn run_routine_at_the_run_limit_is_queued_with_no_execution_id() {
    let mut bench = bench();
    let limit = bench.fake.state().run_limit;
    bench.fake.state().running_count = limit;
    let answer = bench.ok("run_routine", json!({"routine_id": 7}));
    assert_eq!(answer["queued"], json!(true));
    assert!(answer.as_object().unwrap().contains_key("execution_id"), "always present (contract-notes 7)");
    assert_eq!(answer["execution_id"], Value::Null);
    assert_eq!(answer["queue_position"], json!(1));
    assert!(answer["detail"].as_str().unwrap().contains("start on its own"), "{answer}");
    let second = bench.ok("run_routine", json!({"routine_id": 8}));
    assert_eq!(second["queue_position"], json!(2));

    bench.fake.state().queue_limit = 2;
    let error = tool_error(&bench.call("run_routine", json!({"routine_id": 7})));
    assert_eq!(error["error"], "conflict");
    assert!(error["message"].as_str().unwrap().contains("queue is full"), "{error}");
    assert!(error["detail"].get("conflict").is_none(), "queue-full is not routine_already_running");
}

#[test]
fn run_routine_already_running_carries_the_conflict_and_the_running_execution() {
    let mut bench = bench();
    // Routine 9 has execution 121 running in the fixtures.
    let error = tool_error(&bench.call("run_routine", json!({"routine_id": 9})));
    assert_eq!(error["error"], "conflict");
    assert_eq!(error["detail"], json!({"conflict": "routine_already_running", "execution_id": 121}));
    assert!(error["message"].as_str().unwrap().contains("already running"), "{error}");

    // resmon may not know the id yet: the header is then empty, and so is the field.
    bench.fake.override_response(
        "POST",
        "/api/routines/7/run",
        409,
        &[
            ("Content-Type", "application/json"),
            ("X-Resmon-Conflict", "routine_already_running"),
            ("X-Resmon-Execution-Id", ""),
        ],
        r#"{"detail": "This routine is already running. Wait for that run to finish."}"#,
    );
    let error = tool_error(&bench.call("run_routine", json!({"routine_id": 7})));
    assert_eq!(error["detail"], json!({"conflict": "routine_already_running", "execution_id": null}));
}

#[test]
fn run_routine_maps_a_missing_routine_and_refuses_bad_ids_unsent() {
    let mut bench = bench();
    let error = tool_error(&bench.call("run_routine", json!({"routine_id": 999})));
    assert_eq!(error["error"], "not_found");
    assert_eq!(
        error["message"],
        "Routine not found. resmon did nothing: it has not started or queued a run of routine 999."
    );
    for arguments in [
        json!({}),
        json!({"routine_id": 0}),
        json!({"routine_id": "7"}),
        json!({"routine_id": 7, "now": true}),
    ] {
        let error = bench.refused_with_nothing_sent("run_routine", arguments.clone());
        assert_eq!(error["error"], "invalid_argument", "{arguments}");
    }
}

#[test]
fn run_tools_work_through_the_call_subcommand() {
    let fake = start_fake();
    let (code, answer, text) =
        cli_call("run_sweep", json!({"query": "q", "sources": ["arxiv"]}), &env_for(&fake));
    assert_eq!(code, Some(0), "{text}");
    assert!(answer["execution_id"].is_i64(), "{text}");
    let (code, answer, text) = cli_call("run_routine", json!({"routine_id": 9}), &env_for(&fake));
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(answer["detail"]["conflict"], "routine_already_running");
}

// ------------------------------------------------------------------ create_routine

#[test]
fn create_routine_posts_inactive_and_answers_the_record_read_back() {
    let mut bench = bench();
    let id = bench.fake.state().next_routine_id;
    let answer = bench.ok(
        "create_routine",
        json!({"name": "Graph ML", "keywords": ["graph attention", "message passing"],
               "sources": ["arxiv", "openalex"], "schedule": "0 8 * * 1"}),
    );
    assert_eq!(bench.sent(), pairs(&[("POST", "/api/routines"), ("GET", &format!("/api/routines/{id}"))]));
    assert_eq!(
        bench.body("POST", "/api/routines"),
        json!({
            "name": "Graph ML",
            "schedule_cron": "0 8 * * 1",
            "parameters": {"query": "graph attention message passing", "repositories": ["arxiv", "openalex"],
                           "keywords": ["graph attention", "message passing"]},
            "is_active": false,
            "ai_enabled": false
        }),
        "is_active false is written out; intent and unset switches are not sent"
    );
    let routine = &answer["routine"];
    assert_eq!(routine["id"], json!(id));
    assert_eq!(routine["is_active"], json!(false), "a boolean, from the read-back");
    assert_eq!(routine["notify_on_complete"], json!(false));
    assert_eq!(routine["schedule_cron"], "0 8 * * 1");
    assert_eq!(routine["parameters"]["repositories"], json!(["arxiv", "openalex"]), "parsed, not JSON text");
    assert_eq!(routine["intent"], Value::Null);
    assert_eq!(answer["entity_warning"], Value::Null);
    assert!(answer["detail"].as_str().unwrap().contains("activate_routine"), "{answer}");
    assert_eq!(bench.fake.state().routine(id).unwrap()["is_active"], json!(0), "stored inactive");
}

#[test]
fn create_routine_sends_intent_and_switches_only_when_given_and_passes_entity_through() {
    let mut bench = bench();
    let answer = bench.ok(
        "create_routine",
        json!({"name": "Watch", "keywords": [], "sources": ["biorxiv", "medrxiv"], "schedule": "0 6 * * *",
               "intent": "New papers by this author", "entity": {"profile_id": 5, "mode": "retractions"},
               "ai_enabled": true, "email_enabled": true, "notify_on_complete": false}),
    );
    let body = bench.body("POST", "/api/routines");
    assert_eq!(body["intent"], "New papers by this author");
    assert_eq!(body["parameters"]["entity"], json!({"profile_id": 5, "mode": "retractions"}));
    assert_eq!(body["parameters"]["query"], "");
    assert_eq!(body["ai_enabled"], json!(true));
    assert_eq!(body["email_enabled"], json!(true));
    assert_eq!(body["notify_on_complete"], json!(false));
    assert!(body.get("email_ai_summary_enabled").is_none(), "not given, not sent: {body}");
    // Neither source can be asked about an author, so resmon warns; the warning
    // is a field and part of the sentence a caller repeats.
    let warning = answer["entity_warning"].as_str().expect("entity_warning");
    assert!(warning.contains("find nothing"), "{warning}");
    assert!(answer["detail"].as_str().unwrap().contains(warning), "{answer}");
    assert_eq!(answer["routine"]["intent"], "New papers by this author");
    assert_eq!(answer["routine"]["ai_enabled"], json!(true));
    assert_eq!(answer["routine"]["parameters"]["entity"]["mode"], "retractions");
}

#[test]
fn create_routine_surfaces_resmons_entity_refusal_without_a_read_back() {
    let mut bench = bench();
    bench.clear();
    let result = bench.call(
        "create_routine",
        json!({"name": "W", "keywords": [], "sources": ["arxiv"], "schedule": "0 6 * * *",
               "entity": {"profile_id": 999, "mode": "new_papers"}}),
    );
    let error = tool_error(&result);
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(
        error["message"],
        "No watch profile with id 999. resmon did nothing: it has not created a routine."
    );
    assert_eq!(bench.sent(), pairs(&[("POST", "/api/routines")]), "entity went to resmon unexamined");
    // An institution profile is resmon's to refuse too.
    let error = tool_error(&bench.call(
        "create_routine",
        json!({"name": "W", "keywords": [], "sources": ["arxiv"], "schedule": "0 6 * * *",
               "entity": {"profile_id": 7, "mode": "new_papers"}}),
    ));
    assert_eq!(error["error"], "invalid_argument");
    assert!(error["message"].as_str().unwrap().contains("institution"), "{error}");
}

#[test]
fn create_routine_refuses_bad_arguments_before_anything_is_sent() {
    let mut bench = bench();
    let base = json!({"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"});
    let with = |key: &str, value: Value| {
        let mut arguments = base.clone();
        arguments[key] = value;
        arguments
    };
    let without = |key: &str| {
        let mut arguments = base.clone();
        arguments.as_object_mut().unwrap().remove(key);
        arguments
    };
    for (arguments, argument) in [
        (without("name"), "name"),
        (without("keywords"), "keywords"),
        (without("sources"), "sources"),
        (without("schedule"), "schedule"),
        (with("name", json!(" ")), "name"),
        (with("schedule", json!("")), "schedule"),
        (with("keywords", json!([])), "keywords"),
        (with("keywords", json!(["k", ""])), "keywords"),
        (with("sources", json!([])), "sources"),
        (with("intent", json!("  ")), "intent"),
        // `entity` must be an object; what is inside it is resmon's to judge.
        (with("entity", json!("5")), "entity"),
        (with("ai_settings", json!({"provider": "custom"})), "ai_settings"),
        (with("is_active", json!(true)), "is_active"),
        (with("email_enabled", json!("true")), "email_enabled"),
    ] {
        let error = bench.refused_with_nothing_sent("create_routine", arguments.clone());
        assert_eq!(error["error"], "invalid_argument", "{arguments}");
        assert_eq!(error["detail"]["argument"], argument, "{arguments}: {error}");
    }
    // Inside `entity`, nothing is checked here: resmon answers, and its 400
    // becomes invalid_argument carrying resmon's own sentence.
    for entity in
        [json!({"profile_id": 5, "mode": "authors"}), json!({"profile_id": "5", "mode": "new_papers"})]
    {
        bench.clear();
        let error = tool_error(&bench.call("create_routine", with("entity", entity.clone())));
        assert_eq!(error["error"], "invalid_argument", "{entity}: {error}");
        let sent: Vec<String> =
            bench.fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
        assert!(sent.contains(&"POST /api/routines".to_string()), "{entity}: {sent:?}");
    }
}

#[test]
fn create_routine_reports_a_failed_read_back_and_a_routine_resmon_left_active() {
    let mut bench = bench();
    let id = bench.fake.state().next_routine_id;
    let arguments = json!({"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"});
    bench.fake.override_response("GET", &format!("/api/routines/{id}"), 500, &[], "Internal Server Error");
    let error = tool_error(&bench.call("create_routine", arguments.clone()));
    assert_eq!(error["error"], "upstream_error");
    assert_eq!(error["detail"]["id"], json!(id));
    assert_eq!(error["detail"]["applied"], json!(true));

    // A backend that ignored is_active: the answer says what resmon holds.
    let next = id + 1;
    let record = json!({"id": next, "name": "R", "schedule_cron": "0 8 * * 1",
        "parameters": "{\"query\": \"k\", \"repositories\": [\"arxiv\"]}", "is_active": true,
        "email_enabled": false, "email_ai_summary_enabled": false, "ai_enabled": false,
        "notify_on_complete": false, "ai_settings": null, "storage_settings": null, "intent": null});
    bench.fake.override_response(
        "GET",
        &format!("/api/routines/{next}"),
        200,
        &[("Content-Type", "application/json")],
        &record.to_string(),
    );
    let answer = bench.ok("create_routine", arguments);
    assert_eq!(answer["routine"]["is_active"], json!(true));
    assert!(answer["detail"].as_str().unwrap().contains("ACTIVE"), "{answer}");

    bench.fake.override_response(
        "POST",
        "/api/routines",
        422,
        &[("Content-Type", "application/json")],
        r#"{"detail": [{"type": "dict_type", "loc": ["body", "parameters"], "msg": "Input should be a valid dictionary", "input": "x"}]}"#,
    );
    let error = tool_error(&bench.call(
        "create_routine",
        json!({"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"}),
    ));
    // `parameters` is an object this server builds around the caller's
    // keywords and sources: a refusal of its shape blames no argument.
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert!(error["detail"].get("arguments").is_none(), "{error}");
}

/// Every field a write sends that this server filled in, at any depth: a
/// 422 about it is resmon's disagreement with this server, `upstream_error`
/// naming the field by its whole path; a 422 about a field inside one the
/// caller gave stays the caller's (contract-notes 17).
#[test]
fn a_422_on_a_field_this_server_filled_in_names_it_and_blames_no_argument() {
    let routine = json!({"name": "R", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1"});
    let cases = [
        ("POST", "/api/routines", "create_routine", routine.clone(), vec!["parameters", "query"]),
        ("POST", "/api/routines", "create_routine", routine.clone(), vec!["is_active"]),
        ("POST", "/api/routines", "create_routine", routine.clone(), vec!["ai_enabled"]),
        ("POST", "/api/profiles", "create_watch_profile", json!({"name": "Ada"}), vec!["kind"]),
        ("POST", "/api/profiles", "create_watch_profile", json!({"name": "Ada"}), vec!["identifiers"]),
        ("POST", "/api/profiles", "create_watch_profile", json!({"name": "Ada"}), vec!["affiliations"]),
        ("POST", "/api/profiles", "create_watch_profile", json!({"name": "Ada"}), vec!["field_hints"]),
        (
            "POST",
            "/api/profiles",
            "create_watch_profile",
            json!({"name": "Ada", "orcid": "0000-0002-1825-0097"}),
            vec!["identifiers", "orcid", "cited"],
        ),
        (
            "POST",
            "/api/search/sweep",
            "run_sweep",
            json!({"query": "graph", "sources": ["arxiv"]}),
            vec!["max_results"],
        ),
    ];
    for (method, path, tool, arguments, loc) in cases {
        let mut bench = bench();
        let mut full = vec![json!("body")];
        full.extend(loc.iter().map(|part| json!(part)));
        let body =
            json!({"detail": [{"type": "value_error", "loc": full, "msg": "Value error", "input": null}]});
        bench.fake.override_response(method, path, 422, &[], &body.to_string());
        let error = tool_error(&bench.call(tool, arguments));
        let field = loc.join(".");
        assert_eq!(error["error"], "upstream_error", "{tool} {field}: {error}");
        assert_eq!(error["detail"]["parameters"], json!([field]), "{tool} {field}: {error}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains(&format!("`{field}` that this server chose")), "{tool} {field}: {text}");
        assert_eq!(bench.fake.requests_to(method, path).len(), 1);
    }
    // Inside a field the caller gave, the caller's: a keyword, the entity.
    let inside = [
        (routine.clone(), vec!["parameters", "keywords", "0"]),
        (routine.clone(), vec!["parameters", "repositories", "0"]),
        (
            json!({"name": "R", "keywords": [], "sources": ["arxiv"], "schedule": "0 8 * * 1", "entity": {"profile_id": 5, "mode": "new_papers"}}),
            vec!["parameters", "entity", "profile_id"],
        ),
        (routine, vec!["schedule_cron"]),
    ];
    for (arguments, loc) in inside {
        let mut bench = bench();
        let mut full = vec![json!("body")];
        full.extend(loc.iter().map(|part| json!(part)));
        let body =
            json!({"detail": [{"type": "value_error", "loc": full, "msg": "Value error", "input": null}]});
        bench.fake.override_response("POST", "/api/routines", 422, &[], &body.to_string());
        let error = tool_error(&bench.call("create_routine", arguments));
        assert_eq!(error["error"], "invalid_argument", "{loc:?}: {error}");
        // The field resmon refused and its words are in the sentence.
        let said = format!("`{}`: Value error", loc.join("."));
        assert!(error["message"].as_str().unwrap().contains(&said), "{loc:?}: {error}");
    }
}

// ------------------------------------------------------------------ create_watch_profile

#[test]
fn create_watch_profile_lifts_basis_warning_to_the_top_and_repeats_it_in_detail() {
    let mut bench = bench();
    let answer = bench.ok(
        "create_watch_profile",
        json!({"name": "Ada Example", "aliases": ["A. Example"], "field_hints": ["graph learning"]}),
    );
    assert_eq!(bench.sent(), pairs(&[("POST", "/api/profiles")]));
    assert_eq!(
        bench.body("POST", "/api/profiles"),
        json!({"kind": "person", "display_name": "Ada Example",
               "names": [{"value": "Ada Example"}, {"value": "A. Example"}],
               "identifiers": {}, "affiliations": [], "field_hints": ["graph learning"]})
    );
    let first_key = answer.as_object().unwrap().keys().next().unwrap().clone();
    assert_eq!(first_key, "basis_warning", "the warning leads the answer: {answer}");
    let warning = answer["basis_warning"].as_str().expect("a warning without an ORCID");
    assert!(warning.contains("name-only"), "{warning}");
    assert!(answer["detail"].as_str().unwrap().contains(warning), "repeated inside detail: {answer}");
    assert_eq!(answer["profile"]["basis_warning"], json!(warning));
    assert_eq!(answer["profile"]["display_name"], "Ada Example");
    assert!(answer["profile"]["id"].is_i64());
}

#[test]
fn create_watch_profile_with_an_orcid_has_a_null_warning_that_is_still_present() {
    let mut bench = bench();
    let answer = bench.ok(
        "create_watch_profile",
        json!({"name": "Ada Example", "orcid": "0000-0002-1825-0097", "orcid_cited": "Her homepage",
               "affiliations": ["Example University"]}),
    );
    let body = bench.body("POST", "/api/profiles");
    assert_eq!(
        body["identifiers"],
        json!({"orcid": {"value": "0000-0002-1825-0097", "cited": "Her homepage"}})
    );
    assert_eq!(body["affiliations"], json!(["Example University"]));
    assert!(answer.as_object().unwrap().contains_key("basis_warning"));
    assert_eq!(answer["basis_warning"], Value::Null);
    assert!(answer["detail"].as_str().unwrap().contains("ORCID"), "{answer}");

    bench.ok("create_watch_profile", json!({"name": "B", "orcid": "0000-0002-1825-0097"}));
    let cited = bench.body("POST", "/api/profiles")["identifiers"]["orcid"]["cited"].clone();
    assert!(cited.as_str().is_some_and(|text| !text.is_empty()), "an uncited ORCID says so: {cited}");

    let error = tool_error(&bench.call("create_watch_profile", json!({"name": "C", "orcid": "12-34"})));
    assert_eq!(error["error"], "invalid_argument");
    assert!(error["message"].as_str().unwrap().contains("is not an ORCID"), "{error}");
}

#[test]
fn create_watch_profile_refuses_bad_arguments_before_anything_is_sent() {
    let mut bench = bench();
    for (arguments, argument) in [
        (json!({}), "name"),
        (json!({"name": "  "}), "name"),
        (json!({"name": "A", "orcid_cited": "somewhere"}), "orcid_cited"),
        (json!({"name": "A", "aliases": "B"}), "aliases"),
        (json!({"name": "A", "kind": "institution"}), "kind"),
    ] {
        let error = bench.refused_with_nothing_sent("create_watch_profile", arguments.clone());
        assert_eq!(error["error"], "invalid_argument", "{arguments}");
        assert_eq!(error["detail"]["argument"], argument, "{arguments}: {error}");
    }
}

// ------------------------------------------------------------------ activate / deactivate

#[test]
fn activate_and_deactivate_switch_the_schedule_flag_and_repeat_safely() {
    let mut bench = bench();
    for _ in 0..2 {
        let answer = bench.ok("activate_routine", json!({"routine_id": 8}));
        assert_eq!(answer, json!({"id": 8, "is_active": true}));
    }
    assert_eq!(
        bench.sent(),
        pairs(&[("POST", "/api/routines/8/activate"), ("POST", "/api/routines/8/activate")])
    );
    assert_eq!(bench.fake.state().routine(8).unwrap()["is_active"], json!(1));
    bench.clear();
    let answer = bench.ok("deactivate_routine", json!({"routine_id": 8}));
    assert_eq!(answer, json!({"id": 8, "is_active": false}));
    assert_eq!(bench.sent(), pairs(&[("POST", "/api/routines/8/deactivate")]));
    assert_eq!(bench.fake.state().routine(8).unwrap()["is_active"], json!(0));

    for tool in ["activate_routine", "deactivate_routine"] {
        let error = tool_error(&bench.call(tool, json!({"routine_id": 999})));
        assert_eq!(error["error"], "not_found", "{tool}");
        // resmon's sentence, then that the switch was not made.
        let done = if tool == "activate_routine" { "activated" } else { "deactivated" };
        assert_eq!(
            error["message"],
            format!("Routine not found. resmon did nothing: it has not {done} routine 999.")
        );
        for arguments in [json!({}), json!({"routine_id": -1}), json!({"routine_id": 1.5})] {
            let error = bench.refused_with_nothing_sent(tool, arguments);
            assert_eq!(error["error"], "invalid_argument");
        }
    }
    bench.fake.override_response("POST", "/api/routines/7/activate", 503, &[], "unavailable");
    assert_eq!(
        tool_error(&bench.call("activate_routine", json!({"routine_id": 7})))["error"],
        "upstream_error"
    );
}

#[test]
fn record_tools_work_through_the_call_subcommand() {
    let fake = start_fake();
    let (code, answer, text) = cli_call("deactivate_routine", json!({"routine_id": 7}), &env_for(&fake));
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(answer, json!({"id": 7, "is_active": false}));
    let (code, answer, text) =
        cli_call("create_watch_profile", json!({"name": "Ada Example"}), &env_for(&fake));
    assert_eq!(code, Some(0), "{text}");
    assert!(answer["basis_warning"].is_string(), "{text}");
}

// ------------------------------------------------------------------ update_settings: the happy paths

#[test]
fn update_settings_reads_puts_and_answers_the_diff_of_two_reads() {
    let mut bench = bench();
    let answer =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "claude-opus-4-1"}}));
    assert_eq!(
        bench.sent(),
        pairs(&[("GET", "/api/settings/ai"), ("PUT", "/api/settings/ai"), ("GET", "/api/settings/ai")])
    );
    assert_eq!(bench.body("PUT", "/api/settings/ai"), json!({"settings": {"ai_model": "claude-opus-4-1"}}));
    assert_eq!(answer["group"], "ai");
    assert_eq!(
        answer["changed"],
        json!({"ai_model": {"from": "claude-sonnet-4-5", "to": "claude-opus-4-1"}})
    );
    assert_eq!(answer["requested"], json!({"ai_model": "claude-opus-4-1"}));
    assert_eq!(answer["unchanged_key_count"], json!(app_keys()["ai"].len() - 1));

    // The same call again changes nothing, and says so.
    let again =
        bench.ok("update_settings", json!({"group": "ai", "settings": {"ai_model": "claude-opus-4-1"}}));
    assert_eq!(again["changed"], json!({}));
    assert_eq!(again["unchanged_key_count"], json!(app_keys()["ai"].len()));
}

#[test]
fn update_settings_answers_what_resmon_kept_not_what_was_asked() {
    let mut bench = bench();
    // A PUT that claims success and stores nothing: the diff must be empty.
    bench.fake.override_response(
        "PUT",
        "/api/settings/storage",
        200,
        &[("Content-Type", "application/json")],
        r#"{"success": true}"#,
    );
    let answer =
        bench.ok("update_settings", json!({"group": "storage", "settings": {"pdf_policy": "discard"}}));
    assert_eq!(answer["changed"], json!({}));
    assert_eq!(answer["requested"], json!({"pdf_policy": "discard"}));
    assert!(answer["detail"].as_str().unwrap().contains("did not keep"), "{answer}");
}

#[test]
fn the_text_false_can_never_switch_a_boolean_setting_on() {
    let mut bench = bench();
    let boolean_keys: Vec<String> = fixture("settings_keys.json")["boolean_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|key| key.as_str().unwrap().to_string())
        .collect();
    assert!(!boolean_keys.is_empty());
    for key in &boolean_keys {
        let group = group_of(key);
        let path = format!("/api/settings/{group}");
        for (value, expected) in [
            (json!("False"), false),
            (json!("TRUE"), true),
            (json!("false"), false),
            (json!(true), true),
            (json!(false), false),
        ] {
            let answer =
                bench.ok("update_settings", json!({"group": group, "settings": {key.as_str(): value}}));
            assert_eq!(bench.body("PUT", &path)["settings"][key], json!(expected), "{key}={value}");
            assert_eq!(answer["requested"][key], value, "requested echoes the ask");
        }
        // The last write left it false; "False" must leave it false.
        let answer =
            bench.ok("update_settings", json!({"group": group, "settings": {key.as_str(): "False"}}));
        assert_eq!(answer["changed"], json!({}), "{answer}");
        bench.ok("update_settings", json!({"group": group, "settings": {key.as_str(): "true"}}));
        let answer =
            bench.ok("update_settings", json!({"group": group, "settings": {key.as_str(): "False"}}));
        assert_eq!(answer["changed"][key], json!({"from": true, "to": false}), "{answer}");

        // Anything else is refused after the read and before the PUT.
        for value in [json!("yes"), json!("0"), json!(""), json!("no"), json!(" false")] {
            bench.clear();
            let error = tool_error(
                &bench.call("update_settings", json!({"group": group, "settings": {key.as_str(): value}})),
            );
            assert_eq!(error["error"], "invalid_argument", "{key}={value}");
            assert_eq!(bench.sent(), pairs(&[("GET", &path)]), "{key}={value}: no PUT");
        }
    }
}

#[test]
fn embeddings_diffs_its_nested_settings_and_never_writes_capability_metadata() {
    let mut bench = bench();
    let answer = bench
        .ok("update_settings", json!({"group": "embeddings", "settings": {"embedding_model": "all-minilm"}}));
    assert_eq!(
        bench.body("PUT", "/api/settings/embeddings"),
        json!({"settings": {"embedding_model": "all-minilm"}})
    );
    // The lane's model moves with it, but the lane is metadata, not a setting.
    assert_eq!(
        answer["changed"],
        json!({"embedding_model": {"from": "nomic-embed-text", "to": "all-minilm"}})
    );
    assert_eq!(answer["unchanged_key_count"], json!(app_keys()["embeddings"].len() - 1));

    for key in ["capability", "lane", "providers", "status", "settings"] {
        bench.clear();
        let error = tool_error(
            &bench.call("update_settings", json!({"group": "embeddings", "settings": {key: "x"}})),
        );
        assert_eq!(error["error"], "invalid_argument", "{key}");
        assert_eq!(error["detail"]["group_keys"], json!(app_keys()["embeddings"]), "{key}: {error}");
        assert_eq!(bench.sent(), pairs(&[("GET", "/api/settings/embeddings")]), "{key}: no PUT");
    }
    bench.clear();
    let error = tool_error(
        &bench
            .call("update_settings", json!({"group": "embeddings", "settings": {"embedding_enabled": true}})),
    );
    assert_eq!(error["error"], "invalid_argument", "a text key takes text, not a JSON boolean");
    assert_eq!(bench.sent(), pairs(&[("GET", "/api/settings/embeddings")]));
}

#[test]
fn update_settings_passes_on_resmons_own_refusal_of_a_value() {
    let mut bench = bench();
    let error = tool_error(&bench.call(
        "update_settings",
        json!({"group": "notifications", "settings": {"notify_automatic_mode": "sometimes"}}),
    ));
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(
        error["message"],
        "notify_automatic_mode must be 'all', 'selected', or 'none'. resmon did nothing: it has not saved \
         the change to the notifications settings."
    );
    assert_eq!(
        bench.sent(),
        pairs(&[("GET", "/api/settings/notifications"), ("PUT", "/api/settings/notifications")])
    );
}

#[test]
fn update_settings_works_through_the_call_subcommand() {
    let fake = start_fake();
    let (code, answer, text) = cli_call(
        "update_settings",
        json!({"group": "assistant", "settings": {"assistant_effort": "low"}}),
        &env_for(&fake),
    );
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(answer["changed"], json!({"assistant_effort": {"from": "high", "to": "low"}}));
    let (code, answer, _) = cli_call(
        "update_settings",
        json!({"group": "assistant", "settings": {"assistant_runtime": "api_key"}}),
        &env_for(&fake),
    );
    assert_eq!(code, Some(1));
    assert_eq!(answer["error"], "invalid_argument");
}

// ------------------------------------------------------------------ update_settings: the guards, in order

#[test]
fn a_group_outside_the_allowlist_is_refused_with_nothing_sent() {
    let mut bench = bench();
    let outside: Vec<String> = fixture("settings_keys.json")["groups_outside_the_allowlist"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert!(outside.contains(&"cloud".to_string()));
    for group in outside.iter().map(String::as_str).chain(["unknown", "AI", ""]) {
        let error = bench.refused_with_nothing_sent(
            "update_settings",
            json!({"group": group, "settings": {"cloud_provider": "s3"}}),
        );
        assert_eq!(error["error"], "invalid_argument", "{group}");
        assert_eq!(error["detail"]["argument"], "group", "{group}: {error}");
    }
    let error = bench.refused_with_nothing_sent("update_settings", json!({"group": "ai", "settings": {}}));
    assert_eq!(error["detail"]["argument"], "settings");
    let error = bench.refused_with_nothing_sent("update_settings", json!({"group": "ai"}));
    assert_eq!(error["detail"]["argument"], "settings");
    let error =
        bench.refused_with_nothing_sent("update_settings", json!({"group": "ai", "settings": "ai_model=x"}));
    assert_eq!(error["detail"]["argument"], "settings");
}

#[test]
fn a_credential_shaped_key_is_refused_on_its_name_before_the_withheld_check() {
    let mut bench = bench();
    for key in [
        "anthropic_api_key",
        "OpenAI_Token",
        "smtpPASSWORD",
        "oauth_client",
        "client_secret",
        "gpg_passphrase",
        "credential_alias",
        "KEYRING",
    ] {
        let error = bench
            .refused_with_nothing_sent("update_settings", json!({"group": "ai", "settings": {key: "x"}}));
        assert_eq!(error["error"], "invalid_argument", "{key}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("keychain") && message.contains("resmon app"), "{key}: {message}");
        assert_eq!(error["detail"]["credential_shaped"], json!([key]), "{key}");
    }
    // A withheld key first in the object still loses to a credential-shaped one.
    let error = bench.refused_with_nothing_sent(
        "update_settings",
        json!({"group": "ai", "settings": {"ai_tone": "x", "ai_model": "m", "my_auth_header": "y"}}),
    );
    assert!(error["message"].as_str().unwrap().contains("keychain"), "{error}");
    assert_eq!(error["detail"]["argument"], "settings.my_auth_header");
}

#[test]
fn every_withheld_key_is_refused_on_its_name_with_its_reason_and_nothing_sent() {
    let mut bench = bench();
    // The 19 keys contract 1.0 withholds ("The settings update_settings may
    // change"), written out here rather than read from the policy, so that
    // the policy cannot decide what this test expects of it.
    for key in CONTRACT_WITHHELD {
        let group = group_of(key);
        let error = bench.refused_with_nothing_sent(
            "update_settings",
            json!({"group": group, "settings": {key: "x", "ai_model": "m"}}),
        );
        assert_eq!(error["error"], "invalid_argument", "{key}");
        let message = error["message"].as_str().unwrap();
        let reason = error["detail"]["withheld"][key].as_str().unwrap_or_default();
        assert!(reason.split_whitespace().count() >= 3, "{key} needs a real reason: {error}");
        assert!(message.contains(key) && message.contains(reason), "{key}: {message}");
    }
    // On the name alone: asked of another group, it is still refused before the read.
    let error = bench.refused_with_nothing_sent(
        "update_settings",
        json!({"group": "storage", "settings": {"ai_cli_path": "/tmp/evil"}}),
    );
    assert!(error["message"].as_str().unwrap().contains("program resmon starts"), "{error}");
}

#[test]
fn a_key_the_group_does_not_have_is_refused_naming_its_real_keys_and_never_put() {
    let mut bench = bench();
    for (group, key) in [("ai", "ai_modle"), ("storage", "ai_model"), ("notifications", "notify_email")] {
        bench.clear();
        let error =
            tool_error(&bench.call("update_settings", json!({"group": group, "settings": {key: "x"}})));
        assert_eq!(error["error"], "invalid_argument", "{group}.{key}");
        assert_eq!(error["detail"]["argument"], format!("settings.{key}"));
        assert_eq!(error["detail"]["group_keys"], json!(app_keys()[group]), "{error}");
        let message = error["message"].as_str().unwrap();
        for real in &app_keys()[group] {
            assert!(message.contains(real.as_str()), "{group}: {message} does not name {real}");
        }
        assert_eq!(
            bench.sent(),
            pairs(&[("GET", &format!("/api/settings/{group}"))]),
            "{group}.{key}: read, never put"
        );
    }
}

#[test]
fn a_value_that_is_not_text_is_refused_before_the_put() {
    // Clarification 11: keys are judged (after the GET) before values, and
    // every value is judged before the PUT.
    let mut bench = bench();
    for value in [json!(30), json!(0.5), json!(null), json!(["90"]), json!({"days": 90})] {
        bench.clear();
        let arguments = json!({"group": "storage", "settings": {"archive_after_days": value}});
        let error = tool_error(&bench.call("update_settings", arguments));
        assert_eq!(error["detail"]["argument"], "settings.archive_after_days", "{value}");
        let sent: Vec<String> =
            bench.fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
        assert!(sent.iter().all(|request| request.starts_with("GET ")), "{value}: {sent:?}");
    }
    // An unknown key is named as unknown even when its value is also wrong.
    bench.clear();
    let error =
        tool_error(&bench.call("update_settings", json!({"group": "ai", "settings": {"ai_modell": 5}})));
    assert_eq!(error["detail"]["argument"], "settings.ai_modell");
    assert!(error["message"].as_str().unwrap().contains("not a setting of the ai group"), "{error}");
}

// ------------------------------------------------------------------ read-only sessions

#[test]
fn a_read_only_session_lists_exactly_the_18_reads() {
    let mut full = Session::initialized(&[]);
    let tools = full.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    let reads: BTreeSet<String> = tools
        .iter()
        .filter(|tool| tool["requires_confirmation"] == json!(false))
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(reads.len(), 18);
    for tool in tools.iter().filter(|tool| WRITE_TOOLS.contains(&tool["name"].as_str().unwrap())) {
        assert_eq!(tool["requires_confirmation"], json!(true), "{}", tool["name"]);
        assert_eq!(tool["annotations"]["readOnlyHint"], json!(false), "{}", tool["name"]);
    }
    let mut read_only = Session::initialized(&[("RESMON_MCP_READ_ONLY".into(), "1".into())]);
    let listed = read_only.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    let listed: BTreeSet<String> =
        listed.iter().map(|tool| tool["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(listed, reads);
}

#[test]
fn a_read_only_session_refuses_every_write_before_discovery() {
    let mut bench = bench_with(&[("RESMON_MCP_READ_ONLY", "1")]);
    for tool in WRITE_TOOLS {
        for arguments in [
            json!({}),
            json!({"bogus": 1}),
            json!({"routine_id": 7, "group": "ai", "settings": {"ai_model": "m"}}),
        ] {
            let error = bench.refused_with_nothing_sent(tool, arguments.clone());
            assert_eq!(error["error"], "invalid_argument", "{tool} {arguments}");
            assert_eq!(error["detail"], json!({"read_only": true}), "{tool} {arguments}");
        }
    }
    assert!(bench.fake.requests().is_empty(), "not even discovery ran");
    // Reads still work.
    structured(&bench.call("list_routines", json!({})));

    let (code, answer, text) = cli_call(
        "activate_routine",
        json!({"routine_id": 8}),
        &[env_for(&bench.fake), vec![("RESMON_MCP_READ_ONLY".into(), "1".into())]].concat(),
    );
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(answer["detail"], json!({"read_only": true}));
    assert_eq!(bench.fake.state().routine(8).unwrap()["is_active"], json!(0));
}

#[test]
fn only_the_exact_value_1_makes_a_session_read_only() {
    for value in ["true", "0", "1 ", "yes", ""] {
        let mut bench = bench_with(&[("RESMON_MCP_READ_ONLY", value)]);
        let listed =
            bench.session.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().len();
        assert_eq!(listed, 25, "RESMON_MCP_READ_ONLY={value:?}");
        let answer = bench.ok("activate_routine", json!({"routine_id": 8}));
        assert_eq!(answer["is_active"], json!(true), "RESMON_MCP_READ_ONLY={value:?} must allow writes");
    }
}

// ------------------------------------------------------------------ flags, hints, budget

#[test]
fn the_write_tools_declare_honest_hints() {
    let mut session = Session::initialized(&[]);
    let tools = session.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    let hint = |name: &str, key: &str| {
        let tool = tools.iter().find(|tool| tool["name"] == name).unwrap();
        tool["annotations"][key].as_bool().unwrap()
    };
    for name in WRITE_TOOLS {
        assert!(!hint(name, "readOnlyHint"), "{name}");
    }
    for name in ["activate_routine", "deactivate_routine", "update_settings"] {
        assert!(hint(name, "idempotentHint"), "{name}");
    }
    for name in ["run_sweep", "run_routine", "create_routine", "create_watch_profile"] {
        assert!(!hint(name, "idempotentHint"), "{name}: a second call makes a second record");
    }
    for name in ["run_sweep", "run_routine"] {
        assert!(hint(name, "openWorldHint"), "{name} makes resmon query outside sources");
    }
    for name in [
        "create_routine",
        "create_watch_profile",
        "activate_routine",
        "deactivate_routine",
        "update_settings",
    ] {
        assert!(!hint(name, "openWorldHint"), "{name}");
    }
    assert!(hint("update_settings", "destructiveHint"), "it overwrites a value");
    for name in [
        "run_sweep",
        "run_routine",
        "create_routine",
        "create_watch_profile",
        "activate_routine",
        "deactivate_routine",
    ] {
        assert!(!hint(name, "destructiveHint"), "{name}");
    }
}

/// A run or a switch sends no body: resmon's 400 there, with a sentence
/// that names nothing of the call, is not blamed on the caller, although
/// its path starts like the create's (contract-notes 17).
#[test]
fn an_unexplained_400_to_a_bodiless_write_blames_no_argument() {
    for (path, tool) in [
        ("/api/routines/8/run", "run_routine"),
        ("/api/routines/8/activate", "activate_routine"),
        ("/api/routines/8/deactivate", "deactivate_routine"),
    ] {
        let mut bench = bench();
        bench.fake.set_fault_for(
            "POST",
            path,
            Fault::Status(400, r#"{"detail": "Something is wrong."}"#.into()),
        );
        let error = tool_error(&bench.call(tool, json!({"routine_id": 8})));
        assert_eq!(error["error"], "upstream_error", "{tool}: {error}");
        let text = error["message"].as_str().unwrap();
        assert!(text.contains("cannot tell from resmon's answer whether an argument"), "{error}");
        // resmon gave its reason: no release mismatch is guessed beside it.
        assert!(text.contains("Something is wrong.") && !text.contains("matching releases"), "{error}");
    }
    // The create's own 400 with a sentence is still the caller's.
    let mut bench = bench();
    bench.fake.set_fault_for(
        "POST",
        "/api/routines",
        Fault::Status(400, r#"{"detail": "That profile does not exist."}"#.into()),
    );
    let error = tool_error(&bench.call(
        "create_routine",
        json!({"name": "R", "keywords": [], "sources": ["arxiv"], "schedule": "0 8 * * 1", "entity": {"profile_id": 99, "mode": "new_papers"}}),
    ));
    assert_eq!(error["error"], "invalid_argument", "{error}");
    assert_eq!(
        error["message"], "That profile does not exist. resmon did nothing: it has not created a routine.",
        "resmon's sentence, then what was not done: {error}"
    );
    assert_eq!(bench.fake.requests_to("POST", "/api/routines").len(), 1, "resmon was asked");
}
