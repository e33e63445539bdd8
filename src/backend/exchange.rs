//! The HTTP exchange: the one `ureq::Agent` with every setting written out,
//! the current call's deadline and state, and one request to a given
//! instance with its answer read into a `Reply`. Its children hold the
//! socket under the agent (`transport`), the reading of a body (`reply`)
//! and the wording of an exchange that failed (`failure`).
//!
//! It sends to the instance it is handed and nowhere else: it never
//! discovers, caches or drops an instance and never resends (`instance`
//! does), and never judges a non-2xx status (`refusal` does).

mod failure;
mod provenance;
mod reply;
mod transport;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use ureq::unversioned::transport::{Connector, DefaultConnector};
use ureq::{Agent, RequestBuilder};

pub(crate) use self::failure::answered_before_failing;
pub(crate) use self::reply::{CallerField, Method, Offered, Reply};
pub(super) use self::transport::Watch;
use self::transport::{LiteralResolver, Seen, SlicedWaits, seen};
use super::{
    Backend, CLOSED_CONNECTION, CONNECT_TIMEOUT, IO_BUFFER_BYTES, Instance, MAX_BODY_BYTES, MAX_HEADER_BYTES,
    MAX_REQUEST_TIMEOUT, WriteCheck,
};
use crate::discovery::{Candidate, Environment};
use crate::error::{Code, ToolError};

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
            writes: false,
            status_only: None,
            write_check: None,
            watch,
        }
    }

    /// The per-call bound in force.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Starts one tool call: a fresh deadline shared by all its requests;
    /// the names of the request fields that carry the caller's arguments,
    /// so that resmon refusing another field is not blamed on the caller
    /// (contract-notes 17); and whether the tool is a write, so that only a
    /// write's POSTs and PUTs keep a write's margin and, when their outcome
    /// is unknown, say so (`may_change`; contract-notes 4 and 26).
    pub(crate) fn begin_call(&mut self, caller_fields: Vec<String>, writes: bool) {
        self.deadline = Some(Instant::now() + self.request_timeout);
        self.writes = writes;
        self.caller_fields = caller_fields;
        self.offered = Vec::new();
        self.resent = false;
        self.pinned = None;
        self.status_only = None;
        self.write_check = None;
    }

    /// Names, for the current write, what it would have done and the read
    /// that shows whether it did, for an answer that leaves its outcome
    /// unknown (contract-notes 26).
    pub(crate) fn expect_write(&mut self, check: WriteCheck) {
        self.write_check = Some(check);
    }

    /// The words for the current write whose outcome is unknown.
    pub(super) fn write_check(&self) -> WriteCheck {
        self.write_check.clone().unwrap_or_else(WriteCheck::unnamed)
    }

    /// Has this call's `method path` answer with its status line alone when
    /// that says 2xx: the transport ends the read as soon as the final 2xx
    /// status line has arrived, so neither the rest of the head nor the body
    /// is waited for (the connection is then closed rather than reused), and
    /// a head or body that stalls or breaks off costs nothing. For a write
    /// whose answer the tool never reads, such as the settings PUT, which is
    /// followed by a read-back (contract-notes 26); that request also gives
    /// up half a write's margin of the call's deadline, which the read-back
    /// keeps, so that an answer the deadline cut off can still be checked.
    pub(crate) fn status_only(&mut self, method: Method, path: &str) {
        self.status_only = Some(format!("{} {path}", method.as_str()));
    }

    /// Records, for the call just begun, the caller's values that the tool's
    /// own schema offers in an `enum` (contract-notes 17).
    pub(crate) fn offer(&mut self, offered: Vec<Offered>) {
        self.offered = offered;
    }

    /// What is left of the current call's deadline; the whole bound when no
    /// call has begun (a direct use of the backend, as in a unit test).
    pub(crate) fn time_left(&self) -> Duration {
        match self.deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => self.request_timeout,
        }
    }

    /// Whether a request of the current call to `route` ("METHOD /path")
    /// can change resmon: a write tool's POST or PUT (a read's POST cannot).
    pub(super) fn may_change(&self, route: &str) -> bool {
        self.writes && !route.starts_with("GET ")
    }

    /// Refuses to start a request the call's deadline leaves no time for: a
    /// read needs a moment, a write a whole second (a quarter of the bound
    /// when the bound is under 4 s), since a write cut off mid-flight leaves
    /// the person not knowing whether it happened.
    /// What a write needs left of the call to be sent (contract-notes 4):
    /// a second, or a quarter of the bound when that is shorter.
    fn write_margin(&self) -> Duration {
        Duration::from_secs(1).min(self.request_timeout / 4)
    }

    pub(super) fn check_deadline(&self, method: Method, route: &str) -> Result<(), ToolError> {
        let moment = Duration::from_millis(5);
        let needed =
            if method != Method::Get && self.may_change(route) { self.write_margin() } else { moment };
        let left = self.time_left();
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
                 than the {} s this server keeps for a write so that its own deadline does not cut \
                 the write off halfway, so it was not sent and changed nothing. Call the tool again; if resmon answered \
                 slowly, wait until it is less busy.",
                left.as_secs_f32(),
                self.request_timeout.as_secs_f32(),
                needed.as_secs_f32()
            ),
        )
        .with_detail("route", json!(route))
        .with_detail("sent", json!(false))
        .with_detail("deadline_s", json!(seconds(self.request_timeout)))
        .with_detail("time_left_s", json!(seconds(left)))
        .with_top_level("tried", json!(base.into_iter().collect::<Vec<_>>())))
    }

    /// A request not sent because the call's deadline had passed. It says
    /// only that: earlier requests of the call may all have been answered,
    /// slowly.
    pub(super) fn deadline_passed(&self, base: Option<&str>, route: &str) -> ToolError {
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
        .with_detail("deadline_s", json!(seconds(self.request_timeout)))
        .with_top_level("tried", json!(base.into_iter().collect::<Vec<_>>()))
    }

    /// Whether the exchange that just failed with `error` went out on a
    /// connection kept from an earlier exchange, which was then closed or
    /// reset before any byte of an answer came: what a client sees when
    /// resmon closed an idle keep-alive connection just as it was reused.
    pub(super) fn lost_a_kept_connection(&self, error: &ToolError) -> bool {
        let seen = seen(&self.watch);
        let closed =
            error.detail.get("io").and_then(Value::as_str).is_some_and(|io| CLOSED_CONNECTION.contains(&io));
        closed && !seen.fresh && !seen.any_input && seen.status.is_none() && seen.interim.is_none()
    }

    /// One HTTP exchange with no interpretation of the status.
    pub(super) fn exchange(&self, instance: &Instance, outgoing: Outgoing<'_>) -> Result<Reply, ToolError> {
        let Outgoing { method, path, query, body } = outgoing;
        let candidate = &instance.candidate;
        let base = candidate.base_url();
        let url = format!("{base}{path}");
        let route = format!("{} {path}", method.as_str());
        let remaining = self.time_left();
        if remaining < Duration::from_millis(5) {
            // The call's deadline has passed: nothing more is sent.
            return Err(self.deadline_passed(Some(&base), &route));
        }
        let status_only = self.status_only.as_deref() == Some(route.as_str());
        // The one status-only route is a write that is always read back (the
        // settings PUT): it leaves half its write margin to that read-back,
        // so that an answer lost to the deadline can still be checked.
        let remaining =
            if status_only { remaining.saturating_sub(self.write_margin() / 2) } else { remaining };
        *seen(&self.watch) = Seen { watching: true, stop_at_success: status_only, ..Seen::default() };
        let result = match method {
            Method::Get => prepared(self.agent.get(&url), candidate, remaining, query).call(),
            Method::Post | Method::Put => {
                let payload = body.map(Value::to_string).unwrap_or_else(|| "{}".into());
                let request =
                    if method == Method::Post { self.agent.post(&url) } else { self.agent.put(&url) };
                prepared(request, candidate, remaining, query)
                    .header("Content-Type", "application/json")
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
        let write = self.may_change(&route).then(|| self.write_check());
        Reply {
            status,
            headers,
            bytes,
            route,
            backend_version: instance.version.clone(),
            server_chosen,
            caller_supplied,
            offered,
            write,
        }
    }
}

/// One request of a call, as it goes out: its method, path, query and body.
#[derive(Clone, Copy)]
pub(super) struct Outgoing<'a> {
    pub(super) method: Method,
    pub(super) path: &'a str,
    pub(super) query: &'a [(&'a str, String)],
    pub(super) body: Option<&'a Value>,
}

impl Outgoing<'_> {
    /// "METHOD /path", as sentences and the log name a request.
    pub(super) fn route(&self) -> String {
        format!("{} {}", self.method.as_str(), self.path)
    }
}

/// A request with what every request to resmon carries, whatever its
/// method: the call's bound, the guard's headers and the query.
fn prepared<B>(
    request: RequestBuilder<B>,
    candidate: &Candidate,
    remaining: Duration,
    query: &[(&str, String)],
) -> RequestBuilder<B> {
    request
        .config()
        .timeout_global(Some(remaining))
        .timeout_connect(Some(CONNECT_TIMEOUT.min(remaining)))
        .build()
        .header("Host", format!("127.0.0.1:{}", candidate.port))
        .header("Authorization", format!("Bearer {}", candidate.token))
        .query_pairs(query.iter().map(|(key, value)| (*key, value.as_str())))
}

/// A duration as a detail field gives it: seconds to the millisecond, read
/// from the exact value, so that 0.3 s is written 0.3 and not as the nearest
/// `f32` widened (0.30000001192092896).
pub(super) fn seconds(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).round() / 1000.0
}
