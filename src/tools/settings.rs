//! `update_settings`: change a few of resmon's settings, guarded by name, and
//! answer with what really changed (contract 1.0 "The settings update_settings
//! may change"; contract-notes 11-13).
//!
//! Refusals come in the order contract-notes 11 fixes: group, credential-shaped
//! names (over every requested key), withheld names, then the GET, then keys the
//! group does not have, then values. Everything before the GET sends nothing.

mod diff;
mod outcome;

use serde_json::{Map, Value, json};

use self::diff::diff_answer;
use super::accepted::{self, Act, Sent};
use super::{Probe, Tool, object};
use crate::args::{Args, Repeats, TwiceGiven};
use crate::backend::{self, Backend, Method};
use crate::error::{Code, ToolError, ToolResult};
use crate::settings_policy as policy;

pub(crate) const UPDATE_SETTINGS: Tool = Tool {
    name: "update_settings",
    title: "Change resmon settings",
    description: "Changes one group's settings, e.g. the assistant's model (only the 20 keys under \
        `settings`); answers with a before/after diff.",
    always_load: false,
    search_hint: "change changing configure configuration config preferences preference prefer \
        options option default defaults behave behavior behaviour want use using switch swap pick \
        choose instead model models llm claude opus sonnet haiku gpt openai gemini ollama local \
        cloud provider providers endpoint cheaper cheap expensive cost faster smarter better \
        bigger smaller ai assistant chat summaries summary summarize summarizing effort think \
        thinking thinks harder reasoning reason deeper carefully more less lower raise reduce \
        increase temperature creative creativity randomness embedding embeddings vector vectors \
        dimensions semantic turn off enable disable storage store keep keeping kept save saving \
        download downloads pdf pdfs text texts full fulltext paper disk space delete archive \
        archived archiving retention retain old days after notify notified notifications \
        notification mute email emails emailing mail smtp send sender digest recipient recipients \
        address manual automatic runs",
    input_schema: update_settings_input,
    #[cfg(test)]
    output_schema: update_settings_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Put, "/api/settings/ai"),
    requires_confirmation: true,
    // Overwriting a value is not additive: the old text is gone from resmon
    // unless the caller keeps `changed.*.from`. That is what the hint is for.
    destructive: true,
    // The same call twice leaves the same state; the second answers an empty diff.
    idempotent: true,
    open_world: false,
    handler: update_settings,
};

