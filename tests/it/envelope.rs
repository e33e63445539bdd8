//! The era a request is served in follows its own `params._meta`, and each
//! era's required parameters are checked for presence and type
//! (src/protocol/envelope.rs; docs/conformance.md).
//! Everything goes through the real binary over stdio, with no backend named.

use serde_json::{Value, json};

use crate::harness::Session;

const STATELESS: &str = "2026-07-28";
const VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// The envelope the conformance suite sends with every stateless request.
fn envelope() -> Value {
    json!({VERSION: STATELESS, CAPABILITIES: {}, CLIENT_INFO: {"name": "conformance", "version": "0.2.0"}})
}

fn initialize_params() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}})
}

/// Sends one request line (params left out when None) and returns the answer.
fn send(session: &mut Session, id: i64, method: &str, params: Option<Value>) -> Value {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        request["params"] = params;
    }
    session.send_raw(&request.to_string());
    let answer = session.recv();
    assert_eq!(answer["id"], id, "answer to another request: {answer}");
    answer
}

/// The error of an answer that must be an error with `code`, whose message
/// must name `field`.
fn assert_error(answer: &Value, code: i64, field: &str, case: &str) {
    assert_eq!(answer["error"]["code"], code, "{case}: {answer}");
    assert!(answer.get("result").is_none(), "{case}: {answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(field), "{case}: the message does not name {field:?}: {message}");
}

#[test]
fn initialize_carrying_the_stateless_envelope_is_method_not_found() {
    let mut session = Session::start(&[]);
    let answer = send(&mut session, 1, "initialize", Some(json!({"_meta": envelope()})));
    assert_error(&answer, -32601, "initialize", "initialize with the envelope");
    // The message says how to get a handshake instead.
    assert!(answer["error"]["message"].as_str().unwrap().contains(VERSION), "{answer}");
    // The same with handshake parameters beside the envelope: the envelope decides.
    let mut both = initialize_params();
    both["_meta"] = envelope();
    let answer = send(&mut session, 2, "initialize", Some(both));
    assert_error(&answer, -32601, "initialize", "initialize with handshake params and the envelope");
    // The other methods the stateless revision removed answer the same way.
    for (id, method) in [(3, "ping"), (4, "logging/setLevel"), (5, "resources/subscribe")] {
        let answer = send(&mut session, id, method, Some(json!({"_meta": envelope(), "level": "info"})));
        assert_error(&answer, -32601, method, method);
    }
    // An envelope naming a version this server does not serve gets the list
    // of versions it does, and one whose version is not a string is malformed.
    let unknown = json!({"_meta": {VERSION: "2099-01-01", CAPABILITIES: {}}});
    let answer = send(&mut session, 6, "initialize", Some(unknown));
    assert_error(&answer, -32022, "initialize", "initialize with an unknown stateless version");
    assert_eq!(answer["error"]["data"]["requested"], "2099-01-01");
    let answer =
        send(&mut session, 7, "initialize", Some(json!({"_meta": {VERSION: 20260728, CAPABILITIES: {}}})));
    assert_error(&answer, -32602, VERSION, "initialize with a numeric version");

    // An initialize whose key names a handshake version asks for the
    // handshake, and gets one at that version.
    let mut legacy = initialize_params();
    legacy["protocolVersion"] = json!("2025-06-18");
    legacy["_meta"] = json!({VERSION: "2025-06-18"});
    let answer = send(&mut session, 70, "initialize", Some(legacy));
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18", "{answer}");
    assert!(answer["result"].get("resultType").is_none(), "a handshake answer: {answer}");

    // The refused requests opened no session: the handshake still works as before,
    // and stateless requests are still served beside it.
    let answer = send(&mut session, 8, "initialize", Some(initialize_params()));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
    assert!(answer["result"].get("resultType").is_none(), "a handshake answer: {answer}");
    let answer = send(&mut session, 9, "tools/list", Some(json!({"_meta": envelope()})));
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["tools"].as_array().unwrap().len(), 25);
    // An `initialize` whose _meta holds only other keys is a handshake.
    let mut other_meta = initialize_params();
    other_meta["_meta"] = json!({"progressToken": 1, CAPABILITIES: {}});
    let answer = send(&mut session, 10, "initialize", Some(other_meta));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
    let (status, _) = session.finish();
    assert!(status.success());
}

