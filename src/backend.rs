//! The only module that speaks HTTP: one `ureq::Agent` with every setting
//! written out, discovery on first use, and the mapping from what resmon
//! answered to the contract's error codes.
//!
//! Rules (issue 2 §4, clarifications 3-5): keep-alive on one agent; no proxy,
//! ever (the token must not reach one); redirects are errors, never followed;
//! connect within 3 s and finish each request within a bounded total; bodies
//! read incrementally up to a cap; every request carries the bearer token and
//! `Host: 127.0.0.1:<port>` and no `Origin`; nothing is retried.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde_json::{Value, json};
use ureq::Agent;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use crate::discovery::{self, Candidate, Environment, Trace};
use crate::error::{Code, ToolError};
use crate::redact;

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Upper bound on one request, connect to last body byte (clarification 4).
pub const MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest body read from resmon (clarification 4); a larger one is an error.
pub const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// ureq's read and write buffers, allocated once per connection.
pub const IO_BUFFER_BYTES: usize = 16 * 1024;
/// Longest response head accepted (status line and headers); less than the
/// read buffer, so that a longer one is refused as too large.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
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
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub bytes: Vec<u8>,
    pub route: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON. A body that is not JSON is an upstream error whose
    /// message never repeats the body (clarification 5).
    pub fn json(&self) -> Result<Value, ToolError> {
        serde_json::from_slice(&self.bytes).map_err(|_| {
            ToolError::new(
                Code::UpstreamError,
                format!("resmon answered {} with a body that is not JSON.", self.route),
            )
            .with_detail("status", json!(self.status))
            .with_detail("route", json!(self.route))
        })
    }

    /// The body as JSON, required to be an object.
    pub fn json_object(&self) -> Result<Value, ToolError> {
        let value = self.json()?;
        if value.is_object() { Ok(value) } else { Err(unexpected_shape(&self.route, "an object")) }
    }

    pub fn text(&self) -> Result<String, ToolError> {
        String::from_utf8(self.bytes.clone()).map_err(|_| {
            ToolError::new(
                Code::UpstreamError,
                format!("resmon answered {} with text that is not UTF-8.", self.route),
            )
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

pub struct Backend {
    env: Environment,
    agent: Agent,
    request_timeout: Duration,
    /// The confirmed instance, cached for the session and dropped on a
    /// connection failure or a 401 so that the next call discovers afresh.
    instance: Option<Candidate>,
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
        let agent = Agent::with_parts(config, DefaultConnector::new(), LiteralResolver);
        Backend { env, agent, request_timeout, instance: None }
    }

    pub fn environment(&self) -> &Environment {
        &self.env
    }

    /// Discovers and confirms an instance, recording each step. Used by
    /// `--check`; tool calls go through `send`, which caches the result.
    pub fn discover(&mut self, trace: &mut Trace) -> Result<Value, ToolError> {
        self.instance = None;
        let candidate = discovery::find_candidate(&self.env, trace)?;
        let health = self.confirm(&candidate, trace)?;
        self.instance = Some(candidate);
        Ok(health)
    }

    /// Sends one request to the confirmed instance, discovering it first when
    /// none is cached. Sent at most once; never to any other port.
    pub fn send(
        &mut self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, ToolError> {
        let candidate = match &self.instance {
            Some(candidate) => candidate.clone(),
            None => {
                let mut trace = Trace::new();
                let candidate = discovery::find_candidate(&self.env, &mut trace)?;
                self.confirm(&candidate, &mut trace)?;
                self.instance = Some(candidate.clone());
                candidate
            }
        };
        let reply = self.exchange(&candidate, method, path, query, body).inspect_err(|_| {
            self.instance = None;
        })?;
        if reply.status == 401 {
            self.instance = None;
            return Err(token_refused(&candidate, &reply));
        }
        Ok(reply)
    }

    /// `send`, then insist on a 2xx JSON object answer.
    pub fn get_object(&mut self, path: &str, query: &[(&str, String)]) -> Result<Value, ToolError> {
        let reply = self.send(Method::Get, path, query, None)?;
        success(&reply)?;
        reply.json_object()
    }

    /// `send`, then insist on a 2xx JSON answer of any shape.
    pub fn request_json(
        &mut self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Value, ToolError> {
        let reply = self.send(method, path, query, body)?;
        success(&reply)?;
        reply.json()
    }

    /// The authenticated health request that turns a candidate into an
    /// instance (clarification 3): 200 with a JSON object, `status: "ok"` and
    /// an `identity` object, or the candidate is not used.
    fn confirm(&mut self, candidate: &Candidate, trace: &mut Trace) -> Result<Value, ToolError> {
        let url = candidate.base_url();
        let step = format!("GET {url}/api/health");
        // Until health has answered properly there is no resmon to blame, so
        // any broken answer here means "not available" (clarification 3).
        let reply = self.exchange(candidate, Method::Get, "/api/health", &[], None).map_err(|error| {
            trace.push(discovery::Step { what: step.clone(), outcome: error.message.clone() });
            if error.code == Code::BackendUnavailable {
                return error;
            }
            ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "Something answers on port {} but its health answer could not be read ({}), so it \
                     was not used. Check that RESMON_PORT or the port file names the right instance.",
                    candidate.port, error.message
                ),
            )
            .with_detail("route", json!("GET /api/health"))
            .with_top_level("tried", json!([url]))
        })?;
        if reply.status == 401 {
            trace.push(discovery::Step { what: step, outcome: "401: the token was refused".into() });
            return Err(token_refused(candidate, &reply));
        }
        let body = reply.json().ok().filter(|body| {
            reply.status == 200
                && body.get("status").and_then(Value::as_str) == Some("ok")
                && body.get("identity").is_some_and(Value::is_object)
        });
        match body {
            Some(body) => {
                trace.push(discovery::Step { what: step, outcome: "200: resmon answered".into() });
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
                         that RESMON_PORT or the port file names the right instance.",
                        candidate.port, reply.status
                    ),
                )
                .with_detail("status", json!(reply.status))
                .with_top_level("tried", json!([url])))
            }
        }
    }

    /// One HTTP exchange with no interpretation of the status.
    fn exchange(
        &self,
        candidate: &Candidate,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, ToolError> {
        let base = candidate.base_url();
        let url = format!("{base}{path}");
        let route = format!("{} {path}", method.as_str());
        let host = format!("127.0.0.1:{}", candidate.port);
        let authorization = format!("Bearer {}", candidate.token);
        let pairs = query.iter().map(|(key, value)| (*key, value.as_str()));
        let result = match method {
            Method::Get => self
                .agent
                .get(&url)
                .header("Host", &host)
                .header("Authorization", &authorization)
                .query_pairs(pairs)
                .call(),
            Method::Post | Method::Put => {
                let payload = body.map(Value::to_string).unwrap_or_else(|| "{}".into());
                let request =
                    if method == Method::Post { self.agent.post(&url) } else { self.agent.put(&url) };
                request
                    .header("Host", &host)
                    .header("Authorization", &authorization)
                    .header("Content-Type", "application/json")
                    .query_pairs(pairs)
                    .send(payload.as_bytes())
            }
        };
        let mut response = result.map_err(|error| self.transport_error(&base, &route, error))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter_map(|(name, value)| Some((name.as_str().to_string(), value.to_str().ok()?.to_string())))
            .collect();
        let bytes = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY_BYTES)
            .read_to_vec()
            .map_err(|error| body_error(&route, status, error))?;
        Ok(Reply { status, headers, bytes, route })
    }

    fn transport_error(&self, base: &str, route: &str, error: ureq::Error) -> ToolError {
        redact::log(&format!("{route} failed before resmon answered: {error}"));
        let tried = json!([base]);
        match error {
            ureq::Error::Timeout(_) => ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "resmon at {base} did not answer within {} s, so the call was abandoned. \
                     If the app is busy or frozen, wait or restart it and try again.",
                    self.request_timeout.as_secs_f32()
                ),
            )
            .with_detail("route", json!(route))
            .with_top_level("tried", tried),
            ureq::Error::Protocol(_) => ToolError::new(
                Code::UpstreamError,
                format!("{base} answered {route} with something that is not valid HTTP."),
            )
            .with_detail("route", json!(route)),
            // The named-port sentence of contract 1.0 "When the backend is not
            // named, or not running", word for word: callers may compare it.
            _ => ToolError::new(
                Code::BackendUnavailable,
                "resmon is not running. Start the resmon app and try again.",
            )
            .with_detail("route", json!(route))
            .with_top_level("tried", tried),
        }
    }
}

