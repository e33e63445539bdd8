//! Argument validation: `args::validate` against each tool's own input
//! schema, then `tools::call` (validation, the read-only gate and the
//! handler's own checks) with a backend that has no port named.
//!
//! Input: a tool name, a newline, the arguments as JSON. A name that is no
//! tool picks one by its length, so mutated names still reach a tool.
//! Rules: validation refuses only with invalid_argument naming an argument;
//! a call the schema refuses, or whose text gives a key twice, is refused
//! by `tools::call` with that same error; nothing is ever answered without a backend; the only codes are
//! invalid_argument and backend_unavailable (nothing else can happen before
//! a request); and every error serialises.
#![no_main]

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use resmon_mcp::backend::Backend;
use resmon_mcp::discovery::Environment;
use resmon_mcp::error::{Code, ToolError};
use resmon_mcp::{args, tools};
use serde_json::Value;

fn backend() -> &'static Mutex<Backend> {
    static BACKEND: OnceLock<Mutex<Backend>> = OnceLock::new();
    BACKEND.get_or_init(|| Mutex::new(Backend::new(Environment::default(), Duration::from_millis(200))))
}

fn schemas() -> &'static [Value] {
    static SCHEMAS: OnceLock<Vec<Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| tools::TOOLS.iter().map(|tool| (tool.input_schema)()).collect())
}

/// `detail.argument` is a string (it may be empty: `{"": 1}` names the
/// argument called "").
fn names_an_argument(error: &ToolError) -> bool {
    error.detail.get("argument").is_some_and(Value::is_string)
}

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&byte| byte == b'\n').unwrap_or(data.len());
    let (name, rest) = (&data[..split], data.get(split + 1..).unwrap_or(&[]));
    let Ok(arguments) = serde_json::from_slice::<Value>(rest) else { return };
    let index = tools::TOOLS
        .iter()
        .position(|tool| tool.name.as_bytes() == name)
        .unwrap_or(name.len() % tools::TOOLS.len());
    let tool = tools::TOOLS[index];

    let repeats = args::Repeats::in_object(rest);
    let verdict = args::refuse_repeats(&repeats).and_then(|()| args::validate(&schemas()[index], &arguments));
    if let Err(error) = &verdict {
        assert_eq!(error.code, Code::InvalidArgument, "{error}");
        assert!(names_an_argument(error), "a refusal naming no argument: {}", error.to_json());
    }

    let mut backend = backend().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let result = tools::call(&mut backend, tool.name, &arguments, &repeats, false).expect("a listed tool");
    let error = match result {
        Ok(answer) => panic!("{} answered without a backend: {answer}", tool.name),
        Err(error) => error,
    };
    let payload = error.to_json().to_string();
    assert!(serde_json::from_str::<Value>(&payload).is_ok());
    match (&verdict, error.code) {
        (Err(refused), _) => {
            assert_eq!(refused.code, error.code);
            assert_eq!(refused.detail.get("argument"), error.detail.get("argument"));
        }
        (Ok(()), Code::InvalidArgument) => {
            assert!(names_an_argument(&error), "a refusal naming no argument: {payload}")
        }
        (Ok(()), Code::BackendUnavailable) => (),
        (Ok(()), code) => panic!("{} answered {code:?} before any request: {payload}", tool.name),
    }

    // A read-only session refuses every write before looking at its arguments.
    if tool.requires_confirmation {
        let refused =
            tools::call(&mut backend, tool.name, &arguments, &repeats, true).expect("a listed tool");
        let refused = refused.expect_err("a write in a read-only session");
        assert_eq!(refused.code, Code::InvalidArgument);
        assert_eq!(refused.detail.get("read_only"), Some(&Value::Bool(true)));
    }
});
