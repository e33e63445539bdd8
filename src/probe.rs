//! `--check`'s look at what this resmon can do (contract-notes 19), so that a
//! person learns before a harness session which tools a resmon of another
//! release lacks. Every probe is a GET: `--check` never sends a POST or a
//! PUT, so it never creates, changes or starts anything.
//!
//! A read is judged by a GET on its route; a write by a GET on its own path,
//! which the web framework answers 405 when the path is served with another
//! method; the two reads whose answer depends on a real run are asked about
//! the newest run `list_executions`' route gave.

use serde_json::{Value, json};

use crate::backend::{self, Backend, Method};
use crate::tools::{self, NEWEST_RUN, Probe};

const NO_QUERY: &[(&str, &str)] = &[];

/// One tool's verdict: `available` is true, false, or null for unknown.
pub(crate) struct Verdict {
    pub name: &'static str,
    /// False for a tool whose entry says it is not probed: unknown because
    /// nothing was asked, not because an answer was unclear.
    pub probed: bool,
    pub available: Option<bool>,
    pub route: Option<String>,
    pub why: String,
}

impl Verdict {
    pub(crate) fn to_json(&self) -> Value {
        json!({"name": self.name, "available": self.available, "route": self.route, "why": self.why})
    }
}

/// What one probe GET brought back, kept so that a path asked twice (a read
/// and a write on the same path, say) is asked once.
#[derive(Clone)]
struct Seen {
    /// `GET /api/routines/{id}/run`: the request as a route template.
    asked: String,
    answer: Result<Answer, String>,
}

#[derive(Clone)]
struct Answer {
    status: u16,
    /// The web framework's own 404 (`{"detail": "Not Found"}`): no route at this path.
    framework_404: bool,
    /// resmon's own 404: a JSON body whose `detail` is a sentence about the record.
    own_404: bool,
    /// What resmon said about the `format` parameter when it refused it: its
    /// `detail` sentence naming the format, or the problem of a validation
    /// list whose `loc` is `format` (a release whose format is an enum).
    format_refusal: Option<String>,
    /// The `id` of the first row, when the body is a list of records.
    first_id: Option<i64>,
    /// What the body was, for a list route's answer.
    listed: Listed,
}

/// The shape of an answer that should be a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Listed {
    /// A JSON array of this many rows.
    Rows(usize),
    /// JSON, but not an array.
    Other,
    NotJson,
}

/// Probes every tool of the table against the confirmed backend. All the
/// probes share one deadline (the per-call bound), so a stalled resmon
/// costs `--check` one bound, not one per tool.
pub(crate) fn probe_all(backend: &mut Backend) -> Vec<Verdict> {
    backend.begin_call(Vec::new(), false);
    let mut asker = Asker { backend, seen: Vec::new() };
    tools::TOOLS
        .iter()
        .map(|tool| {
            let (available, route, why) = match tool.probe {
                Probe::Read(path, query) => {
                    let seen = asker.ask(path, query);
                    let (available, why) = read_verdict(&seen, query);
                    (available, Some(seen.asked), why)
                }
                Probe::Each(paths) => each_verdict(&mut asker, paths),
                Probe::OfRun(tail, query) => run_verdict(&mut asker, tail, query),
                Probe::Write(method, path) => {
                    let seen = asker.ask(path, NO_QUERY);
                    let route = backend::route_template(&format!("{} {path}", method.as_str()));
                    let (available, why) = write_verdict(&seen, &route);
                    (available, Some(route), why)
                }
                Probe::NotProbed(why) => (None, None, why.to_string()),
            };
            let probed = !matches!(tool.probe, Probe::NotProbed(_));
            Verdict { name: tool.name, probed, available, route, why }
        })
        .collect()
}

struct Asker<'a> {
    backend: &'a mut Backend,
    /// Each request asked so far (`path?query`) and what it brought back.
    seen: Vec<(String, Seen)>,
}

