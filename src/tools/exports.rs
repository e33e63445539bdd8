//! `export_references`: a run's papers, or chosen papers, as a reference file.

use serde_json::{Value, json};

use super::{Probe, Tool, nullable, object};
use crate::args::Args;
use crate::backend::{self, Backend, Method, Reply};
use crate::error::{ToolError, ToolResult};

pub(crate) const EXPORT_REFERENCES: Tool = Tool {
    name: "export_references",
    title: "Export references",
    description: "References of one run (exec_id) or of chosen papers (doc_ids), exactly one of \
        the two, as a bibtex, ris, csv or json file in `text`.",
    always_load: false,
    search_hint: "bibtex bib ris csv json citations citation cite citing bibliography \
        bibliographies zotero endnote mendeley reference manager download file save \
        papers import last run runs",
    input_schema: export_input,
    #[cfg(test)]
    output_schema: export_output,
    backend_names: &[("doc_ids", &["document_ids"])],
    not_sent_as_given: &[],
    declined_arguments: &[],
    // bibtex, the format every release exports: whether a resmon knows the
    // newer json format is said by the call that asks for it.
    probe: Probe::OfRun("references", &[("format", "bibtex")]),
    requires_confirmation: false,
    destructive: false,
    idempotent: true,
    open_world: false,
    handler: export_references,
};

fn export_input() -> Value {
    object(
        json!({
            "exec_id": {"type": "integer", "minimum": 1},
            // No cap of this server's own: contract 1.0 "Versioning" counts a
            // call another 1.0 server accepts and this one refuses as a
            // narrowing. The 16 MiB body bound is the only limit.
            "doc_ids": {"type": "array", "items": {"type": "integer"}},
            "format": {"type": "string", "enum": ["bibtex", "ris", "csv", "json"]},
        }),
        &["format"],
    )
}

/// One shape for every format: contract 1.0 "Tools › Read" returns "the
/// exported text", and for json that is the JSON file as resmon wrote it.
#[cfg_attr(not(test), allow(dead_code, reason = "built by the unit tests only: Tool::output_schema"))]
fn export_output() -> Value {
    object(
        json!({
            "format": {"type": "string"},
            "text": {"type": "string", "description": "The exported file, as resmon wrote it."},
            "count": nullable("Papers exported, as resmon counted them; null if it did not say."),
        }),
        &["format", "text", "count"],
    )
}

fn export_references(backend: &mut Backend, args: &Args) -> ToolResult {
    let format = args.required_str("format")?;
    let reply = match (args.int("exec_id"), args.get("doc_ids")) {
        (Some(exec_id), None) => by_execution(backend, exec_id, format)?,
        (None, Some(doc_ids)) => by_documents(backend, doc_ids, format)?,
        (Some(_), Some(_)) => return Err(one_of("Both exec_id and doc_ids were given")),
        (None, None) => return Err(one_of("Neither exec_id nor doc_ids was given")),
    };
    backend::success(&reply)?;
    shape_export(&reply, format)
}

fn one_of(what: &str) -> ToolError {
    ToolError::invalid_argument(
        "exec_id",
        format!("{what}; pass exactly one: exec_id to export a run, or doc_ids to export chosen papers."),
    )
    .with_detail("arguments", json!(["exec_id", "doc_ids"]))
}

/// backend-facts 13: by execution, only `format` is sent; `include_ids` belongs
/// to get_execution_results and resmon refuses it for non-json formats.
fn by_execution(backend: &mut Backend, exec_id: i64, format: &str) -> Result<Reply, ToolError> {
    let path = format!("/api/executions/{exec_id}/references");
    backend.send(Method::Get, &path, &[("format", format.to_string())], None)
}

fn by_documents(backend: &mut Backend, doc_ids: &Value, format: &str) -> Result<Reply, ToolError> {
    // An empty list goes to resmon as it came: resmon answers it with an
    // empty file, and refusing it here would narrow contract 1.0
    // ("Versioning": a narrowing moves the version too).
    let body = json!({"document_ids": doc_ids, "format": format});
    backend.send(Method::Post, "/api/export/references", &[], Some(&body))
}

/// The body is a file (backend-facts 4), and the
/// answer carries it unchanged. A json file must still be a JSON array, and
/// the other three must not be JSON at all: either mismatch is not the file
/// that was asked for.
fn shape_export(reply: &Reply, format: &str) -> ToolResult {
    let header_count =
        reply.header("X-Resmon-Document-Count").and_then(|count| count.trim().parse::<u64>().ok());
    if format == "json" {
        let Value::Array(rows) = reply.json()? else {
            return Err(backend::unexpected_shape(&reply.route, "a JSON array"));
        };
        let count = header_count.unwrap_or(rows.len() as u64);
        return Ok(json!({"format": format, "text": reply.text()?, "count": count}));
    }
    if reply.header("content-type").is_some_and(|kind| kind.contains("json")) {
        return Err(backend::unexpected_shape(&reply.route, &format!("a {format} file")));
    }
    Ok(json!({"format": format, "text": reply.text()?, "count": header_count}))
}
