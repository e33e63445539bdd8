//! The tool table: one entry per tool of contract 1.0 "Tools", in the order
//! `tools/list` shows them. `tools/list`, the read-only filter, `call`, the
//! generated docs and the tests all read this one table.
//!
//! A handler is a plain function that receives arguments already checked
//! against its own input schema, talks to resmon through `Backend`, and
//! returns the answer or a `ToolError`. Handlers know nothing of JSON-RPC.

mod accepted;
mod corpus;
mod executions;
mod exports;
mod insight;
mod loose;
mod nearest;
mod papers;
mod profiles;
mod routines;
mod rows;
mod schema;
mod settings;
mod sources;
mod system;
mod withhold;
mod write_records;
mod write_runs;

use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::args::{self, Args};
use crate::backend::{Backend, Method, Offered};
use crate::error::{ToolError, ToolResult};

pub(crate) use executions::NEWEST_RUN;
pub use nearest::nearest_names;
pub(crate) use schema::{
    DEFAULT_PAGE, MAX_PAGE, identity_property, limit_property, limit_up_to, no_arguments, nullable, object,
    offset_property, passed_through,
};

/// The version of the tool surface this table implements (contract 1.0
/// "Versioning"): the server reports it in its initialization answer, and
/// resmon's other consumer reads it there.
pub const CONTRACT_VERSION: &str = "1.0";

pub(crate) type Handler = fn(&mut Backend, &Args) -> ToolResult;

/// Builds one of a tool's schemas.
pub(crate) type SchemaBuilder = fn() -> Value;

pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    /// Written for a model deciding whether and how to call the tool.
    pub description: &'static str,
    /// Sent in full to a harness that defers tool definitions (Claude Code's
    /// tool search): the tool is loaded before any search. Only the few read
    /// tools most questions start from, within the budget docs/findability.md
    /// measures (`_meta["anthropic/alwaysLoad"]`).
    pub always_load: bool,
    /// Plain words a person uses for what the tool answers, indexed by
    /// Claude Code's tool search beside the name and description, and shown
    /// to no model (`_meta["anthropic/searchHint"]`; docs/findability.md).
    pub search_hint: &'static str,
    pub input_schema: SchemaBuilder,
    /// What a successful answer holds. Compiled into the unit tests only:
    /// the server never builds an output schema (`tools/list` sends the
    /// snapshot, which a unit test below regenerates from this field, and
    /// answers are not checked against their schema at run time), and a
    /// builder held in this static would be linked into the binary anyway,
    /// about 215 KB of it (docs/performance.md "Binary size"). Outside the
    /// unit tests, `output_schema` reads a tool's schema from the snapshot.
    #[cfg(test)]
    pub output_schema: SchemaBuilder,
    /// The arguments this tool sends under another name, or folds into a
    /// field of its own: (argument, the request fields that carry it, each
    /// by its whole path in the body, parts joined by `.`:
    /// `parameters.repositories`). Every other argument travels as a
    /// top-level field of its own name (contract-notes 17).
    pub backend_names: &'static [(&'static str, &'static [&'static str])],
    /// The arguments this tool never sends as they came (list_executions
    /// reads resmon's runs in pages of its own choosing and pages the answer
    /// itself), so that they name no request field.
    pub not_sent_as_given: &'static [&'static str],
    /// Arguments the tool does not declare but that a caller is likely to
    /// send, each refused by name with a sentence saying what to use instead
    /// of the generic unknown-argument one: (argument, sentence).
    pub declined_arguments: &'static [(&'static str, &'static str)],
    /// How `--check` judges whether the resmon it reached serves this tool
    /// (src/probe.rs; contract-notes 19).
    pub(crate) probe: Probe,
    /// resmon's own flag (contract 1.0 "Write"): true for the seven writes.
    pub requires_confirmation: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// True when the tool makes resmon reach sources outside this machine.
    pub open_world: bool,
    pub handler: Handler,
}