fn update_settings_input() -> Value {
    object(
        json!({
            "group": {"type": "string", "enum": policy::GROUPS},
            "settings": {
                "type": "object",
                // Naming the keys here spares a model guessing its way through
                // refusals; the list is the policy's own, so it cannot drift.
                "description": format!("Writable: {}.", policy::WRITABLE.join(", ")),
                // The values, declared, so that a client which closes every
                // object without `additionalProperties` (Pydantic AI's OpenAI
                // transformer) keeps this map open. No `type` list: a value is
                // text or a JSON boolean (contract-notes 12 and 22).
                "additionalProperties": {"description": "Text, or true/false for on/off keys."},
            },
        }),
        &["group", "settings"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn update_settings_output() -> Value {
    object(
        json!({
            "group": {"type": "string"},
            "changed": {
                "type": "object",
                "description": "{key: {from, to}} for each group key that resmon reports differently after the write than before it, including keys nobody asked to change; a credential-shaped key's value, at any depth, shows only as {\"withheld\": true}.",
            },
            "requested": {"type": "object", "description": "The settings as asked for."},
            "unchanged_key_count": {"type": "integer", "description": "Keys of the group whose value is the same in both reads."},
            "detail": {"type": "string"},
        }),
        &["group", "changed", "requested", "unchanged_key_count", "detail"],
    )
}

fn update_settings(backend: &mut Backend, args: &Args) -> ToolResult {
    let group = args.required_str("group")?;
    refuse_group(group)?;
    let requested = args.get("settings").and_then(Value::as_object).cloned().unwrap_or_default();
    if requested.is_empty() {
        return Err(ToolError::invalid_argument(
            "settings",
            "`settings` is empty: name at least one key and the value it should take.",
        ));
    }
    refuse_credentials(&requested)?;
    refuse_withheld(&requested)?;
    let path = format!("/api/settings/{group}");
    let before = read_group(backend, group, &path)?;
    refuse_unknown(group, &requested, &before)?;
    refuse_unlisted(group, &requested)?;
    // Values are judged only once every key is known to be real and
    // writable (contract-notes 11's order), and still before the PUT.
    refuse_unusable_values(&requested)?;
    let sent = values_to_send(&requested, &before)?;
    let body = json!({"settings": Value::Object(sent.clone())});
    let act = Act::Settings { group: group.to_string() };
    // The PUT's body is never read for meaning: the read-back is the
    // answer, so a 2xx is all that is taken from it (contract-notes 26),
    // and its body is not even waited for.
    backend.status_only(Method::Put, &path);
    let accepted = match accepted::send(backend, act, Method::Put, &path, Some(&body), None) {
        Ok(Sent::Refused(reply)) => return Err(backend::status_error(&reply)),
        Ok(Sent::Accepted(accepted)) => accepted,
        // A 5xx, or an answer lost before its status line: whether the group
        // changed is read back rather than left unknown (contract-notes 26).
        Err(error) if backend::is_outcome_unknown(&error) => {
            let asked =
                outcome::Asked { group, path: &path, requested: &requested, sent: &sent, before: &before };
            return Err(outcome::read_back(backend, &asked, error));
        }
        Err(error) => return Err(error),
    };
    let after_acceptance = |error: ToolError| {
        error.with_detail("group", json!(group)).with_detail("requested", Value::Object(echoed(&requested)))
    };
    let after = read_group_back(backend, group, &path).map_err(|mut error| {
        // A key given twice is quoted as the write's own answer would be
        // (contract-notes 26), not passed on as a failed read.
        if let Some(Value::Object(twice)) = error.detail.remove("given_twice") {
            let keys: Vec<&str> = twice.keys().map(String::as_str).collect();
            let problem = format!(
                "its read-back of the group gave {} more than once, with different values, so this \
                 server cannot tell which resmon holds, and there is no before/after diff",
                quoted_list(&keys, "", "")
            );
            return after_acceptance(accepted.quoting(&problem, twice));
        }
        after_acceptance(
            accepted.fail("reading the group back failed, so there is no before/after diff", Some(error)),
        )
    })?;
    // A read-back without a key that was sent is not a group this server can
    // diff: it would show the key going to null, which resmon never said.
    let missing: Vec<&str> =
        sent.keys().map(String::as_str).filter(|key| !after.contains_key(*key)).collect();
    if !missing.is_empty() {
        let problem = format!(
            "its read-back of the group lacks {}, which the first read held and the write sent, so \
             there is no before/after diff",
            quoted_list(&missing, "", "")
        );
        return Err(
            after_acceptance(accepted.fail(&problem, None)).with_detail("missing_keys", json!(missing))
        );
    }
    // The PUT's body is never read (its 2xx status line ends the exchange),
    // so the read-back is all there is to report; nothing of the answer to
    // the write itself can be missing from the diff.
    Ok(diff_answer(group, &requested, &sent, &before, &after))
}

/// A settings map as it may be shown: a credential-shaped key (the same
/// words the refusal on the way in uses) is named, and its value withheld.
/// Settings keys are judged by the refusal's wide list, not the answer-side
/// rule, so a key this tool will not write by name is not shown by value
/// either (contract-notes 13).
pub(super) fn echoed(settings: &Map<String, Value>) -> Map<String, Value> {
    settings.iter().map(|(key, value)| (key.clone(), shown(key, value.clone()))).collect()
}

/// One value as it may be shown: withheld under a settings key the refusal's
/// words name, and with what is inside it judged by the answer-side rule
/// (contract-notes 13).
pub(super) fn shown(key: &str, mut value: Value) -> Value {
    if policy::credential_word(key).is_some() {
        return policy::withheld();
    }
    policy::withhold_credentials(&mut value);
    value
}

/// Also enforced by the schema's enum; kept here so the guard does not rest
/// on a schema someone might loosen.
fn refuse_group(group: &str) -> Result<(), ToolError> {
    if policy::is_reachable_group(group) {
        return Ok(());
    }
    Err(ToolError::invalid_argument(
        "group",
        format!(
            "`{group}` is not a settings group this tool can reach; it reaches only: {}.",
            policy::GROUPS.join(", ")
        ),
    ))
}

fn refuse_credentials(requested: &Map<String, Value>) -> Result<(), ToolError> {
    let shaped: Vec<&str> =
        requested.keys().map(String::as_str).filter(|key| policy::credential_word(key).is_some()).collect();
    let Some(first) = shaped.first() else { return Ok(()) };
    Err(ToolError::invalid_argument(
        &format!("settings.{first}"),
        format!(
            "{} named like a credential, so nothing was sent. resmon's keys and passwords are not \
             settings: they live in the system keychain and are changed in the resmon app, never \
             through a tool.",
            quoted_list(&shaped, "is", "are")
        ),
    )
    .with_detail("credential_shaped", json!(shaped)))
}

fn refuse_withheld(requested: &Map<String, Value>) -> Result<(), ToolError> {
    let withheld: Map<String, Value> = requested
        .keys()
        .filter_map(|key| Some((key.clone(), json!(policy::withheld_reason(key)?))))
        .collect();
    let Some((first, reason)) = withheld.iter().next() else { return Ok(()) };
    let reason = reason.as_str().unwrap_or_default();
    Err(ToolError::invalid_argument(
        &format!("settings.{first}"),
        format!(
            "`{first}` cannot be changed through a tool: {reason}. The person can change it in the \
             resmon app. Nothing was sent."
        ),
    )
    .with_detail("withheld", Value::Object(withheld)))
}

/// Values no key accepts (contract-notes 12): only text, or a JSON boolean for
/// an on/off key, ever reaches the PUT.
fn refuse_unusable_values(requested: &Map<String, Value>) -> Result<(), ToolError> {
    let Some((key, value)) = requested.iter().find(|(_, value)| !value.is_string() && !value.is_boolean())
    else {
        return Ok(());
    };
    let hint = match value {
        Value::Number(number) => format!(" Send it as text, e.g. \"{number}\"."),
        Value::Null => " To clear a setting, send \"\".".to_string(),
        _ => String::new(),
    };
    Err(ToolError::invalid_argument(
        &format!("settings.{key}"),
        format!("The value for `{key}` must be text (or true/false for an on/off setting).{hint}"),
    ))
}

/// The group's current keys and values. Embeddings keeps them in a nested
/// `settings` object beside capability metadata that is not settable.
///
/// A group is recognised by holding at least one of the app's own keys (the
/// policy's two lists). An answer that holds none of them (an envelope such
/// as `{"settings": {…}}` for a flat group, or `{"success": true}`) is not the
/// group read some other way: it is resmon's answer in a shape this server
/// does not read, said as that, so that no key the caller named is called
/// unknown on its evidence.
///
/// An answer that gives one of the group's keys twice, with different
/// values, has said two things: it is quoted (`given_twice`), and neither
/// value is taken for what the group holds (contract-notes 26).
pub(super) fn read_group(
    backend: &mut Backend,
    group: &str,
    path: &str,
) -> Result<Map<String, Value>, ToolError> {
    let reply = backend.request(Method::Get, path, &[], None)?;
    let body = reply.json_object()?;
    let route = format!("GET {path}");
    let (values, expected) = if group == "embeddings" {
        (body.get("settings"), "an object whose `settings` object holds the group's keys and values")
    } else {
        (Some(&body), "an object holding the group's keys and their values")
    };
    match values.and_then(Value::as_object) {
        Some(values) if values.keys().any(|key| policy::is_known(key)) => {
            let twice = given_twice(&reply, group);
            if twice.is_empty() { Ok(values.clone()) } else { Err(contradictory_group(&route, twice)) }
        }
        Some(values) => Err(unrecognised_group(&route, expected, values)),
        None => Err(backend::unexpected_shape(&route, expected)),
    }
}

/// `read_group` for a read-back after the PUT: the same route answered the
/// first read of this call, so a framework 404 now is said as that, and not
/// as a release that lacks the route (contract-notes 16).
pub(super) fn read_group_back(
    backend: &mut Backend,
    group: &str,
    path: &str,
) -> Result<Map<String, Value>, ToolError> {
    read_group(backend, group, path).map_err(|mut error| {
        if error.detail.remove("missing_route").is_none() {
            return error;
        }
        let status = error.detail.get("status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
        let answered = status.map_or_else(|| "an error".to_string(), backend::status_text);
        error.message = format!(
            "resmon answered GET {path} with {answered}, although the same route had answered with the \
             group earlier in this call, before the change."
        );
        error
    })
}

/// The group's keys its answer gave more than once with different values,
/// each with every value given (shown as `shown` shows a value): the keys
/// at the top for a flat group; for embeddings, those inside `settings`, and
/// `settings` itself.
fn given_twice(reply: &backend::Reply, group: &str) -> Map<String, Value> {
    let Ok(Repeats { keys, inside }) = reply.read_with(TwiceGiven) else { return Map::new() };
    let top = Repeats { keys, inside: Vec::new() }.with_different_values();
    let twice = if group == "embeddings" {
        let inside = inside.into_iter().find(|(member, _)| member == "settings");
        let keys = inside.map(|(_, keys)| keys).unwrap_or_default();
        let mut twice = Repeats { keys, inside: Vec::new() }.with_different_values();
        twice.extend(top.into_iter().filter(|(key, _)| key == "settings"));
        twice
    } else {
        top
    };
    twice.into_iter().map(|(key, values)| (key.clone(), shown(&key, values))).collect()
}

/// The error for a group answer that gives a key twice, with different values.
fn contradictory_group(route: &str, twice: Map<String, Value>) -> ToolError {
    let keys: Vec<&str> = twice.keys().map(String::as_str).collect();
    ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon's answer to {route} gave {} more than once, with different values, so this server \
             cannot tell which the group holds.",
            quoted_list(&keys, "", "")
        ),
    )
    .with_detail("route", json!(route))
    .with_detail("given_twice", Value::Object(twice))
}

/// The error for a group answer that holds none of the app's keys, naming
/// the keys it did hold (names only, never their values).
fn unrecognised_group(route: &str, expected: &str, values: &Map<String, Value>) -> ToolError {
    let keys: Vec<&str> = values.keys().map(String::as_str).take(12).collect();
    let held = if keys.is_empty() {
        "an empty object".to_string()
    } else {
        format!("an object whose keys are {}", quoted_list(&keys, "", ""))
    };
    ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon answered {route} with {held}, none of them a setting this server knows (expected \
             {expected}). This server and the running resmon may be from different releases."
        ),
    )
    .with_detail("route", json!(route))
    .with_detail("keys", json!(keys))
}

