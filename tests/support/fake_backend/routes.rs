//! The fake's routes: the 44 method+path pairs the MCP server reaches, the
//! excluded ones (served so a test can prove they are never called), and a
//! few neighbours. Everything here runs after the guard has let a request in.

use super::export;
use super::http::{Request, Response};
use super::state::{State, int, text};
use super::util::{fmt_date, fmt_iso_z, fmt_sqlite, is_canonical_uuid4, now, py_json, py_str, py_truthy};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Per-process facts a route may need.
pub struct Ctx<'a> {
    pub port: u16,
    pub runtime_id: &'a str,
    pub started_at: &'a str,
    pub pid: u32,
}

/// Every route the fake knows; `{name}` stands for one path segment.
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

/// The admin actions that exist (all excluded from the tool surface).
const ADMIN_ACTIONS: [&str; 9] = [
    "erase-ai-keys",
    "erase-repo-keys",
    "erase-configs",
    "erase-executions",
    "erase-execution-data",
    "erase-app-data",
    "erase-corpus",
    "reset-settings",
    "factory-reset",
];

/// Settings groups and their keys, in the order GET lists them.
pub const SETTINGS_GROUPS: &[(&str, &[&str])] = &[
    (
        "ai",
        &[
            "ai_provider",
            "ai_model",
            "ai_local_model",
            "ai_summary_length",
            "ai_tone",
            "ai_extraction_goals",
            "ai_temperature",
            "ai_show_audit_prefix",
            "ai_custom_base_url",
            "ai_custom_header_prefix",
            "ai_default_models",
            "ai_chain",
            "ai_local_endpoint",
            "ai_cli_path",
            "ai_subscription_doc_cap",
            "ai_effort",
        ],
    ),
    ("assistant", &["assistant_runtime", "assistant_provider", "assistant_model", "assistant_effort"]),
    ("email", &["smtp_server", "smtp_port", "smtp_username", "smtp_from", "smtp_to"]),
    (
        "embeddings",
        &[
            "embedding_enabled",
            "embedding_provider",
            "embedding_model",
            "embedding_endpoint",
            "embedding_base_url",
            "embedding_batch_size",
            "embedding_dims",
            "embedding_input_limit",
        ],
    ),
    ("storage", &["pdf_policy", "txt_policy", "archive_after_days", "export_directory"]),
    ("notifications", &["notify_manual", "notify_automatic_mode"]),
    ("cloud", &["cloud_provider", "cloud_auto_backup"]),
];

const COUNT_CAP: usize = 10_000;
const FLAGS: [&str; 5] =
    ["is_active", "email_enabled", "email_ai_summary_enabled", "ai_enabled", "notify_on_complete"];
const LOCALLY_FILTERED: [&str; 2] = ["biorxiv", "medrxiv"];
const NO_MODEL_SENTENCE: &str = "No embedding model is configured, so resmon cannot rank by meaning. Set one up in Settings → AI → Embeddings.";
const ENTITY_WARNING: &str = "None of the sources this routine names can be asked about an author, so it will find nothing until you add one that can. Each run will say so on the source's row.";

/// Returns early with the error answer of a `Result<_, Response>`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(r) => return r,
        }
    };
}

fn match_path<'p>(pattern: &'static str, path: &'p str) -> Option<Vec<(&'static str, &'p str)>> {
    let ps: Vec<&'static str> = pattern.split('/').collect();
    let xs: Vec<&'p str> = path.split('/').collect();
    if ps.len() != xs.len() {
        return None;
    }
    let mut params = Vec::new();
    for (p, x) in ps.iter().zip(xs.iter()) {
        if let Some(name) = p.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if x.is_empty() {
                return None;
            }
            params.push((name, *x));
        } else if p != x {
            return None;
        }
    }
    Some(params)
}

/// Whether some route serves this path (with any method).
pub fn known_path(path: &str) -> bool {
    ROUTES.iter().any(|(_, p)| match_path(p, path).is_some())
}

/// Answers one request that passed the guard.
pub fn dispatch(st: &mut State, ctx: &Ctx, req: &Request) -> Response {
    let mut path_known = false;
    for (method, pattern) in ROUTES {
        if let Some(params) = match_path(pattern, &req.path) {
            if *method == req.method {
                return route(st, ctx, req, method, pattern, &params);
            }
            path_known = true;
        }
    }
    if path_known { Response::detail(405, "Method Not Allowed") } else { Response::detail(404, "Not Found") }
}

fn path_int(params: &[(&str, &str)], i: usize) -> Result<i64, Response> {
    let (name, raw) = params[i];
    raw.parse::<i64>().map_err(|_| Response::int_parsing("path", name, raw))
}

fn route(
    st: &mut State,
    ctx: &Ctx,
    req: &Request,
    method: &str,
    pattern: &str,
    params: &[(&str, &str)],
) -> Response {
    match (method, pattern) {
        ("GET", "/api/health") => health(st, ctx, req),
        ("POST", "/api/explorer/search") => explorer_search(st, req),
        ("GET", "/api/documents/{document_id}/similar") => similar(st, req, tri!(path_int(params, 0))),
        ("GET", "/api/documents/{doc_id}/why") => why(st, tri!(path_int(params, 0))),
        ("GET", "/api/documents/{doc_id}/lifecycle") => lifecycle(st, tri!(path_int(params, 0))),
        ("GET", "/api/repositories/catalog") => Response::json(200, &Value::Array(st.catalog.clone())),
        ("GET", "/api/credentials") => Response::json(200, &st.credentials),
        ("PUT", "/api/credentials/{key_name}") => {
            Response::json(200, &json!({"success": true, "key_name": params[0].1}))
        }
        ("DELETE", "/api/credentials/{key_name}") => {
            Response::json(200, &json!({"success": true, "deleted": params[0].1}))
        }
        ("GET", "/api/routines") => routines_list(st),
        ("POST", "/api/routines") => routine_create(st, req),
        ("GET", "/api/routines/{routine_id}") => routine_detail(st, tri!(path_int(params, 0))),
        ("DELETE", "/api/routines/{routine_id}") => {
            // Excluded from the tool surface; answered but not acted on.
            let id = tri!(path_int(params, 0));
            if st.routine(id).is_none() {
                return Response::detail(404, "Routine not found");
            }
            Response::json(200, &json!({"success": true}))
        }
        ("GET", "/api/routines/{routine_id}/coverage") => routine_coverage(st, tri!(path_int(params, 0))),
        ("GET", "/api/routines/{routine_id}/deliveries") => {
            routine_deliveries(st, req, tri!(path_int(params, 0)))
        }
        ("POST", "/api/routines/{routine_id}/run") => routine_run(st, ctx, tri!(path_int(params, 0))),
        ("POST", "/api/routines/{routine_id}/activate") => {
            routine_set_active(st, tri!(path_int(params, 0)), true)
        }
        ("POST", "/api/routines/{routine_id}/deactivate") => {
            routine_set_active(st, tri!(path_int(params, 0)), false)
        }
        ("GET", "/api/executions") => executions_list(st, req),
        ("GET", "/api/executions/{exec_id}") => {
            let id = tri!(path_int(params, 0));
            execution_detail(st, ctx, req, id)
        }
        ("DELETE", "/api/executions/{exec_id}") => {
            let id = tri!(path_int(params, 0));
            if st.execution(id).is_none() {
                return Response::detail(404, "Execution not found");
            }
            Response::json(200, &json!({"success": true}))
        }
        ("GET", "/api/executions/{exec_id}/references") => {
            execution_references(st, req, tri!(path_int(params, 0)))
        }
        ("GET", "/api/executions/{exec_id}/search-record") => {
            search_record(st, req, tri!(path_int(params, 0)))
        }
        ("GET", "/api/executions/{exec_id}/progress/stream") => {
            let id = tri!(path_int(params, 0));
            let status = st.execution(id).and_then(|e| text(e, "status")).unwrap_or("unknown").to_string();
            let body = format!("event: status\ndata: {}\n\n", json!({"execution_id": id, "status": status}));
            Response::bytes(200, "text/event-stream; charset=utf-8", body)
        }
        ("POST", "/api/executions/{exec_id}/restart") => {
            execution_restart(st, ctx, tri!(path_int(params, 0)))
        }
        ("POST", "/api/export/references") => export_references(st, req),
        ("GET", "/api/analytics/overview") => analytics_overview(st),
        ("GET", "/api/analytics/publication-volume") => publication_volume(st, req),
        ("GET", "/api/analytics/source-contribution") => {
            Response::json(200, &st.analytics["source-contribution"])
        }
        ("GET", "/api/analytics/keyword-contribution") => keyword_contribution(st, req),
        ("GET", "/api/analytics/routine-health") => Response::json(200, &st.analytics["routine-health"]),
        ("GET", "/api/analytics/discovery-lag") => Response::json(200, &st.analytics["discovery-lag"]),
        ("GET", "/api/watchdog") => Response::json(200, &st.watchdog),
        ("GET", "/api/profiles") => profiles_list(st, req),
        ("POST", "/api/profiles") => profile_create(st, req),
        ("GET", "/api/profiles/{profile_id}") => {
            let id = tri!(path_int(params, 0));
            match st.profile(id) {
                Some(p) => Response::json(200, &profile_out(p)),
                None => Response::detail(404, "That profile does not exist."),
            }
        }
        ("GET", "/api/profiles/{profile_id}/matches") => profile_matches(st, req, tri!(path_int(params, 0))),
        ("POST", "/api/search/sweep") => sweep(st, ctx, req),
        ("GET", "/api/settings/{group}") => settings_get(st, params[0].1),
        ("PUT", "/api/settings/{group}") => settings_put(st, req, params[0].1),
        ("POST", "/api/admin/{action}") => {
            if ADMIN_ACTIONS.contains(&params[0].1) {
                Response::json(200, &json!({"success": true, "action": params[0].1}))
            } else {
                Response::detail(404, "Not Found")
            }
        }
        ("POST", "/api/service/install") | ("POST", "/api/service/uninstall") => {
            Response::json(200, &json!({"success": true}))
        }
        ("POST", "/api/lifecycle/check") => {
            Response::json(200, &json!({"started": true, "detail": "Lifecycle check started."}))
        }
        _ => Response::detail(404, "Not Found"),
    }
}