/// How `--check` judges a tool (src/probe.rs). Every probe is a GET.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Probe {
    /// A read: a GET on its route (id 0 where the route takes one, which
    /// resmon answers with its own 404 about that record).
    Read(&'static str, &'static [(&'static str, &'static str)]),
    /// A read of several routes: available when all are.
    Each(&'static [&'static str]),
    /// A read whose answer depends on the run, not only on the route: a GET
    /// on `/api/executions/{newest run}/<this>`, the run `NEWEST_RUN` names.
    OfRun(&'static str, &'static [(&'static str, &'static str)]),
    /// A write: its method and a path of its route; only a GET is sent there.
    Write(Method, &'static str),
    /// Not probed, and why.
    NotProbed(&'static str),
}

/// The surface, in the order of contract 1.0's Read and Write tables.
#[rustfmt::skip]
pub static TOOLS: &[&Tool] = &[
    // Reads (requires_confirmation: false).
    &system::HEALTH,
    &corpus::SEARCH_CORPUS,
    &corpus::FIND_SIMILAR,
    &sources::LIST_SOURCES,
    &routines::LIST_ROUTINES,
    &routines::GET_ROUTINE,
    &executions::LIST_EXECUTIONS,
    &executions::GET_EXECUTION,
    &executions::GET_EXECUTION_RESULTS,
    &executions::GET_SEARCH_RECORD,
    &corpus::EXPLAIN_MATCH,
    &corpus::GET_PAPER_LIFECYCLE,
    &insight::GET_ANALYTICS,
    &insight::GET_WATCHDOG_FINDINGS,
    &exports::EXPORT_REFERENCES,
    &profiles::LIST_WATCH_PROFILES,
    &profiles::GET_WATCH_PROFILE,
    &profiles::GET_PROFILE_MATCHES,
    // Writes (requires_confirmation: true).
    &write_runs::RUN_SWEEP,
    &write_records::CREATE_ROUTINE,
    &write_records::CREATE_WATCH_PROFILE,
    &write_runs::RUN_ROUTINE,
    &write_records::ACTIVATE_ROUTINE,
    &write_records::DEACTIVATE_ROUTINE,
    &settings::UPDATE_SETTINGS,
];

/// The output schema of the tool with this name, as `tools/list` shows it
/// (the snapshot, which a unit test ties to each entry's `output_schema`).
/// For the integration tests' answer checks; the server reads schemas from
/// the snapshot through `withhold::Shape` instead.
pub fn output_schema(name: &str) -> Option<Value> {
    static LISTING: OnceLock<Value> = OnceLock::new();
    let listing = LISTING.get_or_init(|| serde_json::from_str(listing_json(false)).unwrap_or_default());
    listing.as_array()?.iter().find(|tool| tool["name"] == name).map(|tool| tool["outputSchema"].clone())
}

pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().copied().find(|tool| tool.name == name)
}

/// Whether a tool is listed and callable in this session.
pub(crate) fn is_offered(tool: &Tool, read_only: bool) -> bool {
    !(read_only && tool.requires_confirmation)
}

/// The refusal by name of an argument the tool declines (`declined_arguments`).
fn declined(tool: &Tool, arguments: &Value) -> Option<ToolError> {
    let given = arguments.as_object()?;
    tool.declined_arguments
        .iter()
        .find(|(argument, _)| given.contains_key(*argument))
        .map(|(argument, sentence)| ToolError::invalid_argument(argument, *sentence))
}

/// A tool's input schema, built on that tool's first call and kept: a
/// session pays only for the tools it calls (the listing is a snapshot).
fn input_schema(index: usize) -> &'static Value {
    static SCHEMAS: OnceLock<Vec<OnceLock<Value>>> = OnceLock::new();
    let cells = SCHEMAS.get_or_init(|| TOOLS.iter().map(|_| OnceLock::new()).collect());
    cells[index].get_or_init(|| (TOOLS[index].input_schema)())
}

/// What a tool's output schema declares, as the walk that withholds
/// credentials reads it (`withhold::Shape`): read from the listing snapshot
/// on that tool's first call and kept, as its input schema is.
fn answer_shape(index: usize) -> &'static withhold::Shape {
    static SHAPES: OnceLock<Vec<OnceLock<withhold::Shape>>> = OnceLock::new();
    let cells = SHAPES.get_or_init(|| TOOLS.iter().map(|_| OnceLock::new()).collect());
    cells[index].get_or_init(|| withhold::Shape::from_listing(LISTING_FULL, TOOLS[index].name))
}

/// The one entry point for `tools/call` and the `call` subcommand.
/// `repeats`: the keys the arguments' text gave more than once, which the
/// parsed `arguments` cannot show (`args::Repeats`; none for arguments
/// that never were text). `None` means no tool has that name (a protocol
/// error, not a tool error). Every answer, a success or an error, leaves
/// through `withhold`: no credential-shaped key's value is shown (contract
/// 1.0 "Safety"; contract-notes 13).
pub fn call(
    backend: &mut Backend,
    name: &str,
    arguments: &Value,
    repeats: &args::Repeats,
    read_only: bool,
) -> Option<ToolResult> {
    let index = TOOLS.iter().position(|tool| tool.name == name)?;
    let result = answer(backend, index, arguments, repeats, read_only)?;
    Some(withhold::shown(answer_shape(index), result))
}

