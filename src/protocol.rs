//! MCP over stdio: JSON-RPC framing and the methods of both protocol eras.
//!
//! Handshake era (2024-11-05 … 2025-11-25): `initialize`, then requests.
//! Stateless era (2026-07-28): every request carries its protocol version in
//! `params._meta`, `server/discover` replaces the handshake, and every result
//! says `resultType: "complete"`. A request is served in the era its own
//! `_meta` names, `initialize` included (`envelope::era_of` holds the rule,
//! and `envelope` checks what each era requires a request to carry).
//!
//! `Server::handle_line` is the whole protocol as a function from one input
//! line to at most one output line; `serve` only moves lines in and out.
//! This module knows nothing about resmon's routes.

use serde_json::{Map, Value, json};

use crate::args::Repeats;
use crate::backend::Backend;
use crate::prompts;
use crate::tools::{self, CONTRACT_VERSION};

mod envelope;

use envelope::{Era, META_VERSION};

pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
pub(crate) const LATEST_HANDSHAKE_VERSION: &str = "2025-11-25";
pub const STATELESS_VERSION: &str = "2026-07-28";

const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// How long a stateless client may reuse a listing or discovery answer. The
/// list only changes with the binary or RESMON_MCP_READ_ONLY, and both need a
/// restart, but a short lifetime keeps a changed setting visible quickly.
const CACHE_TTL_MS: u64 = 300_000;

const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const UNSUPPORTED_VERSION: i64 = -32022;

/// What a session reads about resmon before any tool: a harness that defers
/// tool definitions (Claude Code's tool search) shows the model this text and
/// the tools' names only, so it routes the common questions to their tools
/// (docs/findability.md), by the route table the prompts share
/// (`prompts::ROUTES`; a test holds each clause to it). Neither text may
/// need JSON escaping: the initialize answer is written out around it.
const INSTRUCTIONS: &str = "resmon is a research monitor on this computer: its routines sweep \
arXiv, PubMed and other sources into a local corpus of papers. Tools per question, in order: what a \
routine found lately: list_executions (routine_id filters), get_execution (status, coverage), \
get_execution_results; a routine's id by name: list_routines; papers on a topic: search_corpus; is \
resmon up: health; is the monitoring healthy: health, get_watchdog_findings, list_routines \
(missed_fires), list_executions (failed, interrupted), get_execution; a person's papers: \
list_watch_profiles, get_profile_matches (a name_only match may be another person's paper: say so); \
why a paper matched: explain_match; retracted or since published: get_paper_lifecycle; a run's \
references: get_execution (running or interrupted: maybe partial), export_references; watch a \
person: list_watch_profiles, create_watch_profile. Seven tools change things and carry \
requires_confirmation: true (run_sweep, run_routine, create_routine, create_watch_profile, \
activate_routine, deactivate_routine, update_settings); ask the person before each. A run goes on in \
the background (queued: no id yet): poll get_execution with its execution_id until status is not \
running (interrupted: the app stopped mid-run, not a failed search). search_corpus pages with next_cursor as cursor, other \
lists with limit and offset. An error opens with the sentence code: message, then {error, message, \
detail}; its message says what to do. After a write, any error code may carry detail.applied (it was \
done) or outcome_unknown (it may have been): read them before saying nothing happened. Pass on \
resmon's caveats (match basis, coverage zero-reasons, what it cannot verify).";

/// The same for a read-only session: it routes only the questions whose
/// tools it offers (contract-notes 28).
const INSTRUCTIONS_READ_ONLY: &str = "resmon is a research monitor on this computer: its routines \
sweep arXiv, PubMed and other sources into a local corpus of papers. This session only reads: \
running, creating or switching routines is done in the resmon app. Tools per question, in order: \
what a routine found lately: list_executions (routine_id filters), get_execution (status, coverage), \
get_execution_results; a routine's id by name: list_routines; papers on a topic: search_corpus; is \
resmon up: health; is the monitoring healthy: health, get_watchdog_findings, list_routines \
(missed_fires), list_executions (failed, interrupted), get_execution; a person's papers: \
list_watch_profiles, get_profile_matches (a name_only match may be another person's paper: say so); \
why a paper matched: explain_match; retracted or since published: get_paper_lifecycle; a run's \
references: get_execution (running or interrupted: maybe partial), export_references. A run in \
progress shows status running in get_execution until it ends (interrupted: the app stopped mid-run, \
not a failed search). search_corpus pages with next_cursor as cursor, other lists with limit and \
offset. An error opens with the sentence code: message, then {error, message, detail}; \
backend_unavailable: resmon did not answer in full, and its message says what to do. Pass on resmon's \
caveats (match basis, coverage zero-reasons, what it cannot verify).";

