//! Runs: `list_executions`, `get_execution` (with the optional instance pin),
//! `get_execution_results` and `get_search_record`.

use serde_json::{Map, Value, json};

use std::marker::PhantomData;

use super::loose::{Window, Windowed};
use super::papers::{self, Authors, IdField, PaperRow};
use super::rows::parse_json_text;
use super::{
    DEFAULT_PAGE, MAX_PAGE, Probe, Tool, identity_property, limit_property, nullable, object,
    offset_property, passed_through,
};
use crate::args::Args;
use crate::backend::{self, Backend, Kind, Method};
use crate::error::ToolResult;
use crate::identity;

/// Rows per backend request when filtering. resmon allows 500, but each row
/// carries the run's whole progress log, so smaller pages stay far below the
/// body cap however long the logs are.
const BACKEND_PAGE: usize = 100;
/// A filtered listing reads at most this many backend pages (5,000 runs), and
/// for at most `SCAN_TIME_BOUND`, before it stops and says so: one call never
/// walks an unbounded history.
const MAX_BACKEND_PAGES: usize = 50;
const SCAN_TIME_BOUND: std::time::Duration = std::time::Duration::from_secs(20);

const STATUSES: [&str; 5] = ["running", "completed", "failed", "cancelled", "interrupted"];

/// The request whose first row is the newest run: list_executions' probe,
/// and how `--check` finds the run that the probes of a run's answers ask
/// about (`Probe::OfRun`).
pub(crate) const NEWEST_RUN: (&str, &[(&str, &str)]) = ("/api/executions", &[("limit", "1")]);

pub(crate) const LIST_EXECUTIONS: Tool = Tool {
    name: "list_executions",
    title: "List runs",
    description: "Runs, newest first, filterable by routine_id and status. interrupted: resmon stopped \
        mid-run (e.g. was closed), not a failed search.",
    always_load: true,
    search_hint: "recent runs history latest last week today overnight ran failed completed activity",
    input_schema: list_input,
    #[cfg(test)]
    output_schema: list_output,
    backend_names: &[],
    not_sent_as_given: &["limit", "offset"],
    declined_arguments: &[],
    probe: Probe::Read(NEWEST_RUN.0, NEWEST_RUN.1),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: list_executions,
};

pub(crate) const GET_EXECUTION: Tool = Tool {
    name: "get_execution",
    title: "Get a run",
    description: "One run whole: status, parameters, per-source coverage and zero-reasons, \
        interruption fields, progress, identity. Poll it after starting a run.",
    always_load: true,
    search_hint: "run status finished done complete progress still running coverage zero results nothing interrupted errors",
    input_schema: get_input,
    #[cfg(test)]
    output_schema: get_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/executions/0", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_execution,
};

