//! `list_sources`: what resmon can search, and whether each source's key is
//! stored, named by alias and never by value (contract 1.0 "Safety").

use serde_json::{Map, Value, json};

use super::{Probe, Tool, no_arguments, nullable, object};
use crate::args::Args;
use crate::backend::{self, Backend, Method};
use crate::error::ToolResult;

pub(crate) const LIST_SOURCES: Tool = Tool {
    name: "list_sources",
    title: "List sources",
    description: "Searchable sources: slug (for `sources`), name, coverage, whether a key is needed, \
        and the stored key's status by alias (never its value).",
    always_load: false,
    search_hint: "databases database which can search searchable sites services providers indexes \
        coverage cover covers covered supported support available offer api key keys \
        token credentials arxiv biorxiv medrxiv pubmed crossref openalex",
    input_schema: sources_input,
    #[cfg(test)]
    output_schema: sources_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/repositories/catalog", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: list_sources,
};

const CATALOG: &str = "/api/repositories/catalog";

fn sources_input() -> Value {
    no_arguments()
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn sources_output() -> Value {
    let source = object(
        json!({
            "slug": {"type": "string"},
            "name": {"type": "string"},
            "coverage": nullable("Subjects the source covers."),
            "description": nullable("What the source is."),
            "key_requirement": nullable("none, required, optional or recommended."),
            "key_required": {"type": "boolean"},
            "credential": nullable("Alias of the key this source uses (a name, never a value), or null."),
            "key_status": nullable("present, absent or unreadable; null when no key or status unknown."),
        }),
        &[
            "slug",
            "name",
            "coverage",
            "description",
            "key_requirement",
            "key_required",
            "credential",
            "key_status",
        ],
    );
    object(
        json!({
            "sources": {"type": "array", "items": source},
            "key_status_known": {"type": "boolean", "description": "False when resmon could not report stored keys."},
            "note": nullable("Why key status is unknown; null when it is known."),
        }),
        &["sources", "key_status_known", "note"],
    )
}

fn list_sources(backend: &mut Backend, _: &Args) -> ToolResult {
    let catalog = backend.request_json(Method::Get, CATALOG, &[], None)?;
    let Some(catalog) = catalog.as_array() else {
        return Err(backend::unexpected_shape(&format!("GET {CATALOG}"), "an array of sources"));
    };
    // Each entry must at least name its slug: a nameless source is no source.
    for entry in catalog {
        backend::require_fields(&format!("GET {CATALOG}"), entry, &[("slug", backend::Kind::String)])?;
    }
    let statuses = credential_statuses(backend);
    let sources: Vec<Value> = catalog.iter().map(|entry| source(entry, statuses.as_ref().ok())).collect();
    let note = statuses.err().map(Value::String).unwrap_or(Value::Null);
    Ok(json!({"sources": sources, "key_status_known": note.is_null(), "note": note}))
}

/// Presence by alias, or the sentence to show when it cannot be had. A
/// failure here must not read as "absent" (contract 1.0 "Safety": the
/// three-state honesty), so the catalog is still answered with status
/// unknown rather than failing the whole call, as backend-facts 13 notes.
fn credential_statuses(backend: &mut Backend) -> Result<Map<String, Value>, String> {
    let unknown = |why: String| {
        format!(
            "resmon could not report which keys are stored ({why}), so every key_status is null: \
             unknown, not absent. Check the Sources page in resmon."
        )
    };
    let body = backend.get_object("/api/credentials", &[]).map_err(|error| unknown(error.message))?;
    match body.get("credentials").and_then(Value::as_object) {
        Some(credentials) => Ok(credentials.clone()),
        None => Err(unknown("its answer named no credentials".to_string())),
    }
}

/// One catalog entry, projected. Notices and default start days stay out:
/// contract 1.0 "bioRxiv and medRxiv" says list_sources passes neither.
fn source(entry: &Value, statuses: Option<&Map<String, Value>>) -> Value {
    let text = |name: &str| entry.get(name).filter(|value| value.is_string()).cloned().unwrap_or(Value::Null);
    let requirement = text("api_key_requirement");
    let credential = entry.get("credential_name").and_then(Value::as_str).filter(|alias| !alias.is_empty());
    let key_status = match (credential, statuses) {
        (Some(alias), Some(statuses)) => status_of(statuses.get(alias)),
        _ => Value::Null,
    };
    json!({
        "slug": entry.get("slug").and_then(Value::as_str).unwrap_or_default(),
        "name": entry.get("name").and_then(Value::as_str).unwrap_or_default(),
        "coverage": text("subject_coverage"),
        "description": text("description"),
        "key_required": requirement.as_str() == Some("required"),
        "key_requirement": requirement,
        "credential": credential,
        "key_status": key_status,
    })
}

/// resmon's own three-state word; an alias resmon did not list is unknown.
fn status_of(entry: Option<&Value>) -> Value {
    let Some(entry) = entry else { return Value::Null };
    // Only the three words of contract 1.0 "Safety" ever leave, so nothing
    // else resmon might put in that field can reach a transcript.
    if let Some(status) = entry.get("status").and_then(Value::as_str) {
        return match status {
            "present" | "absent" | "unreadable" => json!(status),
            _ => Value::Null,
        };
    }
    match entry.get("present").and_then(Value::as_bool) {
        Some(true) => json!("present"),
        Some(false) => json!("absent"),
        None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statuses() -> Map<String, Value> {
        json!({"core_api_key": {"present": false, "status": "unreadable"}, "x_key": {"present": true}})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn key_status_is_joined_by_alias() {
        let core = json!({"slug": "core", "name": "CORE", "subject_coverage": "OA", "description": "d",
            "api_key_requirement": "required", "credential_name": "core_api_key", "endpoint": "https://x"});
        let shaped = source(&core, Some(&statuses()));
        assert_eq!(
            shaped,
            json!({"slug": "core", "name": "CORE", "coverage": "OA", "description": "d",
                "key_required": true, "key_requirement": "required", "credential": "core_api_key",
                "key_status": "unreadable"})
        );
        assert_eq!(source(&core, None)["key_status"], Value::Null);
    }

    #[test]
    fn unlisted_aliases_and_keyless_sources_have_no_status() {
        let other =
            json!({"slug": "s", "name": "S", "api_key_requirement": "optional", "credential_name": "nope"});
        assert_eq!(source(&other, Some(&statuses()))["key_status"], Value::Null);
        assert_eq!(source(&other, Some(&statuses()))["key_required"], false);
        let keyless =
            json!({"slug": "a", "name": "A", "api_key_requirement": "none", "credential_name": null});
        assert_eq!(source(&keyless, Some(&statuses()))["credential"], Value::Null);
        assert_eq!(status_of(statuses().get("x_key")), json!("present"));
    }
}
