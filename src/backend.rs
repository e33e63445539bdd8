//! The only module that speaks HTTP: one `ureq::Agent` with every setting
//! written out, discovery on first use, and the mapping from what resmon
//! answered to the contract's error codes. Two concerns live in children:
//! `transport` (the socket under the agent: sliced waits, what the wire
//! showed) and `refusal` (a non-2xx answer read into an error code).
//!
//! Rules (contract-notes 3-5, 16-18): keep-alive on one agent; no proxy,
//! ever (the token must not reach one); redirects are errors, never followed;
//! connect within 3 s; every request of one tool call shares that call's
//! deadline; bodies read incrementally up to a cap; every request carries the
//! bearer token and `Host: 127.0.0.1:<port>` and no `Origin`. The one resend
//! is after `401 token_invalid`, which the guard answers before any work.

mod refusal;
mod transport;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ureq::Agent;
use ureq::unversioned::transport::{Connector, DefaultConnector};

pub(crate) use self::refusal::{is_missing_route, status_error, success};
use self::refusal::{refusal_reason, token_refused};
use self::transport::{LiteralResolver, Seen, SlicedWaits, Watch, seen};
use crate::discovery::{self, Candidate, Environment, Trace};
use crate::error::{Code, ToolError};
use crate::{identity, redact};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Put,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

/// What resmon answered, before any judgement about it.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub bytes: Vec<u8>,
    pub route: String,
    /// The release the answering resmon reported in its health answer.
    pub backend_version: Option<String>,
    /// Query and body fields of the request that this server chose rather
    /// than took from the caller's arguments (contract-notes 17).
    pub server_chosen: Vec<String>,
    /// Fields of the request that carry the caller's arguments.
    pub caller_supplied: Vec<String>,
    /// The caller's values that the tool's own schema offers, with what the
    /// request carried for each (contract-notes 17).
    pub offered: Vec<Offered>,
}

/// A value the caller gave that the tool's own input schema offers in an
/// `enum`: a refusal of it as unknown is the release's limitation, not the
/// caller's mistake (contract-notes 17).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offered {
    /// The tool's argument, as the caller named it.
    pub argument: String,
    /// The value the caller gave.
    pub value: String,
    /// The request fields that carry it (empty when it travels in the path).
    pub fields: Vec<String>,
    /// What those fields held in the request sent (it may be the value
    /// under another name, such as `mode: semantic` sent as a sort).
    pub sent: Vec<String>,
    /// The schema's other values for the argument: a refusal that lists
    /// some of them as what it accepts is refusing this one.
    pub choices: Vec<String>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON. A body that is not JSON is an upstream error whose
    /// message never repeats the body (contract-notes 5).
    pub(crate) fn json(&self) -> Result<Value, ToolError> {
        self.read()
    }

    /// The body read straight into a type that borrows from it, such as a
    /// loose row (tools/loose.rs), with the same error as `json` when it
    /// cannot be read. The body must be UTF-8 throughout, as JSON text is,
    /// even where a loose row skips a field without decoding it.
    pub(crate) fn read<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, ToolError> {
        self.read_with(std::marker::PhantomData::<T>)
    }

    /// `read` with a seed: a reader that needs to know something before it
    /// reads, such as which rows of a list to build (`loose::Window`).
    pub(crate) fn read_with<'a, S: serde::de::DeserializeSeed<'a>>(
        &'a self,
        seed: S,
    ) -> Result<S::Value, ToolError> {
        let not_json = || {
            let mut error = ToolError::new(
                Code::UpstreamError,
                format!("resmon answered {} with {}.", self.route, self.unreadable_body()),
            )
            .with_detail("status", json!(self.status))
            .with_detail("route", json!(self.route));
            if let Some(encoding) = self.foreign_encoding() {
                error = error.with_detail("content_encoding", json!(encoding));
            }
            error
        };
        let text = std::str::from_utf8(&self.bytes).map_err(|_| not_json())?;
        let mut reader = serde_json::Deserializer::from_str(text);
        // `end` refuses anything but whitespace after the value.
        seed.deserialize(&mut reader).and_then(|value| reader.end().map(|()| value)).map_err(|_| not_json())
    }

    /// Why the body could not be read as JSON, as the end of "resmon
    /// answered … with …": an empty body is said as empty, and a body in a
    /// Content-Encoding this server does not read (it asks for none) is
    /// named by it, so neither is mistaken for a broken JSON text.
    pub(crate) fn unreadable_body(&self) -> String {
        if let Some(encoding) = self.foreign_encoding() {
            return format!(
                "a body in the `{encoding}` content encoding, which this server does not read (it asks \
                 for none)"
            );
        }
        if self.bytes.iter().all(u8::is_ascii_whitespace) {
            return format!("an empty body (status {}) where JSON was expected", self.status);
        }
        "a body that is not JSON".to_string()
    }

    /// The answer's Content-Encoding, when it names one other than
    /// `identity` (none is asked for, and none is decoded).
    fn foreign_encoding(&self) -> Option<String> {
        let encoding = self.header("content-encoding")?.trim();
        let printable: String =
            encoding.chars().filter(|c| c.is_ascii_graphic() || *c == ' ').take(40).collect();
        (!printable.is_empty() && !printable.eq_ignore_ascii_case("identity")).then_some(printable)
    }

    /// The body as JSON, required to be an object.
    pub(crate) fn json_object(&self) -> Result<Value, ToolError> {
        let value = self.json()?;
        if value.is_object() { Ok(value) } else { Err(unexpected_shape(&self.route, "an object")) }
    }

    pub(crate) fn text(&self) -> Result<String, ToolError> {
        String::from_utf8(self.bytes.clone()).map_err(|_| {
            ToolError::new(
                Code::UpstreamError,
                format!("resmon answered {} with text that is not UTF-8.", self.route),
            )
            .with_detail("route", json!(self.route))
        })
    }
}

