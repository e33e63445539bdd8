//! contract 1.0 "Safety" (contract-notes 13): no tool's answer shows the
//! value of a credential-shaped key resmon put in it, whatever the tool, at
//! whatever depth, JSON text included; this server's own declared fields
//! (list_sources' `credential` and `key_status`) are left as they are. Every
//! answer is still held to its outputSchema by `Session::call`.

use serde_json::{Value, json};

use crate::fake_backend::Fault;
use crate::harness::{Session, env_for, error_payload, start_fake, structured};

/// One read or write whose resmon answer carries credential-shaped keys.
struct Case {
    tool: &'static str,
    arguments: Value,
    method: &'static str,
    route: &'static str,
    fault: Fault,
    /// JSON pointers into the answer that must hold `{"withheld": true}`.
    withheld_at: &'static [&'static str],
}

fn set(keys: Value) -> Fault {
    Fault::SetKeys(keys)
}

fn set_in(path: &str, keys: Value) -> Fault {
    Fault::SetKeysIn(path.into(), keys)
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            tool: "health",
            arguments: json!({}),
            method: "GET",
            route: "/api/health",
            fault: set(json!({
                "daemon": {"running": false, "auth_secret": "SECRET-H1"},
                "scheduler": {"running": true, "api_key": "SECRET-H2"},
            })),
            withheld_at: &["/daemon/auth_secret", "/scheduler/api_key"],
        },
        Case {
            tool: "get_execution",
            arguments: json!({"exec_id": 115}),
            method: "GET",
            route: "/api/executions/{exec_id}",
            fault: set(json!({
                "parameters": "{\"query\": \"q\", \"ai_api_key\": \"SECRET-X1\", \"webhook\": {\"auth_token\": \"SECRET-X2\"}}",
                "smtp_password": "SECRET-X3",
            })),
            withheld_at: &["/parameters/ai_api_key", "/parameters/webhook/auth_token", "/smtp_password"],
        },
        Case {
            tool: "get_execution",
            arguments: json!({"exec_id": 115}),
            method: "GET",
            route: "/api/executions/{exec_id}",
            fault: set_in("coverage", json!({"api_key": "SECRET-X4"})),
            withheld_at: &["/coverage/api_key"],
        },
        Case {
            tool: "get_search_record",
            arguments: json!({"exec_id": 115}),
            method: "GET",
            route: "/api/executions/{exec_id}/search-record",
            fault: set_in(
                "search",
                json!({"queries_as_sent": [{"source": "arxiv", "query": "q", "api_key": "SECRET-R1"}],
                       "auth_token": "SECRET-R2"}),
            ),
            withheld_at: &["/search/queries_as_sent/0/api_key", "/search/auth_token"],
        },
        Case {
            tool: "explain_match",
            arguments: json!({"doc_id": 801}),
            method: "GET",
            route: "/api/documents/{doc_id}/why",
            fault: set(json!({"secret_token": "SECRET-E1"})),
            withheld_at: &["/secret_token"],
        },
        Case {
            tool: "get_paper_lifecycle",
            arguments: json!({"doc_id": 805}),
            method: "GET",
            route: "/api/documents/{doc_id}/lifecycle",
            fault: set_in("events/*", json!({"authorization": "Bearer SECRET-L1"})),
            withheld_at: &["/events/0/authorization"],
        },
        Case {
            tool: "get_analytics",
            arguments: json!({"view": "overview"}),
            method: "GET",
            route: "/api/analytics/overview",
            fault: set(json!({"secret": "SECRET-A1"})),
            withheld_at: &["/data/secret"],
        },
        Case {
            tool: "get_watchdog_findings",
            arguments: json!({}),
            method: "GET",
            route: "/api/watchdog",
            fault: set_in("findings/*/evidence", json!({"api_key": "SECRET-W1"})),
            withheld_at: &["/findings/0/evidence/api_key", "/findings/1/evidence/api_key"],
        },
        Case {
            tool: "get_profile_matches",
            arguments: json!({"profile_id": 5, "limit": 5}),
            method: "GET",
            route: "/api/profiles/{profile_id}/matches",
            fault: set_in("matches/*", json!({"evidence": "{\"orcid\": \"x\", \"api_key\": \"SECRET-M1\"}"})),
            withheld_at: &["/matches/0/evidence/api_key"],
        },
        Case {
            tool: "find_similar",
            arguments: json!({"doc_id": 801, "limit": 5}),
            method: "GET",
            route: "/api/documents/{document_id}/similar",
            fault: set(json!({"model": {"name": "m", "api_key": "SECRET-F1"}})),
            withheld_at: &["/model/api_key"],
        },
        Case {
            tool: "search_corpus",
            arguments: json!({"query": "protein structure", "mode": "semantic", "limit": 5}),
            method: "POST",
            route: "/api/explorer/search",
            fault: set(json!({"model": {"name": "m", "api_key": "SECRET-S1"}})),
            withheld_at: &["/model/api_key"],
        },
        Case {
            // A paper row: a nested object where a text is expected, and a
            // title that is JSON text.
            tool: "search_corpus",
            arguments: json!({"query": "graph attention", "limit": 5}),
            method: "POST",
            route: "/api/explorer/search",
            fault: set_in(
                "results/*",
                json!({"doi": {"value": "10.5555/x", "auth_token": "SECRET-S2"},
                       "title": "{\"api_key\": \"SECRET-S3\"}"}),
            ),
            withheld_at: &[],
        },
    ]
}

