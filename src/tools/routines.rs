//! `list_routines` and `get_routine`: saved searches, their missed fires, the
//! coverage audit and where their reports go (as counts only).

use serde_json::{Map, Value, json};

use super::rows::{self, FLAGS, flag, flag_value, parse_json_text, require_routine};
use super::{Probe, Tool, nullable, object};
use crate::args::Args;
use crate::backend::{self, Backend};
use crate::error::{ToolError, ToolResult};

mod scrub;

pub(super) use scrub::scrub_destinations;

/// Routines are few, but an answer is never unbounded (contract 1.0 "Safety":
/// token efficiency); past this the list says it was cut.
const MAX_ROUTINES: usize = 200;

/// The channels contract 1.0 "A routine's delivery and coverage" names; each
/// is always counted, so zero destinations reads as zero rather than absent.
const CHANNELS: [&str; 4] = ["email", "folder", "webhook", "feed"];

pub(crate) const LIST_ROUTINES: Tool = Tool {
    name: "list_routines",
    title: "List routines",
    description: "Saved scheduled searches: schedule, sources, keywords, is_active, last run, \
        missed_fires (fires due while resmon was closed).",
    always_load: false,
    search_hint: "alert alerts saved searches subscriptions feeds scheduled recurring monitoring \
        monitored topics keywords queries active inactive enabled missed overview",
    input_schema: list_input,
    #[cfg(test)]
    output_schema: list_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/routines", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: list_routines,
};

pub(crate) const GET_ROUTINE: Tool = Tool {
    name: "get_routine",
    title: "Get a routine",
    description: "One routine whole, with missed fires, an audit of results against its intent \
        (counts are totals) and delivery: destinations per channel, last delivery's state.",
    always_load: false,
    search_hint: "alert details of one schedule when next where cron delivery deliver delivered \
        send sends email emails webhook folder feed digest notification destinations channel \
        missed fires skipped laptop computer closed asleep off audit intent \
        configuration config",
    input_schema: get_input,
    #[cfg(test)]
    output_schema: get_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/routines/0", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_routine,
};

fn list_input() -> Value {
    object(json!({"active_only": {"type": "boolean"}}), &[])
}

