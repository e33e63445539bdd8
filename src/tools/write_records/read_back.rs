//! What a created routine's read-back shows of what was sent: the arguments
//! it lacks (`not_kept`) and the fields it holds with another value
//! (`kept_otherwise`). The read-back is the only witness of what resmon
//! stored, so both are said, each field by name, and neither is guessed at
//! (contract-notes 26).
//!
//! Only what this server sent is compared, and a nested object only on the
//! keys sent: resmon may add its own (defaults, computed fields) beside them.
//! Values are compared as JSON (`1` and `1.0` are one number), a flag in
//! either of resmon's forms (contract-notes 20). `is_active` is left to the
//! sentence that says whether the routine is on the schedule. A field the
//! caller gave no argument for (`ai_enabled` left out) carries this
//! server's default: a difference in it is still said, as that default's,
//! never as the caller's argument.

use serde_json::{Map, Value, json};

use super::{CREATE_ROUTINE, ROUTINE_SWITCHES};
use crate::args::Args;
use crate::tools::accepted::shown_value;
use crate::tools::rows;

/// The arguments the caller gave whose values the read-back does not
/// carry, by the caller's names: a value sent that comes back absent (or
/// null, for the text and list fields; a flag that comes back null was
/// kept in a form resmon could not read, which is not the same thing).
pub(super) fn not_kept(args: &Args, sent: &Value, stored: &Value, routine: &Value) -> Vec<String> {
    let absent = |value: Option<&Value>| value.is_none_or(Value::is_null);
    let mut out = Vec::new();
    let given = |argument: &str| args.get(argument).is_some();
    if absent(stored.get("schedule_cron")) {
        out.push("schedule".to_string());
    }
    if given("intent") && absent(routine.get("intent")) {
        out.push("intent".to_string());
    }
    for flag in std::iter::once("ai_enabled").chain(ROUTINE_SWITCHES) {
        if given(flag) && stored.get(flag).is_none() {
            out.push(flag.to_string());
        }
    }
    let stored = routine.get("parameters");
    for (field, argument) in [("keywords", "keywords"), ("repositories", "sources"), ("entity", "entity")] {
        if given(argument)
            && !absent(sent.pointer(&format!("/parameters/{field}")))
            && absent(stored.and_then(|parameters| parameters.get(field)))
        {
            out.push(argument.to_string());
        }
    }
    out
}

/// Each field this server sent that the read-back holds with another value,
/// as `{argument, field, sent, held, server_default}` (`argument` by the
/// caller's name, `entity.mode`, or null with `server_default: true` for a
/// value this server sent as its default because the caller gave no such
/// argument; `field` by resmon's, `parameters.entity.mode`; `held` null
/// when the read-back's object lacks the key), and the sentence that names
/// them (empty when there is none). A field the read-back lacks or holds as
/// null is left to `not_kept` when that names its argument. Both values are
/// shown as any of resmon's values is, a credential-shaped key's value
/// withheld, on both sides before they are compared, so a value withheld
/// in the read-back is not taken for a change.
pub(super) fn kept_otherwise(
    args: &Args,
    sent: &Value,
    stored: &Value,
    routine: &Value,
    not_kept: &[String],
) -> (Vec<Value>, String) {
    let sent = rows::withheld(sent.as_object().cloned().unwrap_or_default());
    let mut found = Vec::new();
    for (key, value) in &sent {
        if key == "is_active" {
            continue;
        }
        if rows::FLAGS.contains(&key.as_str()) {
            // The raw value: the record shows a flag in neither form as null,
            // and the one resmon gave is what is quoted.
            if let Some(held) = stored.get(key).filter(|held| rows::flag(Some(held)) != value.as_bool()) {
                found.push((key.clone(), value.clone(), Some(held.clone())));
            }
            continue;
        }
        match routine.get(key) {
            // Parameters that did not decode to an object: `not_kept` names
            // what they lack.
            Some(held) if key == "parameters" && !held.is_object() => {}
            Some(held) => differences(key, value, held, &mut found),
            None => {}
        }
    }
    found.retain(|(field, _, held)| {
        let lacking = held.as_ref().is_none_or(Value::is_null);
        !(lacking && not_kept.contains(&argument_of(field)))
    });
    // Sent by this server when the caller gave no such argument.
    let by_default = |field: &str| args.get(&argument_of(field)).is_none();
    let said: Vec<String> =
        found.iter().map(|(field, sent, held)| said(field, sent, held.as_ref(), by_default(field))).collect();
    let entries = found
        .into_iter()
        .map(|(field, sent, held)| {
            let mut held =
                rows::withheld(Map::from_iter([("held".to_string(), held.unwrap_or(Value::Null))]));
            let server_default = by_default(&field);
            json!({
                "argument": if server_default { Value::Null } else { json!(caller_name(&field)) },
                "field": field,
                "sent": sent,
                "held": held.remove("held").unwrap_or(Value::Null),
                "server_default": server_default,
            })
        })
        .collect();
    let sentence = if said.is_empty() {
        String::new()
    } else {
        format!(
            " Its read-back differs from what was sent, and the routine will run as resmon holds it: \
             resmon holds {}. `kept_otherwise` gives both values of each.",
            said.join("; ")
        )
    };
    (entries, sentence)
}

