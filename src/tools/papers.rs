//! The one paper row every tool that lists papers answers with
//! (search_corpus, find_similar, get_execution_results, get_profile_matches),
//! so the fields, the author cut and the distance precision cannot drift
//! apart between them (contract 1.0 "Tools › Read": id, title, authors,
//! date, source, doi, url).

use serde_json::{Map, Value, json};

use super::{nullable, object};

/// Names kept per paper, with `authors_total` beside them when more were
/// left out. Two is the most that keeps the first keyword page of the
/// realistic slice inside its 7,168 bytes: it measured 7,000 B with two,
/// 7,230 B with three and 7,606 B with six (contract-notes 14 and 24;
/// docs/performance.md).
pub(crate) const AUTHORS_KEPT: usize = 2;

/// Significant digits a distance keeps: enough to order neighbours, and no
/// more bytes than that on every row of a semantic page (contract-notes 24).
const DISTANCE_DIGITS: usize = 4;

/// Where a row's corpus id sits: document rows and reference records call it
/// `id`, profile matches `document_id`.
#[derive(Clone, Copy)]
pub(crate) enum IdField {
    Id,
    DocumentId,
}

/// Whether the rows of a route always carry an author list. Profile matches
/// carry only the author that matched, and such a row must not claim "no
/// authors" with an empty list; should one carry the list, it is cut as
/// every other row's is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Authors {
    Listed,
    IfGiven,
}

/// The paper row's schema. Every field is always present except
/// `authors_total`, which a row has only when names were left out.
pub(crate) fn paper_schema(authors: Authors) -> Value {
    let mut properties = json!({
        "id": {"type": "integer", "description": "Stored document id; usable as doc_id."},
        "title": nullable("Title, or null when resmon has none for the paper."),
    });
    let mut required = vec!["id", "title"];
    properties["authors"] = json!({
        "type": "array",
        "items": {"type": "string"},
        "description": format!("The first {AUTHORS_KEPT} names at most."),
    });
    properties["authors_total"] = json!({
        "type": "integer",
        "description": "Present only when names were left out: how many the paper has.",
    });
    if authors == Authors::Listed {
        required.push("authors");
    }
    properties["date"] = nullable("Publication date as resmon stores it (usually YYYY-MM-DD), or null.");
    properties["source"] = nullable("Source slug, e.g. arxiv; null when resmon does not say.");
    properties["doi"] = nullable("DOI, or null.");
    properties["url"] = nullable("Link to the paper, or null.");
    required.extend(["date", "source", "doi", "url"]);
    object(properties, &required)
}

/// Adds a field a tool puts beside the paper's own to its row schema.
pub(crate) fn add_field(schema: &mut Value, name: &str, property: Value, always: bool) {
    schema["properties"][name] = property;
    if always && let Some(required) = schema["required"].as_array_mut() {
        required.push(json!(name));
    }
}

/// The compact row from a document row, a reference-export record or a
/// profile match. None when the row lacks the integer corpus id that the
/// row promises to carry (it is what explain_match and the others take).
pub(crate) fn paper(row: &Value, id: IdField, authors: Authors) -> Option<Map<String, Value>> {
    let key = match id {
        IdField::Id => "id",
        IdField::DocumentId => "document_id",
    };
    let id = row.get(key).and_then(Value::as_i64)?;
    let text = |name: &str| row.get(name).filter(|value| value.is_string()).cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    // Absent values are null, never an invented empty string (contract-notes 7 and 25).
    out.insert("title".into(), text("title"));
    if authors == Authors::Listed || row.get("authors").is_some_and(|names| !names.is_null()) {
        let names = author_names(row.get("authors"));
        let total = names.len();
        out.insert("authors".into(), json!(names.into_iter().take(AUTHORS_KEPT).collect::<Vec<_>>()));
        if total > AUTHORS_KEPT {
            out.insert("authors_total".into(), json!(total));
        }
    }
    out.insert("date".into(), text("publication_date"));
    out.insert("source".into(), text("source_repository"));
    out.insert("doi".into(), text("doi"));
    out.insert("url".into(), text("url"));
    Some(out)
}

/// The row with its `distance` beside it, rounded (null stays null: an
/// unranked paper has none).
pub(crate) fn with_distance(mut paper: Map<String, Value>, row: &Value) -> Map<String, Value> {
    let distance = row.get("distance").and_then(Value::as_f64).map_or(Value::Null, round_distance);
    paper.insert("distance".into(), distance);
    paper
}