/// The call itself: the read-only and argument checks, then the handler.
fn answer(
    backend: &mut Backend,
    index: usize,
    arguments: &Value,
    repeats: &args::Repeats,
    read_only: bool,
) -> Option<ToolResult> {
    let tool = TOOLS[index];
    let name = tool.name;
    if !is_offered(tool, read_only) {
        return Some(Err(ToolError::new(
            crate::error::Code::InvalidArgument,
            format!(
                "`{name}` changes things in resmon, and this server was started read-only \
                 (RESMON_MCP_READ_ONLY=1 or --read-only), so it was not run. Ask the person to do it in the \
                 resmon app, or use a session that can ask them to confirm write tools."
            ),
        )
        .with_detail("read_only", json!(true))));
    }
    // Before anything reads a value: which of two values a key given twice
    // holds is the question itself (contract-notes 30).
    if let Err(error) = args::refuse_repeats(repeats) {
        return Some(Err(error));
    }
    if let Some(error) = declined(tool, arguments) {
        return Some(Err(error));
    }
    // From here on the arguments are read as checked: an integer written
    // `1.0` is the integer 1 (contract-notes 29).
    let arguments = match args::accepted(input_schema(index), arguments) {
        Ok(arguments) => arguments,
        Err(error) => return Some(Err(error)),
    };
    let arguments = arguments.as_ref();
    let empty = serde_json::Map::new();
    let map = arguments.as_object().unwrap_or(&empty);
    backend.begin_call(caller_fields(tool, map), tool.requires_confirmation);
    backend.offer(offered_values(tool, input_schema(index), map));
    let result = (tool.handler)(backend, &Args(map));
    Some(result.map_err(|error| with_backend_version(error, backend)))
}

/// The names of the request fields that will carry this call's own
/// arguments; every other field a request carries is this server's choice
/// (contract-notes 17).
fn caller_fields(tool: &Tool, arguments: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut fields = Vec::new();
    for name in arguments.keys() {
        // A key a harness adds for itself is never sent, so it names no field.
        if crate::args::added_by_a_harness(name) {
            continue;
        }
        if tool.not_sent_as_given.contains(&name.as_str()) {
            continue;
        }
        fields.extend(backend_fields(tool, name));
    }
    fields
}

/// The request fields that carry one argument: its own name, or the names
/// the tool's `backend_names` gives it.
fn backend_fields(tool: &Tool, argument: &str) -> Vec<String> {
    let renamed: Vec<String> = tool
        .backend_names
        .iter()
        .filter(|(name, _)| *name == argument)
        .flat_map(|(_, fields)| fields.iter().map(|field| field.to_string()))
        .collect();
    if renamed.is_empty() { vec![argument.to_string()] } else { renamed }
}

/// The arguments whose value the tool's own input schema offers in an
/// `enum` (contract-notes 17): resmon refusing one of those as unknown is
/// its release's limitation, and the answer says so instead of blaming the
/// caller. Only top-level arguments: a value inside an object (such as
/// create_routine's `entity`) stays the caller's to get right.
fn offered_values(tool: &Tool, schema: &Value, arguments: &serde_json::Map<String, Value>) -> Vec<Offered> {
    let properties = schema.get("properties").and_then(Value::as_object);
    arguments
        .iter()
        .filter_map(|(name, value)| {
            let text = value.as_str()?;
            let offers = properties?.get(name)?.get("enum")?.as_array()?;
            offers.contains(value).then(|| Offered {
                argument: name.clone(),
                value: text.to_string(),
                fields: backend_fields(tool, name),
                sent: Vec::new(),
                choices: offers
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|choice| *choice != text)
                    .map(str::to_string)
                    .collect(),
            })
        })
        .collect()
}

/// Every error that came from resmon's answer says which release answered,
/// once one has confirmed (contract 1.0 "Error model": never claim more
/// than resmon reported; docs/setup.md): the ones that name the route
/// resmon answered, and the identity refusals. Not "not running" and the
/// like: nothing answered those, so no release can be named. Nor an
/// interim 1xx head with nothing after it: that is no answer either.
fn with_backend_version(mut error: ToolError, backend: &Backend) -> ToolError {
    use crate::error::Code;
    let from_an_answer = match error.code {
        Code::BackendUnavailable | Code::InvalidArgument if !error.detail.contains_key("status") => false,
        Code::IdentityUnavailable | Code::InstanceMismatch => true,
        _ => error.detail.contains_key("route"),
    };
    if let Some(version) = backend.backend_version()
        && from_an_answer
        && !error.detail.contains_key("backend_version")
    {
        error.detail.insert("backend_version".into(), json!(version));
    }
    error
}

