//! A real resmon can be older or newer than contract 1.0: routes it lacks,
//! parameters it refuses, identity it does not report, fields it does not
//! keep. Each answer must say what actually happened (contract-notes 15-18).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::calls::every_branch;
use crate::fake_backend::{FakeBackend, Fault, OLDER_RELEASE_LACKS, ROUTES, Recorded};
use crate::harness::{
    TEST_TIMEOUT_MS, call_problems, connected, env_for, run_cli, start_fake, structured, tool_error,
};

/// Every tool whose primary route this resmon lacks names the route and the
/// release, and never says "not found" about a record that may well exist.
#[test]
fn every_tool_names_a_route_this_resmon_lacks() {
    let (fake, mut session) = connected();
    for (method, path) in ROUTES {
        if *path != "/api/health" {
            fake.lack_route(method, path);
        }
    }
    let mut table = Vec::new();
    for (tool, arguments) in every_branch(&fake.runtime_id()) {
        if tool == "health" {
            continue;
        }
        let error = tool_error(&session.call(tool, arguments.clone()));
        let message = error["message"].as_str().unwrap_or_default();
        let route = error["detail"]["route"].as_str().unwrap_or_default();
        let right = error["error"] == "upstream_error"
            && error["detail"]["missing_route"] == true
            && error["detail"]["backend_version"] == "2.3.0"
            && message.starts_with(&format!("resmon 2.3.0 does not serve {route}"))
            && message.contains("probably older or newer")
            && !route.chars().any(|c| c.is_ascii_digit());
        assert!(right, "{tool} {arguments}: {error}");
        table.push(format!("{tool}: {route}"));
    }
    eprintln!("missing-route answers:\n  {}", table.join("\n  "));
}

/// A secondary route that is missing, failing or stalled is reported inside
/// the answer, and the primary record is still returned.
#[test]
fn get_routine_reports_missing_secondary_routes_inside_the_answer() {
    let (fake, mut session) = connected();
    fake.lack_route("GET", "/api/routines/{id}/deliveries");
    let answer = structured(&session.call("get_routine", json!({"routine_id": 7}))).clone();
    assert_eq!(answer["id"], 7);
    assert!(answer.get("delivery").is_none(), "delivery is left off entirely: {answer}");
    let why = answer["delivery_unavailable"].as_str().unwrap_or_default();
    assert!(why.contains("does not serve GET /api/routines/{id}/deliveries"), "{why}");
    assert!(answer["coverage"].is_object(), "{answer}");
    assert_eq!(answer["coverage_unavailable"], Value::Null);

    fake.clear_faults();
    fake.lack_route("GET", "/api/routines/{id}/coverage");
    let answer = structured(&session.call("get_routine", json!({"routine_id": 7}))).clone();
    assert_eq!(answer["coverage"], Value::Null);
    assert!(
        answer["coverage_unavailable"].as_str().unwrap_or_default().contains("does not serve"),
        "{answer}"
    );
    assert!(answer["delivery"].is_object());
    assert_eq!(answer["delivery_unavailable"], Value::Null);

    // The primary route decides: without it there is no routine to show.
    fake.lack_route("GET", "/api/routines/{id}");
    let error = tool_error(&session.call("get_routine", json!({"routine_id": 7})));
    assert_eq!(error["error"], "upstream_error");
    assert_eq!(error["detail"]["route"], "GET /api/routines/{id}");
}

/// All requests of one call share one deadline: two stalled secondary routes
/// cost one bound, not two, and nothing is sent once it has passed.
#[test]
fn one_deadline_bounds_a_call_that_makes_several_requests() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.set_fault_for("GET", "/api/routines/7/coverage", Fault::Hang);
    fake.set_fault_for("GET", "/api/routines/7/deliveries", Fault::Hang);
    fake.clear_requests();
    let started = Instant::now();
    let answer = structured(&session.call("get_routine", json!({"routine_id": 7}))).clone();
    let elapsed = started.elapsed();
    let bound = Duration::from_millis(TEST_TIMEOUT_MS.parse().unwrap());
    // Before, each stalled route cost a whole bound (2 × 1.5 s); one bound
    // and a little scheduling slack is all a call may take now.
    assert!(elapsed < bound + Duration::from_millis(900), "took {elapsed:?} for a {bound:?} bound");
    assert_eq!(answer["coverage"], Value::Null);
    assert!(
        answer["coverage_unavailable"].as_str().unwrap_or_default().contains("did not answer"),
        "{answer}"
    );
    assert!(answer.get("delivery").is_none());
    assert!(answer["delivery_unavailable"].as_str().unwrap_or_default().contains("not sent"), "{answer}");
    assert!(
        fake.requests_to("GET", "/api/routines/7/deliveries").is_empty(),
        "a request was sent after the call's deadline had passed"
    );
}

