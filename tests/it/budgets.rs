//! The context budgets of contract-notes 14 and 24, measured as clients hand
//! the bytes to a model (compact JSON): the model-visible listing, and the
//! first `search_corpus` page of 25 papers, on the short fixture corpus and
//! on the realistic slice (`fixtures/backend/realistic/`). The figures each
//! test prints are the ones docs/performance.md reports.

use serde_json::{Value, json};

use crate::fake_backend::{Corpus, corpus, realistic};
use crate::harness::{Fake, Session, env_for, start_fake_with, structured};

const LISTING_BUDGET: usize = 10_240;
/// Room kept under the listing budget for schema additions other work needs.
const LISTING_HEADROOM: usize = 200;
const SHORT_KEYWORD_PAGE: usize = 6_144;
const REALISTIC_KEYWORD_PAGE: usize = 7_168;
const REALISTIC_SEMANTIC_PAGE: usize = 7_680;

/// The fields a paper row may carry on a keyword page; `authors_total` only
/// when names were left out.
const ROW_FIELDS: [&str; 7] = ["id", "title", "authors", "date", "source", "doi", "url"];

#[test]
fn the_model_visible_listing_fits_its_budget_with_headroom() {
    let mut session = Session::initialized(&[]);
    let tools = session.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 25);
    let mut sizes: Vec<(usize, &str)> = tools
        .iter()
        .map(|tool| {
            let visible = json!({
                "name": tool["name"],
                "description": tool["description"],
                "inputSchema": tool["inputSchema"],
            });
            (visible.to_string().len(), tool["name"].as_str().unwrap())
        })
        .collect();
    let total: usize = sizes.iter().map(|(size, _)| size).sum();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    println!("model-visible listing: {total} B for {} tools; largest: {:?}", tools.len(), &sizes[..5]);
    assert!(
        total + LISTING_HEADROOM <= LISTING_BUDGET,
        "the listing is {total} B: over {LISTING_BUDGET} B less the {LISTING_HEADROOM} B of headroom \
         (contract-notes 14, 24)"
    );
}

/// A rig on its own fake, serving `corpus`.
fn session_on(corpus: Corpus) -> (Fake, Session) {
    let fake = start_fake_with(corpus);
    let session = Session::initialized(&env_for(&fake));
    (fake, session)
}

/// The answer of one call, and the bytes of its text content: the compact
/// JSON a client hands the model (structuredContent is the same JSON).
fn page(session: &mut Session, arguments: Value) -> (Value, usize) {
    let result = session.call("search_corpus", arguments);
    let answer = structured(&result).clone();
    let bytes = result["content"][0]["text"].as_str().unwrap().len();
    assert_eq!(bytes, answer.to_string().len(), "the text content is the compact answer");
    (answer, bytes)
}

/// What one page costs: per row, the bytes of keys and punctuation beyond
/// the values themselves, and the envelope around the rows.
fn overhead(answer: &Value, bytes: usize) -> String {
    let rows = answer["papers"].as_array().unwrap();
    let row_bytes: Vec<usize> = rows.iter().map(|row| row.to_string().len()).collect();
    let value_bytes = |row: &Value| -> usize {
        row.as_object()
            .unwrap()
            .values()
            .map(|value| match value {
                Value::String(text) => text.len(),
                Value::Array(names) => names.iter().map(|name| name.as_str().unwrap().len()).sum(),
                other => other.to_string().len(),
            })
            .sum()
    };
    let structure: usize = rows.iter().zip(&row_bytes).map(|(row, size)| size - value_bytes(row)).sum();
    let envelope = bytes - row_bytes.iter().sum::<usize>() - (rows.len() - 1);
    format!(
        "{bytes} B for {} rows: {:.0} B a row on average, of which {:.0} B are keys, quotes, commas and \
         brackets; {envelope} B outside the rows",
        rows.len(),
        row_bytes.iter().sum::<usize>() as f64 / rows.len() as f64,
        structure as f64 / rows.len() as f64,
    )
}

/// The stored rows of the realistic slice, by id.
fn realistic_rows() -> std::collections::BTreeMap<i64, Value> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backend/realistic/documents.json");
    let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(rows.len(), realistic::DOC_COUNT);
    rows.into_iter().map(|row| (row["id"].as_i64().unwrap(), row)).collect()
}

