//! The corpus, source, insight and export reads against the fake backend:
//! what each sends, how each answer is shaped, what each refuses before
//! sending anything, and how resmon's statuses come back.

use serde_json::{Value, json};

use crate::fake_backend::{Fault, Recorded, corpus};
use crate::harness::{Fake, Session, cli_call, connected, env_for, start_fake, structured, tool_error};

/// The sentence the fake answers a declined ranking with when no model is set.
const NO_MODEL: &str = "No embedding model is configured, so resmon cannot rank by meaning. Set one up in Settings → AI → Embeddings.";

/// A session against its own fake. Fields drop in order: the server first,
/// then the fake (and its folder).
struct Rig {
    session: Session,
    fake: Fake,
}

fn rig() -> Rig {
    let (fake, session) = connected();
    Rig { session, fake }
}

impl Rig {
    /// One call, and the requests it sent apart from discovery's health check.
    fn call(&mut self, tool: &str, arguments: Value) -> (Value, Vec<Recorded>) {
        self.fake.clear_requests();
        let result = self.session.call(tool, arguments);
        let sent = self.fake.requests().into_iter().filter(|r| r.path != "/api/health").collect();
        (result, sent)
    }

    fn ok(&mut self, tool: &str, arguments: Value) -> (Value, Vec<Recorded>) {
        let (result, sent) = self.call(tool, arguments);
        (structured(&result).clone(), sent)
    }

    fn err(&mut self, tool: &str, arguments: Value) -> (Value, Vec<Recorded>) {
        let (result, sent) = self.call(tool, arguments);
        (tool_error(&result), sent)
    }

    /// A refusal that must happen before anything reaches resmon, health included.
    fn refused(&mut self, tool: &str, arguments: Value, argument: &str) -> Value {
        self.fake.clear_requests();
        let result = self.session.call(tool, arguments.clone());
        let error = tool_error(&result);
        assert_eq!(error["error"], "invalid_argument", "{tool} {arguments}: {error}");
        assert_eq!(error["detail"]["argument"], argument, "{tool} {arguments}: {error}");
        let sent: Vec<String> =
            self.fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
        assert!(sent.is_empty(), "{tool} {arguments} was refused but still sent {sent:?}");
        error
    }
}

fn only(sent: &[Recorded]) -> &Recorded {
    assert_eq!(sent.len(), 1, "expected one request, got {:?}", paths(sent));
    &sent[0]
}

fn paths(sent: &[Recorded]) -> Vec<String> {
    sent.iter().map(|r| format!("{} {}", r.method, r.path)).collect()
}

