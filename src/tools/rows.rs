//! resmon's routine and watch-profile rows, projected once. `get_routine`, the read-back after
//! `create_routine` and `list_routines` show the same row by the same rules,
//! so the rules cannot drift apart between tools. (The paper row has its own
//! module, `papers.rs`; the execution row is shaped only in `executions.rs`.)

use serde_json::{Map, Value, json};

use super::{nullable, object};
use crate::backend::{self, Kind};
use crate::error::ToolError;
use crate::settings_policy as policy;

/// The routine flags. The list route sends them as 0/1, the detail route
/// as booleans (backend-facts 2).
pub(super) const FLAGS: [&str; 5] =
    ["is_active", "email_enabled", "email_ai_summary_enabled", "ai_enabled", "notify_on_complete"];

/// Columns resmon stores as JSON text.
const JSON_COLUMNS: [&str; 3] = ["parameters", "ai_settings", "storage_settings"];

/// Fields of the record that are always present, null when resmon has no
/// value (contract-notes 7).
const ALWAYS: [&str; 5] = ["schedule_cron", "parameters", "intent", "missed_fires", "missed_fire_details"];

/// A flag in either of resmon's forms; None for anything else, which is
/// shown as null rather than guessed at (contract-notes 20).
pub(super) fn flag(value: Option<&Value>) -> Option<bool> {
    match value? {
        Value::Bool(flag) => Some(*flag),
        Value::Number(number) => match number.as_i64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        _ => None,
    }
}

pub(super) fn flag_value(value: Option<&Value>) -> Value {
    flag(value).map_or(Value::Null, Value::Bool)
}

/// JSON stored as text (backend-facts 3) decoded; text
/// that does not decode is returned as it came rather than dropped.
pub(super) fn parse_json_text(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// The least a routine row must carry to be shown as one: an integer id and
/// a string name. Anything less is answered as an error naming the field.
pub(super) fn require_routine(route: &str, row: &Value) -> Result<(), ToolError> {
    backend::require_fields(route, row, &[("id", Kind::Integer), ("name", Kind::String)])
}

/// The routine record whole, with its JSON text decoded, its flags as
/// booleans (or null), and the fields the contract names always present.
pub(super) fn routine_record(route: &str, routine: &Value) -> Result<Map<String, Value>, ToolError> {
    require_routine(route, routine)?;
    let mut record = routine.as_object().cloned().unwrap_or_default();
    for name in JSON_COLUMNS {
        if let Some(value) = record.get(name) {
            let decoded = parse_json_text(Some(value));
            record.insert(name.into(), decoded);
        }
    }
    for name in FLAGS {
        let value = flag_value(record.get(name));
        record.insert(name.into(), value);
    }
    for name in ALWAYS {
        record.entry(name).or_insert(Value::Null);
    }
    Ok(withheld(record))
}

/// A record of resmon's as it may be shown: the value of every
/// credential-shaped key withheld, at any depth (contract-notes 13).
pub(super) fn withheld(record: Map<String, Value>) -> Map<String, Value> {
    let mut record = Value::Object(record);
    policy::withhold_credentials(&mut record);
    match record {
        Value::Object(record) => record,
        _ => Map::new(),
    }
}

/// The flags and missed fires, shown alike in the list and the record.
pub(super) fn routine_state_properties() -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(
        "is_active".into(),
        nullable("Whether it fires on its schedule; null when resmon's value is unreadable."),
    );
    for name in ["ai_enabled", "email_enabled", "email_ai_summary_enabled", "notify_on_complete"] {
        properties.insert(name.into(), nullable("Boolean; null when unreadable."));
    }
    properties.insert(
        "missed_fires".into(),
        nullable("{count, last_due_at_utc}: scheduled fires that came due while resmon was not running."),
    );
    properties
}

/// The schema of `routine_record`'s answer, with room for the fields a tool
/// adds beside it.
pub(super) fn routine_record_schema(extra: Value, extra_required: &[&str]) -> Value {
    let mut properties = json!({
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "schedule_cron": nullable("Cron expression."),
        "parameters": nullable("The routine's search (query, repositories, keywords, entity), decoded."),
        "intent": nullable("The sentence the coverage audit compares against, or null."),
        "missed_fire_details": nullable("Each missed fire, oldest first: due_at_utc, observed_at_utc, disposition."),
    });
    if let Some(properties) = properties.as_object_mut() {
        properties.extend(routine_state_properties());
    }
    if let (Some(properties), Value::Object(extra)) = (properties.as_object_mut(), extra) {
        properties.extend(extra);
    }
    let mut required: Vec<&str> = vec!["id", "name", "is_active"];
    required.extend(ALWAYS);
    required.extend(extra_required);
    object(properties, &required)
}

/// A watch profile's columns that resmon may keep as JSON text (backend-facts 3).
const PROFILE_JSON_FIELDS: [&str; 4] = ["names", "identifiers", "affiliations", "field_hints"];

/// The profile as resmon stored it: its JSON-text fields decoded and the
/// values of credential-shaped keys withheld, nothing added.
pub(super) fn stored_profile(profile: &Value) -> Map<String, Value> {
    let mut out = profile.as_object().cloned().unwrap_or_default();
    for name in PROFILE_JSON_FIELDS {
        if let Some(value) = out.get(name) {
            let decoded = parse_json_text(Some(value));
            out.insert(name.into(), decoded);
        }
    }
    withheld(out)
}

/// The profile with its JSON-text fields decoded and `basis_warning` always
/// present (contract-notes 8), for the reads that list and show profiles.
pub(super) fn decoded_profile(profile: &Value) -> Value {
    let mut out = stored_profile(profile);
    if !out.contains_key("basis_warning") {
        let warning = fallback_basis_warning(&Value::Object(out.clone()));
        out.insert("basis_warning".into(), warning);
    }
    Value::Object(out)
}

/// For a resmon that sent no `basis_warning`: the warning is never dropped
/// for want of the backend's sentence; it follows resmon's rule that only an
/// ORCID lifts it (backend-facts 10).
fn fallback_basis_warning(profile: &Value) -> Value {
    if orcid_of(profile).is_some() {
        return Value::Null;
    }
    json!(
        "This profile has no ORCID, so its matches may rest on the name alone: a paper with this \
           name on it may belong to someone else."
    )
}

pub(super) fn orcid_of(profile: &Value) -> Option<String> {
    let orcid = profile.get("identifiers")?.get("orcid")?;
    let value = orcid.get("value").unwrap_or(orcid);
    value.as_str().filter(|text| !text.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_both_forms_and_nothing_else() {
        assert_eq!(flag(Some(&json!(1))), Some(true));
        assert_eq!(flag(Some(&json!(0))), Some(false));
        assert_eq!(flag(Some(&json!(true))), Some(true));
        assert_eq!(flag(Some(&json!("maybe"))), None);
        assert_eq!(flag(Some(&json!(2))), None);
        assert_eq!(flag(None), None);
    }

    #[test]
    fn the_record_decodes_its_text_and_fills_what_the_contract_names() {
        let row = json!({"id": 7, "name": "R", "parameters": "{\"query\": \"x\"}", "is_active": 0});
        let record = routine_record("GET /api/routines/7", &row).unwrap();
        assert_eq!(record["parameters"], json!({"query": "x"}));
        assert_eq!(record["is_active"], json!(false));
        assert_eq!(record["email_enabled"], Value::Null);
        for name in ALWAYS {
            assert!(record.contains_key(name), "{name}");
        }
        let error = routine_record("GET /api/routines/7", &json!({"name": "R"})).unwrap_err();
        assert_eq!(error.detail["field"], "id");
    }
}
