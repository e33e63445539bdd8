//! The MCP protocol rules of both eras (src/protocol.rs), with no backend named:
//! every tool call here must come back as a structured refusal, and the
//! session must survive everything.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Launch, Session, call_problems, tool_error};

const STATELESS: &str = "2026-07-28";

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": STATELESS,
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}})
}

/// What a handshake-era client sends with `initialize`.
fn initialize_params(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}})
}

fn no_env() -> Vec<(String, String)> {
    Vec::new()
}

#[test]
fn discover_probe_before_initialize_is_answered_and_the_session_continues() {
    let mut session = Session::start(&no_env());
    session.send_raw(
        &json!({"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
                "params": {"_meta": stateless_meta()}})
        .to_string(),
    );
    let discover = session.recv();
    assert_eq!(discover["id"], "server-discover-probe-1");
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(result["supportedVersions"].as_array().unwrap().contains(&json!(STATELESS)));
    assert_eq!(
        result["capabilities"],
        json!({"tools": {"listChanged": false}, "prompts": {"listChanged": false}})
    );
    assert!(result["instructions"].as_str().unwrap().contains("get_execution"));
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "resmon");
    assert!(result["ttlMs"].as_u64().is_some());
    assert!(result["cacheScope"].is_string());
    // Then a legacy client falls back to the handshake on the same process.
    let init = session.request("initialize", initialize_params("2025-11-25"));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let list = session.request("tools/list", json!({}));
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 25);
    let (status, _) = session.finish();
    assert!(status.success());
}

