//! The only module that speaks HTTP to resmon, in three concerns, each a
//! child: `exchange` (the agent, the call deadline, one request and its
//! reply), `instance` (discovery, the cache, the resend after a 401, the
//! identity preflight) and `refusal` (resmon's refusals read into the
//! contract's error codes). This file holds what the rest of the crate
//! sees: `Backend`, the limits, and the checks of an answer's shape.
//!
//! Rules (contract-notes 3-5, 16-18): keep-alive on one agent; no proxy,
//! ever (the token must not reach one); redirects are errors, never followed;
//! connect within 3 s; every request of one tool call shares that call's
//! deadline; bodies read incrementally up to a cap; every request carries the
//! bearer token and `Host: 127.0.0.1:<port>` and no `Origin`. A request goes
//! again only as contract-notes 18 says: after `401 token_invalid` (the guard
//! answers it before any work), after a refused connection at a port a port
//! file named (the file read again), and a GET whose kept connection closed
//! before any answer.

mod exchange;
mod instance;
mod refusal;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ureq::Agent;

use self::exchange::Watch;
pub(crate) use self::exchange::{CallerField, Method, Offered, Reply, answered_before_failing};
pub(crate) use self::refusal::{
    cut_short, is_missing_route, is_outcome_unknown, status_error, status_text, success,
};
use crate::discovery::{Candidate, Environment};
use crate::error::{Code, ToolError};

pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Upper bound on one request, connect to last body byte (contract-notes 4).
pub(crate) const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest body read from resmon (contract-notes 4); a larger one is an error.
pub(crate) const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// ureq's read and write buffers, allocated once per connection.
pub const IO_BUFFER_BYTES: usize = 16 * 1024;
/// Longest response head accepted (status line and headers); less than the
/// read buffer, so that a longer one is refused as too large.
pub(crate) const MAX_HEADER_BYTES: usize = 8 * 1024;

/// The `detail.io` names of a connection closed or reset under a request
/// (as backend/exchange/failure.rs writes them, from the I/O error's kind).
pub(crate) const CLOSED_CONNECTION: [&str; 4] =
    ["ConnectionReset", "ConnectionAborted", "UnexpectedEof", "BrokenPipe"];

/// The answer did not have the shape this route promises.
pub(crate) fn unexpected_shape(route: &str, expected: &str) -> ToolError {
    ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon answered {route} with JSON of an unexpected shape (expected {expected}). \
             This server and the running resmon may be from different releases."
        ),
    )
    .with_detail("route", json!(route))
}

/// What a write would have done, and the read that shows whether it did:
/// the words an answer uses when resmon may have carried the write out but
/// said nothing that shows it (no status line, only an interim one, a
/// redirect, or a 5xx; contract-notes 26). The tool that sends the write
/// gives them (`Backend::expect_write`), since only it knows its own read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WriteCheck {
    /// What resmon may have done, as the end of "resmon may have …"
    /// ("created a routine").
    pub would_have: String,
    /// One or two sentences naming the read that tells, and asking for it
    /// before the write is called again.
    pub check: String,
}

impl WriteCheck {
    /// The words for a write whose tool gave none.
    pub(crate) fn unnamed() -> WriteCheck {
        WriteCheck {
            would_have: "carried out this write".to_string(),
            check: "Check with the matching read tool (or in the app) before calling it again.".to_string(),
        }
    }
}

/// A confirmed resmon: where it is, and the release it reported.
#[derive(Clone, Debug)]
struct Instance {
    candidate: Candidate,
    version: Option<String>,
    /// Whether its health answer confirmed it as resmon; until then it is
    /// only something on a port, and no sentence calls it resmon.
    confirmed: bool,
}

impl Instance {
    /// How a sentence names it: resmon with its address once confirmed,
    /// otherwise only the port and what named it.
    fn subject(&self) -> String {
        if self.confirmed {
            format!("resmon at {}", self.candidate.base_url())
        } else {
            format!("Something on port {} ({} names that port)", self.candidate.port, self.candidate.named_by)
        }
    }
}

/// The JSON kinds a row field can be required to have.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Integer,
    String,
}

