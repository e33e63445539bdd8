//! The corpus reads: search, nearest neighbours, why a paper matched, and
//! what happened to a paper after resmon stored it.

use serde_json::{Map, Value, json};

use super::loose::{self, List, Scalar, loose_row};
use super::papers::{self, Authors, IdField, PaperRow};
use super::{
    DEFAULT_PAGE, MAX_PAGE, Probe, Tool, limit_property, limit_up_to, nullable, object, passed_through,
};
use crate::args::Args;
use crate::backend::{self, Backend, Method};
use crate::error::{ToolError, ToolResult};

/// resmon clamps `k` to 1..50 (backend-facts 6).
const SIMILAR_MAX: i64 = 50;

/// search_corpus declares no `offset`, yet a caller used to offsets will try
/// one; contract 1.0 "Read" has it refused rather than ignored, and this is
/// the sentence it is refused with (its `declined_arguments`).
const OFFSET_REFUSAL: &str = "search_corpus pages with a cursor, not an offset: pass the previous \
    answer's next_cursor back as `cursor` to get the next page.";

pub(crate) const SEARCH_CORPUS: Tool = Tool {
    name: "search_corpus",
    title: "Search the corpus",
    description: "Stored papers. keyword (default): every word matches, newest first; semantic: \
        ranked by meaning. `mode` is what was served. More: pass next_cursor as cursor.",
    always_load: true,
    search_hint: "find look papers articles literature library collection keyword topic semantic stored saved mentioning",
    input_schema: search_input,
    #[cfg(test)]
    output_schema: search_output,
    backend_names: &[("mode", &["sort"])],
    not_sent_as_given: &[],
    declined_arguments: &[("offset", OFFSET_REFUSAL)],
    probe: Probe::NotProbed("not probed: its route is a POST, which --check does not send"),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: search_corpus,
};

pub(crate) const FIND_SIMILAR: Tool = Tool {
    name: "find_similar",
    title: "Find similar papers",
    description: "Stored papers nearest in meaning to one paper, closest first. An empty list carries \
        `reason`; it does not alone mean nothing is similar.",
    always_load: false,
    search_hint: "related papers articles studies work like this one more like it nearest \
        neighbours neighbors closest resembling comparable recommend recommended \
        recommendations suggest suggestions same topic",
    input_schema: similar_input,
    #[cfg(test)]
    output_schema: similar_output,
    backend_names: &[("limit", &["k"])],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/documents/0/similar", &[("k", "1")]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: find_similar,
};

pub(crate) const EXPLAIN_MATCH: Tool = Tool {
    name: "explain_match",
    title: "Why did this paper match?",
    description: "Which keywords a stored paper matches and where, resmon's verdict, and \
        what_resmon_cannot_see (relay it). No match is normal for relevance-ranked sources.",
    always_load: false,
    search_hint: "why reason reasons explain explanation matched matching hit hits relevance \
        relevant keywords keyword terms triggered flagged caught included picked showed \
        up appear appears appeared evidence justification highlighted this paper article \
        results",
    input_schema: doc_input,
    #[cfg(test)]
    output_schema: why_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/documents/0/why", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: explain_match,
};

