//! Reading resmon's refusals into the contract's error codes: a status
//! other than 2xx (`status_error`), a route this release does not serve, a
//! redirect, a token the guard refused, and whose mistake a 400 or 422 is
//! (`judge_refusal`, contract-notes 17), including a value the tool offers
//! that this release does not know; a health answer (`judge_health`: a
//! mismatch resmon reported, a pinned identity); and the wording for a
//! candidate the instance found is not resmon (`not_resmons_health`).
//!
//! It reads a `Reply` (and the candidate or instance it came from, only to
//! name it): it never sends a request, never touches the agent, the
//! transport or the cached instance, and keeps no state between calls. What
//! it says comes from what resmon answered.

use serde_json::{Value, json};

mod evidence;
mod offer;
mod said;
mod unsettled;

use self::evidence::{names_field, quotes, words_of};
use self::offer::{offer_refused, refused_offer};
use self::said::holds_json;
use self::said::said_value;
pub(crate) use self::unsettled::{cut_short, is_outcome_unknown, status_text};
use self::unsettled::{own_sentence, redirected, server_error, with_own_fields};
use super::exchange::Reply;
use super::{Instance, WriteCheck, route_template};
use crate::discovery::Candidate;
use crate::error::{Code, ToolError};
use crate::identity;

/// The guard's reason on a 401 (`detail.reason`), when it gave one.
pub(super) fn refusal_reason(reply: &Reply) -> Option<String> {
    reply.json().ok()?.pointer("/detail/reason")?.as_str().map(str::to_string)
}

