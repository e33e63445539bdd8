//! The only module that speaks HTTP: one `ureq::Agent` with every setting
//! written out, discovery on first use, and the mapping from what resmon
//! answered to the contract's error codes.
//!
//! Rules (contract-notes 3-5, 16-18): keep-alive on one agent; no proxy,
//! ever (the token must not reach one); redirects are errors, never followed;
//! connect within 3 s; every request of one tool call shares that call's
//! deadline; bodies read incrementally up to a cap; every request carries the
//! bearer token and `Host: 127.0.0.1:<port>` and no `Origin`. The one resend
//! is after `401 token_invalid`, which the guard answers before any work.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ureq::Agent;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, DefaultConnector, NextTimeout, Transport,
};

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

/// Resolves `http://<IP literal>:<port>` without a lookup and without a
/// thread; any other host goes to ureq's own resolver.
#[derive(Debug)]
struct LiteralResolver;

impl Resolver for LiteralResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let literal = uri.host().and_then(|host| host.parse::<IpAddr>().ok());
        match (literal, uri.port_u16()) {
            (Some(ip), Some(port)) => {
                let mut addresses = self.empty();
                addresses.push(SocketAddr::new(ip, port));
                Ok(addresses)
            }
            _ => DefaultResolver::default().resolve(uri, config, timeout),
        }
    }
}

/// The longest single wait on a socket. A socket's own read timeout is
/// rounded up by the kernel in proportion to its length (Linux's timer
/// wheel: a 20 s wait ended 1.6 s late), so a long wait is made of short
/// ones, each rounded by at most a few milliseconds, and the call's deadline
/// holds to within that (contract-notes 4).
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// What the transport saw of the current exchange that ureq does not
/// report: the status line of an answer whose head then failed (too large,
/// stalled, not valid HTTP), an interim (1xx) status before it, and a reset,
/// which ureq reads as a close once a body has begun. `Backend::exchange`
/// clears it before each request.
#[derive(Debug, Default)]
struct Seen {
    /// Whether the next input is the start of an answer's head.
    watching: bool,
    /// Whether a 2xx final status line ends the read there, the rest of its
    /// head and its body unread (`Backend::status_only`).
    stop_at_success: bool,
    /// The last interim (1xx) status passed over before the final one.
    interim: Option<u16>,
    /// The final status of the answer, once its status line arrived whole.
    status: Option<u16>,
    /// Whether the read was ended here at a 2xx status line, as
    /// `stop_at_success` asks.
    cut: bool,
    /// Whether a read ended in a reset (or abort) of the connection.
    reset: bool,
}

/// Shared between the agent's connector (each connection's transport
/// writes to it) and the backend (which reads it); no thread is involved,
/// ureq only requires its parts to be `Send + Sync`.
type Watch = Arc<Mutex<Seen>>;

fn seen(watch: &Watch) -> MutexGuard<'_, Seen> {
    watch.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The status of an HTTP/1.x status line at the start of `input`, once its
/// line end has arrived; `Err` when the input cannot be the start of one.
fn status_line(input: &[u8]) -> Result<Option<u16>, ()> {
    const PREFIX: &[u8] = b"HTTP/1.";
    let start = &input[..input.len().min(PREFIX.len())];
    if !PREFIX.starts_with(start) {
        return Err(());
    }
    let Some(end) = input.iter().position(|byte| *byte == b'\n') else { return Ok(None) };
    let line = &input[..end];
    let code = line.get(9..12).filter(|_| line.get(8) == Some(&b' ')).ok_or(())?;
    let text = std::str::from_utf8(code).map_err(|_| ())?;
    if !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(());
    }
    text.parse().map(Some).map_err(|_| ())
}

/// The statuses at the start of an answer, read as ureq reads them: blank
/// lines before a status line are passed over (httparse does so), and so is
/// an interim head (1xx, except 101, which ureq hands on as the answer) once
/// its closing blank line arrived, so that `status` is the final status.
/// `Err` when the input cannot be the start of an answer.
#[derive(Debug, Default, PartialEq, Eq)]
struct Heads {
    interim: Option<u16>,
    status: Option<u16>,
}

fn heads(mut input: &[u8]) -> Result<Heads, ()> {
    let mut heads = Heads::default();
    loop {
        while let Some(rest) = input.strip_prefix(b"\r\n").or_else(|| input.strip_prefix(b"\n")) {
            input = rest;
        }
        if input == b"\r" {
            return Ok(heads);
        }
        let Some(status) = status_line(input)? else { return Ok(heads) };
        if !(100..200).contains(&status) || status == 101 {
            heads.status = Some(status);
            return Ok(heads);
        }
        heads.interim = Some(status);
        // An interim head ends at its first blank line.
        let end = (0..input.len()).filter(|at| input[*at] == b'\n').find_map(|at| {
            let after = &input[at + 1..];
            if after.starts_with(b"\r\n") {
                Some(at + 3)
            } else if after.starts_with(b"\n") {
                Some(at + 2)
            } else {
                None
            }
        });
        match end {
            Some(end) => input = &input[end..],
            None => return Ok(heads),
        }
    }
}

/// Puts every connection ureq opens inside a [`Sliced`] transport.
#[derive(Debug)]
struct SlicedWaits(Watch);