/// The answer did not have the shape this route promises.
pub fn unexpected_shape(route: &str, expected: &str) -> ToolError {
    ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon answered {route} with JSON of an unexpected shape (expected {expected}). \
             This server and the running resmon may be from different releases."
        ),
    )
    .with_detail("route", json!(route))
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
pub enum Kind {
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
pub fn require_fields(route: &str, row: &Value, fields: &[(&str, Kind)]) -> Result<(), ToolError> {
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
    /// Whether this call already used its one resend after a 401.
    resent: bool,
    /// The runtime id the current call is pinned to, if any.
    pinned: Option<String>,
    /// The one route of the current call whose 2xx answer's body is not
    /// read (a write whose answer carries nothing the tool uses).
    status_only: Option<String>,
    /// What the transport saw of the current exchange.
    watch: Watch,
}

impl Backend {
    pub fn new(env: Environment, request_timeout: Duration) -> Backend {
        let request_timeout = request_timeout.min(MAX_REQUEST_TIMEOUT);
        let config = Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .https_only(false)
            .timeout_connect(Some(CONNECT_TIMEOUT.min(request_timeout)))
            .timeout_global(Some(request_timeout))
            .user_agent(concat!("resmon-mcp/", env!("CARGO_PKG_VERSION")))
            .accept("application/json, text/plain;q=0.9, */*;q=0.5")
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            // ureq's defaults (128 KiB each way, zero-filled on the first
            // request) were most of the first call's work; resmon's heads are
            // a few hundred bytes, and bodies stream through in pieces.
            .input_buffer_size(IO_BUFFER_BYTES)
            .output_buffer_size(IO_BUFFER_BYTES)
            .max_response_header_size(MAX_HEADER_BYTES)
            .build();
        // The default resolver starts a thread per request to bound a DNS
        // lookup by the timeout; the address here is always an IP literal,
        // so it is read in place instead (about a third of a call's time).
        let watch = Watch::default();
        let connector = DefaultConnector::new().chain(SlicedWaits(watch.clone()));
        let agent = Agent::with_parts(config, connector, LiteralResolver);
        Backend {
            env,
            agent,
            request_timeout,
            instance: None,
            last_version: None,
            last_base: None,
            deadline: None,
            caller_fields: Vec::new(),
            offered: Vec::new(),
            resent: false,
            pinned: None,
            status_only: None,
            watch,
        }
    }

    /// The per-call bound in force.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Starts one tool call: a fresh deadline shared by all its requests,
    /// and the names of the request fields that carry the caller's
    /// arguments, so that resmon refusing another field is not blamed on
    /// the caller (contract-notes 17).
    pub(crate) fn begin_call(&mut self, caller_fields: Vec<String>) {
        self.deadline = Some(Instant::now() + self.request_timeout);
        self.caller_fields = caller_fields;
        self.offered = Vec::new();
        self.resent = false;
        self.pinned = None;
        self.status_only = None;
    }

    /// Has this call's `method path` answer with its status line alone when
    /// that says 2xx: the transport ends the read as soon as the final 2xx
    /// status line has arrived, so neither the rest of the head nor the body
    /// is waited for (the connection is then closed rather than reused), and
    /// a head or body that stalls or breaks off costs nothing. For a write
    /// whose answer the tool never reads, such as the settings PUT, which is
    /// followed by a read-back (contract-notes 26).
    pub(crate) fn status_only(&mut self, method: Method, path: &str) {
        self.status_only = Some(format!("{} {path}", method.as_str()));
    }

    /// Records, for the call just begun, the caller's values that the tool's
    /// own schema offers in an `enum` (contract-notes 17).
    pub(crate) fn offer(&mut self, offered: Vec<Offered>) {
        self.offered = offered;
    }

    /// The release the confirmed resmon reported: `None` when no resmon has
    /// confirmed in this process, `Some(None)` when it reported none.
    pub(crate) fn backend_version(&self) -> Option<Option<String>> {
        self.last_version.clone()
    }

    /// Discovers and confirms an instance, recording each step. Used by
    /// `--check`; tool calls go through `send`, which caches the result.
    pub(crate) fn discover(&mut self, trace: &mut Trace) -> Result<Value, ToolError> {
        self.instance = None;
        let candidate = discovery::find_candidate(&self.env, trace)?;
        let health = self.confirm(&candidate, trace)?;
        self.remember(candidate, &health);
        Ok(health)
    }