fn pairs(request: &Recorded) -> Vec<(&str, &str)> {
    request.query_pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

fn ids(papers: &Value) -> Vec<i64> {
    papers.as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect()
}

fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/backend").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

// ====================================================================== search_corpus

#[test]
fn search_corpus_keyword_sends_newest_and_answers_compact_papers_with_a_cursor() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("search_corpus", json!({"query": "synthetic"}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/api/explorer/search"));
    assert_eq!(request.json().unwrap(), json!({"query": "synthetic", "limit": 25, "sort": "newest"}));

    assert_eq!(answer["mode"], "keyword");
    assert_eq!(
        answer.get("mode_unavailable"),
        Some(&Value::Null),
        "present and null when nothing was declined"
    );
    for field in ["ranked_count", "unranked_count", "model"] {
        assert!(answer.get(field).is_none(), "{field} is a semantic-mode field only");
    }
    assert_eq!(answer["total"], 34);
    assert_eq!(answer["total_is_capped"], false);
    assert_eq!(answer["has_more"], true);
    assert_eq!(answer["papers"].as_array().unwrap().len(), 25);
    assert_eq!(
        answer["papers"][0],
        json!({"id": 801, "title": "Synthetic paper about graph attention",
               "authors": ["Test Author One", "Test Author Two"], "date": "2026-09-20", "source": "arxiv",
               "doi": "10.5555/resmon-fake.0001", "url": "https://example.org/arxiv/2609.90001"})
    );
    assert!(answer["papers"][0].get("distance").is_none(), "keyword papers carry no distance");

    let cursor = answer["next_cursor"].as_str().expect("a first page has a cursor").to_string();
    let (second, sent) = rig.ok("search_corpus", json!({"query": "synthetic", "cursor": cursor}));
    assert_eq!(
        only(&sent).json().unwrap(),
        json!({"query": "synthetic", "limit": 25, "sort": "newest", "cursor": cursor})
    );
    assert_eq!(second["next_cursor"], Value::Null);
    assert_eq!(second["has_more"], false);
    let mut all = ids(&answer["papers"]);
    all.extend(ids(&second["papers"]));
    all.sort_unstable();
    assert_eq!(all, (corpus::FIRST_DOC..=corpus::LAST_DOC).collect::<Vec<_>>());
    let undated = second["papers"].as_array().unwrap().last().unwrap();
    assert_eq!(undated["id"], corpus::DOC_UNDATED);
    assert_eq!(undated["date"], Value::Null);
    let no_doi = second["papers"].as_array().unwrap().iter().find(|p| p["id"] == corpus::DOC_NO_DOI).unwrap();
    assert_eq!(no_doi["doi"], Value::Null);
}

#[test]
fn search_corpus_sends_filters_only_when_given_and_clamps_the_limit() {
    let mut rig = rig();
    let (_, sent) = rig.ok(
        "search_corpus",
        json!({"query": "graph", "sources": ["arxiv", "pubmed"], "date_from": "2026-08-01",
               "date_to": "2026-09-01", "limit": 500}),
    );
    assert_eq!(
        only(&sent).json().unwrap(),
        json!({"query": "graph", "limit": 100, "sort": "newest", "sources": ["arxiv", "pubmed"],
               "date_from": "2026-08-01", "date_to": "2026-09-01"})
    );
    let (answer, sent) = rig.ok("search_corpus", json!({"query": "graph", "sources": [], "limit": 3}));
    assert_eq!(only(&sent).json().unwrap(), json!({"query": "graph", "limit": 3, "sort": "newest"}));
    assert_eq!(answer["papers"].as_array().unwrap().len(), 3);
}

#[test]
fn search_corpus_semantic_reports_distances_and_the_unranked_tail() {
    let mut rig = rig();
    let (answer, sent) = rig
        .ok("search_corpus", json!({"query": "protein folding", "mode": "semantic", "sources": ["biorxiv"]}));
    assert_eq!(
        only(&sent).json().unwrap(),
        json!({"query": "protein folding", "limit": 25, "sort": "similarity", "sources": ["biorxiv"]})
    );
    assert_eq!(answer["mode"], "semantic");
    assert_eq!(answer["mode_unavailable"], Value::Null);
    assert_eq!(answer["model"], "nomic-embed-text");
    assert_eq!(answer["ranked_count"], 8);
    assert_eq!(answer["unranked_count"], 1);
    assert_eq!(answer["total"], 9);
    let papers = answer["papers"].as_array().unwrap();
    let distances: Vec<f64> = papers[..8].iter().map(|p| p["distance"].as_f64().unwrap()).collect();
    assert!(distances.windows(2).all(|w| w[0] <= w[1]), "ranked nearest first: {distances:?}");
    assert_eq!(papers[8]["id"], 833, "the paper with no vector is appended");
    assert!(papers[8].get("distance").is_some_and(Value::is_null), "unranked rows carry distance: null");
    assert_eq!(papers[8]["authors"], json!(["Test Author Five", "Test Autor Ñandú"]));
}

#[test]
fn search_corpus_a_declined_ranking_is_answered_as_keyword_with_the_reason() {
    let mut rig = rig();
    rig.fake.state().embeddings_configured = false;
    let (answer, sent) = rig.ok("search_corpus", json!({"query": "graph attention", "mode": "semantic"}));
    assert_eq!(only(&sent).json().unwrap()["sort"], "similarity");
    assert_eq!(answer["mode"], "keyword");
    assert_eq!(answer["mode_unavailable"], NO_MODEL);
    for field in ["ranked_count", "unranked_count", "model"] {
        assert_eq!(answer[field], Value::Null, "{field}");
    }
    assert!(answer["papers"].as_array().unwrap().iter().all(|p| p.get("distance").is_none()));

    // resmon declined without a sentence: the answer still says it was declined.
    rig.fake.override_response(
        "POST",
        "/api/explorer/search",
        200,
        &[],
        r#"{"results": [], "next_cursor": null, "has_more": false, "total": 0, "total_is_capped": false, "sort": "newest"}"#,
    );
    let (answer, _) = rig.ok("search_corpus", json!({"query": "x", "mode": "semantic"}));
    assert_eq!(answer["mode"], "keyword");
    let reason = answer["mode_unavailable"].as_str().unwrap();
    assert!(reason.contains("its `newest` sort") && reason.contains("gave no reason"), "{answer}");
    assert_eq!(answer["papers"], json!([]));

    // Declined without a sentence and without naming a sort: the answer
    // claims no order resmon did not state.
    rig.fake.override_response(
        "POST",
        "/api/explorer/search",
        200,
        &[],
        r#"{"results": [], "next_cursor": null, "has_more": false, "total": 0, "total_is_capped": false}"#,
    );
    let (answer, _) = rig.ok("search_corpus", json!({"query": "x", "mode": "semantic"}));
    assert_eq!(answer["mode"], "keyword");
    let reason = answer["mode_unavailable"].as_str().unwrap();
    assert!(reason.contains("did not say how it sorted this page"), "{answer}");
    assert!(!reason.contains("newest"), "no order resmon did not state: {reason}");
}

#[test]
fn search_corpus_cuts_long_author_lists_without_inventing_an_author() {
    let mut rig = rig();
    let names: Vec<String> = (1..=9).map(|n| format!("Person {n}")).collect();
    let row = json!({"id": 5, "source_repository": "openalex", "external_id": "W1", "doi": null,
        "title": "Big collaboration", "authors": names.join(", "), "abstract": "long text",
        "publication_date": "2026", "url": null, "categories": "a, b", "metadata_hash": "h",
        "first_seen_at": "2026-01-01 00:00:00", "pub_sort": "2026"});
    let body = json!({"results": [row, {"id": 6, "source_repository": "arxiv", "title": "Nobody", "authors": "",
        "publication_date": null, "doi": null, "url": null}], "next_cursor": null, "has_more": false,
        "total": 2, "total_is_capped": false, "sort": "newest"});
    rig.fake.override_response("POST", "/api/explorer/search", 200, &[], &body.to_string());
    let (answer, _) = rig.ok("search_corpus", json!({"query": "collaboration"}));
    assert_eq!(
        answer["papers"][0],
        json!({"id": 5, "title": "Big collaboration", "authors": ["Person 1", "Person 2"],
               "authors_total": 9, "date": "2026", "source": "openalex", "doi": null, "url": null})
    );
    assert!(!answer.to_string().contains("et al"), "no name that is not an author");
    assert_eq!(answer["papers"][1]["authors"], json!([]));
    assert!(answer["papers"][1].get("authors_total").is_none(), "only a cut list is counted");
}

#[test]
fn every_tool_that_lists_papers_cuts_authors_the_same_way() {
    let mut rig = rig();
    let many = (1..=8).map(|n| format!("Member {n}")).collect::<Vec<_>>().join(", ");
    let expected = json!(["Member 1", "Member 2"]);
    let doc = json!({"id": 801, "source_repository": "arxiv", "title": "Team paper", "authors": many,
        "publication_date": "2026-09-20", "doi": null, "url": null, "distance": 0.123456789});
    let search = json!({"results": [doc], "next_cursor": null, "has_more": false, "total": 1,
        "total_is_capped": false, "sort": "similarity", "ranked_count": 1, "unranked_count": 0, "model": "m"});
    rig.fake.override_response("POST", "/api/explorer/search", 200, &[], &search.to_string());
    let similar = json!({"document_id": 802, "model": "m", "neighbours": [doc], "reason": null});
    rig.fake.override_response("GET", "/api/documents/802/similar", 200, &[], &similar.to_string());
    let record = json!([{"id": 801, "title": "Team paper", "authors": many, "publication_date": "2026-09-20",
        "doi": null, "url": null, "source_repository": "arxiv", "external_id": "x", "categories": null,
        "abstract": null}]);
    rig.fake.override_response("GET", "/api/executions/119/references", 200, &[], &record.to_string());
    let answers = [
        rig.ok("search_corpus", json!({"query": "team", "mode": "semantic"})).0["papers"][0].clone(),
        rig.ok("find_similar", json!({"doc_id": 802})).0["papers"][0].clone(),
        rig.ok("get_execution_results", json!({"exec_id": 119})).0["papers"][0].clone(),
    ];
    for paper in &answers {
        assert_eq!(
            (paper["authors"].clone(), paper["authors_total"].clone()),
            (expected.clone(), json!(8)),
            "{paper}"
        );
    }
    // One rounding for every tool: 4 significant digits (contract-notes 24).
    assert_eq!(answers[0]["distance"], json!(0.1235), "{}", answers[0]);
    assert_eq!(answers[1]["distance"], json!(0.1235), "{}", answers[1]);
}

#[test]
fn search_corpus_refuses_an_offset_and_bad_arguments_before_sending() {
    let mut rig = rig();
    let listed = rig.session.request("tools/list", json!({}));
    let search =
        listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "search_corpus").unwrap();
    assert!(search["inputSchema"]["properties"].get("offset").is_none(), "offset is not advertised");
    let error = rig.refused("search_corpus", json!({"query": "graph", "offset": 25}), "offset");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("next_cursor") && message.contains("`cursor`"), "{message}");
    rig.refused(
        "search_corpus",
        json!({"query": "graph", "offset": 0, "cursor": "2026-09-01|801"}),
        "offset",
    );
    // Any offset at all meets the same explanation, whatever its type.
    for offset in [json!("5"), json!(2.5), json!(null)] {
        let error = rig.refused("search_corpus", json!({"query": "graph", "offset": offset}), "offset");
        assert!(error["message"].as_str().unwrap().contains("next_cursor"), "{offset}");
    }
    rig.refused("search_corpus", json!({}), "query");
    rig.refused("search_corpus", json!({"query": "graph", "mode": "fuzzy"}), "mode");
    rig.refused("search_corpus", json!({"query": "graph", "limit": 0}), "limit");
    rig.refused("search_corpus", json!({"query": "graph", "sources": "arxiv"}), "sources");
    rig.refused("search_corpus", json!({"query": "graph", "page": 2}), "page");
}

