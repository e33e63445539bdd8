//! The warnings resmon's create answers carry (`entity_warning` on a watch
//! routine that can find nothing, `basis_warning` on a profile without an
//! ORCID), which a caller must repeat (contract 1.0 "Watch profiles and the
//! basis of a match"). They are passed on as resmon gave them, whatever
//! their shape, and kept on every error after the create was accepted: the
//! answer to the create is the only place they are said.

use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::tools::accepted::shown_value;

/// resmon's warning under `key`, as the answer's field holds it and as its
/// sentence says it. Text is both; an absent, null or blank one is none; a
/// value of another kind is passed on as it came and said as a warning in a
/// form this server does not read, never as no warning.
pub(super) fn warning_of(answer: &Map<String, Value>, key: &str) -> (Value, Option<String>) {
    match answer.get(key) {
        None | Some(Value::Null) => (Value::Null, None),
        Some(Value::String(text)) if text.trim().is_empty() => (Value::Null, None),
        Some(Value::String(text)) => (Value::String(text.clone()), Some(text.clone())),
        Some(other) => (
            other.clone(),
            Some(format!(
                "resmon also gave a `{key}` in a form this server does not read ({}); repeat it as given.",
                shown_value(other)
            )),
        ),
    }
}

/// An error after a create was accepted, with the warning resmon's answer
/// to the create carried, in its message and its detail.
pub(super) fn keeping_warning(error: ToolError, created: &Map<String, Value>, key: &str) -> ToolError {
    let (value, sentence) = warning_of(created, key);
    let Some(sentence) = sentence else { return error };
    let message = format!("{} resmon's answer to the create also warned: {sentence}", error.message);
    ToolError { message, ..error }.with_detail(key, value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_warning_is_passed_on_whatever_its_shape_and_a_blank_one_is_none() {
        let answer = |value: Value| json!({"id": 9, "basis_warning": value}).as_object().unwrap().clone();
        let (value, said) = warning_of(&answer(json!("Name only.")), "basis_warning");
        assert_eq!((value, said.as_deref()), (json!("Name only."), Some("Name only.")));
        assert_eq!(warning_of(&answer(json!("  ")), "basis_warning"), (Value::Null, None));
        assert_eq!(warning_of(&answer(Value::Null), "basis_warning"), (Value::Null, None));
        let (value, said) = warning_of(&answer(json!({"message": "weak"})), "basis_warning");
        assert_eq!(value, json!({"message": "weak"}));
        assert!(said.unwrap().contains("in a form this server does not read"));
    }
}