/// The `tools` array of `tools/list`, as compact JSON: a snapshot checked
/// into the repository and included at compile time, so that no session
/// builds 25 pairs of schemas to answer its first listing. The unit test
/// below regenerates both files from the table and fails when they differ;
/// `UPDATE_DOCS=1 cargo test --lib tools` rewrites them (docs/ARCHITECTURE.md).
pub(crate) fn listing_json(read_only: bool) -> &'static str {
    if read_only { LISTING_READ_ONLY.trim_end() } else { LISTING_FULL.trim_end() }
}

/// The `_meta` keys Claude Code reads from a listed tool (docs/findability.md):
/// written into the snapshot by the unit test that regenerates it.
#[cfg(test)]
const META_ALWAYS_LOAD: &str = "anthropic/alwaysLoad";
#[cfg(test)]
const META_SEARCH_HINT: &str = "anthropic/searchHint";

const LISTING_FULL: &str = include_str!("tools/listing-full.json");
const LISTING_READ_ONLY: &str = include_str!("tools/listing-read-only.json");

#[cfg(test)]
mod tests {
    use super::*;

    /// One tool as `tools/list` shows it: every hint explicit, and
    /// `requires_confirmation` on reads and writes alike. The snapshots are
    /// this, for each offered tool.
    fn describe(tool: &Tool) -> Value {
        let mut meta = serde_json::Map::new();
        if tool.always_load {
            meta.insert(META_ALWAYS_LOAD.into(), json!(true));
        }
        meta.insert(META_SEARCH_HINT.into(), json!(tool.search_hint));
        json!({
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "inputSchema": (tool.input_schema)(),
            "outputSchema": (tool.output_schema)(),
            "annotations": {
                "title": tool.title,
                "readOnlyHint": !tool.requires_confirmation,
                "destructiveHint": tool.destructive,
                "idempotentHint": tool.idempotent,
                "openWorldHint": tool.open_world,
            },
            "requires_confirmation": tool.requires_confirmation,
            "_meta": meta,
        })
    }

    #[test]
    fn the_listing_snapshots_are_the_tool_table() {
        let update = std::env::var("UPDATE_DOCS").is_ok_and(|value| value == "1");
        for (read_only, file) in [(false, "listing-full.json"), (true, "listing-read-only.json")] {
            let described: Vec<Value> =
                TOOLS.iter().filter(|tool| is_offered(tool, read_only)).map(|tool| describe(tool)).collect();
            let expected = format!("{}\n", Value::Array(described));
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools").join(file);
            if update {
                std::fs::write(&path, &expected).unwrap();
                continue;
            }
            let snapshot = if read_only { LISTING_READ_ONLY } else { LISTING_FULL };
            assert!(
                snapshot == expected,
                "src/tools/{file} is not the tool table's listing; run `UPDATE_DOCS=1 cargo test --lib tools`, \
                 then `UPDATE_DOCS=1 cargo test --test it docs`, and commit both"
            );
        }
    }

    /// How much of a search hint Claude Code 2.1.332's tool search reads: it
    /// cuts the hint to the same 4,096 characters it allows a description
    /// (docs/findability.md).
    const HINT_PREFIX: usize = 4_096;

    #[test]
    fn each_search_hint_is_plain_words_that_are_not_its_name() {
        for tool in TOOLS {
            let hint = tool.search_hint;
            assert!(!hint.is_empty() && hint.chars().count() <= HINT_PREFIX, "{}", tool.name);
            assert_eq!(
                hint.split_whitespace().collect::<Vec<_>>().join(" "),
                hint,
                "{}: one space apart",
                tool.name
            );
            assert!(
                hint.chars().all(|c| c.is_ascii_lowercase() || c == ' ' || c == '-'),
                "{}: lowercase words, which is how the search compares them",
                tool.name
            );
            let name_words: Vec<&str> = tool.name.split('_').collect();
            let new_words = hint.split(' ').filter(|word| !name_words.contains(word)).count();
            assert!(new_words >= 3, "{}: the hint mostly repeats the name", tool.name);
        }
    }

    /// Only reads are loaded up front: a write is never in front of a model
    /// that did not look for it.
    #[test]
    fn only_read_tools_are_always_loaded() {
        for tool in TOOLS.iter().filter(|tool| tool.always_load) {
            assert!(!tool.requires_confirmation, "{}", tool.name);
        }
    }