fn get_input() -> Value {
    object(json!({"routine_id": {"type": "integer"}}), &["routine_id"])
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn list_output() -> Value {
    let row = object(
        json!({
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "schedule": nullable("Cron expression."),
            "sources": nullable("Source slugs; null when resmon's stored parameters could not be read."),
            "keywords": nullable("The terms; null when resmon's stored parameters could not be read."),
            "entity": nullable("{profile_id, mode} for a routine that watches a profile, else null."),
            "last_run_at": nullable("When it last ran, or null."),
            "last_status": nullable("Status of its newest run, or null."),
        }),
        &["id", "name", "schedule", "sources", "keywords", "is_active", "last_run_at", "missed_fires"],
    );
    let mut row = row;
    if let Some(properties) = row["properties"].as_object_mut() {
        properties.extend(rows::routine_state_properties());
    }
    object(
        json!({
            "routines": {"type": "array", "items": row},
            "count": {"type": "integer", "description": "Routines that matched, before any cut."},
            "truncated": {"type": "boolean", "description": format!("True when only the first {MAX_ROUTINES} are listed.")},
        }),
        &["routines", "count", "truncated"],
    )
}

fn coverage_schema() -> Value {
    let mut schema = nullable(
        "The audit of results against the routine's intent, or null when resmon could not \
         give it (coverage_unavailable says why).",
    );
    schema["properties"] = json!({
        "intent_source": nullable("stated (the routine's intent) or keywords: which one the audit compared against."),
        "off_target_count": nullable("Total results far from the intent (not a page length)."),
        "missed_in_corpus_count": nullable("Total corpus papers near the intent the routine did not return."),
        "missed_in_corpus_count_is_lower_bound": nullable("True: missed_in_corpus_count is a floor (\"at least\")."),
    });
    schema
}

/// The four channels contract 1.0 names are always there; any other channel
/// resmon reports comes under resmon's own name, so the map is open (and
/// says so, for clients that close objects that do not).
fn targets_schema() -> Value {
    let count = json!({"type": "integer", "minimum": 0});
    let mut properties = Map::new();
    for channel in CHANNELS {
        properties.insert(channel.into(), count.clone());
    }
    json!({
        "type": "object",
        "description": "Enabled destinations per channel: email, folder, webhook and feed always, \
            and any other channel resmon reports, under its name.",
        "properties": properties,
        "required": CHANNELS,
        "additionalProperties": {"type": "integer", "minimum": 0, "description": "Another channel's count."},
    })
}

fn delivery_schema() -> Value {
    object(
        json!({
            "targets_by_channel": targets_schema(),
            "enabled_target_count": {"type": "integer", "description": "The sum of targets_by_channel."},
            "awaiting_review": {"type": "integer", "description": "Deliveries held until the person releases them in the app."},
            "last_state": nullable("queued, awaiting_review, delivering, delivered, failed or skipped; null if never delivered."),
            "last_channel": nullable("Channel of the last delivery."),
            "last_attempts": nullable("Attempts the last delivery took."),
            "last_error": nullable("Why the last delivery failed, with any address, path or URL removed."),
            "last_delivered_at_utc": nullable("When the last delivery arrived."),
        }),
        &[
            "targets_by_channel",
            "enabled_target_count",
            "awaiting_review",
            "last_state",
            "last_channel",
            "last_attempts",
            "last_error",
            "last_delivered_at_utc",
        ],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn get_output() -> Value {
    rows::routine_record_schema(
        json!({
            "coverage": coverage_schema(),
            "coverage_unavailable": nullable("Why coverage is null; null when it is present."),
            // Optional on purpose: contract 1.0 "A routine's delivery and coverage"
            // leaves the key off when resmon cannot answer the deliveries route,
            // which overrides contract-notes 7's always-present rule here.
            "delivery": delivery_schema(),
            "delivery_unavailable": nullable("Why delivery is left off (resmon could not give it); null when present."),
        }),
        &["coverage", "coverage_unavailable", "delivery_unavailable"],
    )
}

fn list_routines(backend: &mut Backend, args: &Args) -> ToolResult {
    let active_only = args.bool("active_only").unwrap_or(false);
    let rows = backend.request_json(backend::Method::Get, "/api/routines", &[], None)?;
    let Value::Array(rows) = rows else {
        return Err(backend::unexpected_shape("GET /api/routines", "an array"));
    };
    // A row without an id and a name is not a routine: listing it would show
    // the caller a routine that does not exist.
    for row in &rows {
        require_routine("GET /api/routines", row)?;
    }
    // The route has no filter of its own (backend-facts 5), so it is applied here.
    let matching: Vec<&Value> =
        rows.iter().filter(|row| !active_only || flag(row.get("is_active")) == Some(true)).collect();
    let listed: Vec<Value> = matching.iter().take(MAX_ROUTINES).map(|row| list_row(row)).collect();
    Ok(json!({
        "routines": listed,
        "count": matching.len(),
        "truncated": matching.len() > MAX_ROUTINES,
    }))
}

fn list_row(row: &Value) -> Value {
    let parameters = parse_json_text(row.get("parameters"));
    let field = |name: &str| row.get(name).cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    out.insert("id".into(), field("id"));
    out.insert("name".into(), field("name"));
    out.insert("schedule".into(), field("schedule_cron"));
    // Unreadable parameters are "unknown", never an empty list of sources.
    let readable = parameters.is_object();
    out.insert("sources".into(), if readable { sources_of(&parameters) } else { Value::Null });
    out.insert("keywords".into(), if readable { keywords_of(&parameters) } else { Value::Null });
    out.insert("entity".into(), parameters.get("entity").cloned().unwrap_or(Value::Null));
    for name in FLAGS {
        out.insert(name.into(), flag_value(row.get(name)));
    }
    out.insert("last_run_at".into(), field("last_executed_at"));
    out.insert("last_status".into(), field("last_status"));
    out.insert("missed_fires".into(), field("missed_fires"));
    // The same rule as every routine record (rows.rs): no credential-shaped
    // key's value, at any depth, whatever resmon put in `entity`.
    let mut row = Value::Object(out);
    crate::settings_policy::withhold_credentials(&mut row);
    row
}

fn get_routine(backend: &mut Backend, args: &Args) -> ToolResult {
    let id = args.required_int("routine_id")?;
    let routine = backend.get_object(&format!("/api/routines/{id}"), &[])?;
    let mut answer = rows::routine_record(&format!("GET /api/routines/{id}"), &routine)?;
    let coverage = backend.get_object(&format!("/api/routines/{id}/coverage"), &[]);
    let deliveries = backend.get_object(&format!("/api/routines/{id}/deliveries"), &[]);
    // A failed audit does not hide the routine the person asked about: the
    // record was read, so it is returned with coverage null and the reason
    // beside it (backend-facts 13; contract-notes 15).
    match coverage {
        Ok(body) => {
            answer.insert("coverage".into(), coverage_projection(&body));
            answer.insert("coverage_unavailable".into(), Value::Null);
        }
        Err(error) => {
            answer.insert("coverage".into(), Value::Null);
            answer.insert("coverage_unavailable".into(), json!(unavailable_sentence(&error)));
        }
    }
    // The routine route decides the call; the deliveries route is secondary,
    // so its failure leaves `delivery` off and says why (contract-notes 15).
    let delivery = match deliveries {
        Ok(body) => delivery_summary(&body),
        Err(error) => Err(format!(
            "resmon did not give the delivery summary ({}): {}",
            error.code.as_str(),
            error.message
        )),
    };
    match delivery {
        Ok(delivery) => {
            answer.insert("delivery".into(), delivery);
            answer.insert("delivery_unavailable".into(), Value::Null);
        }
        Err(why) => {
            answer.insert("delivery_unavailable".into(), json!(why));
        }
    }
    Ok(Value::Object(answer))
}

/// contract 1.0 "A routine's delivery and coverage": totals under their own
/// names; the capped audit lists never leave.
fn coverage_projection(body: &Value) -> Value {
    let field = |name: &str| body.get(name).cloned().unwrap_or(Value::Null);
    json!({
        "summary": field("summary"),
        "intent": field("intent"),
        "intent_source": field("intent_source"),
        "model": field("model"),
        "results": field("results"),
        "results_embedded": field("results_embedded"),
        "off_target_count": field("off_target_total"),
        "missed_in_corpus_count": field("missed_in_corpus_total"),
        "missed_in_corpus_count_is_lower_bound": field("missed_in_corpus_total_is_lower_bound"),
        "reason": field("reason"),
        "cannot_see": field("cannot_see"),
    })
}

fn unavailable_sentence(error: &ToolError) -> String {
    format!("resmon did not give the coverage audit ({}): {}", error.code.as_str(), error.message)
}

/// Built from the route's `summary` only: the rows carry each destination's
/// address, folder or URL (backend-facts 8) and never leave.
/// An error sentence when the answer has no usable summary, which leaves the
/// key off (contract-notes 15): a shape this server cannot read is said, not
/// shown as zeros or guessed at.
fn delivery_summary(body: &Value) -> Result<Value, String> {
    let no_counts =
        || "resmon's deliveries answer carried no summary of counts, so none is shown".to_string();
    let summary = body.get("summary").and_then(Value::as_object).ok_or_else(no_counts)?;
    // Without resmon's own counts there is no summary: inventing zeros would
    // report "no destinations" for a routine that may well have some.
    let reported = summary.get("targets").and_then(Value::as_object).ok_or_else(no_counts)?;
    let awaiting = summary.get("awaiting_review").and_then(Value::as_i64).ok_or_else(no_counts)?;
    let targets = channel_counts(reported)?;
    // contract 1.0 "A routine's delivery and coverage": the total is the sum
    // of the counts shown, so it is computed from them. When resmon states a
    // total of its own that differs, one of its two figures is wrong and
    // neither can be shown as the truth.
    let sum: u64 = targets.values().filter_map(Value::as_u64).sum();
    if let Some(stated) = summary.get("enabled_target_count")
        && stated.as_u64() != Some(sum)
    {
        return Err(format!(
            "resmon's deliveries summary does not add up (its channels count {sum} enabled destinations, \
             its total says {stated}), so none is shown"
        ));
    }
    let last = summary.get("last").filter(|last| last.is_object());
    let last_field = |name: &str| last.and_then(|last| last.get(name)).cloned().unwrap_or(Value::Null);
    let error = match last_field("last_error") {
        Value::String(text) => json!(scrub_destinations(&text)),
        _ => Value::Null,
    };
    Ok(json!({
        "targets_by_channel": targets,
        "enabled_target_count": sum,
        "awaiting_review": awaiting,
        "last_state": last_field("state"),
        "last_channel": last_field("channel"),
        "last_attempts": last_field("attempts"),
        "last_error": error,
        "last_delivered_at_utc": last_field("delivered_at_utc"),
    }))
}

/// Every channel resmon counted, under its own name, with the contract's four
/// first and zero where resmon lists none (no enabled destination there).
/// A count that is not a whole number of destinations is refused by name:
/// shown as zero it would hide destinations, and left out the sum would lie.
fn channel_counts(reported: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let mut targets = Map::new();
    for channel in CHANNELS {
        targets.insert(channel.into(), json!(0));
    }
    for (channel, count) in reported {
        // A channel is a name resmon gives its adapters; one shaped like an
        // address, path or URL is not shown, even as a key.
        if scrub_destinations(channel) != *channel {
            return Err("resmon's deliveries summary names a channel that looks like a destination, \
                so no summary is shown"
                .to_string());
        }
        let Some(count) = count.as_u64() else {
            let shown: String = count.to_string().chars().take(40).collect();
            return Err(format!(
                "resmon's deliveries summary gave {} as the {channel} count, which is not a number of \
                 destinations, so no summary is shown",
                scrub_destinations(&shown)
            ));
        };
        targets.insert(channel.clone(), json!(count));
    }
    Ok(targets)
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// The selected source slugs (`repositories` in resmon's parameters).
fn sources_of(parameters: &Value) -> Value {
    json!(string_list(parameters.get("repositories")))
}

/// The editor's keyword list when there is one, else the query as typed
/// (backend-facts 13); a watch routine with an empty query has none.
fn keywords_of(parameters: &Value) -> Value {
    let keywords = string_list(parameters.get("keywords"));
    if !keywords.is_empty() {
        return json!(keywords);
    }
    match parameters.get("query").and_then(Value::as_str).map(str::trim) {
        Some(query) if !query.is_empty() => json!([query]),
        _ => json!([]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list row shows the routine's entity, and never a credential value
    /// resmon might keep beside it.
    #[test]
    fn a_list_row_withholds_credential_values_in_the_entity() {
        let parameters =
            r#"{"keywords": ["k"], "entity": {"profile_id": 3, "mode": "new_papers", "api_key": "SECRET"}}"#;
        let row = list_row(&json!({"id": 1, "name": "r", "parameters": parameters}));
        assert_eq!(row["entity"]["profile_id"], 3, "{row}");
        assert_eq!(row["entity"]["api_key"], json!({"withheld": true}), "{row}");
        assert!(!row.to_string().contains("SECRET"), "{row}");
    }

    #[test]
    fn destinations_are_scrubbed_from_prose() {
        let text = "SMTPRecipientsRefused: {'reader@example.org': (550, b'no')} writing \
                    /home/reader/reports/weekly.md; POST https://hooks.example.net/T0/B0/SECRET failed \
                    (host='hooks.example.net', port=443) via 10.0.0.5:8080 and C:\\Users\\r\\feed.xml.";
        let scrubbed = scrub_destinations(text);
        for leak in
            ["reader@", "example.org", "/home/reader", "hooks.example.net", "SECRET", "10.0.0.5", "Users"]
        {
            assert!(!scrubbed.contains(leak), "{leak} survived: {scrubbed}");
        }
        assert!(scrubbed.starts_with("SMTPRecipientsRefused: {'<address>': (550"), "{scrubbed}");
    }

    #[test]
    fn ordinary_prose_survives_scrubbing() {
        for text in [
            "SMTPRecipientsRefused: <address>",
            "HTTP 503 from the webhook",
            "requests.exceptions.ConnectTimeout after 3 attempts.",
            "Could not write to <target>: permission denied",
        ] {
            assert_eq!(scrub_destinations(text), text);
        }
    }

    #[test]
    fn keywords_fall_back_to_the_query() {
        assert_eq!(keywords_of(&json!({"keywords": ["a", "b"], "query": "a b"})), json!(["a", "b"]));
        assert_eq!(
            keywords_of(&json!({"keywords": [], "query": "graph attention"})),
            json!(["graph attention"])
        );
        assert_eq!(keywords_of(&json!({"query": ""})), json!([]));
        assert_eq!(sources_of(&json!({})), json!([]));
    }

    #[test]
    fn every_channel_is_counted_and_rows_never_leave() {
        let body = json!({
            "deliveries": [{"target_snapshot": "reader@example.org"}],
            "summary": {"targets": {"email": 2}, "enabled_target_count": 2, "awaiting_review": 1, "last": null}
        });
        let delivery = delivery_summary(&body).unwrap();
        assert_eq!(delivery["targets_by_channel"], json!({"email": 2, "folder": 0, "webhook": 0, "feed": 0}));
        assert_eq!(delivery["last_state"], Value::Null);
        assert!(!delivery.to_string().contains("example.org"));
        assert!(delivery_summary(&json!({"deliveries": []})).is_err());
    }

    fn summary_of(targets: Value, total: Option<i64>) -> Result<Value, String> {
        let mut summary = json!({"targets": targets, "awaiting_review": 0, "last": null});
        if let Some(total) = total {
            summary["enabled_target_count"] = json!(total);
        }
        delivery_summary(&json!({"deliveries": [], "summary": summary}))
    }

    #[test]
    fn a_channel_the_contract_does_not_name_is_shown_and_counted() {
        let delivery = summary_of(json!({"email": 1, "pigeon": 2}), Some(3)).unwrap();
        assert_eq!(
            delivery["targets_by_channel"],
            json!({"email": 1, "folder": 0, "webhook": 0, "feed": 0, "pigeon": 2})
        );
        assert_eq!(delivery["enabled_target_count"], 3);
        // The total is the sum of what is shown, whether or not resmon gave one.
        assert_eq!(summary_of(json!({"feed": 2, "sms": 1}), None).unwrap()["enabled_target_count"], 3);
    }

    #[test]
    fn a_summary_that_cannot_be_shown_honestly_is_refused_with_the_reason() {
        for (targets, total, expected) in [
            (json!({"email": "two"}), Some(2), "gave \"two\" as the email count"),
            (json!({"email": -1}), None, "gave -1 as the email count"),
            (json!({"pigeon": 1.5}), None, "gave 1.5 as the pigeon count"),
            (json!({"webhook": null}), None, "gave null as the webhook count"),
            (json!({"email": 1, "pigeon": 2}), Some(1), "do"),
            (json!({"a@example.org": 1}), None, "looks like a destination"),
        ] {
            let why = summary_of(targets.clone(), total).unwrap_err();
            assert!(why.contains(expected), "{targets}: {why}");
            assert!(why.ends_with("so none is shown") || why.ends_with("so no summary is shown"), "{why}");
            assert!(!why.contains("example.org"), "{why}");
        }
        let why = summary_of(json!({"email": 1, "pigeon": 2}), Some(1)).unwrap_err();
        assert!(why.contains("count 3 enabled destinations, its total says 1"), "{why}");
    }

    #[test]
    fn host_names_are_scrubbed_whatever_their_case() {
        let text = "ConnectionError: HTTPSConnectionPool(host='Hooks.Example.COM', port=443) via \
                    Hooks.Example.COM:443; SMTP to MAIL.CORP.LOCAL refused, relay smtp.Example.Org and \
                    hooks.example.COM down; MAILTO:Reader@Example.ORG";
        let scrubbed = scrub_destinations(text);
        for leak in ["Hooks", "Example", "MAIL.CORP", "CORP", "LOCAL", "smtp.", "hooks.", "Reader"] {
            assert!(!scrubbed.contains(leak), "{leak} survived: {scrubbed}");
        }
        assert!(
            scrubbed.starts_with("ConnectionError: HTTPSConnectionPool(host='<target>', port=443)"),
            "{scrubbed}"
        );
    }

    #[test]
    fn qualified_class_names_keep_their_capitals_and_survive() {
        for name in [
            "requests.exceptions.ConnectTimeout",
            "smtplib.SMTPRecipientsRefused",
            "ssl.SSLError",
            "urllib3.exceptions.NewConnectionError",
        ] {
            assert_eq!(scrub_destinations(name), name);
        }
        // A lowercase module before a host-like last label is not a class.
        assert_eq!(scrub_destinations("mail.corp.LOCAL"), "<target>");
        assert_eq!(scrub_destinations("Mail.Corp.Local"), "<target>");
    }

    #[test]
    fn addresses_without_a_dotted_domain_are_scrubbed() {
        assert_eq!(
            scrub_destinations("refused reader@localhost and root@mailhost; Reader@LOCALHOST."),
            "refused <address> and <address>; <address>."
        );
        assert_eq!(
            scrub_destinations("SMTPRecipientsRefused: {'root@mailhost': (550"),
            "SMTPRecipientsRefused: {'<address>': (550"
        );
        // Half an address is still part of one; a lone `@` is prose.
        assert_eq!(scrub_destinations("to reader@[::1] @ 3 tries"), "to <address>[<target>] @ 3 tries");
    }

    #[test]
    fn ipv6_literals_are_scrubbed() {
        for (text, expected) in [
            ("host 2001:db8::1 down", "host <target> down"),
            ("via [fe80::1%eth0]:443", "via [<target>]:443"),
            ("connect [::1]:443 refused", "connect [<target>]:443 refused"),
            ("to 2001:DB8:0:0:0:0:0:1.", "to <target>."),
            ("mapped ::ffff:10.0.0.5 and 2001:db8::", "mapped <target> and <target>"),
            ("reach fe80::1: unreachable", "reach <target>: unreachable"),
        ] {
            assert_eq!(scrub_destinations(text), expected, "{text}");
        }
        // Clock times and durations are not addresses.
        for text in ["retried at 10:30:00 and 23:59", "took 0:00:03.5"] {
            assert_eq!(scrub_destinations(text), text);
        }
    }

    #[test]
    fn hosts_behind_a_key_are_scrubbed_and_the_key_stays() {
        for (text, expected) in [
            ("connect failed host=hooks.example.net:443", "connect failed host=<target>"),
            ("(to=Hooks.Example.NET)", "(to=<target>)"),
            ("host=2001:db8::1 port=443", "host=<target> port=443"),
            ("smtp_host=mailhost attempts=3", "smtp_host=<target> attempts=3"),
            ("relay=MAIL.CORP.LOCAL, code=550", "relay=<target>, code=550"),
            (
                "HTTPConnectionPool(host='mailhost', port=8080)",
                "HTTPConnectionPool(host='<target>', port=8080)",
            ),
            ("note=hooks.example.net", "note=<target>"),
            ("cause=smtplib.SMTPServerDisconnected", "cause=smtplib.SMTPServerDisconnected"),
        ] {
            assert_eq!(scrub_destinations(text), expected, "{text}");
        }
    }

    #[test]
    fn punctuation_after_a_replaced_host_stays() {
        assert_eq!(
            scrub_destinations("lookup hooks.example.net: no such host"),
            "lookup <target>: no such host"
        );
        assert_eq!(scrub_destinations("sent to reader@localhost: 550"), "sent to <address>: 550");
        assert_eq!(scrub_destinations("gave up on Hooks.Example.COM."), "gave up on <target>.");
        assert_eq!(
            scrub_destinations("smtplib.SMTPServerDisconnected: lost MAIL.CORP.LOCAL!"),
            "smtplib.SMTPServerDisconnected: lost <target>!"
        );
    }
}
