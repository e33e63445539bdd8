//! Read tools over routines, runs and watch profiles, against the fake
//! backend: the exact requests sent, the shaped answers, the refusals that
//! send nothing, and the mapping of resmon's statuses.

use serde_json::{Value, json};

use crate::fake_backend::FakeBackend;
use crate::harness::{Fake, Session, cli_call, connected, env_for, start_fake, structured, tool_error};

const OTHER_RUNTIME: &str = "0b7e9c52-6f1a-4d3e-8a2b-9c0d1e2f3a4b";

// ------------------------------------------------------------------ helpers

/// A successful call (Session::call has checked it against the outputSchema).
fn ok(session: &mut Session, tool: &str, arguments: Value) -> Value {
    structured(&session.call(tool, arguments)).clone()
}

fn err(session: &mut Session, tool: &str, arguments: Value) -> Value {
    tool_error(&session.call(tool, arguments))
}

/// A fake and a session that has already discovered it, with the discovery
/// requests cleared so each test sees only its own.
fn started() -> (Fake, Session) {
    let (fake, mut session) = connected();
    structured(&session.call("health", json!({})));
    fake.clear_requests();
    (fake, session)
}

/// One request as (method, path, query pairs).
type Sent = (String, String, Vec<(String, String)>);

/// Every request since the last clear.
fn sent(fake: &FakeBackend) -> Vec<Sent> {
    fake.requests().iter().map(|r| (r.method.clone(), r.path.clone(), r.query_pairs.clone())).collect()
}

fn get(path: &str, query: &[(&str, &str)]) -> Sent {
    let pairs = query.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ("GET".to_string(), path.to_string(), pairs)
}

/// A refusal that reached nothing: invalid_argument naming the argument, and
/// no request at all.
fn refused(fake: &FakeBackend, session: &mut Session, tool: &str, arguments: Value, argument: &str) {
    fake.clear_requests();
    let error = err(session, tool, arguments.clone());
    assert_eq!(error["error"], "invalid_argument", "{tool} {arguments}: {error}");
    assert_eq!(error["detail"]["argument"], argument, "{tool} {arguments}: {error}");
    assert!(fake.requests().is_empty(), "{tool} {arguments} sent a request: {:?}", sent(fake));
}

fn json_header() -> [(&'static str, &'static str); 1] {
    [("Content-Type", "application/json")]
}

fn row(rows: &Value, id: i64) -> &Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == json!(id))
        .unwrap_or_else(|| panic!("no row {id}"))
}

fn ids(rows: &Value) -> Vec<i64> {
    rows.as_array().unwrap().iter().map(|row| row["id"].as_i64().unwrap()).collect()
}

fn stdout_of(session: &Session) -> String {
    session.transcript.join("\n")
}

// ------------------------------------------------------------------ list_routines

#[test]
fn list_routines_derives_sources_keywords_and_boolean_flags() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "list_routines", json!({}));
    assert_eq!(sent(&fake), vec![get("/api/routines", &[])]);
    assert_eq!(ids(&answer["routines"]), vec![9, 7, 8], "resmon's order, newest created first");
    assert_eq!((answer["count"].clone(), answer["truncated"].clone()), (json!(3), json!(false)));

    let weekly = row(&answer["routines"], 7);
    assert_eq!(weekly["schedule"], "0 8 * * 1");
    assert_eq!(weekly["sources"], json!(["arxiv", "biorxiv", "crossref"]));
    assert_eq!(weekly["keywords"], json!(["graph attention", "message passing"]), "the editor's list wins");
    for flag in ["is_active", "ai_enabled", "email_enabled", "email_ai_summary_enabled", "notify_on_complete"]
    {
        assert_eq!(weekly[flag], json!(true), "{flag}: 1 becomes true");
    }
    assert_eq!(weekly["missed_fires"], json!({"count": 2, "last_due_at_utc": "2026-09-28T08:00:00+00:00"}));
    assert_eq!(weekly["last_run_at"], "2026-09-14 09:12:40");
    assert_eq!(weekly["last_status"], "completed");
    assert_eq!(weekly["entity"], Value::Null);

    let watch = row(&answer["routines"], 9);
    assert_eq!(watch["keywords"], json!([]), "an empty query is no keyword");
    assert_eq!(watch["entity"], json!({"profile_id": 5, "mode": "new_papers"}));
    let digest = row(&answer["routines"], 8);
    assert_eq!(digest["is_active"], json!(false), "0 becomes false");
    assert_eq!(digest["keywords"], json!(["protein folding"]), "no list: the query as typed");
    assert_eq!(digest["missed_fires"], json!({"count": 0, "last_due_at_utc": null}));
    assert!(weekly.get("parameters").is_none(), "the list is compact");
}

#[test]
fn list_routines_filters_active_only_itself() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "list_routines", json!({"active_only": true}));
    assert_eq!(sent(&fake), vec![get("/api/routines", &[])], "resmon has no filter, so none is sent");
    assert_eq!(ids(&answer["routines"]), vec![9, 7]);
    assert_eq!(answer["count"], 2);
    let all = ok(&mut session, "list_routines", json!({"active_only": false}));
    assert_eq!(ids(&all["routines"]), vec![9, 7, 8]);
}

