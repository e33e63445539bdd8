//! The fake's routes, after the guard: a handful answer from what the fake
//! remembers (health, routines, executions, profiles, runs and the queue), every
//! other one a recorded answer (`answers.rs`), doing the write it records.

use super::answers::{self, table};
use super::http::{Request, Response};
use super::state::{State, int, text};
use super::util::{fmt_sqlite, is_canonical_uuid4, now};
use serde_json::{Value, json};

/// Facts of this run of the backend that a route may need.
pub struct Ctx<'a> {
    pub runtime_id: &'a str,
    pub started_at: &'a str,
}

/// Every route the fake knows: the 44 pairs the MCP server reaches, the excluded ones
/// (so a test can prove they are never called) and a few neighbours.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/api/health"),
    ("POST", "/api/explorer/search"),
    ("GET", "/api/documents/{document_id}/similar"),
    ("GET", "/api/documents/{doc_id}/why"),
    ("GET", "/api/documents/{doc_id}/lifecycle"),
    ("GET", "/api/repositories/catalog"),
    ("GET", "/api/credentials"),
    ("PUT", "/api/credentials/{key_name}"),
    ("DELETE", "/api/credentials/{key_name}"),
    ("GET", "/api/routines"),
    ("POST", "/api/routines"),
    ("GET", "/api/routines/{routine_id}"),
    ("DELETE", "/api/routines/{routine_id}"),
    ("GET", "/api/routines/{routine_id}/coverage"),
    ("GET", "/api/routines/{routine_id}/deliveries"),
    ("POST", "/api/routines/{routine_id}/run"),
    ("POST", "/api/routines/{routine_id}/activate"),
    ("POST", "/api/routines/{routine_id}/deactivate"),
    ("GET", "/api/executions"),
    ("GET", "/api/executions/{exec_id}"),
    ("DELETE", "/api/executions/{exec_id}"),
    ("GET", "/api/executions/{exec_id}/references"),
    ("GET", "/api/executions/{exec_id}/search-record"),
    ("GET", "/api/executions/{exec_id}/progress/stream"),
    ("POST", "/api/executions/{exec_id}/restart"),
    ("POST", "/api/export/references"),
    ("GET", "/api/analytics/overview"),
    ("GET", "/api/analytics/publication-volume"),
    ("GET", "/api/analytics/source-contribution"),
    ("GET", "/api/analytics/keyword-contribution"),
    ("GET", "/api/analytics/routine-health"),
    ("GET", "/api/analytics/discovery-lag"),
    ("GET", "/api/watchdog"),
    ("GET", "/api/profiles"),
    ("POST", "/api/profiles"),
    ("GET", "/api/profiles/{profile_id}"),
    ("GET", "/api/profiles/{profile_id}/matches"),
    ("POST", "/api/search/sweep"),
    ("GET", "/api/settings/{group}"),
    ("PUT", "/api/settings/{group}"),
    ("POST", "/api/admin/{action}"),
    ("POST", "/api/service/install"),
    ("POST", "/api/service/uninstall"),
    ("POST", "/api/lifecycle/check"),
];

const SCHEMA_VERSION: i64 = 21;
const FLAGS: [&str; 5] =
    ["is_active", "email_enabled", "email_ai_summary_enabled", "ai_enabled", "notify_on_complete"];

/// Whether `path` fits `pattern`, a `{name}` segment standing for any one non-empty segment.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let (mut want, mut got) = (pattern.split('/'), path.split('/'));
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a.starts_with('{') && a.ends_with('}') && !b.is_empty() => {}
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

