//! resmon's judgements about its own corpus: the analytics views and the
//! watchdog's findings, passed on with their caveats intact.

use serde_json::{Value, json};

use super::{Probe, Tool, nullable, object, passed_through};
use crate::args::Args;
use crate::backend::{self, Backend, Method};
use crate::error::{ToolError, ToolResult};

pub(crate) const GET_ANALYTICS: Tool = Tool {
    name: "get_analytics",
    title: "Corpus analytics",
    description: "One analytics view as `data`; derived numbers stay null until `sufficient` is \
        true (insufficient_reason says why).",
    always_load: false,
    search_hint: "statistics stats trends trend volume over time how many number count counts per \
        day week month year monthly histogram chart graph plot numbers growth breakdown \
        distribution summary totals metrics rate dashboard discovery lag overview collection \
        compare comparison comparing versus rank ranking ranked top best worst most least fewest \
        more fewer productive productivity unproductive performing performance perform effective \
        useful useless worth yield yields fruitful contribute contribution contributes bring \
        brings brought give gives come comes where which papers source sources keyword keywords \
        terms routine routines alert alerts feed feeds saved searches find finds found match \
        matches matched matching by nothing never zero none valuable worthwhile noise noisy drop \
        prune leaderboard share percent percentage arxiv biorxiv medrxiv pubmed crossref openalex",
    input_schema: analytics_input,
    #[cfg(test)]
    output_schema: analytics_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Each(&[
        "/api/analytics/overview",
        "/api/analytics/publication-volume",
        "/api/analytics/source-contribution",
        "/api/analytics/keyword-contribution",
        "/api/analytics/routine-health",
        "/api/analytics/discovery-lag",
    ]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_analytics,
};

pub(crate) const GET_WATCHDOG_FINDINGS: Tool = Tool {
    name: "get_watchdog_findings",
    title: "Watchdog findings",
    description: "Problems resmon sees in sources and routines. Only severity broken and unusual are \
        alarms, not advice, withdrawn or unknown. Relay what_to_do and not_enough_data.",
    always_load: false,
    search_hint: "is anything something problems problem issues issue wrong warnings warning \
        alarms anomalies anomaly broken broke failing failures fails failed fail errors error \
        erroring health healthy unhealthy ok okay working properly fine check checkup diagnostics \
        diagnose troubleshoot stopped silent silence quiet dead stale gone down outage unreachable \
        unavailable timing timeout timeouts returning returns nothing new papers empty zero no \
        anymore longer lately weeks keeps every always repeatedly dried dark blocked quota \
        throttled stuck alert alerts routines sources source feed feeds connector repository \
        repositories database arxiv biorxiv medrxiv pubmed crossref openalex",
    input_schema: watchdog_input,
    #[cfg(test)]
    output_schema: watchdog_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/watchdog", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_watchdog_findings,
};

/// The tool's view names (contract 1.0 "Read": resmon's own vocabulary)
/// and the analytics route each is served by.
const VIEWS: [(&str, &str); 6] = [
    ("overview", "overview"),
    ("volume", "publication-volume"),
    ("sources", "source-contribution"),
    ("keywords", "keyword-contribution"),
    ("routine-health", "routine-health"),
    ("discovery-lag", "discovery-lag"),
];

fn analytics_input() -> Value {
    let names: Vec<&str> = VIEWS.iter().map(|(view, _)| *view).collect();
    object(
        json!({
            "view": {"type": "string", "enum": names},
            "window": {"type": "string", "description": "Passed to resmon as given."},
        }),
        &["view"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn analytics_output() -> Value {
    object(
        json!({
            "view": {"type": "string"},
            "data": {"type": "object", "description": "resmon's summary, with sample_size and sufficient."},
            "window_note": nullable("When a window was given: what this server did with it; else null."),
        }),
        &["view", "data", "window_note"],
    )
}

fn watchdog_input() -> Value {
    object(json!({"include_muted": {"type": "boolean"}}), &[])
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn watchdog_output() -> Value {
    // Loose on purpose: a field resmon adds or leaves null must not fail a
    // client's validation of the whole answer.
    let finding = object(
        json!({
            "key": {"type": "string"},
            "severity": {"type": "string", "description": "broken, unusual, advice, withdrawn, or one not known yet."},
            "kind": {"type": "string"},
            "scope": {"description": "The source or routine concerned."},
            "title": {"description": "One-line summary."},
            "detail": {"description": "What the watchdog saw."},
            "what_to_do": {"description": "resmon's advice; relay it."},
            "evidence": {"description": "The numbers behind the finding."},
            "muted": {"type": "boolean"},
        }),
        &[],
    );
    let mut schema = passed_through(object(
        json!({
            "checked_at": nullable("When the watchdog ran."),
            "findings": {"type": "array", "items": finding},
            "counts": {"type": "object", "description": "resmon's own counts, muted rows included in `muted`."},
            "not_enough_data": {"type": "array", "items": {"type": "object"}, "description": "What the watchdog cannot judge yet, and why."},
            "thresholds": {"type": "object"},
            "muted_hidden": {"type": "integer", "description": "Muted findings left out of `findings`."},
        }),
        &["findings", "muted_hidden"],
    ));
    // These two this server computes, so their types hold whatever resmon sent.
    schema["properties"]["findings"]["type"] = json!("array");
    schema["properties"]["muted_hidden"]["type"] = json!("integer");
    schema
}

/// `window` is sent when given. The analytics routes of the releases read
/// declare no window (backend-facts 11), so
/// `data` may well cover everything; the note says only what this server did
/// with the window, because a claim about what resmon supports would turn
/// false with a release that adds it (contract 1.0 "Error model": never claim
/// more than the backend reported).
fn get_analytics(backend: &mut Backend, args: &Args) -> ToolResult {
    let view = args.required_str("view")?;
    let Some((_, route)) = VIEWS.iter().find(|(name, _)| *name == view) else {
        return Err(ToolError::invalid_argument("view", format!("Unknown view `{view}`.")));
    };
    let window = args.str("window");
    let query: Vec<(&str, String)> = window.map(|w| ("window", w.to_string())).into_iter().collect();
    let data = backend.get_object(&format!("/api/analytics/{route}"), &query)?;
    let window_note = window.map(|window| {
        format!(
            "This server passed window `{window}` unchanged to GET /api/analytics/{route} and did not \
             filter `data` itself; `data` is resmon's answer as it came."
        )
    });
    Ok(json!({"view": view, "data": data, "window_note": window_note}))
}

/// resmon always returns muted findings, flagged (backend-facts 5),
/// so hiding them is this tool's job. Everything else passes through as
/// resmon sent it (contract-notes 10), unknown severities included.
fn get_watchdog_findings(backend: &mut Backend, args: &Args) -> ToolResult {
    let include_muted = args.bool("include_muted").unwrap_or(false);
    let query: Vec<(&str, String)> =
        if include_muted { vec![("include_muted", "true".to_string())] } else { Vec::new() };
    let reply = backend.send(Method::Get, "/api/watchdog", &query, None)?;
    backend::success(&reply)?;
    let body = reply.json_object()?;
    hide_muted(body, include_muted, &reply.route)
}

fn hide_muted(mut body: Value, include_muted: bool, route: &str) -> ToolResult {
    let Some(findings) = body.get_mut("findings").and_then(Value::as_array_mut) else {
        return Err(backend::unexpected_shape(route, "an object with `findings`"));
    };
    let before = findings.len();
    if !include_muted {
        findings.retain(|finding| finding.get("muted") != Some(&Value::Bool(true)));
    }
    let hidden = before - findings.len();
    body["muted_hidden"] = json!(hidden);
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn muted_rows_are_hidden_and_counted_but_nothing_else_moves() {
        let body = json!({"findings": [
            {"key": "a", "severity": "broken", "muted": true},
            {"key": "b", "severity": "mystery", "muted": false},
            {"key": "c", "severity": "advice"}],
            "counts": {"broken": 0, "muted": 1}, "not_enough_data": [{"reason": "r"}]});
        let hidden = hide_muted(body.clone(), false, "r").unwrap();
        let keys: Vec<&str> =
            hidden["findings"].as_array().unwrap().iter().map(|f| f["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["b", "c"]);
        assert_eq!(hidden["muted_hidden"], 1);
        assert_eq!(hidden["counts"], body["counts"]);
        assert_eq!(hidden["not_enough_data"], body["not_enough_data"]);
        let all = hide_muted(body, true, "r").unwrap();
        assert_eq!(all["findings"].as_array().unwrap().len(), 3);
        assert_eq!(all["muted_hidden"], 0);
        assert!(hide_muted(json!({}), false, "r").is_err());
    }

    #[test]
    fn every_view_has_a_route() {
        let schema = analytics_input();
        assert_eq!(schema["properties"]["view"]["enum"].as_array().unwrap().len(), VIEWS.len());
        assert!(VIEWS.iter().any(|(view, route)| *view == "keywords" && *route == "keyword-contribution"));
    }
}
