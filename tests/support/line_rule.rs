//! What every line handed to the server must get back, judged from the line
//! alone and never from the server's own code. The randomised line test
//! (tests/it/hostile.rs) and the `line` fuzz target (fuzz/fuzz_targets/line.rs)
//! both include this file by `#[path]`, so the two hold the server to the
//! same rule. It needs nothing but serde_json.

use serde_json::Value;

/// Ok when `answer` is what `line` must get; otherwise what is wrong.
///
/// A blank line, a notification and a response get no answer. Anything else
/// gets one JSON-RPC answer on one line: `jsonrpc` "2.0", exactly one of
/// `result` (an object) and `error` (an integer code and a string message),
/// and the line's own id when it held a usable one (a string or an integer),
/// null otherwise.
pub fn check_answer(line: &[u8], answer: Option<&str>) -> Result<(), String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    let object = parsed.as_ref().and_then(Value::as_object);
    let silent = line.iter().all(u8::is_ascii_whitespace)
        || object.is_some_and(|message| {
            let has_method = message.contains_key("method");
            let has_id = message.contains_key("id");
            let notification = has_method && !has_id;
            let response =
                !has_method && has_id && (message.contains_key("result") || message.contains_key("error"));
            notification || response
        });
    let Some(answer) = answer else {
        return if silent { Ok(()) } else { Err("no answer to a line that needs one".into()) };
    };
    if silent {
        return Err(format!("an answer to a line that needs none: {}", clip(answer)));
    }
    if answer.contains('\n') {
        return Err("the answer spans lines".into());
    }
    let reply: Value =
        serde_json::from_str(answer).map_err(|error| format!("the answer is not JSON ({error})"))?;
    let reply = reply.as_object().ok_or("the answer is not an object")?;
    if reply.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("jsonrpc is not 2.0".into());
    }
    match (reply.get("result"), reply.get("error")) {
        (Some(result), None) if result.is_object() => (),
        (None, Some(error)) if error["code"].is_i64() && error["message"].is_string() => (),
        (None, Some(error)) => return Err(format!("a malformed error object: {error}")),
        _ => return Err("not exactly one of result and error (an object)".into()),
    }
    let want = match object.and_then(|message| message.get("id")) {
        Some(id) if id.is_string() || id.is_i64() || id.is_u64() => id.clone(),
        _ => Value::Null,
    };
    if reply.get("id") != Some(&want) {
        return Err(format!("the id is {:?}, where the rule wants {want}", reply.get("id")));
    }
    Ok(())
}

fn clip(text: &str) -> String {
    text.chars().take(300).collect()
}
