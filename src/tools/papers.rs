//! The one paper row every tool that lists papers answers with
//! (search_corpus, find_similar, get_execution_results, get_profile_matches),
//! so the fields, the author cut and the distance precision cannot drift
//! apart between them (contract 1.0 "Tools › Read": id, title, authors,
//! date, source, doi, url).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use super::loose::{self, Scalar, loose_row};
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

loose_row!(
    /// The fields of a stored paper the compact row is made from, read
    /// straight from resmon's body (or from a parsed `Value`, for routes
    /// whose rows are judged as Values first); everything else on the row,
    /// the abstract included, is skipped unbuilt.
    PaperRow {
        id: Scalar<'a>,
        document_id: Scalar<'a>,
        title: Scalar<'a>,
        authors: AuthorList<'a>,
        publication_date: Scalar<'a>,
        source_repository: Scalar<'a>,
        doi: Scalar<'a>,
        url: Scalar<'a>,
        distance: Scalar<'a>,
    }
);

impl<'a> PaperRow<'a> {
    /// The same row read from an already parsed `Value`.
    pub(crate) fn of(row: &'a Value) -> PaperRow<'a> {
        // Reading a Value cannot fail: its keys are strings and every field
        // reads any JSON value (tools/loose.rs).
        PaperRow::deserialize(row).unwrap_or_default()
    }

    /// The corpus id field the route's rows carry, as read.
    pub(crate) fn id_field(&self, id: IdField) -> Option<&Scalar<'a>> {
        match id {
            IdField::Id => self.id.as_ref(),
            IdField::DocumentId => self.document_id.as_ref(),
        }
    }
}

/// resmon stores authors as one comma-joined string (backend-facts 3); a
/// list is read too, should a release send one. Another kind of value
/// reads as no names.
#[derive(Debug, Default)]
pub(crate) struct AuthorList<'a>(Vec<Cow<'a, str>>);

impl<'de> Deserialize<'de> for AuthorList<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> Visitor<'de> for Names {
            type Value = AuthorList<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a comma-joined string or a list of names")
            }
            fn visit_borrowed_str<E>(self, joined: &'de str) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList(split_names(joined).map(Cow::Borrowed).collect()))
            }
            fn visit_str<E>(self, joined: &str) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList(split_names(joined).map(|name| Cow::Owned(name.to_string())).collect()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AuthorList<'de>, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<Scalar<'de>>()? {
                    if let Scalar::Str(name) = name
                        && !name.trim().is_empty()
                    {
                        names.push(trim_cow(name));
                    }
                }
                Ok(AuthorList(names))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<AuthorList<'de>, A::Error> {
                loose::drain_map(map).map(|()| AuthorList::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList::default())
            }
            fn visit_unit<E>(self) -> Result<AuthorList<'de>, E> {
                Ok(AuthorList::default())
            }
        }
        deserializer.deserialize_any(Names)
    }
}

fn split_names(joined: &str) -> impl Iterator<Item = &str> {
    joined.split(',').map(str::trim).filter(|name| !name.is_empty())
}

