//! The floor the session and per-call figures are measured against: the
//! least a synchronous MCP stdio server in Rust (std, serde_json and ureq,
//! nothing else) can do while making the HTTP exchanges resmon-mcp makes.
//!
//! - `initialize` and `tools/list` get canned lines. The listing is the
//!   server's own snapshot (`src/tools/listing-full.json`), so both write the
//!   same bytes; what the server could still save there is its own choice.
//!   Notifications get no answer, `ping` gets `{}`.
//! - `tools/call` of `health`, `search_corpus` or `get_execution` finds
//!   resmon the way the server does when RESMON_PORT_FILE and
//!   RESMON_STATE_DIR are set (the port file gives the port, the state
//!   directory's `api-token-<port>` the token), confirms it with one
//!   `GET /api/health` on first use, then makes the one request the server
//!   makes for that call and relays resmon's body unchanged as the text and
//!   the structured content. Any other tool is answered with an error and
//!   no request: the floor only needs the calls the benchmark makes.
//!
//! It does none of the server's checking (no argument validation, no
//! deadline, no identity, no status mapping, no redaction) and sets no
//! timeouts, which also keeps ureq from starting a resolver thread.
//!
//! `--bare METHOD PATH [BODY]` drops JSON-RPC altogether: each input line
//! makes that one exchange (after the same confirmation on first use) and is
//! answered with one canned line. The benchmark counts its instructions to
//! give the cost of a call's HTTP exchange alone.
//!
//! Built by `cargo run --release --example bench` (see docs/performance.md);
//! by hand: `cargo build --release --example floor`.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

/// The server's own `tools/list` snapshot.
const LISTING: &str = include_str!("../src/tools/listing-full.json");
/// The server's ureq buffer size, so that both allocate the same.
const IO_BUFFER_BYTES: usize = resmon_mcp::backend::IO_BUFFER_BYTES;
const CANNED: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";

/// One HTTP request as the server would send it.
struct Exchange {
    post: bool,
    path: String,
    body: Option<String>,
}

/// The port and token, read once, and the agent that keeps the connection.
struct Resmon {
    agent: ureq::Agent,
    base: String,
    host: String,
    authorization: String,
}

impl Resmon {
    /// Reads the port file and the token file, then confirms with one
    /// authenticated `GET /api/health`.
    fn find() -> Result<Resmon, String> {
        let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
        let port_file = var("RESMON_PORT_FILE")?;
        let port: u16 = std::fs::read_to_string(&port_file)
            .map_err(|error| format!("cannot read {port_file}: {error}"))?
            .trim()
            .parse()
            .map_err(|_| format!("{port_file} does not hold a port"))?;
        let token_file = std::path::Path::new(&var("RESMON_STATE_DIR")?).join(format!("api-token-{port}"));
        let token = std::fs::read_to_string(&token_file)
            .map_err(|error| format!("cannot read {}: {error}", token_file.display()))?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            .input_buffer_size(IO_BUFFER_BYTES)
            .output_buffer_size(IO_BUFFER_BYTES)
            .build()
            .into();
        let resmon = Resmon {
            agent,
            base: format!("http://127.0.0.1:{port}"),
            host: format!("127.0.0.1:{port}"),
            authorization: format!("Bearer {}", token.trim()),
        };
        let (status, _) = resmon.send(&Exchange { post: false, path: "/api/health".into(), body: None })?;
        if status != 200 {
            return Err(format!("GET /api/health answered {status}"));
        }
        Ok(resmon)
    }

    /// One request; the status and the whole body.
    fn send(&self, exchange: &Exchange) -> Result<(u16, Vec<u8>), String> {
        let url = format!("{}{}", self.base, exchange.path);
        let result = if exchange.post {
            self.agent
                .post(&url)
                .header("Host", &self.host)
                .header("Authorization", &self.authorization)
                .header("Content-Type", "application/json")
                .send(exchange.body.as_deref().unwrap_or("{}").as_bytes())
        } else {
            self.agent
                .get(&url)
                .header("Host", &self.host)
                .header("Authorization", &self.authorization)
                .call()
        };
        let mut response = result.map_err(|error| error.to_string())?;
        let status = response.status().as_u16();
        let body = response.body_mut().read_to_vec().map_err(|error| error.to_string())?;
        Ok((status, body))
    }
}