#[test]
fn search_corpus_maps_resmons_refusals_and_failures() {
    let mut rig = rig();
    // The fake's own 400 for a newest cursor without '|'.
    let (error, sent) = rig.err("search_corpus", json!({"query": "graph", "cursor": "garbage"}));
    assert_eq!(only(&sent).status, 400);
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(error["message"], "Malformed cursor: 'garbage'");

    let validation = r#"{"detail": [{"type": "string_type", "loc": ["body", "query"], "msg": "Input should be a valid string", "input": 5}]}"#;
    rig.fake.override_response("POST", "/api/explorer/search", 422, &[], validation);
    let (error, _) = rig.err("search_corpus", json!({"query": "graph"}));
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(error["detail"]["problems"][0]["msg"], "Input should be a valid string");

    rig.fake.override_response(
        "POST",
        "/api/explorer/search",
        500,
        &[("Content-Type", "text/plain")],
        "Internal Server Error",
    );
    let (error, _) = rig.err("search_corpus", json!({"query": "graph"}));
    assert_eq!(error["error"], "upstream_error");

    rig.fake.clear_overrides();
    rig.fake.set_fault_for("POST", "/api/explorer/search", Fault::WrongShape200);
    let (error, _) = rig.err("search_corpus", json!({"query": "graph"}));
    assert_eq!(error["error"], "upstream_error");
}

#[test]
fn search_corpus_through_the_cli() {
    let fake = start_fake();
    let (code, answer, output) =
        cli_call("search_corpus", json!({"query": "graph attention", "limit": 2}), &env_for(&fake));
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(answer["mode"], "keyword");
    assert_eq!(answer["papers"].as_array().unwrap().len(), 2);
    assert!(answer["next_cursor"].is_string());
    let searches = fake.requests_to("POST", "/api/explorer/search");
    assert_eq!(searches.len(), 1);
    assert_eq!(searches[0].json().unwrap()["limit"], 2);

    let (code, error, _) = cli_call("search_corpus", json!({"query": "x", "offset": 3}), &env_for(&fake));
    assert_eq!(code, Some(1));
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(fake.requests_to("POST", "/api/explorer/search").len(), 1, "the offset call sent nothing");
}

// ====================================================================== find_similar