/// Answers a request; a path or method no route serves gets the web framework's 404 or 405.
pub fn dispatch(st: &mut State, ctx: &Ctx, req: &Request) -> Response {
    let lacks =
        |method: &str, pattern: &str| st.lacking.iter().any(|(m, p)| m == method && path_matches(p, pattern));
    let fits: Vec<&(&str, &str)> =
        ROUTES.iter().filter(|(m, p)| path_matches(p, &req.path) && !lacks(m, p)).collect();
    let Some((method, pattern)) = fits.iter().find(|(m, _)| *m == req.method) else {
        let status = if fits.is_empty() { 404 } else { 405 };
        return Response::detail(status, if fits.is_empty() { "Not Found" } else { "Method Not Allowed" });
    };
    let id = req.path.split('/').nth(3).and_then(|s| s.parse::<i64>().ok()).unwrap_or(-1);
    match (*method, *pattern) {
        ("GET", "/api/health") => health(st, ctx, req),
        ("GET", "/api/routines") => routines_list(st),
        ("GET", "/api/routines/{routine_id}") => routine_detail(st, id),
        ("POST", "/api/routines/{routine_id}/run") => routine_run(st, ctx, id),
        ("POST", "/api/routines/{routine_id}/activate") => routine_set_active(st, id, true),
        ("POST", "/api/routines/{routine_id}/deactivate") => routine_set_active(st, id, false),
        ("GET", "/api/executions") => executions_list(st, req),
        ("GET", "/api/executions/{exec_id}") => execution_detail(st, ctx, req, id),
        ("GET", "/api/profiles") => profiles_list(st, req),
        ("GET", "/api/profiles/{profile_id}") => {
            match st.profiles.iter().find(|p| int(p, "id") == Some(id)) {
                Some(p) => Response::json(200, p),
                None => Response::detail(404, "That profile does not exist."),
            }
        }
        ("POST", "/api/search/sweep") => sweep(st, ctx, req),
        ("GET", "/api/executions/{exec_id}/references") if refuses_json(st, req, id) => {
            if st.json_refused_by_validation {
                let problem = json!({"type": "enum", "loc": ["query", "format"], "input": "json",
                    "msg": "Input should be 'bibtex', 'csv' or 'ris'", "ctx": {"expected": "'bibtex', 'csv' or 'ris'"}});
                return Response::json(422, &json!({"detail": [problem]}));
            }
            Response::detail(400, "Unknown export format 'json'. Expected one of: bibtex, csv, json, ris.")
        }
        _ => recorded(st, req),
    }
}

/// An older release refuses the json export for a run that exists (one that does not is
/// its 404 first), or, its `format` an enum, for any run id before it looks it up.
fn refuses_json(st: &State, req: &Request, id: i64) -> bool {
    st.older_release
        && req.query_param("format") == Some("json")
        && (st.json_refused_by_validation || st.execution(id).is_some())
}

/// The recorded answer, after doing what it records: a created routine or profile is
/// stored (a fresh id, timestamps), a settings write changes what the group reads.
fn recorded(st: &mut State, req: &Request) -> Response {
    let Some(i) = answers::find(&req.method, &req.path, &req.query_pairs, &req.body, &st.context()) else {
        return answers::unrecorded(req);
    };
    let entry = &table()[i].raw;
    if let Some(patch) = entry.get("patch") {
        let side_effects = st.settings_side_effects.iter().filter(|(path, _)| *path == req.path);
        let side_effects: Vec<Value> = side_effects.map(|(_, patch)| patch.clone()).collect();
        let current = st.answer_mut(&req.path);
        answers::merge(current, patch);
        for side_effect in &side_effects {
            answers::merge(current, side_effect);
        }
    }
    let mut body = st.edits.get(&i).or(entry.get("json")).cloned();
    if let (Some(kind), Some(answer)) = (entry["creates"].as_str(), body.as_mut()) {
        let (next, rows) = match kind {
            "profile" => (&mut st.next_profile_id, &mut st.profiles),
            _ => (&mut st.next_routine_id, &mut st.routines),
        };
        answer["id"] = json!(*next);
        *next += 1;
        // A profile is answered as stored; a routine's answer is its id and name.
        let mut row = entry.get("row").unwrap_or(answer).clone();
        row["id"] = answer["id"].clone();
        row["created_at"] = Value::String(fmt_sqlite(now().0));
        row["updated_at"] = row["created_at"].clone();
        if kind == "profile" {
            *answer = row.clone();
        }
        rows.push(row);
    }
    answers::response(entry, body.as_ref())
}

/// The sort key resmon orders rows by: a column, then the id.
fn newest<'a>(row: &'a Value, column: &str) -> (Option<&'a str>, Option<i64>) {
    (text(row, column), int(row, "id"))
}

fn identity(ctx: &Ctx) -> Value {
    json!({"contract_version": 1, "runtime_id": ctx.runtime_id, "schema_version": SCHEMA_VERSION,
           "corpus_id": null, "build_id": null})
}

/// The `expected_runtime_id` rule, shared by health and execution detail.
fn check_expected(st: &State, ctx: &Ctx, req: &Request) -> Option<Response> {
    let expected = req.query_param("expected_runtime_id").filter(|_| st.reports_identity)?;
    if !is_canonical_uuid4(expected) {
        return Some(Response::detail(422, "expected_runtime_id must be a canonical lowercase UUID4"));
    }
    let message = "This request reached a different running app.";
    let mismatch = json!({"detail": {"code": "instance_mismatch", "message": message,
                                     "expected_runtime_id": expected, "actual_runtime_id": ctx.runtime_id}});
    (expected != ctx.runtime_id).then(|| Response::json(409, &mismatch))
}