/// The instructions a session in this mode reads.
pub(crate) fn instructions(read_only: bool) -> &'static str {
    if read_only { INSTRUCTIONS_READ_ONLY } else { INSTRUCTIONS }
}

pub struct Server {
    backend: Backend,
    read_only: bool,
}

/// The result of one request: a result, or a JSON-RPC error.
type Outcome = Result<Answer, RpcError>;

enum Answer {
    Json(Value),
    /// A result object whose JSON text was built ahead of time, spliced
    /// into the reply as it is.
    Prebuilt(String),
    /// The `tools/list` result: the snapshot and any extra members, written
    /// straight into the reply line, so that its 38 KB are copied once.
    Listing {
        tools: &'static str,
        extra: String,
    },
}

pub(crate) struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

pub(crate) fn rpc_error(code: i64, message: impl Into<String>) -> RpcError {
    RpcError { code, message: message.into(), data: None }
}

impl Server {
    pub fn new(backend: Backend, read_only: bool) -> Server {
        Server { backend, read_only }
    }

    /// One line in, at most one line out (without the newline).
    pub fn handle_line(&mut self, line: &[u8]) -> Option<String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(error) => {
                // serde_json refuses a number beyond f64's range as it parses;
                // the line may be valid JSON all the same.
                let why = if error.to_string().starts_with("number out of range") {
                    "holds a number too large for this server to read"
                } else if error.is_syntax() || error.is_eof() {
                    "is not valid JSON"
                } else {
                    "is unreadable"
                };
                return Some(error_line(
                    &Value::Null,
                    rpc_error(PARSE_ERROR, format!("Parse error: the line {why}.")),
                ));
            }
        };
        let Value::Object(message) = message else {
            return Some(error_line(
                &Value::Null,
                rpc_error(
                    INVALID_REQUEST,
                    "Invalid request: expected one JSON-RPC request object (batches are not supported).",
                ),
            ));
        };
        let id = message.get("id");
        let Some(method) = message.get("method") else {
            // A response from the client: this server sends no requests, so
            // there is nothing to match it to, and responses are never answered.
            if id.is_some() && (message.contains_key("result") || message.contains_key("error")) {
                return None;
            }
            return Some(error_line(&echo_id(id), rpc_error(INVALID_REQUEST, "Invalid request: no method.")));
        };
        let Some(id) = id else {
            // A notification (initialized, cancelled, or one unknown here): never answered.
            return None;
        };
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Some(error_line(
                &Value::Null,
                rpc_error(INVALID_REQUEST, "Invalid request: id must be a string or an integer."),
            ));
        }
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error_line(
                id,
                rpc_error(INVALID_REQUEST, "Invalid request: jsonrpc must be \"2.0\"."),
            ));
        }
        let Some(method) = method.as_str() else {
            return Some(error_line(
                id,
                rpc_error(INVALID_REQUEST, "Invalid request: method must be a string."),
            ));
        };
        let params = message.get("params").unwrap_or(&Value::Null);
        // The parsed line keeps only the last of a key given twice; a tool
        // call's arguments are read once more from the text, names only, so
        // that a repeated one is refused rather than resolved (contract-notes 30).
        let repeats = if method == "tools/call" {
            // Which tool, and which arguments, must not be two things either:
            // a card showing the first and this server acting on the last
            // would disagree about the call itself.
            let call = Repeats::at(line, &["params"]);
            if let Some(key) = ["name", "arguments"].into_iter().find(|key| call.keys.contains_key(*key)) {
                let error = rpc_error(
                    INVALID_PARAMS,
                    format!(
                        "Invalid params: `{key}` is given more than once in this tools/call, so which \
                         call was meant cannot be told; nothing was run. Give it once."
                    ),
                );
                return Some(error_line(id, error));
            }
            Repeats::at(line, &["params", "arguments"])
        } else {
            Repeats::default()
        };
        let (era, outcome) = self.dispatch(method, params, &repeats);
        Some(match outcome {
            Ok(result) => result_line(id, result, era),
            Err(error) => error_line(id, error),
        })
    }

    fn dispatch(&mut self, method: &str, params: &Value, repeats: &Repeats) -> (Era, Outcome) {
        let era = envelope::era_of(method, params);
        let outcome = match era {
            Era::Handshake => self.handshake_request(method, params, repeats),
            Era::Stateless => envelope::check_stateless(params)
                .and_then(|()| self.stateless_request(method, params, repeats)),
        };
        (era, outcome)
    }

    fn handshake_request(&mut self, method: &str, params: &Value, repeats: &Repeats) -> Outcome {
        match method {
            "initialize" => self.initialize(params),
            "ping" => Ok(Answer::Json(json!({}))),
            "tools/list" => self.list_tools(params, Era::Handshake),
            "tools/call" => self.call_tool(params, repeats),
            "prompts/list" => self.list_prompts(params, Era::Handshake),
            "prompts/get" => self.get_prompt(params),
            _ => Err(unknown_method(method)),
        }
    }

    fn stateless_request(&mut self, method: &str, params: &Value, repeats: &Repeats) -> Outcome {
        match method {
            "server/discover" => Ok(Answer::Json(discover(self.read_only))),
            "tools/list" => self.list_tools(params, Era::Stateless),
            "tools/call" => self.call_tool(params, repeats),
            "prompts/list" => self.list_prompts(params, Era::Stateless),
            "prompts/get" => self.get_prompt(params),
            // The stateless revision removed the handshake; say how to reach it.
            "initialize" => Err(rpc_error(
                METHOD_NOT_FOUND,
                format!(
                    "Method not found: initialize does not exist in {STATELESS_VERSION}, which params._meta asks \
                     for. To open a {LATEST_HANDSHAKE_VERSION} session, send initialize without \"{META_VERSION}\" \
                     in params._meta."
                ),
            )),
            _ => Err(unknown_method(method)),
        }
    }

    /// Echo a supported version, else offer the latest handshake version.
    /// A version this server does not speak is not an error (the client
    /// decides whether it can use the answer); missing or mistyped required
    /// parameters are.
    fn initialize(&mut self, params: &Value) -> Outcome {
        let requested = envelope::check_initialize(params)?;
        let version =
            if HANDSHAKE_VERSIONS.contains(&requested) { requested } else { LATEST_HANDSHAKE_VERSION };
        Ok(Answer::Prebuilt(initialize_result(version, self.read_only)))
    }

    fn list_tools(&self, params: &Value, era: Era) -> Outcome {
        // Everything fits one page, so no cursor this server hands out exists.
        if params.get("cursor").is_some_and(|cursor| !cursor.is_null()) {
            return Err(rpc_error(
                INVALID_PARAMS,
                "Invalid params: unknown cursor (the tool list has one page).",
            ));
        }
        let listing = tools::listing_json(self.read_only);
        let extra = if era == Era::Stateless {
            format!(",\"ttlMs\":{CACHE_TTL_MS},\"cacheScope\":\"private\"")
        } else {
            String::new()
        };
        Ok(Answer::Listing { tools: listing, extra })
    }

    /// The prompts this session offers, one page, with the same caching
    /// hints as the tool list in the stateless era (both change only with the
    /// binary or the read-only setting).
    fn list_prompts(&self, params: &Value, era: Era) -> Outcome {
        if params.get("cursor").is_some_and(|cursor| !cursor.is_null()) {
            return Err(rpc_error(
                INVALID_PARAMS,
                "Invalid params: unknown cursor (the prompt list has one page).",
            ));
        }
        let mut result = json!({"prompts": prompts::listing(self.read_only)});
        if era == Era::Stateless {
            result["ttlMs"] = json!(CACHE_TTL_MS);
            result["cacheScope"] = json!("private");
        }
        Ok(Answer::Json(result))
    }

    /// A prompt's text. Nothing is sent to resmon: a prompt only says which
    /// tools to call, so it is served with the app closed too.
    fn get_prompt(&self, params: &Value) -> Outcome {
        prompts::get(params, self.read_only).map(Answer::Json).map_err(|refusal| RpcError {
            code: INVALID_PARAMS,
            message: format!("Invalid params: {}", refusal.message),
            data: refusal.argument.map(|argument| json!({"argument": argument})),
        })
    }

    fn call_tool(&mut self, params: &Value, repeats: &Repeats) -> Outcome {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(rpc_error(
                INVALID_PARAMS,
                "Invalid params: tools/call needs a tool name in params.name.",
            ));
        };
        let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
        let arguments = if arguments.is_null() { json!({}) } else { arguments };
        let Some(result) = tools::call(&mut self.backend, name, &arguments, repeats, self.read_only) else {
            return Err(rpc_error(INVALID_PARAMS, format!("Invalid params: unknown tool {:?}.", clip(name))));
        };
        Ok(Answer::Prebuilt(match result {
            Ok(answer) => {
                let mut text = Vec::with_capacity(4 * 1024);
                serde_json::to_writer(&mut text, &answer).expect("a Value serialises");
                success_result(&text)
            }
            Err(error) => error_result(&error),
        }))
    }
}

