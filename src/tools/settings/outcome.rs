//! update_settings after an answer that left its outcome unknown (a 5xx, a
//! redirect, or no status line at all): the group is read back once, within
//! the call's deadline, and each key asked for is told as the read-back shows
//! it (contract-notes 26). Every key as asked means the change was saved;
//! anything else stays an outcome not known, with what is known of each key.

use serde_json::{Map, Value, json};

use super::diff::changes;
use super::{echoed, quoted_list, read_group_back, shown};
use crate::backend::{Backend, is_outcome_unknown, status_text};
use crate::error::{ToolError, first_sentence};

/// What the write asked for, and the group as it was read before it.
pub(super) struct Asked<'a> {
    pub group: &'a str,
    pub path: &'a str,
    pub requested: &'a Map<String, Value>,
    /// The values as sent (on/off keys as JSON booleans).
    pub sent: &'a Map<String, Value>,
    pub before: &'a Map<String, Value>,
}

/// How one key asked for stands in the read-back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// It holds the value asked for.
    Set,
    /// It holds the value it had before the write.
    Unchanged,
    /// It holds neither: resmon normalised it, or something else wrote it.
    Other,
    /// The read-back failed, or did not carry the key.
    Unknown,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Set => "set",
            State::Unchanged => "unchanged",
            State::Other => "other",
            State::Unknown => "unknown",
        }
    }
}

/// The error for a settings write whose answer left the outcome unknown,
/// once the group was read back (or the read-back failed).
pub(super) fn read_back(backend: &mut Backend, asked: &Asked, error: ToolError) -> ToolError {
    debug_assert!(is_outcome_unknown(&error));
    let after = read_group_back(backend, asked.group, asked.path);
    let states: Vec<(&str, State, Option<&Value>)> = asked
        .sent
        .iter()
        .map(|(key, value)| {
            let now = after.as_ref().ok().and_then(|after| after.get(key));
            (key.as_str(), state_of(now, value, asked.before.get(key)), now)
        })
        .collect();
    let read_back: Map<String, Value> = states
        .iter()
        .map(|(key, state, now)| {
            let now = now.map_or(Value::Null, |now| shown(key, now.clone()));
            let entry =
                json!({"asked": shown(key, asked.sent[*key].clone()), "now": now, "state": state.name()});
            (key.to_string(), entry)
        })
        .collect();
    let went_wrong = went_wrong(&error, asked.path);
    // No final status line of the PUT was read (the deadline or the
    // connection cut it off first): resmon may still have been working on it
    // when the group was read back, so an old value shows only that the key
    // had not changed by then, never that it was not saved.
    let pending = error.detail.get("status").is_none();
    let group = asked.group;
    let has = |wanted: State| states.iter().any(|(_, state, _)| *state == wanted);
    let (message, done) = match &after {
        Err(failure) => (
            format!(
                "resmon may have saved the change to the {group} settings: {went_wrong}, and reading the \
                 group back failed as well ({}), so what it holds now is not known. Check the settings \
                 in the resmon app before calling update_settings again.",
                first_sentence(&failure.message).trim_end_matches('.')
            ),
            false,
        ),
        // Whether resmon wrote them or they were so already, the group
        // holds what was asked: that is what is said, and no more.
        Ok(after) if states.iter().all(|(_, state, _)| *state == State::Set) => {
            // A key nobody asked about that changed is a change the person
            // must see (contract-notes 13), here as on a plain success.
            let (changed, _) = changes(asked.before, after);
            let unasked: Vec<&str> =
                changed.keys().map(String::as_str).filter(|key| !asked.sent.contains_key(*key)).collect();
            let also = if unasked.is_empty() {
                String::new()
            } else {
                format!(" Also changed without being asked for: {}.", quoted_list(&unasked, "", ""))
            };
            (
                format!(
                    "The {group} settings now hold every value asked for (read back just now), although \
                     {went_wrong}.{also} Nothing more needs doing, and repeating the call is not needed."
                ),
                true,
            )
        }
        Ok(_) if pending => (not_yet_saved(group, &went_wrong, &states), false),
        Ok(_) => (
            format!(
                "{}: {went_wrong}, and reading the group back shows {}. `detail.read_back` has each \
                 key's value now: a key `unchanged` was not saved, and one holding another value may be \
                 resmon's own form of what was asked or another writer's, so check it before asking again.",
                if has(State::Set) || has(State::Other) {
                    format!(
                        "resmon may have saved the change to the {group} settings, in part or in another form"
                    )
                } else {
                    format!("resmon does not appear to have saved the change to the {group} settings")
                },
                key_summary(&states, "unchanged")
            ),
            false,
        ),
    };
    // The code of what went wrong stays: a lost connection is still
    // backend_unavailable, a 5xx upstream_error.
    let mut out = ToolError::new(error.code, message)
        .with_detail("group", json!(group))
        .with_detail("requested", Value::Object(echoed(asked.requested)))
        .with_detail("read_back", Value::Object(read_back));
    if done {
        out = out.with_detail("applied", json!(true));
    } else {
        out = out.with_detail("outcome_unknown", json!(true));
    }
    if let Ok(after) = &after {
        // Side effects on keys nobody asked about are changes too (contract-notes 13).
        let (changed, _) = changes(asked.before, after);
        out = out.with_detail("changed", Value::Object(changed));
    }
    if let Err(failure) = after {
        out = out.with_detail("read_back_failure", Value::Object(failure.detail));
    }
    // What the write's own answer was, by its fields (status, route, a
    // redirect's location, why no status arrived).
    let mut failure = error.detail;
    failure.remove("outcome_unknown");
    out.with_detail("failure", Value::Object(failure))
}