/// A 401: said of resmon once it has confirmed, and of "something on
/// port N" while nothing on it has answered as resmon.
/// For a write, the guard refused it before any work, so the sentence says
/// after the refusal that it was not carried out (`not_done`).
pub(super) fn token_refused(instance: &Instance, reply: &Reply) -> ToolError {
    let candidate = &instance.candidate;
    let reason = refusal_reason(reply);
    let undone = reply.write.as_ref().map(|check| format!(" {}", not_done(check))).unwrap_or_default();
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
            "{} refused this server's local API token: {why}.{undone} Restart resmon so \
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

/// A health reply judged against the expectation: resmon's own 409 for a
/// mismatch, then the status, then (for a pinned call) the identity block.
pub(super) fn judge_health(reply: &Reply, expected: Option<&str>) -> Result<Value, ToolError> {
    if reply.status == 409
        && let Some(mismatch) = reply.json().ok().as_ref().and_then(identity::backend_mismatch)
    {
        return Err(mismatch);
    }
    success(reply)?;
    let body = reply.json_object()?;
    if let Some(expected) = expected {
        identity::check_reply(&body, Some(expected))?;
    }
    Ok(body)
}

/// The answer to the health request that would confirm a candidate, when
/// it is not resmon's health report: whatever holds the port is not used.
pub(super) fn not_resmons_health(candidate: &Candidate, reply: &Reply) -> ToolError {
    let port = candidate.port;
    let named_by = &candidate.named_by;
    let line = status_text(reply.status);
    let body = if is_json(reply) { reply.json().ok() } else { None };
    let reported =
        body.as_ref().and_then(|body| body.get("status")).and_then(Value::as_str).map(str::to_string);
    // A reason that is or holds JSON text is never quoted (`status_error`).
    let said = own_sentence(reply).filter(|reason| !holds_json(reason));
    // What was seen first: an answer in resmon's own form that is not "ok"
    // is most likely resmon not ready (starting, unwell); anything else on
    // the port is most likely another program.
    // The guard's 403 for a forwarded port or an added Origin is said as
    // that, whatever request met it.
    if let Some(refused) = guard_refusal(reply) {
        return refused;
    }
    let message = match (reported, said) {
        // A 4xx or 3xx with a sentence is an answer about this request, not
        // a resmon that is starting: most likely not resmon's health.
        (None, Some(said)) if reply.status < 500 => format!(
            "Something answers on port {port} but not as resmon's health does ({line}, and it said \
             \"{said}\"), so it was not used. Check that {named_by} names the right instance."
        ),
        (Some(reported), _) => format!(
            "Something on port {port} ({named_by} names that port) answered its health check with \
             status \"{reported}\" ({line}) rather than \"ok\": if it is resmon, it is running but says it \
             is not ready, so wait a moment and call again. If it keeps saying so, restart resmon; if it \
             is not resmon, check that {named_by} names the right instance."
        ),
        (None, Some(said)) => format!(
            "Something on port {port} ({named_by} names that port) answered its health check with \
             {line} and said \"{said}\": if it is resmon, it may be starting up or unwell, so wait a \
             moment and call again. If it keeps saying so, restart resmon; if it is not resmon, check \
             that {named_by} names the right instance."
        ),
        (None, None) if reply.status >= 500 => format!(
            "Something on port {port} ({named_by} names that port) answered its health check with \
             {line} and nothing more: if it is resmon, it may be starting up or unwell, so wait a moment \
             and call again; otherwise check that {named_by} names the right instance."
        ),
        (None, None) => format!(
            "Something answers on port {port} but not as resmon does ({line}, not resmon's health \
             report), so it was not used. Check that {named_by} names the right instance."
        ),
    };
    ToolError::new(Code::BackendUnavailable, message).with_detail("status", json!(reply.status))
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

/// resmon's guard refusing a request for where it came from rather than
/// what it asked: a 403 whose `detail.reason` is `host_refused` (the request
/// named the port this server connected to, and resmon listens on another,
/// so something forwards that port to it) or `origin_refused` (something on
/// the way added an `Origin`, which this server never sends). Both mean this
/// resmon cannot be reached as it was named: `backend_unavailable`.
fn guard_refusal(reply: &Reply) -> Option<ToolError> {
    if reply.status != 403 {
        return None;
    }
    let reason = reply.json().ok()?.pointer("/detail/reason")?.as_str()?.to_string();
    let why = match reason.as_str() {
        "host_refused" => {
            "it answers only requests addressed to the port it listens on itself, and this one was \
             addressed to the port this server was given, so something forwards that port to resmon. \
             Name resmon's own port instead (RESMON_PORT, or the port file it writes)"
        }
        "origin_refused" => {
            "the request reached it with an Origin header, which this server never sends, so something \
             between them changes requests. Point this server at resmon's own port on this computer"
        }
        _ => return None,
    };
    let error = ToolError::new(
        Code::BackendUnavailable,
        format!("resmon refused {} ({} {reason}): {why}.", reply.route, status_text(reply.status)),
    )
    .with_detail("status", json!(reply.status))
    .with_detail("route", json!(reply.route));
    Some(with_own_fields(error, reply))
}

/// 404 → not_found, unless the framework answered for a route this resmon
/// lacks; 400/422 → whose mistake it was (contract-notes 17); 409/429 →
/// conflict; 5xx (`server_error`) and 3xx (`redirected`) → upstream_error;
/// the guard's 403 for a forwarded port or an added Origin →
/// backend_unavailable (`guard_refusal`); other 4xx → internal_error. The
/// message of a 400, 404, 409, 422 or 429 is resmon's own when it gave a
/// sentence; every other names the status line and the route. A write's 4xx
/// then says that it was not carried out (`not_done`).
pub(crate) fn status_error(reply: &Reply) -> ToolError {
    let mut error = judged_status(reply);
    // resmon's reason may be, or hold, JSON text, which the last step of a
    // call judges as JSON (a credential-shaped key's value withheld) only
    // while it is a whole field (tools/withhold.rs): inside a message it is
    // free text. No message quotes such a reason (`shown_reason`); it is kept
    // in `detail.said` instead, where it is judged as JSON.
    if let Some(said) = own_sentence(reply).filter(|reason| holds_json(reason)) {
        error = error.with_detail("said", said_value(&said));
    }
    let Some(check) = reply.write.as_ref().filter(|_| (400..500).contains(&reply.status)) else {
        return error;
    };
    ToolError { message: format!("{} {}", full_stop(&error.message), not_done(check)), ..error }
}

/// resmon's reason as a message may quote it: `None` when it is, or holds,
/// JSON text (`holds_json`), which goes to `detail.said` instead.
pub(super) fn shown_reason(reason: Option<&str>) -> Option<&str> {
    reason.filter(|reason| !holds_json(reason))
}

/// What a write resmon refused with a 4xx did not do: a refusal means it
/// did not carry the write out (contract-notes 26), which the answer says
/// after what resmon said. Never said of a 3xx or 5xx, whose outcome is
/// not known, nor of a read, which changes nothing.
fn not_done(check: &WriteCheck) -> String {
    format!("resmon did nothing: it has not {}.", check.would_have)
}

/// A sentence as it ends before another is added: resmon's own may end
/// without a full stop ("Already running").
fn full_stop(sentence: &str) -> String {
    let sentence = sentence.trim_end();
    if sentence.ends_with(['.', '!', '?']) { sentence.to_string() } else { format!("{sentence}.") }
}

fn judged_status(reply: &Reply) -> ToolError {
    if is_missing_route(reply) {
        return missing_route(reply);
    }
    let status = reply.status;
    if let Some(refused) = guard_refusal(reply) {
        return refused;
    }
    let answered = format!("resmon answered {} with {}", reply.route, status_text(status));
    let (code, fallback) = match status {
        404 => (
            Code::NotFound,
            format!("{answered} and no sentence of its own; the record is probably not there."),
        ),
        400 | 422 => (Code::InvalidArgument, format!("{answered}: it refused the request's arguments.")),
        409 | 429 => {
            (Code::Conflict, format!("{answered}: it cannot do that right now because of its current state."))
        }
        300..=399 => return redirected(reply),
        500..=599 => return server_error(reply),
        _ => (
            Code::InternalError,
            format!(
                "{answered}{}: a refusal this server does not know for this route, so its cause is not \
                 known (a request something between them changed, releases that do not match, or a \
                 request this server built wrongly){}",
                shown_reason(own_sentence(reply).as_deref())
                    .map(|sentence| format!(" and said \"{sentence}\""))
                    .unwrap_or_default(),
                // A write's says so in its own words (`not_done`).
                if reply.write.is_some() { "." } else { "; nothing was done." }
            ),
        ),
    };
    // Only the codes whose sentence resmon words for the caller (a record
    // not found, arguments refused, a conflict) take its sentence alone.
    let own_alone = matches!(status, 400 | 404 | 409 | 422 | 429);
    let body = if is_json(reply) { reply.json().ok() } else { None };
    let detail = body.as_ref().and_then(|body| body.get("detail"));
    let sentence = match detail {
        Some(Value::String(sentence)) if !sentence.trim().is_empty() => Some(sentence.clone()),
        _ => None,
    };
    let message = match &sentence {
        Some(sentence) if own_alone && holds_json(sentence) => {
            format!("{answered}, giving as its reason JSON text rather than a sentence (in `detail.said`).")
        }
        Some(sentence) if own_alone => sentence.clone(),
        _ => fallback,
    };
    let mut error = ToolError::new(code, message)
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
        Some(Value::Object(_)) => error = with_own_fields(error, reply),
        _ => (),
    }
    if matches!(status, 400 | 422) {
        return judge_refusal(reply, error, &problem_fields, sentence.as_deref());
    }
    error
}

/// The field a 422 problem is about, by its whole path: the names in its
/// `loc` after the part of the request it sits in (`body`, `query`,
/// `path`), joined by `.`, an index written as its number
/// (`parameters.repositories.0`).
fn problem_field(problem: &Value) -> Option<String> {
    let loc = problem.get("loc")?.as_array()?;
    let parts: Vec<String> = loc
        .iter()
        .skip(1)
        .map(|part| match part {
            Value::String(name) => Some(name.clone()),
            Value::Number(index) => Some(index.to_string()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("."))
}

/// Whether a request field's path is `field` or lies inside it.
fn at_or_inside(path: &str, field: &str) -> bool {
    path == field || path.strip_prefix(field).is_some_and(|rest| rest.starts_with('.'))
}

/// The last name of a field's path, the one a sentence would use.
fn last_name(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// contract-notes 17: a refusal is the caller's mistake only with evidence.
/// A 422 whose problems name only fields the caller supplied is
/// `invalid_argument`; so is a sentence (a 400's, or a 422's without a
/// `loc`) that names one of the call's own fields or quotes one of its
/// values, and names none this server chose. Neither the route nor a body
/// built mostly from the caller's arguments is evidence: every write's body
/// carries fields this server chose too, and a sentence about neither kind
/// (the framework's "There was an error parsing the body", a bare "Value not
/// accepted") cannot be told. A refusal naming a field this server chose is
/// `upstream_error` naming it; anything else is `upstream_error` too.
fn judge_refusal(reply: &Reply, error: ToolError, fields: &[String], sentence: Option<&str>) -> ToolError {
    if let Some(offer) = refused_offer(reply, sentence) {
        return offer_refused(reply, error, offer, sentence);
    }
    // A problem inside a field is about that field: the paths say whose.
    let is_caller = |name: &str| {
        reply.caller_supplied.iter().any(|field| at_or_inside(name, &field.path))
            || (!name.contains('.') && is_path_field(name))
    };
    let is_chosen = |name: &str| reply.server_chosen.iter().any(|field| at_or_inside(name, field));
    let (named_choices, named_callers): (Vec<String>, Vec<String>) = match (fields.is_empty(), sentence) {
        (true, Some(sentence)) => {
            let words = words_of(sentence);
            // A field named as the route's resource is (update_settings'
            // `settings`, under /api/settings) cannot be told from it: "Settings
            // are locked" speaks of the resource, not of the argument.
            let resource: Vec<String> = words_of(&reply.route);
            // A single word counts by itself for a field this server chose:
            // naming one only keeps the caller from being blamed.
            let named = |path: &str, bare: bool| {
                !resource.contains(&last_name(path).to_ascii_lowercase())
                    && names_field(sentence, &words, path, bare)
            };
            let choices = reply.server_chosen.iter().filter(|field| named(field, true)).cloned().collect();
            let callers: Vec<String> = reply
                .caller_supplied
                .iter()
                .filter(|field| {
                    named(&field.path, false) || field.values.iter().any(|value| quotes(sentence, value))
                })
                .map(|field| field.path.clone())
                .collect();
            (choices, innermost(callers))
        }
        (true, None) => (Vec::new(), Vec::new()),
        (false, _) => (
            fields.iter().filter(|field| is_chosen(field)).cloned().collect(),
            fields.iter().filter(|field| is_caller(field)).cloned().collect(),
        ),
    };
    let only_callers = if fields.is_empty() {
        named_choices.is_empty() && !named_callers.is_empty()
    } else {
        fields.iter().all(|field| is_caller(field))
    };
    if only_callers {
        return callers_refusal(reply, error, sentence);
    }
    let version = reply.backend_version.as_deref();
    let route = route_template(&reply.route);
    let said = reason_clause(sentence);
    let quoted =
        |names: &[String]| names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
    let message = if named_choices.is_empty() {
        // resmon's own sentence is the reason it gave; a release mismatch
        // is offered only when it gave none.
        let likely = if sentence.is_some() {
            ""
        } else {
            " It may be older or newer than contract 1.0 expects; check that resmon and this server are \
             matching releases."
        };
        format!(
            "{} refused {route} ({}{said}), and this server cannot tell from resmon's answer \
             whether an argument of this call was at fault.{likely}",
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

/// resmon's reason as a message quotes it after the status (`: reason`), or,
/// when it is or holds JSON text, where it is kept instead.
pub(super) fn reason_clause(sentence: Option<&str>) -> String {
    match sentence {
        Some(sentence) if holds_json(sentence) => ": its reason is JSON text, kept in `detail.said`".into(),
        Some(sentence) => format!(": {sentence}"),
        None => String::new(),
    }
}

/// A refusal that is the caller's: resmon's own sentence when it gave one,
/// otherwise what its validation list says of each field (the field and
/// resmon's words), so the person sees what to change.
fn callers_refusal(reply: &Reply, error: ToolError, sentence: Option<&str>) -> ToolError {
    if sentence.is_some_and(holds_json) {
        let message = format!(
            "resmon refused what this call asked for ({} to {}){}.",
            status_text(reply.status),
            reply.route,
            reason_clause(sentence)
        );
        return ToolError { message, ..error };
    }
    if sentence.is_some() {
        return error;
    }
    let problems: Vec<String> = error
        .detail
        .get("problems")
        .and_then(Value::as_array)
        .map(|problems| {
            problems
                .iter()
                .filter_map(|problem| {
                    let field = problem_field(problem)?;
                    let msg = problem.get("msg").and_then(Value::as_str).unwrap_or("refused");
                    Some(format!("`{field}`: {msg}"))
                })
                .collect()
        })
        .unwrap_or_default();
    if problems.is_empty() {
        return error;
    }
    let message = format!(
        "resmon refused what this call asked for ({} to {}): {}.",
        status_text(reply.status),
        reply.route,
        problems.join("; ")
    );
    ToolError { message, ..error }
}

/// Path parameters carry the ids the caller named (`routine_id`, `exec_id`).
fn is_path_field(field: &str) -> bool {
    field == "id" || field.ends_with("_id")
}

/// The named fields without those that hold another named one: a value
/// quoted from `parameters.entity.mode` is that field's, not its object's.
fn innermost(paths: Vec<String>) -> Vec<String> {
    paths
        .iter()
        .filter(|path| !paths.iter().any(|other| other != *path && at_or_inside(other, path)))
        .cloned()
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
mod tests;