/// A successful `tools/call` result whose text content is `text` (compact
/// JSON). The same bytes are spliced in as `structuredContent`: the answer
/// is serialised once, and its compact text is exactly what serialising it
/// again would give.
fn success_result(text: &[u8]) -> String {
    let text = std::str::from_utf8(text).expect("serde_json writes UTF-8");
    let mut out = Vec::with_capacity(text.len() * 5 / 2 + 96);
    out.extend_from_slice(b"{\"content\":[{\"type\":\"text\",\"text\":");
    // Writing a str as JSON into a Vec cannot fail.
    serde_json::to_writer(&mut out, text).expect("a str serialises");
    out.extend_from_slice(b"}],\"structuredContent\":");
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b",\"isError\":false}");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The answer to a `tools/call` whose handling panicked: a tool error in the
/// request's own era, so that a harness shows its model a sentence.
pub(crate) fn internal_tool_error(id: &Value, params: &Value) -> String {
    let error = crate::error::ToolError::new(
        crate::error::Code::InternalError,
        "This server hit an internal error while handling the call, and nothing more is known. \
         Try again; if it repeats, report it with the call that caused it.",
    );
    let era = envelope::era_of("tools/call", params);
    result_line(id, Answer::Prebuilt(error_result(&error)), era)
}

/// A `tools/call` result for a tool error (docs/contract-notes.md, note 21).
/// The first block is `<code>: <message>`, a sentence that does not parse as
/// JSON: a client that turns a JSON first block into structuredContent and
/// checks it against the success outputSchema (Gemini CLI does) would
/// otherwise show its model a schema complaint instead of resmon's sentence.
/// The second block is the error object as JSON, for callers that branch on
/// the code. There is no structuredContent, for the same reason.
pub(crate) fn error_result(error: &crate::error::ToolError) -> String {
    let sentence = format!("{}: {}", error.code.as_str(), error.message);
    compact(&json!({
        "content": [
            {"type": "text", "text": sentence},
            {"type": "text", "text": compact(&error.to_json())},
        ],
        "isError": true,
    }))
}

