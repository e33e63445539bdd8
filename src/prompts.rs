//! The prompt table: the questions people bring to resmon most often, each a
//! short text that tells the model which tools to call, in which order, and
//! which of resmon's caveats to keep when it answers (contract-notes 27).
//! `prompts/list`, `prompts/get`, the read-only filter, the bundle manifest
//! and the tests all read this one table, as the tool table is read for tools.
//!
//! A prompt is text and nothing else: building one sends no request to
//! resmon, so it works with the app closed and claims nothing about data.
//! Arguments arrive as strings (the protocol has no other kind) and are
//! checked here; every refusal names what was wrong.

use serde_json::{Value, json};

use crate::tools;

/// What an argument may hold, and how its value is written into the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// ASCII digits, 1 to 365; written as the number.
    Days,
    /// ASCII digits, 1 to 2^53 - 1 (the largest integer every JSON reader
    /// keeps exact); written as the number.
    Id,
    /// An id when it is all ASCII digits (checked as `Id`), a name otherwise
    /// (checked as `Text`).
    IdOrName,
    /// At most 100 characters on one line, written as given.
    Text,
    /// One of export_references' formats, any case; written in lower case.
    Format,
}

pub struct Argument {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
    pub kind: Kind,
    /// What an absent or empty optional argument stands for; `None` for
    /// one whose absence widens the question (every routine).
    pub default: Option<&'static str>,
    /// What the text says a blank value stands for, right after the value's
    /// one place: `(blank means <blank>` (empty for a required argument).
    pub blank: &'static str,
}

/// The values a text is built from, in the prompt's argument order: each
/// checked and written in its canonical form; `None` for an optional
/// argument left out (absent or `""`). The text writes a value left out as
/// an empty one and says beside it what a blank stands for, so that the
/// served text and the bundle's template, filled in by a host that writes
/// an omitted argument as nothing, read the same.
pub struct Values<'a> {
    arguments: &'static [Argument],
    values: Vec<Option<std::borrow::Cow<'a, str>>>,
}

impl Values<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        let index = self.arguments.iter().position(|argument| argument.name == name)?;
        self.values[index].as_deref()
    }

    /// The value as the text writes it: empty when left out.
    fn given(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }
}

pub struct Prompt {
    /// Short and plain: Claude Code shows it as `/mcp__resmon__<name>`.
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The one a person gives most comes first: some harnesses pass
    /// arguments by position.
    pub arguments: &'static [Argument],
    /// The questions it answers, in order (the tools its text names).
    pub routes: &'static [Route],
    pub text: fn(&Values) -> String,
}

/// The longest free text an argument accepts, in characters.
pub const MAX_TEXT_CHARS: usize = 100;
/// The largest id accepted: 2^53 - 1.
pub const MAX_ID: u64 = (1 << 53) - 1;
pub const MAX_DAYS: u64 = 365;
pub const FORMATS: [&str; 4] = ["bibtex", "ris", "csv", "json"];

const DAYS: Argument = Argument {
    name: "days",
    description: "How many days back, 1-365 (default 7).",
    required: false,
    kind: Kind::Days,
    default: Some("7"),
    blank: "7",
};