#[test]
fn list_routines_refusals_and_statuses() {
    let (fake, mut session) = started();
    refused(&fake, &mut session, "list_routines", json!({"active_only": "yes"}), "active_only");
    refused(&fake, &mut session, "list_routines", json!({"limit": 5}), "limit");
    fake.override_response(
        "GET",
        "/api/routines",
        500,
        &[("Content-Type", "text/plain")],
        "Internal Server Error",
    );
    assert_eq!(err(&mut session, "list_routines", json!({}))["error"], "upstream_error");
    fake.override_response("GET", "/api/routines", 200, &json_header(), r#"{"routines": []}"#);
    assert_eq!(err(&mut session, "list_routines", json!({}))["error"], "upstream_error", "not a bare array");
}

#[test]
fn list_routines_cuts_a_huge_list_and_says_so() {
    let (fake, mut session) = started();
    let rows: Vec<Value> = (1..=250)
        .map(|id| {
            json!({"id": id, "name": format!("r{id}"), "schedule_cron": "0 8 * * 1",
                   "parameters": "{\"query\": \"x\", \"repositories\": [\"arxiv\"]}", "is_active": 1,
                   "email_enabled": 0, "email_ai_summary_enabled": 0, "ai_enabled": 0, "notify_on_complete": 0,
                   "last_executed_at": null, "last_status": null, "missed_fires": {"count": 0, "last_due_at_utc": null}})
        })
        .collect();
    fake.override_response("GET", "/api/routines", 200, &json_header(), &Value::Array(rows).to_string());
    let answer = ok(&mut session, "list_routines", json!({}));
    assert_eq!(answer["routines"].as_array().unwrap().len(), 200);
    assert_eq!(answer["count"], 250);
    assert_eq!(answer["truncated"], true);
}

// ------------------------------------------------------------------ get_routine

#[test]
fn get_routine_reads_record_coverage_and_deliveries_in_that_order() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    assert_eq!(
        sent(&fake),
        vec![
            get("/api/routines/7", &[]),
            get("/api/routines/7/coverage", &[]),
            get("/api/routines/7/deliveries", &[]),
        ]
    );
    assert_eq!(
        answer["parameters"]["repositories"],
        json!(["arxiv", "biorxiv", "crossref"]),
        "decoded from text"
    );
    assert_eq!(answer["parameters"]["_schedule"]["kind"], "weekly");
    assert_eq!(answer["ai_settings"]["model"], "claude-sonnet-4-5", "ai_settings decoded too");
    assert_eq!(answer["is_active"], json!(true));
    assert_eq!(answer["missed_fires"]["count"], 2);
    let dispositions: Vec<&str> = answer["missed_fire_details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["disposition"].as_str().unwrap())
        .collect();
    assert_eq!(dispositions, vec!["ran_late", "recorded"]);

    let coverage = &answer["coverage"];
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string("fixtures/backend/coverage.json").unwrap()).unwrap();
    let audit = &fixture["7"];
    assert_eq!(
        coverage["off_target_count"], audit["off_target_total"],
        "a total, not the capped list's length"
    );
    assert_eq!(coverage["missed_in_corpus_count"], audit["missed_in_corpus_total"]);
    assert_eq!(
        coverage["missed_in_corpus_count_is_lower_bound"],
        audit["missed_in_corpus_total_is_lower_bound"]
    );
    assert_eq!(coverage["intent_source"], "stated");
    assert_eq!(coverage["intent"], "New methods for attention on molecular graphs");
    assert!(
        coverage.get("off_target").is_none() && coverage.get("missed_in_corpus").is_none(),
        "lists stay home"
    );
    assert_eq!(answer["coverage_unavailable"], Value::Null);

    assert_eq!(
        answer["delivery"],
        json!({
            "targets_by_channel": {"email": 1, "folder": 1, "webhook": 0, "feed": 1},
            "enabled_target_count": 3,
            "awaiting_review": 1,
            "last_state": "failed",
            "last_channel": "email",
            "last_attempts": 3,
            "last_error": "SMTPRecipientsRefused: <address>",
            "last_delivered_at_utc": null,
        })
    );
    let stdout = stdout_of(&session);
    for destination in ["test.reader@example.org", "/home/testuser", "hooks.example.net", "target_snapshot"] {
        assert!(!stdout.contains(destination), "{destination} reached stdout");
    }
}

#[test]
fn get_routine_of_a_routine_never_delivered_has_nulls_throughout() {
    let (_fake, mut session) = started();
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 8}));
    let delivery = &answer["delivery"];
    assert_eq!(delivery["targets_by_channel"], json!({"email": 0, "folder": 0, "webhook": 0, "feed": 0}));
    assert_eq!(delivery["enabled_target_count"], 0);
    for key in ["last_state", "last_channel", "last_attempts", "last_error", "last_delivered_at_utc"] {
        assert_eq!(delivery[key], Value::Null, "{key}");
    }
    assert_eq!(answer["is_active"], json!(false));
    assert_eq!(answer["coverage"]["intent_source"], "keywords", "no stated intent: the audit used keywords");
}

#[test]
fn get_routine_leaves_delivery_off_when_resmon_cannot_answer_it() {
    let (fake, mut session) = started();
    fake.override_response(
        "GET",
        "/api/routines/7/deliveries",
        500,
        &[("Content-Type", "text/plain")],
        "Internal Server Error",
    );
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    assert!(answer.get("delivery").is_none(), "absent, not zeros or null: {answer}");
    assert_eq!(answer["coverage"]["intent_source"], "stated", "the rest still answers");
    fake.override_response(
        "GET",
        "/api/routines/7/deliveries",
        404,
        &json_header(),
        r#"{"detail": "Not Found"}"#,
    );
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    assert!(answer.get("delivery").is_none());
}

#[test]
fn get_routine_reports_a_failed_audit_as_null_with_the_reason() {
    let (fake, mut session) = started();
    fake.override_response(
        "GET",
        "/api/routines/7/coverage",
        500,
        &[("Content-Type", "text/plain")],
        "Internal Server Error",
    );
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    assert_eq!(answer["coverage"], Value::Null);
    let reason = answer["coverage_unavailable"].as_str().unwrap();
    assert!(reason.contains("upstream_error"), "{reason}");
    assert_eq!(answer["delivery"]["enabled_target_count"], 3, "deliveries were still read");
    assert_eq!(fake.requests().len(), 3);
}

#[test]
fn get_routine_scrubs_destinations_that_resmon_left_in_last_error() {
    let (fake, mut session) = started();
    {
        let mut state = fake.state();
        let deliveries = state.answer_mut("/api/routines/7/deliveries");
        let error = json!(
            "SMTPRecipientsRefused: {'leaky.person@example.com': (550, 'no')} after writing \
             /home/leaky/private-reports/out.md and POST https://hooks.leaky.example/T1/SECRETHOOK"
        );
        // Delivery 31 is the newest: its row, and the summary's last delivery.
        let newest =
            deliveries["deliveries"].as_array_mut().unwrap().iter_mut().find(|d| d["id"] == 31).unwrap();
        newest["last_error"] = error.clone();
        newest["target_snapshot"] = json!("leaky.person@example.com");
        assert_eq!(deliveries["summary"]["last"]["id"], 31);
        deliveries["summary"]["last"]["last_error"] = error;
    }
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    let error = answer["delivery"]["last_error"].as_str().unwrap();
    assert!(error.starts_with("SMTPRecipientsRefused"), "the prose survives: {error}");
    let stdout = stdout_of(&session);
    for leak in ["leaky.person", "example.com", "/home/leaky", "private-reports", "hooks.leaky", "SECRETHOOK"]
    {
        assert!(!stdout.contains(leak), "{leak} reached stdout: {error}");
    }
}

/// contract 1.0 "A routine's delivery and coverage": the total is the sum of
/// the per-channel counts, and a channel beyond the contract's four is shown
/// under resmon's name rather than dropped from the map but kept in the sum.
#[test]
fn get_routine_shows_every_channel_resmon_counts_and_their_sum() {
    let (fake, mut session) = started();
    {
        let mut state = fake.state();
        let summary = &mut state.answer_mut("/api/routines/7/deliveries")["summary"];
        summary["targets"] = json!({"email": 1, "pigeon": 2});
        summary["enabled_target_count"] = json!(3);
    }
    // Session::call holds the answer to get_routine's outputSchema.
    let delivery = ok(&mut session, "get_routine", json!({"routine_id": 7}))["delivery"].clone();
    let targets = delivery["targets_by_channel"].as_object().unwrap();
    assert_eq!(
        delivery["targets_by_channel"],
        json!({"email": 1, "folder": 0, "webhook": 0, "feed": 0, "pigeon": 2}),
        "{delivery}"
    );
    let sum: i64 = targets.values().map(|count| count.as_i64().unwrap()).sum();
    assert_eq!(delivery["enabled_target_count"], sum);
    assert_eq!(sum, 3);
}