/// resmon stores authors as one comma-joined string (backend-facts 3); a list is accepted too, should a release send one.
fn author_names(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(joined)) => {
            joined.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_string).collect()
        }
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// `DISTANCE_DIGITS` significant digits, through the decimal text so the
/// number serialises as the short form (0.3413, not 0.34130000000000005).
fn round_distance(distance: f64) -> Value {
    if !distance.is_finite() {
        return Value::Null;
    }
    let text = format!("{:.*e}", DISTANCE_DIGITS - 1, distance);
    text.parse::<f64>().map_or(Value::Null, |rounded| json!(rounded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authors_are_split_cut_and_counted_only_when_cut() {
        let row = |authors: Value| json!({"id": 1, "authors": authors});
        let names = |paper: &Map<String, Value>| paper["authors"].clone();
        let short = paper(&row(json!(" Ada Lovelace ,Alan Turing")), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&short), json!(["Ada Lovelace", "Alan Turing"]));
        assert!(!short.contains_key("authors_total"));
        let exactly = (1..=AUTHORS_KEPT).map(|n| format!("A{n}")).collect::<Vec<_>>().join(", ");
        let exact = paper(&row(json!(exactly)), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&exact).as_array().unwrap().len(), AUTHORS_KEPT);
        assert!(!exact.contains_key("authors_total"));
        let many = (1..=9).map(|n| format!("Person {n}")).collect::<Vec<_>>().join(", ");
        let cut = paper(&row(json!(many)), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&cut), json!(["Person 1", "Person 2"]));
        assert_eq!(cut["authors_total"], 9);
        assert!(!Value::Object(cut.clone()).to_string().contains("et al"));
        let listed = paper(&row(json!(["X", " ", "Y"])), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&listed), json!(["X", "Y"]));
        for empty in [json!(null), json!(""), json!(" , ")] {
            assert_eq!(names(&paper(&row(empty), IdField::Id, Authors::Listed).unwrap()), json!([]));
        }
    }

    #[test]
    fn a_row_renames_drops_and_needs_its_id() {
        let row = json!({"id": 7, "source_repository": "arxiv", "title": "T", "authors": null,
            "publication_date": null, "doi": null, "url": "u", "abstract": "long", "pub_sort": "x"});
        assert_eq!(
            Value::Object(paper(&row, IdField::Id, Authors::Listed).unwrap()),
            json!({"id": 7, "title": "T", "authors": [], "date": null, "source": "arxiv", "doi": null, "url": "u"})
        );
        assert!(paper(&json!({"title": "no id"}), IdField::Id, Authors::Listed).is_none());
        let matched =
            json!({"document_id": 9, "title": "M", "source_repository": "s", "matched_author": "A"});
        let bare = paper(&matched, IdField::DocumentId, Authors::IfGiven).unwrap();
        assert_eq!(bare["id"], 9);
        assert!(!bare.contains_key("authors"), "a match row without names claims no author list");
        let mut named = matched.clone();
        named["authors"] = json!("A, B, C, D");
        let named = paper(&named, IdField::DocumentId, Authors::IfGiven).unwrap();
        assert_eq!((named["authors"].clone(), named["authors_total"].clone()), (json!(["A", "B"]), json!(4)));
    }

    #[test]
    fn distances_keep_four_significant_digits() {
        let at =
            |distance: Value| with_distance(Map::new(), &json!({"distance": distance}))["distance"].clone();
        assert_eq!(at(json!(0.341_287_106_275_558_5)), json!(0.3413));
        assert_eq!(at(json!(1.234_56)), json!(1.235));
        assert_eq!(at(json!(0.000_123_456)), json!(0.0001235));
        assert_eq!(at(json!(0.5)), json!(0.5));
        assert_eq!(at(json!(0)), json!(0.0));
        assert_eq!(at(Value::Null), Value::Null);
        assert_eq!(at(json!("near")), Value::Null);
    }

    #[test]
    fn the_schema_names_every_field_a_row_can_carry() {
        let mut schema = paper_schema(Authors::Listed);
        add_field(&mut schema, "distance", nullable("d"), true);
        let properties = schema["properties"].as_object().unwrap();
        for name in ["id", "title", "authors", "authors_total", "date", "source", "doi", "url", "distance"] {
            assert!(properties.contains_key(name), "{name}");
        }
        let required = schema["required"].as_array().unwrap();
        assert!(!required.contains(&json!("authors_total")), "present only when names were cut");
        assert!(required.contains(&json!("distance")));
        let matched = paper_schema(Authors::IfGiven);
        assert!(!matched["required"].as_array().unwrap().contains(&json!("authors")));
    }
}
