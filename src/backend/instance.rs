//! The instance: discovery on first use and its confirmation by an
//! authenticated health request (contract-notes 3), the cache of it for
//! the session, the resends contract-notes 18 allows (after `401
//! token_invalid`, after a refused connection at a port a port file named,
//! a GET whose kept connection closed), the identity preflight of a pinned call (`checked_health`), and the
//! release the confirmed resmon reported.
//!
//! It decides where a request goes and whether it goes again, and whether
//! a candidate is resmon at all (its health answer is 200 with `status:
//! "ok"`). It never builds an HTTP request itself (`exchange` does), and
//! what a refusal or a health answer says beyond that (a 401's reason, a
//! mismatch, a pinned identity) is read, and the errors worded, in
//! `refusal`. Its own sentences name only its steps: the candidate tried
//! and what named it.

use serde_json::{Value, json};

use super::exchange::{Method, Outgoing, Reply};
use super::refusal::{judge_health, not_resmons_health, refusal_reason, success, token_refused};
use super::{Backend, Instance};
use crate::discovery::{self, Candidate, Trace};
use crate::error::{Code, ToolError};
use crate::redact;

impl Backend {
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
    /// none is cached. Never to a port that nothing named. Resent at most once, after a
    /// `401 token_invalid` from a cached instance: resmon restarted on the
    /// same port with a new token, and its guard refused before doing any
    /// work, so sending again to the rediscovered instance repeats nothing
    /// (contract-notes 18). A GET is also sent once more when the kept
    /// connection it went out on was closed before any answer came, and any
    /// request when nothing accepted a connection at the port a port file
    /// named, once that file has been read again.
    pub(crate) fn send(
        &mut self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
    ) -> Result<Reply, ToolError> {
        let outgoing = Outgoing { method, path, query, body };
        let route = outgoing.route();
        // With nothing left of the call, not even discovery is begun.
        self.check_deadline(Method::Get, &route)?;
        let (mut instance, fresh) = self.instance()?;
        // The margin is judged when the request would go out, after any
        // discovery above has used its share of the call (contract-notes 4).
        self.check_deadline(method, &route)?;
        let reply = match self.exchange(&instance, outgoing) {
            // Nothing took the connection at the port a port file named when
            // it was last read: a resmon that restarted writes a new one, so
            // it is read again and the request, which went nowhere, is sent
            // once to what it names now (contract-notes 18).
            Err(error) if !fresh && !self.resent && instance.candidate.from_port_file && refused(&error) => {
                let (found, reply) = self.after_refusal(&instance, error, outgoing)?;
                instance = found;
                reply
            }
            // A GET that met a kept connection closed under it is sent once
            // more, on a new one, within the call's deadline: no answer came,
            // and a read repeats no work (contract-notes 18).
            Err(error) if method == Method::Get && self.lost_a_kept_connection(&error) => {
                redact::log(&format!(
                    "{route} met a kept connection closed before any answer; sending it once more on a new one"
                ));
                self.check_deadline(method, &route)?;
                self.exchange(&instance, outgoing)
            }
            other => other,
        }
        .inspect_err(|_| {
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
        let again = self.send_to_rediscovered(&instance, outgoing).inspect_err(|_| {
            self.instance = None;
        })?;
        if again.status == 401 {
            self.instance = None;
            return Err(token_refused(&instance, &again));
        }
        Ok(again)
    }

    /// Nothing took the connection at the port a port file named when it
    /// was last read: a resmon that restarted writes a new one, so the file
    /// is read again and the request, which went nowhere, is sent once to
    /// what it names now (contract-notes 18). The instance it went to, and
    /// its answer.
    fn after_refusal(
        &mut self,
        refused_by: &Instance,
        error: ToolError,
        outgoing: Outgoing<'_>,
    ) -> Result<(Instance, Result<Reply, ToolError>), ToolError> {
        let route = outgoing.route();
        self.resent = true;
        self.instance = None;
        redact::log(&format!(
            "{route}: nothing accepted a connection on port {}; reading the port file again",
            refused_by.candidate.port
        ));
        self.check_deadline(Method::Get, &route)?;
        // The file gone: resmon is not running, which the first refusal
        // already says, with the address that was tried. Anything else the
        // file, read again, led to (another port without its token, a health
        // answer that is not resmon's) is what was seen last, and is said,
        // beside the first port.
        let instance = match self.instance() {
            Ok((found, _)) => found,
            Err(again)
                if again.detail.contains_key("port_file")
                    && again.detail.get("problem") == Some(&json!("absent")) =>
            {
                return Err(error);
            }
            Err(again) => {
                return Err(again.with_detail("first_tried", json!(refused_by.candidate.base_url())));
            }
        };
        let reply = self.send_to_rediscovered(&instance, outgoing);
        Ok((instance, reply))
    }

    /// Sends a request again to an instance discovered anew within the call.
    /// A pinned call is checked against it first, before anything else is
    /// asked of it: a restarted resmon is another process, and a pinned
    /// answer must come from the one expected.
    fn send_to_rediscovered(
        &mut self,
        instance: &Instance,
        outgoing: Outgoing<'_>,
    ) -> Result<Reply, ToolError> {
        if let Some(expected) = self.pinned.clone()
            && outgoing.path != "/api/health"
        {
            self.preflight(instance, &expected)?;
        }
        self.check_deadline(outgoing.method, &outgoing.route())?;
        self.exchange(instance, outgoing)
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
        let health = Outgoing { method: Method::Get, path: "/api/health", query: &query, body: None };
        let reply = self.exchange(instance, health)?;
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
        let health = Outgoing { method: Method::Get, path: "/api/health", query: &[], body: None };
        let reply = self.exchange(&probe, health).map_err(|error| {
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
                Err(not_resmons_health(candidate, &reply).with_top_level("tried", json!([url])))
            }
        }
    }
}

/// Whether an exchange failed because nothing accepted the connection: no
/// byte of the request went anywhere.
fn refused(error: &ToolError) -> bool {
    error.detail.get("io").and_then(Value::as_str) == Some("ConnectionRefused")
}
