//! What a typed serde projection of resmon's rows saves over walking a
//! `serde_json::Value` (issue 14 point 3). `bench` runs it under callgrind;
//! by hand:
//!
//!     projection value|mixed|typed health|search_corpus|get_execution BODY_FILE ROUNDS [ARGUMENTS]
//!
//! Each round turns resmon's body (read from BODY_FILE) into the tool's
//! compact answer text, the part of a call between the HTTP exchange and
//! the JSON-RPC framing; the last round's text is printed. ARGUMENTS is the
//! call's arguments as JSON (`{}` when left out); only search_corpus reads
//! them, for the mode asked (a semantic search resmon answered newest-first
//! says why).
//!
//! The three paths, and what each stands for:
//!
//! - `value` is the "before" baseline: the handlers' own Value walk as it
//!   stood at commit e5de538, copied from src/tools/system.rs (`health`),
//!   corpus.rs and papers.rs (`search_corpus` and the paper row) and
//!   executions.rs (`get_execution`, unpinned): parse into a Value, check
//!   and shape it, build the answer as a Value, serialise it.
//! - `mixed` reads typed rows that borrow from the body and skip the
//!   fields the answer does not use, then builds the answer as a Value, as a
//!   handler can while handlers return `Value` (`ToolResult`). The rows are
//!   read with the server's own reader (src/tools/loose.rs: `loose_row!`,
//!   `Scalar`, `Key`), so the figure is the cost of the code the server
//!   runs, not of a copy. That reader reads any JSON value, so the paths
//!   check `is_object` where resmon's reply must be an object, and a null
//!   reads as an absent field (a null list element as `Scalar::Other`,
//!   which no path keeps). There is no
//!   mixed get_execution: its answer is resmon's row whole, so reading it
//!   into a Value is the value path again.
//! - `typed` reads the same typed rows and writes the answer straight to
//!   text, keeping the fields passed through unchanged as resmon's raw JSON.
//!
//! The bench counts a path only once it prints the server's own answer byte
//! for byte, so each path keeps the handlers' rules: at most `AUTHORS_KEPT`
//! names with `authors_total` only when names were cut; a text field that is
//! absent or not a string is null; a ranked row's distance keeps 4
//! significant digits (contract-notes 24); a missing or malformed required
//! field is an error (though only the value path has the handlers'
//! sentences), a mistyped optional one reads as absent. Two differences the
//! fake's bodies cannot show, and a server adopting the typed path would
//! have to settle: a raw value is written as resmon wrote it, which is the
//! Value walk's text only while resmon writes JSON as serde_json does
//! (resmon's Python writes `1e-05` where serde_json writes `1e-5`), and a
//! key repeated in a row passed through whole is kept twice where a Value
//! keeps one.

// The handlers' error type, as in src/lib.rs: one per failed call.
#![allow(clippy::result_large_err)]

use std::borrow::Cow;
use std::fmt;
use std::hint::black_box;

use resmon_mcp::backend::{self, Kind};
use resmon_mcp::error::ToolError;
use resmon_mcp::identity;
use resmon_mcp::loose_row;
use resmon_mcp::tools::loose::{Key, Scalar, drain_map, text};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

const USAGE: &str = "usage: projection value|mixed|typed health|search_corpus|get_execution BODY_FILE ROUNDS \
    [ARGUMENTS] (mixed: health and search_corpus only)";

/// Names a paper row keeps (src/tools/papers.rs `AUTHORS_KEPT`).
const AUTHORS_KEPT: usize = 2;
/// Significant digits a distance keeps (papers.rs `DISTANCE_DIGITS`).
const DISTANCE_DIGITS: usize = 4;
/// What a declined ranking says when resmon gave no reason (corpus.rs
/// `mode_unavailable`); the answer must carry the server's very words.
const DECLINED_SILENTLY: &str = "resmon answered newest-first instead of ranking by meaning and did not \
    say why; treat this page as a keyword search.";

/// What the call asked for, as far as shaping its answer depends on it.
struct Asked {
    semantic: bool,
}

