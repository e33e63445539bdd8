//! The one error a tool can answer with, shaped as contract 1.0 "Error model" asks:
//! `{"error": <code>, "message": <sentence>, "detail": {...}}`.
//!
//! Everything that goes wrong after a tool has been chosen becomes a `ToolError`;
//! the protocol layer turns it into a `tools/call` result with `isError: true`.

use serde_json::{Map, Value, json};

/// The machine codes of contract 1.0 "Error model". Nothing else is ever emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    BackendUnavailable,
    NotFound,
    InvalidArgument,
    Conflict,
    UpstreamError,
    InternalError,
    InstanceMismatch,
    IdentityUnavailable,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::BackendUnavailable => "backend_unavailable",
            Code::NotFound => "not_found",
            Code::InvalidArgument => "invalid_argument",
            Code::Conflict => "conflict",
            Code::UpstreamError => "upstream_error",
            Code::InternalError => "internal_error",
            Code::InstanceMismatch => "instance_mismatch",
            Code::IdentityUnavailable => "identity_unavailable",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ToolError {
    pub code: Code,
    pub message: String,
    pub detail: Map<String, Value>,
    /// Fields the contract places beside `error` rather than inside `detail`
    /// (`tried`, `no_port_named` on backend_unavailable).
    pub top_level: Map<String, Value>,
}

pub(crate) type ToolResult = Result<Value, ToolError>;

impl ToolError {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> ToolError {
        ToolError { code, message: message.into(), detail: Map::new(), top_level: Map::new() }
    }

    pub(crate) fn invalid_argument(argument: &str, message: impl Into<String>) -> ToolError {
        ToolError::new(Code::InvalidArgument, message).with_detail("argument", json!(argument))
    }

    pub(crate) fn with_detail(mut self, key: &str, value: Value) -> ToolError {
        self.detail.insert(key.to_string(), value);
        self
    }

    pub(crate) fn with_top_level(mut self, key: &str, value: Value) -> ToolError {
        self.top_level.insert(key.to_string(), value);
        self
    }

    /// This error with `other`'s detail and top-level fields added where
    /// this one has none of the same name.
    pub(crate) fn merged(mut self, other: ToolError) -> ToolError {
        for (key, value) in other.detail {
            self.detail.entry(key).or_insert(value);
        }
        for (key, value) in other.top_level {
            self.top_level.entry(key).or_insert(value);
        }
        self
    }

    /// The payload a caller sees. `error`, `message` and `detail` always come first.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("error".into(), json!(self.code.as_str()));
        out.insert("message".into(), json!(self.message));
        out.insert("detail".into(), Value::Object(self.detail.clone()));
        for (key, value) in &self.top_level {
            out.insert(key.clone(), value.clone());
        }
        Value::Object(out)
    }
}

/// A message up to its first sentence's end (a full stop followed by a
/// space or the end): what happened, without the advice written after it
/// for another situation.
pub(crate) fn first_sentence(message: &str) -> &str {
    let bytes = message.as_bytes();
    for (index, byte) in bytes.iter().enumerate() {
        if *byte == b'.' && bytes.get(index + 1).is_none_or(|next| *next == b' ') {
            return &message[..=index];
        }
    }
    message
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}
