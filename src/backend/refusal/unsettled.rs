//! The statuses that say neither that resmon did what was asked nor that it
//! refused: a redirect (3xx), which is never followed, and a server error
//! (5xx), which says resmon failed while answering but not whether the work
//! was done first. Each is said as what was seen (the status line, the
//! route, resmon's own sentence when its body gave one); for a write, each
//! opens with what resmon may have done and names the read that tells
//! (contract-notes 16, 26).

use serde_json::{Value, json};

use super::{is_json, shown_reason};
use crate::backend::WriteCheck;
use crate::backend::exchange::Reply;
use crate::error::{Code, ToolError};

/// A 3xx: neither acceptance nor refusal. Said as what came back (the
/// status, and the path its `Location` names, never a host or a query),
/// with resmon's sentence when it gave one, and never followed. A write may
/// have been carried out before the redirect (a 303 after one usually says
/// it was), so it carries `outcome_unknown` and asks for a check first
/// (contract-notes 26).
pub(super) fn redirected(reply: &Reply) -> ToolError {
    let status = reply.status;
    let location = reply.header("location").and_then(location_path);
    let to = location.as_deref().map(|path| format!(" to {path}")).unwrap_or_default();
    let said = if is_json(reply) { reply.json().ok() } else { None }
        .and_then(|body| body.get("detail").and_then(Value::as_str).map(str::trim).map(str::to_string))
        .filter(|sentence| !sentence.is_empty() && shown_reason(Some(sentence)).is_some())
        .map(|sentence| format!(" (resmon said: {sentence})"))
        .unwrap_or_default();
    let mut error = match &reply.write {
        None => ToolError::new(
            Code::UpstreamError,
            format!(
                "resmon answered {} with a redirect ({status}{to}){said}. This server does not follow \
                 redirects, so nothing was read.",
                reply.route
            ),
        ),
        Some(check) => ToolError::new(
            Code::UpstreamError,
            format!(
                "resmon may have {}: it answered {} with a redirect ({status}{to}){said}, which this \
                 server does not follow, so its answer was not read.{} {}",
                check.would_have,
                reply.route,
                if status == 303 { " A 303 after a write usually means it was done." } else { "" },
                check.check
            ),
        )
        .with_detail("outcome_unknown", json!(true)),
    }
    .with_detail("status", json!(status))
    .with_detail("route", json!(reply.route))
    .with_detail("redirect", json!(true));
    if let Some(path) = location {
        error = error.with_detail("location", json!(path));
    }
    error
}

/// A 5xx, said as what was seen: its status line and route, and resmon's
/// own sentence only when its body was resmon's error (JSON with a
/// `detail`), never "an internal error" that no body claimed; a plain-text
/// 500 or a gateway's 502 says nothing more than its status. For a write,
/// a 5xx does not say whether the work was done (only a 4xx refusal says it
/// was not), so the answer opens with what resmon may have done, carries
/// `outcome_unknown`, and names the read that tells (contract-notes 26).
pub(super) fn server_error(reply: &Reply) -> ToolError {
    let said = shown_reason(own_sentence(reply).as_deref())
        .map(|sentence| format!(" and said \"{sentence}\""))
        .unwrap_or_default();
    let answered = format!("{} with {}{said}", reply.route, status_text(reply.status));
    let error = match &reply.write {
        None => ToolError::new(
            Code::UpstreamError,
            format!(
                "resmon answered {answered}, so nothing of its answer was used. If it keeps happening, \
                 restarting the resmon app may help."
            ),
        ),
        Some(check) => ToolError::new(
            Code::UpstreamError,
            format!(
                "resmon may have {}: it answered {answered}, which does not say whether it was done. {}",
                check.would_have, check.check
            ),
        )
        .with_detail("outcome_unknown", json!(true)),
    };
    let error = error.with_detail("status", json!(reply.status)).with_detail("route", json!(reply.route));
    with_own_fields(error, reply)
}

/// A write whose final status line arrived and whose answer then did not
/// (it broke off, stalled past the deadline, was reset or too large):
/// `error` says what became of the rest. A 3xx or 5xx status leaves the
/// outcome unknown as a whole answer of that status does, so the answer
/// opens the same way and names the read that tells; a 4xx is a refusal
/// whatever followed it, so it says that nothing was done. (A 2xx is
/// acceptance, which the write's own rule words.)
pub(crate) fn cut_short(status: u16, error: ToolError, check: &WriteCheck) -> ToolError {
    let route = error.detail.get("route").and_then(Value::as_str).unwrap_or_default().to_string();
    let rest = match error.detail.get("body_unread").and_then(Value::as_str) {
        Some("timed_out") => "the rest of its answer did not arrive before this call's deadline",
        Some("too_large") => "the rest of its answer was larger than this server reads",
        Some("reset") => "the connection was then reset",
        Some("malformed") => "the rest of its answer was not valid HTTP",
        _ => "the connection closed before the rest of its answer arrived",
    };
    let line = status_text(status);
    let message = if (400..500).contains(&status) {
        format!(
            "resmon refused {route} with {line}, so it did nothing, but {rest}, so its reason was not read."
        )
    } else {
        format!(
            "resmon may have {}: it answered {route} with {line}, and {rest}. {}",
            check.would_have, check.check
        )
    };
    let unknown = !(400..500).contains(&status);
    let mut out = ToolError::new(error.code, message).merged(error);
    if unknown {
        out = out.with_detail("outcome_unknown", json!(true));
    }
    out
}

/// The machine-readable fields of resmon's own error body (`reason`,
/// `code`, `message` of a `detail` object) added to an error about it.
pub(super) fn with_own_fields(mut error: ToolError, reply: &Reply) -> ToolError {
    if let Some(Value::Object(object)) = own_detail(reply) {
        for key in ["reason", "code", "message"] {
            if let Some(value) = object.get(key).filter(|value| value.is_string()) {
                error = error.with_detail(key, value.clone());
            }
        }
    }
    error
}

/// Whether an error says that a write may or may not have been carried out.
pub(crate) fn is_outcome_unknown(error: &ToolError) -> bool {
    error.detail.get("outcome_unknown") == Some(&json!(true))
}

/// The `detail` of resmon's own error body: a JSON answer that holds one.
fn own_detail(reply: &Reply) -> Option<Value> {
    if !is_json(reply) {
        return None;
    }
    reply.json().ok()?.get_mut("detail").map(Value::take)
}

/// resmon's own sentence in its error body: its `detail` when that is
/// text, or the `message` of a `detail` object.
pub(super) fn own_sentence(reply: &Reply) -> Option<String> {
    let detail = own_detail(reply)?;
    let sentence = match &detail {
        Value::String(sentence) => sentence,
        Value::Object(object) => object.get("message")?.as_str()?,
        _ => return None,
    };
    let sentence = sentence.trim();
    (!sentence.is_empty()).then(|| sentence.to_string())
}

/// A status as its line names it: the code and its standard reason phrase
/// ("503 Service Unavailable"), or the code alone for one without a name.
pub(crate) fn status_text(status: u16) -> String {
    match ureq::http::StatusCode::from_u16(status).ok().and_then(|code| code.canonical_reason()) {
        Some(reason) => format!("{status} {reason}"),
        None => status.to_string(),
    }
}

/// The path a `Location` value names, without scheme, host, port, query or
/// fragment (the address may be another host's, and a query may carry
/// anything), cut to 200 characters of printable ASCII.
pub(super) fn location_path(value: &str) -> Option<String> {
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
