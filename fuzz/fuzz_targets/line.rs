//! The line handler: the function the stdio loop calls for every line, with
//! a backend that has no port named (so a tool call ends at discovery and
//! nothing touches the network). Each input is split into lines as the loop
//! splits stdin; every line must get one well-formed JSON-RPC answer, or
//! none when it needs none, and must not panic.
#![no_main]

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use resmon_mcp::backend::Backend;
use resmon_mcp::discovery::Environment;
use resmon_mcp::protocol::Server;
use serde_json::Value;

fn server() -> &'static Mutex<Server> {
    static SERVER: OnceLock<Mutex<Server>> = OnceLock::new();
    SERVER.get_or_init(|| {
        Mutex::new(Server::new(Backend::new(Environment::default(), Duration::from_millis(200)), false))
    })
}

fuzz_target!(|data: &[u8]| {
    let mut server = server().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for line in data.split(|&byte| byte == b'\n') {
        let answer = server.handle_line(line);
        check(line, answer.as_deref());
    }
});

/// The rule, judged from the line alone: blank lines, notifications and
/// responses get nothing; anything else one JSON-RPC answer on one line,
/// result xor error, echoing a string or integer id and null otherwise.
fn check(line: &[u8], answer: Option<&str>) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    let object = parsed.as_ref().and_then(Value::as_object);
    let silent = line.iter().all(u8::is_ascii_whitespace)
        || object.is_some_and(|message| {
            let has_method = message.contains_key("method");
            let has_id = message.contains_key("id");
            (has_method && !has_id)
                || (!has_method
                    && has_id
                    && (message.contains_key("result") || message.contains_key("error")))
        });
    let Some(answer) = answer else {
        assert!(silent, "no answer to a line that needs one");
        return;
    };
    assert!(!silent, "an answer to a line that needs none: {answer}");
    assert!(!answer.contains('\n'), "an answer spanning lines");
    let reply: Value = serde_json::from_str(answer).expect("the answer is JSON");
    let reply = reply.as_object().expect("the answer is an object");
    assert_eq!(reply.get("jsonrpc"), Some(&Value::from("2.0")));
    match (reply.get("result"), reply.get("error")) {
        (Some(result), None) => assert!(result.is_object(), "a result that is not an object"),
        (None, Some(error)) => {
            assert!(error["code"].is_i64() && error["message"].is_string(), "a malformed error: {error}")
        }
        _ => panic!("not exactly one of result and error: {answer}"),
    }
    let want = match object.and_then(|message| message.get("id")) {
        Some(id) if id.is_string() || id.is_i64() || id.is_u64() => id.clone(),
        _ => Value::Null,
    };
    assert_eq!(reply.get("id"), Some(&want), "the id was not echoed by the rule");
}