/// A count resmon gives in a form that is not a number of destinations, or
/// a total that disagrees with its own channels, leaves `delivery` off with
/// the reason; zeros or a guessed sum would misstate where reports go.
#[test]
fn get_routine_leaves_delivery_off_when_resmon_counts_cannot_be_shown() {
    let (fake, mut session) = started();
    for (targets, total, expected) in [
        (json!({"email": "1", "folder": 1}), json!(2), "gave \"1\" as the email count"),
        (json!({"email": 1, "pigeon": -2}), json!(3), "gave -2 as the pigeon count"),
        (json!({"email": 1, "pigeon": 2}), json!(2), "does not add up"),
    ] {
        {
            let mut state = fake.state();
            let summary = &mut state.answer_mut("/api/routines/7/deliveries")["summary"];
            summary["targets"] = targets.clone();
            summary["enabled_target_count"] = total;
        }
        let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
        assert!(answer.get("delivery").is_none(), "{targets}: {answer}");
        let why = answer["delivery_unavailable"].as_str().unwrap_or_default();
        assert!(why.contains(expected), "{targets}: {why}");
        assert_eq!(answer["coverage"]["intent_source"], "stated", "the rest still answers");
    }
}

/// Host names are matched without regard to case: a webhook or mail host
/// in capitals is removed like a lowercase one, and class names survive.
#[test]
fn get_routine_scrubs_host_names_written_in_capitals() {
    let (fake, mut session) = started();
    {
        let mut state = fake.state();
        let deliveries = state.answer_mut("/api/routines/7/deliveries");
        let error = json!(
            "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='Hooks.Example.COM', port=443) \
             via Hooks.Example.COM:443; then smtplib.SMTPServerDisconnected talking to MAIL.CORP.LOCAL"
        );
        deliveries["summary"]["last"]["last_error"] = error;
    }
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    let error = answer["delivery"]["last_error"].as_str().unwrap();
    assert_eq!(
        error,
        "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='<target>', port=443) \
         via <target>; then smtplib.SMTPServerDisconnected talking to <target>"
    );
    let stdout = stdout_of(&session);
    for leak in ["Hooks.Example", "Example.COM", "MAIL.CORP", "CORP.LOCAL"] {
        assert!(!stdout.contains(leak), "{leak} reached stdout");
    }
}

/// Destinations with no dotted domain, IPv6 literals and hosts behind a
/// `key=` are removed too; exception class names, keys and the punctuation
/// after a removed host stay readable.
#[test]
fn get_routine_scrubs_bare_hosts_ipv6_and_keyed_destinations() {
    let (fake, mut session) = started();
    {
        let mut state = fake.state();
        let deliveries = state.answer_mut("/api/routines/7/deliveries");
        let error = json!(
            "smtplib.SMTPRecipientsRefused: refused reader@localhost and root@mailhost; retry host=2001:db8::1 \
             connect failed host=hooks.example.net:443 (to=Hooks.Example.NET); via [fe80::1%eth0]:443 and \
             [::1]:443; lookup hooks.example.net: no such host"
        );
        deliveries["summary"]["last"]["last_error"] = error;
    }
    let answer = ok(&mut session, "get_routine", json!({"routine_id": 7}));
    let error = answer["delivery"]["last_error"].as_str().unwrap();
    assert_eq!(
        error,
        "smtplib.SMTPRecipientsRefused: refused <address> and <address>; retry host=<target> \
         connect failed host=<target> (to=<target>); via [<target>]:443 and \
         [<target>]:443; lookup <target>: no such host"
    );
    let stdout = stdout_of(&session);
    for leak in
        ["reader@", "localhost", "mailhost", "2001:db8", "hooks.example", "Hooks.Example", "fe80", "::1"]
    {
        assert!(!stdout.contains(leak), "{leak} reached stdout");
    }
}

#[test]
fn get_routine_errors_and_refusals() {
    let (fake, mut session) = started();
    let error = err(&mut session, "get_routine", json!({"routine_id": 999}));
    assert_eq!(error["error"], "not_found");
    assert_eq!(error["message"], "Routine not found");
    assert_eq!(sent(&fake), vec![get("/api/routines/999", &[])], "nothing after the record failed");
    fake.override_response(
        "GET",
        "/api/routines/7",
        422,
        &json_header(),
        r#"{"detail": [{"type": "int_parsing", "loc": ["path", "routine_id"], "msg": "bad", "input": "x"}]}"#,
    );
    assert_eq!(err(&mut session, "get_routine", json!({"routine_id": 7}))["error"], "invalid_argument");
    refused(&fake, &mut session, "get_routine", json!({}), "routine_id");
    refused(&fake, &mut session, "get_routine", json!({"routine_id": "7"}), "routine_id");
    refused(&fake, &mut session, "get_routine", json!({"routine_id": 7, "verbose": true}), "verbose");
}

#[test]
fn routines_tools_answer_through_the_cli() {
    let fake = start_fake();
    let (code, answer, _) = cli_call("get_routine", json!({"routine_id": 9}), &env_for(&fake));
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["parameters"]["entity"], json!({"profile_id": 5, "mode": "new_papers"}));
    assert_eq!(answer["delivery"]["targets_by_channel"]["feed"], 1);
    let (code, answer, _) = cli_call("list_routines", json!({"active_only": true}), &env_for(&fake));
    assert_eq!(code, Some(0));
    assert_eq!(answer["count"], 2);
}

// ------------------------------------------------------------------ list_executions

#[test]
fn list_executions_projects_a_fixed_key_set_and_pages_with_resmon() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "list_executions", json!({}));
    assert_eq!(sent(&fake), vec![get("/api/executions", &[("limit", "26"), ("offset", "0")])]);
    assert_eq!(ids(&answer["executions"]), vec![121, 120, 119, 118, 117, 116, 115]);
    // The contract's fixed key set for a run in a list, written out here.
    let keys = "id type routine_id status started finished result_count interrupted_reason restarted_from"
        .split(' ')
        .collect::<Vec<_>>();
    for run in answer["executions"].as_array().unwrap() {
        let mut actual: Vec<&str> = run.as_object().unwrap().keys().map(String::as_str).collect();
        actual.sort_unstable();
        let mut expected = keys.to_vec();
        expected.sort_unstable();
        assert_eq!(actual, expected, "{run}");
    }
    let interrupted = row(&answer["executions"], 118);
    assert_eq!(interrupted["status"], "interrupted");
    assert_eq!(interrupted["interrupted_reason"], "owner_dead");
    let restarted = row(&answer["executions"], 119);
    assert_eq!(restarted["restarted_from"], 118);
    assert_eq!(restarted["type"], "automated_sweep");
    assert_eq!(restarted["started"], "2026-09-14T09:12:40Z");
    assert_eq!(restarted["finished"], "2026-09-14T09:15:02Z");
    assert_eq!(restarted["result_count"], 12);
    assert_eq!(row(&answer["executions"], 121)["finished"], Value::Null, "running");
    assert_eq!((answer["has_more"].clone(), answer["total"].clone()), (json!(false), json!(7)));
    assert_eq!(answer["scan_limit_reached"], false);

    fake.clear_requests();
    let page = ok(&mut session, "list_executions", json!({"limit": 2, "offset": 1}));
    assert_eq!(sent(&fake), vec![get("/api/executions", &[("limit", "3"), ("offset", "1")])]);
    assert_eq!(ids(&page["executions"]), vec![120, 119]);
    assert_eq!((page["has_more"].clone(), page["total"].clone()), (json!(true), Value::Null));
    assert_eq!((page["offset"].clone(), page["limit"].clone()), (json!(1), json!(2)));

    fake.clear_requests();
    let big = ok(&mut session, "list_executions", json!({"limit": 5000}));
    assert_eq!(
        sent(&fake),
        vec![get("/api/executions", &[("limit", "101"), ("offset", "0")])],
        "clamped to 100"
    );
    assert_eq!(big["limit"], 100);
    let past = ok(&mut session, "list_executions", json!({"offset": 50}));
    assert_eq!(past["executions"], json!([]));
    assert_eq!(past["total"], Value::Null, "an empty page past the end does not tell the total");
}