type Shape = fn(&[u8], &Asked) -> Result<Vec<u8>, ToolError>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (how, tool, file, rounds, arguments) = match args.as_slice() {
        [how, tool, file, rounds] => (how, tool, file, rounds, "{}"),
        [how, tool, file, rounds, arguments] => (how, tool, file, rounds, arguments.as_str()),
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let shape: Shape = match (how.as_str(), tool.as_str()) {
        ("value", "health") => value_path::health,
        ("value", "search_corpus") => value_path::search,
        ("value", "get_execution") => value_path::execution,
        ("mixed", "health") => mixed_path::health,
        ("mixed", "search_corpus") => mixed_path::search,
        ("typed", "health") => typed_path::health,
        ("typed", "search_corpus") => typed_path::search,
        ("typed", "get_execution") => typed_path::execution,
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let arguments: Value = serde_json::from_str(arguments).unwrap_or_else(|error| {
        eprintln!("projection: ARGUMENTS is not JSON ({error})\n{USAGE}");
        std::process::exit(2);
    });
    let asked = Asked { semantic: arguments.get("mode").and_then(Value::as_str) == Some("semantic") };
    let body = std::fs::read(file).unwrap_or_else(|error| panic!("cannot read {file}: {error}"));
    let rounds: usize = rounds.parse().expect("ROUNDS is a number");
    let mut last = Vec::new();
    for _ in 0..rounds {
        last = black_box(shape(black_box(&body), &asked)).unwrap_or_else(|error| panic!("{}", error.message));
    }
    println!("{}", String::from_utf8(last).expect("UTF-8"));
}

/// The answer's compact text, into a buffer of the size the server starts with.
fn write(answer: &impl Serialize) -> Vec<u8> {
    let mut text = Vec::with_capacity(4 * 1024);
    serde_json::to_writer(&mut text, answer).expect("the answer serialises");
    text
}

/// The handlers' shaping as it stood at e5de538: parse into a Value, walk
/// it, build the answer as a Value, serialise it.
mod value_path {
    use super::*;

    fn parse(bytes: &[u8]) -> Result<Value, ToolError> {
        serde_json::from_slice(bytes).map_err(|_| backend::unexpected_shape("route", "JSON"))
    }

    /// src/tools/system.rs `health`, after `checked_health` (unpinned).
    pub fn health(bytes: &[u8], _: &Asked) -> Result<Vec<u8>, ToolError> {
        let body = parse(bytes)?;
        if !body.is_object() {
            return Err(backend::unexpected_shape("GET /api/health", "an object"));
        }
        backend::require_fields("GET /api/health", &body, &[("status", Kind::String)])?;
        let identity_usable = identity::check_reply(&body, None).is_ok();
        let Value::Object(mut body) = body else { unreachable!() };
        let mut take = |name: &str| body.remove(name).unwrap_or(Value::Null);
        let identity = take("identity");
        let schema_version = match take("schema_version") {
            Value::Null => identity.get("schema_version").cloned().unwrap_or(Value::Null),
            value => value,
        };
        let mut answer = Map::new();
        answer.insert("status".into(), take("status"));
        answer.insert("version".into(), take("version"));
        answer.insert("schema_version".into(), schema_version);
        answer.insert("scheduler".into(), take("scheduler"));
        answer.insert("daemon".into(), take("daemon"));
        answer.insert("identity".into(), if identity_usable { identity } else { Value::Null });
        answer.insert("pid".into(), take("pid"));
        answer.insert("started_at".into(), take("started_at"));
        answer.insert("embeddings".into(), take("embeddings"));
        Ok(write(&Value::Object(answer)))
    }

    /// src/tools/corpus.rs `shape_search`, `mode_unavailable` and `paper`.
    pub fn search(bytes: &[u8], asked: &Asked) -> Result<Vec<u8>, ToolError> {
        const ROUTE: &str = "POST /api/explorer/search";
        let reply = parse(bytes)?;
        let rows = reply.get("results").and_then(Value::as_array);
        let total = reply.get("total").and_then(Value::as_i64);
        let (Some(rows), Some(total)) = (rows, total) else {
            return Err(backend::unexpected_shape(ROUTE, "an object with `results` and `total`"));
        };
        let served_semantic = reply.get("sort").and_then(Value::as_str) == Some("similarity");
        for row in rows {
            backend::require_fields(ROUTE, row, &[("id", Kind::Integer)])?;
        }
        let Some(papers) = rows.iter().map(|row| paper(row, served_semantic)).collect::<Option<Vec<Value>>>()
        else {
            return Err(backend::unexpected_shape(ROUTE, "papers carrying their corpus `id`"));
        };
        let next_cursor = reply.get("next_cursor").filter(|cursor| cursor.is_string()).cloned();
        let has_more = reply.get("has_more").and_then(Value::as_bool).unwrap_or(next_cursor.is_some());
        let mut answer = json!({
            "papers": papers,
            "next_cursor": next_cursor,
            "has_more": has_more,
            "total": total,
            "total_is_capped": reply.get("total_is_capped").and_then(Value::as_bool).unwrap_or(false),
            "mode": if served_semantic { "semantic" } else { "keyword" },
            "mode_unavailable": mode_unavailable(&reply, asked.semantic && !served_semantic),
        });
        if served_semantic {
            for name in ["ranked_count", "unranked_count", "model"] {
                answer[name] = field(&reply, name);
            }
        }
        Ok(write(&answer))
    }

    fn mode_unavailable(reply: &Value, declined: bool) -> Value {
        if !declined {
            return Value::Null;
        }
        match reply.get("similarity_unavailable").and_then(Value::as_str).filter(|s| !s.trim().is_empty()) {
            Some(sentence) => json!(sentence),
            None => json!(DECLINED_SILENTLY),
        }
    }

    fn field(body: &Value, name: &str) -> Value {
        body.get(name).cloned().unwrap_or(Value::Null)
    }

    /// corpus.rs `paper`: the shared row, with its distance on a ranking.
    fn paper(row: &Value, ranked: bool) -> Option<Value> {
        let paper = paper_row(row)?;
        Some(Value::Object(if ranked { with_distance(paper, row) } else { paper }))
    }

    /// papers.rs `paper` as search_corpus calls it (`IdField::Id`,
    /// `Authors::Listed`: the author list is always there).
    fn paper_row(row: &Value) -> Option<Map<String, Value>> {
        let id = row.get("id").and_then(Value::as_i64)?;
        let text =
            |name: &str| row.get(name).filter(|value| value.is_string()).cloned().unwrap_or(Value::Null);
        let mut out = Map::new();
        out.insert("id".into(), json!(id));
        out.insert("title".into(), text("title"));
        let names = author_names(row.get("authors"));
        let total = names.len();
        out.insert("authors".into(), json!(names.into_iter().take(AUTHORS_KEPT).collect::<Vec<_>>()));
        if total > AUTHORS_KEPT {
            out.insert("authors_total".into(), json!(total));
        }
        out.insert("date".into(), text("publication_date"));
        out.insert("source".into(), text("source_repository"));
        out.insert("doi".into(), text("doi"));
        out.insert("url".into(), text("url"));
        Some(out)
    }

    /// papers.rs `with_distance`.
    fn with_distance(mut paper: Map<String, Value>, row: &Value) -> Map<String, Value> {
        let distance = row.get("distance").and_then(Value::as_f64).map_or(Value::Null, round_distance);
        paper.insert("distance".into(), distance);
        paper
    }

    /// papers.rs `author_names`.
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

    /// papers.rs `round_distance`.
    fn round_distance(distance: f64) -> Value {
        if !distance.is_finite() {
            return Value::Null;
        }
        let text = format!("{:.*e}", DISTANCE_DIGITS - 1, distance);
        text.parse::<f64>().map_or(Value::Null, |rounded| json!(rounded))
    }

    /// src/tools/executions.rs `get_execution` (unpinned).
    pub fn execution(bytes: &[u8], _: &Asked) -> Result<Vec<u8>, ToolError> {
        let route = "GET /api/executions/119";
        let body = parse(bytes)?;
        if !body.is_object() {
            return Err(backend::unexpected_shape(route, "an object"));
        }
        let identity =
            if identity::check_reply(&body, None).is_ok() { body["identity"].clone() } else { Value::Null };
        backend::require_fields(route, &body, &[("id", Kind::Integer), ("status", Kind::String)])?;
        Ok(write(&execution_detail(body, identity)))
    }

    /// executions.rs `execution_detail`.
    fn execution_detail(body: Value, identity: Value) -> Value {
        let Value::Object(row) = body else { return Value::Null };
        let mut out = Map::new();
        for (key, value) in row {
            match key.as_str() {
                "parameters" | "progress_events" => {
                    out.insert(key, parse_json_text(Some(&value)));
                }
                "identity" => (),
                _ => {
                    out.insert(key, value);
                }
            }
        }
        for name in [
            "parameters",
            "coverage",
            "interrupted_reason",
            "owner_pid",
            "owner_runtime_id",
            "last_seen_at_utc",
            "restarted_from",
            "restarted_into",
            "progress_events",
        ] {
            out.entry(name).or_insert(Value::Null);
        }
        out.insert("identity".into(), identity);
        Value::Object(out)
    }

    /// src/tools/rows.rs `parse_json_text`.
    fn parse_json_text(value: Option<&Value>) -> Value {
        match value {
            Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
            Some(other) => other.clone(),
            None => Value::Null,
        }
    }
}

loose_row!(
    /// A search page's paper row as both typed paths read it: the fields
    /// the answer shows, and nothing else built.
    Row {
        id: Scalar<'a>,
        title: Scalar<'a>,
        authors: Names<'a>,
        publication_date: Scalar<'a>,
        source_repository: Scalar<'a>,
        doi: Scalar<'a>,
        url: Scalar<'a>,
        distance: Scalar<'a>,
    }
);

/// A row's `authors` as the typed paths read it: resmon's one comma-joined
/// string (backend-facts 3), or a list should a release send one. Anything
/// else reads as no names, as `author_names` in papers.rs reads it.
enum Names<'a> {
    Joined(Cow<'a, str>),
    Listed(Vec<Cow<'a, str>>),
    Neither,
}

impl<'de> Deserialize<'de> for Names<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = Names<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("author names")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Names<'de>, E> {
                Ok(Names::Joined(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Names<'de>, E> {
                Ok(Names::Joined(Cow::Owned(text.to_string())))
            }
            fn visit_string<E>(self, text: String) -> Result<Names<'de>, E> {
                Ok(Names::Joined(Cow::Owned(text)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Names<'de>, A::Error> {
                let mut names = Vec::new();
                while let Some(item) = seq.next_element::<Scalar<'de>>()? {
                    if let Scalar::Str(name) = item {
                        names.push(name);
                    }
                }
                Ok(Names::Listed(names))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Names<'de>, A::Error> {
                drain_map(map).map(|()| Names::Neither)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Names<'de>, E> {
                Ok(Names::Neither)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Names<'de>, E> {
                Ok(Names::Neither)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Names<'de>, E> {
                Ok(Names::Neither)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Names<'de>, E> {
                Ok(Names::Neither)
            }
            fn visit_unit<E>(self) -> Result<Names<'de>, E> {
                Ok(Names::Neither)
            }
        }
        deserializer.deserialize_any(Either)
    }
}