#[test]
fn initialize_echoes_supported_versions_and_counter_offers_the_rest() {
    let cases = [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        (STATELESS, "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("", "2025-11-25"),
    ];
    let mut session = Session::start(&no_env());
    for (asked, answered) in cases {
        let init = session.request("initialize", initialize_params(asked));
        let result = &init["result"];
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
        assert_eq!(result["serverInfo"]["name"], "resmon");
        assert_eq!(result["serverInfo"]["version"], "1.0", "the contract version, not the crate's");
        assert!(result["serverInfo"]["title"].is_string());
        assert_eq!(
            result["capabilities"],
            json!({"tools": {"listChanged": false}, "prompts": {"listChanged": false}}),
            "nothing not honoured"
        );
        assert_eq!(result["_meta"]["resmon/server_version"], env!("CARGO_PKG_VERSION"));
        assert!(result.get("resultType").is_none(), "handshake results carry no resultType");
    }
}

#[test]
fn unknown_requests_get_method_not_found_before_and_after_initialize() {
    let mut session = Session::start(&no_env());
    let before = session.request("resources/list", json!({}));
    assert_eq!(before["error"]["code"], -32601);
    let init = session.request("initialize", initialize_params("2025-06-18"));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let after = session.request("resources/templates/list", json!({}));
    assert_eq!(after["error"]["code"], -32601);
    let logging = session.request("logging/setLevel", json!({"level": "info"}));
    assert_eq!(logging["error"]["code"], -32601, "logging is not a declared capability");
    let ping = session.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
}

#[test]
fn notifications_are_never_answered() {
    let mut session = Session::start(&no_env());
    for method in
        ["notifications/initialized", "notifications/cancelled", "notifications/whatever", "tools/list"]
    {
        session
            .send_raw(&json!({"jsonrpc": "2.0", "method": method, "params": {"requestId": 1}}).to_string());
    }
    // A response from the client is not answered either.
    session.send_raw(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    assert!(
        session.silent_for(Duration::from_millis(400)),
        "answered a notification: {:?}",
        session.transcript
    );
    let ping = session.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
}

#[test]
fn malformed_lines_get_defined_errors_and_the_session_survives() {
    let mut session = Session::start(&no_env());
    let cases: [(&str, i64, Value); 9] = [
        ("not json at all", -32700, Value::Null),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,", -32700, Value::Null),
        ("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600, Value::Null),
        ("\"just a string\"", -32600, Value::Null),
        ("42", -32600, Value::Null),
        ("{\"jsonrpc\":\"2.0\",\"id\":7}", -32600, json!(7)),
        ("{\"jsonrpc\":\"1.0\",\"id\":8,\"method\":\"ping\"}", -32600, json!(8)),
        ("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":42}", -32600, json!(9)),
        ("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", -32600, Value::Null),
    ];
    for (line, code, id) in cases {
        session.send_raw(line);
        let answer = session.recv();
        assert_eq!(answer["error"]["code"], code, "line {line}: {answer}");
        assert_eq!(answer["id"], id, "line {line}");
        assert_eq!(answer["jsonrpc"], "2.0");
    }
    let ping = session.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
}

#[test]
fn ids_are_echoed_exactly() {
    let mut session = Session::start(&no_env());
    for id in [
        json!(0),
        json!("0"),
        json!(""),
        json!("server-discover-probe-1"),
        json!(-5),
        json!(9007199254740993u64),
    ] {
        session.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string());
        let answer = session.recv();
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"], json!({}));
    }
    for bad in [json!(null), json!(1.5), json!([1]), json!(true)] {
        session.send_raw(&json!({"jsonrpc": "2.0", "id": bad, "method": "ping"}).to_string());
        let answer = session.recv();
        assert_eq!(answer["error"]["code"], -32600, "id {bad}");
        assert_eq!(answer["id"], Value::Null);
    }
}

#[test]
fn crlf_and_blank_lines_are_tolerated_and_output_is_one_compact_line_each() {
    let mut session = Session::start(&no_env());
    session.send_bytes(b"\n\r\n   \n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
    let answer = session.recv();
    assert_eq!(answer["id"], 1);
    let init = session.request("initialize", initialize_params("2025-11-25"));
    assert!(init.get("result").is_some(), "{init}");
    session.request("tools/list", json!({}));
    // The session splits stdout at `\n` alone, so a `\r` the server wrote
    // before it would still be here.
    for line in &session.transcript {
        assert!(!line.contains('\r'), "a CRLF line ending: {line:?}");
        let reparsed: Value = serde_json::from_str(line).unwrap();
        assert_eq!(&reparsed.to_string(), line, "output is compact JSON");
    }
}

#[test]
fn eof_exits_at_once_with_status_zero() {
    let mut session = Session::start(&no_env());
    session.request("ping", json!({}));
    let started = Instant::now();
    let (status, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[test]
fn tools_call_protocol_errors_and_tool_errors_are_kept_apart() {
    let mut session = Session::initialized(&no_env());
    let unknown = session.request("tools/call", json!({"name": "drop_database", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602);
    let nameless = session.request("tools/call", json!({"arguments": {}}));
    assert_eq!(nameless["error"]["code"], -32602);
    let no_params = session.request("tools/call", Value::Null);
    assert_eq!(no_params["error"]["code"], -32602);
    // Bad arguments for a real tool: a tool result, not a protocol error.
    let bad = session.call("health", json!({"expected_runtime_id": "not-a-uuid"}));
    assert_eq!(tool_error(&bad)["error"], "invalid_argument");
    let not_object = session.call("health", json!([1, 2]));
    assert_eq!(tool_error(&not_object)["error"], "invalid_argument");
    // With no backend named, the call is a structured refusal.
    let refused = session.call("health", json!({}));
    let payload = tool_error(&refused);
    assert_eq!(payload["error"], "backend_unavailable");
    assert_eq!(payload["no_port_named"], true);
    assert_eq!(payload["tried"], json!([]));
}

#[test]
fn stateless_requests_are_served_without_a_handshake() {
    let mut session = Session::start(&no_env());
    let list =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": stateless_meta()}});
    session.send_raw(&list.to_string());
    let answer = session.recv();
    let result = &answer["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["tools"].as_array().unwrap().len(), 25);
    assert!(result["ttlMs"].as_u64().is_some());
    assert!(result["cacheScope"].is_string());
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1.0");

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "health", "arguments": {}, "_meta": stateless_meta()}});
    session.send_raw(&call.to_string());
    let answer = session.recv();
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(call_problems("health", &answer), Vec::<String>::new());
}

#[test]
fn stateless_version_and_meta_rules() {
    let mut session = Session::start(&no_env());
    let unsupported = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    session.send_raw(&unsupported.to_string());
    let answer = session.recv();
    assert_eq!(answer["error"]["code"], -32022);
    assert_eq!(answer["error"]["data"]["requested"], "2099-01-01");
    assert!(answer["error"]["data"]["supported"].as_array().unwrap().contains(&json!(STATELESS)));

    let no_capabilities = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": STATELESS}}});
    session.send_raw(&no_capabilities.to_string());
    assert_eq!(session.recv()["error"]["code"], -32602);

    let bare_discover = json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}});
    session.send_raw(&bare_discover.to_string());
    assert_eq!(session.recv()["error"]["code"], -32602);

    let unknown =
        json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list", "params": {"_meta": stateless_meta()}});
    session.send_raw(&unknown.to_string());
    assert_eq!(session.recv()["error"]["code"], -32601);
}

#[test]
fn tools_list_rejects_a_cursor_it_never_issued() {
    let mut session = Session::initialized(&no_env());
    let answer = session.request("tools/list", json!({"cursor": "page-2"}));
    assert_eq!(answer["error"]["code"], -32602);
}

#[test]
fn an_overlong_line_is_answered_and_skipped_without_ending_the_session() {
    let mut session = Session::start(&no_env());
    let mut line = Vec::with_capacity(5 * 1024 * 1024);
    line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"");
    line.resize(5 * 1024 * 1024, b'a');
    line.extend_from_slice(b"\"}}\n");
    session.send_bytes(&line);
    let answer = session.recv();
    assert_eq!(answer["error"]["code"], -32600);
    assert_eq!(answer["id"], Value::Null);
    let ping = session.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
}

#[test]
fn invalid_utf8_and_nul_and_deep_nesting_get_parse_errors() {
    let mut session = Session::start(&no_env());
    session.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}\n");
    assert_eq!(session.recv()["error"]["code"], -32700);
    session.send_bytes(b"{\"jsonrpc\":\"2.0\",\0\"id\":1}\n");
    assert_eq!(session.recv()["error"]["code"], -32700);
    let deep = "[".repeat(100_000);
    session.send_raw(&deep);
    assert_eq!(session.recv()["error"]["code"], -32700);
    session.send_raw("{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"ping\"}");
    assert_eq!(session.recv()["error"]["code"], -32700);
    let ping = session.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}));
}

#[test]
fn a_closed_stdout_ends_the_server_quietly() {
    use std::io::{BufRead, BufReader, Write};
    let mut running = Launch::new(&no_env()).spawn();
    let mut stdin = running.child.stdin.take().unwrap();
    let mut stdout = BufReader::new(running.child.stdout.take().unwrap());
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").unwrap();
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("\"id\":1"));
    drop(stdout);
    // The next answers hit a closed pipe; the server must leave without a panic.
    for id in 2..50 {
        if stdin
            .write_all(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes())
            .is_err()
        {
            break;
        }
    }
    // `stdin` is still open here: the closed stdout alone must end the server.
    let output = running.wait("the server with a closed stdout");
    drop(stdin);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}