#[test]
fn malformed_stateless_envelopes_answer_invalid_params_naming_the_field() {
    let with = |key: &str, value: Value| {
        let mut meta = envelope();
        meta[key] = value;
        meta
    };
    let without = |key: &str| {
        let mut meta = envelope();
        meta.as_object_mut().unwrap().remove(key);
        meta
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        ("capabilities a string", with(CAPABILITIES, json!("not-an-object")), CAPABILITIES),
        ("capabilities null", with(CAPABILITIES, Value::Null), CAPABILITIES),
        ("capabilities an array", with(CAPABILITIES, json!([])), CAPABILITIES),
        ("capabilities missing", without(CAPABILITIES), CAPABILITIES),
        ("version a number", with(VERSION, json!(20260728)), VERSION),
        ("version null", with(VERSION, Value::Null), VERSION),
        ("clientInfo a string", with(CLIENT_INFO, json!("conformance")), CLIENT_INFO),
        ("clientInfo null", with(CLIENT_INFO, Value::Null), CLIENT_INFO),
        ("clientInfo without version", with(CLIENT_INFO, json!({"name": "c"})), "version"),
        ("clientInfo name a number", with(CLIENT_INFO, json!({"name": 7, "version": "1"})), "name"),
        ("clientInfo version null", with(CLIENT_INFO, json!({"name": "c", "version": null})), "version"),
    ];
    let mut session = Session::start(&[]);
    let mut id = 0;
    for (case, meta, field) in &cases {
        for method in ["server/discover", "tools/list", "tools/call"] {
            id += 1;
            let mut params = json!({"_meta": meta});
            if method == "tools/call" {
                params["name"] = json!("health");
                params["arguments"] = json!({});
            }
            let answer = send(&mut session, id, method, Some(params));
            assert_error(&answer, -32602, field, &format!("{method} with {case}"));
            if field.starts_with("name") || field.starts_with("version") {
                assert!(
                    answer["error"]["message"].as_str().unwrap().contains(CLIENT_INFO),
                    "{case}: {answer}"
                );
            }
        }
    }
    // server/discover belongs to the stateless era with or without the key,
    // so it also names an envelope that is not an object at all.
    id += 1;
    let answer = send(&mut session, id, "server/discover", Some(json!({"_meta": "envelope"})));
    assert_error(&answer, -32602, "params._meta", "server/discover with a string _meta");
    // Unknown members stay allowed, in the envelope and in clientInfo, and
    // clientInfo may be left out altogether.
    let mut lenient = with(CLIENT_INFO, json!({"name": "c", "version": "1", "title": "C", "icons": []}));
    lenient["example.com/trace"] = json!({"span": 1});
    lenient[CAPABILITIES] = json!({"roots": {"listChanged": true}, "extensions": {"x": {}}});
    for (n, meta) in [lenient, without(CLIENT_INFO)].into_iter().enumerate() {
        for method in ["server/discover", "tools/list"] {
            id += 1;
            let answer = send(&mut session, id, method, Some(json!({"_meta": meta})));
            assert_eq!(answer["result"]["resultType"], "complete", "{method}, lenient case {n}: {answer}");
        }
    }
}

#[test]
fn initialize_without_its_required_parameters_is_invalid_params() {
    let with = |key: &str, value: Value| {
        let mut params = initialize_params();
        params[key] = value;
        params
    };
    let without = |key: &str| {
        let mut params = initialize_params();
        params.as_object_mut().unwrap().remove(key);
        params
    };
    let cases: Vec<(&str, Option<Value>, &str)> = vec![
        ("no params", None, "protocolVersion"),
        ("params null", Some(Value::Null), "protocolVersion"),
        ("params empty", Some(json!({})), "params.protocolVersion"),
        ("params an array", Some(json!(["2025-11-25"])), "params"),
        ("protocolVersion missing", Some(without("protocolVersion")), "params.protocolVersion"),
        (
            "protocolVersion a number",
            Some(with("protocolVersion", json!(20251125))),
            "params.protocolVersion",
        ),
        ("capabilities missing", Some(without("capabilities")), "params.capabilities"),
        ("capabilities a string", Some(with("capabilities", json!("all"))), "params.capabilities"),
        ("clientInfo missing", Some(without("clientInfo")), "params.clientInfo"),
        ("clientInfo a string", Some(with("clientInfo", json!("test"))), "params.clientInfo"),
        (
            "clientInfo without version",
            Some(with("clientInfo", json!({"name": "t"}))),
            "params.clientInfo.version",
        ),
        (
            "clientInfo name null",
            Some(with("clientInfo", json!({"name": null, "version": "0"}))),
            "params.clientInfo.name",
        ),
    ];
    let mut session = Session::start(&[]);
    for (n, (case, params, field)) in cases.into_iter().enumerate() {
        let answer = send(&mut session, n as i64 + 1, "initialize", params);
        assert_error(&answer, -32602, field, case);
    }
    // A refused initialize negotiated nothing; a complete one, with members
    // this server does not know, still opens the handshake.
    let mut complete =
        with("clientInfo", json!({"name": "t", "version": "0", "title": "T", "websiteUrl": "x"}));
    complete["somethingNew"] = json!(true);
    complete["capabilities"] = json!({"roots": {"listChanged": true}});
    let answer = send(&mut session, 100, "initialize", Some(complete));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
    // A version it does not speak is still negotiated, not refused.
    let answer = send(&mut session, 101, "initialize", Some(with("protocolVersion", json!("1999-01-01"))));
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
}