/// A 400 about a parameter this server chose is not the caller's mistake.
#[test]
fn a_refused_parameter_this_server_chose_is_named_and_not_blamed_on_the_caller() {
    let (fake, mut session) = connected();
    fake.emulate_older_release("2.1.0");
    let error = tool_error(&session.call("get_execution_results", json!({"exec_id": 115})));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert_eq!(error["detail"]["parameters"], json!(["format"]), "{error}");
    assert_eq!(error["detail"]["backend_version"], "2.1.0");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("resmon 2.1.0 refused the parameter `format` that this server chose"),
        "{message}"
    );
    assert!(message.contains("changing this call's arguments will not help"), "{message}");
    // The same refusal of a format the caller picked from the values the
    // tool offers is the release's limitation too (contract-notes 17): the
    // answer names the value and the release, and does not blame the call.
    fake.clear_requests();
    let error = tool_error(&session.call("export_references", json!({"exec_id": 115, "format": "json"})));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert_eq!(error["detail"]["value"], "json", "{error}");
    assert_eq!(error["detail"]["argument"], "format", "{error}");
    assert_eq!(error["detail"]["backend_version"], "2.1.0");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("resmon 2.1.0 does not accept `json` for `format`"), "{message}");
    assert!(message.contains("Unknown export format 'json'"), "resmon's own words: {message}");
    assert!(message.contains("the call itself is not at fault"), "{message}");
    let sent = fake.requests_to("GET", "/api/executions/115/references");
    assert_eq!(sent.len(), 1, "sent once, not retried");
    assert_eq!(sent[0].query_pairs, vec![("format".to_string(), "json".to_string())]);
}

/// Every other refusal of the caller's own fields stays the caller's, even
/// when the call also carries a value the tool offers.
#[test]
fn a_refusal_of_another_of_the_callers_values_stays_invalid_argument() {
    let (fake, mut session) = connected();
    fake.set_fault_for(
        "POST",
        "/api/export/references",
        Fault::Status(400, r#"{"detail": "Unknown document ids: 999."}"#.into()),
    );
    let error = tool_error(&session.call("export_references", json!({"doc_ids": [999], "format": "ris"})));
    assert_eq!(error["error"], "invalid_argument", "{error}");
    assert!(error["message"].as_str().unwrap().contains("Unknown document ids: 999."), "{error}");
    assert_eq!(fake.requests_to("POST", "/api/export/references").len(), 1);
}

/// A value the tool offers, refused by a release that names the field and
/// what it takes instead, with no "unknown" in its sentence, is that
/// release's limitation: the answer names the value and the release.
#[test]
fn an_offered_value_refused_by_listing_the_accepted_ones_is_the_releases() {
    let (fake, mut session) = connected();
    fake.emulate_older_release("2.1.0");
    fake.clear_requests();
    let error = tool_error(&session.call("list_watch_profiles", json!({"kind": "group"})));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert_eq!(error["detail"]["value"], "group", "{error}");
    assert_eq!(error["detail"]["argument"], "kind", "{error}");
    assert_eq!(error["detail"]["backend_version"], "2.1.0");
    assert_eq!(error["detail"]["route"], "GET /api/profiles");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("resmon 2.1.0 does not accept `group` for `kind`"), "{message}");
    assert!(message.contains("kind must be person or institution"), "resmon's own words: {message}");
    let sent = fake.requests_to("GET", "/api/profiles");
    assert_eq!(sent.len(), 1, "sent once, not retried");
    assert_eq!(sent[0].query_pairs, vec![("kind".to_string(), "group".to_string())]);
    // The values it still takes are answered as ever.
    let people = structured(&session.call("list_watch_profiles", json!({"kind": "person"}))).clone();
    assert!(people["profiles"].as_array().is_some_and(|rows| !rows.is_empty()), "{people}");
}