#[test]
fn find_similar_sends_k_and_answers_neighbours_with_distances() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("find_similar", json!({"doc_id": 801}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/api/documents/801/similar"));
    assert_eq!(pairs(request), [("k", "25")]);
    assert_eq!(answer["document_id"], 801);
    assert_eq!(answer["model"], "nomic-embed-text");
    assert_eq!(answer["reason"], Value::Null);
    let papers = answer["papers"].as_array().unwrap();
    assert_eq!(papers.len(), 25);
    assert!(!ids(&answer["papers"]).contains(&801), "the paper itself is not its own neighbour");
    let distances: Vec<f64> = papers.iter().map(|p| p["distance"].as_f64().unwrap()).collect();
    assert!(distances.windows(2).all(|w| w[0] <= w[1]), "{distances:?}");
    let keys: Vec<&str> = papers[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|key| *key != "authors_total")
        .collect();
    assert_eq!(keys, ["id", "title", "authors", "date", "source", "doi", "url", "distance"]);
    assert!(papers[0]["authors"].is_array());

    let (_, sent) = rig.ok("find_similar", json!({"doc_id": 801, "limit": 80}));
    assert_eq!(pairs(only(&sent)), [("k", "50")]);
    let (answer, sent) = rig.ok("find_similar", json!({"doc_id": 801, "limit": 3}));
    assert_eq!(pairs(only(&sent)), [("k", "3")]);
    assert_eq!(answer["papers"].as_array().unwrap().len(), 3);
}

#[test]
fn find_similar_an_empty_list_always_carries_a_reason() {
    let mut rig = rig();
    let (answer, _) = rig.ok("find_similar", json!({"doc_id": 833}));
    assert_eq!(answer["papers"], json!([]));
    assert!(answer["reason"].as_str().unwrap().contains("has no vector"), "resmon's own reason: {answer}");

    let (answer, _) = rig.ok("find_similar", json!({"doc_id": corpus::DOC_MISSING}));
    assert_eq!(answer["papers"], json!([]));
    assert!(answer["reason"].is_string(), "an unknown paper is a reason, not a 404: {answer}");

    rig.fake.override_response(
        "GET",
        "/api/documents/802/similar",
        200,
        &[],
        r#"{"document_id": 802, "model": null, "neighbours": [], "reason": null}"#,
    );
    let (answer, _) = rig.ok("find_similar", json!({"doc_id": 802}));
    assert_eq!(answer["papers"], json!([]));
    assert_eq!(answer["model"], Value::Null);
    assert!(answer["reason"].as_str().unwrap().contains("gave no reason"), "{answer}");
}

#[test]
fn find_similar_refuses_bad_arguments_and_maps_statuses() {
    let mut rig = rig();
    rig.refused("find_similar", json!({}), "doc_id");
    rig.refused("find_similar", json!({"doc_id": "801"}), "doc_id");
    rig.refused("find_similar", json!({"doc_id": 801, "limit": 0}), "limit");
    rig.refused("find_similar", json!({"doc_id": 801, "k": 5}), "k");

    let validation = r#"{"detail": [{"type": "int_parsing", "loc": ["query", "k"], "msg": "Input should be a valid integer", "input": "x"}]}"#;
    rig.fake.override_response("GET", "/api/documents/801/similar", 422, &[], validation);
    // `k` carries the caller's limit when one was given; otherwise it is
    // this server's default, and the refusal is not the caller's.
    let (error, _) = rig.err("find_similar", json!({"doc_id": 801, "limit": 5}));
    assert_eq!(error["error"], "invalid_argument");
    let (error, _) = rig.err("find_similar", json!({"doc_id": 801}));
    assert_eq!(error["error"], "upstream_error", "{error}");
    assert_eq!(error["detail"]["parameters"], json!(["k"]), "{error}");
    rig.fake.set_fault_for("GET", "/api/documents/801/similar", Fault::Html500);
    let (error, _) = rig.err("find_similar", json!({"doc_id": 801}));
    assert_eq!(error["error"], "upstream_error");
    assert!(!error.to_string().contains("Traceback"), "the HTML body is not relayed: {error}");
    rig.fake.set_fault_for("GET", "/api/documents/801/similar", Fault::NullsBody200);
    let (error, _) = rig.err("find_similar", json!({"doc_id": 801}));
    assert_eq!(error["error"], "upstream_error");
}

// ====================================================================== explain_match

#[test]
fn explain_match_passes_the_why_body_through_whole() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("explain_match", json!({"doc_id": 801}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/api/documents/801/why"));
    assert!(request.query_pairs.is_empty());
    assert_eq!(answer["what_resmon_cannot_see"], fixture("why.json")["what_resmon_cannot_see"]);
    assert!(answer["headline"].as_str().is_some_and(|h| !h.is_empty()));
    assert!(answer["verdict"].is_string());
    assert_eq!(answer["document"]["id"], 801);
    assert!(answer["keywords"].as_array().is_some_and(|k| !k.is_empty()), "{answer}");
    assert!(
        answer["source"]["keyword_combination"].is_string()
            || answer["source"]["keyword_combination"].is_null()
    );

    // Whatever resmon says, including fields this server has never heard of, arrives untouched.
    let body = json!({"document": {"id": 802, "title": "T", "source_repository": "arxiv", "doi": null,
            "publication_date": null, "first_seen_at": "2026-01-01 00:00:00"},
        "source": {"slug": "arxiv", "name": "arXiv", "keyword_combination": null,
            "keyword_combination_notes": null, "resmon_filtered_locally": false},
        "runs": [], "keywords": [{"keyword": "graph", "matched": false, "fields": [], "where": "nowhere",
            "contains_operators": false}],
        "matched_count": 0, "keyword_count": 1, "verdict": "no_local_evidence",
        "headline": "None of the keywords appears.", "what_resmon_cannot_see": ["Full text.", "Ranking."],
        "fields_checked": ["title"], "source_notes": ["A later field."]});
    rig.fake.override_response("GET", "/api/documents/802/why", 200, &[], &body.to_string());
    let (answer, _) = rig.ok("explain_match", json!({"doc_id": 802}));
    assert_eq!(answer, body);
}

#[test]
fn explain_match_refuses_and_maps_a_missing_paper() {
    let mut rig = rig();
    rig.refused("explain_match", json!({}), "doc_id");
    rig.refused("explain_match", json!({"doc_id": 0}), "doc_id");
    let (error, sent) = rig.err("explain_match", json!({"doc_id": corpus::DOC_MISSING}));
    assert_eq!(only(&sent).status, 404);
    assert_eq!(error["error"], "not_found");
    assert_eq!(error["message"], "No document with id 99999");
    rig.fake.set_fault_for("GET", "/api/documents/801/why", Fault::WrongShape200);
    let (error, _) = rig.err("explain_match", json!({"doc_id": 801}));
    assert_eq!(error["error"], "upstream_error");
}

// ====================================================================== get_paper_lifecycle

#[test]
fn get_paper_lifecycle_passes_events_and_the_check_state_through() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("get_paper_lifecycle", json!({"doc_id": corpus::DOC_RETRACTED}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/api/documents/805/lifecycle"));
    let mut expected = fixture("lifecycle.json")["805"].clone();
    expected["document_id"] = json!(805);
    assert_eq!(answer, expected);
    assert_eq!(answer["events"][0]["kind"], "retraction");
    assert_eq!(answer["events"][0]["notice_url"], "https://doi.org/10.5555/resmon-fake-retraction.0005");

    let (answer, _) = rig.ok("get_paper_lifecycle", json!({"doc_id": corpus::DOC_VERSIONED}));
    let kinds: Vec<&str> =
        answer["events"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["published_version", "new_version"]);

    // Never checked: the nulls are kept, so "no events" is not read as "nothing happened".
    let (answer, _) = rig.ok("get_paper_lifecycle", json!({"doc_id": 802}));
    assert_eq!(answer, json!({"document_id": 802, "events": [], "checked_at": null, "check_status": null}));
}

#[test]
fn get_paper_lifecycle_refuses_and_maps_statuses() {
    let mut rig = rig();
    rig.refused("get_paper_lifecycle", json!({"doc_id": -4}), "doc_id");
    rig.refused("get_paper_lifecycle", json!({"doc_id": 801, "verbose": true}), "verbose");
    let (error, _) = rig.err("get_paper_lifecycle", json!({"doc_id": corpus::DOC_MISSING}));
    assert_eq!(error["error"], "not_found");
    assert_eq!(error["message"], "No document with id 99999");
    rig.fake.set_fault_for("GET", "/api/documents/801/lifecycle", Fault::Html500);
    let (error, _) = rig.err("get_paper_lifecycle", json!({"doc_id": 801}));
    assert_eq!(error["error"], "upstream_error");
}

// ====================================================================== list_sources

#[test]
fn list_sources_joins_key_presence_by_alias_and_never_passes_notices() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("list_sources", json!({}));
    assert_eq!(paths(&sent), ["GET /api/repositories/catalog", "GET /api/credentials"]);
    assert!(sent.iter().all(|r| r.query_pairs.is_empty()));
    assert_eq!(answer["key_status_known"], true);
    assert_eq!(answer["note"], Value::Null);
    let sources = answer["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 8);
    let by_slug = |slug: &str| sources.iter().find(|s| s["slug"] == slug).unwrap().clone();
    assert_eq!(
        by_slug("core"),
        json!({"slug": "core", "name": "CORE", "coverage": "Multi-disciplinary OA",
               "description": "Aggregator of open-access outputs", "key_required": true,
               "key_requirement": "required", "credential": "core_api_key", "key_status": "absent"})
    );
    assert_eq!(by_slug("pubmed")["key_required"], false);
    assert_eq!(by_slug("pubmed")["key_requirement"], "optional");
    assert_eq!(by_slug("pubmed")["key_status"], "present");
    assert_eq!(by_slug("semantic_scholar")["key_status"], "absent");
    assert_eq!(by_slug("arxiv")["credential"], Value::Null);
    assert_eq!(by_slug("arxiv")["key_status"], Value::Null);
    let text = answer.to_string();
    for withheld in ["notices", "default_start_days", "constraints", "endpoint", "anthropic_api_key"] {
        assert!(!text.contains(withheld), "list_sources must not pass {withheld}: {text}");
    }
}

#[test]
fn list_sources_reports_unreadable_keys_as_resmon_does() {
    let mut rig = rig();
    rig.fake.state().answer_mut("/api/credentials")["credentials"]["core_api_key"] =
        json!({"present": false, "status": "unreadable"});
    let (answer, _) = rig.ok("list_sources", json!({}));
    let core = answer["sources"].as_array().unwrap().iter().find(|s| s["slug"] == "core").unwrap().clone();
    assert_eq!(core["key_status"], "unreadable");
}

#[test]
fn list_sources_says_presence_is_unknown_when_credentials_fail() {
    let mut rig = rig();
    rig.fake.set_fault_for("GET", "/api/credentials", Fault::Html500);
    let (answer, sent) = rig.ok("list_sources", json!({}));
    assert_eq!(paths(&sent), ["GET /api/repositories/catalog", "GET /api/credentials"]);
    assert_eq!(answer["key_status_known"], false);
    assert!(answer["note"].as_str().unwrap().contains("unknown, not absent"), "{answer}");
    assert!(!answer.to_string().contains("Traceback"));
    let sources = answer["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 8);
    assert!(sources.iter().all(|s| s["key_status"].is_null()), "never claimed absent: {answer}");
    let core = sources.iter().find(|s| s["slug"] == "core").unwrap();
    assert_eq!(core["credential"], "core_api_key");
    assert_eq!(core["key_required"], true);

    rig.fake.set_fault_for("GET", "/api/credentials", Fault::NullsBody200);
    let (answer, _) = rig.ok("list_sources", json!({}));
    assert_eq!(answer["key_status_known"], false);
    assert!(answer["sources"].as_array().unwrap().iter().all(|s| s["key_status"].is_null()));
}

#[test]
fn list_sources_fails_when_the_catalog_does() {
    let mut rig = rig();
    rig.fake.set_fault_for("GET", "/api/repositories/catalog", Fault::Html500);
    let (error, sent) = rig.err("list_sources", json!({}));
    assert_eq!(error["error"], "upstream_error");
    assert_eq!(paths(&sent), ["GET /api/repositories/catalog"], "credentials are not asked for");
    rig.fake.set_fault_for("GET", "/api/repositories/catalog", Fault::NullsBody200);
    let (error, _) = rig.err("list_sources", json!({}));
    assert_eq!(error["error"], "upstream_error");
}

#[test]
fn list_sources_through_the_cli() {
    let fake = start_fake();
    let (code, answer, output) = cli_call("list_sources", json!({}), &env_for(&fake));
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(answer["sources"].as_array().unwrap().len(), 8);
    assert!(!output.contains(&fake.token()));
}

// ====================================================================== get_analytics

#[test]
fn get_analytics_maps_each_view_to_its_route_and_answers_the_body_as_data() {
    let mut rig = rig();
    // The contract's view names and the routes that serve them, written out
    // here as the contract gives them ("Tools › Read", get_analytics).
    let views = "overview=overview volume=publication-volume sources=source-contribution \
        keywords=keyword-contribution routine-health=routine-health discovery-lag=discovery-lag";
    for (view, route) in views.split_whitespace().filter_map(|pair| pair.split_once('=')) {
        let (answer, sent) = rig.ok("get_analytics", json!({"view": view}));
        let request = only(&sent);
        assert_eq!(request.method, "GET");
        assert_eq!(request.path, format!("/api/analytics/{route}"), "{view}");
        assert!(request.query_pairs.is_empty(), "{view}: nothing but the route");
        assert_eq!(answer["view"], view);
        assert_eq!(answer["window_note"], Value::Null);
        let expected = match view {
            "overview" => {
                assert_eq!(answer["data"]["summary"], fixture("analytics/summary.json"));
                continue;
            }
            "volume" => fixture("analytics/publication-volume.json")["source"].clone(),
            _ => fixture(&format!("analytics/{route}.json")),
        };
        assert_eq!(answer["data"], expected, "{view}");
    }
}

#[test]
fn get_analytics_sends_a_window_and_says_only_what_this_server_did_with_it() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("get_analytics", json!({"view": "sources", "window": "30d"}));
    let request = only(&sent);
    assert_eq!(request.path, "/api/analytics/source-contribution");
    assert_eq!(pairs(request), [("window", "30d")]);
    let note = answer["window_note"].as_str().unwrap();
    assert!(note.contains("`30d`") && note.contains("/api/analytics/source-contribution"), "{note}");
    assert!(note.starts_with("This server passed"), "the note is about this server: {note}");
    // Nothing about what resmon does or does not support, which a newer
    // release could make false.
    for claim in
        ["take no", "takes no", "ignore", "support", "does not apply", "whole record", "not that window"]
    {
        assert!(!note.contains(claim), "{claim:?} claims something about resmon: {note}");
    }
    assert_eq!(answer["data"], fixture("analytics/source-contribution.json"));
}

#[test]
fn get_analytics_refuses_and_maps_statuses() {
    let mut rig = rig();
    rig.refused("get_analytics", json!({}), "view");
    rig.refused("get_analytics", json!({"view": "publication-volume"}), "view");
    rig.refused("get_analytics", json!({"view": "overview", "window": 30}), "window");
    rig.fake.set_fault_for("GET", "/api/analytics/routine-health", Fault::Html500);
    let (error, _) = rig.err("get_analytics", json!({"view": "routine-health"}));
    assert_eq!(error["error"], "upstream_error");
    rig.fake.override_response(
        "GET",
        "/api/analytics/keyword-contribution",
        404,
        &[],
        r#"{"detail": "No execution with id 5"}"#,
    );
    let (error, _) = rig.err("get_analytics", json!({"view": "keywords"}));
    assert_eq!(error["error"], "not_found");
    assert_eq!(error["message"], "No execution with id 5");
    rig.fake.set_fault_for("GET", "/api/analytics/overview", Fault::WrongShape200);
    let (error, _) = rig.err("get_analytics", json!({"view": "overview"}));
    assert_eq!(error["error"], "upstream_error");
}

// ====================================================================== get_watchdog_findings

#[test]
fn get_watchdog_findings_hides_muted_rows_and_passes_the_rest_untouched() {
    let mut rig = rig();
    let watchdog = fixture("watchdog.json");
    let (answer, sent) = rig.ok("get_watchdog_findings", json!({}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/api/watchdog"));
    assert!(request.query_pairs.is_empty());

    let unmuted: Vec<Value> =
        watchdog["findings"].as_array().unwrap().iter().filter(|f| f["muted"] != true).cloned().collect();
    assert_eq!(answer["findings"], Value::Array(unmuted));
    assert_eq!(answer["findings"].as_array().unwrap().len(), 6);
    assert_eq!(answer["muted_hidden"], 2);
    // resmon's counts as resmon gave them, and what it cannot judge, with the thresholds.
    for field in ["counts", "not_enough_data", "thresholds", "checked_at", "watching", "sufficient"] {
        assert_eq!(answer[field], watchdog[field], "{field}");
    }
    let severities: Vec<&str> =
        answer["findings"].as_array().unwrap().iter().map(|f| f["severity"].as_str().unwrap()).collect();
    assert!(severities.contains(&"withdrawn") && severities.contains(&"curious"), "{severities:?}");
    assert!(answer["findings"].as_array().unwrap().iter().all(|f| f["what_to_do"].is_string()));
}

#[test]
fn get_watchdog_findings_can_include_muted_rows() {
    let mut rig = rig();
    let watchdog = fixture("watchdog.json");
    let (answer, sent) = rig.ok("get_watchdog_findings", json!({"include_muted": true}));
    assert_eq!(pairs(only(&sent)), [("include_muted", "true")]);
    assert_eq!(answer["findings"], watchdog["findings"]);
    assert_eq!(answer["muted_hidden"], 0);
    let (answer, sent) = rig.ok("get_watchdog_findings", json!({"include_muted": false}));
    assert!(only(&sent).query_pairs.is_empty());
    assert_eq!(answer["muted_hidden"], 2);
}

#[test]
fn get_watchdog_findings_refuses_and_maps_statuses() {
    let mut rig = rig();
    rig.refused("get_watchdog_findings", json!({"include_muted": "yes"}), "include_muted");
    rig.refused("get_watchdog_findings", json!({"severity": "broken"}), "severity");
    rig.fake.set_fault_for("GET", "/api/watchdog", Fault::Html500);
    let (error, _) = rig.err("get_watchdog_findings", json!({}));
    assert_eq!(error["error"], "upstream_error");
    rig.fake.set_fault_for("GET", "/api/watchdog", Fault::NullsBody200);
    let (error, _) = rig.err("get_watchdog_findings", json!({}));
    assert_eq!(error["error"], "upstream_error");
}

#[test]
fn insight_tools_through_the_cli() {
    let fake = start_fake();
    let (code, answer, output) = cli_call("get_watchdog_findings", json!({}), &env_for(&fake));
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(answer["muted_hidden"], 2);
    let (code, answer, output) = cli_call("get_analytics", json!({"view": "discovery-lag"}), &env_for(&fake));
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(answer["data"], fixture("analytics/discovery-lag.json"));
}

// ====================================================================== export_references

#[test]
fn export_references_by_execution_sends_only_the_format() {
    let mut rig = rig();
    let (answer, sent) =
        rig.ok("export_references", json!({"exec_id": corpus::EXEC_RESTARTED, "format": "bibtex"}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/api/executions/119/references"));
    assert_eq!(pairs(request), [("format", "bibtex")]);
    assert_eq!(answer["format"], "bibtex");
    assert_eq!(answer["count"], 12);
    let text = answer["text"].as_str().unwrap();
    assert!(text.starts_with('@'), "{text}");
    assert_eq!(text.matches("\n@").count() + 1, 12);
    let mut keys: Vec<&str> = answer.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["count", "format", "text"], "one shape for every format");

    let (answer, sent) =
        rig.ok("export_references", json!({"exec_id": corpus::EXEC_RESTARTED, "format": "json"}));
    assert_eq!(pairs(only(&sent)), [("format", "json")]);
    assert_eq!(answer["count"], 12);
    // The exported text for json too: the file exactly as resmon wrote it.
    let text = answer["text"].as_str().expect("json exports answer text, never null");
    assert!(text.starts_with("[\n  {\n"), "resmon's own indented file, unchanged: {text}");
    let rows: Vec<Value> = serde_json::from_str(text).unwrap();
    assert_eq!(rows.len(), 12);
    assert!(rows[0]["title"].is_string() && rows[0]["source_repository"].is_string());
    assert!(rows[0].get("id").is_none(), "the export asks for no ids");

    let (answer, _) =
        rig.ok("export_references", json!({"exec_id": corpus::EXEC_RESTARTED, "format": "csv"}));
    assert!(answer["text"].as_str().unwrap().starts_with("title,authors,publication_date"));
}

#[test]
fn export_references_by_documents_posts_the_ids() {
    let mut rig = rig();
    let (answer, sent) = rig.ok("export_references", json!({"doc_ids": [801, 805], "format": "ris"}));
    let request = only(&sent);
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/api/export/references"));
    assert!(request.query_pairs.is_empty());
    assert_eq!(request.json().unwrap(), json!({"document_ids": [801, 805], "format": "ris"}));
    assert_eq!(answer["count"], 2);
    let text = answer["text"].as_str().unwrap();
    assert_eq!(text.matches("ER  - ").count(), 2, "{text}");

    let (answer, sent) = rig.ok("export_references", json!({"doc_ids": [802], "format": "json"}));
    assert_eq!(only(&sent).json().unwrap(), json!({"document_ids": [802], "format": "json"}));
    let rows: Value = serde_json::from_str(answer["text"].as_str().unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["external_id"], "2609.90002");

    // An id resmon does not have is skipped by resmon; the count says so.
    let (answer, _) = rig.ok("export_references", json!({"doc_ids": [801, 99999], "format": "bibtex"}));
    assert_eq!(answer["count"], 1);
}

#[test]
fn export_references_needs_exactly_one_of_exec_id_and_doc_ids() {
    let mut rig = rig();
    for arguments in
        [json!({"exec_id": 119, "doc_ids": [801], "format": "bibtex"}), json!({"format": "bibtex"})]
    {
        let error = rig.refused("export_references", arguments, "exec_id");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("exec_id") && message.contains("doc_ids"), "{message}");
        assert_eq!(error["detail"]["arguments"], json!(["exec_id", "doc_ids"]));
    }
    // An empty selection is resmon's to answer (contract 1.0 "Versioning":
    // refusing it would narrow the surface).
    let (empty, sent) = rig.ok("export_references", json!({"doc_ids": [], "format": "bibtex"}));
    assert_eq!(empty["format"], "bibtex", "{empty}");
    assert_eq!(sent.iter().filter(|r| r.path == "/api/export/references").count(), 1);
    rig.refused("export_references", json!({"exec_id": 119}), "format");
    rig.refused("export_references", json!({"exec_id": 119, "format": "xml"}), "format");
    rig.refused("export_references", json!({"doc_ids": ["801"], "format": "ris"}), "doc_ids[0]");
    let (answer, _) =
        rig.ok("export_references", json!({"doc_ids": (801..=834).collect::<Vec<i64>>(), "format": "csv"}));
    assert_eq!(answer["count"], 34);
}

#[test]
fn export_references_maps_statuses() {
    let mut rig = rig();
    let (error, sent) =
        rig.err("export_references", json!({"exec_id": corpus::EXEC_MISSING, "format": "ris"}));
    assert_eq!(only(&sent).status, 404);
    assert_eq!(error["error"], "not_found");
    assert_eq!(error["message"], "Execution not found");

    rig.fake.override_response(
        "POST",
        "/api/export/references",
        400,
        &[],
        r#"{"detail": "Send document_ids or execution_ids, not both."}"#,
    );
    let (error, _) = rig.err("export_references", json!({"doc_ids": [801], "format": "bibtex"}));
    assert_eq!(error["error"], "invalid_argument");
    assert_eq!(error["message"], "Send document_ids or execution_ids, not both.");

    rig.fake.set_fault_for("GET", "/api/executions/119/references", Fault::Html500);
    let (error, _) = rig.err("export_references", json!({"exec_id": 119, "format": "bibtex"}));
    assert_eq!(error["error"], "upstream_error");
    rig.fake.set_fault_for("GET", "/api/executions/119/references", Fault::NullsBody200);
    let (error, _) = rig.err("export_references", json!({"exec_id": 119, "format": "json"}));
    assert_eq!(error["error"], "upstream_error", "json rows must be an array");
}

#[test]
fn export_references_through_the_cli() {
    let fake = start_fake();
    let (code, answer, output) = cli_call(
        "export_references",
        json!({"exec_id": corpus::EXEC_DEEP_DIVE, "format": "json"}),
        &env_for(&fake),
    );
    assert_eq!(code, Some(0), "{output}");
    let rows: Value = serde_json::from_str(answer["text"].as_str().unwrap()).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 5);
    assert_eq!(answer["count"], 5);
    let (code, error, _) = cli_call("export_references", json!({"format": "json"}), &env_for(&fake));
    assert_eq!(code, Some(1));
    assert_eq!(error["error"], "invalid_argument");
    assert!(fake.requests_to("GET", "/api/executions/120/references").len() == 1);
}

#[test]
fn export_references_has_no_cap_of_its_own() {
    let mut rig = rig();
    // A long list of ids goes to resmon as it is: another 1.0 server would
    // accept it, and refusing it would narrow the contract.
    let many: Vec<i64> = (1..=1_000).collect();
    let (answer, sent) = rig.ok("export_references", json!({"doc_ids": many, "format": "bibtex"}));
    assert_eq!(only(&sent).json().unwrap()["document_ids"].as_array().unwrap().len(), 1_000);
    assert_eq!(answer["count"], corpus::DOC_COUNT, "the stored ones among them, as resmon counted");

    // A run's export of 250 papers is answered whole, in every format.
    let entries: Vec<String> =
        (1..=250).map(|n| format!("@misc{{paper{n},\n  title = {{Paper {n}}}\n}}\n")).collect();
    rig.fake.override_response(
        "GET",
        "/api/executions/115/references",
        200,
        &[("Content-Type", "application/x-bibtex"), ("X-Resmon-Document-Count", "250")],
        &entries.join("\n"),
    );
    let (answer, _) = rig.ok("export_references", json!({"exec_id": 115, "format": "bibtex"}));
    assert_eq!(answer["count"], 250);
    assert_eq!(answer["text"].as_str().unwrap().matches("@misc{").count(), 250);
    let rows: Vec<Value> =
        (1..=250).map(|n| json!({"title": format!("Paper {n}"), "authors": null})).collect();
    let file = serde_json::to_string_pretty(&rows).unwrap();
    rig.fake.override_response(
        "GET",
        "/api/executions/115/references",
        200,
        &[("Content-Type", "application/json"), ("X-Resmon-Document-Count", "250")],
        &file,
    );
    let (answer, _) = rig.ok("export_references", json!({"exec_id": 115, "format": "json"}));
    assert_eq!(
        (answer["count"].clone(), answer["text"].clone()),
        (json!(250), json!(file)),
        "the file unchanged"
    );
}

#[test]
fn export_references_refuses_a_body_that_is_not_the_file_asked_for() {
    let mut rig = rig();
    // A JSON body where a bibtex file was asked for is not the file.
    rig.fake.override_response(
        "GET",
        "/api/executions/115/references",
        200,
        &[("Content-Type", "application/json")],
        "{}",
    );
    let (error, _) = rig.err("export_references", json!({"exec_id": 115, "format": "bibtex"}));
    assert_eq!(error["error"], "upstream_error");
    // Nor is a JSON object where the json file (an array) was.
    let (error, _) = rig.err("export_references", json!({"exec_id": 115, "format": "json"}));
    assert_eq!(error["error"], "upstream_error");
}
