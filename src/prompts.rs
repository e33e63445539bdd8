//! The prompt table: the questions people bring to resmon most often, each a
//! short text that tells the model which tools to call, in which order, and
//! which of resmon's caveats to keep when it answers (contract-notes 27).
//! `prompts/list`, `prompts/get`, the read-only filter, the bundle manifest
//! and the tests all read this one table, as the tool table is read for tools.
//!
//! A prompt is text and nothing else: building one sends no request to
//! resmon, so it works with the app closed and claims nothing about data.
//! Arguments arrive as strings (the protocol has no other kind) and are
//! checked in `arguments`; every refusal names what was wrong.
//!
//! By concern: this file holds the prompt table itself (arguments, kinds,
//! the table, `prompts/list`); `routes` the question table and the reading of
//! which tools a text names; `texts` the texts; `arguments` `prompts/get` and
//! the checking of its arguments. Their items are re-exported here.

mod arguments;
mod routes;
#[cfg(test)]
mod tests;
mod texts;

use serde_json::{Value, json};

use crate::tools;

pub use arguments::{Refusal, get};
use routes::{FOUND_LATELY, HEALTHY, PERSON_PAPERS, REFERENCES, ROUTINE_BY_NAME, SINCE, WATCH, WHY_MATCHED};
pub use routes::{ROUTES, Route, named_tools};
// The readings of a text by the route table: the unit tests' tools.
#[cfg(test)]
pub(crate) use routes::{clause_tools, route_is_offered, routed_tools, snake_case_words, words};
pub(crate) use texts::sample_text;
pub use texts::template_text;
use texts::{checkup, export, paper, person, recent, watch};

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
pub(crate) fn names_a_write(prompt: &Prompt) -> bool {
    let writes: Vec<&str> =
        tools::TOOLS.iter().filter(|tool| tool.requires_confirmation).map(|tool| tool.name).collect();
    [template_text(prompt), sample_text(prompt, false)]
        .iter()
        .any(|text| named_tools(text).iter().any(|name| writes.contains(name)))
}

/// The `prompts` array of `prompts/list` for this session.
pub(crate) fn listing(read_only: bool) -> Value {
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
