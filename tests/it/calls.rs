//! One valid call for every branch of every tool that reaches a different
//! backend address, against the fake's synthetic corpus. Shared by the route
//! resolution test, the fault matrix and the soak.

use serde_json::{Value, json};

/// The seven write tools contract 1.0's Write table names, written out
/// from the contract, not read from either build's table (the comparison
/// in examples/compare.rs runs two builds whose tables may differ).
pub const WRITE_TOOLS: [&str; 7] = [
    "run_sweep",
    "create_routine",
    "create_watch_profile",
    "run_routine",
    "activate_routine",
    "deactivate_routine",
    "update_settings",
];

/// Calls the server refuses before it sends resmon anything, each with the
/// argument its refusal names: (tool, arguments, `detail.argument`). The
/// client stages make them through each client (via dump_calls.rs), and
/// tests/it/arguments.rs holds the server to them.
pub fn invalid_calls() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("search_corpus", json!({"query": "graph attention", "limit": 0}), "limit"),
        ("get_routine", json!({"routine_id": "seven"}), "routine_id"),
        ("get_analytics", json!({"view": "nonsense"}), "view"),
        ("health", json!({"expected_runtime_id": "not-a-uuid"}), "expected_runtime_id"),
        ("run_routine", json!({}), "routine_id"),
        ("get_execution", json!({"exec_id": 115, "surplus": true}), "surplus"),
    ]
}

/// (tool, arguments) pairs; `runtime_id` is the fake's, for the pinned branch.
pub fn every_branch(runtime_id: &str) -> Vec<(&'static str, Value)> {
    let mut calls = vec![
        ("health", json!({})),
        ("health", json!({"expected_runtime_id": runtime_id})),
        ("search_corpus", json!({"query": "graph attention"})),
        ("search_corpus", json!({"query": "protein structure", "mode": "semantic", "limit": 5})),
        ("find_similar", json!({"doc_id": 801, "limit": 5})),
        ("list_sources", json!({})),
        ("list_routines", json!({})),
        ("list_routines", json!({"active_only": true})),
        ("get_routine", json!({"routine_id": 7})),
        ("list_executions", json!({})),
        ("list_executions", json!({"routine_id": 7, "status": "completed"})),
        ("get_execution", json!({"exec_id": 115})),
        ("get_execution", json!({"exec_id": 115, "expected_runtime_id": runtime_id})),
        ("get_execution_results", json!({"exec_id": 115, "limit": 5})),
        ("get_search_record", json!({"exec_id": 115})),
        ("explain_match", json!({"doc_id": 801})),
        ("get_paper_lifecycle", json!({"doc_id": 801})),
        ("get_watchdog_findings", json!({})),
        ("get_watchdog_findings", json!({"include_muted": true})),
        ("export_references", json!({"exec_id": 115, "format": "bibtex"})),
        ("export_references", json!({"doc_ids": [801, 802], "format": "json"})),
        ("list_watch_profiles", json!({})),
        ("list_watch_profiles", json!({"kind": "person"})),
        ("get_watch_profile", json!({"profile_id": 5})),
        ("get_profile_matches", json!({"profile_id": 5, "limit": 5})),
        ("run_sweep", json!({"query": "graph attention", "sources": ["arxiv"]})),
        (
            "create_routine",
            json!({"name": "Synthetic routine", "keywords": ["graph attention"], "sources": ["arxiv"],
                   "schedule": "0 8 * * 1"}),
        ),
        ("create_watch_profile", json!({"name": "Test Author Three", "aliases": ["T. Three"]})),
        ("run_routine", json!({"routine_id": 8})),
        ("activate_routine", json!({"routine_id": 8})),
        ("deactivate_routine", json!({"routine_id": 8})),
    ];
    for view in ["overview", "volume", "sources", "keywords", "routine-health", "discovery-lag"] {
        calls.push(("get_analytics", json!({"view": view})));
    }
    let settings = [
        ("ai", json!({"ai_model": "synthetic-model-2"})),
        ("assistant", json!({"assistant_effort": "high"})),
        ("email", json!({"smtp_from": "reports@example.invalid"})),
        ("embeddings", json!({"embedding_batch_size": "32"})),
        ("storage", json!({"archive_after_days": "90"})),
        ("notifications", json!({"notify_manual": "true"})),
    ];
    for (group, values) in settings {
        calls.push(("update_settings", json!({"group": group, "settings": values})));
    }
    calls
}
