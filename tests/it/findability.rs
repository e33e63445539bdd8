//! What a harness that defers tool definitions (Claude Code's tool search)
//! shows a model before any search, and what its search reads
//! (docs/findability.md): the always-loaded tools and the instructions fit
//! their budget in both modes, every tool carries a search hint in `_meta`,
//! and the question list names only tools of the table.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::harness::{Session, vars};

/// The bytes a conversation reads about resmon up front: the always-loaded
/// tools as Claude Code sends them, plus the instructions.
const UP_FRONT_BUDGET: usize = 4_096;
/// Claude Code 2.1.332 reads this many characters of a search hint.
const HINT_PREFIX: usize = 4_096;
const MIN_QUESTIONS: usize = 60;

/// Through the handshake, the instructions and the tools/list tools.
fn listing(read_only: bool) -> (String, Vec<Value>) {
    let env = if read_only { vars(&[("RESMON_MCP_READ_ONLY", "1")]) } else { Vec::new() };
    let mut session = Session::start(&env);
    let answer = session.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
    );
    let instructions = answer["result"]["instructions"].as_str().expect("instructions").to_string();
    session.notify("notifications/initialized", json!({}));
    let tools = session.request("tools/list", json!({}))["result"]["tools"].as_array().unwrap().clone();
    (instructions, tools)
}

/// One tool as Claude Code puts it in a request to its model: the prefixed
/// name, the description and the input schema, compact.
fn as_sent(tool: &Value) -> usize {
    json!({
        "name": format!("mcp__resmon__{}", tool["name"].as_str().unwrap()),
        "description": tool["description"],
        "input_schema": tool["inputSchema"],
    })
    .to_string()
    .len()
}

fn always_loaded(tools: &[Value]) -> Vec<&Value> {
    tools.iter().filter(|tool| tool["_meta"]["anthropic/alwaysLoad"] == json!(true)).collect()
}

#[test]
fn the_tools_loaded_up_front_and_the_instructions_fit_their_budget() {
    for read_only in [false, true] {
        let (instructions, tools) = listing(read_only);
        let loaded = always_loaded(&tools);
        let names: Vec<&str> = loaded.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["health", "search_corpus", "list_executions", "get_execution", "get_execution_results"],
            "read-only: {read_only}"
        );
        let tool_bytes: usize = loaded.iter().map(|tool| as_sent(tool)).sum();
        let total = tool_bytes + instructions.len();
        let deferred: Vec<String> = tools
            .iter()
            .filter(|tool| tool["_meta"]["anthropic/alwaysLoad"] != json!(true))
            .map(|tool| format!("mcp__resmon__{}", tool["name"].as_str().unwrap()))
            .collect();
        println!(
            "read-only {read_only}: always loaded {names:?}: {tool_bytes} B; instructions {} B; sum {total} B \
             of {UP_FRONT_BUDGET}; {} deferred names, {} B of names",
            instructions.len(),
            deferred.len(),
            deferred.iter().map(String::len).sum::<usize>()
        );
        assert!(
            total <= UP_FRONT_BUDGET,
            "{total} B up front (read-only: {read_only}), over {UP_FRONT_BUDGET} B"
        );
        // What loading every tool instead costs (Claude Code's server-level alwaysLoad).
        let all: usize = tools.iter().map(as_sent).sum();
        println!("read-only {read_only}: all {} tools as sent: {all} B", tools.len());
    }
}

#[test]
fn every_listed_tool_has_a_search_hint_within_the_prefix_claude_code_reads() {
    let (_, tools) = listing(false);
    assert_eq!(tools.len(), 25);
    for tool in &tools {
        let hint = tool["_meta"]["anthropic/searchHint"].as_str().unwrap_or_else(|| panic!("{tool}"));
        assert!(!hint.trim().is_empty() && hint.chars().count() <= HINT_PREFIX, "{}", tool["name"]);
        let flag = &tool["_meta"]["anthropic/alwaysLoad"];
        assert!(flag.is_null() || flag == &json!(true), "only `true` is ever sent: {tool}");
    }
}

fn question_list(file: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/findability").join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_question_list_names_tools_of_the_table_and_covers_them_all() {
    let questions = question_list("questions.json");
    assert!(questions.len() >= MIN_QUESTIONS, "{} questions, fewer than {MIN_QUESTIONS}", questions.len());
    let held_out: Vec<Value> =
        ["held-out.json", "held-out-2.json", "held-out-3.json"].into_iter().flat_map(question_list).collect();
    let (_, tools) = listing(false);
    let table: BTreeSet<&str> = tools.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    let mut answered = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for question in questions.iter().chain(&held_out) {
        let words = question["words"].as_str().expect("words");
        assert!(!words.trim().is_empty() && !words.starts_with("select:"), "{question}");
        assert!(seen.insert(words.to_lowercase()), "asked twice: {words}");
        let names = question["tools"].as_array().expect("tools");
        assert!(!names.is_empty(), "{question}");
        for name in names {
            let name = name.as_str().unwrap();
            assert!(table.contains(name), "`{name}` is no tool of the table: {question}");
            // People do not type identifiers (a plain word such as "health" may be both).
            assert!(!name.contains('_') || !words.contains(name), "the words name the tool: {question}");
        }
    }
    for question in &questions {
        answered.extend(question["tools"].as_array().unwrap().iter().map(|name| name.as_str().unwrap()));
    }
    let missing: Vec<&&str> = table.difference(&answered).collect();
    assert!(missing.is_empty(), "no question is answered by {missing:?}");
}
