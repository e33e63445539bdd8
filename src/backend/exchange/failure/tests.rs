//! failure.rs's unit tests: how a failure after a status line is known, and
//! how a reset is told from a close.

use super::*;

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
    let eof = || ureq::Error::Io(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "Peer disconnected"));
    assert_eq!(rest_unread(&eof(), false), "broke_off");
    assert_eq!(rest_unread(&eof(), true), "reset");
    assert_eq!(rest_unread(&ureq::Error::Timeout(ureq::Timeout::Global), true), "timed_out");
    assert_eq!(rest_unread(&ureq::Error::LargeResponseHeader(9000, 8192), false), "too_large");
    assert_eq!(rest_unread(&ureq::Error::BodyExceedsLimit(1), false), "too_large");
}