/// Compact JSON text of a value. serde_json's writer is used rather than
/// `Display`, which goes through the formatter a few bytes at a time.
fn compact(value: &Value) -> String {
    // A Value's map keys are strings, so serialising it cannot fail.
    serde_json::to_string(value).expect("a Value serialises")
}

fn discover(read_only: bool) -> Value {
    let mut supported: Vec<&str> = vec![STATELESS_VERSION];
    supported.extend(HANDSHAKE_VERSIONS.iter().rev());
    json!({
        "supportedVersions": supported,
        "capabilities": capabilities(),
        "instructions": instructions(read_only),
        "ttlMs": CACHE_TTL_MS,
        "cacheScope": "private",
    })
}

/// The `initialize` result, written out rather than built as a Value: it is
/// the answer every session waits for first, and writing it this way keeps
/// the JSON serialiser out of the cold start. `version` is one of
/// HANDSHAKE_VERSIONS; neither it nor either instructions text needs
/// escaping, and a unit test checks that the text is what serialising the
/// Value would give.
fn initialize_result(version: &str, read_only: bool) -> String {
    let instructions = instructions(read_only);
    format!(
        "{{\"protocolVersion\":\"{version}\",\"capabilities\":{{\"tools\":{{\"listChanged\":false}},\"prompts\":{{\"listChanged\":false}}}},\
         \"serverInfo\":{{\"name\":\"resmon\",\"version\":\"{CONTRACT_VERSION}\",\"title\":\"resmon research monitor\"}},\
         \"instructions\":\"{instructions}\",\"_meta\":{{\"resmon/server_version\":\"{}\"}}}}",
        env!("CARGO_PKG_VERSION")
    )
}