/// The table, in the order `prompts/list` shows it.
pub static PROMPTS: &[Prompt] = &[
    Prompt {
        name: "recent",
        title: "What my routines found lately",
        description: "New papers per routine over the last days, with each run's status and source coverage.",
        arguments: &[
            DAYS,
            Argument {
                name: "routine",
                description: "One routine, by id or name (default: all). Claude Code passes one word.",
                required: false,
                kind: Kind::IdOrName,
                default: None,
                blank: "every routine",
            },
        ],
        routes: &[ROUTINE_BY_NAME, FOUND_LATELY],
        text: recent,
    },
    Prompt {
        name: "checkup",
        title: "Is my monitoring healthy?",
        description: "Reachability, watchdog findings, missed fires, and failed or interrupted runs.",
        arguments: &[DAYS],
        routes: &[HEALTHY],
        text: checkup,
    },
    Prompt {
        name: "person",
        title: "A watched person's papers",
        description: "The papers matched to a watch profile, each with the basis of its match.",
        arguments: &[Argument {
            name: "person",
            description: "Watch profile id or name. Claude Code passes one word: give an id for a longer name.",
            required: true,
            kind: Kind::IdOrName,
            default: None,
            blank: "",
        }],
        routes: &[PERSON_PAPERS],
        text: person,
    },
    Prompt {
        name: "paper",
        title: "One paper: why it matched, what became of it",
        description: "Why a stored paper matched, and any retraction or published version since.",
        arguments: &[Argument {
            name: "doc_id",
            description: "The paper's doc_id.",
            required: true,
            kind: Kind::Id,
            default: None,
            blank: "",
        }],
        routes: &[WHY_MATCHED, SINCE],
        text: paper,
    },
    Prompt {
        name: "export",
        title: "Export a run's references",
        description: "A run's references as a file for a reference manager.",
        arguments: &[
            Argument {
                name: "exec_id",
                description: "The run's id.",
                required: true,
                kind: Kind::Id,
                default: None,
                blank: "",
            },
            Argument {
                name: "format",
                description: "bibtex (default), ris, csv or json.",
                required: false,
                kind: Kind::Format,
                default: Some("bibtex"),
                blank: "bibtex",
            },
        ],
        routes: &[REFERENCES],
        text: export,
    },
    Prompt {
        name: "watch",
        title: "Start watching a person",
        description: "Sets up a watch profile for a person, after asking you.",
        arguments: &[Argument {
            name: "name",
            description: "The person's name. Claude Code passes one word; the full name is asked for.",
            required: true,
            kind: Kind::Text,
            default: None,
            blank: "",
        }],
        routes: &[WATCH],
        text: watch,
    },
];

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

const FOUND_LATELY: Route = Route {
    question: "what a routine found lately",
    tools: &["list_executions", "get_execution", "get_execution_results"],
};
const ROUTINE_BY_NAME: Route = Route { question: "a routine's id by name", tools: &["list_routines"] };
const ON_A_TOPIC: Route = Route { question: "papers on a topic", tools: &["search_corpus"] };
const UP: Route = Route { question: "is resmon up", tools: &["health"] };
const HEALTHY: Route = Route {
    question: "is the monitoring healthy",
    tools: &["health", "get_watchdog_findings", "list_routines", "list_executions", "get_execution"],
};
const PERSON_PAPERS: Route =
    Route { question: "a person's papers", tools: &["list_watch_profiles", "get_profile_matches"] };
const WHY_MATCHED: Route = Route { question: "why a paper matched", tools: &["explain_match"] };
const SINCE: Route = Route { question: "retracted or since published", tools: &["get_paper_lifecycle"] };
const REFERENCES: Route =
    Route { question: "a run's references", tools: &["get_execution", "export_references"] };
const WATCH: Route =
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
pub fn route_is_offered(route: &Route, read_only: bool) -> bool {
    route.tools.iter().all(|name| tools::find(name).is_some_and(|tool| tools::is_offered(tool, read_only)))
}

/// The tools a prompt's questions call, in order, each once.
pub fn routed_tools(prompt: &Prompt) -> Vec<&'static str> {
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
pub fn clause_tools(text: &str, question: &str) -> Option<Vec<&'static str>> {
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

// The texts. Each names the tools to call in order and the caveats to keep;
// each says whether it may change anything. Written for a model that has
// the tool list but may not have read every description.
//
// Each value is written once, quoted, and an optional one is followed by
// what a blank stands for: a host that fills in the bundle's template writes
// an omitted argument as nothing, and the text must still read right.
// Claude Code splits a slash command's arguments at every space and keeps
// one word per argument, so a name may arrive cut short: the texts that
// take a name say to check it with the person.