// ====================================================================== request helpers

fn body_object(req: &Request) -> Result<Map<String, Value>, Response> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Err(Response::validation(&["body"], "missing", "Field required", Value::Null));
    }
    let v: Value = serde_json::from_slice(&req.body).map_err(|e| {
        Response::json(
            422,
            &json!({"detail": [{"type": "json_invalid", "loc": ["body", e.column()],
                                "msg": "JSON decode error", "input": {}, "ctx": {"error": e.to_string()}}]}),
        )
    })?;
    match v {
        Value::Object(m) => Ok(m),
        other => Err(Response::validation(
            &["body"],
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
            other,
        )),
    }
}

fn missing(key: &str, body: &Map<String, Value>) -> Response {
    Response::validation(&["body", key], "missing", "Field required", Value::Object(body.clone()))
}

fn opt_str(b: &Map<String, Value>, key: &str) -> Result<Option<String>, Response> {
    match b.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Response::validation(
            &["body", key],
            "string_type",
            "Input should be a valid string",
            other.clone(),
        )),
    }
}

fn opt_int(b: &Map<String, Value>, key: &str) -> Result<Option<i64>, Response> {
    match b.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_i64().is_some() => Ok(n.as_i64()),
        Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => Ok(s.trim().parse().ok()),
        Some(other) => Err(Response::validation(
            &["body", key],
            "int_type",
            "Input should be a valid integer",
            other.clone(),
        )),
    }
}

fn opt_bool(b: &Map<String, Value>, key: &str) -> Result<Option<bool>, Response> {
    let bad = |v: &Value| {
        Response::validation(&["body", key], "bool_type", "Input should be a valid boolean", v.clone())
    };
    match b.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(x)) => Ok(Some(*x)),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(0) => Ok(Some(false)),
            Some(1) => Ok(Some(true)),
            _ => Err(bad(&Value::Number(n.clone()))),
        },
        Some(Value::String(s)) => parse_bool(s).map(Some).ok_or_else(|| bad(&Value::String(s.clone()))),
        Some(other) => Err(bad(other)),
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "t" | "y" => Some(true),
        "false" | "0" | "no" | "off" | "f" | "n" => Some(false),
        _ => None,
    }
}

fn str_list(b: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, Response> {
    match b.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for (i, x) in items.iter().enumerate() {
                match x {
                    Value::String(s) => out.push(s.clone()),
                    other => {
                        return Err(Response::json(
                            422,
                            &json!({"detail": [{"type": "string_type", "loc": ["body", key, i],
                                                "msg": "Input should be a valid string", "input": other}]}),
                        ));
                    }
                }
            }
            Ok(Some(out))
        }
        Some(other) => Err(Response::validation(
            &["body", key],
            "list_type",
            "Input should be a valid list",
            other.clone(),
        )),
    }
}

fn int_list(b: &Map<String, Value>, key: &str) -> Result<Option<Vec<i64>>, Response> {
    match b.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for (i, x) in items.iter().enumerate() {
                match x.as_i64() {
                    Some(n) => out.push(n),
                    None => {
                        return Err(Response::json(
                            422,
                            &json!({"detail": [{"type": "int_type", "loc": ["body", key, i],
                                                "msg": "Input should be a valid integer", "input": x}]}),
                        ));
                    }
                }
            }
            Ok(Some(out))
        }
        Some(other) => Err(Response::validation(
            &["body", key],
            "list_type",
            "Input should be a valid list",
            other.clone(),
        )),
    }
}

fn query_int(req: &Request, name: &str) -> Result<Option<i64>, Response> {
    match req.query_param(name) {
        None => Ok(None),
        Some(raw) => {
            raw.trim().parse::<i64>().map(Some).map_err(|_| Response::int_parsing("query", name, raw))
        }
    }
}

fn query_bool(req: &Request, name: &str) -> Result<Option<bool>, Response> {
    match req.query_param(name) {
        None => Ok(None),
        Some(raw) => parse_bool(raw).map(Some).ok_or_else(|| {
            Response::validation(
                &["query", name],
                "bool_parsing",
                "Input should be a valid boolean, unable to interpret input",
                Value::String(raw.to_string()),
            )
        }),
    }
}

// ====================================================================== health and identity

fn identity(st: &State, ctx: &Ctx) -> Value {
    json!({"contract_version": 1, "runtime_id": ctx.runtime_id, "schema_version": st.schema_version,
           "corpus_id": null, "build_id": null})
}

/// The `expected_runtime_id` rule, shared by health and execution detail.
fn check_expected(ctx: &Ctx, req: &Request) -> Option<Response> {
    let (_, expected) = req.query_pairs.iter().find(|(k, _)| k == "expected_runtime_id")?;
    if !is_canonical_uuid4(expected) {
        return Some(Response::detail(422, "expected_runtime_id must be a canonical lowercase UUID4"));
    }
    if expected != ctx.runtime_id {
        return Some(Response::json(
            409,
            &json!({"detail": {"code": "instance_mismatch",
                               "message": "This request reached a different running app.",
                               "expected_runtime_id": expected,
                               "actual_runtime_id": ctx.runtime_id}}),
        ));
    }
    None
}

fn health(st: &State, ctx: &Ctx, req: &Request) -> Response {
    if st.reports_identity
        && let Some(r) = check_expected(ctx, req)
    {
        return r;
    }
    let embeddings = if st.vector_extension_loadable {
        json!({"extension": "v0.1.9", "reason": null})
    } else {
        json!({"extension": null,
               "reason": "sqlite-vec did not load on this machine (OperationalError: not authorized)."})
    };
    let jobs = st.routines.iter().filter(|r| int(r, "is_active") == Some(1)).count();
    let mut body = json!({
            "status": "ok",
            "identity": identity(st, ctx),
            "pid": ctx.pid,
            "started_at": ctx.started_at,
            "version": st.version,
            "embeddings": embeddings,
            "schema_version": st.schema_version,
            "scheduler": {"running": true, "jobs": jobs},
            "daemon": {"lock_present": false, "running": false, "pid": null, "port": null}
    });
    if !st.reports_identity {
        body.as_object_mut().expect("an object").shift_remove("identity");
    }
    Response::json(200, &body)
}

// ====================================================================== explorer and similarity

fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

/// The AND-of-words text filter over title and abstract; the last word matches as a prefix.
fn text_matches(doc: &Value, query: &str) -> bool {
    let words = tokens(query);
    if words.is_empty() {
        return true;
    }
    let hay =
        tokens(&format!("{} {}", text(doc, "title").unwrap_or(""), text(doc, "abstract").unwrap_or("")));
    words.iter().enumerate().all(|(i, w)| {
        if i + 1 == words.len() {
            hay.iter().any(|t| t.starts_with(w.as_str()))
        } else {
            hay.iter().any(|t| t == w)
        }
    })
}

fn date_ok(doc: &Value, from: Option<&str>, to: Option<&str>) -> bool {
    let date = text(doc, "publication_date");
    if let Some(f) = from {
        match date {
            Some(d) if d >= f => {}
            _ => return false,
        }
    }
    if let Some(t) = to {
        match date {
            Some(d) if d <= t => {}
            _ => return false,
        }
    }
    true
}

fn any_contains(field: Option<&str>, wanted: &[String]) -> bool {
    if wanted.is_empty() {
        return true;
    }
    let f = field.unwrap_or("").to_lowercase();
    wanted.iter().any(|w| f.contains(&w.to_lowercase()))
}

fn newest_key(d: &Value) -> (String, i64) {
    (text(d, "pub_sort").unwrap_or("").to_string(), int(d, "id").unwrap_or(0))
}

fn sort_newest(rows: &mut [&Value]) {
    rows.sort_by_key(|d| std::cmp::Reverse(newest_key(d)));
}

fn cosine_distance(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    1.0 - dot / (na * nb)
}

