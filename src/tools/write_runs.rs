//! The two writes that start a run now: `run_sweep` and `run_routine`
//! (contract 1.0 "Tools › Write", "Running a routine now", "Execution status").
//! Both return as soon as resmon admits the run; progress is polled.

use serde_json::{Map, Value, json};

use super::accepted::{self, Act, Sent};
use super::{Probe, Tool, nullable, object, rows};
use crate::args::Args;
use crate::backend::{self, Backend, Method, Reply};
use crate::error::{Code, ToolError, ToolResult};

/// resmon's own default is 100; a smaller run is the token-friendlier start.
const DEFAULT_MAX_RESULTS: i64 = 50;

pub(crate) const RUN_SWEEP: Tool = Tool {
    name: "run_sweep",
    title: "Run a one-off search",
    description: "Searches the named sources now, adding new papers to the corpus; returns execution_id \
        at once for get_execution. A run may end `interrupted` (app closed mid-run), not `failed`.",
    always_load: false,
    search_hint: "search now one-off one off ad hoc immediately right away today fetch pull grab \
        harvest new latest papers arxiv pubmed biorxiv sources manual manually once \
        refresh",
    input_schema: run_sweep_input,
    #[cfg(test)]
    output_schema: run_sweep_output,
    backend_names: &[("sources", &["repositories"])],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Post, "/api/search/sweep"),
    requires_confirmation: true,
    // Adds an execution and papers; removes and overwrites nothing.
    destructive: false,
    // Each call is a new run with a new execution id.
    idempotent: false,
    open_world: true,
    handler: run_sweep,
};

pub(crate) const RUN_ROUTINE: Tool = Tool {
    name: "run_routine",
    title: "Run a routine now",
    description: "Runs a saved routine now, even if inactive. Read `queued` first: true means resmon \
        is at its run limit and starts it itself later (execution_id null).",
    always_load: false,
    search_hint: "alert alerts saved search trigger start now manually manual immediately right \
        away kick off launch fire execute rerun re-run again force on demand",
    input_schema: run_routine_input,
    #[cfg(test)]
    output_schema: run_routine_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Post, "/api/routines/0/run"),
    requires_confirmation: true,
    destructive: false,
    idempotent: false,
    open_world: true,
    handler: run_routine,
};

