//! Watch profiles and their matches. Every answer carries what a match's basis
//! means (contract 1.0 "Watch profiles and the basis of a match"), because a
//! name match presented as a person's paper is a claim resmon refuses to make.

use serde_json::{Value, json};

use super::papers::{self, Authors, IdField, PaperRow};
use super::rows::{decoded_profile, orcid_of, parse_json_text};
use super::{DEFAULT_PAGE, MAX_PAGE, Probe, Tool, limit_property, nullable, object, offset_property};
use crate::args::Args;
use crate::backend::{self, Backend};
use crate::error::{ToolError, ToolResult};

/// contract 1.0 "Tools › Read" gives list_watch_profiles no paging argument
/// (adding one would be contract 1.1), while "Safety" wants no answer
/// unbounded; so the list is cut here and says so with `truncated`.
const MAX_PROFILES: usize = 200;

pub(crate) const LIST_WATCH_PROFILES: Tool = Tool {
    name: "list_watch_profiles",
    title: "List watch profiles",
    description: "Watched people, institutions and groups. basis_warning, when resmon gives one, \
        says matches may rest on a name alone: repeat it when summarizing.",
    always_load: false,
    search_hint: "who which people person authors researchers scientists colleagues institutions \
        universities labs groups teams departments follow followed following tracked tracking \
        watched watching watchlist",
    input_schema: list_input,
    #[cfg(test)]
    output_schema: list_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/profiles", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: list_watch_profiles,
};

pub(crate) const GET_WATCH_PROFILE: Tool = Tool {
    name: "get_watch_profile",
    title: "Get a watch profile",
    description: "One watch profile whole, with its match total, the count per basis and what each \
        basis means.",
    always_load: false,
    search_hint: "one person author researcher details detail orcid identifier aliases alias names \
        spellings affiliation match counts how many matches total basis confidence \
        certain evidence name only",
    input_schema: get_input,
    #[cfg(test)]
    output_schema: get_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/profiles/0", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_watch_profile,
};

pub(crate) const GET_PROFILE_MATCHES: Tool = Tool {
    name: "get_profile_matches",
    title: "Papers matched to a profile",
    description: "A profile's matched papers, newest first, with basis, matched_author and evidence. \
        name_only: the name is on the paper, which may not be this person's.",
    always_load: false,
    search_hint: "papers publications articles works output by author authored researcher person \
        someone scientist colleague professor dr publish published publishing write \
        writes wrote written their his her latest recent recently lately new follow \
        followed",
    input_schema: matches_input,
    #[cfg(test)]
    output_schema: matches_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/profiles/0/matches", &[("limit", "1")]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_profile_matches,
};

fn list_input() -> Value {
    object(json!({"kind": {"type": "string", "enum": ["person", "institution", "group"]}}), &[])
}

fn get_input() -> Value {
    object(json!({"profile_id": {"type": "integer"}}), &["profile_id"])
}

fn matches_input() -> Value {
    object(
        json!({
            "profile_id": {"type": "integer"},
            "limit": limit_property(),
            "offset": offset_property(),
        }),
        &["profile_id"],
    )
}

fn basis_warning_schema() -> Value {
    nullable("Why matches may rest on the name alone; null when resmon gives no warning (an ORCID).")
}

/// The glossary's shape: one sentence per basis resmon records.
fn glossary_schema() -> Value {
    object(
        json!({
            "identifier": {"type": "string"},
            "name+affiliation": {"type": "string"},
            "name_only": {"type": "string"},
        }),
        &["identifier", "name+affiliation", "name_only"],
    )
}