/// A distance as this fake answers it: rounded to 4 decimals for the short
/// corpus, whose tests compare exact values, and at full precision for the
/// realistic slice, as a vector index answers (the server does the rounding).
fn served_distance(st: &State, x: f64) -> f64 {
    if st.full_precision_distances { x } else { round4(x) }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// A stand-in "embedding" of a phrase: one count per topic axis.
fn query_vector(st: &State, query: &str) -> Vec<f64> {
    let words = tokens(query);
    let mut v: Vec<f64> =
        st.query_axes.iter().map(|axis| words.iter().filter(|w| axis.contains(w)).count() as f64).collect();
    if v.iter().all(|x| *x == 0.0) {
        v = vec![1.0; v.len().max(1)];
    }
    v
}

/// The configured embedding lane's model, or None when no lane is configured.
fn lane_model(st: &State) -> Option<String> {
    let enabled = st.setting("embeddings", "embedding_enabled").to_ascii_lowercase();
    let model = st.setting("embeddings", "embedding_model");
    let provider = st.setting("embeddings", "embedding_provider");
    if matches!(enabled.as_str(), "1" | "true" | "yes") && !model.is_empty() && !provider.is_empty() {
        Some(model)
    } else {
        None
    }
}

fn similarity_decline(st: &State, query: &str) -> Option<String> {
    if !st.embeddings_configured || lane_model(st).is_none() {
        return Some(NO_MODEL_SENTENCE.into());
    }
    if let Some(r) = &st.similarity_decline_reason {
        return Some(r.clone());
    }
    if !st.vector_extension_loadable {
        return Some(
            "The vector extension could not be loaded on this machine, so resmon cannot rank by meaning."
                .into(),
        );
    }
    if query.trim().is_empty() {
        return Some("There is no phrase to rank by, so resmon cannot rank by meaning.".into());
    }
    None
}

fn explorer_search(st: &State, req: &Request) -> Response {
    let b = tri!(body_object(req));
    let query = tri!(opt_str(&b, "query")).unwrap_or_default();
    let limit = tri!(opt_int(&b, "limit")).unwrap_or(50).clamp(1, 200) as usize;
    let sort = tri!(opt_str(&b, "sort")).unwrap_or_else(|| "newest".into());
    let cursor = tri!(opt_str(&b, "cursor"));
    let sources = tri!(str_list(&b, "sources")).unwrap_or_default();
    let date_from = tri!(opt_str(&b, "date_from"));
    let date_to = tri!(opt_str(&b, "date_to"));
    let authors = tri!(str_list(&b, "authors")).unwrap_or_default();
    let categories = tri!(str_list(&b, "categories")).unwrap_or_default();
    let _include = tri!(str_list(&b, "include"));

    let structured: Vec<&Value> = st
        .documents
        .iter()
        .filter(|d| {
            (sources.is_empty() || sources.iter().any(|s| Some(s.as_str()) == text(d, "source_repository")))
                && date_ok(d, date_from.as_deref(), date_to.as_deref())
                && any_contains(text(d, "authors"), &authors)
                && any_contains(text(d, "categories"), &categories)
        })
        .collect();

    let mut declined = None;
    if sort == "similarity" {
        match similarity_decline(st, &query) {
            Some(why) => declined = Some(why),
            None => return similarity_page(st, &query, structured, limit, cursor.as_deref()),
        }
    }

    // Newest first, keyset-paged on (pub_sort, id).
    let mut rows: Vec<&Value> = structured.into_iter().filter(|d| text_matches(d, &query)).collect();
    sort_newest(&mut rows);
    let total = rows.len();
    if let Some(c) = cursor.as_deref() {
        let Some((date, id_text)) = c.rsplit_once('|') else {
            return Response::detail(400, &format!("Malformed cursor: '{c}'"));
        };
        let Ok(cid) = id_text.parse::<i64>() else {
            return Response::detail(400, &format!("Malformed cursor: '{c}'"));
        };
        let key = (date.to_string(), cid);
        rows.retain(|d| newest_key(d) < key);
    }
    let has_more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = if has_more {
        rows.last().map(|d| {
            let (p, i) = newest_key(d);
            Value::String(format!("{p}|{i}"))
        })
    } else {
        None
    };
    let mut out = json!({
        "results": rows.iter().map(|d| (*d).clone()).collect::<Vec<_>>(),
        "next_cursor": next_cursor,
        "has_more": has_more,
        "total": total.min(COUNT_CAP),
        "total_is_capped": total > COUNT_CAP,
        "count_cap": COUNT_CAP,
        "used_full_text_index": !tokens(&query).is_empty(),
        "page_size": limit,
        "sort": "newest"
    });
    if let Some(why) = declined {
        out["similarity_unavailable"] = Value::String(why);
    }
    Response::json(200, &out)
}

fn similarity_page(
    st: &State,
    query: &str,
    rows: Vec<&Value>,
    limit: usize,
    cursor: Option<&str>,
) -> Response {
    let qv = query_vector(st, query);
    let mut ranked: Vec<(f64, &Value)> = Vec::new();
    let mut unranked: Vec<&Value> = Vec::new();
    for d in rows {
        match int(d, "id").and_then(|id| st.vectors.get(&id)) {
            Some(v) => ranked.push((served_distance(st, cosine_distance(&qv, v)), d)),
            None => unranked.push(d),
        }
    }
    ranked.sort_by(|a, b| {
        a.0.partial_cmp(&b.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| int(b.1, "id").cmp(&int(a.1, "id")))
    });
    sort_newest(&mut unranked);
    let (ranked_count, unranked_count) = (ranked.len(), unranked.len());
    let all: Vec<Value> = ranked
        .into_iter()
        .map(|(dist, d)| {
            let mut x = d.clone();
            x["distance"] = json!(dist);
            x
        })
        .chain(unranked.into_iter().map(|d| {
            let mut x = d.clone();
            x["distance"] = Value::Null;
            x
        }))
        .collect();
    let total = all.len();
    let offset = cursor.and_then(|c| c.trim().parse::<usize>().ok()).unwrap_or(0);
    let end = (offset + limit).min(total);
    let page: Vec<Value> = if offset < total { all[offset..end].to_vec() } else { Vec::new() };
    let has_more = end < total;
    Response::json(
        200,
        &json!({
            "results": page,
            "next_cursor": if has_more { Value::String(end.to_string()) } else { Value::Null },
            "has_more": has_more,
            "total": total.min(COUNT_CAP),
            "total_is_capped": total > COUNT_CAP,
            "count_cap": COUNT_CAP,
            "used_full_text_index": false,
            "page_size": limit,
            "sort": "similarity",
            "ranked_count": ranked_count,
            "unranked_count": unranked_count,
            "model": lane_model(st).unwrap_or_default()
        }),
    )
}

fn similar(st: &State, req: &Request, id: i64) -> Response {
    let k = tri!(query_int(req, "k")).unwrap_or(10).clamp(1, 50) as usize;
    let model = lane_model(st).or_else(|| {
        let m = st.setting("embeddings", "embedding_model");
        (!m.is_empty()).then_some(m)
    });
    let empty = |model: Option<String>, reason: String| {
        Response::json(200, &json!({"document_id": id, "model": model, "neighbours": [], "reason": reason}))
    };
    if !st.vector_extension_loadable {
        return empty(
            model,
            "This build cannot load the vector extension (sqlite-vec), so resmon cannot look up similar papers."
                .into(),
        );
    }
    if st.vectors.is_empty() {
        return empty(
            None,
            "Nothing in this corpus has been embedded yet, so there is nothing to compare with.".into(),
        );
    }
    let model_name = model.clone().unwrap_or_default();
    if st.document(id).is_none() {
        return empty(model, format!("No paper with id {id} is in this corpus."));
    }
    let Some(mine) = st.vectors.get(&id) else {
        return empty(
            model,
            format!("This paper has no vector for {model_name} yet, so resmon cannot find its neighbours."),
        );
    };
    let mut near: Vec<(f64, &Value)> = st
        .documents
        .iter()
        .filter(|d| int(d, "id") != Some(id))
        .filter_map(|d| {
            let v = st.vectors.get(&int(d, "id")?)?;
            Some((served_distance(st, cosine_distance(mine, v)), d))
        })
        .collect();
    near.sort_by(|a, b| {
        a.0.partial_cmp(&b.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| int(a.1, "id").cmp(&int(b.1, "id")))
    });
    near.truncate(k);
    if near.is_empty() {
        return empty(model, "No other paper has a vector yet, so there is nothing to compare with.".into());
    }
    let neighbours: Vec<Value> = near
        .into_iter()
        .map(|(dist, d)| {
            let mut x = d.clone();
            x["distance"] = json!(dist);
            x
        })
        .collect();
    Response::json(200, &json!({"document_id": id, "model": model, "neighbours": neighbours, "reason": null}))
}

// ====================================================================== documents: why and lifecycle

fn params_of(e: &Value) -> Map<String, Value> {
    text(e, "parameters")
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

fn keywords_of(params: &Map<String, Value>) -> Vec<String> {
    let listed: Vec<String> = params
        .get("keywords")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    if !listed.is_empty() {
        return listed;
    }
    match params.get("query").and_then(Value::as_str) {
        Some(q) if !q.trim().is_empty() => vec![q.to_string()],
        _ => Vec::new(),
    }
}

fn has_operators(k: &str) -> bool {
    k.contains('"') || k.contains('(') || k.split_whitespace().any(|w| matches!(w, "AND" | "OR" | "NOT"))
}

fn why(st: &State, id: i64) -> Response {
    let Some(doc) = st.document(id) else {
        return Response::detail(404, &format!("No document with id {id}"));
    };
    let slug = text(doc, "source_repository").unwrap_or("").to_string();
    let cat = st.catalog_entry(&slug);
    let name = cat.and_then(|c| text(c, "name")).unwrap_or(&slug).to_string();
    let filtered_locally = LOCALLY_FILTERED.contains(&slug.as_str());

    let mut runs_src: Vec<&Value> = st
        .executions
        .iter()
        .filter(|e| {
            int(e, "id").and_then(|eid| st.execution_documents.get(&eid)).is_some_and(|ids| ids.contains(&id))
        })
        .collect();
    runs_src.sort_by(|a, b| text(b, "start_time").cmp(&text(a, "start_time")));
    let mut all_keywords: Vec<String> = Vec::new();
    let runs: Vec<Value> = runs_src
        .iter()
        .map(|e| {
            let p = params_of(e);
            let kws = keywords_of(&p);
            for k in &kws {
                if !all_keywords.contains(k) {
                    all_keywords.push(k.clone());
                }
            }
            let routine_name = int(e, "routine_id")
                .and_then(|r| st.routine(r))
                .and_then(|r| text(r, "name"))
                .map(str::to_string);
            json!({"execution_id": int(e, "id"), "execution_type": text(e, "execution_type"),
                   "start_time": text(e, "start_time"), "routine_name": routine_name, "keywords": kws})
        })
        .collect();

    let fields = ["title", "abstract", "categories", "authors"];
    let field_tokens: Vec<Vec<String>> = fields.iter().map(|f| tokens(text(doc, f).unwrap_or(""))).collect();
    let keywords: Vec<Value> = all_keywords
        .iter()
        .map(|k| {
            let words: Vec<String> =
                tokens(k).into_iter().filter(|w| !matches!(w.as_str(), "and" | "or" | "not")).collect();
            let hit: Vec<&str> = fields
                .iter()
                .zip(&field_tokens)
                .filter(|(_, toks)| !words.is_empty() && words.iter().all(|w| toks.contains(w)))
                .map(|(f, _)| *f)
                .collect();
            let place: Vec<String> = hit.iter().map(|f| format!("the {f}")).collect();
            let where_ = match place.len() {
                0 => "none of the stored fields".to_string(),
                1 => place[0].clone(),
                n => format!("{} and {}", place[..n - 1].join(", "), place[n - 1]),
            };
            json!({"keyword": k, "matched": !hit.is_empty(), "fields": hit, "where": where_,
                   "contains_operators": has_operators(k)})
        })
        .collect();
    let matched = keywords.iter().filter(|k| k["matched"] == json!(true)).count();
    let total = keywords.len();
    let verdict = if total == 0 {
        "no_keywords_recorded"
    } else if filtered_locally {
        "resmon_filtered"
    } else if matched > 0 {
        "local_evidence"
    } else {
        "no_local_evidence"
    };
    let headline = st.why_text["headlines"][verdict]
        .as_str()
        .unwrap_or("")
        .replace("{source}", &name)
        .replace("{matched}", &matched.to_string())
        .replace("{total}", &total.to_string());
    Response::json(
        200,
        &json!({
            "document": {"id": id, "title": text(doc, "title"), "source_repository": slug,
                         "doi": doc.get("doi").cloned().unwrap_or(Value::Null),
                         "publication_date": doc.get("publication_date").cloned().unwrap_or(Value::Null),
                         "first_seen_at": text(doc, "first_seen_at")},
            "source": {"slug": slug, "name": name,
                       "keyword_combination": cat.and_then(|c| c.get("keyword_combination")).cloned().unwrap_or(Value::Null),
                       "keyword_combination_notes": cat.and_then(|c| c.get("keyword_combination_notes")).cloned().unwrap_or(Value::Null),
                       "resmon_filtered_locally": filtered_locally},
            "runs": runs,
            "keywords": keywords,
            "matched_count": matched,
            "keyword_count": total,
            "verdict": verdict,
            "headline": headline,
            "what_resmon_cannot_see": st.why_text["what_resmon_cannot_see"].clone(),
            "fields_checked": fields
        }),
    )
}

fn lifecycle(st: &State, id: i64) -> Response {
    if st.document(id).is_none() {
        return Response::detail(404, &format!("No document with id {id}"));
    }
    let mut body = st
        .lifecycle
        .get(&id)
        .cloned()
        .unwrap_or_else(|| json!({"events": [], "checked_at": null, "check_status": null}));
    let mut out = json!({"document_id": id});
    for key in ["events", "checked_at", "check_status"] {
        out[key] = body.get_mut(key).map(Value::take).unwrap_or(Value::Null);
    }
    Response::json(200, &out)
}

// ====================================================================== routines

fn routine_list_row(st: &State, r: &Value) -> Value {
    let id = int(r, "id").unwrap_or(0);
    let mut row = r.clone();
    row["last_execution"] = r.get("last_executed_at").cloned().unwrap_or(Value::Null);
    let last_status = st
        .executions
        .iter()
        .filter(|e| int(e, "routine_id") == Some(id))
        .max_by(|a, b| {
            text(a, "start_time").cmp(&text(b, "start_time")).then_with(|| int(a, "id").cmp(&int(b, "id")))
        })
        .and_then(|e| e.get("status").cloned())
        .unwrap_or(Value::Null);
    row["last_status"] = last_status;
    row["missed_fires"] = st.missed_summary(id);
    row
}

fn routines_list(st: &State) -> Response {
    let mut rows: Vec<&Value> = st.routines.iter().collect();
    rows.sort_by(|a, b| {
        text(b, "created_at").cmp(&text(a, "created_at")).then_with(|| int(b, "id").cmp(&int(a, "id")))
    });
    let out: Vec<Value> = rows.iter().map(|r| routine_list_row(st, r)).collect();
    Response::json(200, &Value::Array(out))
}

fn routine_detail(st: &State, id: i64) -> Response {
    let Some(r) = st.routine(id) else {
        return Response::detail(404, "Routine not found");
    };
    let mut row = r.clone();
    for f in FLAGS {
        let on = row.get(f).map(py_truthy).unwrap_or(false);
        row[f] = Value::Bool(on);
    }
    row["missed_fires"] = st.missed_summary(id);
    let mut details: Vec<Value> =
        st.missed_fires.iter().filter(|m| int(m, "routine_id") == Some(id)).cloned().collect();
    details.sort_by(|a, b| {
        text(a, "due_at_utc").cmp(&text(b, "due_at_utc")).then_with(|| int(a, "id").cmp(&int(b, "id")))
    });
    row["missed_fire_details"] = Value::Array(details);
    Response::json(200, &row)
}

fn routine_coverage(st: &State, id: i64) -> Response {
    let Some(r) = st.routine(id) else {
        return Response::detail(404, &format!("No routine with id {id}."));
    };
    let name = text(r, "name").unwrap_or("").to_string();
    if let Some(stored) = st.routine_coverage.get(&id) {
        let mut out = stored.clone();
        out["routine_name"] = Value::String(name);
        return Response::json(200, &out);
    }
    // A routine the fixtures do not cover (e.g. one a test created): the early answer.
    let params = st.routine_params(id);
    let intent = text(r, "intent").filter(|s| !s.trim().is_empty());
    let (intent_text, source) = match intent {
        Some(i) => (i.to_string(), "stated"),
        None => (keywords_of(&params).join(", "), "keywords"),
    };
    let results: std::collections::BTreeSet<i64> = st
        .executions
        .iter()
        .filter(|e| int(e, "routine_id") == Some(id))
        .filter_map(|e| st.execution_documents.get(&int(e, "id")?))
        .flatten()
        .copied()
        .collect();
    let embedded = results.iter().filter(|d| st.vectors.contains_key(d)).count();
    let reason = if intent_text.is_empty() {
        "This routine has neither an intent nor keywords, so there is nothing to audit its results against."
    } else {
        "This routine has not returned any papers yet, so there is nothing to audit."
    };
    Response::json(
        200,
        &json!({
            "routine_id": id, "routine_name": name, "intent": intent_text, "intent_source": source,
            "model": lane_model(st),
            "cannot_see": "This compares against papers already in your corpus only; it cannot see papers no source returned.",
            "results": results.len(), "results_embedded": embedded,
            "off_target": [], "off_target_total": 0, "missed_in_corpus": [], "missed_in_corpus_total": 0,
            "missed_in_corpus_total_is_lower_bound": false, "distribution": null, "reason": reason
        }),
    )
}

fn routine_deliveries(st: &State, req: &Request, id: i64) -> Response {
    if st.routine(id).is_none() {
        return Response::detail(404, "Routine not found");
    }
    let limit = tri!(query_int(req, "limit")).unwrap_or(100).max(0) as usize;
    let mut rows: Vec<&Value> = st
        .deliveries
        .iter()
        .filter(|d| {
            int(d, "execution_id").and_then(|e| st.execution(e)).and_then(|e| int(e, "routine_id"))
                == Some(id)
        })
        .collect();
    rows.sort_by(|a, b| {
        text(b, "queued_at_utc").cmp(&text(a, "queued_at_utc")).then_with(|| int(b, "id").cmp(&int(a, "id")))
    });
    let awaiting = rows.iter().filter(|d| text(d, "state") == Some("awaiting_review")).count();
    let last = rows.first().map(|d| {
        json!({"id": int(d, "id"), "execution_id": int(d, "execution_id"), "channel": text(d, "channel"),
               "state": text(d, "state"), "attempts": int(d, "attempts"),
               "last_error": d.get("last_error").cloned().unwrap_or(Value::Null),
               "delivered_at_utc": d.get("delivered_at_utc").cloned().unwrap_or(Value::Null)})
    });
    let mut targets: BTreeMap<String, i64> = BTreeMap::new();
    for t in &st.delivery_targets {
        if int(t, "routine_id") == Some(id) && t["enabled"] == json!(true) {
            *targets.entry(text(t, "channel").unwrap_or("").to_string()).or_default() += 1;
        }
    }
    let enabled: i64 = targets.values().sum();
    let shown: Vec<Value> = rows.iter().take(limit).map(|d| (*d).clone()).collect();
    Response::json(
        200,
        &json!({
            "routine_id": id,
            "deliveries": shown,
            "summary": {"targets": targets, "enabled_target_count": enabled,
                        "awaiting_review": awaiting, "last": last}
        }),
    )
}

fn can_ask_about_author(st: &State, slug: &str) -> bool {
    st.catalog_entry(slug)
        .and_then(|c| c["entity_search"]["author_query"].as_str())
        .is_some_and(|q| !q.is_empty() && q != "none")
}

fn routine_create(st: &mut State, req: &Request) -> Response {
    let b = tri!(body_object(req));
    let Some(name_v) = b.get("name") else {
        return missing("name", &b);
    };
    let Some(name) = name_v.as_str().map(str::to_string) else {
        return Response::validation(
            &["body", "name"],
            "string_type",
            "Input should be a valid string",
            name_v.clone(),
        );
    };
    let Some(cron_v) = b.get("schedule_cron") else {
        return missing("schedule_cron", &b);
    };
    let Some(cron) = cron_v.as_str().map(str::to_string) else {
        return Response::validation(
            &["body", "schedule_cron"],
            "string_type",
            "Input should be a valid string",
            cron_v.clone(),
        );
    };
    let Some(params_v) = b.get("parameters") else {
        return missing("parameters", &b);
    };
    let Some(params) = params_v.as_object().cloned() else {
        return Response::validation(
            &["body", "parameters"],
            "dict_type",
            "Input should be a valid dictionary",
            params_v.clone(),
        );
    };
    let dropped = |key: &str| st.dropped_on_create.iter().any(|name| name == key);
    let intent = tri!(opt_str(&b, "intent")).filter(|s| !s.trim().is_empty() && !dropped("intent"));
    let is_active = tri!(opt_bool(&b, "is_active")).unwrap_or(true);
    let ai_enabled = tri!(opt_bool(&b, "ai_enabled")).unwrap_or(false);
    let email_enabled = tri!(opt_bool(&b, "email_enabled")).unwrap_or(false);
    let email_ai = tri!(opt_bool(&b, "email_ai_summary_enabled")).unwrap_or(false);
    let notify = tri!(opt_bool(&b, "notify_on_complete")).unwrap_or(false);
    let json_col = |key: &str| -> Result<Value, Response> {
        match b.get(key) {
            None | Some(Value::Null) => Ok(Value::Null),
            Some(Value::Object(_)) => Ok(Value::String(py_json(&b[key]))),
            Some(other) => Err(Response::validation(
                &["body", key],
                "dict_type",
                "Input should be a valid dictionary",
                other.clone(),
            )),
        }
    };
    let ai_settings = tri!(json_col("ai_settings"));
    let storage_settings = tri!(json_col("storage_settings"));

    let mut params = params;
    let mut entity_out = None;
    let mut entity_warning = None;
    if let Some(entity) = params.get("entity").filter(|e| !e.is_null()).cloned() {
        let Some(pid) = entity.get("profile_id").and_then(Value::as_i64) else {
            return Response::detail(
                400,
                "A watch routine needs entity.profile_id, the id of a watch profile.",
            );
        };
        let mode = entity.get("mode").and_then(Value::as_str).unwrap_or("new_papers").to_string();
        let Some(profile) = st.profile(pid) else {
            return Response::detail(400, &format!("No watch profile with id {pid}."));
        };
        if mode != "new_papers" && mode != "retractions" {
            return Response::detail(
                400,
                &format!("Unknown watch mode '{mode}'. Expected one of: new_papers, retractions."),
            );
        }
        let kind = text(profile, "kind").unwrap_or("person");
        if kind != "person" {
            return Response::detail(
                400,
                &format!(
                    "Profile {pid} is {} {kind} profile; a watch routine follows a person.",
                    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
                ),
            );
        }
        let norm = json!({"profile_id": pid, "mode": mode});
        params.insert("entity".into(), norm.clone());
        let repos: Vec<String> = params
            .get("repositories")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        if !repos.iter().any(|s| can_ask_about_author(st, s)) {
            entity_warning = Some(ENTITY_WARNING.to_string());
        }
        entity_out = Some(norm);
    }

    let id = st.next_routine_id;
    st.next_routine_id += 1;
    let stamp = fmt_sqlite(now().0);
    let flag = |b: bool| json!(i64::from(b));
    st.routines.push(json!({
        "id": id, "name": name, "schedule_cron": cron, "parameters": py_json(&Value::Object(params)),
        "is_active": flag(is_active), "email_enabled": flag(email_enabled),
        "email_ai_summary_enabled": flag(email_ai), "ai_enabled": flag(ai_enabled),
        "notify_on_complete": flag(notify), "ai_settings": ai_settings, "storage_settings": storage_settings,
        "intent": intent, "execution_location": "local", "created_at": stamp, "updated_at": stamp,
        "last_executed_at": null
    }));
    let mut out = json!({"id": id, "name": name});
    if let Some(e) = entity_out {
        out["entity"] = e;
    }
    if let Some(w) = entity_warning {
        out["entity_warning"] = Value::String(w);
    }
    Response::json(201, &out)
}

/// Adds `default_starts` for the sources that need a start date resmon gives.
fn add_default_starts(params: &mut Map<String, Value>) {
    if params.get("date_from").and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
        return;
    }
    let repos: Vec<String> = params
        .get("repositories")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let today = fmt_date(now().0);
    let (base, before) = match params.get("date_to").and_then(Value::as_str) {
        Some(t) if t.len() >= 10 && t[..10] < *today.as_str() => (t[..10].to_string(), "end_date"),
        _ => (today, "run"),
    };
    let start = minus_days(&base, 3);
    let mut starts = Map::new();
    for slug in repos.iter().filter(|s| LOCALLY_FILTERED.contains(&s.as_str())) {
        let name = if slug == "biorxiv" { "bioRxiv" } else { "medRxiv" };
        let sentence = if before == "run" {
            format!("{name} was asked for the 3 days before the run, because no start date was given.")
        } else {
            format!("{name} was asked for the 3 days before the end date, because no start date was given.")
        };
        starts.insert(
            slug.clone(),
            json!({"date_from": start, "days": 3, "before": before, "sentence": sentence}),
        );
    }
    if !starts.is_empty() {
        params.insert("default_starts".into(), Value::Object(starts));
    }
}

fn minus_days(date: &str, days: i64) -> String {
    let p = |a: usize, b: usize| date.get(a..b).and_then(|s| s.parse::<i64>().ok());
    let (Some(y), Some(m), Some(d)) = (p(0, 4), p(5, 7), p(8, 10)) else {
        return date.to_string();
    };
    // Days since the epoch for a civil date, then back again through the clock formatter.
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let epoch_days = era * 146_097 + doe - 719_468 - days;
    fmt_date(epoch_days * 86_400)
}

fn routine_run(st: &mut State, ctx: &Ctx, id: i64) -> Response {
    let Some(r) = st.routine(id) else {
        return Response::detail(404, "Routine not found");
    };
    let was_inactive = !r.get("is_active").map(py_truthy).unwrap_or(false);
    if let Some(running) = st.running_execution_of(id) {
        return Response::detail(
            409,
            &format!(
                "This routine is already running as execution {running}. Wait for that run to finish, or cancel it, before starting another."
            ),
        )
        .with_header("x-resmon-conflict", "routine_already_running")
        .with_header("x-resmon-execution-id", &running.to_string());
    }
    if st.running_count >= st.run_limit {
        if st.queue.len() >= st.queue_limit {
            return Response::detail(
                409,
                "resmon is already running as many executions as it allows at once, and its queue is full. Wait for one to finish and try again.",
            );
        }
        st.queue.push(id);
        let pos = st.queue.len();
        return Response::json(
            202,
            &json!({
                "execution_id": null, "queued": true, "queue_position": pos, "routine_id": id,
                "was_inactive": was_inactive,
                "detail": format!("resmon is already running as many runs as it allows. This one is queued (position {pos}) and will start on its own when a slot frees; there is nothing more to do.")
            }),
        );
    }
    let mut params = st.routine_params(id);
    add_default_starts(&mut params);
    let exec_id = st.start_execution(
        "automated_sweep",
        Some(id),
        &Value::Object(params),
        None,
        ctx.pid,
        ctx.runtime_id,
    );
    let mut marked = 0;
    for m in st.missed_fires.iter_mut() {
        if int(m, "routine_id") == Some(id) && text(m, "disposition") == Some("recorded") {
            m["disposition"] = Value::String("ran_late".into());
            marked += 1;
        }
    }
    let detail = if was_inactive {
        "This routine is not scheduled; it was run once because you asked for it."
    } else {
        "The routine started. Poll the execution for progress."
    };
    Response::json(
        200,
        &json!({"execution_id": exec_id, "routine_id": id, "was_inactive": was_inactive,
                "missed_fires_marked_ran_late": marked, "detail": detail}),
    )
}

fn routine_set_active(st: &mut State, id: i64, active: bool) -> Response {
    let Some(r) = st.routine_mut(id) else {
        return Response::detail(404, "Routine not found");
    };
    r["is_active"] = json!(i64::from(active));
    r["updated_at"] = Value::String(fmt_sqlite(now().0));
    Response::json(200, &json!({"id": id, "is_active": active}))
}

// ====================================================================== executions

fn execution_out(e: &Value) -> Value {
    let p = params_of(e);
    let mut row = e.clone();
    let query = p.get("query").cloned().unwrap_or(Value::Null);
    row["query"] = query;
    row["keywords"] = json!(keywords_of(&p));
    row["repositories"] = p.get("repositories").cloned().unwrap_or(Value::Null);
    row["total_results"] = e.get("result_count").cloned().unwrap_or(Value::Null);
    row["new_results"] = e.get("new_result_count").cloned().unwrap_or(Value::Null);
    let cov = &e["coverage"];
    let failing: Vec<Value> = cov["sources"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|s| text(s, "category") == Some("non_answer"))
                .filter_map(|s| s.get("source").cloned())
                .collect()
        })
        .unwrap_or_default();
    row["source_outcomes"] = json!({
        "selected": cov["total"].as_i64().unwrap_or(0),
        "answered": cov["counts"]["answered"].as_i64().unwrap_or(0),
        "could_not_answer": cov["counts"]["non_answer"].as_i64().unwrap_or(0),
        "not_recorded": cov["counts"]["unknown"].as_i64().unwrap_or(0),
        "sources_that_could_not_answer": failing,
        "in_part": cov["counts"]["in_part"].as_i64().unwrap_or(0)
    });
    row
}