pub(crate) const GET_PAPER_LIFECYCLE: Tool = Tool {
    name: "get_paper_lifecycle",
    title: "Paper lifecycle",
    description: "A stored paper's retraction, preprint-to-published and version events with notice \
        links. checked_at null: never checked, so no events proves nothing.",
    always_load: false,
    search_hint: "is been retracted retraction retract retractions withdrawn withdrawal pulled \
        corrected correction corrections erratum errata concern published journal peer \
        reviewed version versions preprint updated updates history still valid study \
        article",
    input_schema: doc_input,
    #[cfg(test)]
    output_schema: lifecycle_output,
    backend_names: &[],
    not_sent_as_given: &[],
    declined_arguments: &[],
    probe: Probe::Read("/api/documents/0/lifecycle", &[]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: get_paper_lifecycle,
};

fn search_input() -> Value {
    object(
        json!({
            "query": {"type": "string"},
            "mode": {"type": "string", "enum": ["keyword", "semantic"]},
            "sources": {"type": "array", "items": {"type": "string"}, "description": "Slugs from list_sources."},
            "date_from": {"type": "string", "description": "YYYY-MM-DD"},
            "date_to": {"type": "string", "description": "YYYY-MM-DD"},
            "limit": limit_property(),
            // No `offset`: a declared but refused property shows to models as
            // an untyped argument to fill in. OFFSET_REFUSAL answers one.
            "cursor": {"type": "string"},
        }),
        &["query"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn search_output() -> Value {
    let mut paper = papers::paper_schema(Authors::Listed);
    let distance =
        nullable("Semantic mode only: distance from the query, smaller is closer; null if unranked.");
    papers::add_field(&mut paper, "distance", distance, false);
    object(
        json!({
            "papers": {"type": "array", "items": paper},
            "next_cursor": nullable("Pass back as cursor for the next page; null on the last page."),
            "has_more": {"type": "boolean"},
            "total": {"type": "integer", "description": "Matches in all pages."},
            "total_is_capped": {"type": "boolean", "description": "True when total is resmon's counting cap."},
            "mode": {"type": "string", "description": "The mode actually served: keyword or semantic."},
            "mode_unavailable": nullable("Why semantic was asked for but keyword was served; else null."),
            "ranked_count": nullable("Semantic answers only: papers ranked by distance."),
            "unranked_count": nullable("Semantic answers only: papers without a vector, appended unordered."),
            "model": nullable("Semantic answers only: the embedding model."),
        }),
        // contract 1.0 "Tools › Read" names ranked_count, unranked_count and
        // model "in semantic mode": always present in a semantic answer and
        // left off a keyword page, whose budget is the tighter (contract-notes 14).
        &["papers", "next_cursor", "has_more", "total", "total_is_capped", "mode", "mode_unavailable"],
    )
}

fn similar_input() -> Value {
    object(
        json!({
            "doc_id": {"type": "integer", "minimum": 1},
            "limit": limit_up_to(SIMILAR_MAX),
        }),
        &["doc_id"],
    )
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn similar_output() -> Value {
    let mut paper = papers::paper_schema(Authors::Listed);
    papers::add_field(&mut paper, "distance", nullable("Distance from the paper; smaller is closer."), true);
    object(
        json!({
            "document_id": nullable("The paper asked about."),
            "papers": {"type": "array", "items": paper},
            "model": nullable("Embedding model the distances come from; null when nothing is embedded."),
            "reason": nullable("Why the list is empty; null when it is not."),
        }),
        &["document_id", "papers", "model", "reason"],
    )
}

fn doc_input() -> Value {
    object(json!({"doc_id": {"type": "integer", "minimum": 1}}), &["doc_id"])
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn why_output() -> Value {
    passed_through(object(
        json!({
            "document": {"type": "object"},
            "source": {"type": "object", "description": "The source, and how it combines keywords."},
            "runs": {"type": "array", "items": {"type": "object"}, "description": "Runs that found the paper."},
            "keywords": {"type": "array", "items": {"type": "object"}, "description": "Per keyword: matched, fields, where."},
            "matched_count": {"type": "integer"},
            "keyword_count": {"type": "integer"},
            "verdict": {"type": "string"},
            "headline": {"type": "string"},
            "what_resmon_cannot_see": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Limits of this check; repeat them to the person."
            },
            "fields_checked": {"type": "array", "items": {"type": "string"}},
        }),
        &[],
    ))
}

#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn lifecycle_output() -> Value {
    passed_through(object(
        json!({
            "document_id": {"type": "integer"},
            "events": {
                "type": "array",
                "items": {"type": "object", "description": "kind, severity, label, notice_url, notice_date, detail, provider."},
            },
            "checked_at": nullable("Last check; null means never checked, so no events proves nothing."),
            "check_status": nullable("ok, no_identifier or error; null when never checked."),
        }),
        &[],
    ))
}

fn search_corpus(backend: &mut Backend, args: &Args) -> ToolResult {
    let semantic = args.str("mode") == Some("semantic");
    let body = search_body(args, semantic);
    let reply = backend.request(Method::Post, "/api/explorer/search", &[], Some(&body))?;
    shape_search(&reply.read()?, semantic)
}

/// The explorer body: only what the caller gave, and never `include`
/// (contract 1.0 "Read": the tool asks for the page without those keys).
fn search_body(args: &Args, semantic: bool) -> Value {
    let mut body = Map::new();
    body.insert("query".into(), json!(args.str("query").unwrap_or_default()));
    body.insert("limit".into(), json!(args.limit("limit", DEFAULT_PAGE, MAX_PAGE)));
    body.insert("sort".into(), json!(if semantic { "similarity" } else { "newest" }));
    if let Some(cursor) = args.str("cursor") {
        body.insert("cursor".into(), json!(cursor));
    }
    if let Some(sources) = args.get("sources").filter(|value| value.as_array().is_some_and(|a| !a.is_empty()))
    {
        body.insert("sources".into(), sources.clone());
    }
    for name in ["date_from", "date_to"] {
        if let Some(value) = args.str(name) {
            body.insert(name.into(), json!(value));
        }
    }
    Value::Object(body)
}

loose_row!(
    /// The explorer's page, read typed: its rows are the bulk of the body
    /// and the answer keeps a few fields of each (tools/loose.rs says why).
    SearchPage {
        results: List<PaperRow<'a>>,
        total: Scalar<'a>,
        sort: Scalar<'a>,
        next_cursor: Scalar<'a>,
        has_more: Scalar<'a>,
        total_is_capped: Scalar<'a>,
        similarity_unavailable: Scalar<'a>,
        ranked_count: Value,
        unranked_count: Value,
        model: Value,
    }
);

/// The mode is read from the sort resmon says it served, never from the
/// request: a declined ranking must not be reported as one (contract 1.0
/// "Search modes").
fn shape_search(reply: &SearchPage, asked_semantic: bool) -> ToolResult {
    const ROUTE: &str = "POST /api/explorer/search";
    let rows = reply.results.as_ref().and_then(|rows| rows.0.as_ref());
    let total = reply.total.as_ref().and_then(Scalar::as_i64);
    let (Some(rows), Some(total)) = (rows, total) else {
        return Err(backend::unexpected_shape(ROUTE, "an object with `results` and `total`"));
    };
    let served_semantic = loose::text(&reply.sort) == Some("similarity");
    let papers = papers_of(ROUTE, rows, served_semantic, "papers carrying their corpus `id`")?;
    let next_cursor = loose::text(&reply.next_cursor).map(|cursor| json!(cursor));
    let has_more = reply.has_more.as_ref().and_then(Scalar::as_bool).unwrap_or(next_cursor.is_some());
    // `json!` copies what it is given, so the rows are moved in afterwards.
    let mut answer = json!({
        "papers": null,
        "next_cursor": next_cursor,
        "has_more": has_more,
        "total": total,
        "total_is_capped": reply.total_is_capped.as_ref().and_then(Scalar::as_bool).unwrap_or(false),
        "mode": if served_semantic { "semantic" } else { "keyword" },
        "mode_unavailable": mode_unavailable(
            loose::text(&reply.similarity_unavailable),
            loose::text(&reply.sort),
            asked_semantic && !served_semantic,
        ),
    });
    answer["papers"] = Value::Array(papers);
    if served_semantic {
        for (name, value) in [
            ("ranked_count", &reply.ranked_count),
            ("unranked_count", &reply.unranked_count),
            ("model", &reply.model),
        ] {
            answer[name] = value.clone().unwrap_or(Value::Null);
        }
    }
    Ok(answer)
}

/// Every row as the shared paper row (with its distance when the answer is
/// a ranking), or the error naming the route: a row without its integer
/// corpus id is refused as `backend::require_fields` refuses it.
fn papers_of(
    route: &str,
    rows: &[PaperRow],
    with_distance: bool,
    expected: &str,
) -> Result<Vec<Value>, ToolError> {
    for row in rows {
        if !row.id.as_ref().is_some_and(Scalar::is_integer) {
            return Err(backend::unusable_field(route, "id", backend::Kind::Integer, row.id.is_some()));
        }
    }
    rows.iter()
        .map(|row| paper(row, with_distance))
        .collect::<Option<Vec<Value>>>()
        .ok_or_else(|| backend::unexpected_shape(route, expected))
}

/// Why a semantic search was answered otherwise: resmon's own reason when
/// it gave one, else only what its answer showed (the sort it named, or
/// that it named none), never an order it did not state.
fn mode_unavailable(given: Option<&str>, sort: Option<&str>, declined: bool) -> Value {
    if !declined {
        return Value::Null;
    }
    if let Some(sentence) = given.filter(|sentence| !sentence.trim().is_empty()) {
        return json!(sentence);
    }
    let shown = match sort.map(str::trim).filter(|sort| !sort.is_empty()) {
        Some(sort) => format!("resmon answered with its `{sort}` sort instead of ranking by meaning"),
        None => {
            "resmon's answer did not say how it sorted this page or that it ranked it by meaning".to_string()
        }
    };
    json!(format!("{shown}, and gave no reason; treat this page as a keyword search."))
}

fn find_similar(backend: &mut Backend, args: &Args) -> ToolResult {
    let doc_id = args.required_int("doc_id")?;
    let k = args.limit("limit", DEFAULT_PAGE, SIMILAR_MAX);
    let path = format!("/api/documents/{doc_id}/similar");
    let reply = backend.request(Method::Get, &path, &[("k", k.to_string())], None)?;
    shape_similar(&reply.read()?, &format!("GET {path}"))
}

loose_row!(
    /// The neighbours answer, read typed as the search page is.
    Neighbours {
        document_id: Value,
        neighbours: List<PaperRow<'a>>,
        model: Value,
        reason: Value,
    }
);

/// An empty list always carries a reason (contract 1.0 "Search modes"):
/// resmon's own sentence, or ours saying it gave none.
fn shape_similar(reply: &Neighbours, route: &str) -> ToolResult {
    if !reply.is_object {
        return Err(backend::unexpected_shape(route, "an object"));
    }
    let Some(rows) = reply.neighbours.as_ref().and_then(|rows| rows.0.as_ref()) else {
        return Err(backend::unexpected_shape(route, "an object with `neighbours`"));
    };
    let papers = papers_of(route, rows, true, "neighbours carrying their corpus `id`")?;
    let given = reply.reason.as_ref().filter(|reason| reason.as_str().is_some_and(|s| !s.trim().is_empty()));
    let reason = match (given, papers.is_empty()) {
        (Some(reason), _) => reason.clone(),
        (None, true) => json!(
            "resmon returned no similar papers and gave no reason, so this is not evidence \
             that nothing similar is stored."
        ),
        (None, false) => Value::Null,
    };
    // `json!` copies what it is given, so the rows are moved in afterwards.
    let mut answer = json!({
        "document_id": reply.document_id.clone().unwrap_or(Value::Null),
        "papers": null,
        "model": reply.model.clone().unwrap_or(Value::Null),
        "reason": reason,
    });
    answer["papers"] = Value::Array(papers);
    Ok(answer)
}

/// Passed through whole (contract-notes 9): the caveats are the point.
fn explain_match(backend: &mut Backend, args: &Args) -> ToolResult {
    let doc_id = args.required_int("doc_id")?;
    backend.get_object(&format!("/api/documents/{doc_id}/why"), &[])
}

fn get_paper_lifecycle(backend: &mut Backend, args: &Args) -> ToolResult {
    let doc_id = args.required_int("doc_id")?;
    backend.get_object(&format!("/api/documents/{doc_id}/lifecycle"), &[])
}

/// A stored document row as the shared paper row, with its distance when
/// the answer is a ranking; None without its corpus id.
fn paper(row: &PaperRow, with_distance: bool) -> Option<Value> {
    let paper = papers::paper(row, IdField::Id, Authors::Listed)?;
    Some(Value::Object(if with_distance { papers::with_distance(paper, row) } else { paper }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn search(reply: &Value, asked_semantic: bool) -> ToolResult {
        shape_search(&SearchPage::deserialize(reply).unwrap(), asked_semantic)
    }

    fn similar(reply: &Value) -> ToolResult {
        shape_similar(&Neighbours::deserialize(reply).unwrap(), "GET /api/documents/1/similar")
    }

    fn row_paper(row: &Value, with_distance: bool) -> Option<Value> {
        paper(&PaperRow::of(row), with_distance)
    }

    #[test]
    fn a_ranked_row_carries_its_distance_and_a_keyword_row_none() {
        let row = json!({"id": 7, "source_repository": "arxiv", "title": "T", "authors": "A, B",
            "publication_date": null, "doi": null, "url": "u", "abstract": "long", "distance": 0.123456});
        assert!(row_paper(&row, false).unwrap().get("distance").is_none());
        assert_eq!(row_paper(&row, true).unwrap()["distance"], json!(0.1235));
        assert_eq!(row_paper(&json!({"id": 8}), true).unwrap()["distance"], Value::Null);
        assert!(row_paper(&json!({"title": "no id"}), false).is_none());
    }

    #[test]
    fn a_declined_ranking_is_reported_as_keyword() {
        let reply = json!({"results": [], "next_cursor": null, "has_more": false, "total": 0,
            "total_is_capped": false, "sort": "newest", "similarity_unavailable": "No model."});
        let answer = search(&reply, true).unwrap();
        assert_eq!(answer["mode"], "keyword");
        assert_eq!(answer["mode_unavailable"], "No model.");
        assert!(answer.get("model").is_none(), "a keyword answer leaves the semantic fields out: {answer}");
        let silent = json!({"results": [], "total": 0, "sort": "newest"});
        let reason = search(&silent, true).unwrap()["mode_unavailable"].as_str().unwrap().to_string();
        assert!(reason.starts_with("resmon answered with its `newest` sort instead of ranking"), "{reason}");
        assert_eq!(search(&silent, false).unwrap()["mode_unavailable"], Value::Null);
        // No sort named at all: no order is claimed.
        let unsorted = json!({"results": [], "total": 0});
        let reason = search(&unsorted, true).unwrap()["mode_unavailable"].as_str().unwrap().to_string();
        assert!(reason.starts_with("resmon's answer did not say how it sorted this page"), "{reason}");
        assert!(!reason.contains("newest"), "{reason}");
    }

    #[test]
    fn an_empty_neighbour_list_always_has_a_reason() {
        let bare = json!({"document_id": 1, "model": null, "neighbours": [], "reason": null});
        assert!(similar(&bare).unwrap()["reason"].is_string());
        let given = json!({"document_id": 1, "model": "m", "neighbours": [], "reason": "Not embedded."});
        assert_eq!(similar(&given).unwrap()["reason"], "Not embedded.");
        assert!(similar(&json!({})).is_err());
    }

    #[test]
    fn a_row_without_a_usable_id_is_refused_by_name() {
        for (rows, problem) in [
            (json!([{"id": 1}, {"title": "none"}]), "without `id`"),
            (json!([{"id": null}]), "without `id`"),
            (json!([7]), "without `id`"),
            (json!([{"id": "7"}]), "with a malformed `id`"),
            (json!([{"id": 1.5}]), "with a malformed `id`"),
        ] {
            let error = search(&json!({"results": rows, "total": 1}), false).unwrap_err();
            assert!(error.message.contains(problem), "{rows}: {}", error.message);
            assert!(error.message.contains("POST /api/explorer/search"), "{}", error.message);
            let error = similar(&json!({"neighbours": rows})).unwrap_err();
            assert!(error.message.contains(problem), "{rows}: {}", error.message);
        }
        let too_big = search(&json!({"results": [{"id": u64::MAX}], "total": 1}), false).unwrap_err();
        assert!(too_big.message.contains("papers carrying their corpus `id`"), "{}", too_big.message);
    }

    #[test]
    fn a_page_of_another_shape_is_named_as_such() {
        for reply in [json!([]), json!({"results": {}, "total": 1}), json!({"results": [], "total": "1"})] {
            let error = search(&reply, false).unwrap_err();
            assert!(
                error.message.contains("an object with `results` and `total`"),
                "{reply}: {}",
                error.message
            );
        }
        assert!(similar(&json!([])).unwrap_err().message.contains("(expected an object)"));
        assert!(similar(&json!({"neighbours": "x"})).unwrap_err().message.contains("`neighbours`"));
    }

    /// The page as the server reads it: from resmon's bytes, not a Value.
    fn search_text(body: &str) -> ToolResult {
        shape_search(&serde_json::from_str::<SearchPage>(body).expect("any JSON reads"), false)
    }

    #[test]
    fn a_page_read_from_its_text_answers_as_its_parsed_value_does() {
        // Escapes (an owned string on the text path), a repeated key, names
        // with blanks, mistyped optional fields and a list of names.
        let body = r#"{"results": [
            {"id": 1, "title": "First", "title": "T\u00e9 last", "authors": "  A\u00e9 ,B, , C ",
             "abstract": "skipped", "publication_date": 5, "source_repository": "arxiv", "doi": null},
            {"id": 2, "authors": ["X\n", 3, " ", "Y"], "url": ["u"], "distance": 1}],
            "total": 2, "sort": "newest", "next_cursor": "c\/1", "has_more": "yes", "total_is_capped": 1}"#;
        let value: Value = serde_json::from_str(body).unwrap();
        let answer = search_text(body).unwrap();
        assert_eq!(answer, search(&value, false).unwrap());
        assert_eq!(answer["papers"][0]["title"], "T\u{e9} last");
        assert_eq!(answer["papers"][0]["authors"], json!(["A\u{e9}", "B"]));
        assert_eq!(answer["papers"][0]["authors_total"], 3);
        assert_eq!(answer["papers"][0]["date"], Value::Null);
        assert_eq!(answer["papers"][1]["authors"], json!(["X", "Y"]));
        assert_eq!(answer["papers"][1]["url"], Value::Null);
        assert_eq!((answer["next_cursor"].clone(), answer["has_more"].clone()), (json!("c/1"), json!(true)));
        assert_eq!(answer["total_is_capped"], false);
    }

    #[test]
    fn a_field_the_answer_drops_is_skipped_undecoded() {
        // What a Value parse refused for the whole page, the typed read skips
        // when it sits in a field the answer does not use (tools/loose.rs).
        for odd in [r#""\ud800 lone""#, "1e400", &format!("{}{}", "[".repeat(300), "]".repeat(300))] {
            let body = format!(r#"{{"results": [{{"id": 1, "abstract": {odd}}}], "total": 1}}"#);
            assert!(serde_json::from_str::<Value>(&body).is_err(), "{odd}");
            assert_eq!(search_text(&body).unwrap()["papers"][0]["id"], 1, "{odd}");
        }
        // In a field the answer keeps, it is still refused.
        assert!(
            serde_json::from_str::<SearchPage>(r#"{"results": [{"id": 1, "title": "\ud800"}]}"#).is_err()
        );
    }
}
