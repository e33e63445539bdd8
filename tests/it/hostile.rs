//! Hostile stdin (docs/fuzzing.md): a 100 MB line, odd bytes and shapes,
//! ids of every JSON type, arguments of the wrong type for every parameter
//! of every tool, and a seeded randomised run of mutated lines through the line
//! handler in-process. Also keeps the fuzz seed corpus (fuzz/seeds/) in step
//! with the traffic it is drawn from, and holds the regression tests of the
//! fuzzing findings (docs/fuzzing.md).
//!
//! A closed stdout mid-session is covered by protocol.rs
//! (`a_closed_stdout_ends_the_server_quietly`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use resmon_mcp::backend::Backend;
use resmon_mcp::discovery::Environment;
use resmon_mcp::protocol::{HANDSHAKE_VERSIONS, STATELESS_VERSION, Server};

use crate::calls::every_branch;
use crate::harness::{Session, clip, connected, error_payload};
use crate::line_rule;

// ------------------------------------------------------------------ helpers

/// The one runtime id the seeds use (a canonical UUID4).
const SEED_RUNTIME_ID: &str = "3f6b2a1e-9c4d-4e8a-b2f1-7d0c5e6a9b13";

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "seed", "version": "0"}})
}

/// A field of /proc/<pid>/status in KiB (Linux only).
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(&format!("{field}:")))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The server keeps answering after whatever came before.
fn assert_alive(session: &mut Session) {
    let ping = session.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
}

// ------------------------------------------------------------ a 100 MB line