/// Every row is the shared paper row: only the contract's fields (and
/// `authors_total` exactly when names were cut), the names the first ones
/// stored, and no invented author.
fn check_rows(answer: &Value, extra: &[&str]) {
    let stored = realistic_rows();
    let mut cut = 0;
    for row in answer["papers"].as_array().unwrap() {
        let id = row["id"].as_i64().unwrap();
        let names: Vec<&str> = stored[&id]["authors"].as_str().unwrap().split(", ").collect();
        let shown: Vec<&str> =
            row["authors"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        assert!(!shown.is_empty() && shown.len() <= 6, "{row}");
        assert_eq!(shown, names[..shown.len()], "the first names, as stored: {row}");
        assert!(!shown.iter().any(|name| name.contains("et al")), "{row}");
        let mut allowed: Vec<&str> = ROW_FIELDS.iter().chain(extra).copied().collect();
        if shown.len() < names.len() {
            cut += 1;
            assert_eq!(row["authors_total"], json!(names.len()), "{row}");
            allowed.push("authors_total");
        } else {
            assert!(row.get("authors_total").is_none(), "only a cut list says how many: {row}");
        }
        let mut keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        allowed.sort_unstable();
        assert_eq!(keys, allowed, "{row}");
    }
    assert!(cut > 0, "the page has papers whose author lists were cut");
}

#[test]
fn a_keyword_page_of_realistic_papers_fits_its_budget() {
    let (_fake, mut session) = session_on(Corpus::Realistic);
    let (answer, bytes) = page(&mut session, json!({"query": realistic::QUERY}));
    assert_eq!(answer["mode"], "keyword");
    assert_eq!(answer["total"], realistic::QUERY_MATCHES, "the query matches far more than a page");
    assert_eq!(answer["papers"].as_array().unwrap().len(), 25);
    let dates: Vec<&str> =
        answer["papers"].as_array().unwrap().iter().map(|p| p["date"].as_str().unwrap()).collect();
    assert!(dates.windows(2).all(|pair| pair[0] >= pair[1]), "newest first: {dates:?}");
    let first = &answer["papers"][0];
    assert!(first["doi"].as_str().unwrap().starts_with("10.48550/arXiv.26"), "{first}");
    assert!(first["url"].as_str().unwrap().starts_with("https://arxiv.org/abs/26"), "{first}");
    check_rows(&answer, &[]);
    println!("realistic keyword page: {}", overhead(&answer, bytes));
    assert!(
        bytes <= REALISTIC_KEYWORD_PAGE,
        "{bytes} B is over {REALISTIC_KEYWORD_PAGE} B (contract-notes 14)"
    );
}

#[test]
fn a_semantic_page_of_realistic_papers_fits_its_budget() {
    let (_fake, mut session) = session_on(Corpus::Realistic);
    let (answer, bytes) = page(&mut session, json!({"query": realistic::QUERY, "mode": "semantic"}));
    assert_eq!(answer["mode"], "semantic");
    assert_eq!(answer["papers"].as_array().unwrap().len(), 25);
    assert!(answer["ranked_count"].as_i64().unwrap() >= 25, "{answer}");
    check_rows(&answer, &["distance"]);
    for row in answer["papers"].as_array().unwrap() {
        assert!(row["distance"].is_number(), "every row of this page is ranked: {row}");
        let distance = row["distance"].to_string();
        let digits = distance.trim_start_matches(['0', '.']).replace('.', "");
        assert!(digits.len() <= 4, "a distance keeps at most 4 significant digits: {distance}");
    }
    println!("realistic semantic page: {}", overhead(&answer, bytes));
    assert!(
        bytes <= REALISTIC_SEMANTIC_PAGE,
        "{bytes} B is over {REALISTIC_SEMANTIC_PAGE} B (contract-notes 14)"
    );
}

#[test]
fn a_keyword_page_of_the_short_corpus_fits_its_budget() {
    let (_fake, mut session) = session_on(Corpus::Short);
    let (answer, bytes) = page(&mut session, json!({"query": "synthetic"}));
    assert_eq!(answer["papers"].as_array().unwrap().len(), 25);
    assert_eq!(answer["total"], corpus::DOC_COUNT);
    println!("short-row keyword page: {}", overhead(&answer, bytes));
    assert!(bytes <= SHORT_KEYWORD_PAGE, "{bytes} B is over {SHORT_KEYWORD_PAGE} B (contract-notes 14)");
}