#[test]
fn list_executions_filters_and_pages_the_filtered_set() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "list_executions", json!({"routine_id": 7}));
    assert_eq!(sent(&fake), vec![get("/api/executions", &[("limit", "100"), ("offset", "0")])]);
    assert_eq!(ids(&answer["executions"]), vec![119, 118, 116]);
    assert_eq!((answer["has_more"].clone(), answer["total"].clone()), (json!(false), json!(3)));

    let page = ok(&mut session, "list_executions", json!({"routine_id": 7, "limit": 1, "offset": 1}));
    assert_eq!(ids(&page["executions"]), vec![118]);
    assert_eq!((page["has_more"].clone(), page["total"].clone()), (json!(true), json!(3)));

    let interrupted = ok(&mut session, "list_executions", json!({"status": "interrupted"}));
    assert_eq!(ids(&interrupted["executions"]), vec![118]);
    let both = ok(&mut session, "list_executions", json!({"routine_id": 7, "status": "failed"}));
    assert_eq!(ids(&both["executions"]), vec![116]);
    let none = ok(&mut session, "list_executions", json!({"routine_id": 8, "status": "running"}));
    assert_eq!((none["executions"].clone(), none["total"].clone()), (json!([]), json!(0)));
}

#[test]
fn list_executions_reads_pages_until_it_has_enough() {
    let (fake, mut session) = started();
    {
        let mut state = fake.state();
        for n in 0..1100 {
            state.executions.push(json!({
                "id": 1000 + n, "execution_type": "deep_sweep", "routine_id": 8,
                "parameters": "{}", "start_time": format!("2025-01-01T00:{:02}:{:02}Z", n / 60 % 60, n % 60),
                "end_time": null, "status": "completed", "result_count": 0, "interrupted_reason": null,
                "restarted_from": null, "coverage": {"total": 0, "counts": {}, "sources": []}
            }));
        }
    }
    let answer = ok(&mut session, "list_executions", json!({"routine_id": 7}));
    let offsets: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.query_pairs.iter().find(|(k, _)| k == "offset").unwrap().1.clone())
        .collect();
    let expected: Vec<String> = (0..12).map(|page| (page * 100).to_string()).collect();
    assert_eq!(offsets, expected, "the routine's runs are the newest; resmon ran out on page 12");
    assert_eq!(ids(&answer["executions"]), vec![119, 118, 116]);
    assert_eq!(answer["total"], 3);

    fake.clear_requests();
    let answer = ok(&mut session, "list_executions", json!({"routine_id": 8, "limit": 3}));
    assert_eq!(fake.requests().len(), 1, "the first page already held offset+limit+1 matches");
    assert_eq!(answer["has_more"], true);
    assert_eq!(answer["total"], Value::Null);
}

#[test]
fn list_executions_stops_at_its_bound_and_says_so() {
    // The page bound is what is tested here, so the call gets the whole
    // production deadline: on a loaded machine 50 pages can take longer
    // than the tests' usual short bound, and the scan would then stop early
    // (rightly, and saying so) before reaching it.
    let fake = start_fake();
    let mut env = env_for(&fake);
    env.push(("RESMON_MCP_TIMEOUT_MS".into(), "30000".into()));
    let mut session = Session::initialized(&env);
    structured(&session.call("health", json!({})));
    fake.clear_requests();
    let rows: Vec<Value> = (0..500)
        .map(|n| {
            json!({"id": n + 1, "execution_type": "deep_sweep", "routine_id": 1, "status": "completed",
                        "start_time": "2025-01-01T00:00:00Z", "end_time": null, "result_count": 0,
                        "interrupted_reason": null, "restarted_from": null})
        })
        .collect();
    fake.override_response("GET", "/api/executions", 200, &json_header(), &Value::Array(rows).to_string());
    let answer = ok(&mut session, "list_executions", json!({"routine_id": 2}));
    assert_eq!(fake.requests().len(), 50, "at most 50 backend pages");
    assert_eq!(answer["executions"], json!([]));
    assert_eq!(answer["scan_limit_reached"], true);
    assert_eq!(answer["has_more"], true, "older runs were not checked");
    assert_eq!(answer["total"], Value::Null);
    assert!(answer["note"].as_str().unwrap().contains("5000"), "{}", answer["note"]);
}

#[test]
fn list_executions_refusals_and_statuses() {
    let (fake, mut session) = started();
    refused(&fake, &mut session, "list_executions", json!({"status": "done"}), "status");
    refused(&fake, &mut session, "list_executions", json!({"limit": 0}), "limit");
    refused(&fake, &mut session, "list_executions", json!({"offset": -1}), "offset");
    refused(&fake, &mut session, "list_executions", json!({"routine_id": "7"}), "routine_id");
    refused(&fake, &mut session, "list_executions", json!({"cursor": "x"}), "cursor");
    fake.override_response(
        "GET",
        "/api/executions",
        422,
        &json_header(),
        r#"{"detail": [{"type": "less_than_equal", "loc": ["query", "limit"], "msg": "too big", "input": "900"}]}"#,
    );
    // The page size sent to resmon is this server's, even when the caller gave a limit.
    let error = err(&mut session, "list_executions", json!({"limit": 10}));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert_eq!(error["detail"]["problems"][0]["loc"], json!(["query", "limit"]));
    assert_eq!(error["detail"]["parameters"], json!(["limit"]));
    fake.override_response(
        "GET",
        "/api/executions",
        503,
        &[("Content-Type", "text/plain")],
        "Service Unavailable",
    );
    assert_eq!(err(&mut session, "list_executions", json!({"status": "failed"}))["error"], "upstream_error");
}

// ------------------------------------------------------------------ get_execution

