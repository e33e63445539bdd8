//! The fake's in-memory data: the synthetic corpus read from
//! `fixtures/backend/`, plus the knobs a test can turn.

use super::util::{fmt_iso_z, fmt_sqlite, now, py_json};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Everything the fake serves. Every field is public so a test can adjust it
/// through `FakeBackend::state()`; records are kept as JSON values in the
/// shape of the backend's SQLite rows (0/1 flags, JSON-in-string columns).
#[derive(Clone, Debug)]
pub struct State {
    /// Rows of `documents` (with `pub_sort` filled in).
    pub documents: Vec<Value>,
    /// Stored vectors by document id; a paper missing here is "not embedded".
    pub vectors: BTreeMap<i64, Vec<f64>>,
    /// Word lists for each vector axis, used to turn a query into a vector.
    pub query_axes: Vec<Vec<String>>,
    /// Rows of `routines`: flags as 0/1, `parameters` etc. as JSON text.
    pub routines: Vec<Value>,
    /// Rows of `routine_missed_fires`.
    pub missed_fires: Vec<Value>,
    /// Coverage-audit answers by routine id (routines missing here get an early answer).
    pub routine_coverage: BTreeMap<i64, Value>,
    /// Delivery targets: `{id, routine_id, channel, enabled, target}`.
    pub delivery_targets: Vec<Value>,
    /// Rows of `deliveries` (with `target_snapshot`).
    pub deliveries: Vec<Value>,
    /// Rows of `executions`, each with its `coverage` object.
    pub executions: Vec<Value>,
    /// Which papers each execution found, in stored order.
    pub execution_documents: BTreeMap<i64, Vec<i64>>,
    /// `search.queries_as_sent` by execution id; absent = a run from before the record existed (null).
    pub queries_as_sent: BTreeMap<i64, Value>,
    /// Watch profiles as stored (no `basis_warning`; that is computed).
    pub profiles: Vec<Value>,
    /// Profile matches, each with `profile_id`.
    pub matches: Vec<Value>,
    /// Settings groups: group -> key -> stored text (what the settings table holds).
    pub settings: BTreeMap<String, BTreeMap<String, String>>,
    /// `GET/PUT /api/settings/execution` values (an excluded route).
    pub execution_settings: Value,
    /// Read-only metadata for the embeddings group.
    pub embedding_providers: Value,
    pub embedding_status: Value,
    /// `GET /api/repositories/catalog`.
    pub catalog: Vec<Value>,
    /// `GET /api/credentials`.
    pub credentials: Value,
    /// `GET /api/watchdog`.
    pub watchdog: Value,
    /// Analytics fixtures by file stem.
    pub analytics: BTreeMap<String, Value>,
    /// Lifecycle answers by document id (others: never checked).
    pub lifecycle: BTreeMap<i64, Value>,
    /// Fixed sentences for `/why`.
    pub why_text: Value,
    /// Fixed sentences for the search record.
    pub search_record_text: Value,

    // ------------------------------------------------ knobs
    /// False: semantic search declines ("No embedding model is configured…").
    pub embeddings_configured: bool,
    /// Some(sentence): semantic search declines with that sentence (e.g. the embedding call failed).
    pub similarity_decline_reason: Option<String>,
    /// False: the vector extension "cannot load" (health, similar, capability say so).
    pub vector_extension_loadable: bool,
    /// True: distances are served unrounded (the realistic slice); else to 4 decimals.
    pub full_precision_distances: bool,
    /// Runs resmon is running now. The fake never changes this itself.
    pub running_count: usize,
    /// At or above this, a routine run is queued (202) and a sweep refused (429).
    pub run_limit: usize,
    /// How many queued routine fires the queue holds before a run is a 409.
    pub queue_limit: usize,
    /// Routine ids waiting in the fire queue (oldest first).
    pub queue: Vec<i64>,
    /// Health's `version`.
    pub version: String,
    /// Health's and identity's `schema_version`.
    pub schema_version: Option<i64>,
    /// False for a release from before instance identity: health and the
    /// execution route carry no `identity` and ignore `expected_runtime_id`.
    pub reports_identity: bool,
    /// Fields of a created routine that this release does not store (an
    /// older resmon drops fields it does not know without a word).
    pub dropped_on_create: Vec<String>,
    /// Export formats this release does not know (answered 400 as unknown).
    pub formats_unknown: Vec<String>,
    /// `request_id`s already used by sweeps.
    pub sweep_request_ids: BTreeMap<String, i64>,
    pub next_execution_id: i64,
    pub next_routine_id: i64,
    pub next_profile_id: i64,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backend")
}

