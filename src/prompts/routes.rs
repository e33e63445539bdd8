//! The route table: the common questions and the tools that answer each, in
//! order, which both the server's instructions and the prompts follow; and
//! the reading of which tools a text names, by which tests hold both texts
//! to the table (contract-notes 27).

#[cfg(test)]
use super::Prompt;
use crate::tools;

/// One of the common questions, and the tools that answer it, in the order
/// to call them. The server's instructions and the prompts both route by
/// this table: the instructions give each question a clause
/// `<question>: <tool>, <tool> …` naming exactly these tools in this order,
/// and a prompt's text names exactly its questions' tools, in order. Tests
/// hold both texts to it (contract-notes 27).
pub struct Route {
    /// The words the instructions use for the question, before the colon.
    pub question: &'static str,
    pub tools: &'static [&'static str],
}

pub(super) const FOUND_LATELY: Route = Route {
    question: "what a routine found lately",
    tools: &["list_executions", "get_execution", "get_execution_results"],
};
pub(super) const ROUTINE_BY_NAME: Route =
    Route { question: "a routine's id by name", tools: &["list_routines"] };
const ON_A_TOPIC: Route = Route { question: "papers on a topic", tools: &["search_corpus"] };
const UP: Route = Route { question: "is resmon up", tools: &["health"] };
pub(super) const HEALTHY: Route = Route {
    question: "is the monitoring healthy",
    tools: &["health", "get_watchdog_findings", "list_routines", "list_executions", "get_execution"],
};
pub(super) const PERSON_PAPERS: Route =
    Route { question: "a person's papers", tools: &["list_watch_profiles", "get_profile_matches"] };
pub(super) const WHY_MATCHED: Route = Route { question: "why a paper matched", tools: &["explain_match"] };
pub(super) const SINCE: Route =
    Route { question: "retracted or since published", tools: &["get_paper_lifecycle"] };
pub(super) const REFERENCES: Route =
    Route { question: "a run's references", tools: &["get_execution", "export_references"] };
pub(super) const WATCH: Route =
    Route { question: "watch a person", tools: &["list_watch_profiles", "create_watch_profile"] };

/// Every route, in the order the instructions give them.
pub static ROUTES: &[Route] = &[
    FOUND_LATELY,
    ROUTINE_BY_NAME,
    ON_A_TOPIC,
    UP,
    HEALTHY,
    PERSON_PAPERS,
    WHY_MATCHED,
    SINCE,
    REFERENCES,
    WATCH,
];

/// Whether every tool of a route is offered in this session.
#[cfg(test)]
pub(crate) fn route_is_offered(route: &Route, read_only: bool) -> bool {
    route.tools.iter().all(|name| tools::find(name).is_some_and(|tool| tools::is_offered(tool, read_only)))
}

/// The tools a prompt's questions call, in order, each once.
#[cfg(test)]
pub(crate) fn routed_tools(prompt: &Prompt) -> Vec<&'static str> {
    let mut named: Vec<&'static str> = Vec::new();
    for tool in prompt.routes.iter().flat_map(|route| route.tools.iter()) {
        if !named.contains(tool) {
            named.push(tool);
        }
    }
    named
}

/// The tools the clause `<question>: …` of a text names, in order: the
/// clause runs from the colon to the first `;` or `. ` outside
/// parentheses. `None` when the text has no such clause.
#[cfg(test)]
pub(crate) fn clause_tools(text: &str, question: &str) -> Option<Vec<&'static str>> {
    let start = text.find(&format!("{question}: "))? + question.len() + 2;
    let rest = &text[start..];
    let mut depth = 0_i32;
    let mut end = rest.len();
    for (at, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ';' if depth == 0 => {
                end = at;
                break;
            }
            '.' if depth == 0 && rest[at + 1..].chars().next().is_none_or(char::is_whitespace) => {
                end = at;
                break;
            }
            _ => {}
        }
    }
    Some(named_tools(&rest[..end]))
}

/// The tools a text names: every word (letters, digits, underscores) that
/// is a tool's name, in order of first appearance.
pub fn named_tools(text: &str) -> Vec<&'static str> {
    let mut named = Vec::new();
    for word in words(text) {
        if let Some(tool) = tools::find(word)
            && !named.contains(&tool.name)
        {
            named.push(tool.name);
        }
    }
    named
}

/// The words of a text as tool and field names are spelled.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|word| !word.is_empty())
}

/// The words spelled as tools and fields are (lower case, with an
/// underscore): the ones a test holds to the tool table and its listing.
/// Environment variables and the like, in capitals, are not among them.
#[cfg(test)]
pub(crate) fn snake_case_words(text: &str) -> impl Iterator<Item = &str> {
    words(text).filter(|word| {
        word.contains('_') && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}
