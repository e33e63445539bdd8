//! Reading resmon's refusals into the contract's error codes: a status
//! other than 2xx (`status_error`), a route this release does not serve, a
//! redirect, a token the guard refused, and whose mistake a 400 or 422 is
//! (`judge_refusal`, contract-notes 17), including a value the tool offers
//! that this release does not know.
//!
//! It reads a `Reply` and nothing else: it never sends a request, never
//! touches the agent, the transport or the cached instance, and keeps no
//! state between calls. What it says comes from what resmon answered.

use serde_json::{Value, json};

use super::{Instance, Offered, Reply, route_template};
use crate::error::{Code, ToolError};

/// The guard's reason on a 401 (`detail.reason`), when it gave one.
pub(super) fn refusal_reason(reply: &Reply) -> Option<String> {
    reply.json().ok()?.pointer("/detail/reason")?.as_str().map(str::to_string)
}

/// A 401: said of resmon once it has confirmed, and of "something on
/// port N" while nothing on it has answered as resmon.
pub(super) fn token_refused(instance: &Instance, reply: &Reply) -> ToolError {
    let candidate = &instance.candidate;
    let reason = refusal_reason(reply);
    let why = match reason.as_deref() {
        Some("token_missing") => "it received no token",
        Some("token_invalid") => {
            "the token from the token file is not the one it holds now (a stale file from an \
             earlier run, or a token file that belongs to another instance)"
        }
        _ => "it gave no reason this server knows",
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{} refused this server's local API token: {why}. Restart resmon so \
             that it writes a fresh token file at {}, or set RESMON_STATE_DIR to the state \
             directory of the instance on that port (with RESMON_PORT or RESMON_PORT_FILE naming \
             that port, since a state directory alone names no instance), then try again.",
            if instance.confirmed {
                format!("resmon on port {}", candidate.port)
            } else {
                format!("Something on port {} ({} names that port)", candidate.port, candidate.named_by)
            },
            candidate.token_path.display()
        ),
    )
    .with_detail("reason", json!(reason))
    .with_detail("port", json!(candidate.port))
    .with_detail("token_file", json!(candidate.token_path.display().to_string()))
    .with_top_level("tried", json!([candidate.base_url()]))
}

/// Passes a 2xx reply; maps anything else to the contract's codes.
pub(crate) fn success(reply: &Reply) -> Result<(), ToolError> {
    if reply.is_success() { Ok(()) } else { Err(status_error(reply)) }
}

/// The web framework's own 404 (`{"detail": "Not Found"}`), which resmon
/// answers for a path it has no route for; its own 404s carry a sentence
/// about the record (contract-notes 16).
pub(crate) fn is_missing_route(reply: &Reply) -> bool {
    if reply.status == 405 {
        return true;
    }
    reply.status == 404
        && reply.json().ok().is_some_and(|body| {
            body.as_object().is_some_and(|object| object.len() == 1)
                && body.get("detail").and_then(Value::as_str) == Some("Not Found")
        })
}

fn release_name(version: Option<&str>) -> String {
    match version {
        Some(version) => format!("resmon {version}"),
        None => "This resmon (it did not report its release)".to_string(),
    }
}