#[test]
fn get_execution_returns_the_row_whole_with_identity_beside_it() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "get_execution", json!({"exec_id": 119}));
    assert_eq!(sent(&fake), vec![get("/api/executions/119", &[])], "unbound: no preflight, no expectation");
    assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id());
    assert_eq!(answer["identity"]["contract_version"], 1);
    let start = &answer["parameters"]["default_starts"]["biorxiv"];
    assert_eq!(
        (start["days"].clone(), start["before"].clone()),
        (json!(3), json!("run")),
        "decoded, kept whole"
    );
    assert_eq!(answer["parameters"]["keywords"], json!(["graph attention", "message passing"]));
    assert_eq!(answer["restarted_from"], 118);
    assert_eq!(answer["restarted_into"], json!([]));
    assert_eq!(answer["interrupted_reason"], Value::Null);
    assert_eq!(answer["owner_pid"], 40219);
    assert_eq!(answer["owner_runtime_id"], "0d4c1f5e-7a2b-4c3d-9e8f-112233445566");
    assert_eq!(answer["last_seen_at_utc"], "2026-09-14T09:15:02Z");
    assert_eq!(answer["coverage"]["counts"]["in_part"], 1);
    let biorxiv = &answer["coverage"]["sources"][1];
    assert_eq!(
        (biorxiv["zero_reason"].clone(), biorxiv["in_part"].clone()),
        (json!("answered_in_part"), json!(true))
    );
    assert_eq!(answer["dedup_cross_source"], 2, "the rest of the row passes through");
    assert_eq!(answer.get("progress_events"), Some(&Value::Null), "resmon keeps none for this run");
    for invented in ["progress_event_count", "recent_progress_events"] {
        assert!(answer.get(invented).is_none(), "{invented} is not part of the row");
    }

    let interrupted = ok(&mut session, "get_execution", json!({"exec_id": 118}));
    assert_eq!(interrupted["status"], "interrupted");
    assert_eq!(interrupted["interrupted_reason"], "owner_dead");
    assert_eq!(interrupted["restarted_into"], json!([119]));
    let stored = fake.state().execution(118).unwrap()["progress_events"].clone();
    let stored: Value = serde_json::from_str(stored.as_str().unwrap()).unwrap();
    assert_eq!(interrupted["progress_events"], stored, "the log as resmon keeps it, decoded");
    assert_eq!(interrupted["progress_events"][0]["stage"], "searching");
}

#[test]
fn get_execution_returns_a_long_progress_log_whole() {
    let (fake, mut session) = started();
    let events: Vec<Value> =
        (0..400).map(|n| json!({"type": "progress", "n": n, "pad": "x".repeat(50)})).collect();
    {
        let mut state = fake.state();
        let run = state.executions.iter_mut().find(|e| e["id"] == json!(121)).unwrap();
        run["progress_events"] = json!(Value::Array(events.clone()).to_string());
    }
    let answer = ok(&mut session, "get_execution", json!({"exec_id": 121}));
    assert_eq!(answer["progress_events"], Value::Array(events), "every event, in order");

    // A log resmon sends as JSON rather than text, or as text that is not
    // JSON, comes back as it came.
    for kept in [json!([{"stage": "done"}]), json!("not a JSON log")] {
        fake.state().executions.iter_mut().find(|e| e["id"] == json!(121)).unwrap()["progress_events"] =
            kept.clone();
        assert_eq!(ok(&mut session, "get_execution", json!({"exec_id": 121}))["progress_events"], kept);
    }
}

#[test]
fn get_execution_pinned_asks_health_first_then_the_run_with_the_same_expectation() {
    let (fake, mut session) = started();
    let runtime = fake.runtime_id();
    let answer = ok(&mut session, "get_execution", json!({"exec_id": 120, "expected_runtime_id": runtime}));
    assert_eq!(
        sent(&fake),
        vec![
            get("/api/health", &[("expected_runtime_id", &runtime)]),
            get("/api/executions/120", &[("expected_runtime_id", &runtime)]),
        ]
    );
    assert_eq!(answer["id"], 120);
    assert_eq!(answer["identity"]["runtime_id"], runtime);
    let error = err(&mut session, "get_execution", json!({"exec_id": 99999, "expected_runtime_id": runtime}));
    assert_eq!(error["error"], "not_found", "matching identity, absent run");
}

#[test]
fn get_execution_refuses_a_malformed_expectation_before_any_request() {
    let (fake, mut session) = connected();
    for bad in ["", "nope", "3F6B2A1E-9C4D-4E8A-B2F1-7D0C5E6A9B13", "3f6b2a1e-9c4d-1e8a-b2f1-7d0c5e6a9b13"] {
        let error = err(&mut session, "get_execution", json!({"exec_id": 119, "expected_runtime_id": bad}));
        assert_eq!(error["error"], "invalid_argument", "{bad:?}");
        assert_eq!(error["detail"]["argument"], "expected_runtime_id");
    }
    let error = err(&mut session, "get_execution", json!({"exec_id": 119, "expected_runtime_id": 7}));
    assert_eq!(error["error"], "invalid_argument");
    assert!(fake.requests().is_empty(), "not even discovery: {:?}", sent(&fake));
    refused(
        &fake,
        &mut session,
        "get_execution",
        json!({"expected_runtime_id": fake.runtime_id()}),
        "exec_id",
    );
}

#[test]
fn get_execution_pinned_to_another_instance_never_asks_for_the_run() {
    let (fake, mut session) = started();
    let error =
        err(&mut session, "get_execution", json!({"exec_id": 119, "expected_runtime_id": OTHER_RUNTIME}));
    assert_eq!(error["error"], "instance_mismatch");
    assert_eq!(error["detail"]["expected_runtime_id"], OTHER_RUNTIME);
    assert_eq!(error["detail"]["actual_runtime_id"], fake.runtime_id());
    assert_eq!(sent(&fake), vec![get("/api/health", &[("expected_runtime_id", OTHER_RUNTIME)])]);
}

#[test]
fn get_execution_discards_a_reply_from_another_instance() {
    let (fake, mut session) = started();
    let runtime = fake.runtime_id();
    let row = json!({"id": 119, "status": "completed", "parameters": "{\"query\": \"DISTINCTIVE-ROW-CONTENT\"}",
                     "error_message": "DISTINCTIVE-ROW-CONTENT",
                     "identity": {"contract_version": 1, "runtime_id": OTHER_RUNTIME, "schema_version": 21,
                                  "corpus_id": null, "build_id": null}});
    fake.override_response("GET", "/api/executions/119", 200, &json_header(), &row.to_string());
    let error = err(&mut session, "get_execution", json!({"exec_id": 119, "expected_runtime_id": runtime}));
    assert_eq!(error["error"], "instance_mismatch");
    assert_eq!(error["detail"]["actual_runtime_id"], OTHER_RUNTIME);
    assert!(!stdout_of(&session).contains("DISTINCTIVE-ROW-CONTENT"), "the run's content was relayed");
    assert_eq!(fake.requests().len(), 2, "no retry, no rediscovery");
}