/// resmon's PUT silently drops keys outside the group; a tool must not.
fn refuse_unknown(
    group: &str,
    requested: &Map<String, Value>,
    current: &Map<String, Value>,
) -> Result<(), ToolError> {
    let Some(unknown) = requested.keys().find(|key| !current.contains_key(*key)) else { return Ok(()) };
    let keys: Vec<&str> = current.keys().map(String::as_str).collect();
    let writable: Vec<&str> = keys.iter().copied().filter(|key| policy::is_writable(key)).collect();
    Err(ToolError::invalid_argument(
        &format!("settings.{unknown}"),
        format!(
            "`{unknown}` is not a setting of the {group} group. Its keys are: {}; of those, this tool \
             may change: {}.",
            keys.join(", "),
            if writable.is_empty() { "none".to_string() } else { writable.join(", ") }
        ),
    )
    .with_detail("group_keys", json!(keys))
    .with_detail("writable_keys", json!(writable)))
}

/// A key the app has but neither list names: newer than this server's
/// decision, so it stays out of reach until someone makes one.
fn refuse_unlisted(group: &str, requested: &Map<String, Value>) -> Result<(), ToolError> {
    let Some(key) = requested.keys().find(|key| !policy::is_writable(key)) else { return Ok(()) };
    Err(ToolError::invalid_argument(
        &format!("settings.{key}"),
        format!(
            "`{key}` is a setting of the {group} group, but not one this server lets a tool change: \
             keys resmon added after its list was written stay out of reach until they are reviewed. \
             Change it in the resmon app."
        ),
    ))
}

