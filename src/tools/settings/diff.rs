//! update_settings' answer: the before/after diff of the group's two reads
//! (contract-notes 13), and the sentence that sums it up.

use serde_json::{Map, Value, json};

use super::{echoed, quoted_list, shown};
use crate::settings_policy as policy;

/// The answer is built from the two reads, never from the input
/// (contract-notes 13): a side effect on another key is a change too, a key
/// that appears in the read-back included (`from` null). A key the
/// read-back no longer carries is not a change to null, which resmon never
/// said, nor unchanged: the detail says the read-back did not carry it.
pub(super) fn diff_answer(
    group: &str,
    requested: &Map<String, Value>,
    sent: &Map<String, Value>,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) -> Value {
    let (changed, unchanged) = changes(before, after);
    let detail = summary(sent, &changed, before, after);
    json!({
        "group": group,
        "changed": changed,
        "requested": echoed(requested),
        "unchanged_key_count": unchanged,
        "detail": detail,
    })
}

/// Every key of the group whose value differs between the two reads, each
/// `{from, to}` (a credential-shaped one withheld), and how many are the
/// same in both (contract-notes 13).
pub(super) fn changes(
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) -> (Map<String, Value>, usize) {
    let mut changed = Map::new();
    let mut unchanged = 0;
    let keys = before.keys().chain(after.keys().filter(|key| !before.contains_key(*key)));
    for key in keys {
        let (from, to) = (before.get(key), after.get(key));
        if to.is_none() {
            continue;
        }
        if from == to {
            unchanged += 1;
        } else {
            // A credential-shaped key is named, never shown with its values;
            // nor is one nested inside a value (contract-notes 13).
            let entry = if policy::credential_word(key).is_some() {
                policy::withheld()
            } else {
                let shown = |value: Option<&Value>| value.map(|value| shown(key, value.clone()));
                json!({"from": shown(from), "to": shown(to)})
            };
            changed.insert(key.clone(), entry);
        }
    }
    (changed, unchanged)
}

fn summary(
    sent: &Map<String, Value>,
    changed: &Map<String, Value>,
    before: &Map<String, Value>,
    after: &Map<String, Value>,
) -> String {
    // Every key sent is in the read-back by now (a missing one is an error
    // before this), so a key not kept has a value to name.
    let not_kept: Vec<(&str, &Value)> = sent
        .iter()
        .filter_map(|(key, value)| {
            after.get(key).filter(|held| *held != value).map(|held| (key.as_str(), held))
        })
        .collect();
    let side_effects: Vec<&str> =
        changed.keys().map(String::as_str).filter(|key| !sent.contains_key(*key)).collect();
    let dropped: Vec<&str> =
        before.keys().map(String::as_str).filter(|key| !after.contains_key(*key)).collect();
    let mut parts = Vec::new();
    if changed.is_empty() && not_kept.is_empty() {
        parts.push("Nothing changed: every requested key already had that value.".to_string());
    } else {
        parts.push(format!(
            "resmon now holds the requested value for {} of {} requested keys.",
            sent.len() - not_kept.len(),
            sent.len()
        ));
    }
    if !not_kept.is_empty() {
        let held: Vec<String> = not_kept
            .iter()
            .map(|(key, value)| format!("`{key}` (it holds {})", shown(key, (*value).clone())))
            .collect();
        parts.push(format!(
            "It did not keep the {} sent for {}.",
            if held.len() == 1 { "value" } else { "values" },
            held.join(", ")
        ));
    }
    if !side_effects.is_empty() {
        parts.push(format!("Also changed without being asked for: {}.", quoted_list(&side_effects, "", "")));
    }
    if !dropped.is_empty() {
        parts.push(format!(
            "The read-back did not carry {}, which the first read held, so {} not counted as changed; \
             resmon's answer does not say what it holds for {} now.",
            quoted_list(&dropped, "", ""),
            if dropped.len() == 1 { "it is" } else { "they are" },
            if dropped.len() == 1 { "it" } else { "them" },
        ));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_diff_counts_side_effects_and_unchanged_keys() {
        let before = map(json!({"a": "1", "b": "2", "c": "3"}));
        let after = map(json!({"a": "9", "b": "2", "c": "4"}));
        let answer = diff_answer("g", &map(json!({"a": "9"})), &map(json!({"a": "9"})), &before, &after);
        assert_eq!(answer["changed"], json!({"a": {"from": "1", "to": "9"}, "c": {"from": "3", "to": "4"}}));
        assert_eq!(answer["unchanged_key_count"], json!(1));
        assert!(answer["detail"].as_str().unwrap().contains("`c`"));
    }
}