/// A refusal that names the offered value's field but neither the value nor
/// what it would take instead, and a refusal of a value inside `entity`,
/// stay the caller's to correct.
#[test]
fn other_refusals_naming_the_callers_field_stay_invalid_argument() {
    let (fake, mut session) = connected();
    fake.set_fault_for(
        "GET",
        "/api/profiles",
        Fault::Status(400, r#"{"detail": "kind: must not be empty"}"#.into()),
    );
    let error = tool_error(&session.call("list_watch_profiles", json!({"kind": "group"})));
    assert_eq!(error["error"], "invalid_argument", "{error}");
    assert_eq!(error["message"], "kind: must not be empty", "{error}");
    // The single word in passing is no evidence against the caller
    // (contract-notes 17), nor a refusal of the offered value.
    fake.set_fault_for(
        "GET",
        "/api/profiles",
        Fault::Status(400, r#"{"detail": "kind must not be empty"}"#.into()),
    );
    let error = tool_error(&session.call("list_watch_profiles", json!({"kind": "group"})));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert!(error["message"].as_str().unwrap().contains("cannot tell"), "{error}");
    fake.set_fault_for(
        "POST",
        "/api/routines",
        Fault::Status(400, r#"{"detail": "entity mode must be new_papers or retractions"}"#.into()),
    );
    let error = tool_error(&session.call(
        "create_routine",
        json!({"name": "Watch", "keywords": [], "sources": ["arxiv"], "schedule": "0 8 * * 1",
               "entity": {"profile_id": 5, "mode": "retractions"}}),
    ));
    assert_eq!(error["error"], "invalid_argument", "{error}");
    assert!(error["message"].as_str().unwrap().contains("entity mode must be"), "{error}");
}

/// An older release end to end: no identity, routes it lacks, a field it
/// drops, and its version on every error it caused.
#[test]
fn an_older_release_is_served_truthfully() {
    let (fake, mut session) = connected();
    fake.emulate_older_release("2.1.0");
    let health = structured(&session.call("health", json!({}))).clone();
    assert_eq!(health["version"], "2.1.0");
    assert_eq!(health["identity"], Value::Null, "no identity is invented: {health}");
    let run = structured(&session.call("get_execution", json!({"exec_id": 115}))).clone();
    assert_eq!(run["identity"], Value::Null);
    fake.clear_requests();
    let pinned = tool_error(
        &session.call("get_execution", json!({"exec_id": 115, "expected_runtime_id": fake.runtime_id()})),
    );
    assert_eq!(pinned["error"], "identity_unavailable", "{pinned}");
    assert!(fake.requests_to("GET", "/api/executions/115").is_empty());

    for (method, path) in OLDER_RELEASE_LACKS {
        assert_eq!(method, "GET");
        let (tool, arguments) = match path {
            "/api/routines/{id}/deliveries" | "/api/routines/{id}/coverage" => continue,
            "/api/executions/{id}/search-record" => ("get_search_record", json!({"exec_id": 115})),
            "/api/analytics/discovery-lag" => ("get_analytics", json!({"view": "discovery-lag"})),
            "/api/watchdog" => ("get_watchdog_findings", json!({})),
            other => panic!("no call for {other}"),
        };
        let error = tool_error(&session.call(tool, arguments));
        assert_eq!(error["error"], "upstream_error", "{tool}: {error}");
        assert_eq!(error["detail"]["route"], format!("{method} {path}"));
        assert!(error["message"].as_str().unwrap().starts_with("resmon 2.1.0 does not serve"), "{error}");
    }
    let routine = structured(&session.call("get_routine", json!({"routine_id": 7}))).clone();
    assert!(routine.get("delivery").is_none() && routine["coverage"].is_null(), "{routine}");

    let created = structured(&session.call(
        "create_routine",
        json!({"name": "Kept or not", "keywords": ["graph attention"], "sources": ["arxiv"],
               "schedule": "0 8 * * 1", "intent": "Graph attention for molecules"}),
    ))
    .clone();
    assert_eq!(created["not_kept"], json!(["intent"]), "{created}");
    let detail = created["detail"].as_str().unwrap();
    assert!(detail.contains("did not keep one field") && detail.contains("intent"), "{detail}");
    assert_eq!(created["routine"]["intent"], Value::Null);
}

#[test]
fn a_create_whose_fields_were_all_kept_says_nothing_was_lost() {
    let (_fake, mut session) = connected();
    let created = structured(&session.call(
        "create_routine",
        json!({"name": "All kept", "keywords": ["graph attention"], "sources": ["arxiv"],
               "schedule": "0 8 * * 1", "intent": "Graph attention for molecules"}),
    ))
    .clone();
    assert_eq!(created["not_kept"], json!([]), "{created}");
    assert!(!created["detail"].as_str().unwrap().contains("did not keep"));
}

/// A write that resmon accepted is never reported as if nothing happened.
#[test]
fn update_settings_says_an_accepted_change_was_accepted_when_the_read_back_fails() {
    let (fake, mut session) = connected();
    fake.set_fault_after("GET", "/api/settings/ai", 1, Fault::Html500);
    let error = tool_error(
        &session
            .call("update_settings", json!({"group": "ai", "settings": {"ai_model": "synthetic-model-3"}})),
    );
    assert_eq!(error["detail"]["applied"], true, "{error}");
    assert_eq!(error["detail"]["requested"], json!({"ai_model": "synthetic-model-3"}));
    assert!(
        error["message"].as_str().unwrap().starts_with("resmon accepted the change to the ai settings"),
        "{error}"
    );
    assert_eq!(fake.requests_to("PUT", "/api/settings/ai").len(), 1);
    assert_eq!(fake.state().setting("ai", "ai_model"), "synthetic-model-3");
}

/// Something took the connection and closed it: that is not "not running".
#[test]
fn a_connection_closed_without_an_answer_is_not_called_not_running() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.set_fault_for("GET", "/api/routines", Fault::CloseWithoutAnswer);
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable");
    let message = error["message"].as_str().unwrap();
    assert!(!message.contains("not running"), "{message}");
    assert!(message.contains("closed it without answering"), "{message}");
    assert_eq!(error["tried"], json!([fake.base_url()]));
}

/// `--check` shows the release it reached.
#[test]
fn check_names_the_release() {
    let (fake, _session) = connected();
    fake.emulate_older_release("2.1.0");
    let output = run_cli(&["--check"], &env_for(&fake));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("resmon 2.1.0"), "{text}");
    let output = run_cli(&["--check", "--json"], &env_for(&fake));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["health"]["version"], "2.1.0", "{report}");
    assert_eq!(report["health"]["identity"], Value::Null, "{report}");
}

