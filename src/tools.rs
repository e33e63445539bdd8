//! The tool table: one entry per tool of contract 1.0 "Tools", in the order
//! `tools/list` shows them. `tools/list`, the read-only filter, `call`, the
//! generated docs and the tests all read this one table.
//!
//! A handler is a plain function that receives arguments already checked
//! against its own input schema, talks to resmon through `Backend`, and
//! returns the answer or a `ToolError`. Handlers know nothing of JSON-RPC.

mod corpus;
mod executions;
mod exports;
mod insight;
mod papers;
mod profiles;
mod routines;
mod schema;
mod settings;
mod sources;
mod system;
mod write_records;
mod write_runs;

use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::args::{self, Args};
use crate::backend::Backend;
use crate::error::{ToolError, ToolResult};

pub use schema::{limit_property, no_arguments, nullable, object, offset_property};

pub type Handler = fn(&mut Backend, &Args) -> ToolResult;

pub struct Tool {
    pub name: &'static str,
    pub title: &'static str,
    /// Written for a model deciding whether and how to call the tool.
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub output_schema: fn() -> Value,
    /// resmon's own flag (contract 1.0 "Write"): true for the seven writes.
    pub requires_confirmation: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// True when the tool makes resmon reach sources outside this machine.
    pub open_world: bool,
    pub handler: Handler,
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

/// Stands in for a tool whose module is still being written; answers
/// internal_error. None may remain when the surface is declared complete
/// (a test in tests/it checks that).
pub const fn placeholder(name: &'static str, requires_confirmation: bool) -> Tool {
    Tool {
        name,
        title: name,
        description: "Not available yet.",
        input_schema: placeholder_schema,
        output_schema: placeholder_schema,
        requires_confirmation,
        destructive: false,
        idempotent: false,
        open_world: false,
        handler: placeholder_handler,
    }
}

fn placeholder_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn placeholder_handler(_: &mut Backend, _: &Args) -> ToolResult {
    Err(ToolError::new(crate::error::Code::InternalError, "This tool is not built yet."))
}

pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().copied().find(|tool| tool.name == name)
}

/// Whether a tool is listed and callable in this session.
pub fn is_offered(tool: &Tool, read_only: bool) -> bool {
    !(read_only && tool.requires_confirmation)
}

/// Arguments a tool does not declare but that a caller is likely to send,
/// each refused by name with a sentence saying what to use instead of the
/// generic unknown-argument one: (tool, argument, sentence).
const DECLINED_ARGUMENTS: &[(&str, &str, &str)] = &[("search_corpus", "offset", corpus::OFFSET_REFUSAL)];

fn declined(tool: &str, arguments: &Value) -> Option<ToolError> {
    let given = arguments.as_object()?;
    DECLINED_ARGUMENTS
        .iter()
        .find(|(name, argument, _)| *name == tool && given.contains_key(*argument))
        .map(|(_, argument, sentence)| ToolError::invalid_argument(argument, *sentence))
}

/// Input schemas, built once and reused for every call's validation.
fn input_schemas() -> &'static [Value] {
    static SCHEMAS: OnceLock<Vec<Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| TOOLS.iter().map(|tool| (tool.input_schema)()).collect())
}

/// The one entry point for `tools/call` and the `call` subcommand.
/// `None` means no tool has that name (a protocol error, not a tool error).
pub fn call(backend: &mut Backend, name: &str, arguments: &Value, read_only: bool) -> Option<ToolResult> {
    let index = TOOLS.iter().position(|tool| tool.name == name)?;
    let tool = TOOLS[index];
    if !is_offered(tool, read_only) {
        return Some(Err(ToolError::new(
            crate::error::Code::InvalidArgument,
            format!(
                "`{name}` changes things in resmon, and this server was started read-only \
                 (RESMON_MCP_READ_ONLY=1), so it was not run. Ask the person to do it in the \
                 resmon app, or use a session that can ask them to confirm write tools."
            ),
        )
        .with_detail("read_only", json!(true))));
    }
    if let Some(error) = declined(tool.name, arguments) {
        return Some(Err(error));
    }
    if let Err(error) = args::validate(&input_schemas()[index], arguments) {
        return Some(Err(error));
    }
    let empty = serde_json::Map::new();
    let map = arguments.as_object().unwrap_or(&empty);
    Some((tool.handler)(backend, &Args(map)))
}

/// One tool as `tools/list` shows it: every hint explicit, and
/// `requires_confirmation` on reads and writes alike.
pub fn describe(tool: &Tool) -> Value {
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
    })
}

/// The serialised `tools` array, built once per mode: listing is then a copy.
pub fn listing_json(read_only: bool) -> &'static str {
    static FULL: OnceLock<String> = OnceLock::new();
    static READ_ONLY: OnceLock<String> = OnceLock::new();
    let cell = if read_only { &READ_ONLY } else { &FULL };
    cell.get_or_init(|| build_listing(read_only))
}

/// Writes the same bytes as `describe` for each offered tool, joined into
/// one array, without building the outer objects: every session pays for
/// this once, and it was its largest single cost (docs/performance.md).
/// The input schemas come from the cache that validation uses, so the
/// first `tools/call` finds them built.
fn build_listing(read_only: bool) -> String {
    fn string(out: &mut Vec<u8>, text: &str) {
        // Writing JSON into a Vec<u8> cannot fail.
        serde_json::to_writer(&mut *out, text).expect("a str serialises");
    }
    fn value(out: &mut Vec<u8>, value: &Value) {
        serde_json::to_writer(&mut *out, value).expect("a Value serialises");
    }
    let schemas = input_schemas();
    let mut out: Vec<u8> = Vec::with_capacity(48 * 1024);
    out.push(b'[');
    for (index, tool) in TOOLS.iter().enumerate().filter(|(_, tool)| is_offered(tool, read_only)) {
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        string(&mut out, tool.name);
        out.extend_from_slice(b",\"title\":");
        string(&mut out, tool.title);
        out.extend_from_slice(b",\"description\":");
        string(&mut out, tool.description);
        out.extend_from_slice(b",\"inputSchema\":");
        value(&mut out, &schemas[index]);
        out.extend_from_slice(b",\"outputSchema\":");
        value(&mut out, &(tool.output_schema)());
        out.extend_from_slice(b",\"annotations\":{\"title\":");
        string(&mut out, tool.title);
        for (key, flag) in [
            (&b",\"readOnlyHint\":"[..], !tool.requires_confirmation),
            (b",\"destructiveHint\":", tool.destructive),
            (b",\"idempotentHint\":", tool.idempotent),
            (b",\"openWorldHint\":", tool.open_world),
            (b"},\"requires_confirmation\":", tool.requires_confirmation),
        ] {
            out.extend_from_slice(key);
            out.extend_from_slice(if flag { b"true" } else { b"false" });
        }
        out.push(b'}');
    }
    out.push(b']');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_is_describe_of_each_offered_tool() {
        for read_only in [false, true] {
            let described: Vec<Value> =
                TOOLS.iter().filter(|tool| is_offered(tool, read_only)).map(|tool| describe(tool)).collect();
            assert_eq!(
                build_listing(read_only),
                Value::Array(described).to_string(),
                "read_only: {read_only}"
            );
        }
    }
}