#[test]
fn get_execution_pinned_refuses_a_reply_without_identity() {
    let (fake, mut session) = started();
    let runtime = fake.runtime_id();
    for identity in [json!(null), json!({"contract_version": 1, "runtime_id": "not-a-uuid"}), json!("x")] {
        let row = json!({"id": 119, "status": "completed", "error_message": "DISTINCTIVE-ROW-CONTENT", "identity": identity});
        fake.override_response("GET", "/api/executions/119", 200, &json_header(), &row.to_string());
        let error =
            err(&mut session, "get_execution", json!({"exec_id": 119, "expected_runtime_id": runtime}));
        assert_eq!(error["error"], "identity_unavailable", "{identity}");
    }
    assert!(!stdout_of(&session).contains("DISTINCTIVE-ROW-CONTENT"));
    // Unpinned, the same run is still readable, with no identity invented.
    let row = json!({"id": 119, "status": "completed", "parameters": "{}"});
    fake.override_response("GET", "/api/executions/119", 200, &json_header(), &row.to_string());
    let answer = ok(&mut session, "get_execution", json!({"exec_id": 119}));
    assert_eq!(answer["identity"], Value::Null);
    assert_eq!(answer["restarted_into"], Value::Null, "unknown, not an invented empty list");
}

#[test]
fn get_execution_maps_the_execution_routes_statuses() {
    let (fake, mut session) = started();
    let runtime = fake.runtime_id();
    let pinned = json!({"exec_id": 119, "expected_runtime_id": runtime});
    let mismatch = json!({"detail": {"code": "instance_mismatch", "message": "other app",
                                     "expected_runtime_id": runtime, "actual_runtime_id": OTHER_RUNTIME}});
    fake.override_response("GET", "/api/executions/119", 409, &json_header(), &mismatch.to_string());
    let error = err(&mut session, "get_execution", pinned.clone());
    assert_eq!(error["error"], "instance_mismatch");
    assert_eq!(error["detail"]["actual_runtime_id"], OTHER_RUNTIME);

    fake.override_response(
        "GET",
        "/api/executions/119",
        409,
        &json_header(),
        r#"{"detail": "Busy with something else."}"#,
    );
    let error = err(&mut session, "get_execution", pinned.clone());
    assert_eq!(error["error"], "conflict");
    assert_eq!(error["message"], "Busy with something else.");
    let error = err(&mut session, "get_execution", json!({"exec_id": 119}));
    assert_eq!(error["error"], "conflict");

    fake.override_response(
        "GET",
        "/api/executions/119",
        422,
        &json_header(),
        r#"{"detail": "expected_runtime_id must be a canonical lowercase UUID4"}"#,
    );
    assert_eq!(err(&mut session, "get_execution", pinned.clone())["error"], "invalid_argument");

    let error = err(&mut session, "get_execution", json!({"exec_id": 99999}));
    assert_eq!(
        (error["error"].clone(), error["message"].clone()),
        (json!("not_found"), json!("Execution not found"))
    );
}

// ------------------------------------------------------------------ get_execution_results

#[test]
fn get_execution_results_asks_for_id_bearing_json_and_pages_it_here() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "get_execution_results", json!({"exec_id": 119}));
    assert_eq!(
        sent(&fake),
        vec![get("/api/executions/119/references", &[("format", "json"), ("include_ids", "true")])]
    );
    assert_eq!(
        ids(&answer["papers"]),
        vec![801, 802, 803, 806, 809, 810, 812, 815, 818, 821, 824, 825],
        "the run's stored order"
    );
    assert_eq!((answer["total"].clone(), answer["has_more"].clone()), (json!(12), json!(false)));
    let first = &answer["papers"][0];
    let mut keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, vec!["authors", "date", "doi", "id", "source", "title", "url"], "compact papers only");
    assert_eq!(first["title"], "Synthetic paper about graph attention");
    assert_eq!(first["source"], "arxiv");
    assert_eq!(first["date"], "2026-09-20");
    assert!(first["authors"].as_array().unwrap().len() > 1, "the comma-joined string split: {first}");

    fake.clear_requests();
    let page = ok(&mut session, "get_execution_results", json!({"exec_id": 119, "limit": 5, "offset": 5}));
    assert_eq!(
        sent(&fake)[0].2,
        vec![("format".into(), "json".into()), ("include_ids".into(), "true".into())]
    );
    assert_eq!(ids(&page["papers"]), vec![810, 812, 815, 818, 821]);
    assert_eq!((page["has_more"].clone(), page["total"].clone()), (json!(true), json!(12)));
    let tail = ok(&mut session, "get_execution_results", json!({"exec_id": 119, "limit": 5, "offset": 10}));
    assert_eq!(ids(&tail["papers"]), vec![824, 825]);
    assert_eq!(tail["has_more"], false);
    let empty = ok(&mut session, "get_execution_results", json!({"exec_id": 121}));
    assert_eq!((empty["papers"].clone(), empty["total"].clone()), (json!([]), json!(0)));
}

#[test]
fn get_execution_results_errors_and_refusals() {
    let (fake, mut session) = started();
    assert_eq!(err(&mut session, "get_execution_results", json!({"exec_id": 99999}))["error"], "not_found");
    fake.override_response(
        "GET",
        "/api/executions/119/references",
        200,
        &json_header(),
        r#"[{"title": "No id here", "authors": "A", "source_repository": "arxiv"}]"#,
    );
    let error = err(&mut session, "get_execution_results", json!({"exec_id": 119}));
    assert_eq!(
        error["error"], "upstream_error",
        "a paper without its corpus id is not usable by explain_match"
    );
    fake.override_response(
        "GET",
        "/api/executions/119/references",
        400,
        &json_header(),
        r#"{"detail": "include_ids requires the json format"}"#,
    );
    // format and include_ids are this server's choice, not the caller's:
    // no argument can fix this (contract-notes 17).
    let error = err(&mut session, "get_execution_results", json!({"exec_id": 119}));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert_eq!(error["detail"]["parameters"], json!(["format", "include_ids"]), "{error}");
    assert_eq!(error["detail"]["route"], "GET /api/executions/{id}/references", "{error}");
    assert!(error["detail"]["backend_version"].is_string(), "{error}");
    refused(&fake, &mut session, "get_execution_results", json!({}), "exec_id");
    refused(&fake, &mut session, "get_execution_results", json!({"exec_id": 119, "limit": 0}), "limit");
    refused(&fake, &mut session, "get_execution_results", json!({"exec_id": 119, "offset": -5}), "offset");
    refused(&fake, &mut session, "get_execution_results", json!({"exec_id": 119, "format": "csv"}), "format");
}

// ------------------------------------------------------------------ get_search_record