/// One field held otherwise, as the sentence names it: "`schedule`
/// "0 0 * * *" where "0 8 * * 1" was sent", each value as a sentence may
/// quote it, and one too long to quote only said to differ. A value this
/// server sent as its default is said as that: "`ai_enabled` 1 where this
/// server sent its default false".
fn said(field: &str, sent: &Value, held: Option<&Value>, by_default: bool) -> String {
    let name = if field == "parameters.query" {
        "the search text built from `keywords` (`parameters.query`)".to_string()
    } else {
        format!("`{}`", caller_name(field))
    };
    let (other, was_sent) = if by_default {
        ("this server's default", "this server sent its default")
    } else {
        ("the one sent", "was sent")
    };
    let Some(sent) = quotable(sent) else {
        return format!("{name} with another value than {other}");
    };
    let sent = if by_default { format!("{was_sent} {sent}") } else { format!("{sent} {was_sent}") };
    match held.map(quotable) {
        None => format!("no {name} where {sent}"),
        Some(Some(held)) => format!("{name} {held} where {sent}"),
        Some(None) => format!("{name} with another value than {other}"),
    }
}

/// The fields under `field` where `held` is not `sent`: an object is
/// followed into the keys sent, anything else compared whole.
fn differences(field: &str, sent: &Value, held: &Value, found: &mut Vec<(String, Value, Option<Value>)>) {
    match (sent, held) {
        (Value::Object(sent), Value::Object(held)) => {
            for (key, value) in sent {
                let inner = format!("{field}.{key}");
                match held.get(key) {
                    Some(held) => differences(&inner, value, held, found),
                    None => found.push((inner, value.clone(), None)),
                }
            }
        }
        _ if same(sent, held) => {}
        _ => found.push((field.to_string(), sent.clone(), Some(held.clone()))),
    }
}

/// Whether `held` carries `sent`: equal as JSON, a number by its value, an
/// object on the keys sent only, a list item by item in order.
fn same(sent: &Value, held: &Value) -> bool {
    match (sent, held) {
        (Value::Object(sent), Value::Object(held)) => {
            sent.iter().all(|(key, value)| held.get(key).is_some_and(|held| same(value, held)))
        }
        (Value::Array(sent), Value::Array(held)) => {
            sent.len() == held.len() && sent.iter().zip(held).all(|(sent, held)| same(sent, held))
        }
        (Value::Number(sent), Value::Number(held)) => match (sent.as_i64(), held.as_i64()) {
            (Some(sent), Some(held)) => sent == held,
            _ => sent.as_f64().is_some() && sent.as_f64() == held.as_f64(),
        },
        _ => sent == held,
    }
}

/// resmon's field by the caller's argument, from the entry's own table of
/// names (`schedule_cron` is `schedule`, `parameters.entity.mode` is
/// `entity.mode`); the search text `parameters.query` is built from
/// `keywords`, and a field sent under its argument's name keeps it.
fn caller_name(field: &str) -> String {
    for (argument, fields) in CREATE_ROUTINE.backend_names {
        for backend in *fields {
            if field == *backend {
                return (*argument).to_string();
            }
            if let Some(rest) = field.strip_prefix(backend).and_then(|rest| rest.strip_prefix('.')) {
                return format!("{argument}.{rest}");
            }
        }
    }
    if field == "parameters.query" {
        return "keywords".to_string();
    }
    field.to_string()
}

