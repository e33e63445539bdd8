//! The one rule every write keeps once resmon has accepted it
//! (contract-notes 26): a 2xx status line is acceptance, so whatever fails
//! after it (the body breaks off or stalls, it is not JSON, it has another
//! shape, the read-back fails) is said as what resmon did first, then what
//! went wrong, then whether the call may be repeated. It is never said as if
//! nothing happened, and never with `outcome_unknown`, which is for a write
//! whose answer said neither acceptance nor refusal: no status line, only
//! an interim one, a redirect or a 5xx (backend/refusal/unsettled.rs and
//! backend/exchange/failure.rs word those).
//!
//! The seven writes send through [`send`] and build every error after
//! acceptance with [`Accepted::fail`].
//!
//! This file holds the rule itself (sending, reading the answer, the code and
//! detail of an error after acceptance); `sentences` says what resmon did and
//! what to do next in words; `tests` holds the unit tests.

mod sentences;
#[cfg(test)]
mod tests;

use serde_json::{Map, Value, json};

use crate::args::{Repeats, TwiceGiven};
use crate::backend::{self, Backend, Method, Reply};
use crate::error::{Code, ToolError, first_sentence};
use crate::settings_policy as policy;

/// What a write does, for the sentence that opens an error after acceptance.
pub(crate) enum Act {
    /// Makes one record; a second call makes a second one.
    /// `shows_one` is the read tool that shows it by id, `lists_all` the list
    /// that shows it;
    /// `reads_back` says whether the tool reads the record back after it.
    Create {
        noun: &'static str,
        tool: &'static str,
        shows_one: &'static str,
        lists_all: &'static str,
        reads_back: bool,
    },
    /// A one-off search run (`run_sweep`).
    Sweep,
    /// A run of a saved routine, started or queued (`run_routine`).
    RoutineRun { routine_id: i64 },
    /// Puts a routine on or off the schedule; repeating changes nothing more.
    Switch { routine_id: i64, on: bool },
    /// Saves settings of one group; repeating changes nothing more.
    Settings { group: String },
}

/// A write resmon accepted: its route, its status, and what its answer said
/// so far.
pub(crate) struct Accepted {
    act: Act,
    route: String,
    status: u16,
    /// The route's own key for the id its answer carries, if it has one.
    id_key: Option<&'static str>,
    /// The id read under `id_key`, once the answer was read.
    id: Option<i64>,
    /// The answer's body, or why it could not be read whole.
    body: Result<Reply, ToolError>,
    /// Set once the answer was found to contradict itself or the call, or
    /// to leave unreadable what it did: the opening then says only that
    /// resmon accepted the request.
    contradicted: bool,
}

/// What sending a write came to, when a final status line said it was
/// accepted or refused.
pub(crate) enum Sent {
    /// A 4xx, its body read whole: resmon refused, so nothing was done.
    Refused(Reply),
    Accepted(Accepted),
}

/// Sends one write. Every answer that leaves the outcome unknown is an
/// error with `outcome_unknown` (contract-notes 26): no status line, only an
/// interim one, a redirect (3xx) or a 5xx, whether its body arrived whole
/// or not. A 4xx whose body did not arrive is still a refusal, said as one.
pub(crate) fn send(
    backend: &mut Backend,
    act: Act,
    method: Method,
    path: &str,
    body: Option<&Value>,
    id_key: Option<&'static str>,
) -> Result<Sent, ToolError> {
    let route = format!("{} {path}", method.as_str());
    backend.expect_write(act.write_check());
    let (status, body) = match backend.send(method, path, &[], body) {
        // A redirect or a 5xx does not say whether the work was done: said
        // as an outcome not known, with the read that tells.
        Ok(reply) if (300..400).contains(&reply.status) || reply.status >= 500 => {
            return Err(backend::status_error(&reply));
        }
        Ok(reply) if !reply.is_success() => return Ok(Sent::Refused(reply)),
        Ok(reply) => (reply.status, Ok(reply)),
        Err(error) => match backend::answered_before_failing(&error, &route) {
            Some(status) if (200..300).contains(&status) => (status, Err(error)),
            Some(status) => return Err(backend::cut_short(status, error, &act.write_check())),
            None => return Err(error),
        },
    };
    Ok(Sent::Accepted(Accepted { act, route, status, id_key, id: None, body, contradicted: false }))
}

impl Accepted {
    pub(crate) fn status(&self) -> u16 {
        self.status
    }