    fn remember(&mut self, candidate: Candidate, health: &Value) {
        let version = health.get("version").and_then(Value::as_str).map(str::to_string);
        self.last_version = Some(version.clone());
        self.last_base = Some(candidate.base_url());
        self.instance = Some(Instance { candidate, version, confirmed: true });
    }

    /// The cached instance, or a newly discovered and confirmed one. The
    /// flag says whether it was discovered just now.
    fn instance(&mut self) -> Result<(Instance, bool), ToolError> {
        if let Some(instance) = &self.instance {
            return Ok((instance.clone(), false));
        }
        let mut trace = Trace::new();
        let candidate = discovery::find_candidate(&self.env, &mut trace)?;
        let health = self.confirm(&candidate, &mut trace)?;
        self.remember(candidate, &health);
        Ok((self.instance.clone().expect("just remembered"), true))
    }

    /// Sends one request to the confirmed instance, discovering it first when
    /// none is cached. Never to any other port. Resent at most once, after a
    /// `401 token_invalid` from a cached instance: resmon restarted on the
    /// same port with a new token, and its guard refused before doing any
    /// work, so sending again to the rediscovered instance repeats nothing
    /// (contract-notes 18).
    pub(crate) fn send(
        &mut self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, ToolError> {
        let route = format!("{} {path}", method.as_str());
        // With nothing left of the call, not even discovery is begun.
        self.check_deadline(Method::Get, &route)?;
        let (instance, fresh) = self.instance()?;
        // The margin is judged when the request would go out, after any
        // discovery above has used its share of the call (contract-notes 4).
        self.check_deadline(method, &route)?;
        let reply = self.exchange(&instance, method, path, query, body).inspect_err(|_| {
            self.instance = None;
        })?;
        if reply.status != 401 {
            return Ok(reply);
        }
        self.instance = None;
        if fresh || self.resent || refusal_reason(&reply).as_deref() != Some("token_invalid") {
            return Err(token_refused(&instance, &reply));
        }
        self.resent = true;
        redact::log(&format!("{} was refused with 401 token_invalid; rediscovering once", reply.route));
        self.check_deadline(Method::Get, &route)?;
        let (instance, _) = self.instance()?;
        // A pinned call is checked against the rediscovered instance before
        // anything else is asked of it: a restarted resmon is another
        // process, and a pinned answer must come from the one expected.
        if let Some(expected) = self.pinned.clone()
            && path != "/api/health"
        {
            self.preflight(&instance, &expected)?;
        }
        self.check_deadline(method, &route)?;
        let again = self.exchange(&instance, method, path, query, body).inspect_err(|_| {
            self.instance = None;
        })?;
        if again.status == 401 {
            self.instance = None;
            return Err(token_refused(&instance, &again));
        }
        Ok(again)
    }

    /// Pins the current call to a runtime id (contract 1.0 "Instance
    /// identity"), so that a rediscovery within the call repeats the
    /// identity preflight.
    pub(crate) fn pin(&mut self, expected: Option<String>) {
        self.pinned = expected;
    }

    /// GET /api/health with the expectation, its identity checked.
    fn preflight(&mut self, instance: &Instance, expected: &str) -> Result<(), ToolError> {
        let query = [("expected_runtime_id", expected.to_string())];
        let reply = self.exchange(instance, Method::Get, "/api/health", &query, None)?;
        judge_health(&reply, Some(expected)).map(|_| ())
    }

    /// GET /api/health, with the expectation when there is one, its identity
    /// checked: health's own answer, and get_execution's preflight (contract
    /// 1.0 "Instance identity").
    pub(crate) fn checked_health(&mut self, expected: Option<&str>) -> Result<Value, ToolError> {
        let query: Vec<(&str, String)> =
            expected.map(|id| ("expected_runtime_id", id.to_string())).into_iter().collect();
        let reply = self.send(Method::Get, "/api/health", &query, None)?;
        judge_health(&reply, expected)
    }

    /// Refuses to start a request the call's deadline leaves no time for: a
    /// read needs a moment, a write a whole second (a quarter of the bound
    /// when the bound is under 4 s), since a write cut off mid-flight leaves
    /// the person not knowing whether it happened.
    fn check_deadline(&self, method: Method, route: &str) -> Result<(), ToolError> {
        let moment = Duration::from_millis(5);
        let needed =
            if method == Method::Get { moment } else { Duration::from_secs(1).min(self.request_timeout / 4) };
        let left = self.remaining();
        if self.deadline.is_none() || left >= needed {
            return Ok(());
        }
        let base =
            self.instance.as_ref().map(|instance| instance.candidate.base_url()).or(self.last_base.clone());
        if left < moment {
            return Err(self.deadline_passed(base.as_deref(), route));
        }
        Err(ToolError::new(
            Code::BackendUnavailable,
            format!(
                "Only {:.2} s was left before this call's {} s deadline when {route} was due, less \
                 than the {} s this server keeps for a write so that it is never cut off halfway, \
                 so it was not sent and changed nothing. Call the tool again; if resmon answered \
                 slowly, wait until it is less busy.",
                left.as_secs_f32(),
                self.request_timeout.as_secs_f32(),
                needed.as_secs_f32()
            ),
        )
        .with_detail("route", json!(route))
        .with_detail("sent", json!(false))
        .with_detail("deadline_s", json!(self.request_timeout.as_secs_f32()))
        .with_detail("time_left_s", json!((left.as_secs_f32() * 100.0).round() / 100.0))
        .with_top_level("tried", json!(base.into_iter().collect::<Vec<_>>())))
    }

    /// `send`, then insist on a 2xx JSON object answer.
    pub(crate) fn get_object(&mut self, path: &str, query: &[(&str, String)]) -> Result<Value, ToolError> {
        self.request(Method::Get, path, query, None)?.json_object()
    }

    /// `send`, then insist on a 2xx JSON answer of any shape.
    pub(crate) fn request_json(
        &mut self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Value, ToolError> {
        self.request(method, path, query, body)?.json()
    }

    /// `send`, then insist on a 2xx answer, leaving its body to be read by
    /// the caller (`Reply::read` for a typed row).
    pub(crate) fn request(
        &mut self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, ToolError> {
        let reply = self.send(method, path, query, body)?;
        success(&reply)?;
        Ok(reply)
    }

    /// The authenticated health request that turns a candidate into an
    /// instance (contract-notes 3): 200 with a JSON object whose `status` is
    /// `"ok"`. Identity is not required here; only a pinned call needs it.
    fn confirm(&mut self, candidate: &Candidate, trace: &mut Trace) -> Result<Value, ToolError> {
        let url = candidate.base_url();
        let step = format!("GET {url}/api/health");
        let probe = Instance { candidate: candidate.clone(), version: None, confirmed: false };
        // Until health has answered properly there is no resmon to blame, so
        // any broken answer here means "not available" (contract-notes 3).
        // Nor is it "resmon at …" yet: the exchange names only what is on
        // the port and what named it (`Instance::subject`).
        let reply = self.exchange(&probe, Method::Get, "/api/health", &[], None).map_err(|error| {
            let error = if error.message.starts_with("Something on port") {
                let message = format!(
                    "{} Nothing on that port has answered as resmon yet, so check also that {} \
                     names the right instance.",
                    error.message, candidate.named_by
                );
                ToolError { code: Code::BackendUnavailable, message, ..error }
            } else {
                ToolError { code: Code::BackendUnavailable, ..error }
            };
            let error = error.with_top_level("tried", json!([url]));
            trace.push(discovery::Step { what: step.clone(), outcome: error.message.clone() });
            error
        })?;
        if reply.status == 401 {
            trace.push(discovery::Step { what: step, outcome: "401: the token was refused".into() });
            return Err(token_refused(&probe, &reply));
        }
        let body = reply
            .json()
            .ok()
            .filter(|body| reply.status == 200 && body.get("status").and_then(Value::as_str) == Some("ok"));
        match body {
            Some(body) => {
                let version = body.get("version").and_then(Value::as_str).unwrap_or("of unknown release");
                trace
                    .push(discovery::Step { what: step, outcome: format!("200: resmon {version} answered") });
                Ok(body)
            }
            None => {
                trace.push(discovery::Step {
                    what: step,
                    outcome: format!("{}: not a resmon health answer", reply.status),
                });
                Err(ToolError::new(
                    Code::BackendUnavailable,
                    format!(
                        "Something answers on port {} but it did not answer as resmon does \
                         (status {}, not resmon's health report), so it was not used. Check \
                         that {} names the right instance.",
                        candidate.port, reply.status, candidate.named_by
                    ),
                )
                .with_detail("status", json!(reply.status))
                .with_top_level("tried", json!([url])))
            }
        }
    }

    /// What is left of the current call's deadline.
    pub(crate) fn time_left(&self) -> Duration {
        self.remaining()
    }

    /// What is left of the current call's deadline; the whole bound when no
    /// call has begun (a direct use of the backend, as in a unit test).
    fn remaining(&self) -> Duration {
        match self.deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => self.request_timeout,
        }
    }

    /// One HTTP exchange with no interpretation of the status.
    fn exchange(
        &self,
        instance: &Instance,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, ToolError> {
        let candidate = &instance.candidate;
        let base = candidate.base_url();
        let url = format!("{base}{path}");
        let route = format!("{} {path}", method.as_str());
        let remaining = self.remaining();
        if remaining < Duration::from_millis(5) {
            // The call's deadline has passed: nothing more is sent.
            return Err(self.deadline_passed(Some(&base), &route));
        }
        let status_only = self.status_only.as_deref() == Some(route.as_str());
        *seen(&self.watch) = Seen { watching: true, stop_at_success: status_only, ..Seen::default() };
        let host = format!("127.0.0.1:{}", candidate.port);
        let authorization = format!("Bearer {}", candidate.token);
        let pairs = query.iter().map(|(key, value)| (*key, value.as_str()));
        let connect = CONNECT_TIMEOUT.min(remaining);
        let result = match method {
            Method::Get => self
                .agent
                .get(&url)
                .config()
                .timeout_global(Some(remaining))
                .timeout_connect(Some(connect))
                .build()
                .header("Host", &host)
                .header("Authorization", &authorization)
                .query_pairs(pairs)
                .call(),
            Method::Post | Method::Put => {
                let payload = body.map(Value::to_string).unwrap_or_else(|| "{}".into());
                let request =
                    if method == Method::Post { self.agent.post(&url) } else { self.agent.put(&url) };
                request
                    .config()
                    .timeout_global(Some(remaining))
                    .timeout_connect(Some(connect))
                    .build()
                    .header("Host", &host)
                    .header("Authorization", &authorization)
                    .header("Content-Type", "application/json")
                    .query_pairs(pairs)
                    .send(payload.as_bytes())
            }
        };
        let paged = self.caller_paged(query, body);
        let mut response = match result {
            Ok(response) => response,
            Err(error) => {
                let (status, interim, cut, reset) = {
                    let seen = seen(&self.watch);
                    (seen.status, seen.interim, seen.cut, seen.reset)
                };
                return match status {
                    // The transport ended the read at the 2xx status line
                    // this route's answer was wanted for: nothing more of
                    // it is waited for, and its connection is dropped.
                    Some(status) if cut => {
                        Ok(self.reply(instance, route, status, Vec::new(), Vec::new(), query, body))
                    }
                    // The status line arrived and the rest of the head did not.
                    Some(status) => {
                        Err(self.after_status_line(instance, &route, status, error, reset, paged))
                    }
                    None => Err(self.transport_error(instance, &route, error, reset, interim)),
                };
            }
        };
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| Some((name.as_str().to_string(), value.to_str().ok()?.to_string())))
            .collect();
        let bytes = if (200..300).contains(&status) && status_only {
            // Dropping the unread body closes its connection.
            Vec::new()
        } else {
            response.body_mut().with_config().limit(MAX_BODY_BYTES).read_to_vec().map_err(|error| {
                let reset = seen(&self.watch).reset;
                self.after_status_line(instance, &route, status, error, reset, paged)
            })?
        };
        Ok(self.reply(instance, route, status, headers, bytes, query, body))
    }

    /// A `Reply` to `route`, with where its request's fields came from.
    #[allow(clippy::too_many_arguments)]
    fn reply(
        &self,
        instance: &Instance,
        route: String,
        status: u16,
        headers: Vec<(String, String)>,
        bytes: Vec<u8>,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Reply {
        let (caller_supplied, server_chosen) = self.provenance(query, body);
        let offered = self.offered_in(query, body);
        Reply {
            status,
            headers,
            bytes,
            route,
            backend_version: instance.version.clone(),
            server_chosen,
            caller_supplied,
            offered,
        }
    }

    /// The call's offered values, each with what the request's query and
    /// top-level body fields carried for it.
    fn offered_in(&self, query: &[(&str, String)], body: Option<&Value>) -> Vec<Offered> {
        let body = body.and_then(Value::as_object);
        let sent_in = |field: &String| -> Vec<String> {
            let from_query = query.iter().filter(|(key, _)| key == field).map(|(_, value)| value.clone());
            let from_body = body.and_then(|body| body.get(field)).and_then(Value::as_str).map(str::to_string);
            from_query.chain(from_body).collect()
        };
        let mut offered = self.offered.clone();
        for offer in &mut offered {
            offer.sent = offer.fields.iter().flat_map(sent_in).collect();
        }
        offered
    }

    /// Splits a request's query and top-level body fields into those that
    /// carry the caller's arguments and those this server chose.
    fn provenance(&self, query: &[(&str, String)], body: Option<&Value>) -> (Vec<String>, Vec<String>) {
        let mut names: Vec<String> = query.iter().map(|(key, _)| key.to_string()).collect();
        if let Some(Value::Object(fields)) = body {
            names.extend(fields.keys().cloned());
        }
        names.into_iter().partition(|name| self.caller_fields.iter().any(|field| field == name))
    }

    /// A request not sent because the call's deadline had passed. It says
    /// only that: earlier requests of the call may all have been answered,
    /// slowly.
    fn deadline_passed(&self, base: Option<&str>, route: &str) -> ToolError {
        ToolError::new(
            Code::BackendUnavailable,
            format!(
                "No time was left before this call's {} s deadline to send {route}, so it was not \
                 sent. If resmon is busy or frozen, wait or restart it and try again.",
                self.request_timeout.as_secs_f32()
            ),
        )
        .with_detail("route", json!(route))
        .with_detail("sent", json!(false))
        .with_detail("deadline_s", json!(self.request_timeout.as_secs_f32()))
        .with_top_level("tried", json!(base.into_iter().collect::<Vec<_>>()))
    }

    /// Whether the request asked for a page whose size the caller chose: a
    /// page field in its query or body that carries the caller's argument.
    fn caller_paged(&self, query: &[(&str, String)], body: Option<&Value>) -> bool {
        let chosen_by_caller = |field: &str| self.caller_fields.iter().any(|name| name == field);
        takes_page(query, body).iter().any(|field| chosen_by_caller(field))
    }

    /// "If resmon is busy…", or for a listener not yet confirmed, "If it is
    /// resmon and it is busy…".
    fn if_busy(instance: &Instance) -> &'static str {
        if instance.confirmed {
            "If resmon is busy or frozen, wait or restart it and try again."
        } else {
            "If it is resmon and it is busy or frozen, wait or restart it and try again."
        }
    }

    /// A failure after the status line of `route`'s answer arrived: the rest
    /// of its head or its body did not. The status is part of what was
    /// seen, so the error carries it and `body_unread` (why the rest was
    /// not read), and never `outcome_unknown`: for a write, a 2xx status is
    /// acceptance (contract-notes 26), which `answered_before_failing`
    /// reports.
    fn after_status_line(
        &self,
        instance: &Instance,
        route: &str,
        status: u16,
        error: ureq::Error,
        reset: bool,
        paged: bool,
    ) -> ToolError {
        let unread = rest_unread(&error, reset);
        redact::log(&format!(
            "{route} answered {status}, then failed after its status line ({unread}): {error}"
        ));
        let deadline = self.request_timeout.as_secs_f32();
        let (code, what) = match (unread, &error) {
            ("timed_out", _) => (
                Code::BackendUnavailable,
                format!(
                    "the rest of its answer did not arrive before this call's {deadline} s deadline, \
                     so it was not used. {}",
                    Backend::if_busy(instance)
                ),
            ),
            ("too_large", ureq::Error::LargeResponseHeader(..)) => (
                Code::UpstreamError,
                format!(
                    "its headers are larger than this server reads ({} KiB), so the answer was not used.",
                    MAX_HEADER_BYTES / 1024
                ),
            ),
            ("too_large", _) => (
                Code::UpstreamError,
                format!(
                    "its body is larger than this server accepts ({} MiB), so it was not read. {}",
                    MAX_BODY_BYTES / (1024 * 1024),
                    if paged {
                        "Ask for a smaller page."
                    } else {
                        "No argument of this call sets the size of that answer (any page size it \
                         carried was this server's), so repeating the call will meet the same limit."
                    }
                ),
            ),
            ("reset", _) => (
                Code::BackendUnavailable,
                "the connection was reset before the whole answer arrived.".to_string(),
            ),
            ("malformed", _) => (
                Code::UpstreamError,
                "the rest of its head is not valid HTTP, so the answer was not used.".into(),
            ),
            _ => (Code::UpstreamError, "the connection closed before the whole answer arrived.".to_string()),
        };
        let mut out = ToolError::new(
            code,
            format!("{} answered {route} with status {status}, but {what}", instance.subject()),
        )
        .with_detail("route", json!(route))
        .with_detail("status", json!(status))
        .with_detail("body_unread", json!(unread));
        if unread == "timed_out" {
            out = out.with_detail("deadline_s", json!(deadline));
        }
        if code == Code::BackendUnavailable {
            out = out.with_top_level("tried", json!([instance.candidate.base_url()]));
        }
        out
    }

    /// A failure before any status line of `route`'s answer arrived. Only a
    /// refused connection is "not running": anything that took the
    /// connection is said as what it did.
    fn transport_error(
        &self,
        instance: &Instance,
        route: &str,
        error: ureq::Error,
        reset: bool,
        interim: Option<u16>,
    ) -> ToolError {
        use std::io::ErrorKind;
        match interim {
            Some(interim) => redact::log(&format!(
                "{route} failed after only an interim status ({interim}), before any final status line: {error}"
            )),
            None => redact::log(&format!("{route} failed before any status line arrived: {error}")),
        }
        let base = instance.candidate.base_url();
        let subject = instance.subject();
        let tried = json!([base]);
        // An interim status (100 Continue and the like) says nothing of what
        // became of the request, so it is said, and counts for nothing.
        let without_answer = match interim {
            Some(interim) => format!("without a final answer (only the interim status {interim})"),
            None => "without answering".to_string(),
        };
        // A write whose answer was lost may still have been applied: say so,
        // so that nobody repeats a run or a create blindly.
        let write = !route.starts_with("GET ");
        let unknown_outcome = |error: ToolError| {
            let error = match interim {
                Some(interim) => error.with_detail("interim_status", json!(interim)),
                None => error,
            };
            if write {
                let read = match interim {
                    Some(interim) => format!(
                        "no final status of its answer was read (only the interim {interim}, which says \
                         nothing of the outcome)"
                    ),
                    None => "no status of its answer was read".to_string(),
                };
                ToolError::new(
                    error.code,
                    format!(
                        "{} This was a write, and {read}: resmon may have carried it out, so check \
                         (with the matching read tool or in the app) before trying it again.",
                        error.message
                    ),
                )
                .with_detail("outcome_unknown", json!(true))
                .merged(error)
            } else {
                error
            }
        };
        let closed = |io: &std::io::Error| {
            matches!(
                io.kind(),
                ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::UnexpectedEof
                    | ErrorKind::BrokenPipe
            )
        };
        match error {
            ureq::Error::Timeout(ureq::Timeout::Connect) => ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "Nothing on {base} accepted a connection within {} s, so {route} was not \
                     sent. If resmon is starting or frozen, wait or restart it and try again.",
                    CONNECT_TIMEOUT.min(self.request_timeout).as_secs_f32()
                ),
            )
            .with_detail("route", json!(route))
            .with_top_level("tried", tried),
            ureq::Error::Timeout(_) => unknown_outcome(
                ToolError::new(
                    Code::BackendUnavailable,
                    format!(
                        "{subject} did not answer {route}{} before this call's {} s deadline, so that \
                         request was abandoned. {}",
                        interim
                            .map(|interim| format!(" beyond the interim status {interim}"))
                            .unwrap_or_default(),
                        self.request_timeout.as_secs_f32(),
                        Backend::if_busy(instance)
                    ),
                )
                .with_detail("route", json!(route))
                .with_detail("deadline_s", json!(self.request_timeout.as_secs_f32()))
                .with_top_level("tried", tried),
            ),
            ureq::Error::Protocol(_) => unknown_outcome(
                ToolError::new(
                    Code::UpstreamError,
                    format!("{subject} answered {route} with something that is not valid HTTP."),
                )
                .with_detail("route", json!(route)),
            ),
            ureq::Error::LargeResponseHeader(..) => unknown_outcome(
                ToolError::new(
                    Code::UpstreamError,
                    format!(
                        "{subject} answered {route} with a head larger than this server reads ({} KiB), \
                         and no status line could be read from it, so the answer was not used.",
                        MAX_HEADER_BYTES / 1024
                    ),
                )
                .with_detail("route", json!(route)),
            ),
            ureq::Error::Io(io) if reset || closed(&io) => {
                // Something took the connection, so something is listening:
                // "not running" would be a claim this server cannot make.
                let (did, how) = if reset || matches!(io.kind(), ErrorKind::ConnectionReset) {
                    ("reset", "ConnectionReset".to_string())
                } else {
                    ("closed", format!("{:?}", io.kind()))
                };
                unknown_outcome(
                    ToolError::new(
                        Code::BackendUnavailable,
                        format!(
                            "{subject} accepted the connection for {route} and then {did} it \
                             {without_answer}. {}",
                            if instance.confirmed {
                                "It may be shutting down or restarting; if it keeps happening, \
                                 restart the resmon app."
                            } else {
                                "If it is resmon, it may be shutting down or restarting; if it \
                                 keeps happening, restart the resmon app."
                            }
                        ),
                    )
                    .with_detail("route", json!(route))
                    .with_detail("io", json!(how))
                    .with_top_level("tried", tried),
                )
            }
            // The named-port sentence of contract 1.0 "When the backend is not
            // named, or not running", word for word: callers may compare it.
            ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => ToolError::new(
                Code::BackendUnavailable,
                "resmon is not running. Start the resmon app and try again.",
            )
            .with_detail("route", json!(route))
            .with_top_level("tried", tried),
            ureq::Error::Io(io) => ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "This server could not connect to {base} for {route} ({:?}), so nothing was \
                     sent. Check that RESMON_PORT or the port file names a port on this computer.",
                    io.kind()
                ),
            )
            .with_detail("route", json!(route))
            .with_detail("io", json!(format!("{:?}", io.kind())))
            .with_top_level("tried", tried),
            ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "This server could not connect to {base} for {route}, so nothing was sent. \
                     Check that RESMON_PORT or the port file names a port on this computer."
                ),
            )
            .with_detail("route", json!(route))
            .with_top_level("tried", tried),
            // Anything else is a request this server could not make, or an
            // exchange it cannot account for: said as such, never as an
            // absent resmon.
            other => unknown_outcome(
                ToolError::new(
                    Code::InternalError,
                    format!(
                        "This server could not complete {route} with {subject} ({other}), and no \
                         status line of an answer arrived; this is a bug in resmon-mcp."
                    ),
                )
                .with_detail("route", json!(route))
                .with_top_level("tried", tried),
            ),
        }
    }
}