/// Text for text keys; for a key the GET returns as a JSON boolean, a JSON
/// boolean, because resmon stores that one by truthiness and the text "false"
/// would switch it on (contract-notes 12).
fn values_to_send(
    requested: &Map<String, Value>,
    current: &Map<String, Value>,
) -> Result<Map<String, Value>, ToolError> {
    let mut sent = Map::new();
    for (key, value) in requested {
        let is_boolean_key = current.get(key).is_some_and(Value::is_boolean);
        let converted = if is_boolean_key { as_boolean(key, value)? } else { as_text(key, value)? };
        sent.insert(key.clone(), converted);
    }
    Ok(sent)
}

fn as_boolean(key: &str, value: &Value) -> Result<Value, ToolError> {
    match value {
        Value::Bool(flag) => Ok(json!(flag)),
        Value::String(text) if text.eq_ignore_ascii_case("true") => Ok(json!(true)),
        Value::String(text) if text.eq_ignore_ascii_case("false") => Ok(json!(false)),
        _ => Err(ToolError::invalid_argument(
            &format!("settings.{key}"),
            format!(
                "`{key}` is an on/off setting: send \"true\" or \"false\". The group was read, and no \
                 change was sent."
            ),
        )),
    }
}

fn as_text(key: &str, value: &Value) -> Result<Value, ToolError> {
    match value {
        Value::String(_) => Ok(value.clone()),
        // resmon would store a JSON boolean here as the text "True"/"False",
        // which is not what a caller sending true means.
        _ => Err(ToolError::invalid_argument(
            &format!("settings.{key}"),
            format!("`{key}` holds text: send the value as a string, e.g. \"true\" rather than true."),
        )),
    }
}