fn body_error(route: &str, status: u16, error: ureq::Error) -> ToolError {
    let message = match error {
        ureq::Error::BodyExceedsLimit(_) => format!(
            "resmon's answer to {route} is larger than this server accepts ({} MiB), so it was \
             not read. Ask for a smaller page.",
            MAX_BODY_BYTES / (1024 * 1024)
        ),
        _ => format!("resmon's answer to {route} broke off before it was complete."),
    };
    ToolError::new(Code::UpstreamError, message)
        .with_detail("route", json!(route))
        .with_detail("status", json!(status))
}

fn token_refused(candidate: &Candidate, reply: &Reply) -> ToolError {
    let reason = reply
        .json()
        .ok()
        .and_then(|body| body.pointer("/detail/reason").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "token_invalid".to_string());
    let why = if reason == "token_missing" {
        "it received no token"
    } else {
        "the token from the token file is not the one it holds now (a stale file from an \
         earlier run, or a token file that belongs to another instance)"
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "resmon on port {} refused this server's local API token: {why}. Restart resmon so \
             that it writes a fresh token file at {}, or set RESMON_STATE_DIR to the state \
             directory of the instance on that port, then try again.",
            candidate.port,
            candidate.token_path.display()
        ),
    )
    .with_detail("reason", json!(reason))
    .with_detail("port", json!(candidate.port))
    .with_detail("token_file", json!(candidate.token_path.display().to_string()))
    .with_top_level("tried", json!([candidate.base_url()]))
}