/// Which papers the fake serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corpus {
    /// The short synthetic corpus (`documents.json`, ids 801..=834) that every
    /// other fixture refers to.
    Short,
    /// The realistic slice (`realistic/`, ids 2001..=2120): long titles, many
    /// authors, arXiv DOIs and URLs, for measuring context budgets. Only the
    /// papers and their vectors change; routines, runs and profiles stay.
    Realistic,
}

/// Stored papers, their vectors and the query axes, as `State` keeps them.
type Papers = (Vec<Value>, BTreeMap<i64, Vec<f64>>, Vec<Vec<String>>);

/// The papers of one fixture folder.
fn papers_from(dir: &str) -> Papers {
    let mut documents = arr(&load(&format!("{dir}documents.json")));
    for d in &mut documents {
        let pub_sort = text(d, "publication_date").unwrap_or("").to_string();
        d["pub_sort"] = Value::String(pub_sort);
    }
    let emb = load(&format!("{dir}embeddings.json"));
    let vectors = emb["vectors"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let vec: Vec<f64> = v.as_array()?.iter().filter_map(Value::as_f64).collect();
                    Some((k.parse::<i64>().ok()?, vec))
                })
                .collect()
        })
        .unwrap_or_default();
    let query_axes = arr(&emb["query_axes"])
        .iter()
        .map(|a| arr(a).iter().filter_map(|w| w.as_str().map(str::to_string)).collect())
        .collect();
    (documents, vectors, query_axes)
}

fn load(name: &str) -> Value {
    let path = fixture_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fake backend: cannot read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("fake backend: {} is not JSON: {e}", path.display()))
}