/// `--check --json`'s verdicts by tool name, with every request the fake
/// received during it. It must have received only GETs: `--check` sends no
/// POST or PUT, so it never creates, changes or starts anything
/// (contract-notes 19).
fn check_verdicts(fake: &FakeBackend) -> (BTreeMap<String, Value>, Vec<Recorded>, String) {
    fake.clear_requests();
    let output = run_cli(&["--check", "--json"], &env_for(fake));
    assert_eq!(output.status.code(), Some(0), "connected, even with tools missing");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let tools = report["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 25);
    let verdicts =
        tools.iter().map(|tool| (tool["name"].as_str().unwrap().to_string(), tool.clone())).collect();
    let requests = fake.requests();
    for request in &requests {
        assert_eq!(request.method, "GET", "--check sent {} {}", request.method, request.path);
    }
    let text = String::from_utf8_lossy(&run_cli(&["--check"], &env_for(fake)).stdout).to_string();
    (verdicts, requests, text)
}

fn available(verdicts: &BTreeMap<String, Value>, name: &str) -> Value {
    verdicts[name]["available"].clone()
}

/// Against today's resmon every tool is there but search_corpus, whose POST
/// route is not probed; each write is judged by a GET on its own path.
#[test]
fn check_finds_every_tool_on_a_current_resmon() {
    let fake = start_fake();
    let (verdicts, requests, text) = check_verdicts(&fake);
    for (name, verdict) in &verdicts {
        let expected = if name == "search_corpus" { Value::Null } else { json!(true) };
        assert_eq!(verdict["available"], expected, "{verdict}");
    }
    assert!(verdicts["search_corpus"]["why"].as_str().unwrap().contains("not probed"));
    // What was probed, and that all of it is there; the one left unprobed is
    // named as such, not counted as missing.
    assert!(text.contains("tools: all 24 tools probed are there on resmon 2.3.0\n"), "{text}");
    assert!(
        text.contains("  not probed: search_corpus: its route is a POST, which --check does not send\n"),
        "{text}"
    );
    assert!(!text.contains("of 25") && !text.contains("unknown: search_corpus"), "{text}");
    // run_routine by its own path (405: served with POST), never by the record's.
    assert_eq!(verdicts["run_routine"]["route"], "POST /api/routines/{id}/run");
    assert!(
        verdicts["run_routine"]["why"].as_str().unwrap().contains("answered 405"),
        "{}",
        verdicts["run_routine"]
    );
    let asked = |path: &str| requests.iter().filter(|r| r.path == path).count();
    for path in
        ["/api/routines/0/run", "/api/routines/0/activate", "/api/routines/0/deactivate", "/api/search/sweep"]
    {
        assert_eq!(asked(path), 1, "{path} was not asked once");
    }
    // The two exports are asked about the newest run list_executions gave, once each.
    let newest = fake.state().executions.iter().map(|e| e["id"].as_i64().unwrap()).max().unwrap();
    let references: Vec<&Recorded> = requests.iter().filter(|r| r.path.ends_with("/references")).collect();
    assert_eq!(references.len(), 2, "{references:?}");
    for request in references {
        assert_eq!(request.path, format!("/api/executions/{newest}/references"));
    }
    let queries: Vec<String> =
        requests.iter().filter(|r| r.path.ends_with("/references")).map(|r| r.query.clone()).collect();
    assert!(
        queries.iter().any(|q| q.contains("format=json") && q.contains("include_ids=true")),
        "{queries:?}"
    );
    assert!(queries.iter().any(|q| q == "format=bibtex"), "{queries:?}");
}

/// resmon 1.6.1 lacks the run route and refuses the json export for every
/// run; record 0 would have hidden both. The routes it lacks are named.
#[test]
fn check_names_what_resmon_1_6_1_lacks() {
    let fake = start_fake();
    fake.emulate_resmon_1_6_1();
    let (verdicts, _, text) = check_verdicts(&fake);
    let missing = [
        "run_routine",
        "get_execution_results",
        "get_search_record",
        "get_watchdog_findings",
        "get_analytics",
    ];
    for (name, verdict) in &verdicts {
        let expected = match name.as_str() {
            "search_corpus" => Value::Null,
            name if missing.contains(&name) => json!(false),
            _ => json!(true),
        };
        assert_eq!(verdict["available"], expected, "{verdict}");
    }
    assert_eq!(verdicts["get_search_record"]["route"], "GET /api/executions/{id}/search-record");
    let run = verdicts["run_routine"]["why"].as_str().unwrap();
    assert!(run.starts_with("resmon does not serve POST /api/routines/{id}/run"), "{run}");
    let results = verdicts["get_execution_results"]["why"].as_str().unwrap();
    assert!(results.contains("refused format=json") && results.contains("answered 400"), "{results}");
    // Its other formats are there, so export_references is.
    assert_eq!(available(&verdicts, "export_references"), true);
    // The writes whose paths it still serves.
    for name in ["activate_routine", "deactivate_routine", "create_routine", "update_settings", "run_sweep"] {
        assert_eq!(available(&verdicts, name), true, "{}", verdicts[name]);
    }
    assert!(text.contains("tools: 19 of the 24 tools probed are there on resmon 1.6.1\n"), "{text}");
    assert!(
        text.contains(
            "missing: get_analytics: resmon does not serve GET /api/analytics/discovery-lag (1 of the 6"
        ),
        "{text}"
    );
    assert!(
        text.contains("missing: run_routine: resmon does not serve POST /api/routines/{id}/run"),
        "{text}"
    );
}

/// A release whose export `format` is an enum refuses json with a 422
/// validation list rather than a sentence: the tool that needs json is
/// missing all the same, and the bibtex export is still there.
#[test]
fn check_reads_a_422_list_refusing_json_as_missing() {
    let fake = start_fake();
    fake.emulate_older_release("2.1.0");
    fake.refuse_json_by_validation();
    let (verdicts, requests, text) = check_verdicts(&fake);
    assert_eq!(available(&verdicts, "get_execution_results"), false, "{}", verdicts["get_execution_results"]);
    let why = verdicts["get_execution_results"]["why"].as_str().unwrap();
    assert!(why.contains("refused format=json") && why.contains("answered 422"), "{why}");
    assert!(why.contains("query.format") && why.contains("(input 'json')"), "resmon's own words: {why}");
    assert_eq!(available(&verdicts, "export_references"), true, "{}", verdicts["export_references"]);
    let asked_json = requests
        .iter()
        .filter(|r| r.path.ends_with("/references") && r.query.contains("format=json"))
        .count();
    assert_eq!(asked_json, 1, "the json export was asked once: {requests:?}");
    assert!(text.contains("missing: get_execution_results:"), "{text}");
}

/// With no run to ask about, the two exports are unknown, not missing, and
/// no made-up id is sent in their place.
#[test]
fn check_without_a_run_leaves_the_exports_unknown() {
    let fake = start_fake();
    fake.state().executions.clear();
    let (verdicts, requests, _) = check_verdicts(&fake);
    for name in ["get_execution_results", "export_references"] {
        assert_eq!(available(&verdicts, name), Value::Null, "{}", verdicts[name]);
        let why = verdicts[name]["why"].as_str().unwrap();
        assert!(why.contains("no run to probe with"), "{why}");
    }
    assert_eq!(available(&verdicts, "list_executions"), true);
    assert!(requests.iter().all(|r| !r.path.ends_with("/references")), "a references route was asked");
}

/// The keys of every object in a JSON value, at any depth.
fn keys_of(value: &Value, into: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object {
                into.insert(key.clone());
                keys_of(inner, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| keys_of(inner, into)),
        _ => (),
    }
}

/// A resmon whose rows lack a field must never produce an answer that breaks
/// the tool's own outputSchema: the property is nullable, or the tool answers
/// upstream_error naming the route and the field (contract-notes 25).
/// Each field is left out, and then set to null, in turn.
#[test]
fn answers_keep_their_output_schema_when_resmon_leaves_out_any_field() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    let mut checked = 0;
    let mut unnamed = Vec::new();
    let mut broken = Vec::new();
    for (tool, arguments) in every_branch(&fake.runtime_id()) {
        fake.clear_faults();
        fake.clear_requests();
        let _ = session.call(tool, arguments.clone());
        let mut keys = std::collections::BTreeSet::new();
        for request in fake.requests() {
            if let Ok(answer) = serde_json::from_slice::<Value>(&request.answer) {
                keys_of(&answer, &mut keys);
            }
        }
        for (key, to_null) in keys.iter().flat_map(|key| [(key.clone(), false), (key.clone(), true)]) {
            fake.set_fault(if to_null { Fault::NullKey(key.clone()) } else { Fault::DropKey(key.clone()) });
            let how = if to_null { "with null" } else { "without" };
            let answer = session.request("tools/call", json!({"name": tool, "arguments": arguments}));
            let result = answer["result"].clone();
            checked += 1;
            if let Some(first) = call_problems(tool, &answer).first() {
                broken.push(format!("{tool} {arguments} {how} `{key}`: {first}"));
            } else if result["isError"] == true {
                let error = tool_error(&result);
                if error["error"] == "upstream_error" {
                    let message = error["message"].as_str().unwrap_or_default();
                    let named =
                        error["detail"]["field"] == key.as_str() || message.contains(&format!("`{key}`"));
                    if error["detail"]["route"].is_null() || !named {
                        unnamed.push(format!("{tool} {arguments} {how} `{key}`: {error}"));
                    }
                }
            }
        }
    }
    fake.clear_faults();
    assert!(checked > 300, "only {checked} cases were checked");
    assert!(
        broken.is_empty(),
        "{} answers break their outputSchema or the shape of an answer:\n{}",
        broken.len(),
        broken.join("\n")
    );
    assert!(
        unnamed.is_empty(),
        "{} upstream errors do not name the route and field:\n{}",
        unnamed.len(),
        unnamed.join("\n")
    );
}