    /// The answer as a JSON object. Whatever stops that (the body unread,
    /// not JSON, not an object) is an error after acceptance. The id under
    /// the route's own key is taken from here, and only from there.
    pub(crate) fn object(&mut self) -> Result<Map<String, Value>, ToolError> {
        let reply = match &self.body {
            Ok(reply) => reply,
            Err(cause) => return Err(self.unread(cause.clone())),
        };
        let value = match reply.json() {
            Ok(value) => value,
            Err(_) => {
                // Said as what came: empty, in an encoding this server does
                // not read, or text that is not JSON.
                let what = format!("it answered with {}", reply.unreadable_body());
                return Err(self.fail(&what, None));
            }
        };
        let Value::Object(object) = value else {
            return Err(self.fail("its answer was JSON but not an object", None));
        };
        // serde_json keeps the last of a key given twice; an answer that
        // gives one key two values has said two things, and neither is
        // taken for what resmon meant.
        let twice = match &self.body {
            Ok(reply) => given_twice(reply),
            Err(_) => None,
        };
        if let Some((clause, twice)) = twice {
            return Err(self.contradiction(&format!("its answer {clause}"), twice));
        }
        // A record's id is 1 or more (contract-notes 29); 0 or below names none.
        self.id = self.id_key.and_then(|key| object.get(key)).and_then(Value::as_i64).filter(|id| *id > 0);
        Ok(object)
    }

    /// The error for an answer that contradicts itself or the call (a run
    /// both started and queued, another routine's id, a switch the other
    /// way): the opening says only that resmon accepted the request, the
    /// values are quoted as resmon's answer (`detail.answered`, any
    /// credential-shaped key's value withheld), and no id is taken from it.
    pub(crate) fn contradiction(&mut self, problem: &str, answered: Map<String, Value>) -> ToolError {
        self.id = None;
        self.unclear(problem, answered)
    }

    /// The error for an answer that leaves unread what resmon did (a run's
    /// `duplicate` that is neither true nor false): the opening says only
    /// that resmon accepted the request, as for a contradiction, but an id
    /// under the route's own key is kept, since the record it names exists
    /// whichever way the answer is read.
    pub(crate) fn unclear(&mut self, problem: &str, answered: Map<String, Value>) -> ToolError {
        self.contradicted = true;
        self.quoting(problem, answered)
    }

    /// The error for an answer whose field cannot be read, where what resmon
    /// did is still clear from the rest (a started run's `was_inactive` of
    /// another kind): the opening is the usual one, and the values are
    /// quoted as for a contradiction, never guessed at.
    pub(crate) fn quoting(&self, problem: &str, answered: Map<String, Value>) -> ToolError {
        let mut answered = Value::Object(answered);
        policy::withhold_credentials(&mut answered);
        self.fail(problem, None).with_detail("answered", answered)
    }

    /// The id resmon gave under the route's own key.
    pub(crate) fn id(&self) -> Option<i64> {
        self.id
    }

    /// The error for something that failed after resmon accepted the write:
    /// `problem` says what (a clause: "reading it back failed"), `cause` the
    /// error behind it when there is one. The code is `backend_unavailable`
    /// when the cause was the connection or the clock, else `upstream_error`:
    /// never the cause's own `not_found` or `invalid_argument`, which would
    /// read as if the write had not happened.
    pub(crate) fn fail(&self, problem: &str, cause: Option<ToolError>) -> ToolError {
        let said = match &cause {
            Some(cause) => {
                let sentence = first_sentence(&cause.message);
                let stop = if sentence.ends_with(['.', '!', '?']) { "" } else { "." };
                format!(": {sentence}{stop}")
            }
            None => ".".to_string(),
        };
        self.build(&format!("{problem}{said}"), cause)
    }

    /// `fail` for an answer whose body could not be read whole, said from
    /// why (backend/exchange/failure.rs's `body_unread`) rather than in the words of an error
    /// written for a request that got no answer.
    fn unread(&self, cause: ToolError) -> ToolError {
        let problem = match cause.detail.get("body_unread").and_then(Value::as_str) {
            // The bound is named as the deadline sentence names it elsewhere.
            Some("timed_out") => match cause.detail.get("deadline_s").and_then(Value::as_f64) {
                Some(seconds) => format!(
                    "its answer stalled, and it was not read before this call's {} s deadline.",
                    seconds as f32
                ),
                None => "its answer stalled, and this call's time ran out before it was read.".to_string(),
            },
            Some("too_large") => {
                "its answer was larger than this server reads, so it was not read.".to_string()
            }
            Some("reset") => "the connection was reset before its answer was read.".to_string(),
            Some("malformed") => "the rest of its answer was not valid HTTP, so it was not read.".to_string(),
            _ => "its answer broke off before it was complete.".to_string(),
        };
        self.build(&problem, Some(cause))
    }

