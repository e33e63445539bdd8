//! What a fake remembers between requests: the records writes change, the run
//! queue, and the knobs a test can turn. All else it serves is a recorded answer.

use super::answers::{self, Context};
use super::util::{fmt_sqlite, fmt_time, now};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Which papers the fake serves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Corpus {
    /// The short synthetic corpus (ids 801..=834) that every other fixture refers to.
    #[default]
    Short,
    /// The realistic slice (`realistic/`, ids 2001..=2120), for measuring context
    /// budgets: only the paper answers change.
    Realistic,
}

/// The fake's memory, for a test to read or adjust through `FakeBackend::state()`.
#[derive(Clone, Debug, Default)]
pub struct State {
    pub corpus: Corpus,
    /// Rows of `routines` as resmon stores them: flags as 0/1, `parameters` as JSON text.
    pub routines: Vec<Value>,
    /// Rows of `routine_missed_fires`.
    pub missed_fires: Vec<Value>,
    /// Executions as `GET /api/executions` answers them.
    pub executions: Vec<Value>,
    /// Watch profiles as `GET /api/profiles` answers them.
    pub profiles: Vec<Value>,
    /// False: semantic search declines, as when no embedding model is configured.
    pub embeddings_configured: bool,
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
    /// False for a release before instance identity: no `identity`, `expected_runtime_id` ignored.
    pub reports_identity: bool,
    /// True once `emulate_older_release` ran: answers recorded for it are preferred.
    pub older_release: bool,
    /// True once `refuse_json_by_validation` ran.
    pub json_refused_by_validation: bool,
    /// Routes (method, path pattern) `FakeBackend::lack_route` took away: no longer
    /// served by that method, so another method there gets 404, not 405.
    pub lacking: Vec<(String, String)>,
    /// `request_id`s already used by sweeps.
    pub sweep_request_ids: BTreeMap<String, i64>,
    /// When set, every sweep is answered as a `request_id` seen before: this execution,
    /// `duplicate: true`, no new run.
    pub sweep_duplicate_of: Option<i64>,
    /// Merge patches applied to a settings group's answer after each PUT to it that
    /// succeeds, by path: a write that changes keys nobody asked for.
    pub settings_side_effects: Vec<(String, Value)>,
    pub next_execution_id: i64,
    pub next_routine_id: i64,
    pub next_profile_id: i64,
    /// This fake's copies of recorded answers it or a test changed, by index in the table.
    pub edits: BTreeMap<usize, Value>,
}

/// A JSON file under `fixtures/backend/`.
pub fn load(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backend").join(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fake backend: cannot read {path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("fake backend: {path:?} is not JSON: {e}"))
}