/// The names a paper row shows and how many it has, without a list of all
/// of them: the kept ones borrow from the row.
struct Cut<'a> {
    kept: [&'a str; AUTHORS_KEPT],
    total: usize,
}

impl<'a> Cut<'a> {
    fn of(names: Option<&'a Names<'_>>) -> Cut<'a> {
        let mut cut = Cut { kept: [""; AUTHORS_KEPT], total: 0 };
        match names {
            Some(Names::Joined(joined)) => joined.split(',').for_each(|name| cut.add(name)),
            Some(Names::Listed(names)) => names.iter().for_each(|name| cut.add(name)),
            Some(Names::Neither) | None => (),
        }
        cut
    }

    fn add(&mut self, name: &'a str) {
        let name = name.trim();
        if name.is_empty() {
            return;
        }
        if self.total < AUTHORS_KEPT {
            self.kept[self.total] = name;
        }
        self.total += 1;
    }

    fn kept(&self) -> &[&'a str] {
        &self.kept[..self.total.min(AUTHORS_KEPT)]
    }

    /// `authors_total`, which a row carries only when names were left out.
    fn total_if_cut(&self) -> Option<usize> {
        (self.total > AUTHORS_KEPT).then_some(self.total)
    }
}

/// A ranked row's distance, `DISTANCE_DIGITS` significant digits through
/// the decimal text as papers.rs rounds it; None where the row shows null.
fn rounded(distance: Option<&Scalar>) -> Option<f64> {
    let distance = distance?.as_f64().filter(|d| d.is_finite())?;
    format!("{:.*e}", DISTANCE_DIGITS - 1, distance).parse().ok()
}