    fn build(&self, problem: &str, cause: Option<ToolError>) -> ToolError {
        let lost_connection = cause.as_ref().is_some_and(lost_connection);
        let code = if lost_connection { Code::BackendUnavailable } else { Code::UpstreamError };
        let mut error = ToolError::new(
            code,
            format!("{} (it answered {}), but {problem} {}", self.did(), self.status, self.next()),
        )
        .with_detail("applied", json!(true))
        .with_detail("route", json!(backend::route_template(&self.route)))
        .with_detail("status", json!(self.status));
        if let (Some(key), Some(id)) = (self.id_key, self.id) {
            error = error.with_detail(key, json!(id));
        }
        if let Some(cause) = cause {
            // What failed afterwards, by its own route and status; its code
            // is left out, since the answer's code is the one that holds.
            let mut failure = cause.detail;
            failure.remove("outcome_unknown");
            error = error.with_detail("failure", Value::Object(failure));
            if code == Code::BackendUnavailable {
                error.top_level = cause.top_level;
            }
        }
        error
    }

    /// `fail` for an answer without an integer under the route's own key:
    /// a number under another key is quoted as resmon's answer, never taken
    /// for the id.
    pub(crate) fn without_id(&self, object: &Map<String, Value>, expected: &str) -> ToolError {
        // Every number, and whatever the route's own key held in its place
        // (`"12"`, a list): quoted, never taken for the id.
        let is_own_key = |key: &str| self.id_key == Some(key);
        let numbers: Map<String, Value> = object
            .iter()
            .filter(|(key, value)| {
                (value.is_number() || (is_own_key(key) && !value.is_null()))
                    && !policy::answer_holds_credential(key, value)
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let quoted = if numbers.is_empty() {
            String::new()
        } else {
            let list: Vec<String> =
                numbers.iter().map(|(key, value)| format!("`{key}`: {}", shown_value(value))).collect();
            format!(" (it gave {}, which this server does not take for it)", list.join(", "))
        };
        let mut error = self.fail(&format!("its answer did not carry {expected}{quoted}"), None);
        if !numbers.is_empty() {
            error = error.with_detail("answered", Value::Object(numbers));
        }
        error
    }
}

/// What an answer's text said twice: its top-level keys given more than
/// once with different values, each with every value given, and the clause
/// that names them ("gave `is_active` more than once, …"). None when it gave
/// each key one value. One reading for a write's own answer and a create's
/// read-back, so neither settles a contradiction by keeping the last value
/// (contract-notes 26).
pub(crate) fn given_twice(reply: &Reply) -> Option<(String, Map<String, Value>)> {
    let twice = reply.read_with(TwiceGiven).map(Repeats::with_different_values).unwrap_or_default();
    if twice.is_empty() {
        return None;
    }
    let keys: Vec<String> = twice.keys().map(|key| format!("`{key}`")).collect();
    let clause = format!(
        "gave {} more than once, with different values, so this server cannot tell which resmon meant",
        keys.join(", ")
    );
    Some((clause, twice))
}

/// Whether what failed after acceptance was the connection or the clock: a
/// timeout (the call's deadline, a stalled body, a request not sent for want
/// of time, a connection not accepted in time), a connection reset or closed
/// without an answer, or one refused. Told by the cause's kind as backend/exchange/failure.rs
/// records it, never by its code: a read-back refused with a 401, or any
/// other answer resmon gave, is not a lost connection.
fn lost_connection(cause: &ToolError) -> bool {
    let detail = |key: &str| cause.detail.get(key);
    if let Some(unread) = detail("body_unread") {
        return matches!(unread.as_str(), Some("timed_out" | "reset"));
    }
    let connection_kind = detail("io").and_then(Value::as_str).is_some_and(|io| {
        backend::CLOSED_CONNECTION.contains(&io) || matches!(io, "ConnectionRefused" | "TimedOut")
    });
    cause.code == Code::BackendUnavailable
        && (connection_kind || detail("deadline_s").is_some() || detail("sent") == Some(&json!(false)))
}

/// Whether a run's answer says it was queued rather than started: a 202,
/// `queued: true`, or a queue position (contract-notes 26). The one reading
/// of "queued" for the run's answer, its sentence and its contradictions.
pub(crate) fn says_queued(status: u16, answer: &Value) -> bool {
    status == 202
        || answer.get("queued").and_then(Value::as_bool) == Some(true)
        || answer.get("queue_position").is_some_and(|position| !position.is_null())
}

/// One value of resmon's answer as a sentence may quote it: compact JSON,
/// any credential-shaped key inside it withheld, and a long one named by
/// its kind only (`detail.answered` carries it whole).
pub(crate) fn shown_value(value: &Value) -> String {
    let mut value = value.clone();
    policy::withhold_credentials(&mut value);
    let text = value.to_string();
    if text.chars().count() <= 60 {
        return text;
    }
    match value {
        Value::String(_) => "a long text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
        _ => "a long number",
    }
    .to_string()
}
