//! An exchange that did not bring a whole answer, said as an error: a
//! failure before any status line (refused, reset, timed out, not HTTP) and
//! one after it (the rest of the head or the body did not arrive), with
//! `outcome_unknown` for a write whose outcome nothing shows
//! (contract-notes 26).
//!
//! It only words what the exchange saw: it never sends, never retries,
//! never drops the cached instance and never reads a body; a status that
//! did arrive whole is `refusal`'s to judge.

use serde_json::{Value, json};

use super::super::{Backend, CONNECT_TIMEOUT, Instance, MAX_BODY_BYTES, MAX_HEADER_BYTES};
use crate::error::{Code, ToolError, first_sentence};
use crate::redact;

impl Backend {
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
    /// not read). What that status means for a write is the write's to say
    /// (`answered_before_failing` gives it the status): a 2xx is acceptance,
    /// a 3xx or 5xx leaves the outcome unknown, a 4xx is a refusal
    /// (contract-notes 26).
    pub(super) fn after_status_line(
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
            out = out.with_detail("deadline_s", json!(super::seconds(self.request_timeout)));
        }
        if code == Code::BackendUnavailable {
            out = out.with_top_level("tried", json!([instance.candidate.base_url()]));
        }
        out
    }

    /// A failure before any status line of `route`'s answer arrived. Only a
    /// refused connection is "not running": anything that took the
    /// connection is said as what it did.
    pub(super) fn transport_error(
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
        let fresh_connection = super::transport::seen(&self.watch).fresh;
        let tried = json!([base]);
        // An interim status (100 Continue and the like) says nothing of what
        // became of the request, so it is said, and counts for nothing.
        let without_answer = match interim {
            Some(interim) => format!("without a final answer (only the interim status {interim})"),
            None => "without answering".to_string(),
        };
        // A write whose answer was lost may still have been applied: that is
        // said first, with the read that shows whether it was, so that
        // nobody repeats a run or a create blindly (contract-notes 26).
        let write = self.may_change(route);
        let unknown_outcome = |error: ToolError| {
            let error = match interim {
                Some(interim) => error.with_detail("interim_status", json!(interim)),
                None => error,
            };
            if !write {
                return error;
            }
            let read = match interim {
                Some(interim) => format!(
                    "no final status of its answer was read (only the interim {interim}, which says nothing \
                     of the outcome)"
                ),
                None => "no status of its answer was read".to_string(),
            };
            let check = self.write_check();
            ToolError::new(
                error.code,
                format!(
                    "resmon may have {}; {read}. {} {}",
                    check.would_have,
                    first_sentence(&error.message),
                    check.check
                ),
            )
            .with_detail("outcome_unknown", json!(true))
            .merged(error)
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
            .with_detail("sent", json!(false))
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
                .with_detail("deadline_s", json!(super::seconds(self.request_timeout)))
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
                // A connection kept from an earlier request was accepted for
                // that one: said as the kept connection it was, the idle close
                // that a server may make just as it is reused named first.
                // An interim status came on it, so it was not idle.
                let what = if fresh_connection || interim.is_some() {
                    format!(
                        "{subject} accepted the connection for {route} and then {did} it {without_answer}."
                    )
                } else {
                    format!(
                        "{subject} {did} the kept connection {route} went out on, {without_answer}; a \
                         server may close an idle connection just as it is used again."
                    )
                };
                unknown_outcome(
                    ToolError::new(
                        Code::BackendUnavailable,
                        format!(
                            "{what} {}",
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
            // Nothing listens on the named port: contract 1.0's "not running"
            // case ("When the backend is not named, or not running"), said in
            // this server's words, first what it means and what to do, then the
            // port and what named it. `detail.io` is how a reader tells it
            // from an answer (tools/accepted.rs), never the sentence.
            ureq::Error::Io(io) if io.kind() == ErrorKind::ConnectionRefused => ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "resmon is not running on the port this server was given; start the resmon app, \
                     then call again. Nothing accepted a connection on port {}, which {} names, so \
                     {route} was not sent. If resmon is running already, it listens on another \
                     port: name that one with RESMON_PORT, or with RESMON_PORT_FILE set to the port \
                     file it writes.",
                    instance.candidate.port, instance.candidate.named_by
                ),
            )
            .with_detail("route", json!(route))
            .with_detail("io", json!("ConnectionRefused"))
            .with_top_level("tried", tried),
            // A failure while connecting sent nothing; any other, once the
            // connection was open, may have come after the request went out.
            ureq::Error::Io(io) if connecting(&io) => ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "This server could not connect to {base} for {route} ({:?}), so nothing was \
                     sent. Check that RESMON_PORT or the port file names a port on this computer.",
                    io.kind()
                ),
            )
            .with_detail("route", json!(route))
            .with_detail("io", json!(format!("{:?}", io.kind())))
            .with_detail("sent", json!(false))
            .with_top_level("tried", tried),
            ureq::Error::Io(io) => unknown_outcome(
                ToolError::new(
                    Code::BackendUnavailable,
                    format!(
                        "The exchange with {base} for {route} failed ({:?}) before any status line of \
                         an answer arrived.",
                        io.kind()
                    ),
                )
                .with_detail("route", json!(route))
                .with_detail("io", json!(format!("{:?}", io.kind())))
                .with_top_level("tried", tried),
            ),
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

/// Whether an I/O failure belongs to opening the connection, so that no
/// byte of the request went anywhere.
fn connecting(io: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        io.kind(),
        ErrorKind::AddrNotAvailable
            | ErrorKind::AddrInUse
            | ErrorKind::NetworkUnreachable
            | ErrorKind::HostUnreachable
            | ErrorKind::NetworkDown
            | ErrorKind::PermissionDenied
            | ErrorKind::InvalidInput
            | ErrorKind::NotFound
    )
}

#[cfg(test)]
mod tests;
