//! Instance identity (contract 1.0 "Instance identity"; contract-notes 6).
//!
//! `expected_runtime_id` is checked here before discovery or any request, and
//! every reply that must carry an identity is checked shape first, then
//! compared with the expectation. This module judges values only: it sends
//! nothing and knows nothing of the backend (the health preflight that a
//! pinned call makes lives with the instance, in backend/instance.rs).

use serde_json::{Value, json};
use uuid::Uuid;

use crate::error::{Code, ToolError};

/// A canonical lowercase UUID4: parses, has version 4, and is already written
/// in its hyphenated lowercase form (no braces, no `urn:uuid:`, no capitals).
pub(crate) fn is_canonical_uuid4(text: &str) -> bool {
    match Uuid::parse_str(text) {
        Ok(uuid) => uuid.get_version_num() == 4 && uuid.hyphenated().to_string() == text,
        Err(_) => false,
    }
}

/// Validates the optional argument. Runs before anything touches the network.
pub(crate) fn expected_runtime_id(value: Option<&Value>) -> Result<Option<String>, ToolError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if is_canonical_uuid4(text) => Ok(Some(text.clone())),
        Some(_) => Err(ToolError::invalid_argument(
            "expected_runtime_id",
            "expected_runtime_id must be a canonical lowercase UUID4 (for example the \
             identity.runtime_id that health reported); nothing was sent to resmon.",
        )),
    }
}

/// Checks the `identity` block of a reply: its shape first, then, when the call
/// named one, that it is the runtime the caller expected.
pub(crate) fn check_reply(body: &Value, expected: Option<&str>) -> Result<(), ToolError> {
    let identity = body.get("identity");
    let runtime_id = identity.and_then(well_formed_runtime_id);
    let Some(actual) = runtime_id else {
        return Err(ToolError::new(
            Code::IdentityUnavailable,
            "resmon did not report a usable instance identity, so this answer cannot be tied \
             to the running app you meant. Update resmon, or call without expected_runtime_id.",
        ));
    };
    match expected {
        Some(expected) if expected != actual => Err(mismatch(expected, actual)),
        _ => Ok(()),
    }
}

fn well_formed_runtime_id(identity: &Value) -> Option<&str> {
    let object = identity.as_object()?;
    if object.get("contract_version").and_then(Value::as_i64) != Some(1) {
        return None;
    }
    let runtime_id = object.get("runtime_id")?.as_str()?;
    is_canonical_uuid4(runtime_id).then_some(runtime_id)
}

pub(crate) fn mismatch(expected: &str, actual: &str) -> ToolError {
    ToolError::new(
        Code::InstanceMismatch,
        "This call reached a different running resmon than the one you expected (it has \
         restarted, or another instance answered). Call health to see the current runtime_id.",
    )
    .with_detail("expected_runtime_id", json!(expected))
    .with_detail("actual_runtime_id", json!(actual))
}

/// The backend's own 409 for a mismatch carries `detail.code == "instance_mismatch"`;
/// any other 409 is an ordinary conflict.
pub(crate) fn backend_mismatch(body: &Value) -> Option<ToolError> {
    let detail = body.get("detail")?;
    if detail.get("code")?.as_str()? != "instance_mismatch" {
        return None;
    }
    let field = |name: &str| detail.get(name).and_then(Value::as_str).unwrap_or("").to_string();
    Some(mismatch(&field("expected_runtime_id"), &field("actual_runtime_id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_canonical_lowercase_v4_is_accepted() {
        assert!(is_canonical_uuid4("3f6b2a1e-9c4d-4e8a-b2f1-7d0c5e6a9b13"));
        assert!(!is_canonical_uuid4("3F6B2A1E-9C4D-4E8A-B2F1-7D0C5E6A9B13"));
        assert!(!is_canonical_uuid4("{3f6b2a1e-9c4d-4e8a-b2f1-7d0c5e6a9b13}"));
        assert!(!is_canonical_uuid4("3f6b2a1e9c4d4e8ab2f17d0c5e6a9b13"));
        assert!(!is_canonical_uuid4("urn:uuid:3f6b2a1e-9c4d-4e8a-b2f1-7d0c5e6a9b13"));
        assert!(!is_canonical_uuid4("3f6b2a1e-9c4d-1e8a-b2f1-7d0c5e6a9b13"));
        assert!(!is_canonical_uuid4(""));
    }

    #[test]
    fn shape_is_checked_before_comparison() {
        let good = json!({"identity": {"contract_version": 1, "runtime_id": "3f6b2a1e-9c4d-4e8a-b2f1-7d0c5e6a9b13"}});
        assert!(check_reply(&good, None).is_ok());
        assert!(check_reply(&good, Some("3f6b2a1e-9c4d-4e8a-b2f1-7d0c5e6a9b13")).is_ok());
        let other = "0b7e9c52-6f1a-4d3e-8a2b-9c0d1e2f3a4b";
        assert_eq!(check_reply(&good, Some(other)).unwrap_err().code, Code::InstanceMismatch);
        let bad_version = json!({"identity": {"contract_version": 2, "runtime_id": other}});
        assert_eq!(check_reply(&bad_version, Some(other)).unwrap_err().code, Code::IdentityUnavailable);
        assert_eq!(check_reply(&json!({}), None).unwrap_err().code, Code::IdentityUnavailable);
    }
}
