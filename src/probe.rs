//! `--check`'s look at what this resmon can do (contract-notes 19): one
//! harmless GET per read tool's route, id 0 where the route takes one, so
//! that a person learns before a harness session which tools a resmon of
//! another release lacks. It never sends a write and never starts a run.

use serde_json::{Value, json};

use crate::backend::{self, Backend, Method};
use crate::tools;

/// How a tool is judged: by the GET of its own route, by a GET on the same
/// resource (a write), or not at all, with the reason.
enum Probe {
    Own(&'static str, &'static [(&'static str, &'static str)]),
    /// A tool that reads one of several routes: available when all are.
    Each(&'static [&'static str]),
    SameResource(&'static str),
    NotProbed(&'static str),
}

const NO_QUERY: &[(&str, &str)] = &[];

/// One row per tool of the table; a test checks that every tool has one.
fn probe_for(tool: &str) -> Option<Probe> {
    use Probe::{Each, NotProbed, Own, SameResource};
    Some(match tool {
        "health" => Own("/api/health", NO_QUERY),
        "search_corpus" => NotProbed("not probed: its route is a POST, which --check does not send"),
        "find_similar" => Own("/api/documents/0/similar", &[("k", "1")]),
        "list_sources" => Own("/api/repositories/catalog", NO_QUERY),
        "list_routines" => Own("/api/routines", NO_QUERY),
        "get_routine" => Own("/api/routines/0", NO_QUERY),
        "list_executions" => Own("/api/executions", &[("limit", "1")]),
        "get_execution" => Own("/api/executions/0", NO_QUERY),
        "get_execution_results" => {
            Own("/api/executions/0/references", &[("format", "json"), ("include_ids", "true")])
        }
        "get_search_record" => Own("/api/executions/0/search-record", NO_QUERY),
        "explain_match" => Own("/api/documents/0/why", NO_QUERY),
        "get_paper_lifecycle" => Own("/api/documents/0/lifecycle", NO_QUERY),
        "get_analytics" => Each(&[
            "/api/analytics/overview",
            "/api/analytics/publication-volume",
            "/api/analytics/source-contribution",
            "/api/analytics/keyword-contribution",
            "/api/analytics/routine-health",
            "/api/analytics/discovery-lag",
        ]),
        "get_watchdog_findings" => Own("/api/watchdog", NO_QUERY),
        "export_references" => Own("/api/executions/0/references", &[("format", "bibtex")]),
        "list_watch_profiles" => Own("/api/profiles", NO_QUERY),
        "get_watch_profile" => Own("/api/profiles/0", NO_QUERY),
        "get_profile_matches" => Own("/api/profiles/0/matches", &[("limit", "1")]),
        "run_sweep" => NotProbed("not probed: it has only a POST route, and no GET reads the same resource"),
        "create_routine" => SameResource("/api/routines"),
        "create_watch_profile" => SameResource("/api/profiles"),
        "run_routine" | "activate_routine" | "deactivate_routine" => SameResource("/api/routines/0"),
        "update_settings" => SameResource("/api/settings/ai"),
        _ => return None,
    })
}

/// One tool's verdict: `available` is true, false, or null for unknown.
pub(crate) struct Verdict {
    pub name: &'static str,
    pub available: Option<bool>,
    pub route: Option<String>,
    pub why: String,
}

impl Verdict {
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "available": self.available, "route": self.route, "why": self.why})
    }
}