fn recent(values: &Values) -> String {
    let days = values.given("days");
    let routine = values.given("routine");
    format!(
        "What did my resmon routines find lately? Days back: \"{days}\" (blank means 7). Routine: \
         \"{routine}\" (blank means every routine; all digits: its id; else a name, maybe only its first word, \
         as some harnesses pass one word).\n\
         1. list_routines: names and ids, and missed_fires. For a name, find the routines it could mean; if \
         none, or more than one, show me the candidates and ask which.\n\
         2. list_executions (with routine_id for one routine): runs newest first; keep those started in the \
         window (page with offset).\n\
         3. Per run: get_execution (status, per-source coverage), then get_execution_results (its papers).\n\
         Report per routine: its runs, then the new papers (title, date, doc_id). Keep it honest:\n\
         - interrupted means resmon stopped mid-run (e.g. the app was closed), not that the search failed;\n\
         - a source that did not answer, or answered in part, did not find nothing: name it and give \
         resmon's zero-reason;\n\
         - missed_fires are runs that never happened because resmon was closed.\n\
         Pass on resmon's caveats as given. Only read: change nothing."
    )
}

fn checkup(values: &Values) -> String {
    let days = values.given("days");
    format!(
        "Is my resmon monitoring healthy? Days back: \"{days}\" (blank means 7).\n\
         1. health: is resmon reachable, and what state are its scheduler and daemon in? If it is not \
         reachable, say what its message says to do, and stop.\n\
         2. get_watchdog_findings: only severity broken or unusual is an alarm; pass on what_to_do and \
         not_enough_data.\n\
         3. list_routines: active routines with missed_fires (fires due while resmon was closed).\n\
         4. list_executions with status failed, then with status interrupted: runs started in the window. \
         get_execution says why a run failed.\n\
         Then a short verdict, problems first. An interrupted run was cut off by the app stopping; it is \
         not a failed search, so do not count it as one. A source that did not answer is not a source \
         that found nothing. Only read: if something should be run or switched, tell me what I could do."
    )
}

fn person(values: &Values) -> String {
    let person = values.given("person");
    format!(
        "Which papers has resmon matched to the watched person \"{person}\"? All digits: a watch profile id; \
         else a name, maybe only its first word, as some harnesses pass one word.\n\
         1. list_watch_profiles with kind person: find the profiles it could mean; if none, or more than \
         one, show me the candidates and ask which. Note the profile's basis_warning.\n\
         2. get_profile_matches (page with offset): per paper, title, date, doc_id, basis and \
         matched_author.\n\
         Group the papers by basis. An identifier match rests on an ID; name+affiliation on the name and \
         an affiliation. A name_only match only means the name is on the paper: never call it this \
         person's paper; say it may be someone else's. Repeat basis_warning and what_a_basis_means as \
         resmon gives them. Only read: change nothing."
    )
}

fn paper(values: &Values) -> String {
    let doc_id = values.given("doc_id");
    format!(
        "Tell me about paper {doc_id} in resmon: why it matched, and what has happened to it since.\n\
         1. explain_match: which keywords matched and where, resmon's verdict, the runs that found it. \
         Pass on what_resmon_cannot_see. No keyword match is normal for sources that rank by relevance.\n\
         2. get_paper_lifecycle: retraction, published version, new versions, with notice links. \
         checked_at null means it was never checked, so no events proves nothing; check_status error or \
         no_identifier means the check could not tell.\n\
         Lead with a retraction if there is one. Add nothing resmon did not say. Only read: change nothing."
    )
}

fn export(values: &Values) -> String {
    let exec_id = values.given("exec_id");
    let format = values.given("format");
    format!(
        "Export the references of resmon run {exec_id} for my reference manager. Format: \"{format}\" \
         (blank means bibtex).\n\
         1. get_execution with exec_id {exec_id}: if the run is still running, or was interrupted, say \
         the list may be incomplete (interrupted is not failed).\n\
         2. export_references with exec_id {exec_id} and that format.\n\
         Give me the text exactly as returned, in one code block, with resmon's count, and suggest a file \
         name (.bib for bibtex, else .ris, .csv or .json). Do not edit, reorder or complete entries. Only \
         read: change nothing."
    )
}