/// The message for a read-back that does not hold every value asked, when
/// no final status line of the PUT was read: resmon may still have been
/// saving it as the group was read, so a key holding its old value is said
/// as that, and the outcome stays not known.
fn not_yet_saved(group: &str, went_wrong: &str, states: &[(&str, State, Option<&Value>)]) -> String {
    let has = |wanted: State| states.iter().any(|(_, state, _)| *state == wanted);
    let in_part = if has(State::Set) || has(State::Other) { ", in part or in another form," } else { "," };
    let old_value = if has(State::Unchanged) {
        " A key still holding its old value shows only that it had not changed when the group was read \
         back: resmon may still have been working on the PUT then, and may yet apply it, so the outcome \
         is not known."
    } else {
        " resmon may still have been working on the PUT when the group was read back, so the outcome is \
         not known."
    };
    let other = if has(State::Other) {
        ", and one holding another value may be resmon's own form of what was asked or another writer's"
    } else {
        ""
    };
    format!(
        "resmon may have saved the change to the {group} settings{in_part} or may still be saving it: \
         {went_wrong}, and reading the group back shows {}.{old_value} `detail.read_back` has each key's \
         value as read back{other}. Check the settings in the resmon app before calling update_settings \
         again.",
        key_summary(states, "still holding its old value")
    )
}

fn state_of(now: Option<&Value>, asked: &Value, before: Option<&Value>) -> State {
    match now {
        None => State::Unknown,
        Some(now) if now == asked => State::Set,
        Some(now) if Some(now) == before => State::Unchanged,
        Some(_) => State::Other,
    }
}

/// What went wrong with the write's answer, as a clause: the status line
/// when one arrived, otherwise that none was read.
fn went_wrong(error: &ToolError, path: &str) -> String {
    let route = format!("PUT {path}");
    match error.detail.get("status").and_then(Value::as_u64).and_then(|status| u16::try_from(status).ok()) {
        Some(status) => format!("resmon answered {route} with {}", status_text(status)),
        None => match error.detail.get("interim_status").and_then(Value::as_u64) {
            Some(interim) => format!(
                "resmon answered {route} only with the interim status {interim}, which says nothing of \
                 the outcome"
            ),
            None => format!("no status of resmon's answer to {route} was read"),
        },
    }
}

/// "`a` as asked, `b` unchanged, `c` holding another value, `d` not shown",
/// a key holding its old value named by `unchanged`.
fn key_summary(states: &[(&str, State, Option<&Value>)], unchanged: &str) -> String {
    let mut parts = Vec::new();
    for (state, words) in [
        (State::Set, "as asked"),
        (State::Unchanged, unchanged),
        (State::Other, "holding another value"),
        (State::Unknown, "missing from the read-back"),
    ] {
        let keys: Vec<&str> = states.iter().filter(|(_, s, _)| *s == state).map(|(key, _, _)| *key).collect();
        if !keys.is_empty() {
            parts.push(format!("{} {words}", quoted_list(&keys, "", "")));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_set_when_it_holds_what_was_asked_even_if_it_held_it_before() {
        let (asked, before) = (json!("opus"), json!("sonnet"));
        assert_eq!(state_of(Some(&json!("opus")), &asked, Some(&before)), State::Set);
        assert_eq!(state_of(Some(&json!("opus")), &asked, Some(&asked)), State::Set);
        assert_eq!(state_of(Some(&json!("sonnet")), &asked, Some(&before)), State::Unchanged);
        assert_eq!(state_of(Some(&json!("haiku")), &asked, Some(&before)), State::Other);
        assert_eq!(state_of(None, &asked, Some(&before)), State::Unknown);
    }

    #[test]
    fn the_summary_names_each_key_by_its_state() {
        let (a, b) = (json!(1), json!(2));
        let states = [("ai_model", State::Set, Some(&a)), ("ai_effort", State::Unchanged, Some(&b))];
        assert_eq!(key_summary(&states, "unchanged"), "`ai_model` as asked, `ai_effort` unchanged");
    }
}