fn arr(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

fn id_map(v: &Value) -> BTreeMap<i64, Value> {
    v.as_object()
        .map(|m| m.iter().filter_map(|(k, x)| Some((k.parse::<i64>().ok()?, x.clone()))).collect())
        .unwrap_or_default()
}

pub fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

pub fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

impl State {
    /// Reads the synthetic corpus from `fixtures/backend/`.
    pub fn load() -> State {
        State::load_with(Corpus::Short)
    }

    /// Reads `fixtures/backend/`, with the papers of `corpus`.
    pub fn load_with(corpus: Corpus) -> State {
        let (documents, vectors, query_axes) = match corpus {
            Corpus::Short => papers_from(""),
            Corpus::Realistic => papers_from("realistic/"),
        };

        let routines_file = load("routines.json");
        let exec_file = load("executions.json");
        let mut executions = arr(&exec_file["executions"]);
        let mut execution_documents = BTreeMap::new();
        for e in &mut executions {
            if let Some(obj) = e.as_object_mut()
                && let Some(ids) = obj.shift_remove("_document_ids")
            {
                let id = obj.get("id").and_then(Value::as_i64).unwrap_or(0);
                execution_documents.insert(id, arr(&ids).iter().filter_map(Value::as_i64).collect());
            }
        }
        let deliveries_file = load("deliveries.json");
        let settings_file = load("settings.json");
        let mut settings = BTreeMap::new();
        for group in ["ai", "assistant", "email", "embeddings", "storage", "notifications", "cloud"] {
            let mut keys = BTreeMap::new();
            if let Some(m) = settings_file[group].as_object() {
                for (k, v) in m {
                    keys.insert(k.clone(), v.as_str().unwrap_or_default().to_string());
                }
            }
            settings.insert(group.to_string(), keys);
        }

        let mut analytics = BTreeMap::new();
        for name in [
            "summary",
            "publication-volume",
            "source-contribution",
            "keyword-contribution",
            "routine-health",
            "discovery-lag",
        ] {
            analytics.insert(name.to_string(), load(&format!("analytics/{name}.json")));
        }

        let mut st = State {
            documents,
            vectors,
            query_axes,
            routines: arr(&routines_file["routines"]),
            missed_fires: arr(&routines_file["missed_fires"]),
            routine_coverage: id_map(&load("coverage.json")),
            delivery_targets: arr(&deliveries_file["targets"]),
            deliveries: arr(&deliveries_file["deliveries"]),
            executions,
            execution_documents,
            queries_as_sent: id_map(&exec_file["queries_as_sent"]),
            profiles: arr(&load("profiles.json")["profiles"]),
            matches: arr(&load("matches.json")["matches"]),
            settings,
            execution_settings: settings_file["execution"].clone(),
            embedding_providers: settings_file["_embedding_providers"].clone(),
            embedding_status: settings_file["_embedding_status"].clone(),
            catalog: arr(&load("catalog.json")),
            credentials: load("credentials.json"),
            watchdog: load("watchdog.json"),
            analytics,
            lifecycle: id_map(&load("lifecycle.json")),
            why_text: load("why.json"),
            search_record_text: load("search_record.json"),
            embeddings_configured: true,
            similarity_decline_reason: None,
            vector_extension_loadable: true,
            full_precision_distances: corpus == Corpus::Realistic,
            running_count: 0,
            run_limit: 3,
            queue_limit: 16,
            queue: Vec::new(),
            version: "2.3.0".into(),
            schema_version: Some(21),
            reports_identity: true,
            dropped_on_create: Vec::new(),
            formats_unknown: Vec::new(),
            sweep_request_ids: BTreeMap::new(),
            next_execution_id: 0,
            next_routine_id: 0,
            next_profile_id: 0,
        };
        st.next_execution_id = st.executions.iter().filter_map(|e| int(e, "id")).max().unwrap_or(0) + 1;
        st.next_routine_id = st.routines.iter().filter_map(|r| int(r, "id")).max().unwrap_or(0) + 1;
        st.next_profile_id = st.profiles.iter().filter_map(|p| int(p, "id")).max().unwrap_or(0) + 1;
        st
    }

    // ------------------------------------------------ lookups

    pub fn document(&self, id: i64) -> Option<&Value> {
        self.documents.iter().find(|d| int(d, "id") == Some(id))
    }

    pub fn routine(&self, id: i64) -> Option<&Value> {
        self.routines.iter().find(|r| int(r, "id") == Some(id))
    }

    pub fn routine_mut(&mut self, id: i64) -> Option<&mut Value> {
        self.routines.iter_mut().find(|r| int(r, "id") == Some(id))
    }

    pub fn execution(&self, id: i64) -> Option<&Value> {
        self.executions.iter().find(|e| int(e, "id") == Some(id))
    }

    pub fn execution_mut(&mut self, id: i64) -> Option<&mut Value> {
        self.executions.iter_mut().find(|e| int(e, "id") == Some(id))
    }

    pub fn profile(&self, id: i64) -> Option<&Value> {
        self.profiles.iter().find(|p| int(p, "id") == Some(id))
    }

    pub fn catalog_entry(&self, slug: &str) -> Option<&Value> {
        self.catalog.iter().find(|c| text(c, "slug") == Some(slug))
    }

    /// A stored setting, `""` when never written.
    pub fn setting(&self, group: &str, key: &str) -> String {
        self.settings.get(group).and_then(|g| g.get(key)).cloned().unwrap_or_default()
    }

    /// The running execution of a routine, if it has one.
    pub fn running_execution_of(&self, routine_id: i64) -> Option<i64> {
        self.executions
            .iter()
            .filter(|e| int(e, "routine_id") == Some(routine_id) && text(e, "status") == Some("running"))
            .filter_map(|e| int(e, "id"))
            .max()
    }

    // ------------------------------------------------ test helpers

    /// Moves an execution to another status (e.g. a test finishing a run the fake started).
    /// Sets `end_time` for the terminal statuses.
    pub fn set_execution_status(&mut self, id: i64, status: &str) -> bool {
        let Some(e) = self.execution_mut(id) else {
            return false;
        };
        e["status"] = Value::String(status.into());
        if status != "running" {
            e["end_time"] = Value::String(fmt_iso_z(now().0));
            e["current_stage"] =
                Value::String(if status == "completed" { "complete" } else { status }.into());
        }
        true
    }

    /// A fresh ISO start time that sorts after every stored one, so a new run
    /// is always the newest even if the machine clock is behind the fixtures.
    pub fn next_start_time(&self) -> String {
        let now_text = fmt_iso_z(now().0);
        let latest =
            self.executions.iter().filter_map(|e| text(e, "start_time")).max().unwrap_or("").to_string();
        if now_text > latest {
            now_text
        } else {
            // Past the newest stored one by a second; fine for a fake.
            bump_iso_second(&latest)
        }
    }

    /// Adds a running execution and returns its id.
    pub fn start_execution(
        &mut self,
        execution_type: &str,
        routine_id: Option<i64>,
        params: &Value,
        request_id: Option<String>,
        pid: u32,
        runtime_id: &str,
    ) -> i64 {
        let id = self.next_execution_id;
        self.next_execution_id += 1;
        let start = self.next_start_time();
        let repos: Vec<String> = params["repositories"]
            .as_array()
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        let sources: Vec<Value> = repos
            .iter()
            .map(|slug| {
                json!({"source": slug, "category": "unknown", "label": "not recorded",
                       "note": "resmon has no record of how this source answered yet.",
                       "outcome_recorded": false, "status": null, "result_count": null, "zero_reason": null,
                       "recorded_at": null, "genuine_empty": false, "in_part": false})
            })
            .collect();
        let coverage = json!({
            "execution_id": id, "basis": "selected", "basis_label": "selected sources", "selection_known": true,
            "total": sources.len(),
            "counts": {"answered": 0, "non_answer": 0, "unknown": sources.len(), "genuine_empty": 0, "in_part": 0},
            "summary": format!("{} selected sources: 0 answered, 0 recorded non-answer (could not answer), {} unknown.",
                               sources.len(), sources.len()),
            "sources": sources, "additional_sources": [],
            "notes": ["Source selection comes from the saved repositories list, deduplicated by exact identifier."]
        });
        let row = json!({
            "id": id, "execution_type": execution_type, "routine_id": routine_id, "saved_configuration_id": null,
            "parameters": py_json(params), "start_time": start, "end_time": null, "status": "running",
            "result_count": null, "new_result_count": null, "log_path": null, "result_path": null,
            "error_message": null, "progress_events": null, "current_stage": "starting",
            "owner_pid": pid, "owner_runtime_id": runtime_id, "last_seen_at_utc": start,
            "interrupted_reason": null, "restarted_from": null, "cancel_reason": null,
            "dedup_total": null, "dedup_new": null, "dedup_duplicates": null, "dedup_invalid": null,
            "dedup_cross_source": null, "request_id": request_id, "saved_configuration_name": null,
            "coverage": coverage
        });
        self.executions.push(row);
        self.execution_documents.insert(id, Vec::new());
        if let Some(rid) = routine_id
            && let Some(r) = self.routine_mut(rid)
        {
            r["last_executed_at"] = Value::String(fmt_sqlite(now().0));
        }
        id
    }

    /// A routine's `missed_fires` summary.
    pub fn missed_summary(&self, routine_id: i64) -> Value {
        let rows: Vec<&Value> =
            self.missed_fires.iter().filter(|m| int(m, "routine_id") == Some(routine_id)).collect();
        let last = rows.iter().filter_map(|m| text(m, "due_at_utc")).max();
        json!({"count": rows.len(), "last_due_at_utc": last})
    }

    /// The search parameters of a routine, decoded.
    pub fn routine_params(&self, routine_id: i64) -> Map<String, Value> {
        self.routine(routine_id)
            .and_then(|r| text(r, "parameters"))
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    }
}

fn bump_iso_second(iso: &str) -> String {
    // iso is "YYYY-MM-DDTHH:MM:SSZ"; add one second with carries done by re-formatting.
    let p = |a: usize, b: usize| iso.get(a..b).and_then(|s| s.parse::<i64>().ok());
    match (p(0, 4), p(5, 7), p(8, 10), p(11, 13), p(14, 16), p(17, 19)) {
        (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) => {
            let days = days_from_civil(y, mo, d);
            fmt_iso_z(days * 86_400 + h * 3600 + mi * 60 + s + 1)
        }
        _ => fmt_iso_z(now().0),
    }
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