fn executions_list(st: &State, req: &Request) -> Response {
    let limit = tri!(query_int(req, "limit")).unwrap_or(50);
    if !(1..=500).contains(&limit) {
        let kind = if limit < 1 { "greater_than_equal" } else { "less_than_equal" };
        let (msg, bound) = if limit < 1 {
            ("Input should be greater than or equal to 1", json!({"ge": 1}))
        } else {
            ("Input should be less than or equal to 500", json!({"le": 500}))
        };
        return Response::json(
            422,
            &json!({"detail": [{"type": kind, "loc": ["query", "limit"], "msg": msg,
                                "input": req.query_param("limit"), "ctx": bound}]}),
        );
    }
    let offset = tri!(query_int(req, "offset")).unwrap_or(0);
    if offset < 0 {
        return Response::json(
            422,
            &json!({"detail": [{"type": "greater_than_equal", "loc": ["query", "offset"],
                                "msg": "Input should be greater than or equal to 0",
                                "input": req.query_param("offset"), "ctx": {"ge": 0}}]}),
        );
    }
    let kind = req.query_param("type");
    let mut rows: Vec<&Value> =
        st.executions.iter().filter(|e| kind.is_none_or(|k| text(e, "execution_type") == Some(k))).collect();
    rows.sort_by(|a, b| {
        text(b, "start_time").cmp(&text(a, "start_time")).then_with(|| int(b, "id").cmp(&int(a, "id")))
    });
    let out: Vec<Value> =
        rows.into_iter().skip(offset as usize).take(limit as usize).map(execution_out).collect();
    Response::json(200, &Value::Array(out))
}