    #[test]
    fn only_top_level_values_the_schema_offers_are_recorded_as_offered() {
        let offered = |tool: &str, arguments: Value| {
            let index = TOOLS.iter().position(|t| t.name == tool).unwrap();
            offered_values(TOOLS[index], input_schema(index), arguments.as_object().unwrap())
        };
        let export = offered("export_references", json!({"exec_id": 3, "format": "json"}));
        assert_eq!(export.len(), 1);
        assert_eq!((export[0].argument.as_str(), export[0].value.as_str()), ("format", "json"));
        assert_eq!(export[0].fields, vec!["format".to_string()]);
        // Sent under another name, as the explorer's sort.
        let search = offered("search_corpus", json!({"query": "q", "mode": "semantic"}));
        assert_eq!(search[0].fields, vec!["sort".to_string()]);
        // Not offered: free text, and a value inside an object.
        assert!(offered("search_corpus", json!({"query": "semantic"})).is_empty());
        let entity = json!({"name": "n", "keywords": ["k"], "sources": ["arxiv"], "schedule": "0 8 * * 1",
            "entity": {"profile_id": 5, "mode": "new_papers"}});
        assert!(offered("create_routine", entity).is_empty());
    }

    /// What an entry says about its arguments names arguments it has: a
    /// renamed or dropped argument cannot linger in its entry unnoticed.
    #[test]
    fn each_entry_speaks_of_its_own_arguments() {
        for tool in TOOLS {
            let schema = (tool.input_schema)();
            let declared = |argument: &str| schema["properties"].get(argument).is_some();
            let mut named = std::collections::BTreeSet::new();
            for (argument, fields) in tool.backend_names {
                assert!(declared(argument), "{}: backend_names names {argument}, not an argument", tool.name);
                assert!(!fields.is_empty(), "{}: {argument} is sent under no name", tool.name);
                assert!(named.insert(*argument), "{}: {argument} is renamed twice", tool.name);
            }
            for argument in tool.not_sent_as_given {
                assert!(
                    declared(argument),
                    "{}: not_sent_as_given names {argument}, not an argument",
                    tool.name
                );
                assert!(named.insert(*argument), "{}: {argument} is both renamed and not sent", tool.name);
            }
            for (argument, sentence) in tool.declined_arguments {
                assert!(
                    !declared(argument),
                    "{}: {argument} is declared, so it cannot be declined",
                    tool.name
                );
                assert!(sentence.ends_with('.') && sentence.contains('`'), "{}: {sentence}", tool.name);
            }
        }
    }

    #[test]
    fn a_declined_argument_is_refused_with_its_own_sentence_before_the_schema() {
        let tool =
            TOOLS.iter().find(|tool| !tool.declined_arguments.is_empty()).expect("one tool declines one");
        let (argument, sentence) = tool.declined_arguments[0];
        let error = declined(tool, &json!({ argument: 1 })).expect("refused");
        assert_eq!(error.message, sentence);
        assert!(declined(tool, &json!({})).is_none());
    }

    /// The arguments the check reads as ids of resmon's records, each 1 to
    /// 2^63 − 1 (contract-notes 29), by their names. Listed here so that a
    /// new one, or an integer named like an id that is none, is a decision.
    #[test]
    fn the_id_arguments_are_these() {
        let mut ids = Vec::new();
        for tool in TOOLS {
            let schema = (tool.input_schema)();
            for (name, property) in schema["properties"].as_object().unwrap() {
                let integers = property["type"] == "integer" || property["items"]["type"] == "integer";
                if integers && args::holds_ids(name) {
                    ids.push(format!("{}.{name}", tool.name));
                }
            }
        }
        assert_eq!(
            ids,
            [
                "find_similar.doc_id",
                "get_routine.routine_id",
                "list_executions.routine_id",
                "get_execution.exec_id",
                "get_execution_results.exec_id",
                "get_search_record.exec_id",
                "explain_match.doc_id",
                "get_paper_lifecycle.doc_id",
                "export_references.exec_id",
                "export_references.doc_ids",
                "get_watch_profile.profile_id",
                "get_profile_matches.profile_id",
                "run_routine.routine_id",
                "activate_routine.routine_id",
                "deactivate_routine.routine_id",
            ]
        );
    }

    #[test]
    fn each_cached_input_schema_is_the_tables() {
        for (index, tool) in TOOLS.iter().enumerate() {
            assert_eq!(input_schema(index), &(tool.input_schema)(), "{}", tool.name);
        }
    }
}