fn health(st: &State, ctx: &Ctx, req: &Request) -> Response {
    if let Some(r) = check_expected(st, ctx, req) {
        return r;
    }
    let jobs = st.routines.iter().filter(|r| int(r, "is_active") == Some(1)).count();
    let mut body = json!({"status": "ok", "identity": identity(ctx), "pid": std::process::id(),
        "started_at": ctx.started_at, "version": st.version, "embeddings": {"extension": "v0.1.9", "reason": null},
        "schema_version": SCHEMA_VERSION, "scheduler": {"running": true, "jobs": jobs},
        "daemon": {"lock_present": false, "running": false, "pid": null, "port": null}});
    if !st.reports_identity {
        body.as_object_mut().expect("an object").shift_remove("identity");
    }
    Response::json(200, &body)
}

fn missed_summary(st: &State, routine_id: i64) -> Value {
    let rows: Vec<&Value> =
        st.missed_fires.iter().filter(|m| int(m, "routine_id") == Some(routine_id)).collect();
    let last = rows.iter().filter_map(|m| text(m, "due_at_utc")).max();
    json!({"count": rows.len(), "last_due_at_utc": last})
}

fn routines_list(st: &State) -> Response {
    let mut rows: Vec<&Value> = st.routines.iter().collect();
    rows.sort_by(|a, b| newest(b, "created_at").cmp(&newest(a, "created_at")));
    let out: Vec<Value> = rows
        .into_iter()
        .map(|r| {
            let id = int(r, "id").unwrap_or(0);
            let mut row = r.clone();
            row["last_execution"] = r.get("last_executed_at").cloned().unwrap_or(Value::Null);
            let runs = st.executions.iter().filter(|e| int(e, "routine_id") == Some(id));
            let last = runs.max_by(|a, b| newest(a, "start_time").cmp(&newest(b, "start_time")));
            row["last_status"] = last.map_or(Value::Null, |e| e["status"].clone());
            row["missed_fires"] = missed_summary(st, id);
            row
        })
        .collect();
    Response::json(200, &Value::Array(out))
}

fn routine_detail(st: &State, id: i64) -> Response {
    let Some(r) = st.routine(id) else { return Response::detail(404, "Routine not found") };
    let mut row = r.clone();
    for f in FLAGS {
        row[f] = Value::Bool(row[f].as_i64().is_some_and(|n| n != 0) || row[f] == true);
    }
    row["missed_fires"] = missed_summary(st, id);
    let mut details: Vec<Value> =
        st.missed_fires.iter().filter(|m| int(m, "routine_id") == Some(id)).cloned().collect();
    details.sort_by(|a, b| newest(a, "due_at_utc").cmp(&newest(b, "due_at_utc")));
    row["missed_fire_details"] = Value::Array(details);
    Response::json(200, &row)
}

/// A run now, a place in the queue when resmon runs as many as it allows, or a
/// conflict (the routine is running already, or the queue is full).
fn routine_run(st: &mut State, ctx: &Ctx, id: i64) -> Response {
    let Some(r) = st.routine(id) else { return Response::detail(404, "Routine not found") };
    let was_inactive = r["is_active"] != 1;
    let params: Value = text(r, "parameters").and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default();
    if let Some(running) = st.running_execution_of(id) {
        let why = format!(
            "This routine is already running as execution {running}. Wait for that run to finish, or cancel it, before starting another."
        );
        let conflict =
            Response::detail(409, &why).with_header("x-resmon-conflict", "routine_already_running");
        return conflict.with_header("x-resmon-execution-id", &running.to_string());
    }
    if st.running_count >= st.run_limit {
        if st.queue.len() >= st.queue_limit {
            let why = "resmon is already running as many executions as it allows at once, and its queue is full. Wait for one to finish and try again.";
            return Response::detail(409, why);
        }
        st.queue.push(id);
        let pos = st.queue.len();
        let detail = format!(
            "resmon is already running as many runs as it allows. This one is queued (position {pos}) and will start on its own when a slot frees; there is nothing more to do."
        );
        let queued = json!({"execution_id": null, "queued": true, "queue_position": pos, "routine_id": id,
                            "was_inactive": was_inactive, "detail": detail});
        return Response::json(202, &queued);
    }
    let exec_id = st.start_execution("automated_sweep", Some(id), &params, None, ctx.runtime_id);
    let recorded =
        |m: &&mut Value| int(m, "routine_id") == Some(id) && text(m, "disposition") == Some("recorded");
    let late: Vec<&mut Value> = st.missed_fires.iter_mut().filter(recorded).collect();
    let marked = late.len();
    late.into_iter().for_each(|m| m["disposition"] = json!("ran_late"));
    let detail = if was_inactive {
        "This routine is not scheduled; it was run once because you asked for it."
    } else {
        "The routine started. Poll the execution for progress."
    };
    let started = json!({"execution_id": exec_id, "routine_id": id, "was_inactive": was_inactive,
                         "missed_fires_marked_ran_late": marked, "detail": detail});
    Response::json(200, &started)
}