fn execution_detail(st: &State, ctx: &Ctx, req: &Request, id: i64) -> Response {
    if st.reports_identity
        && let Some(r) = check_expected(ctx, req)
    {
        return r;
    }
    let Some(e) = st.execution(id) else {
        return Response::detail(404, "Execution not found");
    };
    let mut out = execution_out(e);
    if st.reports_identity {
        out["identity"] = identity(st, ctx);
    }
    let into: Vec<i64> = st
        .executions
        .iter()
        .filter(|x| int(x, "restarted_from") == Some(id))
        .filter_map(|x| int(x, "id"))
        .collect();
    out["restarted_into"] = json!(into);
    Response::json(200, &out)
}

fn execution_restart(st: &mut State, ctx: &Ctx, id: i64) -> Response {
    let Some(e) = st.execution(id) else {
        return Response::detail(404, "Execution not found");
    };
    let params = Value::Object(params_of(e));
    let kind = text(e, "execution_type").unwrap_or("deep_sweep").to_string();
    let routine_id = int(e, "routine_id");
    let new_id = st.start_execution(&kind, routine_id, &params, None, ctx.pid, ctx.runtime_id);
    if let Some(x) = st.execution_mut(new_id) {
        x["restarted_from"] = json!(id);
    }
    Response::json(202, &json!({"execution_id": new_id, "restarted_from": id}))
}