/// A search page's `mode_unavailable`: resmon's reason for answering
/// newest-first when a ranking was asked for, or the server's sentence.
fn declined_reason<'a>(reason: Option<&'a Scalar>, declined: bool) -> Option<&'a str> {
    if !declined {
        return None;
    }
    let given = reason.and_then(Scalar::as_str).filter(|text| !text.trim().is_empty());
    Some(given.unwrap_or(DECLINED_SILENTLY))
}

/// Typed rows borrowed from the body; unused fields are skipped unbuilt, and
/// the answer is written straight to text.
mod typed_path {
    use super::*;

    loose_row!(IdentityRow {
        contract_version: Scalar<'a>,
        runtime_id: Scalar<'a>,
        schema_version: &'a RawValue,
    });

    impl IdentityRow<'_> {
        /// identity.rs `well_formed_runtime_id`.
        fn usable(&self) -> bool {
            self.contract_version.as_ref().and_then(Scalar::as_i64) == Some(1)
                && self.runtime_id.as_ref().and_then(Scalar::as_str).is_some_and(identity::is_canonical_uuid4)
        }
    }

    /// The identity block, read when it is an object at all.
    fn identity_of(raw: Option<&RawValue>) -> Option<IdentityRow<'_>> {
        serde_json::from_str(raw?.get()).ok().filter(|row: &IdentityRow| row.is_object)
    }

    loose_row!(HealthRow {
        status: Scalar<'a>,
        version: &'a RawValue,
        schema_version: &'a RawValue,
        scheduler: &'a RawValue,
        daemon: &'a RawValue,
        identity: &'a RawValue,
        pid: &'a RawValue,
        started_at: &'a RawValue,
        embeddings: &'a RawValue,
    });

    struct HealthAnswer<'a> {
        status: &'a str,
        version: Option<&'a RawValue>,
        schema_version: Option<&'a RawValue>,
        scheduler: Option<&'a RawValue>,
        daemon: Option<&'a RawValue>,
        identity: Option<&'a RawValue>,
        pid: Option<&'a RawValue>,
        started_at: Option<&'a RawValue>,
        embeddings: Option<&'a RawValue>,
    }

    impl Serialize for HealthAnswer<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(9))?;
            map.serialize_entry("status", self.status)?;
            map.serialize_entry("version", &self.version)?;
            map.serialize_entry("schema_version", &self.schema_version)?;
            map.serialize_entry("scheduler", &self.scheduler)?;
            map.serialize_entry("daemon", &self.daemon)?;
            map.serialize_entry("identity", &self.identity)?;
            map.serialize_entry("pid", &self.pid)?;
            map.serialize_entry("started_at", &self.started_at)?;
            map.serialize_entry("embeddings", &self.embeddings)?;
            map.end()
        }
    }

    fn not_an_object(route: &str) -> ToolError {
        backend::unexpected_shape(route, "an object")
    }

    pub fn health(bytes: &[u8], _: &Asked) -> Result<Vec<u8>, ToolError> {
        const ROUTE: &str = "GET /api/health";
        // The loose reader reads any JSON value; only an object is a health reply.
        let row: HealthRow = serde_json::from_slice(bytes)
            .ok()
            .filter(|row: &HealthRow| row.is_object)
            .ok_or_else(|| not_an_object(ROUTE))?;
        let Some(status) = row.status.as_ref().and_then(Scalar::as_str) else {
            return Err(backend::unexpected_shape(ROUTE, "a `status` string"));
        };
        let identity = identity_of(row.identity);
        let schema_version = row.schema_version.or_else(|| identity.as_ref()?.schema_version);
        Ok(write(&HealthAnswer {
            status,
            version: row.version,
            schema_version,
            scheduler: row.scheduler,
            daemon: row.daemon,
            identity: row.identity.filter(|_| identity.as_ref().is_some_and(IdentityRow::usable)),
            pid: row.pid,
            started_at: row.started_at,
            embeddings: row.embeddings,
        }))
    }

    loose_row!(SearchReply {
        results: Vec<Row<'a>>,
        total: Scalar<'a>,
        next_cursor: Scalar<'a>,
        has_more: Scalar<'a>,
        total_is_capped: Scalar<'a>,
        sort: Scalar<'a>,
        similarity_unavailable: Scalar<'a>,
        ranked_count: &'a RawValue,
        unranked_count: &'a RawValue,
        model: &'a RawValue,
    });

    struct Paper<'a> {
        id: i64,
        title: Option<&'a str>,
        authors: Cut<'a>,
        date: Option<&'a str>,
        source: Option<&'a str>,
        doi: Option<&'a str>,
        url: Option<&'a str>,
        /// Present (possibly null) on a ranked page only.
        distance: Option<Option<f64>>,
    }

    impl Serialize for Paper<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("id", &self.id)?;
            map.serialize_entry("title", &self.title)?;
            map.serialize_entry("authors", self.authors.kept())?;
            if let Some(total) = self.authors.total_if_cut() {
                map.serialize_entry("authors_total", &total)?;
            }
            map.serialize_entry("date", &self.date)?;
            map.serialize_entry("source", &self.source)?;
            map.serialize_entry("doi", &self.doi)?;
            map.serialize_entry("url", &self.url)?;
            if let Some(distance) = &self.distance {
                map.serialize_entry("distance", distance)?;
            }
            map.end()
        }
    }

    struct SearchAnswer<'a> {
        papers: Vec<Paper<'a>>,
        next_cursor: Option<&'a str>,
        has_more: bool,
        total: i64,
        total_is_capped: bool,
        mode: &'static str,
        mode_unavailable: Option<&'a str>,
        /// ranked_count, unranked_count and model, on a ranked page only.
        semantic: Option<[Option<&'a RawValue>; 3]>,
    }

    impl Serialize for SearchAnswer<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("papers", &self.papers)?;
            map.serialize_entry("next_cursor", &self.next_cursor)?;
            map.serialize_entry("has_more", &self.has_more)?;
            map.serialize_entry("total", &self.total)?;
            map.serialize_entry("total_is_capped", &self.total_is_capped)?;
            map.serialize_entry("mode", self.mode)?;
            map.serialize_entry("mode_unavailable", &self.mode_unavailable)?;
            if let Some(fields) = &self.semantic {
                for (name, value) in ["ranked_count", "unranked_count", "model"].iter().zip(fields) {
                    map.serialize_entry(name, value)?;
                }
            }
            map.end()
        }
    }

    pub fn search(bytes: &[u8], asked: &Asked) -> Result<Vec<u8>, ToolError> {
        const ROUTE: &str = "POST /api/explorer/search";
        let shape = || backend::unexpected_shape(ROUTE, "an object with `results` and `total`");
        let reply: SearchReply = serde_json::from_slice(bytes).map_err(|_| shape())?;
        let (Some(rows), Some(total)) = (&reply.results, reply.total.as_ref().and_then(Scalar::as_i64))
        else {
            return Err(shape());
        };
        let ranked = text(&reply.sort) == Some("similarity");
        let mut papers = Vec::with_capacity(rows.len());
        for row in rows {
            let Some(id) = row.id.as_ref().and_then(Scalar::as_i64) else {
                return Err(backend::unexpected_shape(ROUTE, "papers carrying their corpus `id`"));
            };
            papers.push(Paper {
                id,
                title: text(&row.title),
                authors: Cut::of(row.authors.as_ref()),
                date: text(&row.publication_date),
                source: text(&row.source_repository),
                doi: text(&row.doi),
                url: text(&row.url),
                distance: ranked.then(|| rounded(row.distance.as_ref())),
            });
        }
        let next_cursor = text(&reply.next_cursor);
        let declined = asked.semantic && !ranked;
        Ok(write(&SearchAnswer {
            papers,
            next_cursor,
            has_more: reply.has_more.as_ref().and_then(Scalar::as_bool).unwrap_or(next_cursor.is_some()),
            total,
            total_is_capped: reply.total_is_capped.as_ref().and_then(Scalar::as_bool).unwrap_or(false),
            mode: if ranked { "semantic" } else { "keyword" },
            mode_unavailable: declined_reason(reply.similarity_unavailable.as_ref(), declined),
            semantic: ranked.then_some([reply.ranked_count, reply.unranked_count, reply.model]),
        }))
    }

    /// A row passed through whole, in resmon's order, each value as the raw
    /// text resmon sent.
    struct RawRow<'a>(Vec<(Key<'a>, &'a RawValue)>);

    impl<'de> Deserialize<'de> for RawRow<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Fields;
            impl<'de> Visitor<'de> for Fields {
                type Value = RawRow<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawRow<'de>, A::Error> {
                    let mut fields = Vec::with_capacity(48);
                    while let Some(entry) = map.next_entry::<Key<'de>, &'de RawValue>()? {
                        fields.push(entry);
                    }
                    Ok(RawRow(fields))
                }
            }
            deserializer.deserialize_map(Fields)
        }
    }

    /// One value of the answer: resmon's own text, or one this server made.
    enum Out<'a> {
        Raw(&'a RawValue),
        Made(Value),
    }

    impl Serialize for Out<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            match self {
                Out::Raw(raw) => raw.serialize(serializer),
                Out::Made(value) => value.serialize(serializer),
            }
        }
    }

    struct Ordered<'a>(Vec<(Cow<'a, str>, Out<'a>)>);

    impl Serialize for Ordered<'_> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(self.0.len()))?;
            for (key, value) in &self.0 {
                map.serialize_entry(key.as_ref(), value)?;
            }
            map.end()
        }
    }

    /// A column resmon may keep as JSON text, decoded (rows.rs
    /// `parse_json_text`); text that does not decode, and any value that is
    /// not text, stays as resmon sent it.
    fn decoded(raw: &RawValue) -> Out<'_> {
        if !raw.get().starts_with('"') {
            return Out::Raw(raw);
        }
        match serde_json::from_str::<Scalar>(raw.get()) {
            Ok(Scalar::Str(text)) => serde_json::from_str(&text).map_or(Out::Raw(raw), Out::Made),
            _ => Out::Raw(raw),
        }
    }

    /// Fields the answer always carries, null when resmon has none.
    const ALWAYS: [&str; 9] = [
        "parameters",
        "coverage",
        "interrupted_reason",
        "owner_pid",
        "owner_runtime_id",
        "last_seen_at_utc",
        "restarted_from",
        "restarted_into",
        "progress_events",
    ];

    pub fn execution(bytes: &[u8], _: &Asked) -> Result<Vec<u8>, ToolError> {
        let route = "GET /api/executions/119";
        let RawRow(row) = serde_json::from_slice(bytes).map_err(|_| not_an_object(route))?;
        let scalar = |name: &str| {
            row.iter()
                .find(|(key, _)| key.0 == name)
                .and_then(|(_, raw)| serde_json::from_str::<Scalar>(raw.get()).ok())
        };
        if !scalar("id").is_some_and(|id| id.is_integer())
            || scalar("status").and_then(|s| s.as_str().map(|_| ())).is_none()
        {
            return Err(backend::unexpected_shape(route, "a run with an integer `id` and a `status`"));
        }
        let identity = row.iter().find(|(key, _)| key.0 == "identity").map(|(_, raw)| *raw);
        let identity =
            identity.filter(|raw| identity_of(Some(raw)).as_ref().is_some_and(IdentityRow::usable));
        let mut out: Vec<(Cow<str>, Out)> = Vec::with_capacity(row.len() + ALWAYS.len());
        for (Key(key), raw) in row {
            match key.as_ref() {
                "parameters" | "progress_events" => out.push((key, decoded(raw))),
                "identity" => (),
                _ => out.push((key, Out::Raw(raw))),
            }
        }
        for name in ALWAYS {
            if !out.iter().any(|(key, _)| key == name) {
                out.push((name.into(), Out::Made(Value::Null)));
            }
        }
        out.push(("identity".into(), identity.map_or(Out::Made(Value::Null), Out::Raw)));
        Ok(write(&Ordered(out)))
    }
}