pub(crate) const GET_EXECUTION_RESULTS: Tool = Tool {
    name: "get_execution_results",
    title: "Papers a run found",
    description: "The papers one run found, paged; each id is a doc_id the paper tools take.",
    always_load: true,
    search_hint: "papers found new week latest results hits digest",
    input_schema: results_input,
    #[cfg(test)]
    output_schema: results_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    // What this tool sends: resmon's json export with ids.
    probe: Probe::OfRun("references", &[("format", "json"), ("include_ids", "true")]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_execution_results,
};

pub(crate) const GET_SEARCH_RECORD: Tool = Tool {
    name: "get_search_record",
    title: "Search record of a run",
    description: "A run's PRISMA-style record. search.queries_as_sent: what each source's requests \
        carried (null for old runs); search.query_as_sent: the terms as typed.",
    always_load: false,
    search_hint: "queries query sent went submitted string strategy terms exact typed syntax \
        boolean prisma systematic review methods section protocol reproducible \
        reproducibility replicate audit trail documentation documented log each source \
        per database",
    input_schema: exec_input,
    #[cfg(test)]
    output_schema: record_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/executions/0/search-record", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_search_record,
};

fn list_input() -> Value {
    object(
        json!({
            "routine_id": {"type": "integer"},
            "status": {"type": "string", "enum": STATUSES},
            "limit": limit_property(),
            "offset": offset_property(),
        }),
        &[],
    )
}

fn exec_input() -> Value {
    object(json!({"exec_id": {"type": "integer"}}), &["exec_id"])
}

fn get_input() -> Value {
    object(
        json!({
            "exec_id": {"type": "integer"},
            "expected_runtime_id": {"type": "string", "description": "runtime_id from health; another app answers instance_mismatch."},
        }),
        &["exec_id"],
    )
}

fn results_input() -> Value {
    object(
        json!({"exec_id": {"type": "integer"}, "limit": limit_property(), "offset": offset_property()}),
        &["exec_id"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn list_output() -> Value {
    let row = object(
        json!({
            "id": {"type": "integer"},
            "type": nullable("deep_dive, deep_sweep or automated_sweep."),
            "routine_id": nullable("The routine that ran, or null for a one-off search."),
            "status": {"type": "string", "description": "running, completed, failed, cancelled or interrupted."},
            "started": nullable("Start time (UTC)."),
            "finished": nullable("End time (UTC), or null while running."),
            "result_count": nullable("Papers the run returned."),
            "interrupted_reason": nullable("owner_dead, daemon_restart or unknown; null if never interrupted or not recorded."),
            "restarted_from": nullable("The run this one restarted, or null."),
        }),
        &[
            "id",
            "type",
            "routine_id",
            "status",
            "started",
            "finished",
            "result_count",
            "interrupted_reason",
            "restarted_from",
        ],
    );
    object(
        json!({
            "executions": {"type": "array", "items": row},
            "offset": {"type": "integer"},
            "limit": {"type": "integer"},
            "has_more": {"type": "boolean"},
            "total": nullable("Runs matching the filters, when known; null when this page does not tell."),
            "scan_limit_reached": {"type": "boolean", "description": "True when the filter stopped before the oldest run; older runs were not checked."},
            "note": nullable("Says what was not checked when scan_limit_reached."),
        }),
        &["executions", "offset", "limit", "has_more", "total", "scan_limit_reached", "note"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn get_output() -> Value {
    object(
        json!({
            "id": {"type": "integer"},
            "status": {"type": "string", "description": "running, completed, failed, cancelled or interrupted (not a failure)."},
            "parameters": nullable("The search as run, decoded; default_starts says which start date resmon gave a source."),
            "coverage": nullable("Per-source answers, non-answers and answers in part, with zero-reasons."),
            "interrupted_reason": nullable("owner_dead, daemon_restart or unknown; null if never interrupted or not recorded."),
            "owner_pid": nullable("Process that ran it."),
            "owner_runtime_id": nullable("runtime_id of the process that ran it."),
            "last_seen_at_utc": nullable("When that process last reported in."),
            "restarted_from": nullable("The run this one restarted, or null."),
            "restarted_into": nullable("Runs that restarted this one."),
            "progress_events": nullable("The run's progress log as resmon keeps it (decoded when stored as JSON text), or null."),
            "identity": identity_property(),
        }),
        &["id", "status"].into_iter().chain(DETAIL_FIELDS).chain(["identity"]).collect::<Vec<_>>(),
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn results_output() -> Value {
    object(
        json!({
            "exec_id": {"type": "integer"},
            "papers": {"type": "array", "items": papers::paper_schema(Authors::Listed)},
            "total": {"type": "integer", "description": "Papers the whole run found."},
            "offset": {"type": "integer"},
            "limit": {"type": "integer"},
            "has_more": {"type": "boolean"},
        }),
        &["exec_id", "papers", "total", "offset", "limit", "has_more"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn record_output() -> Value {
    let search = object(
        json!({
            "query_as_sent": nullable("The terms as typed (for a keyword run, joined into one string no source received)."),
            "queries_as_sent": nullable("Per source: source, name, sent (queries its requests carried), omitted, note; null for runs before resmon kept it."),
        }),
        &["query_as_sent", "queries_as_sent"],
    );
    let mut schema = passed_through(object(
        json!({
            "record_type": {"type": "string"},
            "coverage": {"type": "object"},
            "sources": {"type": "array", "items": {"type": "object"}},
            "identification": {"type": "object"},
            "deduplication": {"type": "object"},
            "caveats": {"type": "array", "items": {"type": "string"}},
        }),
        &["search"],
    ));
    // `search` is checked and completed here, so its shape holds.
    schema["properties"]["search"] = search;
    schema
}

fn list_executions(backend: &mut Backend, args: &Args) -> ToolResult {
    let limit = args.limit("limit", DEFAULT_PAGE, MAX_PAGE) as usize;
    let offset = args.int("offset").unwrap_or(0).max(0) as usize;
    let routine_id = args.int("routine_id");
    let status = args.str("status");
    let page = if routine_id.is_none() && status.is_none() {
        unfiltered_page(backend, offset, limit)?
    } else {
        let keep = |row: &Value| {
            routine_id.is_none_or(|id| row.get("routine_id").and_then(Value::as_i64) == Some(id))
                && status.is_none_or(|status| row.get("status").and_then(Value::as_str) == Some(status))
        };
        filtered_page(backend, offset, limit, &keep)?
    };
    let note = page.scan_limit_reached.then(|| {
        format!(
            "Only the newest runs were checked against the filters (at most {} runs or {} s of \
             reading); older runs may match too.",
            MAX_BACKEND_PAGES * BACKEND_PAGE,
            SCAN_TIME_BOUND.as_secs()
        )
    });
    Ok(json!({
        "executions": page.rows.iter().map(execution_row).collect::<Vec<_>>(),
        "offset": offset,
        "limit": limit,
        "has_more": page.has_more,
        "total": page.total,
        "scan_limit_reached": page.scan_limit_reached,
        "note": note,
    }))
}

struct Page {
    rows: Vec<Value>,
    has_more: bool,
    total: Option<usize>,
    scan_limit_reached: bool,
}

/// Without filters resmon's own paging is the answer's paging: one request,
/// one row more than asked for to learn whether another page exists.
fn unfiltered_page(
    backend: &mut Backend,
    offset: usize,
    limit: usize,
) -> Result<Page, crate::error::ToolError> {
    let mut rows = fetch_runs(backend, offset, limit + 1)?;
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    // The end was reached; an empty page past it says nothing about the total.
    let total = (!has_more && (offset == 0 || !rows.is_empty())).then(|| offset + rows.len());
    Ok(Page { rows, has_more, total, scan_limit_reached: false })
}

/// resmon cannot filter runs by routine or status (backend-facts 5), so
/// whole pages are read from the newest and filtered here until the requested
/// page and one row beyond it are known, resmon runs out, or the bound is hit.
fn filtered_page(
    backend: &mut Backend,
    offset: usize,
    limit: usize,
    keep: &dyn Fn(&Value) -> bool,
) -> Result<Page, crate::error::ToolError> {
    let wanted = offset + limit + 1;
    let started = std::time::Instant::now();
    let mut matched = Vec::new();
    // Runs that start during the scan shift later pages by a row or more;
    // an id seen once is never listed twice.
    let mut seen = std::collections::HashSet::new();
    let mut exhausted = false;
    for page in 0..MAX_BACKEND_PAGES {
        // The scan stops with a third of the call's deadline still left, so
        // the answer (with its note) is never lost to the deadline.
        if started.elapsed() > SCAN_TIME_BOUND || backend.time_left() < backend.request_timeout() / 3 {
            break;
        }
        let rows = fetch_runs(backend, page * BACKEND_PAGE, BACKEND_PAGE)?;
        let last_page = rows.len() < BACKEND_PAGE;
        let fresh = rows.into_iter().filter(|row| seen.insert(row.get("id").and_then(Value::as_i64)));
        matched.extend(fresh.filter(|row| keep(row)));
        if last_page {
            exhausted = true;
            break;
        }
        if matched.len() >= wanted {
            break;
        }
    }
    let scan_limit_reached = !exhausted && matched.len() < wanted;
    let total = exhausted.then_some(matched.len());
    let has_more = matched.len() > offset + limit || scan_limit_reached;
    let rows = matched.into_iter().skip(offset).take(limit).collect();
    Ok(Page { rows, has_more, total, scan_limit_reached })
}

fn fetch_runs(
    backend: &mut Backend,
    offset: usize,
    limit: usize,
) -> Result<Vec<Value>, crate::error::ToolError> {
    let query = [("limit", limit.to_string()), ("offset", offset.to_string())];
    match backend.request_json(Method::Get, "/api/executions", &query, None)? {
        Value::Array(rows) => {
            for row in &rows {
                require_execution("GET /api/executions", row)?;
            }
            Ok(rows)
        }
        _ => Err(backend::unexpected_shape("GET /api/executions", "an array of executions")),
    }
}

/// The least an execution row must carry: an integer id and a string status.
/// Anything less would be answered as an execution with no id or status.
fn require_execution(route: &str, row: &Value) -> Result<(), crate::error::ToolError> {
    backend::require_fields(route, row, &[("id", Kind::Integer), ("status", Kind::String)])
}

/// The fixed key set of contract 1.0 "Execution status": every key always
/// present, so an absent interruption field cannot be mistaken for "none".
fn execution_row(row: &Value) -> Value {
    let field = |name: &str| row.get(name).cloned().unwrap_or(Value::Null);
    json!({
        "id": field("id"),
        "type": field("execution_type"),
        "routine_id": field("routine_id"),
        "status": field("status"),
        "started": field("start_time"),
        "finished": field("end_time"),
        "result_count": field("result_count"),
        "interrupted_reason": field("interrupted_reason"),
        "restarted_from": field("restarted_from"),
    })
}

fn get_execution(backend: &mut Backend, args: &Args) -> ToolResult {
    // contract 1.0 "Instance identity": the expectation is checked before any
    // request, then health must match it before the execution is asked for.
    let expected = identity::expected_runtime_id(args.get("expected_runtime_id"))?;
    let exec_id = args.required_int("exec_id")?;
    backend.pin(expected.clone());
    if let Some(expected) = expected.as_deref() {
        backend.checked_health(Some(expected))?;
    }
    let query: Vec<(&str, String)> = expected.iter().map(|id| ("expected_runtime_id", id.clone())).collect();
    let route = format!("GET /api/executions/{exec_id}");
    let reply = backend.send(Method::Get, &format!("/api/executions/{exec_id}"), &query, None)?;
    if expected.is_some()
        && reply.status == 409
        && let Some(mismatch) = reply.json().ok().as_ref().and_then(identity::backend_mismatch)
    {
        return Err(mismatch);
    }
    backend::success(&reply)?;
    let body = reply.json_object()?;
    // A pinned call discards the whole row unless the reply proves it came
    // from the expected process, and that is judged first (contract-notes 6);
    // an unpinned one shows identity only when resmon gave a well-formed
    // one, never an invented one.
    let identity = match expected.as_deref() {
        Some(expected) => {
            identity::check_reply(&body, Some(expected))?;
            body["identity"].clone()
        }
        None if identity::check_reply(&body, None).is_ok() => body["identity"].clone(),
        None => Value::Null,
    };
    require_execution(&route, &body)?;
    Ok(execution_detail(body, identity))
}

/// A run's fields that the contract names beside its id, status and
/// identity: each is in every answer, null where resmon holds no value.
const DETAIL_FIELDS: [&str; 9] = [
    "parameters",
    "coverage",
    "interrupted_reason",
    "owner_pid",
    "owner_runtime_id",
    "last_seen_at_utc",
    "restarted_from",
    "restarted_into",
    "progress_events",
];

/// The row whole (contract 1.0 "Execution status": get_execution returns the
/// row whole), with the two columns resmon keeps as JSON text decoded and
/// every field the contract names present, null when resmon has no value.
fn execution_detail(body: Value, identity: Value) -> Value {
    let Value::Object(row) = body else { return Value::Null };
    let mut out = Map::new();
    for (key, value) in row {
        match key.as_str() {
            "parameters" | "progress_events" => {
                out.insert(key, parse_json_text(Some(&value)));
            }
            "identity" => (),
            _ => {
                out.insert(key, value);
            }
        }
    }
    for name in DETAIL_FIELDS {
        out.entry(name).or_insert(Value::Null);
    }
    out.insert("identity".into(), identity);
    Value::Object(out)
}

fn get_execution_results(backend: &mut Backend, args: &Args) -> ToolResult {
    let exec_id = args.required_int("exec_id")?;
    let limit = args.limit("limit", DEFAULT_PAGE, MAX_PAGE) as usize;
    let offset = args.int("offset").unwrap_or(0).max(0) as usize;
    let route = format!("/api/executions/{exec_id}/references");
    // contract 1.0 "Tools › Read": ID-bearing JSON; the route returns the
    // whole run, so the page is cut here.
    let query = [("format", "json".to_string()), ("include_ids", "true".to_string())];
    let reply = backend.request(Method::Get, &route, &query, None)?;
    // Only the page's records are built; the rest are counted (loose::Window).
    let window = Window { offset, limit, rows: PhantomData::<PaperRow> };
    let Some(Windowed { rows, total }) = reply.read_with(window)? else {
        return Err(backend::unexpected_shape(&format!("GET {route}"), "an array"));
    };
    let papers = rows
        .iter()
        .map(|record| papers::paper(record, IdField::Id, Authors::Listed).map(Value::Object))
        .collect::<Option<Vec<Value>>>()
        .ok_or_else(|| {
            backend::unexpected_shape(&format!("GET {route}"), "papers carrying their corpus `id`")
        })?;
    // `json!` copies what it is given, so the rows are moved in afterwards.
    let mut answer = json!({
        "exec_id": exec_id,
        "papers": null,
        "total": total,
        "offset": offset,
        "limit": limit,
        "has_more": offset + limit < total,
    });
    answer["papers"] = Value::Array(papers);
    Ok(answer)
}

fn get_search_record(backend: &mut Backend, args: &Args) -> ToolResult {
    let exec_id = args.required_int("exec_id")?;
    let route = format!("/api/executions/{exec_id}/search-record");
    let mut record = backend.get_object(&route, &[])?;
    let Some(search) = record.get_mut("search").and_then(Value::as_object_mut) else {
        return Err(backend::unexpected_shape(&format!("GET {route}"), "an object with `search`"));
    };
    // contract 1.0 "The search record": a run from before the record existed
    // answers null, never a missing key.
    for name in ["query_as_sent", "queries_as_sent"] {
        search.entry(name).or_insert(Value::Null);
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detail_keeps_the_row_and_fills_contract_fields() {
        let row = json!({"id": 1, "status": "interrupted", "parameters": "{\"query\": \"x\", \"default_starts\": {}}",
                         "progress_events": null, "identity": {"runtime_id": "ignored"}});
        let detail = execution_detail(row, json!(null));
        assert_eq!(detail["parameters"], json!({"query": "x", "default_starts": {}}));
        assert_eq!(detail["restarted_into"], Value::Null);
        assert_eq!(detail["identity"], Value::Null);
        assert_eq!(detail.get("progress_events"), Some(&Value::Null));
    }

    #[test]
    fn the_progress_log_comes_whole_decoded_or_as_resmon_kept_it() {
        let log = json!([{"stage": "a"}, {"stage": "b"}]);
        let stored = json!({"id": 1, "status": "running", "progress_events": log.to_string()});
        assert_eq!(execution_detail(stored, Value::Null)["progress_events"], log);
        let native = json!({"id": 1, "status": "running", "progress_events": log.clone()});
        assert_eq!(execution_detail(native, Value::Null)["progress_events"], log);
        let unreadable = json!({"id": 1, "status": "running", "progress_events": "not json"});
        assert_eq!(execution_detail(unreadable, Value::Null)["progress_events"], "not json");
        let absent = json!({"id": 1, "status": "running"});
        assert_eq!(execution_detail(absent, Value::Null)["progress_events"], Value::Null);
    }
}