impl Connector<Box<dyn Transport>> for SlicedWaits {
    type Out = Sliced;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<Box<dyn Transport>>,
    ) -> Result<Option<Sliced>, ureq::Error> {
        Ok(chained.map(|transport| Sliced(transport, self.0.clone())))
    }
}

/// A transport whose waits for input are at most [`WAIT_SLICE`] each, until
/// the wait ureq asked for has passed, and which notes in its [`Watch`] what
/// each wait brought. Writes go through unchanged: resmon's requests are
/// small enough for the socket's buffer.
#[derive(Debug)]
struct Sliced(Box<dyn Transport>, Watch);

impl Sliced {
    fn wait(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        // Windows leaves a socket in an unknown state after a receive timed
        // out, so there a wait is never cut short and resumed.
        let until = Instant::now().checked_add(*timeout.after);
        let Some(until) = until.filter(|_| !cfg!(windows) && !timeout.after.is_not_happening()) else {
            return self.0.await_input(timeout);
        };
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let slice = left.min(WAIT_SLICE);
            let step = NextTimeout { after: slice.into(), ..timeout };
            match self.0.await_input(step) {
                Err(ureq::Error::Timeout(_)) if left > slice => continue,
                other => return other,
            }
        }
    }
}

impl Transport for Sliced {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.0.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let result = self.wait(timeout);
        let mut seen = seen(&self.1);
        match &result {
            Ok(_) if seen.watching => match heads(self.0.buffers().input()) {
                Ok(Heads { interim, status }) => {
                    seen.interim = interim.or(seen.interim);
                    if let Some(status) = status {
                        seen.status = Some(status);
                        seen.watching = false;
                        if seen.stop_at_success && (200..300).contains(&status) {
                            // Ends the exchange here: `Backend::exchange`
                            // reads `cut` and answers with the status alone.
                            seen.cut = true;
                            return Err(ureq::Error::Io(std::io::Error::other(
                                "the status line was all that was wanted of this answer",
                            )));
                        }
                    }
                }
                Err(()) => seen.watching = false,
            },
            Err(ureq::Error::Io(io))
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
                ) =>
            {
                seen.reset = true;
            }
            _ => (),
        }
        result
    }

    fn is_open(&mut self) -> bool {
        self.0.is_open()
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

/// The guard's reason on a 401 (`detail.reason`), when it gave one.
fn refusal_reason(reply: &Reply) -> Option<String> {
    reply.json().ok()?.pointer("/detail/reason")?.as_str().map(str::to_string)
}

/// A 401: said of resmon once it has confirmed, and of "something on
/// port N" while nothing on it has answered as resmon.
fn token_refused(instance: &Instance, reply: &Reply) -> ToolError {
    let candidate = &instance.candidate;
    let reason = refusal_reason(reply);
    let why = match reason.as_deref() {
        Some("token_missing") => "it received no token",
        Some("token_invalid") => {
            "the token from the token file is not the one it holds now (a stale file from an \
             earlier run, or a token file that belongs to another instance)"
        }
        _ => "it gave no reason this server knows",
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{} refused this server's local API token: {why}. Restart resmon so \
             that it writes a fresh token file at {}, or set RESMON_STATE_DIR to the state \
             directory of the instance on that port (with RESMON_PORT or RESMON_PORT_FILE naming \
             that port, since a state directory alone names no instance), then try again.",
            if instance.confirmed {
                format!("resmon on port {}", candidate.port)
            } else {
                format!("Something on port {} ({} names that port)", candidate.port, candidate.named_by)
            },
            candidate.token_path.display()
        ),
    )
    .with_detail("reason", json!(reason))
    .with_detail("port", json!(candidate.port))
    .with_detail("token_file", json!(candidate.token_path.display().to_string()))
    .with_top_level("tried", json!([candidate.base_url()]))
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

/// Passes a 2xx reply; maps anything else to the contract's codes.
pub(crate) fn success(reply: &Reply) -> Result<(), ToolError> {
    if reply.is_success() { Ok(()) } else { Err(status_error(reply)) }
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

/// The web framework's own 404 (`{"detail": "Not Found"}`), which resmon
/// answers for a path it has no route for; its own 404s carry a sentence
/// about the record (contract-notes 16).
pub(crate) fn is_missing_route(reply: &Reply) -> bool {
    if reply.status == 405 {
        return true;
    }
    reply.status == 404
        && reply.json().ok().is_some_and(|body| {
            body.as_object().is_some_and(|object| object.len() == 1)
                && body.get("detail").and_then(Value::as_str) == Some("Not Found")
        })
}

fn release_name(version: Option<&str>) -> String {
    match version {
        Some(version) => format!("resmon {version}"),
        None => "This resmon (it did not report its release)".to_string(),
    }
}

/// 404 → not_found, unless the framework answered for a route this resmon
/// lacks; 400/422 → whose mistake it was (contract-notes 17); 409/429 →
/// conflict; 5xx and 3xx → upstream_error; other 4xx → internal_error.
/// The message is resmon's own when it gave a sentence.
pub(crate) fn status_error(reply: &Reply) -> ToolError {
    if is_missing_route(reply) {
        return missing_route(reply);
    }
    let status = reply.status;
    let (code, fallback) = match status {
        404 => (Code::NotFound, "resmon has no such record."),
        400 | 422 => (Code::InvalidArgument, "resmon refused the request's arguments."),
        409 | 429 => (Code::Conflict, "resmon cannot do that right now because of its current state."),
        300..=399 => return redirected(reply),
        500..=599 => (Code::UpstreamError, "resmon hit an internal error while answering."),
        _ => (
            Code::InternalError,
            "resmon refused a request this server built; this is a bug in resmon-mcp or a \
             version mismatch with the app.",
        ),
    };
    let body = if is_json(reply) { reply.json().ok() } else { None };
    let detail = body.as_ref().and_then(|body| body.get("detail"));
    let sentence = match detail {
        Some(Value::String(sentence)) if !sentence.trim().is_empty() => Some(sentence.clone()),
        _ => None,
    };
    let mut error = ToolError::new(code, sentence.clone().unwrap_or_else(|| fallback.to_string()))
        .with_detail("status", json!(status))
        .with_detail("route", json!(reply.route));
    let mut problem_fields = Vec::new();
    match detail {
        Some(Value::Array(problems)) => {
            problem_fields = problems.iter().filter_map(problem_field).collect();
            let problems: Vec<Value> = problems
                .iter()
                .map(|problem| json!({"loc": problem.get("loc"), "msg": problem.get("msg")}))
                .collect();
            error = error.with_detail("problems", Value::Array(problems));
        }
        Some(Value::Object(object)) => {
            for key in ["reason", "code", "message"] {
                if let Some(value) = object.get(key).filter(|value| value.is_string()) {
                    error = error.with_detail(key, value.clone());
                }
            }
        }
        _ => (),
    }
    if matches!(status, 400 | 422) {
        return judge_refusal(reply, error, &problem_fields, sentence.as_deref());
    }
    error
}

/// A 3xx: neither acceptance nor refusal. Said as what came back (the
/// status, and the path its `Location` names, never a host or a query),
/// with resmon's sentence when it gave one, and never followed. A write may
/// have been carried out before the redirect (a 303 after one usually says
/// it was), so it carries `outcome_unknown` and asks for a check first
/// (contract-notes 26).
fn redirected(reply: &Reply) -> ToolError {
    let status = reply.status;
    let location = reply.header("location").and_then(location_path);
    let to = location.as_deref().map(|path| format!(" to {path}")).unwrap_or_default();
    let said = if is_json(reply) { reply.json().ok() } else { None }
        .and_then(|body| body.get("detail").and_then(Value::as_str).map(str::trim).map(str::to_string))
        .filter(|sentence| !sentence.is_empty())
        .map(|sentence| format!(" (resmon said: {sentence})"))
        .unwrap_or_default();
    let write = !reply.route.starts_with("GET ");
    let next = if !write {
        "so nothing was read."
    } else if status == 303 {
        "so its answer was not read. This was a write, and a 303 after a write usually means it was \
         done: check with the matching read tool (or in the app) before calling again."
    } else {
        "so its answer was not read. This was a write, and resmon may have carried it out before \
         redirecting: check with the matching read tool (or in the app) before calling again."
    };
    let mut error = ToolError::new(
        Code::UpstreamError,
        format!(
            "resmon answered {} with a redirect ({status}{to}){said}. This server does not follow \
             redirects, {next}",
            reply.route
        ),
    )
    .with_detail("status", json!(status))
    .with_detail("route", json!(reply.route))
    .with_detail("redirect", json!(true));
    if let Some(path) = location {
        error = error.with_detail("location", json!(path));
    }
    if write {
        error = error.with_detail("outcome_unknown", json!(true));
    }
    error
}

/// The path a `Location` value names, without scheme, host, port, query or
/// fragment (the address may be another host's, and a query may carry
/// anything), cut to 200 characters of printable ASCII.
fn location_path(value: &str) -> Option<String> {
    let value = value.trim();
    let scheme_end = value.find("://").filter(|at| {
        *at > 0 && value[..*at].bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    let after_host = |rest: &str| rest.find('/').map_or_else(|| "/".to_string(), |at| rest[at..].to_string());
    let path = match (scheme_end, value.strip_prefix("//")) {
        (Some(at), _) => after_host(&value[at + 3..]),
        (None, Some(rest)) => after_host(rest),
        (None, None) => value.to_string(),
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let path: String = path.chars().filter(|c| c.is_ascii_graphic()).take(200).collect();
    (!path.is_empty()).then_some(path)
}

/// The top-level field a 422 problem is about: the first name in its `loc`
/// after the part of the request it sits in (`body`, `query`, `path`).
fn problem_field(problem: &Value) -> Option<String> {
    let loc = problem.get("loc")?.as_array()?;
    loc.iter().skip(1).find_map(Value::as_str).map(str::to_string)
}

/// Routes whose request body is built from the caller's arguments alone, so
/// that resmon's 400 sentence about it is about what the caller asked for:
/// the contract has POST /api/routines answer a bad `entity` with a 400 that
/// this server surfaces as invalid_argument ("Watch profiles and the basis
/// of a match"), and the other creates and the settings write are alike.
const CALLER_BODY_ROUTES: [&str; 5] = [
    "POST /api/routines",
    "POST /api/profiles",
    "POST /api/search/sweep",
    "POST /api/export/references",
    "PUT /api/settings/",
];

/// contract-notes 17: a refusal is the caller's mistake only with evidence.
/// A 422 whose problems name only fields the caller supplied, or a 400 whose
/// sentence names one (or answers a route whose body is all the caller's),
/// is `invalid_argument`. A refusal naming a field this server chose is
/// `upstream_error` naming it. Anything else is `upstream_error` too.
fn judge_refusal(reply: &Reply, error: ToolError, fields: &[String], sentence: Option<&str>) -> ToolError {
    if let Some(offer) = refused_offer(reply, sentence) {
        return offer_refused(reply, error, offer, sentence);
    }
    let is_caller =
        |name: &str| reply.caller_supplied.iter().any(|field| field == name) || is_path_field(name);
    let is_chosen = |name: &str| reply.server_chosen.iter().any(|field| field == name);
    let (named_choices, named_callers): (Vec<String>, Vec<String>) = if fields.is_empty() {
        let words = sentence.map(words_of).unwrap_or_default();
        let named = |list: &[String]| -> Vec<String> {
            list.iter().filter(|field| words.contains(&field.to_ascii_lowercase())).cloned().collect()
        };
        (named(&reply.server_chosen), named(&reply.caller_supplied))
    } else {
        (
            fields.iter().filter(|field| is_chosen(field)).cloned().collect(),
            fields.iter().filter(|field| is_caller(field)).cloned().collect(),
        )
    };
    let callers_body = sentence.is_some()
        && fields.is_empty()
        && CALLER_BODY_ROUTES.iter().any(|route| reply.route.starts_with(route));
    let only_callers = if fields.is_empty() {
        named_choices.is_empty() && (!named_callers.is_empty() || callers_body)
    } else {
        fields.iter().all(|field| is_caller(field))
    };
    if only_callers {
        return error;
    }
    let version = reply.backend_version.as_deref();
    let route = route_template(&reply.route);
    let said = sentence.map(|sentence| format!(": {sentence}")).unwrap_or_default();
    let quoted =
        |names: &[String]| names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
    let message = if named_choices.is_empty() {
        format!(
            "{} refused {route} ({}{said}), and nothing shows that an argument of this call \
             was at fault. It may be older or newer than contract 1.0 expects; check that resmon \
             and this server are matching releases.",
            release_name(version),
            reply.status
        )
    } else if named_callers.is_empty() {
        format!(
            "{} refused {} {} that this server chose for {route} ({}{said}). It is probably older \
             or newer than contract 1.0 expects; changing this call's arguments will not help, \
             but matching releases of resmon and this server will.",
            release_name(version),
            if named_choices.len() == 1 { "the parameter" } else { "the parameters" },
            quoted(&named_choices),
            reply.status
        )
    } else {
        format!(
            "{} refused {} that this server chose for {route}, and also this call's {} ({}{said}). \
             Correcting the call's own values may not be enough: the release is probably older or \
             newer than contract 1.0 expects.",
            release_name(version),
            quoted(&named_choices),
            quoted(&named_callers),
            reply.status
        )
    };
    let mut out = ToolError::new(Code::UpstreamError, message);
    out.detail = error.detail;
    out.detail.insert("route".into(), json!(route));
    if !named_choices.is_empty() {
        out.detail.insert("parameters".into(), json!(named_choices));
    }
    if !named_callers.is_empty() {
        out.detail.insert("arguments".into(), json!(named_callers));
    }
    out
}

/// Words with which a refusal says it does not know a value.
const UNKNOWN_WORDS: [&str; 6] =
    ["unknown", "unsupported", "unrecognized", "unrecognised", "invalid", "unavailable"];
/// Phrases that say the same in more than one word.
const UNKNOWN_PHRASES: [&str; 7] = [
    "not supported",
    "not recognized",
    "not recognised",
    "not available",
    "no such",
    "not one of",
    "must be one of",
];

/// Words with which a refusal says what it would accept instead
/// (`kind must be person or institution`, `expected one of: bibtex, ris`).
const LISTING_WORDS: [&str; 11] = [
    "must",
    "should",
    "expected",
    "expects",
    "allowed",
    "accepted",
    "accepts",
    "only",
    "either",
    "permitted",
    "one",
];

/// Whether a sentence says that something is unknown or unsupported.
fn says_unknown(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    let words = words_of(&lower);
    UNKNOWN_WORDS.iter().any(|word| words.iter().any(|w| w == word))
        || UNKNOWN_PHRASES.iter().any(|phrase| lower.contains(phrase))
}

/// The caller's offered value that resmon's 400 or 422 refused as one it
/// does not know (contract-notes 17). A 422 counts only when every problem
/// it lists is about an offered value's field and refuses that value (its
/// `input` is the value, its type says "not one of", or its sentence says
/// unknown); a 400 when its sentence says unknown and quotes the value (as
/// sent, or as the caller gave it), or names the value's field and no other
/// field of the caller's. A 400 sentence without such a word counts when it
/// names the value's field (and no other of the caller's) and either the
/// value itself or other values the tool offers for it, the ones it would
/// accept (`kind must be person or institution`). Anything else is left to
/// the rest of `judge_refusal`.
fn refused_offer<'a>(reply: &'a Reply, sentence: Option<&str>) -> Option<&'a Offered> {
    if reply.offered.is_empty() {
        return None;
    }
    let body = if is_json(reply) { reply.json().ok() } else { None };
    if let Some(Value::Array(problems)) = body.as_ref().and_then(|body| body.get("detail")) {
        let mut found = None;
        for problem in problems {
            let field = problem_field(problem)?;
            let offer = reply.offered.iter().find(|offer| offer.fields.contains(&field))?;
            let input = problem.get("input").and_then(Value::as_str);
            let kind = problem.get("type").and_then(Value::as_str).unwrap_or_default();
            let msg = problem.get("msg").and_then(Value::as_str).unwrap_or_default();
            let refuses_value = input
                .is_some_and(|input| input == offer.value || offer.sent.iter().any(|s| s == input))
                || matches!(kind, "enum" | "literal_error")
                || says_unknown(msg);
            if !refuses_value {
                return None;
            }
            found.get_or_insert(offer);
        }
        return found;
    }
    let sentence = sentence?;
    let unknown = says_unknown(sentence);
    let words = words_of(sentence);
    let names = |text: &str| words.iter().any(|word| word.eq_ignore_ascii_case(text));
    let named_callers: Vec<&String> = reply.caller_supplied.iter().filter(|field| names(field)).collect();
    reply.offered.iter().find(|offer| {
        let quoted =
            |text: &str| ["'", "\"", "`"].iter().any(|q| sentence.contains(&format!("{q}{text}{q}")));
        let value_named = quoted(&offer.value) || offer.sent.iter().any(|sent| quoted(sent));
        // `caller_supplied` holds only the request's own fields, so a field
        // named here was sent, not carried in the path.
        let field_named =
            !named_callers.is_empty() && named_callers.iter().all(|field| offer.fields.contains(field));
        if unknown {
            return value_named || field_named;
        }
        // Without a word saying so, the field must be named together with
        // the value, or with what it accepts instead.
        let value_said = value_named || names(&offer.value) || offer.sent.iter().any(|sent| names(sent));
        let lists_choices = offer.choices.iter().any(|choice| names(choice) || quoted(choice))
            && LISTING_WORDS.iter().any(|word| names(word));
        field_named && (value_said || lists_choices)
    })
}

/// contract-notes 17: the caller chose a value the tool offers and this
/// release of resmon does not know it.
fn offer_refused(reply: &Reply, error: ToolError, offer: &Offered, sentence: Option<&str>) -> ToolError {
    let route = route_template(&reply.route);
    let said = sentence.map(|sentence| format!(": {sentence}")).unwrap_or_default();
    let message = format!(
        "{} does not accept `{}` for `{}` ({} on {route}{said}), although this tool offers that \
         value: the release is probably older or newer than contract 1.0 expects, and the call \
         itself is not at fault. Another of the tool's values may work; a resmon release that \
         matches this server should accept this one.",
        release_name(reply.backend_version.as_deref()),
        offer.value,
        offer.argument,
        reply.status
    );
    let mut out = ToolError::new(Code::UpstreamError, message);
    out.detail = error.detail;
    out.detail.insert("route".into(), json!(route));
    out.detail.insert("argument".into(), json!(offer.argument));
    out.detail.insert("value".into(), json!(offer.value));
    out
}

/// Path parameters carry the ids the caller named (`routine_id`, `exec_id`).
fn is_path_field(field: &str) -> bool {
    field == "id" || field.ends_with("_id")
}

/// The lowercase words of a sentence, with `_` kept inside words so that
/// `include_ids` is one word.
fn words_of(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// contract-notes 16: what was seen (the framework's 404 or a 405 for this
/// route), and the likely cause only as likely.
fn missing_route(reply: &Reply) -> ToolError {
    let route = route_template(&reply.route);
    ToolError::new(
        Code::UpstreamError,
        format!(
            "{} does not serve {route}; it is probably older or newer than contract 1.0 \
             expects. Updating resmon (or this server) to matching releases should make what it \
             serves available.",
            release_name(reply.backend_version.as_deref())
        ),
    )
    .with_detail("status", json!(reply.status))
    .with_detail("route", json!(route))
    .with_detail("missing_route", json!(true))
}

fn is_json(reply: &Reply) -> bool {
    reply.header("content-type").is_none_or(|content_type| content_type.contains("json"))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A refusal of the export route, whose `format` the caller chose from
    /// the values the tool offers.
    fn export_refusal(status: u16, body: &str, version: Option<&str>) -> Reply {
        let mut reply = reply(status, "application/json", body);
        reply.route = "GET /api/executions/115/references".into();
        reply.backend_version = version.map(str::to_string);
        reply.server_chosen = Vec::new();
        reply.caller_supplied = vec!["format".into()];
        reply.offered = vec![Offered {
            argument: "format".into(),
            value: "json".into(),
            fields: vec!["format".into()],
            sent: vec!["json".into()],
            choices: vec!["bibtex".into(), "ris".into(), "csv".into()],
        }];
        reply
    }

    #[test]
    fn a_refused_value_the_tool_offers_is_the_releases_limitation() {
        let unknown = r#"{"detail": "Unknown export format 'json'"}"#;
        let error = status_error(&export_refusal(400, unknown, Some("1.6.1")));
        assert_eq!(error.code, Code::UpstreamError, "{}", error.message);
        assert!(
            error.message.starts_with("resmon 1.6.1 does not accept `json` for `format`"),
            "{}",
            error.message
        );
        assert!(error.message.contains("Unknown export format 'json'"), "{}", error.message);
        assert_eq!(error.detail["value"], json!("json"));
        assert_eq!(error.detail["argument"], json!("format"));
        assert_eq!(error.detail["route"], json!("GET /api/executions/{id}/references"));
        // No release reported: said as "this resmon".
        let unnamed = status_error(&export_refusal(400, unknown, None));
        assert!(unnamed.message.starts_with("This resmon (it did not report its release) does not accept"));
        // The parameter named as unsupported, without the value.
        let param = status_error(&export_refusal(400, r#"{"detail": "Unsupported format."}"#, None));
        assert_eq!(param.code, Code::UpstreamError, "{}", param.message);
        // A 422 whose only problem is the offered value.
        let validation = r#"{"detail": [{"type": "enum", "loc": ["query", "format"],
            "msg": "Input should be 'bibtex', 'ris' or 'csv'", "input": "json"}]}"#;
        assert_eq!(status_error(&export_refusal(422, validation, None)).code, Code::UpstreamError);
    }

    /// A refusal of `kind: group` as list_watch_profiles sends it.
    fn kind_refusal(body: &str) -> Reply {
        let mut reply = reply(400, "application/json", body);
        reply.route = "GET /api/profiles".into();
        reply.backend_version = Some("2.1.0".into());
        reply.server_chosen = Vec::new();
        reply.caller_supplied = vec!["kind".into()];
        reply.offered = vec![Offered {
            argument: "kind".into(),
            value: "group".into(),
            fields: vec!["kind".into()],
            sent: vec!["group".into()],
            choices: vec!["person".into(), "institution".into()],
        }];
        reply
    }

    /// contract-notes 17: a 400 naming the field with the offered value, or
    /// with the values it would take instead, refuses that value even when
    /// no word says "unknown".
    #[test]
    fn a_refusal_listing_what_it_accepts_instead_of_an_offered_value_is_the_releases() {
        for body in [
            r#"{"detail": "kind must be person or institution"}"#,
            r#"{"detail": "Expected kind to be one of: 'person', 'institution'."}"#,
            r#"{"detail": "kind 'group' is not accepted here"}"#,
            r#"{"detail": "Profiles of kind group cannot be listed."}"#,
        ] {
            let error = status_error(&kind_refusal(body));
            assert_eq!(error.code, Code::UpstreamError, "{body}: {}", error.message);
            assert!(
                error.message.starts_with("resmon 2.1.0 does not accept `group` for `kind`"),
                "{body}: {}",
                error.message
            );
            assert_eq!(error.detail["value"], json!("group"));
            assert_eq!(error.detail["argument"], json!("kind"));
        }
        // The same through an export whose format the caller chose.
        let listed = r#"{"detail": "format must be bibtex, ris or csv"}"#;
        assert_eq!(status_error(&export_refusal(400, listed, None)).code, Code::UpstreamError);
    }

    #[test]
    fn a_refusal_of_the_field_that_names_neither_value_nor_choices_stays_the_callers() {
        for body in [
            r#"{"detail": "kind must not be empty"}"#,
            r#"{"detail": "kind person needs an identifier"}"#,
            r#"{"detail": "kind must be person or institution, and limit at most 50"}"#,
        ] {
            let mut reply = kind_refusal(body);
            reply.caller_supplied.push("limit".into());
            let error = status_error(&reply);
            assert_eq!(error.code, Code::InvalidArgument, "{body}: {}", error.message);
        }
    }

    #[test]
    fn other_refusals_of_the_callers_fields_stay_the_callers() {
        // A sentence about the field that does not say the value is unknown.
        let other = status_error(&export_refusal(400, r#"{"detail": "The format is too long."}"#, None));
        assert_eq!(other.code, Code::InvalidArgument, "{}", other.message);
        // A 422 about the offered value and another of the caller's fields:
        // the caller has something to correct.
        let mut mixed = export_refusal(
            422,
            r#"{"detail": [{"type": "enum", "loc": ["query", "format"], "msg": "bad", "input": "json"},
                {"type": "too_long", "loc": ["query", "query"], "msg": "too long"}]}"#,
            None,
        );
        mixed.caller_supplied.push("query".into());
        assert_eq!(status_error(&mixed).code, Code::InvalidArgument);
        // Without an offered value, resmon naming the caller's field is the caller's.
        let mut plain = export_refusal(400, r#"{"detail": "Unknown export format 'json'"}"#, None);
        plain.offered.clear();
        assert_eq!(status_error(&plain).code, Code::InvalidArgument);
        // An offered value carried in the path, mentioned in passing but
        // not quoted as the thing refused.
        let mut group =
            reply(400, "application/json", r#"{"detail": "Invalid value for ai_model in the ai group."}"#);
        group.route = "PUT /api/settings/ai".into();
        group.caller_supplied = vec!["ai_model".into()];
        group.offered = vec![Offered {
            argument: "group".into(),
            value: "ai".into(),
            fields: vec!["group".into()],
            sent: vec![],
            choices: vec!["search".into(), "email".into()],
        }];
        assert_eq!(status_error(&group).code, Code::InvalidArgument);
        // A create's entity refusal names a field with no offered value.
        let mut entity = reply(400, "application/json", r#"{"detail": "Unknown watch profile 99."}"#);
        entity.route = "POST /api/routines".into();
        entity.caller_supplied = vec!["entity".into(), "parameters".into()];
        assert_eq!(status_error(&entity).code, Code::InvalidArgument);
    }

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
    fn a_redirect_says_what_came_back_and_whether_a_write_may_be_done() {
        let redirect = |status: u16, route: &str, location: Option<&str>, body: &str| {
            let mut reply = reply(status, "application/json", body);
            reply.route = route.into();
            if let Some(location) = location {
                reply.headers.push(("Location".into(), location.into()));
            }
            status_error(&reply)
        };
        let done =
            redirect(303, "POST /api/routines", Some("http://10.1.2.3:9999/api/routines/9?token=x"), "");
        assert_eq!(done.code, Code::UpstreamError);
        assert!(
            done.message
                .starts_with("resmon answered POST /api/routines with a redirect (303 to /api/routines/9)")
        );
        assert!(done.message.contains("does not follow redirects"), "{}", done.message);
        assert!(done.message.contains("usually means it was done"), "{}", done.message);
        assert!(!done.message.contains("10.1.2.3") && !done.message.contains("token"), "{}", done.message);
        assert_eq!(done.detail["location"], json!("/api/routines/9"));
        assert_eq!(done.detail["outcome_unknown"], json!(true));
        // resmon's own sentence is kept, and it is still said to be a redirect.
        let moved = redirect(307, "POST /api/routines/7/activate", None, r#"{"detail": "moved"}"#);
        assert!(moved.message.contains("with a redirect (307) (resmon said: moved)"), "{}", moved.message);
        assert!(moved.message.contains("may have carried it out"), "{}", moved.message);
        // A read changes nothing: no caveat, no outcome_unknown.
        let read = redirect(301, "GET /api/routines/7", Some("/api/v2/routines/7"), "");
        assert!(read.message.contains("(301 to /api/v2/routines/7)"), "{}", read.message);
        assert!(read.detail.get("outcome_unknown").is_none());
        assert!(!read.message.contains("carried"), "{}", read.message);
    }

    #[test]
    fn a_location_is_shown_as_its_path_alone() {
        assert_eq!(location_path("/api/routines/9"), Some("/api/routines/9".into()));
        assert_eq!(location_path("http://evil.example:80/a/b?x=1#f"), Some("/a/b".into()));
        assert_eq!(location_path("https://evil.example"), Some("/".into()));
        assert_eq!(location_path("//evil.example/p"), Some("/p".into()));
        assert_eq!(location_path("  "), None);
        assert_eq!(location_path("?token=abc"), None);
        assert_eq!(location_path("/a\u{7}b c"), Some("/abc".into()));
    }

    #[test]
    fn interim_heads_and_blank_lines_are_passed_over_as_ureq_does() {
        let heads = |input: &[u8]| heads(input).map(|heads| (heads.interim, heads.status));
        assert_eq!(
            heads(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nx: y"),
            Ok((Some(100), Some(201)))
        );
        assert_eq!(heads(b"HTTP/1.1 100 Continue\r\n\r\n"), Ok((Some(100), None)));
        assert_eq!(heads(b"HTTP/1.1 100 Continue\r\n"), Ok((Some(100), None)), "its head not ended yet");
        assert_eq!(
            heads(
                b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\r\n"
            ),
            Ok((Some(100), Some(200)))
        );
        assert_eq!(heads(b"\r\nHTTP/1.1 201 Created\r\n"), Ok((None, Some(201))), "a stray blank line");
        assert_eq!(heads(b"\n\r"), Ok((None, None)));
        assert_eq!(heads(b"HTTP/1.1 101 Switching\r\n"), Ok((None, Some(101))), "ureq hands 101 on");
        assert_eq!(heads(b"\r\nSSH-2.0"), Err(()));
    }

    #[test]
    fn statuses_map_to_the_contract_codes() {
        let cases = [
            (404, Code::NotFound),
            // A refusal that names nobody's field is not blamed on the caller.
            (400, Code::UpstreamError),
            (409, Code::Conflict),
            (429, Code::Conflict),
            (500, Code::UpstreamError),
            (503, Code::UpstreamError),
            (302, Code::UpstreamError),
            (403, Code::InternalError),
            (418, Code::InternalError),
        ];
        for (status, code) in cases {
            let error =
                status_error(&reply(status, "application/json", r#"{"detail": "Routine not found"}"#));
            assert_eq!(error.code, code, "{status}");
            assert!(error.message.contains("Routine not found"), "{}", error.message);
            assert_eq!(error.detail["status"], json!(status));
        }
    }

    #[test]
    fn the_frameworks_404_and_a_405_name_a_missing_route() {
        for (status, body) in
            [(404, r#"{"detail": "Not Found"}"#), (405, r#"{"detail": "Method Not Allowed"}"#)]
        {
            let error = status_error(&reply(status, "application/json", body));
            assert_eq!(error.code, Code::UpstreamError, "{status}");
            assert_eq!(error.detail["route"], json!("GET /api/routines/{id}"));
            assert!(
                error.message.starts_with("resmon 2.3.0 does not serve GET /api/routines/{id}"),
                "{}",
                error.message
            );
            assert!(error.message.contains("probably older or newer"), "{}", error.message);
        }
        // resmon's own 404 about the record stays not_found.
        let record = status_error(&reply(404, "application/json", r#"{"detail": "Routine not found"}"#));
        assert_eq!(record.code, Code::NotFound);
    }

    #[test]
    fn a_refusal_is_blamed_on_the_caller_only_with_evidence() {
        // A 400 naming a parameter this server chose.
        let chosen =
            status_error(&reply(400, "application/json", r#"{"detail": "Unknown export format 'json'"}"#));
        assert_eq!(chosen.code, Code::UpstreamError);
        assert_eq!(chosen.detail["parameters"], json!(["format"]));
        assert!(chosen.message.contains("will not help"), "{}", chosen.message);
        // A 422 whose loc names a field this server chose, and one naming the caller's.
        let ours = status_error(&reply(
            422,
            "application/json",
            r#"{"detail": [{"loc": ["query", "format"], "msg": "bad"}]}"#,
        ));
        assert_eq!(ours.code, Code::UpstreamError);
        let theirs = status_error(&reply(
            422,
            "application/json",
            r#"{"detail": [{"loc": ["body", "query"], "msg": "too long"}]}"#,
        ));
        assert_eq!(theirs.code, Code::InvalidArgument);
        // A 422 naming a field nobody can place: not the caller's fault.
        let unknown = status_error(&reply(
            422,
            "application/json",
            r#"{"detail": [{"loc": ["body", "mystery"], "msg": "bad"}]}"#,
        ));
        assert_eq!(unknown.code, Code::UpstreamError);
        // A 400 sentence that names nobody's field, on a route whose body is
        // the caller's own, is about the caller's values; on another route
        // nothing shows whose it is.
        let mut created = reply(400, "application/json", r#"{"detail": "That profile does not exist."}"#);
        created.route = "POST /api/routines".into();
        assert_eq!(status_error(&created).code, Code::InvalidArgument);
        let unclear =
            status_error(&reply(400, "application/json", r#"{"detail": "Search is unavailable."}"#));
        assert_eq!(unclear.code, Code::UpstreamError);
        // A sentence naming the caller's field is the caller's.
        let named = status_error(&reply(400, "application/json", r#"{"detail": "The query is too long."}"#));
        assert_eq!(named.code, Code::InvalidArgument);
        // A 422 naming both: not blamed on the caller alone, and says both.
        let mixed = status_error(&reply(
            422,
            "application/json",
            r#"{"detail": [{"loc": ["query", "format"], "msg": "bad"}, {"loc": ["body", "query"], "msg": "bad"}]}"#,
        ));
        assert_eq!(mixed.code, Code::UpstreamError);
        assert!(mixed.message.contains("and also this call's `query`"), "{}", mixed.message);
    }

    #[test]
    fn route_templates_hide_record_ids() {
        assert_eq!(route_template("GET /api/routines/7/deliveries"), "GET /api/routines/{id}/deliveries");
        assert_eq!(route_template("PUT /api/settings/ai"), "PUT /api/settings/ai");
    }

    #[test]
    fn messages_are_resmons_sentence_or_a_fixed_one_never_the_body() {
        let html = status_error(&reply(500, "text/html", "<html>Traceback (most recent call last)</html>"));
        assert_eq!(html.code, Code::UpstreamError);
        assert!(!html.message.contains("Traceback") && !html.to_json().to_string().contains("html"));
        let plain = status_error(&reply(500, "text/plain", "Internal Server Error"));
        assert!(!plain.to_json().to_string().contains("Internal Server Error"));
        let validation = status_error(&reply(
            422,
            "application/json",
            r#"{"detail": [{"type": "int_parsing", "loc": ["path", "routine_id"], "msg": "Input should be a valid integer", "input": "abc"}]}"#,
        ));
        assert_eq!(validation.code, Code::InvalidArgument);
        assert_eq!(validation.detail["problems"][0]["loc"], json!(["path", "routine_id"]));
        let guard = status_error(&reply(
            403,
            "application/json",
            r#"{"detail": {"reason": "host_refused", "message": "resmon answers only requests addressed to 127.0.0.1."}}"#,
        ));
        assert_eq!(guard.detail["reason"], "host_refused");
        assert!(!guard.message.is_empty());
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
    fn a_status_line_is_read_only_once_it_is_whole() {
        assert_eq!(status_line(b""), Ok(None));
        assert_eq!(status_line(b"HTTP/1."), Ok(None));
        assert_eq!(status_line(b"HTTP/1.1 201 Crea"), Ok(None), "no line end yet");
        assert_eq!(status_line(b"HTTP/1.1 201 Created\r\nx-big: aaaa"), Ok(Some(201)));
        assert_eq!(status_line(b"HTTP/1.0 200\r\n"), Ok(Some(200)));
        assert_eq!(status_line(b"SSH-2.0-OpenSSH"), Err(()));
        assert_eq!(status_line(b"HTTP/1.1 2x1 Odd\r\n"), Err(()));
        assert_eq!(status_line(b"HTTP/1.1  200 Odd\r\n"), Err(()));
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