impl Asker<'_> {
    /// One GET, or what the same GET answered before.
    fn ask(&mut self, path: &str, query: &[(&str, &str)]) -> Seen {
        let query: Vec<(&str, String)> = query.iter().map(|(key, value)| (*key, value.to_string())).collect();
        let pairs: Vec<String> = query.iter().map(|(key, value)| format!("{key}={value}")).collect();
        let key = format!("{path}?{}", pairs.join("&"));
        if let Some((_, seen)) = self.seen.iter().find(|(asked, _)| *asked == key) {
            return seen.clone();
        }
        let asked = backend::route_template(&format!("GET {path}"));
        let answer = match self.backend.send(Method::Get, path, &query, None) {
            Ok(reply) => {
                let body = reply.json().ok();
                let detail = body.as_ref().and_then(|body| body.get("detail"));
                let sentence = detail.and_then(Value::as_str);
                let framework_404 = reply.status == 404 && backend::is_missing_route(&reply);
                Ok(Answer {
                    status: reply.status,
                    framework_404,
                    own_404: reply.status == 404 && !framework_404 && sentence.is_some(),
                    format_refusal: detail.and_then(format_refusal),
                    first_id: body.as_ref().and_then(|body| body.get(0)?.get("id")?.as_i64()),
                    listed: match &body {
                        Some(Value::Array(rows)) => Listed::Rows(rows.len()),
                        Some(_) => Listed::Other,
                        None => Listed::NotJson,
                    },
                })
            }
            Err(error) => Err(error.message),
        };
        let seen = Seen { asked, answer };
        self.seen.push((key, seen.clone()));
        seen
    }
}

/// A read's route is there when a GET answers 2xx, or 404 in resmon's own
/// words about the record asked for; the framework's 404 or a 405 means it
/// is not. A 400 or 422 refusing the `format=json` the probe asked for means
/// this resmon cannot give what the tool needs.
fn read_verdict(seen: &Seen, query: &[(&str, &str)]) -> (Option<bool>, String) {
    let route = &seen.asked;
    let answer = match &seen.answer {
        Ok(answer) => answer,
        Err(message) => return (None, format!("could not be asked: {message}")),
    };
    let status = answer.status;
    let asks_json = query.contains(&("format", "json"));
    if (200..300).contains(&status) {
        (Some(true), format!("answered {status}"))
    } else if answer.framework_404 || status == 405 {
        (Some(false), format!("resmon does not serve {route} (the web framework answered {status})"))
    } else if answer.own_404 {
        (
            Some(true),
            "answered 404 with its own sentence about the record asked for, so the route exists".into(),
        )
    } else if let Some(said) =
        answer.format_refusal.as_deref().filter(|_| asks_json && matches!(status, 400 | 422))
    {
        let said = quoted(said);
        (
            Some(false),
            format!("{route} refused format=json, which this tool needs (resmon answered {status}: {said})"),
        )
    } else {
        (None, format!("{route} answered {status}, which says nothing certain about the route"))
    }
}

/// What a refusal's `detail` says about `format`: a sentence that mentions
/// it, or the first problem of a validation list whose `loc` names it (as
/// `query.format: <its msg>`, with the input it refused).
fn format_refusal(detail: &Value) -> Option<String> {
    if let Some(sentence) = detail.as_str() {
        return sentence.to_lowercase().contains("format").then(|| sentence.to_string());
    }
    detail.as_array()?.iter().find_map(|problem| {
        let loc: Vec<&str> = problem.get("loc")?.as_array()?.iter().filter_map(Value::as_str).collect();
        if loc.last() != Some(&"format") {
            return None;
        }
        let msg = problem.get("msg").and_then(Value::as_str).unwrap_or("refused");
        let input = match problem.get("input") {
            Some(Value::String(input)) => format!(" (input '{input}')"),
            _ => String::new(),
        };
        Some(format!("{}: {msg}{input}", loc.join(".")))
    })
}

/// A write's path is served when a GET there answers 405 (served, with
/// another method) or 2xx (the same path also serves reads); the web
/// framework's 404 there means the route is missing. Nothing else is certain.
fn write_verdict(seen: &Seen, route: &str) -> (Option<bool>, String) {
    let asked = &seen.asked;
    match &seen.answer {
        Err(message) => (None, format!("{asked}, the probe of its path, could not be asked: {message}")),
        Ok(answer) if answer.status == 405 => {
            (Some(true), format!("{asked} answered 405: resmon serves the path, with another method"))
        }
        Ok(answer) if (200..300).contains(&answer.status) => {
            (Some(true), format!("{asked} answered {}: resmon serves the path", answer.status))
        }
        Ok(answer) if answer.framework_404 => (
            Some(false),
            format!(
                "resmon does not serve {route} ({asked} got the web framework's 404: no route at that path)"
            ),
        ),
        Ok(answer) => (
            None,
            format!("{asked}, the probe of its path, answered {}, which says nothing certain", answer.status),
        ),
    }
}

