//! Route resolution and the contract's counts (contract 1.0 "Route
//! resolution"): every address the 25 tools send resolves
//! against the route table in fixtures/routes.json, none is excluded
//! ("Excluded on purpose"), none deletes, no settings group outside the six
//! is reached, and the distinct method-and-path pairs number exactly the
//! stated 44.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::calls::every_branch;
use crate::harness::{connected, structured};

/// The number contract 1.0 states. Changing what the tools reach means
/// changing this number in the same commit, on purpose.
const STATED_PAIRS: usize = 44;

fn table() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/routes.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `{name}` in a template matches exactly one non-empty path segment.
fn matches_template(template: &str, path: &str) -> bool {
    let template: Vec<&str> = template.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    template.len() == path.len()
        && template.iter().zip(&path).all(|(want, got)| {
            (want.starts_with('{') && want.ends_with('}') && !got.is_empty()) || want == got
        })
}

fn is_excluded(excluded: &[Value], method: &str, path: &str) -> Option<String> {
    excluded.iter().find_map(|entry| {
        let method_fits = entry["method"] == "*" || entry["method"] == method;
        let path_fits = match (entry["path"].as_str(), entry["path_prefix"].as_str()) {
            (Some(template), _) => matches_template(template, path),
            (None, Some(prefix)) => path.starts_with(prefix),
            _ => false,
        };
        // A settings entry excludes every group except the six update_settings may reach.
        let spared = entry["unless_group_in"].as_array().is_some_and(|groups| {
            groups.iter().any(|group| Some(group.as_str().unwrap_or("")) == path.rsplit('/').next())
        });
        (method_fits && path_fits && !spared).then(|| entry["why"].as_str().unwrap_or("").to_string())
    })
}

/// Drives every branch and returns the distinct (method, concrete path) pairs sent.
fn pairs_sent() -> BTreeSet<(String, String)> {
    let (fake, mut session) = connected();
    for (tool, arguments) in every_branch(&fake.runtime_id()) {
        let result = session.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        structured(&result);
    }
    fake.requests().into_iter().map(|request| (request.method.clone(), request.path.clone())).collect()
}

#[test]
fn every_address_the_tools_send_resolves_and_none_is_excluded() {
    let table = table();
    let routes = table["routes"].as_array().unwrap();
    let excluded = table["excluded"].as_array().unwrap();
    let pairs = pairs_sent();
    let mut failures = Vec::new();
    // Ids differ between calls (a created routine gets a new one), so pairs
    // are counted by the route each concrete address resolves to.
    let mut resolved_pairs = BTreeSet::new();
    for (method, path) in &pairs {
        let resolved: Vec<&str> = routes
            .iter()
            .filter(|route| {
                route["method"] == method.as_str() && matches_template(route["path"].as_str().unwrap(), path)
            })
            .map(|route| route["path"].as_str().unwrap())
            .collect();
        if resolved.len() != 1 {
            failures.push(format!("{method} {path}: resolves to {resolved:?}, not exactly one route"));
        }
        resolved_pairs.extend(resolved.iter().map(|template| format!("{method} {template}")));
        if let Some(why) = is_excluded(excluded, method, path) {
            failures.push(format!("{method} {path}: an excluded route ({why})"));
        }
        if method == "DELETE" {
            failures.push(format!("{method} {path}: nothing the tools do deletes"));
        }
        // The six groups contract 1.0 lets update_settings reach.
        const REACHABLE: [&str; 6] = ["ai", "assistant", "email", "embeddings", "storage", "notifications"];
        if let Some(group) = path.strip_prefix("/api/settings/")
            && !REACHABLE.contains(&group)
        {
            failures.push(format!("{method} {path}: a settings group outside the six"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let listed: Vec<&str> = resolved_pairs.iter().map(String::as_str).collect();
    assert_eq!(
        resolved_pairs.len(),
        STATED_PAIRS,
        "the tools reach {} distinct pairs, the contract states {STATED_PAIRS}:\n{}",
        resolved_pairs.len(),
        listed.join("\n")
    );
}

#[test]
fn the_route_table_itself_holds_the_stated_number_of_pairs() {
    let table = table();
    assert_eq!(table["stated_pair_count"], STATED_PAIRS);
    assert_eq!(table["routes"].as_array().unwrap().len(), STATED_PAIRS);
    let excluded = table["excluded"].as_array().unwrap();
    for route in table["routes"].as_array().unwrap() {
        let path = route["path"].as_str().unwrap();
        let concrete =
            path.replace("{routine_id}", "1").replace("{exec_id}", "1").replace("{document_id}", "1");
        let concrete = concrete.replace("{doc_id}", "1").replace("{profile_id}", "1");
        assert!(is_excluded(excluded, route["method"].as_str().unwrap(), &concrete).is_none(), "{path}");
    }
}

/// The exclusion check above can fail: it catches each kind of route the
/// table excludes, and spares the settings groups update_settings may reach.
#[test]
fn the_exclusion_check_catches_what_it_is_for() {
    let excluded = table()["excluded"].as_array().unwrap().clone();
    for (method, path) in [
        ("POST", "/api/admin/factory-reset"),
        ("DELETE", "/api/routines/7"),
        ("PUT", "/api/credentials/anthropic_api_key"),
        ("PUT", "/api/settings/cloud"),
        ("PUT", "/api/settings/execution"),
        ("GET", "/api/executions/1/progress/stream"),
        ("POST", "/api/service/install"),
        ("POST", "/api/lifecycle/check"),
    ] {
        assert!(is_excluded(&excluded, method, path).is_some(), "{method} {path} should be excluded");
    }
    assert_eq!(is_excluded(&excluded, "PUT", "/api/settings/ai"), None);
}

#[test]
fn template_matching_is_strict() {
    assert!(matches_template("/api/routines/{routine_id}", "/api/routines/7"));
    assert!(!matches_template("/api/routines/{routine_id}", "/api/routines/7/run"));
    assert!(!matches_template("/api/routines/{routine_id}", "/api/routines/"));
    assert!(!matches_template("/api/settings/ai", "/api/settings/cloud"));
}