fn routine_set_active(st: &mut State, id: i64, active: bool) -> Response {
    let Some(r) = st.routine_mut(id) else { return Response::detail(404, "Routine not found") };
    r["is_active"] = json!(i64::from(active));
    r["updated_at"] = Value::String(fmt_sqlite(now().0));
    Response::json(200, &json!({"id": id, "is_active": active}))
}

fn executions_list(st: &State, req: &Request) -> Response {
    let number =
        |name, default: i64| req.query_param(name).and_then(|v| v.trim().parse().ok()).unwrap_or(default);
    let (limit, offset) = (number("limit", 50).max(0) as usize, number("offset", 0).max(0) as usize);
    let kind = req.query_param("type");
    let mut rows: Vec<&Value> =
        st.executions.iter().filter(|e| kind.is_none_or(|k| text(e, "execution_type") == Some(k))).collect();
    rows.sort_by(|a, b| newest(b, "start_time").cmp(&newest(a, "start_time")));
    let page: Vec<Value> = rows.into_iter().skip(offset).take(limit).cloned().collect();
    Response::json(200, &Value::Array(page))
}

fn execution_detail(st: &State, ctx: &Ctx, req: &Request, id: i64) -> Response {
    if let Some(r) = check_expected(st, ctx, req) {
        return r;
    }
    let Some(e) = st.execution(id) else { return Response::detail(404, "Execution not found") };
    let mut out = e.clone();
    if st.reports_identity {
        out["identity"] = identity(ctx);
    }
    let into = st.executions.iter().filter(|x| int(x, "restarted_from") == Some(id));
    out["restarted_into"] = json!(into.filter_map(|x| int(x, "id")).collect::<Vec<_>>());
    Response::json(200, &out)
}

/// A sweep starts at once, or is refused (429) while resmon runs as many as it
/// allows; a `request_id` already used answers the run it started.
fn sweep(st: &mut State, ctx: &Ctx, req: &Request) -> Response {
    let mut params: Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let request_id = params.as_object_mut().and_then(|p| p.shift_remove("request_id"));
    let request_id = request_id.and_then(|r| r.as_str().map(str::to_string));
    if let Some(existing) = st.sweep_duplicate_of {
        return Response::json(200, &json!({"execution_id": existing, "duplicate": true}));
    }
    if let Some(existing) = request_id.as_ref().and_then(|r| st.sweep_request_ids.get(r)) {
        return Response::json(200, &json!({"execution_id": existing, "duplicate": true}));
    }
    if st.running_count >= st.run_limit {
        let why = format!(
            "resmon is already running the maximum of {} concurrent executions. Wait for one to finish or raise the limit in Settings → Advanced.",
            st.run_limit
        );
        return Response::detail(429, &why).with_header("retry-after", "5");
    }
    let id = st.start_execution("deep_sweep", None, &params, request_id.clone(), ctx.runtime_id);
    if let Some(rid) = request_id {
        st.sweep_request_ids.insert(rid, id);
    }
    Response::json(200, &json!({"execution_id": id}))
}

fn profiles_list(st: &State, req: &Request) -> Response {
    let kind = req.query_param("kind");
    // An older release has no group profiles, and says what it takes instead.
    if st.older_release && kind == Some("group") {
        return Response::detail(400, "kind must be person or institution");
    }
    let mut rows: Vec<&Value> =
        st.profiles.iter().filter(|p| kind.is_none_or(|k| text(p, "kind") == Some(k))).collect();
    rows.sort_by(|a, b| newest(a, "display_name").cmp(&newest(b, "display_name")));
    Response::json(200, &json!({"profiles": rows}))
}