/// A restart between a pinned call's preflight and its execution request:
/// the one resend is checked against the rediscovered instance first, and a
/// new process is not the one expected (contract-notes 18).
#[test]
fn a_pinned_call_resent_after_a_restart_passes_the_preflight_again() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    let old_runtime = fake.runtime_id();
    fake.restart_before("GET", "/api/executions/115");
    fake.clear_requests();
    let error = tool_error(
        &session.call("get_execution", json!({"exec_id": 115, "expected_runtime_id": old_runtime})),
    );
    assert_eq!(error["error"], "instance_mismatch", "{error}");
    assert_eq!(error["detail"]["backend_version"], "2.3.0", "identity refusals name the release: {error}");
    let sent: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}{} {}", r.method, r.path, if r.query.is_empty() { "" } else { "?" }, r.status))
        .collect();
    assert_eq!(
        sent,
        [
            "GET /api/health? 200",
            "GET /api/executions/115? 401",
            "GET /api/health 200",
            "GET /api/health? 409",
        ],
        "preflight, refused request, rediscovery, preflight again; the execution is not resent"
    );
}

/// A write whose answer was lost may have been carried out: the answer says
/// so instead of inviting a blind retry.
#[test]
fn a_write_whose_answer_was_lost_says_it_may_have_happened() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.set_fault_for("POST", "/api/search/sweep", Fault::CloseWithoutAnswer);
    let error =
        tool_error(&session.call("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]})));
    assert_eq!(error["detail"]["outcome_unknown"], true, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("resmon may have started the one-off search;"), "{message}");
    assert!(message.contains("list_executions shows whether a run started"), "{message}");
    assert!(!message.contains("try again"), "{message}");
    // A read that meets the same fault has no such caveat.
    fake.set_fault_for("GET", "/api/routines", Fault::CloseWithoutAnswer);
    let error = tool_error(&session.call("list_routines", json!({})));
    assert!(error["detail"].get("outcome_unknown").is_none(), "{error}");
}

/// get_watch_profile's primary route is the profile; the matches route is
/// secondary, so its absence leaves the totals null and says why.
#[test]
fn get_watch_profile_reports_its_missing_totals_inside_the_answer() {
    let (fake, mut session) = connected();
    fake.lack_route("GET", "/api/profiles/{id}/matches");
    let answer = structured(&session.call("get_watch_profile", json!({"profile_id": 5}))).clone();
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["match_total"], Value::Null);
    assert_eq!(answer["by_basis"], Value::Null);
    assert!(answer["totals_unavailable"].as_str().unwrap_or_default().contains("does not serve"), "{answer}");
    assert!(answer["what_a_basis_means"].is_object() || answer["what_a_basis_means"].is_array(), "{answer}");
}