#[test]
fn get_search_record_passes_the_record_through_with_queries_as_sent() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "get_search_record", json!({"exec_id": 119}));
    assert_eq!(sent(&fake), vec![get("/api/executions/119/search-record", &[])]);
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string("fixtures/backend/executions.json").unwrap()).unwrap();
    assert_eq!(
        answer["search"]["queries_as_sent"], fixture["queries_as_sent"]["119"],
        "exactly as resmon gave it"
    );
    assert_eq!(answer["search"]["query_as_sent"], "graph attention");
    assert_eq!(answer["record_type"], "resmon_search_record");
    assert_eq!(answer["identification"]["prisma"], "Records identified from databases");
    assert_eq!(answer["deduplication"]["cross_source_duplicates"]["count"], 2);
    assert!(!answer["caveats"].as_array().unwrap().is_empty());

    let old = ok(&mut session, "get_search_record", json!({"exec_id": 115}));
    assert_eq!(old["search"]["queries_as_sent"], Value::Null, "a run from before the record existed");
    assert!(old["search"].as_object().unwrap().contains_key("queries_as_sent"));
}

#[test]
fn get_search_record_fills_keys_an_older_resmon_leaves_out_and_maps_errors() {
    let (fake, mut session) = started();
    let record =
        json!({"record_type": "resmon_search_record", "search": {"execution_id": 119, "keywords": ["x"]}});
    fake.override_response(
        "GET",
        "/api/executions/119/search-record",
        200,
        &json_header(),
        &record.to_string(),
    );
    let answer = ok(&mut session, "get_search_record", json!({"exec_id": 119}));
    assert_eq!(answer["search"]["queries_as_sent"], Value::Null);
    assert_eq!(answer["search"]["query_as_sent"], Value::Null);
    fake.override_response(
        "GET",
        "/api/executions/119/search-record",
        200,
        &json_header(),
        r#"{"record_type": "x"}"#,
    );
    assert_eq!(err(&mut session, "get_search_record", json!({"exec_id": 119}))["error"], "upstream_error");
    let error = err(&mut session, "get_search_record", json!({"exec_id": 99999}));
    assert_eq!(
        (error["error"].clone(), error["message"].clone()),
        (json!("not_found"), json!("No execution with id 99999"))
    );
    refused(&fake, &mut session, "get_search_record", json!({"exec_id": 1.5}), "exec_id");
    refused(
        &fake,
        &mut session,
        "get_search_record",
        json!({"exec_id": 119, "format": "markdown"}),
        "format",
    );
}

#[test]
fn execution_tools_answer_through_the_cli() {
    let fake = start_fake();
    let vars = env_for(&fake);
    let (code, answer, _) =
        cli_call("get_execution", json!({"exec_id": 119, "expected_runtime_id": fake.runtime_id()}), &vars);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["identity"]["runtime_id"], fake.runtime_id());
    let (code, answer, _) =
        cli_call("get_execution", json!({"exec_id": 119, "expected_runtime_id": OTHER_RUNTIME}), &vars);
    assert_eq!(code, Some(1));
    assert_eq!(answer["error"], "instance_mismatch");
    let (code, answer, _) = cli_call("list_executions", json!({"status": "interrupted"}), &vars);
    assert_eq!(code, Some(0));
    assert_eq!(ids(&answer["executions"]), vec![118]);
    let (_, answer, _) = cli_call("get_search_record", json!({"exec_id": 120}), &vars);
    assert_eq!(answer["search"]["execution_id"], 120);
    let (_, answer, _) = cli_call("get_execution_results", json!({"exec_id": 119, "limit": 1}), &vars);
    assert_eq!(ids(&answer["papers"]), vec![801]);
}

// ------------------------------------------------------------------ watch profiles

#[test]
fn list_watch_profiles_keeps_basis_warning_on_every_row() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "list_watch_profiles", json!({}));
    assert_eq!(sent(&fake), vec![get("/api/profiles", &[])]);
    assert_eq!(ids(&answer["profiles"]), vec![7, 5, 6], "resmon's order, by name");
    assert_eq!(answer["count"], 3);
    for profile in answer["profiles"].as_array().unwrap() {
        assert!(profile.as_object().unwrap().contains_key("basis_warning"), "{profile}");
    }
    let one = row(&answer["profiles"], 5);
    assert_eq!(one["name"], "Test Author One");
    assert_eq!(one["kind"], "person");
    assert_eq!(one["aliases"], json!(["T. A. One"]));
    assert_eq!(one["identifier_schemes"], json!(["orcid"]));
    assert_eq!(one["orcid"], "0000-0002-1825-0097");
    assert_eq!(one["affiliations"], json!(["Synthetic Institute of Testing"]));
    assert_eq!(one["basis_warning"], Value::Null, "an ORCID lifts the warning");
    let two = row(&answer["profiles"], 6);
    assert!(two["basis_warning"].as_str().unwrap().contains("name-only"), "{two}");
    assert_eq!((two["aliases"].clone(), two["orcid"].clone()), (json!([]), Value::Null));
    let institute = row(&answer["profiles"], 7);
    assert_eq!(institute["identifier_schemes"], json!(["ror"]));
    assert!(institute["basis_warning"].is_string(), "a ROR is not an ORCID (backend-facts 10)");

    fake.clear_requests();
    let people = ok(&mut session, "list_watch_profiles", json!({"kind": "person"}));
    assert_eq!(sent(&fake), vec![get("/api/profiles", &[("kind", "person")])]);
    assert_eq!(ids(&people["profiles"]), vec![5, 6]);
}

#[test]
fn list_watch_profiles_refusals_and_statuses() {
    let (fake, mut session) = started();
    refused(&fake, &mut session, "list_watch_profiles", json!({"kind": "robot"}), "kind");
    refused(&fake, &mut session, "list_watch_profiles", json!({"limit": 5}), "limit");
    fake.override_response(
        "GET",
        "/api/profiles",
        500,
        &[("Content-Type", "text/plain")],
        "Internal Server Error",
    );
    assert_eq!(err(&mut session, "list_watch_profiles", json!({}))["error"], "upstream_error");
    fake.override_response("GET", "/api/profiles", 200, &json_header(), "[]");
    assert_eq!(err(&mut session, "list_watch_profiles", json!({}))["error"], "upstream_error", "not wrapped");
}

#[test]
fn get_watch_profile_adds_totals_from_a_one_row_matches_read() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "get_watch_profile", json!({"profile_id": 5}));
    assert_eq!(
        sent(&fake),
        vec![get("/api/profiles/5", &[]), get("/api/profiles/5/matches", &[("limit", "1")])]
    );
    let fixture: Value =
        serde_json::from_str(&std::fs::read_to_string("fixtures/backend/matches.json").unwrap()).unwrap();
    let mine: Vec<&Value> =
        fixture["matches"].as_array().unwrap().iter().filter(|m| m["profile_id"] == json!(5)).collect();
    assert_eq!(answer["match_total"], json!(mine.len()));
    let count = |basis: &str| mine.iter().filter(|m| m["basis"] == json!(basis)).count();
    assert_eq!(answer["by_basis"]["identifier"], json!(count("identifier")));
    assert_eq!(answer["by_basis"]["name_only"], json!(count("name_only")));
    assert_eq!(answer["display_name"], "Test Author One");
    assert_eq!(answer["identifiers"]["orcid"]["value"], "0000-0002-1825-0097");
    assert_eq!(answer["field_hints"], json!(["graph learning"]));
    assert_eq!(answer["basis_warning"], Value::Null);
    assert!(answer["what_a_basis_means"]["name_only"].as_str().unwrap().len() > 40);
    assert!(answer.get("matches").is_none(), "totals only, no papers");

    let error = err(&mut session, "get_watch_profile", json!({"profile_id": 999}));
    assert_eq!(
        (error["error"].clone(), error["message"].clone()),
        (json!("not_found"), json!("That profile does not exist."))
    );
    refused(&fake, &mut session, "get_watch_profile", json!({}), "profile_id");
    refused(&fake, &mut session, "get_watch_profile", json!({"profile_id": true}), "profile_id");
}