fn by_basis_schema() -> Value {
    json!({"type": "object", "description": "Matches per basis, over all matches (bases with none are left out)."})
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn list_output() -> Value {
    let row = object(
        json!({
            "id": {"type": "integer"},
            "kind": nullable("person, institution or group; null when resmon did not say."),
            "name": {"type": "string"},
            "aliases": {"type": "array", "items": {"type": "string"}},
            "identifier_schemes": {"type": "array", "items": {"type": "string"}},
            "orcid": nullable("The ORCID, or null."),
            "affiliations": {"type": "array", "items": {"type": "string"}},
            "basis_warning": basis_warning_schema(),
        }),
        &["id", "kind", "name", "aliases", "identifier_schemes", "orcid", "affiliations", "basis_warning"],
    );
    object(
        json!({
            "profiles": {"type": "array", "items": row},
            "count": {"type": "integer"},
            "truncated": {"type": "boolean", "description": format!("True when only the first {MAX_PROFILES} are listed.")},
        }),
        &["profiles", "count", "truncated"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn get_output() -> Value {
    object(
        json!({
            "id": {"type": "integer"},
            "kind": nullable("person, institution or group; null when resmon did not say."),
            "display_name": nullable("The name shown in the app."),
            "names": nullable("Every name the profile matches on."),
            "identifiers": nullable("Per scheme (orcid, openalex, ror, semantic_scholar): value and citation."),
            "affiliations": nullable("Affiliations that back a name match."),
            "basis_warning": basis_warning_schema(),
            "match_total": nullable("Every match of the profile (not a page); null when totals_unavailable says why."),
            "by_basis": by_basis_or_null(),
            "totals_unavailable": nullable("Why match_total and by_basis are null; null when they are given."),
            "what_a_basis_means": glossary_schema(),
        }),
        &["id", "basis_warning", "match_total", "by_basis", "totals_unavailable", "what_a_basis_means"],
    )
}

/// by_basis, or null when the matches route could not give it.
fn by_basis_or_null() -> Value {
    let mut schema = nullable("Matches per basis, or null when totals_unavailable says why.");
    if let Some(properties) = by_basis_schema().get("properties") {
        schema["properties"] = properties.clone();
    }
    schema
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn matches_output() -> Value {
    // The shared paper row without an author list: resmon's match rows carry
    // only the author that matched (papers::Authors::IfGiven).
    let mut row = papers::paper_schema(Authors::IfGiven);
    for (name, property) in [
        ("basis", json!({"type": "string", "description": "identifier, name+affiliation or name_only."})),
        (
            "matched_author",
            nullable("The author string on the paper that matched; null when resmon did not say."),
        ),
        (
            "evidence",
            nullable("What backed the match (e.g. the ORCID or affiliation seen), or null for a name alone."),
        ),
        ("first_seen_at", nullable("When resmon first saw the paper.")),
    ] {
        papers::add_field(&mut row, name, property, true);
    }
    object(
        json!({
            "profile_id": {"type": "integer"},
            "matches": {"type": "array", "items": row},
            "total": {"type": "integer", "description": "All matches of the profile, not this page."},
            "by_basis": by_basis_schema(),
            "offset": {"type": "integer"},
            "limit": {"type": "integer"},
            "has_more": {"type": "boolean"},
            "what_a_basis_means": glossary_schema(),
        }),
        &["profile_id", "matches", "total", "by_basis", "offset", "limit", "has_more", "what_a_basis_means"],
    )
}

/// What each basis does and does not establish; sent with every answer that
/// can show a basis, empty ones included.
fn what_a_basis_means() -> Value {
    json!({
        "identifier": "The source listed this author with the profile's identifier (for example its ORCID). \
            This is the strongest basis: the paper is credited to that identifier.",
        "name+affiliation": "The author's name and an affiliation on the paper both matched the profile. \
            Likely the same person, but not proven: nothing but text was compared.",
        "name_only": "Only the author's name matched. The paper carries this name and nothing more is known; \
            it may belong to someone else with the same name, so never present it as this person's work.",
    })
}

fn list_watch_profiles(backend: &mut Backend, args: &Args) -> ToolResult {
    let query: Vec<(&str, String)> =
        args.str("kind").map(|kind| ("kind", kind.to_string())).into_iter().collect();
    let body = backend.get_object("/api/profiles", &query)?;
    let Some(profiles) = body.get("profiles").and_then(Value::as_array) else {
        return Err(backend::unexpected_shape("GET /api/profiles", "an object with a `profiles` list"));
    };
    for profile in profiles {
        backend::require_fields("GET /api/profiles", profile, &[("id", backend::Kind::Integer)])?;
    }
    let rows: Vec<Value> = profiles.iter().take(MAX_PROFILES).map(list_row).collect();
    Ok(json!({
        "profiles": rows,
        "count": profiles.len(),
        "truncated": profiles.len() > MAX_PROFILES,
    }))
}

fn list_row(profile: &Value) -> Value {
    let profile = decoded_profile(profile);
    let name = profile.get("display_name").and_then(Value::as_str).unwrap_or("").to_string();
    let aliases: Vec<String> =
        name_values(profile.get("names")).into_iter().filter(|alias| *alias != name).collect();
    let schemes: Vec<String> = profile
        .get("identifiers")
        .and_then(Value::as_object)
        .map(|map| map.keys().cloned().collect())
        .unwrap_or_default();
    json!({
        "id": profile.get("id").cloned().unwrap_or(Value::Null),
        "kind": profile.get("kind").cloned().unwrap_or(Value::Null),
        "name": name,
        "aliases": aliases,
        "identifier_schemes": schemes,
        "orcid": orcid_of(&profile).map_or(Value::Null, Value::String),
        "affiliations": string_values(profile.get("affiliations")),
        "basis_warning": profile.get("basis_warning").cloned().unwrap_or(Value::Null),
    })
}

/// Names are `{value, script}` objects, or plain strings in older rows.
fn name_values(value: Option<&Value>) -> Vec<String> {
    let items = value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items
        .iter()
        .filter_map(|item| item.as_str().or_else(|| item.get("value").and_then(Value::as_str)))
        .map(str::to_string)
        .collect()
}

fn string_values(value: Option<&Value>) -> Vec<String> {
    let items = value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items.iter().filter_map(Value::as_str).map(str::to_string).collect()
}

fn get_watch_profile(backend: &mut Backend, args: &Args) -> ToolResult {
    let id = args.required_int("profile_id")?;
    let profile = backend.get_object(&format!("/api/profiles/{id}"), &[])?;
    backend::require_fields(&format!("GET /api/profiles/{id}"), &profile, &[("id", backend::Kind::Integer)])?;
    // One match is enough: the answer wants the totals, not the papers.
    // The profile route is primary; the matches route is secondary, so its
    // failure leaves the totals null and says why (contract-notes 15).
    let route = format!("/api/profiles/{id}/matches");
    let totals =
        backend.get_object(&route, &[("limit", "1".to_string())]).and_then(|body| totals(&body, &route));
    let Value::Object(mut answer) = decoded_profile(&profile) else { return Ok(Value::Null) };
    let (total, by_basis, why) = match totals {
        Ok((total, by_basis)) => (total, by_basis, Value::Null),
        Err(error) => (
            Value::Null,
            Value::Null,
            json!(format!(
                "resmon did not give this profile's match counts ({}): {}",
                error.code.as_str(),
                error.message
            )),
        ),
    };
    answer.insert("match_total".into(), total);
    answer.insert("by_basis".into(), by_basis);
    answer.insert("totals_unavailable".into(), why);
    answer.insert("what_a_basis_means".into(), what_a_basis_means());
    Ok(Value::Object(answer))
}

/// `total` and `by_basis` count every match of the profile, not the page.
fn totals(body: &Value, route: &str) -> Result<(Value, Value), ToolError> {
    let total = body.get("total").filter(|total| total.is_i64() || total.is_u64());
    let by_basis = body.get("by_basis").filter(|by_basis| by_basis.is_object());
    match (total, by_basis) {
        (Some(total), Some(by_basis)) => Ok((total.clone(), by_basis.clone())),
        _ => Err(backend::unexpected_shape(&format!("GET {route}"), "an object with `total` and `by_basis`")),
    }
}

fn get_profile_matches(backend: &mut Backend, args: &Args) -> ToolResult {
    let id = args.required_int("profile_id")?;
    let limit = args.limit("limit", DEFAULT_PAGE, MAX_PAGE);
    let offset = args.int("offset").unwrap_or(0).max(0);
    let route = format!("/api/profiles/{id}/matches");
    let query = [("limit", limit.to_string()), ("offset", offset.to_string())];
    let body = backend.get_object(&route, &query)?;
    let (total, by_basis) = totals(&body, &route)?;
    let Some(rows) = body.get("matches").and_then(Value::as_array) else {
        return Err(backend::unexpected_shape(&format!("GET {route}"), "an object with a `matches` list"));
    };
    for row in rows {
        // A match without its paper's id cannot be explained or exported.
        backend::require_fields(
            &format!("GET {route}"),
            row,
            &[("document_id", backend::Kind::Integer), ("basis", backend::Kind::String)],
        )?;
    }
    let Some(matches) = rows.iter().map(match_row).collect::<Option<Vec<Value>>>() else {
        return Err(backend::unexpected_shape(
            &format!("GET {route}"),
            "matches carrying their `document_id`",
        ));
    };
    let has_more = (offset as u64) + (matches.len() as u64) < total.as_u64().unwrap_or(0);
    // `json!` copies what it is given, so the rows are moved in afterwards.
    let mut answer = json!({
        "profile_id": id,
        "matches": null,
        "total": total,
        "by_basis": by_basis,
        "offset": offset,
        "limit": limit,
        "has_more": has_more,
        "what_a_basis_means": what_a_basis_means(),
    });
    answer["matches"] = Value::Array(matches);
    Ok(answer)
}

/// The shared paper row with the match's basis beside it; None without the
/// corpus id the row promises.
fn match_row(row: &Value) -> Option<Value> {
    let mut out = papers::paper(&PaperRow::of(row), IdField::DocumentId, Authors::IfGiven)?;
    // The basis is the one thing a match must never be shown without
    // (contract 1.0 "Watch profiles and the basis of a match"): a row without
    // one is refused by the caller of this function, never given a default.
    out.insert("basis".into(), row.get("basis").filter(|basis| basis.is_string()).cloned()?);
    out.insert(
        "matched_author".into(),
        row.get("matched_author").filter(|name| name.is_string()).cloned().unwrap_or(Value::Null),
    );
    out.insert("evidence".into(), parse_json_text(row.get("evidence")));
    out.insert("first_seen_at".into(), row.get("first_seen_at").cloned().unwrap_or(Value::Null));
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_row_derives_aliases_schemes_and_orcid() {
        let profile = json!({"id": 5, "kind": "person", "display_name": "Ada One",
            "names": "[{\"value\": \"Ada One\", \"script\": \"latin\"}, {\"value\": \"A. One\", \"script\": \"latin\"}]",
            "identifiers": {"orcid": {"value": "0000-0002-1825-0097", "cited": "x"}, "ror": {"value": "r", "cited": "y"}},
            "affiliations": ["Somewhere"], "basis_warning": null});
        let row = list_row(&profile);
        assert_eq!(row["aliases"], json!(["A. One"]));
        assert_eq!(row["identifier_schemes"], json!(["orcid", "ror"]));
        assert_eq!(row["orcid"], json!("0000-0002-1825-0097"));
        assert_eq!(row["basis_warning"], Value::Null);
    }

    #[test]
    fn a_missing_warning_is_filled_unless_there_is_an_orcid() {
        let without = list_row(
            &json!({"id": 6, "kind": "person", "display_name": "B", "identifiers": {"ror": {"value": "r"}}}),
        );
        assert!(without["basis_warning"].as_str().unwrap().contains("ORCID"));
        let with = list_row(
            &json!({"id": 7, "display_name": "C", "identifiers": {"orcid": {"value": "0000-0001-0000-0000"}}}),
        );
        assert_eq!(with["basis_warning"], Value::Null);
    }

    #[test]
    fn evidence_text_is_decoded() {
        let row = match_row(&json!({"document_id": 1, "basis": "identifier", "matched_author": "A",
                                    "evidence": "{\"orcid\": \"0000-0002-1825-0097\"}"}))
        .unwrap();
        assert_eq!(row["evidence"], json!({"orcid": "0000-0002-1825-0097"}));
        assert_eq!(row["id"], json!(1));
    }
}
