//! The writes that create or switch records: `create_routine`,
//! `create_watch_profile`, `activate_routine`, `deactivate_routine`
//! (contract 1.0 "Tools › Write", "Watch profiles and the basis of a match",
//! "A routine's delivery and coverage").

use serde_json::{Map, Value, json};

use super::accepted::{self, Act, Sent};
use super::{Probe, Tool, nullable, object};
use super::{profiles, routines, rows};

mod read_back;
mod warnings;

use self::read_back::{kept_otherwise, not_kept};
use self::warnings::{keeping_warning, warning_of};
use crate::args::Args;
use crate::backend::{self, Backend, Method};
use crate::error::{ToolError, ToolResult};

/// The notification and AI switches a caller may set at creation.
const ROUTINE_SWITCHES: [&str; 3] = ["email_enabled", "email_ai_summary_enabled", "notify_on_complete"];

/// What `cited` says when the caller gives no source for the ORCID.
const UNCITED_ORCID: &str = "Given in a conversation through resmon's MCP tools; no source was cited.";

pub(crate) const CREATE_ROUTINE: Tool = Tool {
    name: "create_routine",
    title: "Create a routine",
    description: "Saves a recurring search (with entity: a watch on a person), inactive until \
        activate_routine. Repeat any entity_warning.",
    always_load: false,
    search_hint: "new alert alerts set up setup schedule scheduled weekly daily monthly every day \
        week month recurring repeating regular automatic subscribe subscription saved \
        search keyword keywords topic topics notify me monitor papers make",
    input_schema: create_routine_input,
    #[cfg(test)]
    output_schema: create_routine_output,
    backend_names: &[
        ("schedule", &["schedule_cron"]),
        ("keywords", &["parameters.keywords"]),
        ("sources", &["parameters.repositories"]),
        ("entity", &["parameters.entity"]),
    ],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Post, "/api/routines"),
    requires_confirmation: true,
    // Adds one routine; changes nothing that exists.
    destructive: false,
    // A second call creates a second routine.
    idempotent: false,
    // Creating queries nothing; only a later run reaches the sources.
    open_world: false,
    handler: create_routine,
};

pub(crate) const CREATE_WATCH_PROFILE: Tool = Tool {
    name: "create_watch_profile",
    title: "Create a watch profile",
    description: "Saves a person to watch. Without an ORCID no match rests on an identifier: repeat \
        basis_warning. Its id is create_routine's entity.profile_id.",
    always_load: false,
    search_hint: "follow track tracking start watch add new author researcher person someone \
        scientist colleague professor lab group institution orcid",
    input_schema: create_watch_profile_input,
    #[cfg(test)]
    output_schema: create_watch_profile_output,
    backend_names: &[
        ("name", &["display_name", "names"]),
        ("aliases", &["names"]),
        ("orcid", &["identifiers.orcid.value"]),
        ("orcid_cited", &["identifiers.orcid.cited"]),
    ],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Post, "/api/profiles"),
    requires_confirmation: true,
    destructive: false,
    idempotent: false,
    open_world: false,
    handler: create_watch_profile,
};

pub(crate) const ACTIVATE_ROUTINE: Tool = Tool {
    name: "activate_routine",
    title: "Activate a routine",
    description: "Puts a routine on this machine's schedule: from now on it runs by itself. Safe to \
        repeat.",
    always_load: false,
    search_hint: "alert alerts turn on enable enabled resume restart start paused schedule \
        scheduling scheduled automatic automatically unpause reactivate re-enable switch \
        live again back",
    input_schema: routine_id_input,
    #[cfg(test)]
    output_schema: switch_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Post, "/api/routines/0/activate"),
    requires_confirmation: true,
    // Flips one flag that deactivate_routine flips back; nothing is lost.
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: activate_routine,
};

pub(crate) const DEACTIVATE_ROUTINE: Tool = Tool {
    name: "deactivate_routine",
    title: "Deactivate a routine",
    description: "Takes a routine off the schedule, deleting nothing; run_routine still runs it on \
        request. Safe to repeat.",
    always_load: false,
    search_hint: "alert alerts turn off disable disabled pause stop stopping halt suspend \
        unschedule unscheduled switch mute silence cancel no longer anymore \
        automatically unsubscribe daily weekly",
    input_schema: routine_id_input,
    #[cfg(test)]
    output_schema: switch_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Write(Method::Post, "/api/routines/0/deactivate"),
    requires_confirmation: true,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: deactivate_routine,
};