/// A routine that was created is never hidden behind a read-back error.
#[test]
fn create_routine_says_a_routine_was_created_when_its_read_back_is_unusable() {
    let (fake, mut session) = connected();
    fake.set_fault_after("GET", "/api/routines/{id}", 0, Fault::DropKey("name".into()));
    let error = tool_error(&session.call(
        "create_routine",
        json!({"name": "Read-back test", "keywords": ["x"], "sources": ["arxiv"], "schedule": "0 8 * * 1"}),
    ));
    assert!(error["detail"]["id"].is_i64(), "{error}");
    assert_eq!(error["detail"]["applied"], true, "{error}");
    assert!(error["message"].as_str().unwrap().starts_with("resmon created routine"), "{error}");
    assert!(error["message"].as_str().unwrap().contains("Do not call create_routine again"), "{error}");
}

/// `--check` shares one bound over all its probes: a stalled resmon costs it
/// one bound, not one per tool.
#[test]
fn check_is_bounded_when_every_probe_stalls() {
    let (fake, _session) = connected();
    for (method, path) in ROUTES {
        if *method == "GET" && *path != "/api/health" {
            fake.set_fault_for(method, path, Fault::Hang);
        }
    }
    let started = Instant::now();
    let output = run_cli(&["--check", "--json"], &env_for(&fake));
    let elapsed = started.elapsed();
    let bound = Duration::from_millis(TEST_TIMEOUT_MS.parse().unwrap());
    assert!(elapsed < bound * 3, "took {elapsed:?} for a {bound:?} bound");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["connected"], true);
    let unknown =
        report["tools"].as_array().unwrap().iter().filter(|tool| tool["available"].is_null()).count();
    assert!(unknown >= 20, "stalled probes are unknown, not missing: {report}");
}