/// What a case's answer must show: each pointer withheld, and no secret.
fn check(case: &Case, answer: &Value) {
    for pointer in case.withheld_at {
        assert_eq!(
            answer.pointer(pointer),
            Some(&json!({"withheld": true})),
            "{} {pointer}: {answer}",
            case.tool
        );
    }
    assert!(!answer.to_string().contains("SECRET-"), "{}: {answer}", case.tool);
}

#[test]
fn no_read_shows_a_credential_value_resmon_put_in_its_answer() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    for case in cases() {
        fake.set_fault_for(case.method, case.route, case.fault.clone());
        let answer = structured(&session.call(case.tool, case.arguments.clone())).clone();
        fake.set_fault_for(case.method, case.route, Fault::None);
        check(&case, &answer);
        if case.tool == "search_corpus" && case.withheld_at.is_empty() {
            // A paper row's title that is JSON text is read and written out
            // again withheld; an object where a text belongs is not shown.
            assert_eq!(answer["papers"][0]["title"], json!(r#"{"api_key":{"withheld":true}}"#), "{answer}");
            assert_eq!(answer["papers"][0]["doi"], Value::Null, "{answer}");
        }
        // The fault reached the server: resmon's answer held the secret.
        let sent = fake.requests().into_iter().rev().find(|request| request.method == case.method).unwrap();
        assert!(String::from_utf8_lossy(&sent.answer).contains("SECRET-"), "{}", case.tool);
    }
    let page =
        structured(&session.call("search_corpus", json!({"query": "graph attention", "limit": 5}))).clone();
    assert!(!page.to_string().contains("withheld"), "an ordinary page is untouched: {page}");

    // list_sources' own fields name a credential and its status: kept.
    let sources = structured(&session.call("list_sources", json!({}))).clone();
    let pubmed = sources["sources"].as_array().unwrap().iter().find(|row| row["slug"] == "pubmed").unwrap();
    assert_eq!(pubmed["credential"], "ncbi_api_key", "{sources}");
    assert_eq!(pubmed["key_status"], "present", "{sources}");
    assert_eq!(pubmed["key_requirement"], "optional", "{sources}");

    let transcript = session.transcript.join("\n");
    let (_, stderr) = session.finish();
    assert!(!transcript.contains("SECRET-"), "a credential value was shown: {transcript}");
    assert!(!stderr.contains("SECRET-"), "a credential value reached stderr: {stderr}");

    std::fs::remove_file(fake.token_file()).unwrap();
    let mut session = Session::initialized(&env_for(&fake));
    let error = error_payload(&session.call("health", json!({}))).unwrap();
    assert_eq!(error["detail"]["token_file"], json!(fake.token_file().display().to_string()), "{error}");
}

#[test]
fn a_write_and_an_error_show_no_credential_value_either() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    // run_routine's answer, accepted: resmon's own values, passed on, are
    // searched like any read's.
    fake.set_fault_for(
        "POST",
        "/api/routines/{routine_id}/run",
        Fault::SetKeys(json!({
            "was_inactive": {"api_key": "SECRET-RR1"},
            "detail": "{\"auth\": \"SECRET-RR2\", \"note\": \"started\"}",
            "webhook_token": "SECRET-RR3",
        })),
    );
    let result = session.call("run_routine", json!({"routine_id": 8}));
    // Whether this server takes such an answer as a success or quotes it in
    // an error after acceptance, the values are withheld and the keys kept.
    let shown = match error_payload(&result) {
        Some(error) => error,
        None => {
            let answer = structured(&result).clone();
            assert_eq!(answer["was_inactive"], json!({"api_key": {"withheld": true}}), "{answer}");
            assert_eq!(answer["detail"], json!(r#"{"auth":{"withheld":true},"note":"started"}"#), "{answer}");
            answer
        }
    };
    assert!(shown.to_string().contains("withheld"), "{shown}");
    assert!(!result.to_string().contains("SECRET-"), "{result}");
    assert_eq!(fake.requests_to("POST", "/api/routines/8/run").len(), 1);

    // An error's detail quoting resmon: a validation problem whose `loc` is
    // an object and whose `msg` is JSON text.
    let refusal =
        json!({"detail": [{"loc": {"auth_token": "SECRET-Q1"}, "msg": "{\"api_key\": \"SECRET-Q2\"}"}]});
    fake.set_fault_for("GET", "/api/executions/{exec_id}", Fault::Status(422, refusal.to_string()));
    let result = session.call("get_execution", json!({"exec_id": 115}));
    let error = error_payload(&result).unwrap_or_else(|| panic!("expected an error: {result}"));
    assert_eq!(error["detail"]["problems"][0]["loc"], json!({"auth_token": {"withheld": true}}), "{error}");
    assert_eq!(error["detail"]["problems"][0]["msg"], json!(r#"{"api_key":{"withheld":true}}"#), "{error}");
    assert_eq!(error["detail"]["route"], "GET /api/executions/{id}", "{error}");
    fake.set_fault_for("GET", "/api/executions/{exec_id}", Fault::None);

    // This server's own error fields whose names hold a credential word are
    // kept: the refused keys' names, and (below) the token file's path.
    let result =
        session.call("update_settings", json!({"group": "ai", "settings": {"ai_api_key": "SECRET-U1"}}));
    let error = error_payload(&result).unwrap_or_else(|| panic!("expected a refusal: {result}"));
    assert_eq!(error["detail"]["credential_shaped"], json!(["ai_api_key"]), "{error}");
    assert!(!result.to_string().contains("SECRET-"), "{result}");
    let transcript = session.transcript.join("\n");
    let (_, stderr) = session.finish();
    assert!(!transcript.contains("SECRET-"), "a credential value was shown: {transcript}");
    assert!(!stderr.contains("SECRET-"), "a credential value reached stderr: {stderr}");

    std::fs::remove_file(fake.token_file()).unwrap();
    let mut session = Session::initialized(&env_for(&fake));
    let error = error_payload(&session.call("health", json!({}))).unwrap();
    assert_eq!(error["detail"]["token_file"], json!(fake.token_file().display().to_string()), "{error}");
}

/// What resmon passes through that only looks like a credential by a word
/// inside its name is data, and comes back as it was sent; a secret in free
/// text, which no key names, loses its value (contract-notes 13).
const DATA_NAMED_LIKE_CREDENTIALS: [(&str, i64); 3] =
    [("max_tokens", 4096), ("token_count", 1834), ("source_missing_key", 3)];

#[test]
fn data_named_like_a_credential_is_shown_and_a_secret_in_text_is_not() {
    let fake = start_fake();
    let mut session = Session::initialized(&env_for(&fake));
    let mut planted = json!({
        "authorships": [{"author": "Ada Example", "position": 1}],
        "sort_key": "date",
        "openai_key": "sk-SECRET-4f9aB82c71dE0a9b3C",
        "auth_header": "Bearer SECRET-B1",
        "request_url": "https://api.example.org/works?q=graph&api_key=SECRET-Q1&page=2",
        "log": ["GET /v1?apiKey=SECRET-Q2 answered 401", "retried with token=SECRET-Q3"],
    });
    for (name, value) in DATA_NAMED_LIKE_CREDENTIALS {
        planted[name] = json!(value);
    }
    let expected = {
        let mut shown = planted.clone();
        shown["openai_key"] = json!({"withheld": true});
        shown["auth_header"] = json!("Bearer <withheld>");
        shown["request_url"] = json!("https://api.example.org/works?q=graph&api_key=<withheld>&page=2");
        shown["log"] = json!(["GET /v1?apiKey=<withheld> answered 401", "retried with token=<withheld>"]);
        shown
    };
    // Three of resmon's untyped parts: a run's coverage, a finding's
    // evidence, and the fields explain_match passes on beside its own.
    let places = [
        (
            "get_execution",
            json!({"exec_id": 115}),
            "/api/executions/{exec_id}",
            set_in("coverage", planted.clone()),
            "/coverage",
        ),
        (
            "get_watchdog_findings",
            json!({}),
            "/api/watchdog",
            set_in("findings/*/evidence", planted.clone()),
            "/findings/0/evidence",
        ),
        ("explain_match", json!({"doc_id": 801}), "/api/documents/{doc_id}/why", set(planted.clone()), ""),
    ];
    for (tool, arguments, route, fault, at) in places {
        fake.set_fault_for("GET", route, fault);
        let answer = structured(&session.call(tool, arguments)).clone();
        fake.set_fault_for("GET", route, Fault::None);
        let shown = answer.pointer(at).unwrap_or_else(|| panic!("{tool} {at}: {answer}"));
        for (key, value) in expected.as_object().unwrap() {
            assert_eq!(shown.get(key), Some(value), "{tool} {at}/{key}: {answer}");
        }
        let sent = fake.requests().into_iter().rev().find(|request| request.method == "GET").unwrap();
        assert!(String::from_utf8_lossy(&sent.answer).contains("SECRET-B1"), "{tool}: the fault reached it");
    }

    // An error quoting resmon: its sentence, and a validation problem's
    // message and location.
    let refusal = json!({"detail": [{"loc": {"max_tokens": 5, "token_count": 2},
                                      "msg": "upstream https://x.org/?token=SECRET-E1 said Bearer SECRET-E2"}]});
    fake.set_fault_for("GET", "/api/executions/{exec_id}", Fault::Status(422, refusal.to_string()));
    let error = error_payload(&session.call("get_execution", json!({"exec_id": 115}))).unwrap();
    assert_eq!(error["detail"]["problems"][0]["loc"], json!({"max_tokens": 5, "token_count": 2}), "{error}");
    assert_eq!(
        error["detail"]["problems"][0]["msg"],
        json!("upstream https://x.org/?token=<withheld> said Bearer <withheld>"),
        "{error}"
    );
    let sentence = json!({"detail": "The provider refused Authorization: Bearer SECRET-E3"});
    fake.set_fault_for("GET", "/api/executions/{exec_id}", Fault::Status(409, sentence.to_string()));
    let error = error_payload(&session.call("get_execution", json!({"exec_id": 115}))).unwrap();
    assert_eq!(error["message"], "The provider refused Authorization: Bearer <withheld>", "{error}");
    fake.set_fault_for("GET", "/api/executions/{exec_id}", Fault::None);

    let transcript = session.transcript.join("\n");
    let (_, stderr) = session.finish();
    assert!(!transcript.contains("SECRET-"), "a credential value was shown: {transcript}");
    assert!(!stderr.contains("SECRET-"), "a credential value reached stderr: {stderr}");
}
