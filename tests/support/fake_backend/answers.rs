//! The answers resmon computes (rankings, exports, audits, analytics, refusals
//! of a bad ORCID, ...), served from `fixtures/backend/answers/` rather than
//! computed again here; `fixtures/backend/answers/README.md` gives their format.

use super::http::{Request, Response};
use super::state::load;
use super::util::parse_query;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::OnceLock;

/// One recorded answer and the request it answers.
pub struct Entry {
    method: String,
    path: String,
    /// Decoded and sorted, so the order a client sends them in does not matter.
    query: Vec<(String, String)>,
    /// The whole fixture object: `body`, `when`, `status`, `json` or `text`, ...
    pub raw: Value,
}

/// The facts an answer can depend on besides the request.
pub struct Context {
    pub corpus: &'static str,
    pub embeddings: bool,
    pub release: &'static str,
}

/// Every fixture answer, read once per process (a fake edits only its own copies).
pub fn table() -> &'static [Entry] {
    static TABLE: OnceLock<Vec<Entry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backend/answers");
        let listed =
            std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("fake backend: cannot list {dir:?}: {e}"));
        let mut files: Vec<String> = listed.filter_map(|f| f.ok()?.file_name().into_string().ok()).collect();
        files.retain(|name| name.ends_with(".json"));
        files.sort();
        files.iter().flat_map(|f| entry_list(&load(&format!("answers/{f}")))).collect()
    })
}

fn entry_list(list: &Value) -> Vec<Entry> {
    let entry = |raw: &Value| {
        let line = raw["request"].as_str().unwrap_or_default();
        let (method, target) = line.split_once(' ').unwrap_or((line, ""));
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut query = parse_query(query);
        query.sort();
        Entry { method: method.into(), path: path.into(), query, raw: raw.clone() }
    };
    list.as_array().into_iter().flatten().map(entry).collect()
}

/// How well an entry's `when` fits the context, None when it does not: the corpus must
/// match (short when unnamed), a key not named fits any value, naming the most wins.
fn fit(entry: &Entry, ctx: &Context) -> Option<usize> {
    let when = entry.raw.get("when").and_then(Value::as_object);
    let named = |key: &str| when.and_then(|w| w.get(key));
    if named("corpus").and_then(Value::as_str).unwrap_or("short") != ctx.corpus {
        return None;
    }
    let fits = |key: &str, value: Value| named(key).is_none_or(|v| *v == value);
    (fits("embeddings", Value::Bool(ctx.embeddings)) && fits("release", Value::from(ctx.release)))
        .then(|| when.map_or(0, Map::len))
}

/// The index of the entry answering `verb path?query` with `body` in this context.
pub fn find(verb: &str, path: &str, query: &[(String, String)], body: &[u8], ctx: &Context) -> Option<usize> {
    let mut query = query.to_vec();
    query.sort();
    let body: Option<Value> = serde_json::from_slice(body).ok();
    table()
        .iter()
        .enumerate()
        .filter(|(_, e)| e.method == verb && e.path == path && e.query == query)
        .filter(|(_, e)| e.raw.get("body").is_none_or(|b| Some(b) == body.as_ref()))
        .filter_map(|(i, e)| Some((fit(e, ctx)?, i)))
        .max_by_key(|(score, i)| (*score, std::cmp::Reverse(*i)))
        .map(|(_, i)| i)
}

/// The recorded answer as a response, with `json` (a fake's own copy) for its JSON body.
pub fn response(entry: &Value, json: Option<&Value>) -> Response {
    let status = entry["status"].as_u64().and_then(|s| u16::try_from(s).ok()).unwrap_or(500);
    let content_type = entry["content_type"].as_str().unwrap_or("application/json");
    let body = match json.or(entry.get("json")) {
        Some(v) => serde_json::to_vec(v).unwrap_or_default(),
        None => entry["text"].as_str().unwrap_or_default().into(),
    };
    let mut resp = Response::bytes(status, content_type, body);
    for (name, value) in entry["headers"].as_object().into_iter().flatten() {
        resp = resp.with_header(name, value.as_str().unwrap_or_default());
    }
    resp
}

/// The answer to a request nobody recorded: a loud failure saying how to add one.
pub fn unrecorded(req: &Request) -> Response {
    let mark = if req.query.is_empty() { "" } else { "?" };
    let what = format!("{} {}{mark}{}", req.method, req.path, req.query);
    eprintln!("fake backend: no recorded answer for {what} {}", String::from_utf8_lossy(&req.body));
    let why = format!(
        "The fake backend has no recorded answer for {what} with this body; \
         fixtures/backend/answers/README.md says how to add one."
    );
    Response::detail(500, &why)
}

/// RFC 7386 JSON merge patch: objects merge by key, null removes a key, all else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let object = target.as_object_mut().expect("made an object above");
    for (key, change) in changes {
        if change.is_null() {
            object.shift_remove(key);
        } else {
            merge(object.entry(key.clone()).or_insert(Value::Null), change);
        }
    }
}