/// A name without its surrounding blanks, still borrowed when it was.
fn trim_cow(name: Cow<'_, str>) -> Cow<'_, str> {
    match name {
        Cow::Borrowed(name) => Cow::Borrowed(name.trim()),
        Cow::Owned(name) if name.trim().len() == name.len() => Cow::Owned(name),
        Cow::Owned(name) => Cow::Owned(name.trim().to_string()),
    }
}

/// The compact row from a document row, a reference-export record or a
/// profile match. None when the row lacks the integer corpus id that the
/// row promises to carry (it is what explain_match and the others take).
pub(crate) fn paper(row: &PaperRow, id: IdField, authors: Authors) -> Option<Map<String, Value>> {
    let id = row.id_field(id).and_then(Scalar::as_i64)?;
    let text = |field: &Option<Scalar>| loose::text(field).map_or(Value::Null, |text| json!(text));
    let mut out = Map::new();
    out.insert("id".into(), json!(id));
    // Absent values are null, never an invented empty string (contract-notes 7 and 25).
    out.insert("title".into(), text(&row.title));
    // A null list reads as absent: a row that may omit its names (a
    // profile match) then claims no list at all.
    if authors == Authors::Listed || row.authors.is_some() {
        let names = row.authors.as_ref().map_or(&[][..], |names| &names.0[..]);
        out.insert("authors".into(), json!(names.iter().take(AUTHORS_KEPT).collect::<Vec<_>>()));
        if names.len() > AUTHORS_KEPT {
            out.insert("authors_total".into(), json!(names.len()));
        }
    }
    out.insert("date".into(), text(&row.publication_date));
    out.insert("source".into(), text(&row.source_repository));
    out.insert("doi".into(), text(&row.doi));
    out.insert("url".into(), text(&row.url));
    Some(out)
}

/// The row with its `distance` beside it, rounded (null stays null: an
/// unranked paper has none).
pub(crate) fn with_distance(mut paper: Map<String, Value>, row: &PaperRow) -> Map<String, Value> {
    let distance = row.distance.as_ref().and_then(Scalar::as_f64).map_or(Value::Null, round_distance);
    paper.insert("distance".into(), distance);
    paper
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

    /// The row as a handler reads it from a parsed Value.
    fn paper_of(row: &Value, id: IdField, authors: Authors) -> Option<Map<String, Value>> {
        paper(&PaperRow::of(row), id, authors)
    }

    #[test]
    fn authors_are_split_cut_and_counted_only_when_cut() {
        let row = |authors: Value| json!({"id": 1, "authors": authors});
        let names = |paper: &Map<String, Value>| paper["authors"].clone();
        let short =
            paper_of(&row(json!(" Ada Lovelace ,Alan Turing")), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&short), json!(["Ada Lovelace", "Alan Turing"]));
        assert!(!short.contains_key("authors_total"));
        let exactly = (1..=AUTHORS_KEPT).map(|n| format!("A{n}")).collect::<Vec<_>>().join(", ");
        let exact = paper_of(&row(json!(exactly)), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&exact).as_array().unwrap().len(), AUTHORS_KEPT);
        assert!(!exact.contains_key("authors_total"));
        let many = (1..=9).map(|n| format!("Person {n}")).collect::<Vec<_>>().join(", ");
        let cut = paper_of(&row(json!(many)), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&cut), json!(["Person 1", "Person 2"]));
        assert_eq!(cut["authors_total"], 9);
        assert!(!Value::Object(cut.clone()).to_string().contains("et al"));
        let listed = paper_of(&row(json!(["X", " ", "Y"])), IdField::Id, Authors::Listed).unwrap();
        assert_eq!(names(&listed), json!(["X", "Y"]));
        for empty in [json!(null), json!(""), json!(" , ")] {
            assert_eq!(names(&paper_of(&row(empty), IdField::Id, Authors::Listed).unwrap()), json!([]));
        }
    }

    #[test]
    fn a_row_renames_drops_and_needs_its_id() {
        let row = json!({"id": 7, "source_repository": "arxiv", "title": "T", "authors": null,
            "publication_date": null, "doi": null, "url": "u", "abstract": "long", "pub_sort": "x"});
        assert_eq!(
            Value::Object(paper_of(&row, IdField::Id, Authors::Listed).unwrap()),
            json!({"id": 7, "title": "T", "authors": [], "date": null, "source": "arxiv", "doi": null, "url": "u"})
        );
        assert!(paper_of(&json!({"title": "no id"}), IdField::Id, Authors::Listed).is_none());
        let matched =
            json!({"document_id": 9, "title": "M", "source_repository": "s", "matched_author": "A"});
        let bare = paper_of(&matched, IdField::DocumentId, Authors::IfGiven).unwrap();
        assert_eq!(bare["id"], 9);
        assert!(!bare.contains_key("authors"), "a match row without names claims no author list");
        let mut named = matched.clone();
        named["authors"] = json!("A, B, C, D");
        let named = paper_of(&named, IdField::DocumentId, Authors::IfGiven).unwrap();
        assert_eq!((named["authors"].clone(), named["authors_total"].clone()), (json!(["A", "B"]), json!(4)));
    }

    #[test]
    fn distances_keep_four_significant_digits() {
        let at = |distance: Value| {
            with_distance(Map::new(), &PaperRow::of(&json!({"distance": distance})))["distance"].clone()
        };
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
