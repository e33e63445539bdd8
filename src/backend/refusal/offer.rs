//! A refusal of a value the caller chose from those the tool offers: when
//! resmon's 400 or 422 says it does not know that value, the release is at
//! fault and not the call (contract-notes 17).
//!
//! It reads the refusal's sentence or problems and the offered values the
//! `Reply` carries; it never decides anything else about a refusal (the
//! parent does) and touches nothing outside the reply it is given.

use serde_json::{Value, json};

use super::{is_json, last_name, problem_field, reason_clause, release_name, words_of};
use crate::backend::exchange::{Offered, Reply};
use crate::backend::route_template;
use crate::error::{Code, ToolError};

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
pub(super) fn refused_offer<'a>(reply: &'a Reply, sentence: Option<&str>) -> Option<&'a Offered> {
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
    let named_callers: Vec<&String> =
        reply.caller_supplied.iter().map(|field| &field.path).filter(|path| names(last_name(path))).collect();
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
pub(super) fn offer_refused(
    reply: &Reply,
    error: ToolError,
    offer: &Offered,
    sentence: Option<&str>,
) -> ToolError {
    let route = route_template(&reply.route);
    let said = reason_clause(sentence);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{CallerField, Offered, reply, status_error};
    use crate::error::Code;

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
            r#"{"detail": "kind: must not be empty"}"#,
            r#"{"detail": "'kind' person needs an identifier"}"#,
            r#"{"detail": "kind: must be person or institution, and limit: at most 50"}"#,
        ] {
            let mut reply = kind_refusal(body);
            reply.caller_supplied.push("limit".into());
            let error = status_error(&reply);
            assert_eq!(error.code, Code::InvalidArgument, "{body}: {}", error.message);
        }
        // The same single words in passing are no evidence against the
        // caller (contract-notes 17), and no refusal of the offered value.
        for body in [
            r#"{"detail": "kind must not be empty"}"#,
            r#"{"detail": "kind must be person or institution, and limit at most 50"}"#,
        ] {
            let mut reply = kind_refusal(body);
            reply.caller_supplied.push("limit".into());
            let error = status_error(&reply);
            assert_eq!(error.code, Code::UpstreamError, "{body}: {}", error.message);
            assert!(error.message.contains("cannot tell"), "{body}: {}", error.message);
        }
    }

    #[test]
    fn other_refusals_of_the_callers_fields_stay_the_callers() {
        // A sentence about the field that does not say the value is unknown.
        let other = status_error(&export_refusal(400, r#"{"detail": "`format` is too long."}"#, None));
        assert_eq!(other.code, Code::InvalidArgument, "{}", other.message);
        // The single word in passing is no evidence (contract-notes 17).
        let passing = status_error(&export_refusal(400, r#"{"detail": "The format is too long."}"#, None));
        assert_eq!(passing.code, Code::UpstreamError, "{}", passing.message);
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
        // Without an offered value, resmon quoting the caller's value is the
        // caller's (the single word `format` alone is no evidence).
        let mut plain = export_refusal(400, r#"{"detail": "Unknown export format 'json'"}"#, None);
        plain.offered.clear();
        plain.caller_supplied = vec![CallerField { path: "format".into(), values: vec!["json".into()] }];
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
        entity.caller_supplied = vec![
            CallerField { path: "parameters.entity".into(), values: vec!["99".into(), "new_papers".into()] },
            CallerField { path: "parameters.entity.profile_id".into(), values: vec!["99".into()] },
            CallerField { path: "parameters.entity.mode".into(), values: vec!["new_papers".into()] },
        ];
        assert_eq!(status_error(&entity).code, Code::InvalidArgument);
    }
}
