//! `export_references`: a run's papers, or chosen papers, as a reference file.

use serde_json::{Value, json};

use super::{Tool, nullable, object};
use crate::args::Args;
use crate::backend::{self, Backend, Method, Reply};
use crate::error::{ToolError, ToolResult};

/// Papers one call may name. resmon sets no limit, but a longer list is a
/// bulk export that belongs in the app, not in a conversation.
const MAX_DOC_IDS: u64 = 200;

pub const EXPORT_REFERENCES: Tool = Tool {
    name: "export_references",
    title: "Export references",
    description: "A reference file for one run (exec_id) or chosen papers (doc_ids); at most 200 papers: \
        bibtex, ris or csv as `text`, json as `rows`. Give exactly one of exec_id and doc_ids.",
    input_schema: export_input,
    output_schema: export_output,
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
            "doc_ids": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_DOC_IDS},
            "format": {"type": "string", "enum": ["bibtex", "ris", "csv", "json"]},
        }),
        &["format"],
    )
}

/// One shape for every format: `text` and `rows` are both always present,
/// one of them null (clarification 7), so no composition is needed.
fn export_output() -> Value {
    object(
        json!({
            "format": {"type": "string"},
            "text": nullable("The file for bibtex, ris and csv; null for json."),
            "rows": nullable("For json: one object per paper; null otherwise."),
            "count": nullable("Papers exported, as resmon counted them; null if it did not say."),
        }),
        &["format", "text", "rows", "count"],
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
    let answer = shape_export(&reply, format)?;
    // A run's export can be the whole run; past the same bound doc_ids has,
    // it is a bulk export that belongs in the app (token efficiency is a
    // contract term), and the answer says how to get the papers instead.
    let count = answer["count"].as_u64().unwrap_or(0);
    if count > MAX_DOC_IDS {
        return Err(ToolError::invalid_argument(
            "exec_id",
            format!(
                "That run has {count} papers, more than the {MAX_DOC_IDS} one export may hold here. \
                 Export it from the resmon app, or page through get_execution_results and export up \
                 to {MAX_DOC_IDS} of their ids with doc_ids."
            ),
        )
        .with_detail("count", json!(count))
        .with_detail("limit", json!(MAX_DOC_IDS)));
    }
    Ok(answer)
}

fn one_of(what: &str) -> ToolError {
    ToolError::invalid_argument(
        "exec_id",
        format!("{what}; pass exactly one: exec_id to export a run, or doc_ids to export chosen papers."),
    )
    .with_detail("arguments", json!(["exec_id", "doc_ids"]))
}

/// routes.json: by execution, only `format` is sent; `include_ids` belongs
/// to get_execution_results and resmon refuses it for non-json formats.
fn by_execution(backend: &mut Backend, exec_id: i64, format: &str) -> Result<Reply, ToolError> {
    let path = format!("/api/executions/{exec_id}/references");
    backend.send(Method::Get, &path, &[("format", format.to_string())], None)
}

fn by_documents(backend: &mut Backend, doc_ids: &Value, format: &str) -> Result<Reply, ToolError> {
    if doc_ids.as_array().is_none_or(Vec::is_empty) {
        return Err(ToolError::invalid_argument(
            "doc_ids",
            "doc_ids is empty; name at least one paper id, or pass exec_id instead.",
        ));
    }
    let body = json!({"document_ids": doc_ids, "format": format});
    backend.send(Method::Post, "/api/export/references", &[], Some(&body))
}

/// The body is a file (NOTES "Responses that are not JSON objects"): text
/// for three formats, a JSON array for json.
fn shape_export(reply: &Reply, format: &str) -> ToolResult {
    let header_count =
        reply.header("X-Resmon-Document-Count").and_then(|count| count.trim().parse::<u64>().ok());
    if format == "json" {
        let rows = reply.json()?;
        let Some(list) = rows.as_array() else {
            return Err(backend::unexpected_shape(&reply.route, "an array"));
        };
        let count = header_count.unwrap_or(list.len() as u64);
        return Ok(json!({"format": format, "text": null, "rows": rows, "count": count}));
    }
    // The three file formats are text; a JSON body here is not the file.
    if reply.header("content-type").is_some_and(|kind| kind.contains("json")) {
        return Err(backend::unexpected_shape(&reply.route, &format!("a {format} file")));
    }
    let text = reply.text()?;
    Ok(json!({"format": format, "text": text, "rows": null, "count": header_count}))
}