/// "`a` is" / "`a`, `b` are" (or just the names when both verbs are empty).
pub(super) fn quoted_list(names: &[&str], one: &str, many: &str) -> String {
    let list: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    let verb = if names.len() == 1 { one } else { many };
    if verb.is_empty() { list.join(", ") } else { format!("{} {verb}", list.join(", ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The description's count of writable keys is the policy's.
    #[test]
    fn the_description_counts_the_writable_keys_of_the_policy() {
        let stated = format!("only the {} keys", crate::settings_policy::WRITABLE.len());
        assert!(UPDATE_SETTINGS.description.contains(&stated), "{}", UPDATE_SETTINGS.description);
    }

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_text_false_turns_into_a_json_false_for_an_on_off_key() {
        let current = map(json!({"notify_manual": true, "notify_automatic_mode": "all"}));
        let sent = values_to_send(&map(json!({"notify_manual": "False"})), &current).unwrap();
        assert_eq!(sent["notify_manual"], json!(false));
        let sent = values_to_send(&map(json!({"notify_manual": "TRUE"})), &current).unwrap();
        assert_eq!(sent["notify_manual"], json!(true));
        assert!(values_to_send(&map(json!({"notify_manual": "no"})), &current).is_err());
        assert!(values_to_send(&map(json!({"notify_manual": "0"})), &current).is_err());
        assert!(values_to_send(&map(json!({"notify_automatic_mode": true})), &current).is_err());
    }
}