/// 404 → not_found, unless the framework answered for a route this resmon
/// lacks; 400/422 → whose mistake it was (contract-notes 17); 409/429 →
/// conflict; 5xx and 3xx → upstream_error; other 4xx → internal_error.
/// The message is resmon's own when it gave a sentence.
pub(crate) fn status_error(reply: &Reply) -> ToolError {
    if is_missing_route(reply) {
        return missing_route(reply);
    }
    let status = reply.status;
    let (code, fallback) = match status {
        404 => (Code::NotFound, "resmon has no such record."),
        400 | 422 => (Code::InvalidArgument, "resmon refused the request's arguments."),
        409 | 429 => (Code::Conflict, "resmon cannot do that right now because of its current state."),
        300..=399 => return redirected(reply),
        500..=599 => (Code::UpstreamError, "resmon hit an internal error while answering."),
        _ => (
            Code::InternalError,
            "resmon refused a request this server built; this is a bug in resmon-mcp or a \
             version mismatch with the app.",
        ),
    };
    let body = if is_json(reply) { reply.json().ok() } else { None };
    let detail = body.as_ref().and_then(|body| body.get("detail"));
    let sentence = match detail {
        Some(Value::String(sentence)) if !sentence.trim().is_empty() => Some(sentence.clone()),
        _ => None,
    };
    let mut error = ToolError::new(code, sentence.clone().unwrap_or_else(|| fallback.to_string()))
        .with_detail("status", json!(status))
        .with_detail("route", json!(reply.route));
    let mut problem_fields = Vec::new();
    match detail {
        Some(Value::Array(problems)) => {
            problem_fields = problems.iter().filter_map(problem_field).collect();
            let problems: Vec<Value> = problems
                .iter()
                .map(|problem| json!({"loc": problem.get("loc"), "msg": problem.get("msg")}))
                .collect();
            error = error.with_detail("problems", Value::Array(problems));
        }
        Some(Value::Object(object)) => {
            for key in ["reason", "code", "message"] {
                if let Some(value) = object.get(key).filter(|value| value.is_string()) {
                    error = error.with_detail(key, value.clone());
                }
            }
        }
        _ => (),
    }
    if matches!(status, 400 | 422) {
        return judge_refusal(reply, error, &problem_fields, sentence.as_deref());
    }
    error
}

/// A 3xx: neither acceptance nor refusal. Said as what came back (the
/// status, and the path its `Location` names, never a host or a query),
/// with resmon's sentence when it gave one, and never followed. A write may
/// have been carried out before the redirect (a 303 after one usually says
/// it was), so it carries `outcome_unknown` and asks for a check first
/// (contract-notes 26).
fn redirected(reply: &Reply) -> ToolError {
    let status = reply.status;
    let location = reply.header("location").and_then(location_path);
    let to = location.as_deref().map(|path| format!(" to {path}")).unwrap_or_default();
    let said = if is_json(reply) { reply.json().ok() } else { None }
        .and_then(|body| body.get("detail").and_then(Value::as_str).map(str::trim).map(str::to_string))
        .filter(|sentence| !sentence.is_empty())
        .map(|sentence| format!(" (resmon said: {sentence})"))
        .unwrap_or_default();
    let write = !reply.route.starts_with("GET ");
    let next = if !write {
        "so nothing was read."
    } else if status == 303 {
        "so its answer was not read. This was a write, and a 303 after a write usually means it was \
         done: check with the matching read tool (or in the app) before calling again."
    } else {
        "so its answer was not read. This was a write, and resmon may have carried it out before \
         redirecting: check with the matching read tool (or in the app) before calling again."
    };
    let mut error = ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon answered {} with a redirect ({status}{to}){said}. This server does not follow \
             redirects, {next}",
            reply.route
        ),
    )
    .with_detail("status", json!(status))
    .with_detail("route", json!(reply.route))
    .with_detail("redirect", json!(true));
    if let Some(path) = location {
        error = error.with_detail("location", json!(path));
    }
    if write {
        error = error.with_detail("outcome_unknown", json!(true));
    }
    error
}