#[test]
fn a_100_mb_line_is_answered_with_bounded_memory_and_the_session_continues() {
    let mut session = Session::start(&[]);
    assert_alive(&mut session);
    let pid = session.child().id();
    // Without /proc (macOS, Windows) the line is still sent and must still be
    // answered; only the memory figure goes unmeasured.
    let baseline = proc_status_kib(pid, "VmHWM");
    const TOTAL: usize = 100 * 1024 * 1024;
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#;
    let chunk = vec![b'a'; 1024 * 1024];
    let started = Instant::now();
    session.send_bytes(head);
    let mut sent = head.len();
    while sent + chunk.len() < TOTAL {
        session.send_bytes(&chunk);
        sent += chunk.len();
    }
    session.send_bytes(b"\"}}\n");
    let answer = session.recv();
    let elapsed = started.elapsed();
    assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_alive(&mut session);
    match (baseline, proc_status_kib(pid, "VmHWM"), proc_status_kib(pid, "VmRSS")) {
        (Some(baseline), Some(peak), Some(resident)) => {
            eprintln!(
                "100 MB line: answered in {elapsed:?}; peak RSS {peak} KiB (before it: {baseline} KiB), RSS after {resident} KiB"
            );
            assert!(peak < 24 * 1024, "peak RSS {peak} KiB is not well under 32 MiB");
            assert!(peak - baseline < 12 * 1024, "the line cost {} KiB of peak RSS", peak - baseline);
        }
        _ => eprintln!(
            "100 MB line: answered in {elapsed:?}; no /proc/<pid>/status here, so memory was not measured"
        ),
    }
    let (status, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

// ------------------------------------------------- odd bytes and odd shapes

/// What a line must be answered with.
enum Want {
    /// An error with this code and this id.
    Error(i64, Value),
    /// A result, with this id.
    Result(Value),
    /// A tools/call result with isError and this code, with this id.
    ToolError(Value, &'static str),
}

/// `{"jsonrpc":"2.0",<members>}`.
fn message(members: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0",{members}}}"#).into_bytes()
}

/// A tools/call request with its arguments written out as text.
fn call_text(id: i64, tool: &str, arguments: &str) -> Vec<u8> {
    message(&format!(
        r#""id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}"#
    ))
}

#[test]
fn odd_bytes_numbers_nesting_and_duplicate_keys_each_get_a_defined_answer() {
    use Want::{Error, Result, ToolError};
    let null = Value::Null;
    let deep_params =
        format!(r#""id":3,"method":"ping","params":{}1{}"#, "[".repeat(100_000), "]".repeat(100_000));
    // 5000 digits overflow even a float (a parse error); 300 digits make a
    // float that is a valid number but not a valid id.
    let long_digits = "9".repeat(5000);
    let many_digits = "9".repeat(300);
    let cases: Vec<(&str, Vec<u8>, Want)> = vec![
        (
            "invalid UTF-8 in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}".to_vec(),
            Error(-32700, null.clone()),
        ),
        (
            "invalid UTF-8 in a key",
            b"{\"jsonrpc\":\"2.0\",\"i\xc3\x28d\":1,\"method\":\"ping\"}".to_vec(),
            Error(-32700, null.clone()),
        ),
        ("invalid UTF-8 alone", b"\xfe\xff\xfd".to_vec(), Error(-32700, null.clone())),
        (
            "overlong UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"ping\"}".to_vec(),
            Error(-32700, null.clone()),
        ),
        (
            "a BOM first",
            b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".to_vec(),
            Error(-32700, null.clone()),
        ),
        (
            "a raw NUL between members",
            b"{\"jsonrpc\":\"2.0\",\0\"id\":1,\"method\":\"ping\"}".to_vec(),
            Error(-32700, null.clone()),
        ),
        (
            "a raw NUL in a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\0ng\"}".to_vec(),
            Error(-32700, null.clone()),
        ),
        ("an escaped NUL in the method", message(r#""id":1,"method":"ping\u0000""#), Error(-32601, json!(1))),
        ("an escaped NUL in the id", message(r#""id":"\u0000","method":"ping""#), Result(json!("\u{0}"))),
        ("a lone surrogate escape", message(r#""id":"\ud800","method":"ping""#), Error(-32700, null.clone())),
        ("100 000 [", "[".repeat(100_000).into_bytes(), Error(-32700, null.clone())),
        ("100 000 nested objects", "{\"a\":".repeat(100_000).into_bytes(), Error(-32700, null.clone())),
        ("deep params", message(&deep_params), Error(-32700, null.clone())),
        ("deep arguments", call_text(4, "health", &"{\"a\":".repeat(100_000)), Error(-32700, null.clone())),
        ("an id of 1e999", message(r#""id":1e999,"method":"ping""#), Error(-32700, null.clone())),
        (
            "an id of 5000 digits",
            message(&format!(r#""id":{long_digits},"method":"ping""#)),
            Error(-32700, null.clone()),
        ),
        (
            "an id of 300 digits",
            message(&format!(r#""id":{many_digits},"method":"ping""#)),
            Error(-32600, null.clone()),
        ),
        (
            "an id past u64",
            message(r#""id":18446744073709551616,"method":"ping""#),
            Error(-32600, null.clone()),
        ),
        (
            "an id at u64::MAX",
            message(r#""id":18446744073709551615,"method":"ping""#),
            Result(json!(u64::MAX)),
        ),
        (
            "an id at i64::MIN",
            message(r#""id":-9223372036854775808,"method":"ping""#),
            Result(json!(i64::MIN)),
        ),
        ("an id of -0 (a float)", message(r#""id":-0,"method":"ping""#), Error(-32600, null.clone())),
        ("an id of 1e2", message(r#""id":1e2,"method":"ping""#), Error(-32600, null.clone())),
        (
            "an overflowing number in params",
            message(&format!(r#""id":5,"method":"ping","params":{{"n":{long_digits}}}"#)),
            Error(-32700, null.clone()),
        ),
        (
            "a huge number in params",
            message(&format!(r#""id":5,"method":"ping","params":{{"n":{many_digits}}}"#)),
            Result(json!(5)),
        ),
        (
            "a huge limit",
            call_text(6, "list_executions", &format!(r#"{{"limit":{many_digits}}}"#)),
            ToolError(json!(6), "invalid_argument"),
        ),
        (
            "a limit past u64",
            call_text(6, "list_executions", r#"{"limit":18446744073709551616}"#),
            ToolError(json!(6), "invalid_argument"),
        ),
        (
            "1e-999 as an id argument",
            call_text(7, "find_similar", r#"{"doc_id":1e-999}"#),
            ToolError(json!(7), "invalid_argument"),
        ),
        ("duplicate ids", message(r#""id":1,"id":2,"method":"ping""#), Result(json!(2))),
        ("duplicate methods", message(r#""id":8,"method":"tools/list","method":"ping""#), Result(json!(8))),
        (
            "duplicate jsonrpc, the last wrong",
            message(r#""jsonrpc":"1.0","id":9,"method":"ping""#),
            Error(-32600, json!(9)),
        ),
        // Refused, not resolved to the last (contract-notes 30).
        (
            "duplicate argument names",
            call_text(10, "find_similar", r#"{"doc_id":"x","doc_id":801}"#),
            ToolError(json!(10), "invalid_argument"),
        ),
        (
            "duplicate params",
            message(r#""id":11,"method":"tools/call","params":{"name":"x"},"params":{"name":"health"}"#),
            ToolError(json!(11), "backend_unavailable"),
        ),
        ("an empty object", b"{}".to_vec(), Error(-32600, null.clone())),
        ("null", b"null".to_vec(), Error(-32600, null.clone())),
        ("an empty batch", b"[]".to_vec(), Error(-32600, null.clone())),
        (
            "two objects on one line",
            [message(r#""id":1,"method":"ping""#), message(r#""id":2,"method":"ping""#)].concat(),
            Error(-32700, null.clone()),
        ),
        ("a trailing comma", message(r#""id":1,"method":"ping","#), Error(-32700, null)),
    ];
    let mut session = Session::start(&[]);
    let mut failures = Vec::new();
    for (name, mut line, want) in cases {
        line.push(b'\n');
        session.send_bytes(&line);
        let answer = session.recv();
        let wrong = match &want {
            Want::Error(code, id) => answer["error"]["code"] != *code || answer["id"] != *id,
            Want::Result(id) => answer.get("result").is_none() || answer["id"] != *id,
            Want::ToolError(id, code) => {
                let payload = error_payload(&answer["result"]).unwrap_or(Value::Null);
                payload["error"] != *code || answer["id"] != *id
            }
        };
        let shape =
            answer["jsonrpc"] != "2.0" || (answer.get("result").is_some() == answer.get("error").is_some());
        if wrong || shape {
            failures.push(format!("{name}: {}", clip(&answer.to_string())));
        }
    }
    assert_alive(&mut session);
    let (status, stderr) = session.finish();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(status.success() && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn ids_of_every_json_type_get_a_defined_answer() {
    let mut session = Session::start(&[]);
    let valid = [json!(0), json!(-1), json!(u64::MAX), json!(""), json!("x"), json!("ü ∂ 🦀")];
    let invalid = [
        json!(null),
        json!(1.5),
        json!(1.0),
        json!(true),
        json!(false),
        json!([]),
        json!([1]),
        json!({}),
        json!({"id": 1}),
    ];
    for method in ["ping", "tools/list", "no/such/method"] {
        for id in &valid {
            session.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string());
            let answer = session.recv();
            assert_eq!(&answer["id"], id, "{method} {id}: {answer}");
            let is_known = method != "no/such/method";
            assert_eq!(answer.get("result").is_some(), is_known, "{method} {id}: {answer}");
        }
        for id in &invalid {
            session.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string());
            let answer = session.recv();
            assert_eq!(answer["id"], Value::Null, "{method} {id}: {answer}");
            assert_eq!(answer["error"]["code"], -32600, "{method} {id}: {answer}");
        }
    }
    // A response from the client with an id of any type is never answered.
    for id in valid.iter().chain(&invalid) {
        session.send_raw(&json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string());
        session
            .send_raw(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": 1, "message": "x"}}).to_string());
    }
    assert!(
        session.silent_for(Duration::from_millis(300)),
        "a response was answered: {:?}",
        session.transcript.last()
    );
    assert_alive(&mut session);
    let (status, stderr) = session.finish();
    assert!(status.success() && !stderr.contains("panicked"), "{stderr}");
}

// ------------------------------------------ wrong types for every parameter

/// Values of every type except the one a parameter takes (null is left out:
/// for an optional parameter it means "not given").
fn wrong_values(kind: &str) -> Vec<Value> {
    let all = [json!("7"), json!(7), json!(1.5), json!(true), json!([]), json!({}), json!(["x"])];
    all.into_iter()
        .filter(|value| match kind {
            "string" => !value.is_string(),
            "integer" => !(value.is_i64() || value.is_u64()),
            "number" => !value.is_number(),
            "boolean" => !value.is_boolean(),
            "array" => !value.is_array(),
            "object" => !value.is_object(),
            _ => false,
        })
        .collect()
}

/// Every (argument name as the refusal must give it, arguments) pair that
/// puts one wrong-typed value into an otherwise valid call.
fn wrong_type_calls(schema: &Value, valid: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    for (name, property) in &properties {
        let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
        for wrong in wrong_values(kind) {
            let mut arguments = valid.clone();
            arguments.insert(name.clone(), wrong);
            calls.push((name.clone(), Value::Object(arguments)));
        }
        // One level down, array items. The members of create_routine's
        // `entity` are left out on purpose: contract 1.0 passes `entity` to
        // resmon unexamined, and resmon's own validator judges them.
        if let Some(item_kind) = property.pointer("/items/type").and_then(Value::as_str) {
            for wrong in wrong_values(item_kind) {
                let mut arguments = valid.clone();
                arguments.insert(name.clone(), json!([wrong]));
                calls.push((format!("{name}[0]"), Value::Object(arguments)));
            }
        }
    }
    calls
}

#[test]
fn a_wrong_type_for_any_parameter_of_any_tool_is_refused_naming_it_and_nothing_is_sent() {
    let (fake, mut session) = connected();
    let listing = session.request("tools/list", json!({}));
    let tools = listing["result"]["tools"].as_array().unwrap().clone();
    assert_eq!(tools.len(), 25);
    let valid: BTreeMap<&str, Value> = every_branch(&fake.runtime_id()).into_iter().rev().collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut parameters = 0;
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let schema = &tool["inputSchema"];
        parameters += schema["properties"].as_object().map_or(0, Map::len);
        let base = valid[name].as_object().unwrap();
        let calls = wrong_type_calls(schema, base);
        if schema["properties"].as_object().is_some_and(|properties| !properties.is_empty())
            && calls.is_empty()
        {
            failures.push(format!("{name}: no wrong-type call could be built"));
        }
        for (argument, arguments) in calls {
            checked += 1;
            let result = session.call(name, arguments.clone());
            let payload = error_payload(&result).unwrap_or(Value::Null);
            let right =
                payload["error"] == "invalid_argument" && payload["detail"]["argument"] == argument.as_str();
            if !right {
                failures.push(format!(
                    "{name} {arguments}: wanted invalid_argument naming {argument}, got {payload}"
                ));
            }
        }
    }
    let sent: Vec<String> =
        fake.requests().iter().map(|request| format!("{} {}", request.method, request.path)).collect();
    eprintln!("{checked} wrong-typed calls over {parameters} parameters of {} tools", tools.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(sent.is_empty(), "refused calls reached the backend: {sent:?}");
    assert!(checked > 200, "only {checked} calls");
    assert_alive(&mut session);
}

// --------------------------------------------------- the traffic seed lines

fn line(id: i64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string().into_bytes()
}

/// Lines a real client sends, plus malformed ones: the seeds of the
/// randomised test below and of the fuzz corpus (fuzz/seeds/line/).
pub fn seed_lines() -> Vec<(String, Vec<u8>)> {
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    for version in HANDSHAKE_VERSIONS.iter().chain([&STATELESS_VERSION, &"1999-01-01"]) {
        seeds.push((
            format!("initialize-{version}"),
            line(
                1,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "seed", "version": "0"}}),
            ),
        ));
    }
    seeds.push(("initialized".into(), br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()));
    seeds.push((
        "cancelled".into(),
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}"#
            .to_vec(),
    ));
    seeds.push(("ping".into(), br#"{"jsonrpc":"2.0","id":"p-1","method":"ping"}"#.to_vec()));
    seeds.push(("discover".into(), line(2, "server/discover", json!({"_meta": stateless_meta()}))));
    seeds.push(("tools-list".into(), line(3, "tools/list", json!({}))));
    seeds.push(("tools-list-stateless".into(), line(4, "tools/list", json!({"_meta": stateless_meta()}))));
    seeds.push(("tools-list-cursor".into(), line(5, "tools/list", json!({"cursor": "page-2"}))));
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, (tool, arguments)) in every_branch(SEED_RUNTIME_ID).into_iter().enumerate() {
        let n = counts.entry(tool).or_default();
        *n += 1;
        let id = 100 + index as i64;
        seeds.push((
            format!("call-{tool}-{n}"),
            line(id, "tools/call", json!({"name": tool, "arguments": arguments})),
        ));
        if *n == 1 {
            let params = json!({"name": tool, "arguments": arguments, "_meta": stateless_meta()});
            seeds.push((format!("call-{tool}-stateless"), line(id + 1000, "tools/call", params)));
        }
    }
    let malformed: [(&str, &[u8]); 18] = [
        ("bad-not-json", b"not json at all"),
        ("bad-truncated", br#"{"jsonrpc":"2.0","id":1,"#),
        ("bad-batch", br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
        ("bad-string", br#""just a string""#),
        ("bad-number", b"42"),
        ("bad-no-method", br#"{"jsonrpc":"2.0","id":7}"#),
        ("bad-jsonrpc-1", br#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#),
        ("bad-method-number", br#"{"jsonrpc":"2.0","id":9,"method":42}"#),
        ("bad-id-object", br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
        ("bad-id-float", br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
        ("bad-response", br#"{"jsonrpc":"2.0","id":99,"result":{}}"#),
        ("bad-utf8", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}"),
        ("bad-nul", b"{\"jsonrpc\":\"2.0\",\0\"id\":1}"),
        ("bad-deep", b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["),
        ("bad-huge-id", br#"{"jsonrpc":"2.0","id":1e999,"method":"ping"}"#),
        ("bad-duplicate-id", br#"{"jsonrpc":"2.0","id":1,"id":"2","method":"ping"}"#),
        ("bad-unknown-version", br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#),
        ("bad-crlf", b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"),
    ];
    seeds.extend(malformed.iter().map(|(name, bytes)| (name.to_string(), bytes.to_vec())));
    // Arguments whose text says more than their parsed value: a key given
    // twice, an integer written with a fraction part.
    seeds.push((
        "call-arguments-as-written".into(),
        br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_routine","arguments":{"routine_id":8.0,"routine_id":7}}}"#
            .to_vec(),
    ));
    seeds
}

fn seeds_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds").join(target)
}

/// Seeds of the argument-validation target: the tool's name, a newline, the
/// arguments (the format fuzz/fuzz_targets/arguments.rs reads).
pub fn argument_seeds() -> Vec<(String, Vec<u8>)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seeds = Vec::new();
    for (tool, arguments) in every_branch(SEED_RUNTIME_ID) {
        let n = counts.entry(tool).or_default();
        *n += 1;
        seeds.push((format!("{tool}-{n}"), format!("{tool}\n{arguments}").into_bytes()));
    }
    seeds.push(("health-not-an-object".into(), b"health\n[1,2]".to_vec()));
    seeds.push((
        "search_corpus-wrong-types".into(),
        br#"search_corpus
{"query":7,"limit":"5","sources":[1]}"#
            .to_vec(),
    ));
    seeds.push(("create_routine-entity".into(), br#"create_routine
{"name":"n","keywords":[],"sources":["arxiv"],"schedule":"0 8 * * 1","entity":{"profile_id":5,"mode":"new_papers"}}"#.to_vec()));
    seeds.push(("run_routine-twice".into(), b"run_routine\n{\"routine_id\":1,\"routine_id\":2}".to_vec()));
    seeds.push((
        "update_settings-twice".into(),
        br#"update_settings
{"group":"ai","settings":{"ai_model":"a","ai_model":"a"}}"#
            .to_vec(),
    ));
    seeds.push(("list_executions-float".into(), b"list_executions\n{\"limit\":2e0,\"offset\":1.5}".to_vec()));
    seeds.push((
        "update_settings-credential".into(),
        br#"update_settings
{"group":"ai","settings":{"anthropic_api_key":"x"}}"#
            .to_vec(),
    ));
    seeds
}

/// fuzz/seeds/ holds exactly these seeds. `RESMON_WRITE_FUZZ_SEEDS=1`
/// rewrites it from them (after a change to calls.rs, say).
#[test]
fn the_fuzz_seed_corpus_is_the_traffic_it_is_drawn_from() {
    for (target, seeds) in [("line", seed_lines()), ("arguments", argument_seeds())] {
        let dir = seeds_dir(target);
        if std::env::var("RESMON_WRITE_FUZZ_SEEDS").is_ok_and(|value| value == "1") {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (name, bytes) in &seeds {
                std::fs::write(dir.join(name), bytes).unwrap();
            }
        }
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut wanted: Vec<String> = seeds.iter().map(|(name, _)| name.clone()).collect();
        wanted.sort();
        assert_eq!(on_disk, wanted, "fuzz/seeds/{target} differs; RESMON_WRITE_FUZZ_SEEDS=1 rewrites it");
        for (name, bytes) in &seeds {
            let stored = std::fs::read(dir.join(name)).unwrap();
            assert!(
                stored == *bytes,
                "fuzz/seeds/{target}/{name} is stale; RESMON_WRITE_FUZZ_SEEDS=1 rewrites it"
            );
        }
    }
}

// ----------------------------------------------- randomised lines in-process

/// splitmix64: small, seeded, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

/// Replacement values for type swaps: every JSON type, and edges of each.
fn odd_value(rng: &mut Rng) -> Value {
    match rng.below(16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(0),
        4 => json!(u64::MAX),
        5 => json!(i64::MIN),
        6 => json!(1.5),
        7 => json!(""),
        8 => json!("x".repeat(rng.below(300))),
        9 => json!([]),
        10 => json!({}),
        11 => json!([1, "a", null]),
        12 => json!({"a": {"b": [1]}}),
        13 => json!("\u{0}\u{7f}\u{fffd}é"),
        14 => json!(-0.0),
        _ => json!(1e300),
    }
}

/// Every path to a value inside `value` (object members and array items).
fn paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                prefix.push(key.clone());
                out.push(prefix.clone());
                paths(inner, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                prefix.push(format!("#{index}"));
                out.push(prefix.clone());
                paths(inner, prefix, out);
                prefix.pop();
            }
        }
        _ => (),
    }
}

fn at_path<'v>(value: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    let mut node = value;
    for step in path {
        node = match step.strip_prefix('#') {
            Some(index) => node.as_array_mut()?.get_mut(index.parse::<usize>().ok()?)?,
            None => node.as_object_mut()?.get_mut(step)?,
        };
    }
    Some(node)
}

/// One structural mutation on parsed JSON: swap a value's type, drop a
/// member, or add one.
fn mutate_value(rng: &mut Rng, value: &mut Value) {
    let mut all = Vec::new();
    paths(value, &mut Vec::new(), &mut all);
    if all.is_empty() {
        *value = odd_value(rng);
        return;
    }
    let path = all[rng.below(all.len())].clone();
    match rng.below(4) {
        0 | 1 => {
            if let Some(node) = at_path(value, &path) {
                *node = odd_value(rng);
            }
        }
        2 => {
            let (last, parent) = path.split_last().unwrap();
            if let Some(Value::Object(map)) = at_path(value, parent) {
                map.shift_remove(last);
            }
        }
        _ => {
            let keys =
                ["id", "method", "params", "jsonrpc", "name", "arguments", "_meta", "cursor", "limit", "x"];
            let key = keys[rng.below(keys.len())];
            let (_, parent) = path.split_last().unwrap();
            if let Some(Value::Object(map)) = at_path(value, parent) {
                map.insert(key.to_string(), odd_value(rng));
            }
        }
    }
}

/// Byte-level fragments worth splicing in.
const FRAGMENTS: [&[u8]; 16] = [
    b"[",
    b"{",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"1e999",
    b"-0",
    b"18446744073709551616",
    b"\0",
    b"\xff",
    b"\xc3",
    b"\r",
    b",",
    b":",
    b"null",
];

/// One mutation of a seed line. `seeds` supplies splice partners.
fn mutate(rng: &mut Rng, line: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = line.to_vec();
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        match rng.below(9) {
            // Flip a bit, or set a random byte.
            0 if !bytes.is_empty() => {
                let at = rng.below(bytes.len());
                bytes[at] ^= 1 << rng.below(8);
            }
            1 if !bytes.is_empty() => {
                let at = rng.below(bytes.len());
                bytes[at] = rng.next() as u8;
            }
            // Truncate.
            2 if !bytes.is_empty() => bytes.truncate(rng.below(bytes.len())),
            // Splice: this line's head, another seed's tail.
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                let cut = if bytes.is_empty() { 0 } else { rng.below(bytes.len()) };
                let from = if other.is_empty() { 0 } else { rng.below(other.len()) };
                bytes.truncate(cut);
                bytes.extend_from_slice(&other[from..]);
            }
            // Insert a fragment, sometimes many times over (deep nesting).
            4 => {
                let fragment = FRAGMENTS[rng.below(FRAGMENTS.len())];
                let times = if rng.chance(8) { 1 + rng.below(2000) } else { 1 };
                let at = rng.below(bytes.len() + 1);
                let insert: Vec<u8> = fragment.repeat(times);
                bytes.splice(at..at, insert);
            }
            // Duplicate a key right after the opening brace.
            5 => {
                if let Some(at) = bytes.iter().position(|&b| b == b'{') {
                    let duplicates: [&[u8]; 5] = [
                        b"\"id\":\"dup\",",
                        b"\"method\":\"ping\",",
                        b"\"jsonrpc\":\"1.0\",",
                        b"\"params\":[],",
                        b"\"name\":\"health\",",
                    ];
                    let duplicate = duplicates[rng.below(duplicates.len())];
                    bytes.splice(at + 1..at + 1, duplicate.iter().copied());
                }
            }
            // Type swap (or drop or add) on the parsed structure.
            6 | 7 => {
                if let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) {
                    mutate_value(rng, &mut value);
                    bytes = value.to_string().into_bytes();
                }
            }
            // Duplicate a slice of the line in place.
            _ if !bytes.is_empty() => {
                let from = rng.below(bytes.len());
                let to = (from + 1 + rng.below(64)).min(bytes.len());
                let copy = bytes[from..to].to_vec();
                bytes.splice(to..to, copy);
            }
            _ => bytes.push(b'}'),
        }
    }
    bytes
}

/// The rule refuses each way an answer can be wrong, so the randomised
/// test and the fuzz target that lean on it can fail.
#[test]
fn the_line_rule_refuses_every_wrong_answer() {
    let ping = br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
    let notification = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let good = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
    assert_eq!(line_rule::check_answer(ping, Some(good)), Ok(()));
    assert_eq!(line_rule::check_answer(notification, None), Ok(()));
    assert_eq!(line_rule::check_answer(b"  \r", None), Ok(()));
    let wrong: [(&[u8], Option<&str>); 9] = [
        (ping, None),
        (notification, Some(good)),
        (ping, Some("{\"jsonrpc\":\"2.0\",\n\"id\":7,\"result\":{}}")),
        (ping, Some("not json")),
        (ping, Some(r#"{"jsonrpc":"1.0","id":7,"result":{}}"#)),
        (ping, Some(r#"{"jsonrpc":"2.0","id":7,"result":[]}"#)),
        (ping, Some(r#"{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}"#)),
        (ping, Some(r#"{"jsonrpc":"2.0","id":7,"error":{"code":"1","message":"x"}}"#)),
        (ping, Some(r#"{"jsonrpc":"2.0","id":"7","result":{}}"#)),
    ];
    for (line, answer) in wrong {
        assert!(line_rule::check_answer(line, answer).is_err(), "{answer:?} passed for {line:?}");
    }
    // An id of no usable type is answered with null, and only with null.
    let float_id = br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#;
    let null_answer = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#;
    assert_eq!(line_rule::check_answer(float_id, Some(null_answer)), Ok(()));
    assert!(line_rule::check_answer(float_id, Some(&null_answer.replace("null", "1.5"))).is_err());
}

#[test]
fn randomised_mutated_lines_each_get_a_well_formed_answer_or_none() {
    let count: usize =
        std::env::var("RESMON_RANDOM_LINES").ok().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let seed: u64 =
        std::env::var("RESMON_RANDOM_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(0x7e57_5eed);
    let seeds: Vec<Vec<u8>> = seed_lines().into_iter().map(|(_, bytes)| bytes).collect();
    // No port named anywhere: a tool call fails at discovery, before any network.
    let mut server = Server::new(Backend::new(Environment::default(), Duration::from_millis(200)), false);
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut answered = 0usize;
    let mut silent = 0usize;
    let started = Instant::now();
    for index in 0..count {
        let base = &seeds[rng.below(seeds.len())];
        let line = if index < seeds.len() { seeds[index].clone() } else { mutate(&mut rng, base, &seeds) };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.handle_line(&line)));
        let verdict = match outcome {
            Ok(answer) => {
                if answer.is_some() {
                    answered += 1
                } else {
                    silent += 1
                }
                line_rule::check_answer(&line, answer.as_deref())
            }
            Err(_) => Err("panicked".into()),
        };
        if let Err(why) = verdict {
            failures.push(format!(
                "line {index} ({why}): {}",
                String::from_utf8_lossy(&line[..line.len().min(300)])
            ));
            if failures.len() >= 20 {
                break;
            }
        }
    }
    let elapsed = started.elapsed();
    eprintln!(
        "{count} lines (seed {seed:#x}) in {elapsed:?}: {answered} answered, {silent} needing no answer, {} failures",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(answered > count / 2 && silent > 0, "the mutations are not reaching both paths");
}

// ------------------------------------------------ fuzzing findings (docs/fuzzing.md)

/// Found by the arguments target on its first run: an argument whose name
/// is the empty string. The server was right (it refuses `""` by name); the
/// target's own rule had wrongly required a non-empty name. Kept so the
/// refusal stays exact for odd names.
#[test]
fn an_argument_named_by_the_empty_string_is_refused_by_that_name() {
    let mut backend = Backend::new(Environment::default(), Duration::from_millis(200));
    for (tool, arguments) in
        [("list_executions", json!({"": 7, "limit": [1]})), ("list_sources", json!({"": null}))]
    {
        let error = resmon_mcp::tools::call(&mut backend, tool, &arguments, &Default::default(), false)
            .unwrap()
            .unwrap_err();
        assert_eq!(error.code.as_str(), "invalid_argument", "{tool}");
        assert_eq!(error.detail["argument"], "", "{tool}: {}", error.to_json());
    }
}
