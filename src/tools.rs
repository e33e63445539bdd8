//! The tool table: one entry per tool of contract 1.0 "Tools", in the order
//! `tools/list` shows them. `tools/list`, the read-only filter, `call`, the
//! generated docs and the tests all read this one table.
//!
//! A handler is a plain function that receives arguments already checked
//! against its own input schema, talks to resmon through `Backend`, and
//! returns the answer or a `ToolError`. Handlers know nothing of JSON-RPC.

mod schema;
mod system;

use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::args::{self, Args};
use crate::backend::Backend;
use crate::error::{ToolError, ToolResult};

pub use schema::{nullable, object, paper_schema};

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

/// The surface, in listing order: reads first, then the writes.
pub static TOOLS: &[&Tool] = &[&system::HEALTH];

pub fn find(name: &str) -> Option<&'static Tool> {
    TOOLS.iter().copied().find(|tool| tool.name == name)
}

/// Whether a tool is listed and callable in this session.
pub fn is_offered(tool: &Tool, read_only: bool) -> bool {
    !(read_only && tool.requires_confirmation)
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
    cell.get_or_init(|| {
        let tools: Vec<Value> =
            TOOLS.iter().filter(|tool| is_offered(tool, read_only)).map(|tool| describe(tool)).collect();
        Value::Array(tools).to_string()
    })
}
