//! refusal.rs's unit tests: how statuses and refusal sentences map to the
//! contract's codes.

use super::unsettled::location_path;
use super::*;
use crate::backend::{CallerField, reply};

#[test]
fn a_redirect_says_what_came_back_and_whether_a_write_may_be_done() {
    let redirect = |status: u16, route: &str, location: Option<&str>, body: &str| {
        let mut reply = reply(status, "application/json", body);
        reply.route = route.into();
        // As the exchange marks it: a write tool's POST (every POST here).
        reply.write = (!route.starts_with("GET ")).then(crate::backend::WriteCheck::unnamed);
        if let Some(location) = location {
            reply.headers.push(("Location".into(), location.into()));
        }
        status_error(&reply)
    };
    let done = redirect(303, "POST /api/routines", Some("http://10.1.2.3:9999/api/routines/9?token=x"), "");
    assert_eq!(done.code, Code::UpstreamError);
    assert!(
        done.message.starts_with(
            "resmon may have carried out this write: it answered POST /api/routines with a redirect (303 \
             to /api/routines/9)"
        ),
        "{}",
        done.message
    );
    assert!(done.message.contains("does not follow"), "{}", done.message);
    assert!(done.message.contains("usually means it was done"), "{}", done.message);
    assert!(!done.message.contains("10.1.2.3") && !done.message.contains("token"), "{}", done.message);
    assert_eq!(done.detail["location"], json!("/api/routines/9"));
    assert_eq!(done.detail["outcome_unknown"], json!(true));
    // resmon's own sentence is kept, and it is still said to be a redirect.
    let moved = redirect(307, "POST /api/routines/7/activate", None, r#"{"detail": "moved"}"#);
    assert!(moved.message.contains("with a redirect (307) (resmon said: moved)"), "{}", moved.message);
    assert!(moved.message.starts_with("resmon may have carried out this write"), "{}", moved.message);
    // A read changes nothing: no caveat, no outcome_unknown.
    let read = redirect(301, "GET /api/routines/7", Some("/api/v2/routines/7"), "");
    assert!(read.message.contains("(301 to /api/v2/routines/7)"), "{}", read.message);
    assert!(read.detail.get("outcome_unknown").is_none());
    assert!(!read.message.contains("carried"), "{}", read.message);
    // Nor does a read's POST (the corpus search): the exchange marks it no write.
    let mut search = reply(302, "application/json", "");
    search.route = "POST /api/explorer/search".into();
    let search = status_error(&search);
    assert!(search.message.ends_with("so nothing was read."), "{}", search.message);
    assert!(search.detail.get("outcome_unknown").is_none());
}

#[test]
fn a_location_is_shown_as_its_path_alone() {
    assert_eq!(location_path("/api/routines/9"), Some("/api/routines/9".into()));
    assert_eq!(location_path("http://evil.example:80/a/b?x=1#f"), Some("/a/b".into()));
    assert_eq!(location_path("https://evil.example"), Some("/".into()));
    assert_eq!(location_path("//evil.example/p"), Some("/p".into()));
    assert_eq!(location_path("  "), None);
    assert_eq!(location_path("?token=abc"), None);
    assert_eq!(location_path("/a\u{7}b c"), Some("/abc".into()));
}

#[test]
fn statuses_map_to_the_contract_codes() {
    let cases = [
        (404, Code::NotFound),
        // A refusal that names nobody's field is not blamed on the caller.
        (400, Code::UpstreamError),
        (409, Code::Conflict),
        (429, Code::Conflict),
        (500, Code::UpstreamError),
        (503, Code::UpstreamError),
        (302, Code::UpstreamError),
        (403, Code::InternalError),
        (418, Code::InternalError),
    ];
    for (status, code) in cases {
        let error = status_error(&reply(status, "application/json", r#"{"detail": "Routine not found"}"#));
        assert_eq!(error.code, code, "{status}");
        assert!(error.message.contains("Routine not found"), "{}", error.message);
        assert_eq!(error.detail["status"], json!(status));
    }
}

#[test]
fn the_frameworks_404_and_a_405_name_a_missing_route() {
    for (status, body) in [(404, r#"{"detail": "Not Found"}"#), (405, r#"{"detail": "Method Not Allowed"}"#)]
    {
        let error = status_error(&reply(status, "application/json", body));
        assert_eq!(error.code, Code::UpstreamError, "{status}");
        assert_eq!(error.detail["route"], json!("GET /api/routines/{id}"));
        assert!(
            error.message.starts_with("resmon 2.3.0 does not serve GET /api/routines/{id}"),
            "{}",
            error.message
        );
        assert!(error.message.contains("probably older or newer"), "{}", error.message);
    }
    // resmon's own 404 about the record stays not_found.
    let record = status_error(&reply(404, "application/json", r#"{"detail": "Routine not found"}"#));
    assert_eq!(record.code, Code::NotFound);
}

#[test]
fn a_refusal_is_blamed_on_the_caller_only_with_evidence() {
    // A 400 naming a parameter this server chose.
    let chosen =
        status_error(&reply(400, "application/json", r#"{"detail": "Unknown export format 'json'"}"#));
    assert_eq!(chosen.code, Code::UpstreamError);
    assert_eq!(chosen.detail["parameters"], json!(["format"]));
    assert!(chosen.message.contains("will not help"), "{}", chosen.message);
    // A 422 whose loc names a field this server chose, and one naming the caller's.
    let ours = status_error(&reply(
        422,
        "application/json",
        r#"{"detail": [{"loc": ["query", "format"], "msg": "bad"}]}"#,
    ));
    assert_eq!(ours.code, Code::UpstreamError);
    let theirs = status_error(&reply(
        422,
        "application/json",
        r#"{"detail": [{"loc": ["body", "query"], "msg": "too long"}]}"#,
    ));
    assert_eq!(theirs.code, Code::InvalidArgument);
    // A 422 naming a field nobody can place: not the caller's fault.
    let unknown = status_error(&reply(
        422,
        "application/json",
        r#"{"detail": [{"loc": ["body", "mystery"], "msg": "bad"}]}"#,
    ));
    assert_eq!(unknown.code, Code::UpstreamError);
    // A 400 sentence that names nobody's field and quotes none of the
    // call's values shows nothing of whose it is, whatever the route: a
    // create's body carries fields this server chose too.
    let mut created = reply(400, "application/json", r#"{"detail": "That profile does not exist."}"#);
    created.route = "POST /api/routines".into();
    assert_eq!(status_error(&created).code, Code::UpstreamError);
    let unclear = status_error(&reply(400, "application/json", r#"{"detail": "Search is unavailable."}"#));
    assert_eq!(unclear.code, Code::UpstreamError);
    // The same sentence about the profile the call's entity names is the
    // caller's: an id is spoken of as what it is the id of.
    created.caller_supplied = vec![
        "parameters.entity".into(),
        "parameters.entity.profile_id".into(),
        "parameters.entity.mode".into(),
    ];
    assert_eq!(status_error(&created).code, Code::InvalidArgument);
    // So is a sentence that quotes one of the call's own values, unless a
    // field this server chose sent it too.
    let mut quoted = reply(400, "application/json", r#"{"detail": "Source 'nowhere' is not configured."}"#);
    quoted.route = "POST /api/search/sweep".into();
    quoted.caller_supplied =
        vec![CallerField { path: "repositories".into(), values: vec!["nowhere".into()] }];
    assert_eq!(status_error(&quoted).code, Code::InvalidArgument);
    // A bare number is no quotation: the sentence about the profile counts
    // because it names the profile the call's entity gives.
    let mut numbered = reply(400, "application/json", r#"{"detail": "No watch profile with id 999."}"#);
    numbered.caller_supplied =
        vec![CallerField { path: "parameters.entity".into(), values: vec!["999".into()] }];
    assert_eq!(status_error(&numbered).code, Code::UpstreamError, "999 as a word is no evidence");
    numbered
        .caller_supplied
        .push(CallerField { path: "parameters.entity.profile_id".into(), values: vec!["999".into()] });
    assert_eq!(status_error(&numbered).code, Code::InvalidArgument);
    // A single-word name counts only written as a key or with its path.
    let mut mode = reply(400, "application/json", r#"{"detail": "The database is in read-only mode"}"#);
    mode.caller_supplied =
        vec![CallerField { path: "parameters.entity.mode".into(), values: vec!["x".into()] }];
    assert_eq!(status_error(&mode).code, Code::UpstreamError);
    for said in
        ["'mode' must be set", "mode: must be set", "entity mode must be set", "entity.mode must be set"]
    {
        mode.bytes = json!({ "detail": said }).to_string().into_bytes();
        assert_eq!(status_error(&mode).code, Code::InvalidArgument, "{said}");
    }
    // A field named as the route's resource is named by no sentence about it.
    let mut locked = reply(400, "application/json", r#"{"detail": "Settings are locked."}"#);
    locked.route = "PUT /api/settings/ai".into();
    locked.caller_supplied = vec!["settings".into(), "settings.ai_model".into()];
    assert_eq!(status_error(&locked).code, Code::UpstreamError);
    let mut key = reply(400, "application/json", r#"{"detail": "ai_model must name an installed model."}"#);
    key.route = "PUT /api/settings/ai".into();
    key.caller_supplied = locked.caller_supplied.clone();
    assert_eq!(status_error(&key).code, Code::InvalidArgument);
    // A sentence naming the caller's field as a key is the caller's; the
    // single word in passing is no evidence (contract-notes 17).
    let named = status_error(&reply(400, "application/json", r#"{"detail": "'query' is too long."}"#));
    assert_eq!(named.code, Code::InvalidArgument);
    let passing = status_error(&reply(400, "application/json", r#"{"detail": "The query is too long."}"#));
    assert_eq!(passing.code, Code::UpstreamError);
    // A 422 naming both: not blamed on the caller alone, and says both.
    let mixed = status_error(&reply(
        422,
        "application/json",
        r#"{"detail": [{"loc": ["query", "format"], "msg": "bad"}, {"loc": ["body", "query"], "msg": "bad"}]}"#,
    ));
    assert_eq!(mixed.code, Code::UpstreamError);
    assert!(mixed.message.contains("and also this call's `query`"), "{}", mixed.message);
}

#[test]
fn messages_are_resmons_sentence_or_a_fixed_one_never_the_body() {
    let html = status_error(&reply(500, "text/html", "<html>Traceback (most recent call last)</html>"));
    assert_eq!(html.code, Code::UpstreamError);
    assert!(!html.message.contains("Traceback") && !html.to_json().to_string().contains("html"));
    let plain = status_error(&reply(500, "text/plain", "boom at /home/someone/resmon.py"));
    assert!(!plain.to_json().to_string().contains("boom"), "{}", plain.message);
    let validation = status_error(&reply(
        422,
        "application/json",
        r#"{"detail": [{"type": "int_parsing", "loc": ["path", "routine_id"], "msg": "Input should be a valid integer", "input": "abc"}]}"#,
    ));
    assert_eq!(validation.code, Code::InvalidArgument);
    assert_eq!(validation.detail["problems"][0]["loc"], json!(["path", "routine_id"]));
    let guard = status_error(&reply(
        403,
        "application/json",
        r#"{"detail": {"reason": "host_refused", "message": "resmon answers only requests addressed to 127.0.0.1."}}"#,
    ));
    assert_eq!(guard.detail["reason"], "host_refused");
    assert!(!guard.message.is_empty());
}

/// A 5xx is said by its status line and route; resmon's own error (JSON
/// with a `detail`) is quoted; nothing is called an internal error that no
/// body called one.
#[test]
fn a_server_error_is_said_as_its_status_line_and_route() {
    for (status, line) in [
        (500, "500 Internal Server Error"),
        (502, "502 Bad Gateway"),
        (503, "503 Service Unavailable"),
        (504, "504 Gateway Timeout"),
    ] {
        let error = status_error(&reply(status, "text/plain", "upstream trouble"));
        assert_eq!(error.code, Code::UpstreamError);
        assert!(
            error
                .message
                .starts_with(&format!("resmon answered GET /api/routines/7 with {line}, so nothing")),
            "{}",
            error.message
        );
        assert!(!error.message.contains("internal error"), "{}", error.message);
        assert!(error.detail.get("outcome_unknown").is_none(), "a read changes nothing");
    }
    let own = status_error(&reply(500, "application/json", r#"{"detail": "database is locked"}"#));
    assert!(
        own.message.starts_with(
            "resmon answered GET /api/routines/7 with 500 Internal Server Error and said \"database is locked\", so"
        ),
        "{}",
        own.message
    );
    // A write's 5xx: the outcome is not known, said first, with the read.
    let mut write = reply(503, "text/plain", "");
    write.route = "POST /api/routines".into();
    write.write = Some(crate::backend::WriteCheck {
        would_have: "created a routine".into(),
        check: "list_routines shows whether it did.".into(),
    });
    let write = status_error(&write);
    assert!(
        write.message.starts_with(
            "resmon may have created a routine: it answered POST /api/routines with 503 Service Unavailable, \
             which does not say whether it was done. list_routines shows whether it did."
        ),
        "{}",
        write.message
    );
    assert_eq!(write.detail["outcome_unknown"], json!(true));
}