fn list(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

pub fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

pub fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn next_id(rows: &[Value]) -> i64 {
    rows.iter().filter_map(|r| int(r, "id")).max().unwrap_or(0) + 1
}

impl State {
    /// The records of `fixtures/backend/` (`routines.json` as stored, `records.json` as answered).
    pub fn load_with(corpus: Corpus) -> State {
        let (stored, records) = (load("routines.json"), load("records.json"));
        let (routines, executions) = (list(&stored["routines"]), list(&records["executions"]));
        let profiles = list(&records["profiles"]);
        State {
            corpus,
            missed_fires: list(&stored["missed_fires"]),
            next_execution_id: next_id(&executions),
            next_routine_id: next_id(&routines),
            next_profile_id: next_id(&profiles),
            routines,
            executions,
            profiles,
            embeddings_configured: true,
            run_limit: 3,
            queue_limit: 16,
            version: "2.3.0".into(),
            reports_identity: true,
            ..State::default()
        }
    }

    pub fn context(&self) -> Context {
        Context {
            corpus: if self.corpus == Corpus::Realistic { "realistic" } else { "short" },
            embeddings: self.embeddings_configured,
            release: if self.older_release { "older" } else { "current" },
        }
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

    /// The JSON body `GET path` answers with: this fake's copy, else the recorded one.
    pub fn answer(&self, path: &str) -> Option<&Value> {
        let i = answers::find("GET", path, &[], b"", &self.context())?;
        self.edits.get(&i).or_else(|| answers::table()[i].raw.get("json"))
    }

    /// This fake's own copy of the JSON body `GET path` answers with, for a test to
    /// adjust; panics when no answer was recorded for that path.
    pub fn answer_mut(&mut self, path: &str) -> &mut Value {
        let i = answers::find("GET", path, &[], b"", &self.context())
            .unwrap_or_else(|| panic!("fake backend: no recorded answer for GET {path}"));
        self.edits.entry(i).or_insert_with(|| answers::table()[i].raw["json"].clone())
    }

    /// A setting as `GET /api/settings/{group}` answers it, `""` when absent.
    pub fn setting(&self, group: &str, key: &str) -> String {
        let Some(body) = self.answer(&format!("/api/settings/{group}")) else { return String::new() };
        match body.get(key).or_else(|| body["settings"].get(key)) {
            Some(Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => String::new(),
        }
    }

    /// The running execution of a routine, if it has one.
    pub fn running_execution_of(&self, routine_id: i64) -> Option<i64> {
        let running =
            |e: &&Value| int(e, "routine_id") == Some(routine_id) && text(e, "status") == Some("running");
        self.executions.iter().filter(running).filter_map(|e| int(e, "id")).max()
    }

    /// Adds a running execution of these search parameters and returns its id. It
    /// starts no earlier than a stored one: the newest even when the clock is behind.
    pub fn start_execution(
        &mut self,
        execution_type: &str,
        routine_id: Option<i64>,
        params: &Value,
        request_id: Option<String>,
        runtime_id: &str,
    ) -> i64 {
        let id = self.next_execution_id;
        self.next_execution_id += 1;
        let latest = self.executions.iter().filter_map(|e| text(e, "start_time")).max();
        let start = fmt_time(now().0, 'T', "Z").max(latest.unwrap_or_default().to_string());
        let repositories = params["repositories"].clone();
        let source = |source| {
            json!({"source": source, "category": "unknown", "label": "not recorded",
                                     "outcome_recorded": false, "status": null, "result_count": null})
        };
        let sources: Vec<Value> = list(&repositories).into_iter().map(source).collect();
        let n = sources.len();
        let keywords = match (params.get("keywords"), text(params, "query")) {
            (Some(k), _) if k.as_array().is_some_and(|k| !k.is_empty()) => k.clone(),
            (_, Some(q)) if !q.trim().is_empty() => json!([q]),
            _ => json!([]),
        };
        self.executions.push(json!({
            "id": id, "execution_type": execution_type, "routine_id": routine_id, "saved_configuration_id": null,
            "parameters": params.to_string(), "start_time": start, "end_time": null, "status": "running",
            "result_count": null, "new_result_count": null, "log_path": null, "result_path": null,
            "error_message": null, "progress_events": null, "current_stage": "starting",
            "owner_pid": std::process::id(), "owner_runtime_id": runtime_id, "last_seen_at_utc": start,
            "interrupted_reason": null, "restarted_from": null, "cancel_reason": null, "dedup_total": null,
            "dedup_new": null, "dedup_duplicates": null, "dedup_invalid": null, "dedup_cross_source": null,
            "request_id": request_id, "saved_configuration_name": null,
            "coverage": {"execution_id": id, "basis": "selected", "total": n, "sources": sources,
                         "counts": {"answered": 0, "non_answer": 0, "unknown": n, "genuine_empty": 0, "in_part": 0}},
            "query": params["query"], "keywords": keywords, "repositories": repositories,
            "total_results": null, "new_results": null,
            "source_outcomes": {"selected": n, "answered": 0, "could_not_answer": 0, "not_recorded": n,
                                "sources_that_could_not_answer": [], "in_part": 0}
        }));
        if let Some(r) = routine_id.and_then(|rid| self.routine_mut(rid)) {
            r["last_executed_at"] = Value::String(fmt_sqlite(now().0));
        }
        id
    }
}