fn docs_of_execution(st: &State, id: i64) -> Vec<&Value> {
    st.execution_documents
        .get(&id)
        .map(|ids| ids.iter().filter_map(|d| st.document(*d)).collect())
        .unwrap_or_default()
}

fn execution_references(st: &State, req: &Request, id: i64) -> Response {
    let include_ids = tri!(query_bool(req, "include_ids")).unwrap_or(false);
    let only_new = tri!(query_bool(req, "only_new")).unwrap_or(false);
    let Some(e) = st.execution(id) else {
        return Response::detail(404, "Execution not found");
    };
    let format = req.query_param("format").unwrap_or("bibtex").to_string();
    if export::format_info(&format).is_none() || st.formats_unknown.contains(&format) {
        return export::unknown_format(&format);
    }
    if include_ids && format != "json" {
        return Response::detail(400, "include_ids requires the json format");
    }
    let mut docs = docs_of_execution(st, id);
    let mut stem = format!("resmon-execution-{id}");
    if only_new {
        let n = int(e, "new_result_count").unwrap_or(0).max(0) as usize;
        docs.truncate(n);
        stem.push_str("-new");
    }
    export::render(&docs, &format, include_ids, &stem)
}

fn export_references(st: &State, req: &Request) -> Response {
    let b = tri!(body_object(req));
    let doc_ids = tri!(int_list(&b, "document_ids")).unwrap_or_default();
    let exec_ids = tri!(int_list(&b, "execution_ids"));
    let format = tri!(opt_str(&b, "format")).unwrap_or_else(|| "bibtex".into());
    if export::format_info(&format).is_none() {
        return export::unknown_format(&format);
    }
    if !doc_ids.is_empty() && exec_ids.as_ref().is_some_and(|e| !e.is_empty()) {
        return Response::detail(400, "Send document_ids or execution_ids, not both.");
    }
    let mut ids: Vec<i64> = Vec::new();
    if let Some(execs) = exec_ids.filter(|e| !e.is_empty()) {
        for eid in execs {
            if st.execution(eid).is_none() {
                return Response::detail(404, &format!("Execution {eid} not found"));
            }
            ids.extend(st.execution_documents.get(&eid).cloned().unwrap_or_default());
        }
    } else {
        ids = doc_ids;
    }
    ids.sort_unstable();
    ids.dedup();
    let mut docs: Vec<&Value> = ids.iter().filter_map(|d| st.document(*d)).collect();
    sort_newest(&mut docs);
    export::render(&docs, &format, false, "resmon-selection")
}

fn search_record_value(st: &State, e: &Value) -> Value {
    let id = int(e, "id").unwrap_or(0);
    let p = params_of(e);
    let routine = int(e, "routine_id").and_then(|r| st.routine(r));
    let cov = e["coverage"].clone();
    let sources: Vec<Value> = cov["sources"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    json!({"source": s["source"], "coverage": s,
                           "records_identified": s["result_count"].as_i64().unwrap_or(0),
                           "status": s.get("status").cloned().unwrap_or(Value::Null),
                           "zero_reason": s.get("zero_reason").cloned().unwrap_or(Value::Null),
                           "answered": text(s, "category") == Some("answered"),
                           "note": null})
                })
                .collect()
        })
        .unwrap_or_default();
    let identified: i64 = sources.iter().map(|s| s["records_identified"].as_i64().unwrap_or(0)).sum();
    let meanings = &st.search_record_text["meanings"];
    let dedup_recorded = !e["dedup_cross_source"].is_null();
    json!({
        "record_type": "resmon_search_record",
        "record_version": 1,
        "generated_at": fmt_iso_z(now().0),
        "software": {"name": "resmon", "version": st.version,
                     "citation": st.search_record_text["software"]["citation"]},
        "search": {
            "execution_id": id,
            "execution_type": e["execution_type"],
            "run_at": e["start_time"],
            "completed_at": e["end_time"],
            "status": e["status"],
            "keywords": keywords_of(&p),
            "query_as_sent": p.get("query").cloned().unwrap_or(Value::Null),
            "queries_as_sent": st.queries_as_sent.get(&id).cloned().unwrap_or(Value::Null),
            "date_from": p.get("date_from").cloned().unwrap_or(Value::Null),
            "date_to": p.get("date_to").cloned().unwrap_or(Value::Null),
            "max_results_per_source": p.get("max_results").cloned().unwrap_or(Value::Null),
            "routine_name": routine.and_then(|r| r.get("name").cloned()).unwrap_or(Value::Null),
            "routine_schedule": routine.and_then(|r| r.get("schedule_cron").cloned()).unwrap_or(Value::Null),
            "configuration_name": null
        },
        "coverage": cov,
        "sources": sources,
        "identification": {"records_identified": identified,
                           "sources_searched": e["coverage"]["total"],
                           "sources_that_answered": e["coverage"]["counts"]["answered"],
                           "prisma": "Records identified from databases"},
        "deduplication": {
            "records_processed": e["dedup_total"],
            "cross_source_duplicates": {"count": e["dedup_cross_source"], "recorded": dedup_recorded,
                                        "prisma": "Duplicate records removed before screening",
                                        "meaning": meanings["cross_source_duplicates"],
                                        "not_recorded_reason": if dedup_recorded { Value::Null } else {
                                            json!("This run did not record how many duplicates it saw.") }},
            "already_held": {"count": e["dedup_duplicates"], "prisma": null, "meaning": meanings["already_held"]},
            "discarded_unusable": {"count": e["dedup_invalid"],
                                   "prisma": "Records marked as ineligible by automation tools",
                                   "meaning": meanings["discarded_unusable"]},
            "records_added": {"count": e["dedup_new"], "prisma": "Records screened", "meaning": meanings["records_added"]}
        },
        "caveats": st.search_record_text["caveats"]
    })
}

fn search_record(st: &State, req: &Request, id: i64) -> Response {
    let format = req.query_param("format").unwrap_or("json");
    if format != "json" && format != "markdown" {
        return Response::detail(400, "format must be 'json' or 'markdown'");
    }
    let Some(e) = st.execution(id) else {
        return Response::detail(404, &format!("No execution with id {id}"));
    };
    let rec = search_record_value(st, e);
    if format == "json" {
        return Response::json(200, &rec);
    }
    let s = &rec["search"];
    let mut md = format!(
        "# resmon search record: execution {id}\n\n- Type: {}\n- Run at: {}\n- Status: {}\n- Terms as typed: {}\n\n## Sources\n\n",
        s["execution_type"].as_str().unwrap_or(""),
        s["run_at"].as_str().unwrap_or(""),
        s["status"].as_str().unwrap_or(""),
        s["query_as_sent"].as_str().unwrap_or("")
    );
    for src in rec["sources"].as_array().into_iter().flatten() {
        md.push_str(&format!(
            "- {}: {} records ({})\n",
            src["source"].as_str().unwrap_or(""),
            src["records_identified"],
            src["status"].as_str().unwrap_or("not recorded")
        ));
    }
    md.push_str("\n## Caveats\n\n");
    for c in rec["caveats"].as_array().into_iter().flatten() {
        md.push_str(&format!("- {}\n", c.as_str().unwrap_or("")));
    }
    Response::bytes(200, "text/markdown; charset=utf-8", md)
        .with_header("content-disposition", &format!("attachment; filename=\"resmon-search-record-{id}.md\""))
}