fn watch(values: &Values) -> String {
    let name = values.given("name");
    format!(
        "Help me start watching \"{name}\" in resmon. Some harnesses pass only an argument's first word, so \
         this may not be the whole name: first ask me for the person's full name and use that.\n\
         1. list_watch_profiles: if a profile for this person exists, show it and stop.\n\
         2. Ask me for the person's ORCID and where it is cited. With one, matches can rest on the \
         identifier; with a name alone every match is name_only, which may be another person's paper.\n\
         3. Show me the create_watch_profile call you would make (the full name I confirmed, orcid, \
         orcid_cited) and wait for my yes: it changes resmon. Then repeat resmon's basis_warning."
    )
}

/// The prompt by name.
pub fn find(name: &str) -> Option<&'static Prompt> {
    PROMPTS.iter().find(|prompt| prompt.name == name)
}

/// Whether a prompt is listed and served in this session: a read-only
/// session offers only prompts whose text names no tool that changes
/// resmon, so no prompt there leads the model to a tool it cannot call.
pub fn is_offered(prompt: &Prompt, read_only: bool) -> bool {
    !(read_only && names_a_write(prompt))
}

/// Whether any form of the prompt's text names a write tool: the form with
/// every argument given and the one with only the required ones.
pub fn names_a_write(prompt: &Prompt) -> bool {
    let writes: Vec<&str> =
        tools::TOOLS.iter().filter(|tool| tool.requires_confirmation).map(|tool| tool.name).collect();
    [template_text(prompt), sample_text(prompt, false)]
        .iter()
        .any(|text| named_tools(text).iter().any(|name| writes.contains(name)))
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
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|word| !word.is_empty())
}

/// The words spelled as tools and fields are (lower case, with an
/// underscore): the ones a test holds to the tool table and its listing.
/// Environment variables and the like, in capitals, are not among them.
pub fn snake_case_words(text: &str) -> impl Iterator<Item = &str> {
    words(text).filter(|word| {
        word.contains('_') && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// The `prompts` array of `prompts/list` for this session.
pub fn listing(read_only: bool) -> Value {
    Value::Array(
        PROMPTS
            .iter()
            .filter(|prompt| is_offered(prompt, read_only))
            .map(|prompt| {
                let arguments: Vec<Value> = prompt
                    .arguments
                    .iter()
                    .map(|argument| {
                        json!({
                            "name": argument.name,
                            "description": argument.description,
                            "required": argument.required,
                        })
                    })
                    .collect();
                json!({
                    "name": prompt.name,
                    "title": prompt.title,
                    "description": prompt.description,
                    "arguments": arguments,
                })
            })
            .collect(),
    )
}

/// Why `prompts/get` was refused: a sentence, and the argument it names.
#[derive(Debug)]
pub struct Refusal {
    pub message: String,
    pub argument: Option<&'static str>,
}

impl Refusal {
    fn of(argument: &'static str, message: String) -> Refusal {
        Refusal { message, argument: Some(argument) }
    }
}

/// The `prompts/get` result for `params` (name and arguments), or why not.
/// A prompt this session does not offer is refused exactly as a name no
/// prompt has.
pub fn get(params: &Value, read_only: bool) -> Result<Value, Refusal> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        let message = match params.get("name") {
            None | Some(Value::Null) => "prompts/get needs a prompt name in params.name.".to_string(),
            Some(other) => format!("params.name must be a string, not {}.", kind_of(other)),
        };
        return Err(Refusal { message, argument: None });
    };
    let Some(prompt) = find(name).filter(|prompt| is_offered(prompt, read_only)) else {
        let offered: Vec<&str> =
            PROMPTS.iter().filter(|prompt| is_offered(prompt, read_only)).map(|prompt| prompt.name).collect();
        return Err(Refusal {
            message: format!("unknown prompt {:?}; the prompts are {}.", clip(name), offered.join(", ")),
            argument: None,
        });
    };
    let empty = serde_json::Map::new();
    let given = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(given)) => given,
        Some(other) => {
            return Err(Refusal {
                message: format!(
                    "params.arguments must be an object whose values are strings, not {}.",
                    kind_of(other)
                ),
                argument: None,
            });
        }
    };
    let values = check(prompt, given)?;
    Ok(json!({
        "description": prompt.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": (prompt.text)(&values)}}],
    }))
}