/// Probes every tool of the table against the confirmed backend. All the
/// probes share one deadline (the per-call bound), so a stalled resmon
/// costs `--check` one bound, not one per tool; a route already asked is
/// not asked again.
pub(crate) fn probe_all(backend: &mut Backend) -> Vec<Verdict> {
    backend.begin_call(Vec::new());
    let mut seen: Vec<(String, Judged)> = Vec::new();
    let mut ask = |backend: &mut Backend, path: &str, query: &[(&str, &str)]| -> Judged {
        if let Some((_, judged)) = seen.iter().find(|(asked, _)| asked == path) {
            return judged.clone();
        }
        let judged = judge(backend, path, query);
        seen.push((path.to_string(), judged.clone()));
        judged
    };
    tools::TOOLS
        .iter()
        .map(|tool| {
            let verdict = |available, route: Option<String>, why: String| Verdict {
                name: tool.name,
                available,
                route,
                why,
            };
            match probe_for(tool.name) {
                Some(Probe::Own(path, query)) => {
                    let judged = ask(backend, path, query);
                    verdict(judged.available, Some(judged.route), judged.why)
                }
                Some(Probe::SameResource(path)) => {
                    let judged = ask(backend, path, NO_QUERY);
                    let why =
                        format!("{} (judged by {}, which reads the same resource)", judged.why, judged.route);
                    verdict(judged.available, Some(judged.route), why)
                }
                Some(Probe::Each(paths)) => {
                    let all: Vec<Judged> = paths.iter().map(|path| ask(backend, path, NO_QUERY)).collect();
                    let missing: Vec<&Judged> =
                        all.iter().filter(|judged| judged.available == Some(false)).collect();
                    let unknown: Vec<&Judged> =
                        all.iter().filter(|judged| judged.available.is_none()).collect();
                    let (available, why) = if !missing.is_empty() {
                        let routes: Vec<&str> = missing.iter().map(|judged| judged.route.as_str()).collect();
                        let why = format!(
                            "resmon does not serve {} ({} of the {} routes its views read; the web framework \
                             answered for it)",
                            routes.join(", "),
                            missing.len(),
                            all.len()
                        );
                        (Some(false), why)
                    } else if let Some(first) = unknown.first() {
                        (None, first.why.clone())
                    } else {
                        (Some(true), format!("all {} of its routes answered", all.len()))
                    };
                    verdict(available, Some(all[0].route.clone()), why)
                }
                Some(Probe::NotProbed(why)) => verdict(None, None, why.to_string()),
                None => verdict(None, None, "not probed: --check has no probe for this tool".to_string()),
            }
        })
        .collect()
}

/// What one probe GET showed.
#[derive(Clone)]
struct Judged {
    available: Option<bool>,
    route: String,
    why: String,
}

fn judge(backend: &mut Backend, path: &str, query: &[(&str, &str)]) -> Judged {
    let route = backend::route_template(&format!("GET {path}"));
    let query: Vec<(&str, String)> = query.iter().map(|(key, value)| (*key, value.to_string())).collect();
    let (available, why) = match backend.send(Method::Get, path, &query, None) {
        Ok(reply) if reply.is_success() => (Some(true), format!("answered {}", reply.status)),
        Ok(reply) if backend::is_missing_route(&reply) => (
            Some(false),
            format!("resmon does not serve {route} (the web framework answered {})", reply.status),
        ),
        Ok(reply) if reply.status == 404 && has_own_sentence(&reply) => {
            (Some(true), "answered 404 with its own sentence about record 0, so the route exists".to_string())
        }
        Ok(reply) => (None, format!("answered {}, which says nothing certain about the route", reply.status)),
        Err(error) => (None, format!("could not be asked: {}", error.message)),
    };
    Judged { available, route, why }
}

/// resmon's own 404 is JSON whose `detail` is a sentence about the record.
fn has_own_sentence(reply: &backend::Reply) -> bool {
    reply.json().ok().is_some_and(|body| body.get("detail").is_some_and(Value::is_string))
}

/// The human summary: "23 of 25 tools available on resmon 2.3.0", then
/// each tool that is missing or unknown, and why.
pub(crate) fn summary(verdicts: &[Verdict], version: Option<&str>) -> String {
    let available = verdicts.iter().filter(|verdict| verdict.available == Some(true)).count();
    let release = version.map(|version| format!("resmon {version}")).unwrap_or_else(|| "this resmon".into());
    let mut text = format!("tools: {available} of {} tools available on {release}\n", verdicts.len());
    for (label, wanted) in [("missing", Some(false)), ("unknown", None)] {
        for verdict in verdicts.iter().filter(|verdict| verdict.available == wanted) {
            text.push_str(&format!("  {label}: {}: {}\n", verdict.name, verdict.why));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_probe_and_none_is_a_write_route() {
        for tool in tools::TOOLS {
            let probe = probe_for(tool.name).unwrap_or_else(|| panic!("{} has no probe", tool.name));
            let paths: Vec<&str> = match probe {
                Probe::Own(path, _) | Probe::SameResource(path) => vec![path],
                Probe::Each(paths) => paths.to_vec(),
                Probe::NotProbed(_) => Vec::new(),
            };
            for path in paths {
                for verb in ["/run", "/activate", "/deactivate", "/sweep", "/search", "/export"] {
                    assert!(!path.ends_with(verb), "{} probes {path}", tool.name);
                }
            }
        }
    }
}