fn sweep(st: &mut State, ctx: &Ctx, req: &Request) -> Response {
    let b = tri!(body_object(req));
    if !b.contains_key("repositories") {
        return missing("repositories", &b);
    }
    let repos = tri!(str_list(&b, "repositories")).unwrap_or_default();
    let Some(query_v) = b.get("query") else {
        return missing("query", &b);
    };
    let Some(query) = query_v.as_str().map(str::to_string) else {
        return Response::validation(
            &["body", "query"],
            "string_type",
            "Input should be a valid string",
            query_v.clone(),
        );
    };
    let max_results = tri!(opt_int(&b, "max_results")).unwrap_or(100);
    let date_from = tri!(opt_str(&b, "date_from"));
    let date_to = tri!(opt_str(&b, "date_to"));
    let ai_enabled = tri!(opt_bool(&b, "ai_enabled")).unwrap_or(false);
    let keywords = tri!(str_list(&b, "keywords"));
    let request_id = tri!(opt_str(&b, "request_id"));
    if let Some(rid) = &request_id
        && let Some(existing) = st.sweep_request_ids.get(rid)
    {
        return Response::json(200, &json!({"execution_id": existing, "duplicate": true}));
    }
    if st.running_count >= st.run_limit {
        return Response::detail(
            429,
            &format!(
                "resmon is already running the maximum of {} concurrent executions. Wait for one to finish or raise the limit in Settings → Advanced.",
                st.run_limit
            ),
        )
        .with_header("retry-after", "5");
    }
    let mut params = Map::new();
    params.insert("query".into(), json!(query));
    params.insert("repositories".into(), json!(repos));
    if let Some(k) = keywords {
        params.insert("keywords".into(), json!(k));
    }
    params.insert("max_results".into(), json!(max_results));
    params.insert("date_from".into(), json!(date_from));
    params.insert("date_to".into(), json!(date_to));
    params.insert("ai_enabled".into(), json!(ai_enabled));
    add_default_starts(&mut params);
    let id = st.start_execution(
        "deep_sweep",
        None,
        &Value::Object(params),
        request_id.clone(),
        ctx.pid,
        ctx.runtime_id,
    );
    if let Some(rid) = request_id {
        st.sweep_request_ids.insert(rid, id);
    }
    Response::json(200, &json!({"execution_id": id}))
}

// ====================================================================== analytics

fn analytics_overview(st: &State) -> Response {
    Response::json(
        200,
        &json!({
            "summary": st.analytics["summary"],
            "source_contribution": st.analytics["source-contribution"],
            "discovery_lag": st.analytics["discovery-lag"],
            "routine_health": st.analytics["routine-health"],
            "publication_volume": st.analytics["publication-volume"]["source"]
        }),
    )
}

fn publication_volume(st: &State, req: &Request) -> Response {
    let _months = tri!(query_int(req, "months"));
    let group_by = req.query_param("group_by").unwrap_or("source");
    if group_by != "source" && group_by != "category" {
        return Response::detail(400, "group_by must be 'source' or 'category'");
    }
    Response::json(200, &st.analytics["publication-volume"][group_by])
}

fn keyword_contribution(st: &State, req: &Request) -> Response {
    let Some(eid) = tri!(query_int(req, "execution_id")) else {
        return Response::json(200, &st.analytics["keyword-contribution"]);
    };
    let Some(e) = st.execution(eid) else {
        return Response::detail(404, &format!("No execution with id {eid}"));
    };
    // Worked out from the run's own papers and keywords.
    let docs = docs_of_execution(st, eid);
    let kws = keywords_of(&params_of(e));
    let hits: Vec<Vec<i64>> = kws
        .iter()
        .map(|k| docs.iter().filter(|d| text_matches(d, k)).filter_map(|d| int(d, "id")).collect())
        .collect();
    let mut matched_any = std::collections::BTreeSet::new();
    let rows: Vec<Value> = kws
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let unique = hits[i]
                .iter()
                .filter(|d| hits.iter().enumerate().all(|(j, h)| j == i || !h.contains(d)))
                .count();
            matched_any.extend(hits[i].iter().copied());
            let matched = hits[i].len();
            let share =
                if matched >= 10 { json!(round4(unique as f64 / matched as f64)) } else { Value::Null };
            json!({"keyword": k, "matched": matched, "unique": unique, "shared": matched - unique,
                   "contains_operators": has_operators(k), "unique_share": share})
        })
        .collect();
    let considered = docs.len();
    let insufficient =
        if considered == 0 { json!("This run found no papers to explain.") } else { Value::Null };
    Response::json(
        200,
        &json!({
            "scope": {"type": "execution", "execution_id": eid},
            "keywords": rows,
            "documents_considered": considered,
            "documents_matched": matched_any.len(),
            "documents_unexplained": considered - matched_any.len(),
            "sample_size": considered,
            "minimum_sample_for_share": 10,
            "sufficient": considered > 0,
            "insufficient_reason": insufficient,
            "fields_checked": ["title", "abstract", "categories", "authors"]
        }),
    )
}

// ====================================================================== watch profiles

fn basis_warning(p: &Value) -> Value {
    // The backend's rule: only an ORCID silences the warning.
    if p["identifiers"].get("orcid").is_some() {
        return Value::Null;
    }
    let has_affiliation = p["affiliations"].as_array().is_some_and(|a| !a.is_empty());
    let has_other_id = p["identifiers"].as_object().is_some_and(|m| !m.is_empty());
    Value::String(if has_affiliation {
        "This profile has no ORCID, so **a match can rest on a name and an affiliation at best**: resmon can tell you a paper has this name and this affiliation on it, not that it is this person's. Add an ORCID to do better.".into()
    } else if has_other_id {
        "This profile has no ORCID and no affiliation, so **most matches will be name-only**: resmon can tell you a paper has this name on it and little more. Add an ORCID, or an affiliation, to do better.".into()
    } else {
        "This profile has neither an identifier nor an affiliation, so **every match will be name-only**: resmon can tell you a paper has this name on it and nothing more. Add an ORCID, or an affiliation, to do better.".into()
    })
}

fn profile_out(p: &Value) -> Value {
    let mut out = p.clone();
    out["basis_warning"] = basis_warning(p);
    out
}

fn profiles_list(st: &State, req: &Request) -> Response {
    let kind = req.query_param("kind");
    let mut rows: Vec<&Value> =
        st.profiles.iter().filter(|p| kind.is_none_or(|k| text(p, "kind") == Some(k))).collect();
    rows.sort_by(|a, b| {
        text(a, "display_name").cmp(&text(b, "display_name")).then_with(|| int(a, "id").cmp(&int(b, "id")))
    });
    let out: Vec<Value> = rows.into_iter().map(profile_out).collect();
    Response::json(200, &json!({"profiles": out}))
}

fn profile_matches(st: &State, req: &Request, id: i64) -> Response {
    let limit = tri!(query_int(req, "limit")).unwrap_or(50).clamp(1, 200) as usize;
    let offset = tri!(query_int(req, "offset")).unwrap_or(0).max(0) as usize;
    if st.profile(id).is_none() {
        return Response::detail(404, "That profile does not exist.");
    }
    let mut rows: Vec<&Value> = st.matches.iter().filter(|m| int(m, "profile_id") == Some(id)).collect();
    rows.sort_by(|a, b| {
        text(b, "first_seen_at")
            .cmp(&text(a, "first_seen_at"))
            .then_with(|| int(b, "document_id").cmp(&int(a, "document_id")))
    });
    let mut by_basis = Map::new();
    for basis in ["identifier", "name+affiliation", "name_only"] {
        let n = rows.iter().filter(|m| text(m, "basis") == Some(basis)).count();
        if n > 0 {
            by_basis.insert(basis.into(), json!(n));
        }
    }
    for m in &rows {
        let b = text(m, "basis").unwrap_or("");
        if !by_basis.contains_key(b) {
            let n = rows.iter().filter(|x| text(x, "basis") == Some(b)).count();
            by_basis.insert(b.into(), json!(n));
        }
    }
    let total = rows.len();
    let page: Vec<Value> = rows
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|m| {
            let mut x = m.clone();
            if let Some(o) = x.as_object_mut() {
                o.shift_remove("profile_id");
            }
            x
        })
        .collect();
    Response::json(200, &json!({"matches": page, "total": total, "by_basis": by_basis}))
}

fn normalise_orcid(raw: &str) -> Option<String> {
    let s = raw.trim();
    let s = s
        .strip_prefix("https://orcid.org/")
        .or_else(|| s.strip_prefix("http://orcid.org/"))
        .or_else(|| s.strip_prefix("orcid.org/"))
        .unwrap_or(s)
        .to_ascii_uppercase();
    let b = s.as_bytes();
    let ok = b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 9 | 14 => *c == b'-',
            18 => c.is_ascii_digit() || *c == b'X',
            _ => c.is_ascii_digit(),
        });
    ok.then_some(s)
}

fn normalise_ror(raw: &str) -> Option<String> {
    let s = raw.trim();
    let s = s.strip_prefix("https://ror.org/").unwrap_or(s).to_ascii_lowercase();
    let ok = s.len() == 9 && s.starts_with('0') && s.chars().all(|c| c.is_ascii_alphanumeric());
    ok.then_some(s)
}