/// The path a `Location` value names, without scheme, host, port, query or
/// fragment (the address may be another host's, and a query may carry
/// anything), cut to 200 characters of printable ASCII.
fn location_path(value: &str) -> Option<String> {
    let value = value.trim();
    let scheme_end = value.find("://").filter(|at| {
        *at > 0 && value[..*at].bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    let after_host = |rest: &str| rest.find('/').map_or_else(|| "/".to_string(), |at| rest[at..].to_string());
    let path = match (scheme_end, value.strip_prefix("//")) {
        (Some(at), _) => after_host(&value[at + 3..]),
        (None, Some(rest)) => after_host(rest),
        (None, None) => value.to_string(),
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let path: String = path.chars().filter(|c| c.is_ascii_graphic()).take(200).collect();
    (!path.is_empty()).then_some(path)
}

/// The top-level field a 422 problem is about: the first name in its `loc`
/// after the part of the request it sits in (`body`, `query`, `path`).
fn problem_field(problem: &Value) -> Option<String> {
    let loc = problem.get("loc")?.as_array()?;
    loc.iter().skip(1).find_map(Value::as_str).map(str::to_string)
}

/// Routes whose request body is built from the caller's arguments alone, so
/// that resmon's 400 sentence about it is about what the caller asked for:
/// the contract has POST /api/routines answer a bad `entity` with a 400 that
/// this server surfaces as invalid_argument ("Watch profiles and the basis
/// of a match"), and the other creates and the settings write are alike.
const CALLER_BODY_ROUTES: [&str; 5] = [
    "POST /api/routines",
    "POST /api/profiles",
    "POST /api/search/sweep",
    "POST /api/export/references",
    "PUT /api/settings/",
];

/// contract-notes 17: a refusal is the caller's mistake only with evidence.
/// A 422 whose problems name only fields the caller supplied, or a 400 whose
/// sentence names one (or answers a route whose body is all the caller's),
/// is `invalid_argument`. A refusal naming a field this server chose is
/// `upstream_error` naming it. Anything else is `upstream_error` too.
fn judge_refusal(reply: &Reply, error: ToolError, fields: &[String], sentence: Option<&str>) -> ToolError {
    if let Some(offer) = refused_offer(reply, sentence) {
        return offer_refused(reply, error, offer, sentence);
    }
    let is_caller =
        |name: &str| reply.caller_supplied.iter().any(|field| field == name) || is_path_field(name);
    let is_chosen = |name: &str| reply.server_chosen.iter().any(|field| field == name);
    let (named_choices, named_callers): (Vec<String>, Vec<String>) = if fields.is_empty() {
        let words = sentence.map(words_of).unwrap_or_default();
        let named = |list: &[String]| -> Vec<String> {
            list.iter().filter(|field| words.contains(&field.to_ascii_lowercase())).cloned().collect()
        };
        (named(&reply.server_chosen), named(&reply.caller_supplied))
    } else {
        (
            fields.iter().filter(|field| is_chosen(field)).cloned().collect(),
            fields.iter().filter(|field| is_caller(field)).cloned().collect(),
        )
    };
    let callers_body = sentence.is_some()
        && fields.is_empty()
        && CALLER_BODY_ROUTES.iter().any(|route| reply.route.starts_with(route));
    let only_callers = if fields.is_empty() {
        named_choices.is_empty() && (!named_callers.is_empty() || callers_body)
    } else {
        fields.iter().all(|field| is_caller(field))
    };
    if only_callers {
        return error;
    }
    let version = reply.backend_version.as_deref();
    let route = route_template(&reply.route);
    let said = sentence.map(|sentence| format!(": {sentence}")).unwrap_or_default();
    let quoted =
        |names: &[String]| names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
    let message = if named_choices.is_empty() {
        format!(
            "{} refused {route} ({}{said}), and nothing shows that an argument of this call \
             was at fault. It may be older or newer than contract 1.0 expects; check that resmon \
             and this server are matching releases.",
            release_name(version),
            reply.status
        )
    } else if named_callers.is_empty() {
        format!(
            "{} refused {} {} that this server chose for {route} ({}{said}). It is probably older \
             or newer than contract 1.0 expects; changing this call's arguments will not help, \
             but matching releases of resmon and this server will.",
            release_name(version),
            if named_choices.len() == 1 { "the parameter" } else { "the parameters" },
            quoted(&named_choices),
            reply.status
        )
    } else {
        format!(
            "{} refused {} that this server chose for {route}, and also this call's {} ({}{said}). \
             Correcting the call's own values may not be enough: the release is probably older or \
             newer than contract 1.0 expects.",
            release_name(version),
            quoted(&named_choices),
            quoted(&named_callers),
            reply.status
        )
    };
    let mut out = ToolError::new(Code::UpstreamError, message);
    out.detail = error.detail;
    out.detail.insert("route".into(), json!(route));
    if !named_choices.is_empty() {
        out.detail.insert("parameters".into(), json!(named_choices));
    }
    if !named_callers.is_empty() {
        out.detail.insert("arguments".into(), json!(named_callers));
    }
    out
}

/// Words with which a refusal says it does not know a value.
const UNKNOWN_WORDS: [&str; 6] =
    ["unknown", "unsupported", "unrecognized", "unrecognised", "invalid", "unavailable"];
/// Phrases that say the same in more than one word.
const UNKNOWN_PHRASES: [&str; 7] = [
    "not supported",
    "not recognized",
    "not recognised",
    "not available",
    "no such",
    "not one of",
    "must be one of",
];

/// Words with which a refusal says what it would accept instead
/// (`kind must be person or institution`, `expected one of: bibtex, ris`).
const LISTING_WORDS: [&str; 11] = [
    "must",
    "should",
    "expected",
    "expects",
    "allowed",
    "accepted",
    "accepts",
    "only",
    "either",
    "permitted",
    "one",
];

/// Whether a sentence says that something is unknown or unsupported.
fn says_unknown(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    let words = words_of(&lower);
    UNKNOWN_WORDS.iter().any(|word| words.iter().any(|w| w == word))
        || UNKNOWN_PHRASES.iter().any(|phrase| lower.contains(phrase))
}

/// The caller's offered value that resmon's 400 or 422 refused as one it
/// does not know (contract-notes 17). A 422 counts only when every problem
/// it lists is about an offered value's field and refuses that value (its
/// `input` is the value, its type says "not one of", or its sentence says
/// unknown); a 400 when its sentence says unknown and quotes the value (as
/// sent, or as the caller gave it), or names the value's field and no other
/// field of the caller's. A 400 sentence without such a word counts when it
/// names the value's field (and no other of the caller's) and either the
/// value itself or other values the tool offers for it, the ones it would
/// accept (`kind must be person or institution`). Anything else is left to
/// the rest of `judge_refusal`.
fn refused_offer<'a>(reply: &'a Reply, sentence: Option<&str>) -> Option<&'a Offered> {
    if reply.offered.is_empty() {
        return None;
    }
    let body = if is_json(reply) { reply.json().ok() } else { None };
    if let Some(Value::Array(problems)) = body.as_ref().and_then(|body| body.get("detail")) {
        let mut found = None;
        for problem in problems {
            let field = problem_field(problem)?;
            let offer = reply.offered.iter().find(|offer| offer.fields.contains(&field))?;
            let input = problem.get("input").and_then(Value::as_str);
            let kind = problem.get("type").and_then(Value::as_str).unwrap_or_default();
            let msg = problem.get("msg").and_then(Value::as_str).unwrap_or_default();
            let refuses_value = input
                .is_some_and(|input| input == offer.value || offer.sent.iter().any(|s| s == input))
                || matches!(kind, "enum" | "literal_error")
                || says_unknown(msg);
            if !refuses_value {
                return None;
            }
            found.get_or_insert(offer);
        }
        return found;
    }
    let sentence = sentence?;
    let unknown = says_unknown(sentence);
    let words = words_of(sentence);
    let names = |text: &str| words.iter().any(|word| word.eq_ignore_ascii_case(text));
    let named_callers: Vec<&String> = reply.caller_supplied.iter().filter(|field| names(field)).collect();
    reply.offered.iter().find(|offer| {
        let quoted =
            |text: &str| ["'", "\"", "`"].iter().any(|q| sentence.contains(&format!("{q}{text}{q}")));
        let value_named = quoted(&offer.value) || offer.sent.iter().any(|sent| quoted(sent));
        // `caller_supplied` holds only the request's own fields, so a field
        // named here was sent, not carried in the path.
        let field_named =
            !named_callers.is_empty() && named_callers.iter().all(|field| offer.fields.contains(field));
        if unknown {
            return value_named || field_named;
        }
        // Without a word saying so, the field must be named together with
        // the value, or with what it accepts instead.
        let value_said = value_named || names(&offer.value) || offer.sent.iter().any(|sent| names(sent));
        let lists_choices = offer.choices.iter().any(|choice| names(choice) || quoted(choice))
            && LISTING_WORDS.iter().any(|word| names(word));
        field_named && (value_said || lists_choices)
    })
}

/// contract-notes 17: the caller chose a value the tool offers and this
/// release of resmon does not know it.
fn offer_refused(reply: &Reply, error: ToolError, offer: &Offered, sentence: Option<&str>) -> ToolError {
    let route = route_template(&reply.route);
    let said = sentence.map(|sentence| format!(": {sentence}")).unwrap_or_default();
    let message = format!(
        "{} does not accept `{}` for `{}` ({} on {route}{said}), although this tool offers that \
         value: the release is probably older or newer than contract 1.0 expects, and the call \
         itself is not at fault. Another of the tool's values may work; a resmon release that \
         matches this server should accept this one.",
        release_name(reply.backend_version.as_deref()),
        offer.value,
        offer.argument,
        reply.status
    );
    let mut out = ToolError::new(Code::UpstreamError, message);
    out.detail = error.detail;
    out.detail.insert("route".into(), json!(route));
    out.detail.insert("argument".into(), json!(offer.argument));
    out.detail.insert("value".into(), json!(offer.value));
    out
}

/// Path parameters carry the ids the caller named (`routine_id`, `exec_id`).
fn is_path_field(field: &str) -> bool {
    field == "id" || field.ends_with("_id")
}

/// The lowercase words of a sentence, with `_` kept inside words so that
/// `include_ids` is one word.
fn words_of(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// contract-notes 16: what was seen (the framework's 404 or a 405 for this
/// route), and the likely cause only as likely.
fn missing_route(reply: &Reply) -> ToolError {
    let route = route_template(&reply.route);
    ToolError::new(
        Code::UpstreamError,
        format!(
            "{} does not serve {route}; it is probably older or newer than contract 1.0 \
             expects. Updating resmon (or this server) to matching releases should make what it \
             serves available.",
            release_name(reply.backend_version.as_deref())
        ),
    )
    .with_detail("status", json!(reply.status))
    .with_detail("route", json!(route))
    .with_detail("missing_route", json!(true))
}

fn is_json(reply: &Reply) -> bool {
    reply.header("content-type").is_none_or(|content_type| content_type.contains("json"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::reply;

    /// A refusal of the export route, whose `format` the caller chose from
    /// the values the tool offers.
    fn export_refusal(status: u16, body: &str, version: Option<&str>) -> Reply {
        let mut reply = reply(status, "application/json", body);
        reply.route = "GET /api/executions/115/references".into();
        reply.backend_version = version.map(str::to_string);
        reply.server_chosen = Vec::new();
        reply.caller_supplied = vec!["format".into()];
        reply.offered = vec![Offered {
            argument: "format".into(),
            value: "json".into(),
            fields: vec!["format".into()],
            sent: vec!["json".into()],
            choices: vec!["bibtex".into(), "ris".into(), "csv".into()],
        }];
        reply
    }

    #[test]
    fn a_refused_value_the_tool_offers_is_the_releases_limitation() {
        let unknown = r#"{"detail": "Unknown export format 'json'"}"#;
        let error = status_error(&export_refusal(400, unknown, Some("1.6.1")));
        assert_eq!(error.code, Code::UpstreamError, "{}", error.message);
        assert!(
            error.message.starts_with("resmon 1.6.1 does not accept `json` for `format`"),
            "{}",
            error.message
        );
        assert!(error.message.contains("Unknown export format 'json'"), "{}", error.message);
        assert_eq!(error.detail["value"], json!("json"));
        assert_eq!(error.detail["argument"], json!("format"));
        assert_eq!(error.detail["route"], json!("GET /api/executions/{id}/references"));
        // No release reported: said as "this resmon".
        let unnamed = status_error(&export_refusal(400, unknown, None));
        assert!(unnamed.message.starts_with("This resmon (it did not report its release) does not accept"));
        // The parameter named as unsupported, without the value.
        let param = status_error(&export_refusal(400, r#"{"detail": "Unsupported format."}"#, None));
        assert_eq!(param.code, Code::UpstreamError, "{}", param.message);
        // A 422 whose only problem is the offered value.
        let validation = r#"{"detail": [{"type": "enum", "loc": ["query", "format"],
            "msg": "Input should be 'bibtex', 'ris' or 'csv'", "input": "json"}]}"#;
        assert_eq!(status_error(&export_refusal(422, validation, None)).code, Code::UpstreamError);
    }

    /// A refusal of `kind: group` as list_watch_profiles sends it.
    fn kind_refusal(body: &str) -> Reply {
        let mut reply = reply(400, "application/json", body);
        reply.route = "GET /api/profiles".into();
        reply.backend_version = Some("2.1.0".into());
        reply.server_chosen = Vec::new();
        reply.caller_supplied = vec!["kind".into()];
        reply.offered = vec![Offered {
            argument: "kind".into(),
            value: "group".into(),
            fields: vec!["kind".into()],
            sent: vec!["group".into()],
            choices: vec!["person".into(), "institution".into()],
        }];
        reply
    }

    /// contract-notes 17: a 400 naming the field with the offered value, or
    /// with the values it would take instead, refuses that value even when
    /// no word says "unknown".
    #[test]
    fn a_refusal_listing_what_it_accepts_instead_of_an_offered_value_is_the_releases() {
        for body in [
            r#"{"detail": "kind must be person or institution"}"#,
            r#"{"detail": "Expected kind to be one of: 'person', 'institution'."}"#,
            r#"{"detail": "kind 'group' is not accepted here"}"#,
            r#"{"detail": "Profiles of kind group cannot be listed."}"#,
        ] {
            let error = status_error(&kind_refusal(body));
            assert_eq!(error.code, Code::UpstreamError, "{body}: {}", error.message);
            assert!(
                error.message.starts_with("resmon 2.1.0 does not accept `group` for `kind`"),
                "{body}: {}",
                error.message
            );
            assert_eq!(error.detail["value"], json!("group"));
            assert_eq!(error.detail["argument"], json!("kind"));
        }
        // The same through an export whose format the caller chose.
        let listed = r#"{"detail": "format must be bibtex, ris or csv"}"#;
        assert_eq!(status_error(&export_refusal(400, listed, None)).code, Code::UpstreamError);
    }

    #[test]
    fn a_refusal_of_the_field_that_names_neither_value_nor_choices_stays_the_callers() {
        for body in [
            r#"{"detail": "kind must not be empty"}"#,
            r#"{"detail": "kind person needs an identifier"}"#,
            r#"{"detail": "kind must be person or institution, and limit at most 50"}"#,
        ] {
            let mut reply = kind_refusal(body);
            reply.caller_supplied.push("limit".into());
            let error = status_error(&reply);
            assert_eq!(error.code, Code::InvalidArgument, "{body}: {}", error.message);
        }
    }

    #[test]
    fn other_refusals_of_the_callers_fields_stay_the_callers() {
        // A sentence about the field that does not say the value is unknown.
        let other = status_error(&export_refusal(400, r#"{"detail": "The format is too long."}"#, None));
        assert_eq!(other.code, Code::InvalidArgument, "{}", other.message);
        // A 422 about the offered value and another of the caller's fields:
        // the caller has something to correct.
        let mut mixed = export_refusal(
            422,
            r#"{"detail": [{"type": "enum", "loc": ["query", "format"], "msg": "bad", "input": "json"},
                {"type": "too_long", "loc": ["query", "query"], "msg": "too long"}]}"#,
            None,
        );
        mixed.caller_supplied.push("query".into());
        assert_eq!(status_error(&mixed).code, Code::InvalidArgument);
        // Without an offered value, resmon naming the caller's field is the caller's.
        let mut plain = export_refusal(400, r#"{"detail": "Unknown export format 'json'"}"#, None);
        plain.offered.clear();
        assert_eq!(status_error(&plain).code, Code::InvalidArgument);
        // An offered value carried in the path, mentioned in passing but
        // not quoted as the thing refused.
        let mut group =
            reply(400, "application/json", r#"{"detail": "Invalid value for ai_model in the ai group."}"#);
        group.route = "PUT /api/settings/ai".into();
        group.caller_supplied = vec!["ai_model".into()];
        group.offered = vec![Offered {
            argument: "group".into(),
            value: "ai".into(),
            fields: vec!["group".into()],
            sent: vec![],
            choices: vec!["search".into(), "email".into()],
        }];
        assert_eq!(status_error(&group).code, Code::InvalidArgument);
        // A create's entity refusal names a field with no offered value.
        let mut entity = reply(400, "application/json", r#"{"detail": "Unknown watch profile 99."}"#);
        entity.route = "POST /api/routines".into();
        entity.caller_supplied = vec!["entity".into(), "parameters".into()];
        assert_eq!(status_error(&entity).code, Code::InvalidArgument);
    }

    #[test]
    fn a_redirect_says_what_came_back_and_whether_a_write_may_be_done() {
        let redirect = |status: u16, route: &str, location: Option<&str>, body: &str| {
            let mut reply = reply(status, "application/json", body);
            reply.route = route.into();
            if let Some(location) = location {
                reply.headers.push(("Location".into(), location.into()));
            }
            status_error(&reply)
        };
        let done =
            redirect(303, "POST /api/routines", Some("http://10.1.2.3:9999/api/routines/9?token=x"), "");
        assert_eq!(done.code, Code::UpstreamError);
        assert!(
            done.message
                .starts_with("resmon answered POST /api/routines with a redirect (303 to /api/routines/9)")
        );
        assert!(done.message.contains("does not follow redirects"), "{}", done.message);
        assert!(done.message.contains("usually means it was done"), "{}", done.message);
        assert!(!done.message.contains("10.1.2.3") && !done.message.contains("token"), "{}", done.message);
        assert_eq!(done.detail["location"], json!("/api/routines/9"));
        assert_eq!(done.detail["outcome_unknown"], json!(true));
        // resmon's own sentence is kept, and it is still said to be a redirect.
        let moved = redirect(307, "POST /api/routines/7/activate", None, r#"{"detail": "moved"}"#);
        assert!(moved.message.contains("with a redirect (307) (resmon said: moved)"), "{}", moved.message);
        assert!(moved.message.contains("may have carried it out"), "{}", moved.message);
        // A read changes nothing: no caveat, no outcome_unknown.
        let read = redirect(301, "GET /api/routines/7", Some("/api/v2/routines/7"), "");
        assert!(read.message.contains("(301 to /api/v2/routines/7)"), "{}", read.message);
        assert!(read.detail.get("outcome_unknown").is_none());
        assert!(!read.message.contains("carried"), "{}", read.message);
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
            let error =
                status_error(&reply(status, "application/json", r#"{"detail": "Routine not found"}"#));
            assert_eq!(error.code, code, "{status}");
            assert!(error.message.contains("Routine not found"), "{}", error.message);
            assert_eq!(error.detail["status"], json!(status));
        }
    }

    #[test]
    fn the_frameworks_404_and_a_405_name_a_missing_route() {
        for (status, body) in
            [(404, r#"{"detail": "Not Found"}"#), (405, r#"{"detail": "Method Not Allowed"}"#)]
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
        // A 400 sentence that names nobody's field, on a route whose body is
        // the caller's own, is about the caller's values; on another route
        // nothing shows whose it is.
        let mut created = reply(400, "application/json", r#"{"detail": "That profile does not exist."}"#);
        created.route = "POST /api/routines".into();
        assert_eq!(status_error(&created).code, Code::InvalidArgument);
        let unclear =
            status_error(&reply(400, "application/json", r#"{"detail": "Search is unavailable."}"#));
        assert_eq!(unclear.code, Code::UpstreamError);
        // A sentence naming the caller's field is the caller's.
        let named = status_error(&reply(400, "application/json", r#"{"detail": "The query is too long."}"#));
        assert_eq!(named.code, Code::InvalidArgument);
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
        let plain = status_error(&reply(500, "text/plain", "Internal Server Error"));
        assert!(!plain.to_json().to_string().contains("Internal Server Error"));
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
}