/// Checks every argument given against the prompt's table; one left out
/// stays `None` (the text says what a blank means). An unknown argument is
/// refused before any value is judged.
fn check<'a>(prompt: &Prompt, given: &'a serde_json::Map<String, Value>) -> Result<Values<'a>, Refusal> {
    if let Some(unknown) = given.keys().find(|key| !prompt.arguments.iter().any(|a| a.name == key.as_str())) {
        let takes: Vec<&str> = prompt.arguments.iter().map(|argument| argument.name).collect();
        return Err(Refusal {
            message: format!(
                "prompt {:?} has no argument {:?}; it takes {}.",
                prompt.name,
                clip(unknown),
                takes.join(", ")
            ),
            argument: None,
        });
    }
    let mut values = Vec::with_capacity(prompt.arguments.len());
    for argument in prompt.arguments {
        let text = match given.get(argument.name) {
            None => "",
            Some(Value::String(text)) => text.as_str(),
            Some(other) => {
                return Err(Refusal::of(
                    argument.name,
                    format!(
                        "argument {:?} of prompt {:?} must be a string, not {}.",
                        argument.name,
                        prompt.name,
                        kind_of(other)
                    ),
                ));
            }
        };
        if text.is_empty() {
            if argument.required {
                return Err(Refusal::of(
                    argument.name,
                    format!(
                        "prompt {:?} needs the argument {:?} ({})",
                        prompt.name, argument.name, argument.description
                    ),
                ));
            }
            values.push(None);
            continue;
        }
        let value = judge(argument.kind, text)
            .map_err(|why| Refusal::of(argument.name, format!("argument {:?} {why}", argument.name)))?;
        values.push(Some(value));
    }
    Ok(Values { arguments: prompt.arguments, values })
}

/// One value against its kind: its canonical form, or why it is refused
/// (a phrase that follows the argument's name).
fn judge(kind: Kind, text: &str) -> Result<std::borrow::Cow<'_, str>, String> {
    use std::borrow::Cow;
    let number = |max: u64, what: &str| -> Result<Cow<'_, str>, String> {
        let bad =
            || format!("must be {what} written in ASCII digits, from 1 to {max}; got {:?}.", clip(text));
        if !text.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(bad());
        }
        // Leading zeros are allowed and dropped; anything longer than 20
        // digits is out of range whatever it says.
        let value = text.trim_start_matches('0');
        match value.parse::<u64>() {
            Ok(value) if (1..=max).contains(&value) => Ok(Cow::Owned(value.to_string())),
            _ => Err(bad()),
        }
    };
    match kind {
        Kind::Days => number(MAX_DAYS, "a number of days"),
        Kind::Id => number(MAX_ID, "an id"),
        Kind::IdOrName if text.bytes().all(|byte| byte.is_ascii_digit()) => number(MAX_ID, "an id"),
        Kind::IdOrName | Kind::Text => {
            let chars = text.chars().count();
            if chars > MAX_TEXT_CHARS {
                Err(format!("is {chars} characters long; at most {MAX_TEXT_CHARS} are accepted."))
            } else if text.chars().any(char::is_control) {
                Err("must be one line of text, without control characters.".to_string())
            } else {
                Ok(Cow::Borrowed(text))
            }
        }
        Kind::Format => FORMATS
            .iter()
            .find(|format| format.eq_ignore_ascii_case(text))
            .map(|format| Cow::Borrowed(*format))
            .ok_or_else(|| format!("must be one of {}; got {:?}.", FORMATS.join(", "), clip(text))),
    }
}