/// A connection reset without an answer by the resmon health confirmed is
/// said of resmon at its address, not of "something"; before health
/// confirmed it, of what is on the port. (Only Linux lets the fake reset.)
#[cfg(target_os = "linux")]
#[test]
fn a_reset_on_a_confirmed_resmon_is_said_of_resmon() {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.set_fault_for("GET", "/api/routines", Fault::ResetWithoutAnswer);
    let error = tool_error(&session.call("list_routines", json!({})));
    assert_eq!(error["error"], "backend_unavailable", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!(
            "resmon at {} accepted the connection for GET /api/routines and then reset it without answering.",
            fake.base_url()
        )),
        "{message}"
    );
    assert!(!message.contains("Something on"), "{message}");

    fake.clear_faults();
    let (fake, mut session) = connected();
    fake.set_fault_for("GET", "/api/health", Fault::ResetWithoutAnswer);
    let error = tool_error(&session.call("list_routines", json!({})));
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with(&format!("Something on port {} (", fake.port())), "{message}");
    assert!(message.contains("and then reset it without answering"), "{message}");
    assert!(!message.contains("resmon at"), "{message}");
    assert!(fake.requests_to("GET", "/api/routines").is_empty(), "nothing past health");
}

/// --check says when the runs list answered in another shape, rather than
/// that it listed no run.
#[test]
fn check_says_when_the_runs_list_is_not_a_list() {
    let fake = start_fake();
    fake.override_response("GET", "/api/executions", 200, &[], r#"{"executions": [{"id": 5}]}"#);
    let (verdicts, requests, _) = check_verdicts(&fake);
    for name in ["get_execution_results", "export_references"] {
        assert_eq!(available(&verdicts, name), Value::Null, "{}", verdicts[name]);
        let why = verdicts[name]["why"].as_str().unwrap();
        assert!(why.contains("no run to probe with"), "{why}");
        assert!(
            why.contains("GET /api/executions answered 200 with JSON in another shape, not a list of runs"),
            "{why}"
        );
        assert!(!why.contains("listed none"), "{why}");
    }
    assert!(requests.iter().all(|r| !r.path.ends_with("/references")), "a references route was asked");
}

/// A health answer in resmon's own form that is not "ok" is said as what
/// it is (resmon not ready, most likely), before the wrong-instance cause.
#[test]
fn a_health_answer_that_is_not_ok_is_said_as_resmon_not_ready_first() {
    let fake = crate::harness::start_fake();
    let env = crate::harness::env_for(&fake);
    for (fault, said) in [
        (
            Fault::SetKeys(json!({"status": "degraded"})),
            "status \"degraded\" (200 OK) rather than \"ok\": if it is resmon, it is running but says it is not ready",
        ),
        (
            Fault::Status(503, r#"{"detail": "starting up"}"#.into()),
            "503 Service Unavailable and said \"starting up\": if it is resmon, it may be starting up or unwell",
        ),
        // A refusal of this request is no resmon starting up.
        (
            Fault::Status(404, r#"{"detail": "Not Found"}"#.into()),
            "not as resmon's health does (404 Not Found, and it said \"Not Found\")",
        ),
        (Fault::HostRefused, "something forwards that port to resmon"),
    ] {
        fake.set_fault_for("GET", "/api/health", fault);
        let mut session = crate::harness::Session::initialized(&env);
        let error = tool_error(&session.call("list_routines", json!({})));
        assert_eq!(error["error"], "backend_unavailable", "{error}");
        assert!(error["message"].as_str().unwrap().contains(said), "{error}");
        fake.clear_faults();
    }
}