/// Found on the first call that needs it, and kept.
#[derive(Default)]
struct Connection(Option<Resmon>);

impl Connection {
    fn send(&mut self, exchange: &Exchange) -> Result<(u16, Vec<u8>), String> {
        if self.0.is_none() {
            self.0 = Some(Resmon::find()?);
        }
        self.0.as_ref().expect("just found").send(exchange)
    }
}

/// The request the server makes for one call, built from the same
/// arguments the same way (the search body has the server's field order).
fn exchange_for(name: &str, arguments: &Value) -> Option<Exchange> {
    match name {
        "health" => Some(Exchange { post: false, path: "/api/health".into(), body: None }),
        "search_corpus" => {
            let semantic = arguments.get("mode").and_then(Value::as_str) == Some("semantic");
            let body = json!({
                "query": arguments.get("query").and_then(Value::as_str).unwrap_or_default(),
                "limit": arguments.get("limit").and_then(Value::as_i64).unwrap_or(25),
                "sort": if semantic { "similarity" } else { "newest" },
            });
            Some(Exchange { post: true, path: "/api/explorer/search".into(), body: Some(body.to_string()) })
        }
        "get_execution" => {
            let id = arguments.get("exec_id").and_then(Value::as_i64)?;
            Some(Exchange { post: false, path: format!("/api/executions/{id}"), body: None })
        }
        _ => None,
    }
}

/// The answer line to one request line, or none for a notification.
fn answer(line: &[u8], connection: &mut Connection) -> Option<Vec<u8>> {
    let message: Value = serde_json::from_slice(line).ok()?;
    let id = message.get("id")?.to_string();
    let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    match method {
        "initialize" => out.extend_from_slice(
            b",\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\
              \"serverInfo\":{\"name\":\"floor\",\"version\":\"0\"}}}",
        ),
        "tools/list" => {
            out.extend_from_slice(b",\"result\":{\"tools\":");
            out.extend_from_slice(LISTING.trim_end().as_bytes());
            out.extend_from_slice(b"}}");
        }
        "tools/call" => {
            let params = message.get("params").unwrap_or(&Value::Null);
            let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
            let arguments = params.get("arguments").unwrap_or(&Value::Null);
            let relayed = exchange_for(name, arguments)
                .ok_or_else(|| format!("the floor does not make the call {name:?}"))
                .and_then(|exchange| connection.send(&exchange));
            match relayed {
                Ok((status, body)) if (200..300).contains(&status) => {
                    let text = String::from_utf8_lossy(&body);
                    out.extend_from_slice(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
                    serde_json::to_writer(&mut out, &text).expect("a str serialises");
                    out.extend_from_slice(b"}],\"structuredContent\":");
                    out.extend_from_slice(&body);
                    out.extend_from_slice(b",\"isError\":false}}");
                }
                Ok((status, _)) => error_result(&mut out, &format!("resmon answered {status}")),
                Err(why) => error_result(&mut out, &why),
            }
        }
        _ => out.extend_from_slice(b",\"result\":{}}"),
    }
    out.push(b'\n');
    Some(out)
}

fn error_result(out: &mut Vec<u8>, why: &str) {
    out.extend_from_slice(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    serde_json::to_writer(&mut *out, why).expect("a str serialises");
    out.extend_from_slice(b"}],\"isError\":true}}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bare = match args.first().map(String::as_str) {
        Some("--bare") if (3..=4).contains(&args.len()) => {
            Some(Exchange { post: args[1] == "POST", path: args[2].clone(), body: args.get(3).cloned() })
        }
        None => None,
        Some(_) => {
            eprintln!("usage: floor [--bare GET|POST PATH [BODY]]");
            std::process::exit(2);
        }
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = std::io::stdout().lock();
    let mut connection = Connection::default();
    let mut line = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => (),
        }
        let reply = match &bare {
            Some(exchange) => match connection.send(exchange) {
                Ok((status, body)) if status == 200 && !body.is_empty() => Some(CANNED.to_vec()),
                Ok((status, _)) => Some(format!("{{\"error\":\"status {status}\"}}\n").into_bytes()),
                Err(why) => Some(format!("{{\"error\":{}}}\n", json!(why)).into_bytes()),
            },
            None => answer(&line, &mut connection),
        };
        if let Some(reply) = reply
            && output.write_all(&reply).and_then(|()| output.flush()).is_err()
        {
            return;
        }
    }
}