/// What this server offers, in both eras: tools and prompts, neither list
/// ever changing while the process runs.
fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}, "prompts": {"listChanged": false}})
}

fn server_info() -> Value {
    json!({"name": "resmon", "version": CONTRACT_VERSION, "title": "resmon research monitor"})
}

fn unknown_method(method: &str) -> RpcError {
    rpc_error(METHOD_NOT_FOUND, format!("Method not found: {:?}.", clip(method)))
}

fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}

pub(crate) fn echo_id(id: Option<&Value>) -> Value {
    match id {
        Some(id) if id.is_string() || id.is_i64() || id.is_u64() => id.clone(),
        _ => Value::Null,
    }
}

fn result_line(id: &Value, result: Answer, era: Era) -> String {
    // Stateless results say they are complete and who answered.
    let mut stamp = Map::new();
    if era == Era::Stateless {
        stamp.insert("resultType".into(), json!("complete"));
        stamp.insert("_meta".into(), json!({META_SERVER_INFO: server_info()}));
    }
    let size = match &result {
        Answer::Prebuilt(text) => text.len(),
        Answer::Listing { tools, extra } => tools.len() + extra.len(),
        Answer::Json(_) => 0,
    };
    // Room for the envelope, the stamp and the newline `serve` appends.
    let mut line = String::with_capacity(size + 256);
    line.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    line.push_str(&compact(id));
    line.push_str(",\"result\":");
    match result {
        Answer::Prebuilt(object_text) => line.push_str(&object_text),
        Answer::Listing { tools, extra } => {
            line.push_str("{\"tools\":");
            line.push_str(tools);
            line.push_str(&extra);
            line.push('}');
        }
        Answer::Json(value) => {
            let mut object = match value {
                Value::Object(object) => object,
                other => Map::from_iter([("value".to_string(), other)]),
            };
            object.append(&mut stamp);
            line.push_str(&compact(&Value::Object(object)));
        }
    }
    if !stamp.is_empty() {
        // Both are JSON objects: join their members.
        let stamp_text = compact(&Value::Object(stamp));
        line.pop();
        line.push(',');
        line.push_str(&stamp_text[1..]);
    }
    line.push('}');
    line
}

pub(crate) fn error_line(id: &Value, error: RpcError) -> String {
    let mut body = Map::new();
    body.insert("code".into(), json!(error.code));
    body.insert("message".into(), json!(error.message));
    if let Some(data) = error.data {
        body.insert("data".into(), data);
    }
    compact(&json!({"jsonrpc": "2.0", "id": id, "error": body}))
}

#[cfg(test)]
mod tests;