/// Why the rest of an answer after its status line could not be read, as
/// `detail.body_unread` names it (the head's remainder included): past the
/// deadline, too large, the connection reset (seen by the transport, since
/// ureq reads a reset as a close once a body has begun), not valid HTTP, or
/// the connection closed early.
fn rest_unread(error: &ureq::Error, reset: bool) -> &'static str {
    use std::io::ErrorKind;
    match error {
        ureq::Error::Timeout(_) | ureq::Error::BodyStalled => "timed_out",
        ureq::Error::BodyExceedsLimit(_) | ureq::Error::LargeResponseHeader(..) => "too_large",
        ureq::Error::Io(io)
            if reset || matches!(io.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) =>
        {
            "reset"
        }
        ureq::Error::Protocol(_) => "malformed",
        _ => "broke_off",
    }
}

/// The status line of `route`'s answer when `error` is a failure to read
/// the rest of that answer, and `None` for any failure before a status
/// arrived (or of another request of the same call).
pub(crate) fn answered_before_failing(error: &ToolError, route: &str) -> Option<u16> {
    error.detail.get("body_unread")?;
    if error.detail.get("route").and_then(Value::as_str) != Some(route) {
        return None;
    }
    error.detail.get("status").and_then(Value::as_u64).and_then(|status| u16::try_from(status).ok())
}