#[test]
fn get_profile_matches_rows_carry_basis_author_and_evidence() {
    let (fake, mut session) = started();
    let answer = ok(&mut session, "get_profile_matches", json!({"profile_id": 5, "limit": 2, "offset": 2}));
    assert_eq!(sent(&fake), vec![get("/api/profiles/5/matches", &[("limit", "2"), ("offset", "2")])]);
    assert_eq!(ids(&answer["matches"]), vec![806, 810]);
    let first = &answer["matches"][0];
    assert_eq!(first["basis"], "name+affiliation");
    assert_eq!(first["matched_author"], "Test Author One");
    assert_eq!(
        first["evidence"],
        json!({"affiliation": "Synthetic Institute of Testing"}),
        "decoded from text"
    );
    assert_eq!(first["title"], "Synthetic graph attention with 50% fewer parameters & under_scores");
    assert_eq!((first["source"].clone(), first["date"].clone()), (json!("arxiv"), json!("2026-09-12")));
    assert!(first.get("authors").is_none(), "resmon's match rows carry no author list, so none is claimed");
    assert_eq!(answer["has_more"], true);
    assert!(answer["total"].as_i64().unwrap() > 4);
    assert_eq!(answer["by_basis"]["identifier"], 3);
    assert!(answer["what_a_basis_means"]["identifier"].is_string());

    fake.clear_requests();
    let all = ok(&mut session, "get_profile_matches", json!({"profile_id": 5}));
    assert_eq!(sent(&fake), vec![get("/api/profiles/5/matches", &[("limit", "25"), ("offset", "0")])]);
    let name_only = all["matches"].as_array().unwrap().iter().find(|m| m["basis"] == "name_only").unwrap();
    assert_eq!(name_only["evidence"], Value::Null);
    assert_eq!(all["has_more"], false);
    fake.clear_requests();
    ok(&mut session, "get_profile_matches", json!({"profile_id": 5, "limit": 500}));
    assert_eq!(sent(&fake)[0].2[0], ("limit".to_string(), "100".to_string()), "clamped, not refused");
}

#[test]
fn get_profile_matches_explains_the_bases_even_when_empty() {
    let (_fake, mut session) = started();
    let answer = ok(&mut session, "get_profile_matches", json!({"profile_id": 7}));
    assert_eq!((answer["matches"].clone(), answer["total"].clone()), (json!([]), json!(0)));
    assert_eq!(answer["by_basis"], json!({}));
    let glossary = answer["what_a_basis_means"].as_object().unwrap();
    let mut bases: Vec<&str> = glossary.keys().map(String::as_str).collect();
    bases.sort_unstable();
    assert_eq!(bases, vec!["identifier", "name+affiliation", "name_only"]);
}

#[test]
fn get_profile_matches_errors_and_refusals() {
    let (fake, mut session) = started();
    assert_eq!(err(&mut session, "get_profile_matches", json!({"profile_id": 999}))["error"], "not_found");
    refused(&fake, &mut session, "get_profile_matches", json!({"profile_id": 5, "limit": 0}), "limit");
    refused(&fake, &mut session, "get_profile_matches", json!({"profile_id": 5, "offset": -1}), "offset");
    refused(
        &fake,
        &mut session,
        "get_profile_matches",
        json!({"profile_id": 5, "basis": "identifier"}),
        "basis",
    );
    refused(&fake, &mut session, "get_profile_matches", json!({"limit": 5}), "profile_id");
    fake.override_response("GET", "/api/profiles/5/matches", 200, &json_header(), r#"{"matches": []}"#);
    assert_eq!(err(&mut session, "get_profile_matches", json!({"profile_id": 5}))["error"], "upstream_error");
    let idless =
        r#"{"matches": [{"basis": "name_only", "title": "T"}], "total": 1, "by_basis": {"name_only": 1}}"#;
    fake.override_response("GET", "/api/profiles/5/matches", 200, &json_header(), idless);
    assert_eq!(
        err(&mut session, "get_profile_matches", json!({"profile_id": 5}))["error"],
        "upstream_error",
        "a match without its document id is not a paper the caller can use"
    );
}

#[test]
fn profile_matches_use_the_shared_paper_row_and_its_author_cut() {
    let (fake, mut session) = started();
    // Should resmon send the paper's authors with a match, they are cut as
    // every other paper row's are.
    let row = json!({"document_id": 801, "basis": "name_only", "matched_author": "Person 2",
        "authors": "Person 1, Person 2, Person 3, Person 4, Person 5",
        "evidence": null, "first_seen_at": "2026-09-21 08:03:30", "title": "T", "source_repository": "arxiv",
        "doi": null, "url": null, "publication_date": "2026-09-20"});
    let body = json!({"matches": [row], "total": 1, "by_basis": {"name_only": 1}});
    fake.override_response("GET", "/api/profiles/5/matches", 200, &json_header(), &body.to_string());
    let answer = ok(&mut session, "get_profile_matches", json!({"profile_id": 5}));
    let first = &answer["matches"][0];
    assert_eq!(first["authors"], json!(["Person 1", "Person 2"]));
    assert_eq!(first["authors_total"], 5);
    let mut keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "authors",
            "authors_total",
            "basis",
            "date",
            "doi",
            "evidence",
            "first_seen_at",
            "id",
            "matched_author",
            "source",
            "title",
            "url"
        ]
    );
}

#[test]
fn profile_tools_answer_through_the_cli() {
    let fake = start_fake();
    let vars = env_for(&fake);
    let (code, answer, _) = cli_call("get_profile_matches", json!({"profile_id": 5, "limit": 1}), &vars);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["matches"][0]["basis"], "identifier");
    assert!(answer["what_a_basis_means"].is_object());
    let (_, answer, _) = cli_call("list_watch_profiles", json!({"kind": "institution"}), &vars);
    assert_eq!(ids(&answer["profiles"]), vec![7]);
    let (_, answer, _) = cli_call("get_watch_profile", json!({"profile_id": 6}), &vars);
    assert_eq!(
        answer["match_total"],
        json!(answer["by_basis"].as_object().unwrap().values().map(|v| v.as_i64().unwrap()).sum::<i64>())
    );
}