impl Kind {
    fn holds(self, value: &Value) -> bool {
        match self {
            Kind::Integer => value.is_i64() || value.is_u64(),
            Kind::String => value.is_string(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Integer => "an integer",
            Kind::String => "a string",
        }
    }
}

/// Checks that `row` carries each field with its kind; otherwise the error
/// names the route and the first field that is missing or of another kind
/// (contract-notes 25): an answer must never break its own outputSchema,
/// and a row without its id is not a row a caller can use.
pub(crate) fn require_fields(route: &str, row: &Value, fields: &[(&str, Kind)]) -> Result<(), ToolError> {
    for (field, kind) in fields {
        let value = row.get(*field);
        if value.is_some_and(|value| kind.holds(value)) {
            continue;
        }
        return Err(unusable_field(route, field, *kind, value.is_some_and(|value| !value.is_null())));
    }
    Ok(())
}

/// The error for a record whose `field` is missing (or null), or present
/// but not of `kind`: the one sentence `require_fields` and the typed paper
/// lists (tools/corpus.rs) both give.
pub(crate) fn unusable_field(route: &str, field: &str, kind: Kind, malformed: bool) -> ToolError {
    let problem = if malformed { "with a malformed" } else { "without" };
    ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon answered {route} with a record {problem} `{field}` ({} was expected), which \
             this tool needs to answer. This server and the running resmon may be from \
             different releases.",
            kind.name()
        ),
    )
    .with_detail("route", json!(route_template(route)))
    .with_detail("field", json!(field))
}

pub struct Backend {
    env: Environment,
    agent: Agent,
    request_timeout: Duration,
    /// The confirmed instance, cached for the session and dropped on a
    /// connection failure or a 401 so that the next call discovers afresh.
    instance: Option<Instance>,
    /// The release of the last resmon that confirmed, kept after the cache
    /// is dropped so that an error can still say which resmon caused it.
    last_version: Option<Option<String>>,
    /// The address of the last resmon that confirmed, for a sentence about
    /// a request not sent after the cache was dropped.
    last_base: Option<String>,
    /// The current tool call's deadline (contract-notes 4): every request
    /// of one call, discovery included, must finish before it.
    deadline: Option<Instant>,
    /// Names of request fields that carry the current caller's arguments.
    caller_fields: Vec<String>,
    /// The current caller's values that the tool's schema offers.
    offered: Vec<Offered>,
    /// Whether this call already used its one resend (after a 401, or after
    /// a refused connection sent it to what the port file names now).
    resent: bool,
    /// The runtime id the current call is pinned to, if any.
    pinned: Option<String>,
    /// Whether the current call is one of the writes (its tool carries
    /// `requires_confirmation`). Only a write's POSTs and PUTs can change
    /// resmon: a read that sends its question in a POST body (the corpus
    /// search, the reference export) changes nothing, whatever becomes of it.
    writes: bool,
    /// The one route of the current call whose 2xx answer's body is not
    /// read (a write whose answer carries nothing the tool uses).
    status_only: Option<String>,
    /// What the current write would have done and the read that shows it
    /// (`expect_write`); `None` until the write's tool names them.
    write_check: Option<WriteCheck>,
    /// What the transport saw of the current exchange.
    watch: Watch,
}

/// A route's path with its numeric segments written as `{id}`: the form
/// a person can look up, whatever record the call named.
pub(crate) fn route_template(route: &str) -> String {
    let (method, path) = route.split_once(' ').unwrap_or(("", route));
    let segments: Vec<&str> = path
        .split('/')
        .map(|segment| {
            if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) { "{id}" } else { segment }
        })
        .collect();
    format!("{method} {}", segments.join("/")).trim_start().to_string()
}

/// A reply as a unit test builds it: a JSON answer to GET /api/routines/7
/// from resmon 2.3.0, whose `format` this server chose and whose `query`
/// the caller gave.
#[cfg(test)]
fn reply(status: u16, content_type: &str, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".into(), content_type.into())],
        bytes: body.as_bytes().to_vec(),
        route: "GET /api/routines/7".into(),
        backend_version: Some("2.3.0".into()),
        server_chosen: vec!["format".into()],
        caller_supplied: vec!["query".into()],
        offered: Vec::new(),
        write: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_templates_hide_record_ids() {
        assert_eq!(route_template("GET /api/routines/7/deliveries"), "GET /api/routines/{id}/deliveries");
        assert_eq!(route_template("PUT /api/settings/ai"), "PUT /api/settings/ai");
    }
}