/// The request fields that ask a route for one page of its answer.
const PAGE_FIELDS: [&str; 4] = ["limit", "offset", "cursor", "k"];

/// The page fields a request carries in its query or body.
fn takes_page(query: &[(&str, String)], body: Option<&Value>) -> Vec<&'static str> {
    let in_body = |field: &str| body.and_then(Value::as_object).is_some_and(|body| body.contains_key(field));
    PAGE_FIELDS
        .into_iter()
        .filter(|field| query.iter().any(|(key, _)| key == field) || in_body(field))
        .collect()
}

/// A health reply judged against the expectation: resmon's own 409 for a
/// mismatch, then the status, then (for a pinned call) the identity block.
fn judge_health(reply: &Reply, expected: Option<&str>) -> Result<Value, ToolError> {
    if reply.status == 409
        && let Some(mismatch) = reply.json().ok().as_ref().and_then(identity::backend_mismatch)
    {
        return Err(mismatch);
    }
    success(reply)?;
    let body = reply.json_object()?;
    if let Some(expected) = expected {
        identity::check_reply(&body, Some(expected))?;
    }
    Ok(body)
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_read_only_when_it_is_one_json_text_in_utf8() {
        let read = |bytes: &[u8]| {
            let mut reply = reply(200, "application/json", "");
            reply.bytes = bytes.to_vec();
            reply.read::<serde::de::IgnoredAny>().map(|_| ()).map_err(|error| error.message)
        };
        assert_eq!(read(b" {\"a\": [1, \"x\"]} \n"), Ok(()));
        for broken in [&b"{} x"[..], b"{}{}", b"[1,]", b"{\"a\": \"\xff\"}", b"\xef\xbb\xbf{}"] {
            let message = read(broken).unwrap_err();
            assert!(message.contains("with a body that is not JSON"), "{broken:?}: {message}");
        }
        // An empty body is said as empty, not as broken JSON.
        for empty in [&b""[..], b" \r\n"] {
            let message = read(empty).unwrap_err();
            assert!(message.contains("with an empty body (status 200) where JSON was expected"), "{message}");
        }
    }

    #[test]
    fn a_body_in_an_encoding_this_server_does_not_read_is_named() {
        let mut encoded = reply(200, "application/json", "\u{1f}\u{8b}binary");
        encoded.headers.push(("Content-Encoding".into(), "gzip".into()));
        let error = encoded.json().unwrap_err();
        assert!(
            error
                .message
                .contains("with a body in the `gzip` content encoding, which this server does not read"),
            "{}",
            error.message
        );
        assert_eq!(error.detail["content_encoding"], json!("gzip"));
        let mut plain = reply(200, "application/json", "{}");
        plain.headers.push(("content-encoding".into(), "identity".into()));
        assert!(plain.json().is_ok());
    }

    #[test]
    fn route_templates_hide_record_ids() {
        assert_eq!(route_template("GET /api/routines/7/deliveries"), "GET /api/routines/{id}/deliveries");
        assert_eq!(route_template("PUT /api/settings/ai"), "PUT /api/settings/ai");
    }

    /// contract-notes 26: a failure after a status line is known by its
    /// `body_unread`, and only for the route it happened on.
    #[test]
    fn a_failure_after_a_status_line_is_known_by_its_route_and_status() {
        let route = "POST /api/routines";
        let stalled = ToolError::new(Code::BackendUnavailable, "stalled")
            .with_detail("route", json!(route))
            .with_detail("status", json!(201))
            .with_detail("body_unread", json!("timed_out"));
        assert_eq!(answered_before_failing(&stalled, route), Some(201));
        assert_eq!(answered_before_failing(&stalled, "GET /api/health"), None, "another request's");
        let before = ToolError::new(Code::BackendUnavailable, "no answer")
            .with_detail("route", json!(route))
            .with_detail("outcome_unknown", json!(true));
        assert_eq!(answered_before_failing(&before, route), None, "no status line arrived");
    }

    #[test]
    fn a_reset_is_told_from_a_close_by_what_the_transport_saw() {
        let eof =
            || ureq::Error::Io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "Peer disconnected"));
        assert_eq!(rest_unread(&eof(), false), "broke_off");
        assert_eq!(rest_unread(&eof(), true), "reset");
        assert_eq!(rest_unread(&ureq::Error::Timeout(ureq::Timeout::Global), true), "timed_out");
        assert_eq!(rest_unread(&ureq::Error::LargeResponseHeader(9000, 8192), false), "too_large");
        assert_eq!(rest_unread(&ureq::Error::BodyExceedsLimit(1), false), "too_large");
    }

    #[test]
    fn a_non_json_body_is_an_upstream_error_that_does_not_repeat_it() {
        let error = reply(200, "application/json", "<html>oops</html>").json().unwrap_err();
        assert_eq!(error.code, Code::UpstreamError);
        assert!(!error.message.contains("oops"));
        let array = reply(200, "application/json", "[1,2]").json_object().unwrap_err();
        assert_eq!(array.code, Code::UpstreamError);
    }
}