fn each_verdict(asker: &mut Asker, paths: &[&str]) -> (Option<bool>, Option<String>, String) {
    let all: Vec<(Seen, (Option<bool>, String))> = paths
        .iter()
        .map(|path| {
            let seen = asker.ask(path, NO_QUERY);
            let verdict = read_verdict(&seen, NO_QUERY);
            (seen, verdict)
        })
        .collect();
    let missing: Vec<&str> = all
        .iter()
        .filter(|(_, (available, _))| *available == Some(false))
        .map(|(seen, _)| seen.asked.as_str())
        .collect();
    let unknown = all.iter().find(|(_, (available, _))| available.is_none());
    let (available, why) = if !missing.is_empty() {
        let why = format!(
            "resmon does not serve {} ({} of the {} routes its views read; the web framework answered for it)",
            missing.join(", "),
            missing.len(),
            all.len()
        );
        (Some(false), why)
    } else if let Some((_, (_, why))) = unknown {
        (None, why.clone())
    } else {
        (Some(true), format!("all {} of its routes answered", all.len()))
    };
    (available, all.first().map(|(seen, _)| seen.asked.clone()), why)
}

/// Asked about the newest run `list_executions`' route gave: with record 0
/// resmon would answer its own 404 before it looked at the format, which
/// says nothing about whether it can export that format.
fn run_verdict(
    asker: &mut Asker,
    tail: &str,
    query: &[(&str, &str)],
) -> (Option<bool>, Option<String>, String) {
    let route = format!("GET /api/executions/{{id}}/{tail}");
    let runs = asker.ask(NEWEST_RUN.0, NEWEST_RUN.1);
    let run = match &runs.answer {
        Ok(answer) if (200..300).contains(&answer.status) => answer.first_id,
        _ => None,
    };
    let Some(run) = run else {
        let what = match &runs.answer {
            Ok(answer) if (200..300).contains(&answer.status) => match answer.listed {
                Listed::Rows(0) => "it listed none".to_string(),
                Listed::Rows(_) => format!(
                    "{} answered {}, but the first run it listed has no integer `id`",
                    runs.asked, answer.status
                ),
                Listed::Other => format!(
                    "{} answered {} with JSON in another shape, not a list of runs",
                    runs.asked, answer.status
                ),
                Listed::NotJson => {
                    format!("{} answered {} with a body that is not JSON", runs.asked, answer.status)
                }
            },
            Ok(answer) => format!("{} answered {}", runs.asked, answer.status),
            Err(message) => format!("{} could not be asked: {message}", runs.asked),
        };
        return (None, Some(route), format!("not probed: no run to probe with ({what})"));
    };
    let seen = asker.ask(&format!("/api/executions/{run}/{tail}"), query);
    let (available, why) = read_verdict(&seen, query);
    (available, Some(route), format!("{why} (asked about run {run}, the newest)"))
}

/// resmon's sentence, cut to a length a summary line can carry.
fn quoted(detail: &str) -> String {
    let mut text: String = detail.chars().take(160).collect();
    if text.len() < detail.len() {
        text.push('…');
    }
    format!("\"{text}\"")
}