/// Typed rows in, the answer built as a `Value` as handlers must return it.
mod mixed_path {
    use super::*;

    loose_row!(HealthRow {
        status: Scalar<'a>,
        version: Value,
        schema_version: Value,
        scheduler: Value,
        daemon: Value,
        identity: Value,
        pid: Value,
        started_at: Value,
        embeddings: Value,
    });

    pub fn health(bytes: &[u8], _: &Asked) -> Result<Vec<u8>, ToolError> {
        const ROUTE: &str = "GET /api/health";
        let row: HealthRow = serde_json::from_slice(bytes)
            .ok()
            .filter(|row: &HealthRow| row.is_object)
            .ok_or_else(|| backend::unexpected_shape(ROUTE, "an object"))?;
        let Some(status) = row.status.as_ref().and_then(Scalar::as_str) else {
            return Err(backend::unexpected_shape(ROUTE, "a `status` string"));
        };
        let identity = row.identity.unwrap_or(Value::Null);
        let usable = identity.get("contract_version").and_then(Value::as_i64) == Some(1)
            && identity.get("runtime_id").and_then(Value::as_str).is_some_and(identity::is_canonical_uuid4);
        let schema_version =
            row.schema_version.or_else(|| identity.get("schema_version").cloned()).unwrap_or(Value::Null);
        let or_null = |value: Option<Value>| value.unwrap_or(Value::Null);
        let mut answer = Map::new();
        answer.insert("status".into(), json!(status));
        answer.insert("version".into(), or_null(row.version));
        answer.insert("schema_version".into(), schema_version);
        answer.insert("scheduler".into(), or_null(row.scheduler));
        answer.insert("daemon".into(), or_null(row.daemon));
        answer.insert("identity".into(), if usable { identity } else { Value::Null });
        answer.insert("pid".into(), or_null(row.pid));
        answer.insert("started_at".into(), or_null(row.started_at));
        answer.insert("embeddings".into(), or_null(row.embeddings));
        Ok(write(&Value::Object(answer)))
    }

