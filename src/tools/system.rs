//! `health`: is resmon there, which release, and which running instance.

use serde_json::{Map, Value, json};

use super::{Probe, Tool, identity_property, nullable, object};
use crate::args::Args;
use crate::backend::{self, Backend};
use crate::error::ToolResult;
use crate::identity;

pub(crate) const HEALTH: Tool = Tool {
    name: "health",
    title: "resmon health",
    description: "Is resmon running? Release, schema, scheduler and daemon state, and \
        identity.runtime_id: pass it as expected_runtime_id to pin a later call to this app.",
    always_load: true,
    search_hint: "running reachable connection connected offline alive status version app server ping",
    input_schema: health_input,
    #[cfg(test)]
    output_schema: health_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/health", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: health,
};

fn health_input() -> Value {
    object(
        json!({"expected_runtime_id": {
            "type": "string",
            "description": "runtime_id from health; another app answers instance_mismatch."
        }}),
        &[],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn health_output() -> Value {
    object(
        json!({
            "status": {"type": "string"},
            "version": nullable("resmon's release label, e.g. 2.3.0."),
            "schema_version": nullable("Database schema version, or null when resmon does not say."),
            "scheduler": nullable("Scheduler state as resmon reports it, or null when it does not."),
            "daemon": nullable("Background daemon state as resmon reports it, or null when it does not."),
            "identity": identity_property(),
            "pid": nullable("Process id of the serving backend."),
            "started_at": nullable("When the backend started (UTC)."),
            "embeddings": nullable("Whether the vector extension loaded, and why not if it did not."),
        }),
        &["status", "version", "schema_version", "scheduler", "daemon", "identity"],
    )
}

fn health(backend: &mut Backend, args: &Args) -> ToolResult {
    let expected = identity::expected_runtime_id(args.get("expected_runtime_id"))?;
    let body = backend.checked_health(expected.as_deref())?;
    backend::require_fields("GET /api/health", &body, &[("status", backend::Kind::String)])?;
    // An unpinned call stays answerable without inventing an identity
    // (contract 1.0 "Instance identity"): a malformed one is reported as null.
    let identity_usable = identity::check_reply(&body, None).is_ok();
    let Value::Object(mut body) = body else {
        return Err(crate::backend::unexpected_shape("GET /api/health", "an object"));
    };
    // Fields are moved out of resmon's answer rather than copied: this is the
    // call a harness makes most, and the copies were a sixth of its cost.
    let mut take = |name: &str| body.remove(name).unwrap_or(Value::Null);
    let identity = take("identity");
    let schema_version = match take("schema_version") {
        Value::Null => identity.get("schema_version").cloned().unwrap_or(Value::Null),
        value => value,
    };
    let mut answer = Map::new();
    answer.insert("status".into(), take("status"));
    answer.insert("version".into(), take("version"));
    answer.insert("schema_version".into(), schema_version);
    answer.insert("scheduler".into(), take("scheduler"));
    answer.insert("daemon".into(), take("daemon"));
    answer.insert("identity".into(), if identity_usable { identity } else { Value::Null });
    answer.insert("pid".into(), take("pid"));
    answer.insert("started_at".into(), take("started_at"));
    answer.insert("embeddings".into(), take("embeddings"));
    Ok(Value::Object(answer))
}