/// The argument a field of resmon's belongs to, as `not_kept` names it:
/// `entity` for `parameters.entity.mode`.
fn argument_of(field: &str) -> String {
    let name = caller_name(field);
    name.split('.').next().unwrap_or_default().to_string()
}

/// A value as a sentence quotes it, or None when it is too long to quote.
fn quotable(value: &Value) -> Option<String> {
    let shown = shown_value(value);
    let long = matches!(shown.as_str(), "a long text" | "a list" | "an object" | "a long number");
    (!long).then_some(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As if the caller had given every argument sent.
    fn compared(sent: Value, stored: Value) -> (Vec<Value>, String) {
        let given = Map::from_iter(
            ["name", "intent", "ai_enabled", "entity"].map(|argument| (argument.to_string(), json!(true))),
        );
        compared_given(&given, sent, stored)
    }

    fn compared_given(given: &Map<String, Value>, sent: Value, stored: Value) -> (Vec<Value>, String) {
        let routine = Value::Object(rows::routine_record("GET /api/routines/9", &stored).unwrap());
        kept_otherwise(&Args(given), &sent, &stored, &routine, &[])
    }

    #[test]
    fn numbers_are_compared_by_value_and_objects_on_the_keys_sent() {
        assert!(same(&json!(5), &json!(5.0)));
        assert!(!same(&json!(5), &json!("5")));
        assert!(same(&json!({"a": [1, {"b": 2}]}), &json!({"a": [1.0, {"b": 2, "c": 3}], "d": 4})));
        assert!(!same(&json!(["arxiv", "pubmed"]), &json!(["pubmed", "arxiv"])));
        assert!(!same(&json!({"a": 1}), &json!({"b": 1})));
    }

    #[test]
    fn a_credential_sent_is_compared_withheld_and_never_quoted() {
        let sent = json!({"name": "N", "is_active": false, "ai_enabled": false,
            "parameters": {"entity": {"profile_id": 5, "mode": "m", "api_token": "SECRET-SENT-1"}}});
        // resmon holds another token, and is_active the other way: neither
        // is a difference here (the token is not shown; the switch has its
        // own sentence).
        let stored = json!({"id": 9, "name": "N", "is_active": 1, "ai_enabled": 0,
            "parameters": {"entity": {"profile_id": 5, "mode": "m", "api_token": "SECRET-HELD-2"}}});
        assert_eq!(compared(sent.clone(), stored), (vec![], String::new()));

        let stored = json!({"id": 9, "name": "N", "ai_enabled": 0,
            "parameters": {"entity": {"profile_id": 6, "mode": "m", "api_token": "SECRET-HELD-2"}}});
        let (found, sentence) = compared(sent, stored);
        assert_eq!(
            found,
            vec![json!({"argument": "entity.profile_id", "field": "parameters.entity.profile_id",
                        "sent": 5, "held": 6, "server_default": false})]
        );
        assert!(sentence.contains("`entity.profile_id` 6 where 5 was sent"), "{sentence}");
        assert!(!format!("{found:?}{sentence}").contains("SECRET"), "{sentence}");
    }

    #[test]
    fn a_value_too_long_to_quote_is_only_said_to_differ() {
        let long = "graph attention ".repeat(8);
        let (found, sentence) =
            compared(json!({"name": "N", "intent": long}), json!({"id": 9, "name": "N", "intent": "short"}));
        assert_eq!(found.len(), 1);
        assert!(sentence.contains("`intent` with another value than the one sent"), "{sentence}");
    }

    #[test]
    fn a_default_this_server_sent_is_never_called_the_callers_argument() {
        let given = Map::from_iter([("name".to_string(), json!("N"))]);
        let (found, sentence) = compared_given(
            &given,
            json!({"name": "N", "ai_enabled": false}),
            json!({"id": 9, "name": "N", "ai_enabled": null}),
        );
        assert_eq!(
            found,
            vec![json!({"argument": null, "field": "ai_enabled", "sent": false, "held": null,
                        "server_default": true})]
        );
        assert!(
            sentence.contains("`ai_enabled` null where this server sent its default false"),
            "{sentence}"
        );
    }
}