fn run_sweep_input() -> Value {
    object(
        json!({
            "query": {"type": "string"},
            "sources": {"type": "array", "items": {"type": "string"}, "description": "Slugs from list_sources."},
            "date_from": {"type": "string", "description": "YYYY-MM-DD"},
            "date_to": {"type": "string"},
            "max_results": {"type": "integer", "minimum": 1, "description": format!("Default {DEFAULT_MAX_RESULTS}.")},
            "ai_enabled": {"type": "boolean"},
        }),
        &["query", "sources"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn run_sweep_output() -> Value {
    object(
        json!({
            "execution_id": {"type": "integer", "description": "Poll with get_execution."},
            "duplicate": {"type": "boolean", "description": "True when resmon took this request for a repeat and answered with its earlier run."},
            "detail": {"type": "string"},
        }),
        &["execution_id", "duplicate", "detail"],
    )
}

fn run_routine_input() -> Value {
    object(json!({"routine_id": {"type": "integer", "minimum": 1}}), &["routine_id"])
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn run_routine_output() -> Value {
    object(
        json!({
            "queued": {"type": "boolean", "description": "Read first: true means no execution exists yet."},
            "execution_id": nullable("The run's id; null while queued."),
            "queue_position": nullable("1 is next; null unless queued."),
            "routine_id": {"type": "integer"},
            "was_inactive": nullable("True when the routine is off its schedule and ran because it was asked to."),
            "detail": nullable("resmon's sentence about the run."),
        }),
        &["queued", "execution_id", "queue_position", "routine_id", "was_inactive", "detail"],
    )
}

fn run_sweep(backend: &mut Backend, args: &Args) -> ToolResult {
    let body = sweep_body(args)?;
    let path = "/api/search/sweep";
    let mut accepted =
        match accepted::send(backend, Act::Sweep, Method::Post, path, Some(&body), Some("execution_id"))? {
            Sent::Refused(reply) if reply.status == 429 => return Err(at_run_limit(&reply)),
            Sent::Refused(reply) => return Err(backend::status_error(&reply)),
            Sent::Accepted(accepted) => accepted,
        };
    let answer = accepted.object()?;
    if let Some(error) = started_and_queued(&mut accepted, &answer) {
        return Err(error);
    }
    // Queued by run_routine's one reading of it: no execution exists yet, so
    // there is no id to answer with, and none is asked for as if one were due.
    if accepted::says_queued(accepted.status(), &Value::Object(answer.clone())) {
        return Err(queued_sweep(&accepted, answer));
    }
    let Some(execution_id) = accepted.id() else {
        return Err(accepted.without_id(&answer, "an integer `execution_id`"));
    };
    // Absent means resmon said nothing of a repeat; null is neither answer.
    let duplicate = match answer.get("duplicate") {
        None => false,
        Some(Value::Bool(duplicate)) => *duplicate,
        // Run N may be this call's or an earlier request's: the opening
        // says only that resmon took the search (contract-notes 26).
        Some(other) => {
            let problem = format!(
                "its `duplicate` was neither true nor false (it gave {}), so this server cannot tell \
                 whether run {execution_id} is a new run or one resmon had already started for an \
                 earlier request",
                accepted::shown_value(other)
            );
            return Err(accepted.unclear(&problem, answer));
        }
    };
    let follow = "Poll get_execution for its status; `interrupted` means the app stopped mid-run, not \
        that the search failed.";
    // A duplicate is resmon answering with a run it had before this request
    // (it matches repeats by a request id): by its answer no run was started
    // by this call, and saying "started" would claim one.
    let detail = if duplicate {
        format!(
            "resmon answered with run {execution_id} and `duplicate: true`: by its answer this request \
             repeats one it had already taken, and this call started no new run. {follow}"
        )
    } else {
        format!("Run {execution_id} started. {follow}")
    };
    Ok(json!({"execution_id": execution_id, "duplicate": duplicate, "detail": detail}))
}

/// A sweep resmon queued rather than started (a 202, `queued: true` or a
/// queue position, and no `execution_id`): the search was taken and runs
/// later, but run_sweep answers with a started run's id, which does not
/// exist yet. Said as an error after acceptance in queued words
/// (contract-notes 26), with the answer quoted and `detail.queued`.
fn queued_sweep(accepted: &accepted::Accepted, answer: Map<String, Value>) -> ToolError {
    let mut said = Vec::new();
    if accepted.status() == 202 {
        said.push("status 202".to_string());
    }
    if let Some(queued) = answer.get("queued").filter(|queued| !queued.is_null()) {
        said.push(format!("`queued: {}`", accepted::shown_value(queued)));
    }
    if let Some(position) = answer.get("queue_position").filter(|position| !position.is_null()) {
        said.push(format!("`queue_position` {}", accepted::shown_value(position)));
    }
    let said = match said.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "its answer".to_string(),
    };
    let problem = format!(
        "run_sweep answers with a started run's `execution_id`, and a queued search has none yet (resmon \
         said it was queued with {said})"
    );
    accepted.quoting(&problem, answer).with_detail("queued", json!(true))
}

/// The route's own field names (`repositories`, not `sources`). The dates
/// and `ai_enabled` are sent only when given, so resmon's defaults stay
/// resmon's; `max_results` is always sent, this server's smaller default
/// when none is given (a field this server chose, contract-notes 17).
fn sweep_body(args: &Args) -> Result<Value, ToolError> {
    let query = args.required_str("query")?;
    if query.trim().is_empty() {
        return Err(ToolError::invalid_argument("query", "`query` is blank: give the words to search for."));
    }
    let sources = args.non_empty_strings("sources")?;
    let mut body = Map::new();
    body.insert("query".into(), json!(query));
    body.insert("repositories".into(), json!(sources));
    body.insert("max_results".into(), json!(args.int("max_results").unwrap_or(DEFAULT_MAX_RESULTS)));
    for name in ["date_from", "date_to"] {
        if let Some(date) = args.str(name) {
            body.insert(name.into(), json!(date));
        }
    }
    if let Some(ai_enabled) = args.bool("ai_enabled") {
        body.insert("ai_enabled".into(), json!(ai_enabled));
    }
    Ok(Value::Object(body))
}

/// 429 at the manual-run cap (a sweep's or a routine's run): a conflict in
/// resmon's words, with its hint of when to try again.
fn at_run_limit(reply: &Reply) -> ToolError {
    let error = backend::status_error(reply);
    match reply.header("Retry-After").and_then(|value| value.trim().parse::<u64>().ok()) {
        Some(seconds) => error.with_detail("retry_after_seconds", json!(seconds)),
        None => error,
    }
}

fn run_routine(backend: &mut Backend, args: &Args) -> ToolResult {
    let routine_id = args.required_int("routine_id")?;
    let path = format!("/api/routines/{routine_id}/run");
    let act = Act::RoutineRun { routine_id };
    let mut accepted = match accepted::send(backend, act, Method::Post, &path, None, Some("execution_id"))? {
        Sent::Refused(reply)
            if reply.status == 409
                && reply.header("X-Resmon-Conflict") == Some("routine_already_running") =>
        {
            return Err(already_running(&reply));
        }
        Sent::Refused(reply) if reply.status == 429 => return Err(at_run_limit(&reply)),
        Sent::Refused(reply) => return Err(backend::status_error(&reply)),
        Sent::Accepted(accepted) => accepted,
    };
    let object = accepted.object()?;
    read_run_answer(&mut accepted, routine_id, &object)?;
    let answer = run_answer(routine_id, accepted.status(), &Value::Object(object.clone()));
    // Started means an execution to poll: a start without its id would leave
    // the caller nothing to follow, so it is not reported as a start.
    if answer["queued"] == json!(false) && !answer["execution_id"].is_i64() {
        return Err(accepted.without_id(&object, "an integer `execution_id` for a started run"));
    }
    Ok(answer)
}

/// Everything of a run's answer that is passed on is read as its kind, and
/// none of it may contradict the rest or the call (contract-notes 26): an
/// answer about another routine, a `queued` that is not a boolean, a run
/// both started and queued, a `queue_position`, `was_inactive` or `detail`
/// of another kind, is the
/// error after acceptance that quotes the answer, never a guess. Where the
/// answer leaves unclear whether the run started, the opening says only that
/// resmon accepted the request.
fn read_run_answer(
    accepted: &mut accepted::Accepted,
    routine_id: i64,
    answer: &Map<String, Value>,
) -> Result<(), ToolError> {
    let quoted = || answer.clone();
    let field = |name: &str| answer.get(name).filter(|value| !value.is_null());
    match field("routine_id") {
        Some(said) if said.as_i64() == Some(routine_id) => {}
        Some(said) if said.is_i64() => {
            let problem = format!("its answer is about routine {said}, not routine {routine_id}");
            return Err(accepted.contradiction(&problem, quoted()));
        }
        Some(said) => {
            let problem = format!(
                "its `routine_id` was not an integer (it gave {}), so this server cannot tell which \
                 routine it ran",
                accepted::shown_value(said)
            );
            return Err(accepted.contradiction(&problem, quoted()));
        }
        None => {}
    }
    if let Some(queued) = field("queued").filter(|queued| !queued.is_boolean()) {
        let problem = format!(
            "its `queued` was neither true nor false (it gave {}), so this server cannot tell whether the \
             run started or was queued",
            accepted::shown_value(queued)
        );
        return Err(accepted.contradiction(&problem, quoted()));
    }
    if let Some(error) = started_and_queued(accepted, answer) {
        return Err(error);
    }
    // From here on the answer says one thing, started or queued, and the
    // opening says it; a field of another kind is quoted beside it.
    if let Some(position) =
        field("queue_position").filter(|position| position.as_i64().is_none_or(|at| at < 1))
    {
        let problem = format!(
            "its `queue_position` was not a positive integer (it gave {})",
            accepted::shown_value(position)
        );
        return Err(accepted.quoting(&problem, quoted()));
    }
    if let Some(flag) = field("was_inactive").filter(|flag| rows::flag(Some(flag)).is_none()) {
        let problem = format!(
            "its `was_inactive` was neither true nor false (it gave {})",
            accepted::shown_value(flag)
        );
        return Err(accepted.quoting(&problem, quoted()));
    }
    // resmon's `detail` sentence is passed on as it came, never read for
    // words: prose is not a field to judge the run by.
    match field("detail") {
        Some(Value::String(_)) | None => {}
        Some(other) => {
            let problem =
                format!("its `detail` was not a sentence (it gave {})", accepted::shown_value(other));
            return Err(accepted.quoting(&problem, quoted()));
        }
    }
    Ok(())
}

/// An answer that says a run both started and was queued: an execution id
/// beside `queued: true`, a 202 or a queue position, or `queued: false` with
/// a 202 or a queue position. Neither is taken for what happened; the error
/// quotes both (contract-notes 26).
fn started_and_queued(accepted: &mut accepted::Accepted, answer: &Map<String, Value>) -> Option<ToolError> {
    let accepted_later = accepted.status() == 202;
    let queued = answer.get("queued");
    let position = answer.get("queue_position").filter(|position| !position.is_null());
    let said_queued = accepted::says_queued(accepted.status(), &Value::Object(answer.clone()));
    let execution_id = answer.get("execution_id").filter(|id| !id.is_null());
    let said_started =
        execution_id.is_some() || ((accepted_later || position.is_some()) && queued == Some(&json!(false)));
    if !(said_queued && said_started) {
        return None;
    }
    let mut said = Vec::new();
    let mut answered = Map::new();
    if accepted_later {
        said.push("status 202 (queued)".to_string());
    }
    if let Some(queued) = queued {
        said.push(format!("`queued: {queued}`"));
        answered.insert("queued".into(), queued.clone());
    }
    if let Some(position) = position {
        said.push(format!("`queue_position` {}", accepted::shown_value(position)));
        answered.insert("queue_position".into(), position.clone());
    }
    if let Some(id) = execution_id {
        said.push(format!("`execution_id` {id}"));
        answered.insert("execution_id".into(), id.clone());
    }
    let problem = format!(
        "its answer contradicts itself: it gave {}, which say both that a run started and that it was \
         queued, so this server cannot tell which happened",
        said.join(" and ")
    );
    Some(accepted.contradiction(&problem, answered))
}

/// Started (200) and queued (202) share one shape whose nullable fields are
/// always present (contract-notes 7); `queued` is decided by the status as well
/// as the body, so a queued run can never be read as started.
fn run_answer(routine_id: i64, status: u16, answer: &Value) -> Value {
    let queued = accepted::says_queued(status, answer);
    let field = |name: &str| answer.get(name).cloned().unwrap_or(Value::Null);
    json!({
        "queued": queued,
        "execution_id": if queued { Value::Null } else { field("execution_id") },
        "queue_position": if queued { field("queue_position") } else { Value::Null },
        "routine_id": answer.get("routine_id").and_then(Value::as_i64).unwrap_or(routine_id),
        "was_inactive": rows::flag_value(answer.get("was_inactive")),
        "detail": field("detail"),
    })
}

/// The machine-readable part of this conflict travels in headers; the body is
/// a sentence (backend-facts 9).
fn already_running(reply: &Reply) -> ToolError {
    let execution_id =
        reply.header("X-Resmon-Execution-Id").and_then(|value| value.trim().parse::<i64>().ok());
    ToolError::new(Code::Conflict, backend::status_error(reply).message)
        .with_detail("conflict", json!("routine_already_running"))
        .with_detail("execution_id", json!(execution_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_run_never_reports_an_execution_id() {
        let answer = run_answer(7, 202, &json!({"execution_id": 5, "queue_position": 2, "detail": "queued"}));
        assert_eq!(answer["queued"], json!(true));
        assert_eq!(answer["execution_id"], Value::Null);
        assert_eq!(answer["queue_position"], json!(2));
        let started = run_answer(7, 200, &json!({"execution_id": 5, "was_inactive": true}));
        assert_eq!(started["queued"], json!(false));
        assert_eq!(started["execution_id"], json!(5));
        assert_eq!(started["queue_position"], Value::Null);
        assert_eq!(started["detail"], Value::Null);
    }
}