/// The text with every argument standing as `${arguments.<name>}`, the
/// placeholder an MCP Bundle manifest's prompt text uses: what the bundle
/// declares, and what `prompts/get` answers once each is replaced by a
/// value it accepts.
pub fn template_text(prompt: &Prompt) -> String {
    let values = prompt
        .arguments
        .iter()
        .map(|argument| Some(std::borrow::Cow::Owned(format!("${{arguments.{}}}", argument.name))))
        .collect();
    (prompt.text)(&Values { arguments: prompt.arguments, values })
}

/// The text for sample values: with `longest`, every argument at the
/// longest value it accepts (free text as 100 four-byte characters); else
/// only the required ones, given as short values.
pub fn sample_text(prompt: &Prompt, longest: bool) -> String {
    let values = prompt
        .arguments
        .iter()
        .map(|argument| {
            let sample = match (argument.kind, longest) {
                (_, false) if !argument.required => return None,
                (Kind::Days, _) => MAX_DAYS.to_string(),
                (Kind::Id, true) => MAX_ID.to_string(),
                (Kind::Id, false) => "7".to_string(),
                (Kind::IdOrName | Kind::Text, true) => "\u{1D538}".repeat(MAX_TEXT_CHARS),
                (Kind::IdOrName | Kind::Text, false) => "Ada Lovelace".to_string(),
                (Kind::Format, _) => "bibtex".to_string(),
            };
            Some(std::borrow::Cow::Owned(sample))
        })
        .collect();
    (prompt.text)(&Values { arguments: prompt.arguments, values })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT_BUDGET: usize = 1_536;

    /// The words of the tool listing that are spelled like fields: a word
    /// with an underscore that a prompt uses must be a tool or one of these.
    fn listing_words() -> Vec<String> {
        words(tools::listing_json(false)).map(str::to_string).collect()
    }

    fn every_text(prompt: &Prompt) -> Vec<String> {
        vec![template_text(prompt), sample_text(prompt, true), sample_text(prompt, false)]
    }

    #[test]
    fn names_are_short_plain_and_unique_and_arguments_too() {
        let mut names: Vec<&str> = PROMPTS.iter().map(|prompt| prompt.name).collect();
        for prompt in PROMPTS {
            assert!(
                !prompt.name.is_empty()
                    && prompt.name.len() <= 12
                    && prompt.name.bytes().all(|byte| byte.is_ascii_lowercase()),
                "{}",
                prompt.name
            );
            let mut arguments: Vec<&str> = prompt.arguments.iter().map(|argument| argument.name).collect();
            arguments.sort_unstable();
            arguments.dedup();
            assert_eq!(arguments.len(), prompt.arguments.len(), "{}", prompt.name);
            for argument in prompt.arguments {
                assert!(
                    argument.required || argument.default.is_some() || argument.kind == Kind::IdOrName,
                    "{}.{}: an optional argument says what it stands for when left out",
                    prompt.name,
                    argument.name
                );
                if let Some(default) = argument.default {
                    assert_eq!(judge(argument.kind, default).unwrap(), default, "{}", argument.name);
                    assert_eq!(argument.blank, default, "{}: the text states the default", argument.name);
                }
                assert_eq!(argument.required, argument.blank.is_empty(), "{}", argument.name);
            }
            // Required arguments come first: a harness that passes them by
            // position must not have to skip an optional one.
            let first_optional = prompt.arguments.iter().position(|argument| !argument.required);
            let last_required = prompt.arguments.iter().rposition(|argument| argument.required);
            if let (Some(optional), Some(required)) = (first_optional, last_required) {
                assert!(required < optional, "{}", prompt.name);
            }
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PROMPTS.len());
    }

    /// Every word spelled like a tool or field name is a tool of the table
    /// or a word of the tool listing (a field, an argument, a value), so a
    /// renamed or misspelled tool cannot hide in a prompt.
    #[test]
    fn every_tool_a_prompt_names_is_in_the_table() {
        let known = listing_words();
        for prompt in PROMPTS {
            for text in every_text(prompt) {
                for word in snake_case_words(&text) {
                    assert!(
                        tools::find(word).is_some() || known.iter().any(|known| known == word),
                        "prompt {} names {word:?}, which is neither a tool nor a word of the tool listing",
                        prompt.name
                    );
                }
                assert!(!named_tools(&text).is_empty(), "{} names no tool", prompt.name);
            }
        }
    }

    #[test]
    fn a_read_only_session_offers_exactly_the_prompts_that_name_no_write() {
        let writes: Vec<&str> =
            tools::TOOLS.iter().filter(|tool| tool.requires_confirmation).map(|tool| tool.name).collect();
        let mut hidden = 0;
        for prompt in PROMPTS {
            let names_one = every_text(prompt)
                .iter()
                .any(|text| named_tools(text).iter().any(|name| writes.contains(name)));
            assert_eq!(is_offered(prompt, true), !names_one, "{}", prompt.name);
            assert!(is_offered(prompt, false), "{}", prompt.name);
            if names_one {
                hidden += 1;
                // A text that leads to a write says to ask first.
                assert!(
                    every_text(prompt).iter().all(|text| text.contains("wait for my yes")),
                    "{}",
                    prompt.name
                );
            } else {
                assert!(
                    every_text(prompt)
                        .iter()
                        .all(|text| text.contains("change nothing") || text.contains("Only read")),
                    "{} says it only reads",
                    prompt.name
                );
            }
        }
        assert!(hidden > 0, "the filter is exercised by at least one prompt");
        assert_eq!(listing(true).as_array().unwrap().len(), PROMPTS.len() - hidden);
    }

    #[test]
    fn each_text_fits_its_budget_at_the_longest_accepted_values() {
        for prompt in PROMPTS {
            let longest = sample_text(prompt, true);
            println!("prompt {}: {} B at the longest values", prompt.name, longest.len());
            assert!(
                longest.len() <= TEXT_BUDGET,
                "{}: {} B over {TEXT_BUDGET} B",
                prompt.name,
                longest.len()
            );
            for text in every_text(prompt) {
                assert!(text.len() <= longest.len() || text.contains("${arguments."), "{}", prompt.name);
            }
        }
    }

    #[test]
    fn values_are_judged_as_the_table_says() {
        assert_eq!(judge(Kind::Days, "7").unwrap(), "7");
        assert_eq!(judge(Kind::Days, "007").unwrap(), "7");
        assert_eq!(judge(Kind::Days, "365").unwrap(), "365");
        for bad in ["0", "366", "-1", "+3", " 7", "7 ", "1e2", "seven", "٣", "99999999999999999999999"] {
            assert!(judge(Kind::Days, bad).is_err(), "{bad:?}");
        }
        assert_eq!(judge(Kind::Id, "9007199254740991").unwrap(), "9007199254740991");
        for bad in ["0", "9007199254740992", "18446744073709551616", "1.0", "0x10"] {
            assert!(judge(Kind::Id, bad).is_err(), "{bad:?}");
        }
        assert_eq!(judge(Kind::IdOrName, "12").unwrap(), "12");
        assert!(judge(Kind::IdOrName, "0").is_err(), "all digits is an id");
        assert_eq!(judge(Kind::IdOrName, "LLM safety").unwrap(), "LLM safety");
        let hundred = "é".repeat(MAX_TEXT_CHARS);
        assert_eq!(judge(Kind::Text, &hundred).unwrap(), hundred);
        assert!(judge(Kind::Text, &format!("{hundred}e")).is_err());
        assert!(judge(Kind::Text, "two\nlines").is_err());
        assert_eq!(judge(Kind::Format, "BibTeX").unwrap(), "bibtex");
        assert!(judge(Kind::Format, "bib").is_err());
    }

    /// The values a test gives: every argument, or only the required ones.
    fn given(prompt: &Prompt, every: bool) -> serde_json::Map<String, Value> {
        prompt
            .arguments
            .iter()
            .filter(|argument| every || argument.required)
            .map(|argument| {
                let value = match argument.kind {
                    Kind::Days => "30",
                    Kind::Id => "42",
                    Kind::IdOrName | Kind::Text => "Grace Hopper",
                    Kind::Format => "ris",
                };
                (argument.name.to_string(), json!(value))
            })
            .collect()
    }

    /// The bundle's template, filled in as a host does: each placeholder
    /// replaced by the value given, or by nothing for one left out. That
    /// is the text `prompts/get` serves for the same arguments, whether
    /// the optional ones are given or not.
    #[test]
    fn the_template_is_the_text_once_values_replace_its_placeholders() {
        for prompt in PROMPTS {
            let template = template_text(prompt);
            for every in [true, false] {
                let given = given(prompt, every);
                let mut filled = template.clone();
                for argument in prompt.arguments {
                    let value = given.get(argument.name).and_then(Value::as_str).unwrap_or_default();
                    filled = filled.replace(&format!("${{arguments.{}}}", argument.name), value);
                }
                assert!(!filled.contains("${"), "{filled}");
                let got = get(&json!({"name": prompt.name, "arguments": given}), false).unwrap();
                assert_eq!(
                    got["messages"][0]["content"]["text"], filled,
                    "{} (every argument: {every})",
                    prompt.name
                );
            }
        }
    }

    /// An optional value stands in one place, quoted, and what a blank
    /// means follows it: its default, or what leaving it out asks for. So
    /// a text filled with nothing there still says what to do.
    #[test]
    fn an_optional_value_left_blank_says_what_it_stands_for() {
        for prompt in PROMPTS {
            let template = template_text(prompt);
            for argument in prompt.arguments.iter().filter(|argument| !argument.required) {
                let placeholder =
                    format!("\"${{arguments.{}}}\" (blank means {}", argument.name, argument.blank);
                assert_eq!(
                    template.matches(&format!("${{arguments.{}}}", argument.name)).count(),
                    1,
                    "{template}"
                );
                assert!(template.contains(&placeholder), "{}: no {placeholder:?} in {template}", prompt.name);
            }
        }
        let blank = get(&json!({"name": "recent"}), false).unwrap();
        let text = blank["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("Days back: \"\" (blank means 7)"), "{text}");
        assert!(text.contains("Routine: \"\" (blank means every routine"), "{text}");
    }

    /// Each prompt names exactly the tools of its questions, in the order
    /// the route table gives them, in every form of its text.
    #[test]
    fn each_prompt_names_its_routes_tools_in_order() {
        for prompt in PROMPTS {
            assert!(!prompt.routes.is_empty(), "{}", prompt.name);
            for route in prompt.routes {
                assert!(ROUTES.iter().any(|known| known.question == route.question), "{}", route.question);
            }
            for text in every_text(prompt) {
                assert_eq!(named_tools(&text), routed_tools(prompt), "{}: {text}", prompt.name);
            }
        }
    }

    #[test]
    fn routes_name_tools_of_the_table_and_clauses_are_read_as_written() {
        for route in ROUTES {
            assert!(!route.tools.is_empty(), "{}", route.question);
            for name in route.tools {
                assert!(tools::find(name).is_some(), "{}: {name} is no tool", route.question);
            }
        }
        let text =
            "a: health (x; y), get_execution; b: search_corpus. c: list_routines (a. b) and explain_match.";
        assert_eq!(clause_tools(text, "a"), Some(vec!["health", "get_execution"]));
        assert_eq!(clause_tools(text, "b"), Some(vec!["search_corpus"]));
        assert_eq!(clause_tools(text, "c"), Some(vec!["list_routines", "explain_match"]));
        assert_eq!(clause_tools(text, "d"), None);
    }
}