    loose_row!(SearchReply {
        results: Vec<Row<'a>>,
        total: Scalar<'a>,
        next_cursor: Scalar<'a>,
        has_more: Scalar<'a>,
        total_is_capped: Scalar<'a>,
        sort: Scalar<'a>,
        similarity_unavailable: Scalar<'a>,
        ranked_count: Value,
        unranked_count: Value,
        model: Value,
    });

    fn text_or_null(field: &Option<Scalar>) -> Value {
        text(field).map_or(Value::Null, |text| Value::String(text.to_string()))
    }

    pub fn search(bytes: &[u8], asked: &Asked) -> Result<Vec<u8>, ToolError> {
        const ROUTE: &str = "POST /api/explorer/search";
        let shape = || backend::unexpected_shape(ROUTE, "an object with `results` and `total`");
        let reply: SearchReply = serde_json::from_slice(bytes).map_err(|_| shape())?;
        let (Some(rows), Some(total)) = (&reply.results, reply.total.as_ref().and_then(Scalar::as_i64))
        else {
            return Err(shape());
        };
        let ranked = text(&reply.sort) == Some("similarity");
        let mut papers = Vec::with_capacity(rows.len());
        for row in rows {
            let Some(id) = row.id.as_ref().and_then(Scalar::as_i64) else {
                return Err(backend::unexpected_shape(ROUTE, "papers carrying their corpus `id`"));
            };
            let authors = Cut::of(row.authors.as_ref());
            let mut paper = Map::new();
            paper.insert("id".into(), json!(id));
            paper.insert("title".into(), text_or_null(&row.title));
            paper.insert("authors".into(), json!(authors.kept()));
            if let Some(total) = authors.total_if_cut() {
                paper.insert("authors_total".into(), json!(total));
            }
            paper.insert("date".into(), text_or_null(&row.publication_date));
            paper.insert("source".into(), text_or_null(&row.source_repository));
            paper.insert("doi".into(), text_or_null(&row.doi));
            paper.insert("url".into(), text_or_null(&row.url));
            if ranked {
                paper.insert("distance".into(), json!(rounded(row.distance.as_ref())));
            }
            papers.push(Value::Object(paper));
        }
        let next_cursor = text_or_null(&reply.next_cursor);
        let has_more = reply.has_more.as_ref().and_then(Scalar::as_bool).unwrap_or(!next_cursor.is_null());
        let declined = asked.semantic && !ranked;
        let mut answer = Map::new();
        answer.insert("papers".into(), Value::Array(papers));
        answer.insert("next_cursor".into(), next_cursor);
        answer.insert("has_more".into(), json!(has_more));
        answer.insert("total".into(), json!(total));
        answer.insert(
            "total_is_capped".into(),
            json!(reply.total_is_capped.as_ref().and_then(Scalar::as_bool).unwrap_or(false)),
        );
        answer.insert("mode".into(), json!(if ranked { "semantic" } else { "keyword" }));
        answer.insert(
            "mode_unavailable".into(),
            json!(declined_reason(reply.similarity_unavailable.as_ref(), declined)),
        );
        if ranked {
            let or_null = |value: Option<Value>| value.unwrap_or(Value::Null);
            answer.insert("ranked_count".into(), or_null(reply.ranked_count));
            answer.insert("unranked_count".into(), or_null(reply.unranked_count));
            answer.insert("model".into(), or_null(reply.model));
        }
        Ok(write(&Value::Object(answer)))
    }
}