fn profile_create(st: &mut State, req: &Request) -> Response {
    let b = tri!(body_object(req));
    let kind = tri!(opt_str(&b, "kind")).unwrap_or_else(|| "person".into());
    if !["person", "institution", "group"].contains(&kind.as_str()) {
        return Response::detail(
            400,
            &format!("Unknown profile kind '{kind}'. Expected one of: person, institution, group."),
        );
    }
    let display = tri!(opt_str(&b, "display_name")).unwrap_or_default();
    let mut names: Vec<Value> = Vec::new();
    match b.get("names") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, it) in items.iter().enumerate() {
                let (value, script) = match it {
                    Value::String(s) => (s.clone(), None),
                    Value::Object(o) => match o.get("value").and_then(Value::as_str) {
                        Some(v) => {
                            (v.to_string(), o.get("script").and_then(Value::as_str).map(str::to_string))
                        }
                        None => {
                            return Response::json(
                                422,
                                &json!({"detail": [{"type": "missing", "loc": ["body", "names", i, "value"],
                                                    "msg": "Field required", "input": it}]}),
                            );
                        }
                    },
                    other => {
                        return Response::validation(
                            &["body", "names"],
                            "list_type",
                            "Input should be a list of names",
                            other.clone(),
                        );
                    }
                };
                let value = value.trim().to_string();
                if value.is_empty() || names.iter().any(|n| n["value"] == json!(value)) {
                    continue;
                }
                let script =
                    script.unwrap_or_else(|| if value.is_ascii() { "latin".into() } else { String::new() });
                names.push(json!({"value": value, "script": script}));
            }
        }
        Some(other) => {
            return Response::validation(
                &["body", "names"],
                "list_type",
                "Input should be a valid list",
                other.clone(),
            );
        }
    }
    let display = if display.trim().is_empty() {
        names.first().and_then(|n| n["value"].as_str()).unwrap_or("").to_string()
    } else {
        display.trim().to_string()
    };
    if display.is_empty() {
        return Response::detail(400, "A watch profile needs at least one name.");
    }
    if !names.iter().any(|n| n["value"] == json!(display)) {
        let script = if display.is_ascii() { "latin" } else { "" };
        names.insert(0, json!({"value": display, "script": script}));
    }
    let mut identifiers = Map::new();
    if let Some(ids) = b.get("identifiers").filter(|v| !v.is_null()) {
        let Some(ids) = ids.as_object() else {
            return Response::validation(
                &["body", "identifiers"],
                "dict_type",
                "Input should be a valid dictionary",
                ids.clone(),
            );
        };
        for (scheme, entry) in ids {
            let (value, cited) = match entry {
                Value::String(s) => (s.clone(), String::new()),
                Value::Object(o) => (
                    o.get("value").and_then(Value::as_str).unwrap_or("").to_string(),
                    o.get("cited").and_then(Value::as_str).unwrap_or("").to_string(),
                ),
                _ => (String::new(), String::new()),
            };
            let value = match scheme.as_str() {
                "orcid" => match normalise_orcid(&value) {
                    Some(v) => v,
                    None => {
                        return Response::detail(
                            400,
                            &format!("'{value}' is not an ORCID iD (expected 0000-0000-0000-0000)."),
                        );
                    }
                },
                "ror" => match normalise_ror(&value) {
                    Some(v) => v,
                    None => return Response::detail(400, &format!("'{value}' is not a ROR id.")),
                },
                "openalex" | "semantic_scholar" => value.trim().to_string(),
                other => {
                    return Response::detail(
                        400,
                        &format!(
                            "Unknown identifier scheme '{other}'. Expected one of: orcid, openalex, ror, semantic_scholar."
                        ),
                    );
                }
            };
            let cited =
                if cited.is_empty() { "Given when the profile was created.".to_string() } else { cited };
            identifiers.insert(scheme.clone(), json!({"value": value, "cited": cited}));
        }
    }
    let affiliations = tri!(str_list(&b, "affiliations")).unwrap_or_default();
    let field_hints = tri!(str_list(&b, "field_hints")).unwrap_or_default();
    let notes = tri!(opt_str(&b, "notes"));
    let id = st.next_profile_id;
    st.next_profile_id += 1;
    let stamp = fmt_sqlite(now().0);
    let p = json!({
        "id": id, "kind": kind, "display_name": display, "names": names, "identifiers": identifiers,
        "affiliations": affiliations, "field_hints": field_hints, "notes": notes,
        "created_at": stamp, "updated_at": stamp
    });
    st.profiles.push(p.clone());
    Response::json(201, &profile_out(&p))
}

// ====================================================================== settings

fn group_keys(group: &str) -> Option<&'static [&'static str]> {
    SETTINGS_GROUPS.iter().find(|(g, _)| *g == group).map(|(_, k)| *k)
}

fn capability(st: &State) -> Value {
    let model = lane_model(st);
    let available = model.is_some() && st.vector_extension_loadable && st.embeddings_configured;
    let reason = if !st.vector_extension_loadable {
        json!("sqlite-vec did not load on this machine (OperationalError: not authorized).")
    } else if model.is_none() || !st.embeddings_configured {
        json!("No embedding model is configured.")
    } else {
        Value::Null
    };
    json!({
        "available": available,
        "extension": if st.vector_extension_loadable { json!("v0.1.9") } else { Value::Null },
        "reason": reason,
        "model": model,
        "indexed": st.vectors.len()
    })
}

fn lane(st: &State) -> Value {
    let Some(model) = lane_model(st) else {
        return Value::Null;
    };
    let provider = st.setting("embeddings", "embedding_provider");
    let opt = |k: &str| {
        let v = st.setting("embeddings", k);
        if v.is_empty() { Value::Null } else { Value::String(v) }
    };
    let num = |k: &str| st.setting("embeddings", k).trim().parse::<i64>().ok().filter(|n| *n > 0);
    let local = provider == "local";
    json!({
        "kind": if local { "local" } else { "api_key" },
        "provider": provider,
        "model": model,
        "endpoint": if local { opt("embedding_endpoint") } else { Value::Null },
        "base_url": opt("embedding_base_url"),
        "credential_alias": if local { Value::Null } else { json!(format!("{provider}_api_key")) },
        "batch_size": num("embedding_batch_size").unwrap_or(32),
        "dims": num("embedding_dims"),
        "input_limit": num("embedding_input_limit")
    })
}

fn settings_get(st: &State, group: &str) -> Response {
    if group == "execution" {
        return Response::json(200, &st.execution_settings);
    }
    let Some(keys) = group_keys(group) else {
        return Response::detail(404, &format!("Unknown settings group '{group}'"));
    };
    let flat = || {
        let mut m = Map::new();
        for k in keys {
            m.insert((*k).into(), Value::String(st.setting(group, k)));
        }
        m
    };
    match group {
        "notifications" => {
            let manual = st.setting(group, "notify_manual");
            let manual = !matches!(manual.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off");
            let mode = st.setting(group, "notify_automatic_mode");
            let mode =
                if ["all", "selected", "none"].contains(&mode.as_str()) { mode } else { "none".into() };
            Response::json(200, &json!({"notify_manual": manual, "notify_automatic_mode": mode}))
        }
        "embeddings" => Response::json(
            200,
            &json!({
                "settings": Value::Object(flat()),
                "providers": st.embedding_providers,
                "lane": lane(st),
                "capability": capability(st),
                "status": st.embedding_status
            }),
        ),
        _ => Response::json(200, &Value::Object(flat())),
    }
}

fn settings_put(st: &mut State, req: &Request, group: &str) -> Response {
    if group == "execution" {
        // Excluded from the tool surface: takes its own body, not {"settings": …}.
        let b = tri!(body_object(req));
        for k in ["max_concurrent_executions", "routine_fire_queue_limit"] {
            if let Some(v) = tri!(opt_int(&b, k)) {
                st.execution_settings[k] = json!(v);
            }
        }
        return Response::json(200, &json!({"success": true}));
    }
    let Some(keys) = group_keys(group) else {
        return Response::detail(404, &format!("Unknown settings group '{group}'"));
    };
    let b = tri!(body_object(req));
    let Some(settings_v) = b.get("settings") else {
        return missing("settings", &b);
    };
    let Some(values) = settings_v.as_object().cloned() else {
        return Response::validation(
            &["body", "settings"],
            "dict_type",
            "Input should be a valid dictionary",
            settings_v.clone(),
        );
    };
    match group {
        "notifications" => {
            if let Some(mode) = values.get("notify_automatic_mode") {
                let m = py_str(mode);
                if !["all", "selected", "none"].contains(&m.as_str()) {
                    return Response::detail(
                        400,
                        "notify_automatic_mode must be 'all', 'selected', or 'none'",
                    );
                }
            }
        }
        "embeddings" => {
            if let Some(p) = values.get("embedding_provider") {
                let p = py_str(p);
                if ["anthropic", "claude_code", "codex"].contains(&p.as_str()) {
                    let why = st
                        .embedding_providers
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|x| text(x, "provider") == Some(p.as_str()))
                        .and_then(|x| text(x, "reason"))
                        .unwrap_or("That provider cannot embed.")
                        .to_string();
                    return Response::detail(400, &why);
                }
            }
        }
        _ => {}
    }
    let stored = st.settings.entry(group.to_string()).or_default();
    for (k, v) in &values {
        if !keys.contains(&k.as_str()) {
            continue; // unknown keys are dropped without a word, like the real route
        }
        let text_value = if group == "notifications" && k == "notify_manual" {
            if py_truthy(v) { "1".to_string() } else { "0".to_string() }
        } else {
            py_str(v)
        };
        stored.insert(k.clone(), text_value);
    }
    if group == "embeddings" {
        return Response::json(200, &json!({"success": true, "capability": capability(st)}));
    }
    Response::json(200, &json!({"success": true}))
}