/// The human summary: how many of the tools that were probed are there,
/// then each one missing or unclear, then each one not probed and why. A
/// tool left unprobed is not counted against the release (its JSON verdict
/// keeps `available: null`, contract-notes 19).
pub(crate) fn summary(verdicts: &[Verdict], version: Option<&str>) -> String {
    let probed = verdicts.iter().filter(|verdict| verdict.probed).count();
    let available =
        verdicts.iter().filter(|verdict| verdict.probed && verdict.available == Some(true)).count();
    let release = version.map(|version| format!("resmon {version}")).unwrap_or_else(|| "this resmon".into());
    let mut text = if available == probed {
        format!("tools: all {probed} tools probed are there on {release}\n")
    } else {
        format!("tools: {available} of the {probed} tools probed are there on {release}\n")
    };
    for (label, wanted) in [("missing", Some(false)), ("unknown", None)] {
        for verdict in verdicts.iter().filter(|verdict| verdict.probed && verdict.available == wanted) {
            text.push_str(&format!("  {label}: {}: {}\n", verdict.name, verdict.why));
        }
    }
    for verdict in verdicts.iter().filter(|verdict| !verdict.probed) {
        let why = verdict.why.strip_prefix("not probed: ").unwrap_or(&verdict.why);
        text.push_str(&format!("  not probed: {}: {why}\n", verdict.name));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_is_judged_on_its_own_path_and_every_read_as_a_read() {
        for tool in tools::TOOLS {
            let probe = tool.probe;
            let is_write = tool.requires_confirmation;
            match probe {
                Probe::Write(method, _) => {
                    assert!(is_write, "{} is a read probed as a write", tool.name);
                    assert!(matches!(method, Method::Post | Method::Put), "{}", tool.name);
                }
                Probe::Read(..) | Probe::Each(_) | Probe::OfRun(..) => {
                    assert!(!is_write, "{} is a write probed as a read", tool.name)
                }
                // Only a read may go unprobed: every write has a path to ask about.
                Probe::NotProbed(_) => assert!(!is_write, "{} is a write left unprobed", tool.name),
            }
        }
    }

    fn seen(status: u16, body: &str) -> Seen {
        let detail = serde_json::from_str::<Value>(body).ok().and_then(|body| body.get("detail").cloned());
        let framework_404 = status == 404 && body == r#"{"detail":"Not Found"}"#;
        Seen {
            asked: "GET /api/x/{id}".into(),
            answer: Ok(Answer {
                status,
                framework_404,
                own_404: status == 404 && !framework_404 && detail.as_ref().is_some_and(Value::is_string),
                format_refusal: detail.as_ref().and_then(format_refusal),
                first_id: None,
                listed: Listed::Other,
            }),
        }
    }

    #[test]
    fn a_write_is_there_when_its_path_answers_405_or_2xx() {
        let verdict = |status, body| write_verdict(&seen(status, body), "POST /api/x/{id}").0;
        assert_eq!(verdict(405, r#"{"detail":"Method Not Allowed"}"#), Some(true));
        assert_eq!(verdict(200, "[]"), Some(true));
        assert_eq!(verdict(404, r#"{"detail":"Not Found"}"#), Some(false));
        assert_eq!(verdict(404, r#"{"detail":"Routine not found"}"#), None);
        assert_eq!(verdict(500, "oops"), None);
        assert_eq!(verdict(401, r#"{"detail":{"reason":"token_invalid"}}"#), None);
    }

    #[test]
    fn a_read_refusing_the_json_format_it_needs_is_not_available() {
        let json = &[("format", "json")][..];
        let refused = r#"{"detail":"Unknown export format 'json'. Expected one of: bibtex, csv, ris."}"#;
        assert_eq!(read_verdict(&seen(400, refused), json).0, Some(false));
        assert_eq!(read_verdict(&seen(422, refused), json).0, Some(false));
        // The same refusal of a probe that did not ask for json says nothing certain.
        assert_eq!(read_verdict(&seen(400, refused), NO_QUERY).0, None);
        assert_eq!(read_verdict(&seen(400, r#"{"detail":"Bad cursor"}"#), json).0, None);
        assert_eq!(read_verdict(&seen(404, r#"{"detail":"Execution not found"}"#), json).0, Some(true));
        assert_eq!(read_verdict(&seen(405, r#"{"detail":"Method Not Allowed"}"#), json).0, Some(false));
    }

    /// A release whose `format` is an enum refuses json before it looks at
    /// the run: FastAPI's validation list, not a sentence.
    #[test]
    fn a_validation_list_refusing_the_json_format_means_not_available() {
        let json = &[("format", "json"), ("include_ids", "true")][..];
        let refused = r#"{"detail":[{"type":"enum","loc":["query","format"],"input":"json",
            "msg":"Input should be 'bibtex', 'csv' or 'ris'"}]}"#;
        let (available, why) = read_verdict(&seen(422, refused), json);
        assert_eq!(available, Some(false), "{why}");
        assert!(why.contains("refused format=json") && why.contains("answered 422"), "{why}");
        assert!(
            why.contains("query.format: Input should be 'bibtex', 'csv' or 'ris' (input 'json')"),
            "{why}"
        );
        assert_eq!(read_verdict(&seen(400, refused), json).0, Some(false));
        // A list about another parameter, or a probe that did not ask for
        // json, says nothing certain.
        let other = r#"{"detail":[{"type":"bool_parsing","loc":["query","include_ids"],"input":"true"}]}"#;
        assert_eq!(read_verdict(&seen(422, other), json).0, None);
        assert_eq!(read_verdict(&seen(422, refused), NO_QUERY).0, None);
    }
}