fn create_routine_input() -> Value {
    object(
        json!({
            "name": {"type": "string"},
            "keywords": {"type": "array", "items": {"type": "string"}, "description": "May be [] with entity."},
            "sources": {"type": "array", "items": {"type": "string"}},
            "schedule": {"type": "string", "description": "Cron, e.g. 0 8 * * 1"},
            "intent": {"type": "string", "description": "What results should cover."},
            "entity": {
                "type": "object",
                "properties": {
                    "profile_id": {"type": "integer"},
                    "mode": {"type": "string", "enum": ["new_papers", "retractions"]},
                },
                "required": ["profile_id", "mode"],
            },
            "ai_enabled": {"type": "boolean"},
            "email_enabled": {"type": "boolean"},
            "email_ai_summary_enabled": {"type": "boolean"},
            "notify_on_complete": {"type": "boolean"},
        }),
        &["name", "keywords", "sources", "schedule"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn create_routine_output() -> Value {
    object(
        json!({
            "routine": rows::routine_record_schema(json!({}), &[]),
            "entity_warning": nullable("Why this watch routine can find nothing as configured, or null. Repeat it."),
            "not_kept": {"type": "array", "items": {"type": "string"}, "description": "Arguments resmon did not store (absent from the read-back); usually []."},
            "kept_otherwise": {
                "type": "array",
                "description": "Fields the read-back holds with another value than was sent (as an argument or this server's default); usually [].",
                "items": object(
                    json!({
                        "argument": nullable("The caller's argument; null when server_default."),
                        "field": {"type": "string", "description": "resmon's name for it."},
                        "sent": {},
                        "held": {"description": "null when the read-back lacks it."},
                        "server_default": {"type": "boolean", "description": "True when the caller gave no such argument and this server sent its default."},
                    }),
                    &["argument", "field", "sent", "held", "server_default"],
                ),
            },
            "detail": {"type": "string"},
        }),
        &["routine", "entity_warning", "not_kept", "kept_otherwise", "detail"],
    )
}

fn create_watch_profile_input() -> Value {
    object(
        json!({
            "name": {"type": "string"},
            "orcid": {"type": "string"},
            "orcid_cited": {"type": "string", "description": "Where the ORCID was seen."},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "affiliations": {"type": "array", "items": {"type": "string"}},
            "field_hints": {"type": "array", "items": {"type": "string"}},
        }),
        &["name"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn create_watch_profile_output() -> Value {
    object(
        json!({
            "basis_warning": nullable("How weak this profile's matches will be, or null when resmon gives none. Repeat it."),
            "detail": {"type": "string"},
            "profile": object(
                json!({
                    "id": {"type": "integer"},
                    "kind": nullable("person, institution or group; null when resmon did not say."),
                    "display_name": nullable("The name shown in the app."),
                    "basis_warning": nullable("The same warning, as stored."),
                }),
                &["id"],
            ),
        }),
        &["basis_warning", "detail", "profile"],
    )
}

fn routine_id_input() -> Value {
    object(json!({"routine_id": {"type": "integer", "minimum": 1}}), &["routine_id"])
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn switch_output() -> Value {
    object(json!({"id": {"type": "integer"}, "is_active": {"type": "boolean"}}), &["id", "is_active"])
}

/// Sends a create: a refusal is read into its code; an acceptance gives
/// the record as resmon answered it and the id it gave under `id`. An
/// answer without one is an error after acceptance (contract-notes 26).
fn send_create(
    backend: &mut Backend,
    act: Act,
    path: &str,
    body: &Value,
    warning_key: &str,
) -> Result<(accepted::Accepted, Map<String, Value>, i64), ToolError> {
    let mut accepted = match accepted::send(backend, act, Method::Post, path, Some(body), Some("id"))? {
        Sent::Refused(reply) => return Err(backend::status_error(&reply)),
        Sent::Accepted(accepted) => accepted,
    };
    let created = accepted.object()?;
    match accepted.id() {
        Some(id) => Ok((accepted, created, id)),
        None => Err(keeping_warning(accepted.without_id(&created, "an integer `id`"), &created, warning_key)),
    }
}

fn create_routine(backend: &mut Backend, args: &Args) -> ToolResult {
    let body = routine_body(args)?;
    let act = Act::Create {
        noun: "routine",
        tool: CREATE_ROUTINE.name,
        shows_one: routines::GET_ROUTINE.name,
        lists_all: routines::LIST_ROUTINES.name,
        reads_back: true,
    };
    let (accepted, created, id) = send_create(backend, act, "/api/routines", &body, "entity_warning")?;
    // The routine exists from here on: whatever goes wrong reading it back,
    // the answer opens with its creation (contract-notes 26), and keeps the
    // warning resmon gave with it, which no later answer repeats.
    let failed = |error: ToolError| keeping_warning(error, &created, "entity_warning");
    let reply = backend
        .request(Method::Get, &format!("/api/routines/{id}"), &[], None)
        .and_then(|reply| reply.json_object().map(|record| (reply, record)));
    let (reply, record) =
        reply.map_err(|error| failed(accepted.fail("reading it back failed", Some(error))))?;
    // A key given twice with two values is quoted, never settled by keeping
    // the last one (contract-notes 26): the routine exists, but this read-back
    // does not say what it holds.
    if let Some((clause, twice)) = accepted::given_twice(&reply) {
        return Err(failed(accepted.quoting(&format!("its read-back {clause}"), twice)));
    }
    let routine = rows::routine_record(&format!("GET /api/routines/{id}"), &record)
        .map(Value::Object)
        .map_err(|error| failed(accepted.fail("its read-back could not be used", Some(error))))?;
    // The read-back must be the routine just created: another id would put
    // another routine's settings in this answer.
    if routine["id"] != json!(id) {
        let problem = format!(
            "reading it back gave routine {} instead, so this server does not show it as the new one",
            routine["id"]
        );
        return Err(failed(accepted.fail(&problem, None).with_detail("read_back_id", routine["id"].clone())));
    }
    let (warning, said) = warning_of(&created, "entity_warning");
    let not_kept = not_kept(args, &body, &record, &routine);
    let (kept_otherwise, otherwise) = kept_otherwise(args, &body, &record, &routine, &not_kept);
    let mut detail = routine_detail(id, &routine, said.as_deref());
    if !not_kept.is_empty() {
        // An older resmon drops fields it does not know without a word; the
        // read-back is the only witness, so the answer says what it shows.
        detail.push_str(&format!(
            " resmon did not keep {} of what was sent ({}): the read-back lacks {}, so the routine \
             resmon holds is without {}.",
            if not_kept.len() == 1 { "one field" } else { "some fields" },
            not_kept.join(", "),
            if not_kept.len() == 1 { "it" } else { "them" },
            if not_kept.len() == 1 { "it" } else { "them" },
        ));
    }
    // A value resmon holds otherwise (another schedule, other sources) is
    // named with both values: the routine will run as resmon holds it.
    detail.push_str(&otherwise);
    // The warning sits both in `detail` (the sentence a caller repeats) and at
    // the top as a field, so a caller that branches need not parse prose.
    Ok(json!({
        "routine": routine,
        "entity_warning": warning,
        "not_kept": not_kept,
        "kept_otherwise": kept_otherwise,
        "detail": detail,
    }))
}

/// The route's own shape (backend-facts 7):
/// `schedule_cron`, `parameters` as an object, and `is_active: false` written
/// out because resmon's default is active (contract 1.0 "Write").
fn routine_body(args: &Args) -> Result<Value, ToolError> {
    let name = args.required_str("name")?;
    if name.trim().is_empty() {
        return Err(ToolError::invalid_argument("name", "`name` is blank."));
    }
    let schedule = args.required_str("schedule")?;
    if schedule.trim().is_empty() {
        return Err(ToolError::invalid_argument("schedule", "`schedule` is blank: give a cron expression."));
    }
    let mut body = Map::new();
    body.insert("name".into(), json!(name));
    body.insert("schedule_cron".into(), json!(schedule));
    body.insert("parameters".into(), routine_parameters(args)?);
    body.insert("is_active".into(), json!(false));
    body.insert("ai_enabled".into(), json!(args.bool("ai_enabled").unwrap_or(false)));
    for switch in ROUTINE_SWITCHES {
        if let Some(on) = args.bool(switch) {
            body.insert(switch.into(), json!(on));
        }
    }
    // Sent only when given, never derived from the keywords: a routine whose
    // intent is its own keywords would be audited against itself (contract 1.0
    // "A routine's delivery and coverage").
    if let Some(intent) = args.str("intent") {
        if intent.trim().is_empty() {
            return Err(ToolError::invalid_argument(
                "intent",
                "`intent` is blank: leave it out to create the routine without one.",
            ));
        }
        body.insert("intent".into(), json!(intent));
    }
    Ok(Value::Object(body))
}

/// `query` is what resmon searches with; `keywords` keeps the caller's list
/// as the app's own editor does, so list_routines shows the terms as given.
/// `entity` goes through unexamined: resmon's check is the one the app's
/// editor also answers to (contract 1.0 "Watch profiles and the basis of a match").
fn routine_parameters(args: &Args) -> Result<Value, ToolError> {
    let keywords: Vec<String> = args
        .get("keywords")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    let entity = args.get("entity");
    if keywords.is_empty() && entity.is_none() {
        return Err(ToolError::invalid_argument(
            "keywords",
            "`keywords` is empty: give at least one term, or an `entity` to watch a person instead.",
        ));
    }
    if keywords.iter().any(|keyword| keyword.trim().is_empty()) {
        return Err(ToolError::invalid_argument("keywords", "`keywords` has a blank entry."));
    }
    let sources = args.non_empty_strings("sources")?;
    let mut parameters = Map::new();
    parameters.insert("query".into(), json!(keywords.join(" ")));
    parameters.insert("repositories".into(), json!(sources));
    parameters.insert("keywords".into(), json!(keywords));
    if let Some(entity) = entity {
        parameters.insert("entity".into(), entity.clone());
    }
    Ok(Value::Object(parameters))
}

fn routine_detail(id: i64, routine: &Value, warning: Option<&str>) -> String {
    let state = if routine["is_active"] == json!(false) {
        format!(
            "Routine {id} was created inactive: it will not run until activate_routine puts it on the schedule."
        )
    } else if routine["is_active"].is_null() {
        format!(
            "Routine {id} was created, sent as inactive, but resmon's read-back does not say whether it is \
             active; check it with get_routine."
        )
    } else {
        format!(
            "Routine {id} was created, but resmon reports it ACTIVE although it was sent as inactive: it \
             will run at its schedule. deactivate_routine takes it off."
        )
    };
    match warning {
        Some(warning) => format!("{state} {warning}"),
        None => state,
    }
}

fn create_watch_profile(backend: &mut Backend, args: &Args) -> ToolResult {
    let body = profile_body(args)?;
    let act = Act::Create {
        noun: "watch profile",
        tool: CREATE_WATCH_PROFILE.name,
        shows_one: profiles::GET_WATCH_PROFILE.name,
        lists_all: profiles::LIST_WATCH_PROFILES.name,
        reads_back: false,
    };
    let (_, profile, id) = send_create(backend, act, "/api/profiles", &body, "basis_warning")?;
    // The row as resmon returned it, its JSON text decoded and any
    // credential-shaped value withheld. Nothing is added: the warning is
    // resmon's own or none, never one decided here from what was sent.
    let profile = Value::Object(rows::stored_profile(&Value::Object(profile)));
    let (warning, said) = warning_of(profile.as_object().unwrap_or(&Map::new()), "basis_warning");
    let detail = profile_detail(id, &profile, said.as_deref());
    // Placement is the point: the warning first, then again in the sentence a
    // caller is most likely to repeat (contract 1.0 "Watch profiles…").
    Ok(json!({"basis_warning": warning, "detail": detail, "profile": profile}))
}

/// The sentence about a created profile, from what resmon returned only:
/// its warning when it gave one; otherwise that it gave none, and which
/// identifiers its answer shows (an ORCID only when the answer carries one),
/// with no claim about how firm matches will be.
fn profile_detail(id: i64, profile: &Value, warning: Option<&str>) -> String {
    if let Some(warning) = warning {
        return format!("Watch profile {id} was created. {warning}");
    }
    let held = match profile.get("identifiers").and_then(Value::as_object) {
        None => "did not show the profile's identifiers".to_string(),
        Some(identifiers) if identifiers.is_empty() => "shows no identifier".to_string(),
        Some(identifiers) => {
            let schemes: Vec<String> = identifiers.keys().map(|scheme| format!("`{scheme}`")).collect();
            let orcid = if rows::orcid_of(profile).is_some() { "an ORCID" } else { "no ORCID" };
            format!("shows {orcid} among its identifiers ({})", schemes.join(", "))
        }
    };
    format!(
        "Watch profile {id} was created. resmon gave no basis warning, and its answer {held}; \
         get_profile_matches shows the basis of each match."
    )
}

/// Always a person: the tool's arguments describe one (backend-facts 7,
/// POST /api/profiles). The display name is also the first name to match.
fn profile_body(args: &Args) -> Result<Value, ToolError> {
    let name = args.required_str("name")?;
    if name.trim().is_empty() {
        return Err(ToolError::invalid_argument("name", "`name` is blank."));
    }
    let mut names = vec![json!({"value": name})];
    names.extend(strings(args, "aliases").into_iter().map(|alias| json!({"value": alias})));
    let identifiers = match (args.str("orcid"), args.str("orcid_cited")) {
        (Some(orcid), cited) => json!({"orcid": {"value": orcid, "cited": cited.unwrap_or(UNCITED_ORCID)}}),
        (None, Some(_)) => {
            return Err(ToolError::invalid_argument(
                "orcid_cited",
                "`orcid_cited` says where an ORCID was seen, so it needs `orcid` too.",
            ));
        }
        (None, None) => json!({}),
    };
    Ok(json!({
        "kind": "person",
        "display_name": name,
        "names": names,
        "identifiers": identifiers,
        "affiliations": strings(args, "affiliations"),
        "field_hints": strings(args, "field_hints"),
    }))
}

fn strings(args: &Args, name: &str) -> Vec<String> {
    args.get(name)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn activate_routine(backend: &mut Backend, args: &Args) -> ToolResult {
    switch_routine(backend, args, true)
}

fn deactivate_routine(backend: &mut Backend, args: &Args) -> ToolResult {
    switch_routine(backend, args, false)
}

/// Puts a routine on the schedule (`on`) or takes it off.
fn switch_routine(backend: &mut Backend, args: &Args, on: bool) -> ToolResult {
    let routine_id = args.required_int("routine_id")?;
    let action = if on { "activate" } else { "deactivate" };
    let path = format!("/api/routines/{routine_id}/{action}");
    let act = Act::Switch { routine_id, on };
    let mut accepted = match accepted::send(backend, act, Method::Post, &path, None, Some("id"))? {
        Sent::Refused(reply) => return Err(backend::status_error(&reply)),
        Sent::Accepted(accepted) => accepted,
    };
    let answer = accepted.object()?;
    let Some(id) = accepted.id() else {
        return Err(accepted.without_id(&answer, "an integer `id`"));
    };
    // The flag by the one rule for routine flags (contract-notes 20).
    let Some(is_active) = rows::flag(answer.get("is_active")) else {
        return Err(accepted.fail("its answer did not carry a boolean `is_active`", None));
    };
    // An answer about another routine, or with the flag the other way, says
    // something other than what was asked: it is quoted, never passed on as
    // the switch done.
    let quoted = || {
        let mut said = Map::new();
        said.insert("id".into(), json!(id));
        said.insert("is_active".into(), answer.get("is_active").cloned().unwrap_or(Value::Null));
        said
    };
    if id != routine_id {
        let problem = format!("its answer is about routine {id}, not routine {routine_id}");
        return Err(accepted.contradiction(&problem, quoted()));
    }
    if is_active != on {
        let problem = format!(
            "its answer gave `is_active: {is_active}` for routine {routine_id}, the opposite of what \
             {action} asks, so this server cannot tell whether the routine is on the schedule"
        );
        return Err(accepted.contradiction(&problem, quoted()));
    }
    Ok(json!({"id": id, "is_active": is_active}))
}