/// Passes a 2xx reply; maps anything else to the contract's codes (issue 2 §5).
pub fn success(reply: &Reply) -> Result<(), ToolError> {
    if reply.is_success() { Ok(()) } else { Err(status_error(reply)) }
}

/// 404 → not_found; 400/422 → invalid_argument; 409/429 → conflict; 5xx →
/// upstream_error; 3xx → upstream_error (never followed); other 4xx →
/// internal_error. The message is resmon's own when it gave a sentence.
pub fn status_error(reply: &Reply) -> ToolError {
    let status = reply.status;
    let (code, fallback) = match status {
        404 => (Code::NotFound, "resmon has no such record."),
        400 | 422 => (Code::InvalidArgument, "resmon refused the request's arguments."),
        409 | 429 => (Code::Conflict, "resmon cannot do that right now because of its current state."),
        300..=399 => {
            (Code::UpstreamError, "resmon answered with a redirect, which this server never follows.")
        }
        500..=599 => (Code::UpstreamError, "resmon hit an internal error while answering."),
        _ => (
            Code::InternalError,
            "resmon refused a request this server built; this is a bug in resmon-mcp or a \
             version mismatch with the app.",
        ),
    };
    let body = if is_json(reply) { reply.json().ok() } else { None };
    let detail = body.as_ref().and_then(|body| body.get("detail"));
    let message = match detail {
        Some(Value::String(sentence)) if !sentence.trim().is_empty() => sentence.clone(),
        _ => fallback.to_string(),
    };
    let mut error = ToolError::new(code, message)
        .with_detail("status", json!(status))
        .with_detail("route", json!(reply.route));
    match detail {
        Some(Value::Array(problems)) => {
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
    error
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
        }
    }

    #[test]
    fn statuses_map_to_the_contract_codes() {
        let cases = [
            (404, Code::NotFound),
            (400, Code::InvalidArgument),
            (422, Code::InvalidArgument),
            (409, Code::Conflict),
            (429, Code::Conflict),
            (500, Code::UpstreamError),
            (503, Code::UpstreamError),
            (302, Code::UpstreamError),
            (403, Code::InternalError),
            (405, Code::InternalError),
            (418, Code::InternalError),
        ];
        for (status, code) in cases {
            let error =
                status_error(&reply(status, "application/json", r#"{"detail": "Routine not found"}"#));
            assert_eq!(error.code, code, "{status}");
            assert_eq!(error.message, "Routine not found");
            assert_eq!(error.detail["status"], json!(status));
        }
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

    #[test]
    fn a_non_json_body_is_an_upstream_error_that_does_not_repeat_it() {
        let error = reply(200, "application/json", "<html>oops</html>").json().unwrap_err();
        assert_eq!(error.code, Code::UpstreamError);
        assert!(!error.message.contains("oops"));
        let array = reply(200, "application/json", "[1,2]").json_object().unwrap_err();
        assert_eq!(array.code, Code::UpstreamError);
    }
}
