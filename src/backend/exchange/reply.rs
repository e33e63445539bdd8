//! What resmon answered, before any judgement of it: the `Reply` of one
//! exchange (status, headers, body, and where the request's fields came
//! from), the `Method` it was sent with, and the reading of its body as
//! JSON or text, with the one error a body that cannot be read gives.
//!
//! It owns the reading of a body and nothing else: it never sends, never
//! judges a status (a non-2xx answer is `refusal`'s to read) and keeps no
//! state.

use serde_json::{Value, json};

use crate::backend::{WriteCheck, unexpected_shape};
use crate::error::{Code, ToolError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Put,
}

impl Method {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

/// What resmon answered, before any judgement about it.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub bytes: Vec<u8>,
    pub route: String,
    /// The release the answering resmon reported in its health answer.
    pub backend_version: Option<String>,
    /// Query and body fields of the request that this server chose rather
    /// than took from the caller's arguments (contract-notes 17).
    pub server_chosen: Vec<String>,
    /// Fields of the request that carry the caller's arguments, each with
    /// the values it sent (contract-notes 17).
    pub caller_supplied: Vec<CallerField>,
    /// The caller's values that the tool's own schema offers, with what the
    /// request carried for each (contract-notes 17).
    pub offered: Vec<Offered>,
    /// For a request that could have changed resmon (`Backend::may_change`),
    /// what it would have done and the read that shows it; `None` for a read.
    pub write: Option<WriteCheck>,
}

/// A request field that carries the caller's argument: its whole path
/// (`parameters.entity`, and each key inside an object the caller gave, such
/// as `parameters.entity.mode` or `settings.ai_model`), and the values it
/// sent that no field this server chose also sent, so that a refusal quoting
/// one of them is about what the caller asked for (contract-notes 17).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CallerField {
    pub path: String,
    /// Its strings and numbers as text, at any depth.
    pub values: Vec<String>,
}

impl From<&str> for CallerField {
    /// A field known by its path alone, as a unit test names one.
    fn from(path: &str) -> CallerField {
        CallerField { path: path.to_string(), values: Vec::new() }
    }
}

/// A value the caller gave that the tool's own input schema offers in an
/// `enum`: a refusal of it as unknown is the release's limitation, not the
/// caller's mistake (contract-notes 17).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offered {
    /// The tool's argument, as the caller named it.
    pub argument: String,
    /// The value the caller gave.
    pub value: String,
    /// The request fields that carry it (empty when it travels in the path).
    pub fields: Vec<String>,
    /// What those fields held in the request sent (it may be the value
    /// under another name, such as `mode: semantic` sent as a sort).
    pub sent: Vec<String>,
    /// The schema's other values for the argument: a refusal that lists
    /// some of them as what it accepts is refusing this one.
    pub choices: Vec<String>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON. A body that is not JSON is an upstream error whose
    /// message never repeats the body (contract-notes 5).
    pub(crate) fn json(&self) -> Result<Value, ToolError> {
        self.read()
    }

    /// The body read straight into a type that borrows from it, such as a
    /// loose row (tools/loose.rs), with the same error as `json` when it
    /// cannot be read. The body must be UTF-8 throughout, as JSON text is,
    /// even where a loose row skips a field without decoding it.
    pub(crate) fn read<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, ToolError> {
        self.read_with(std::marker::PhantomData::<T>)
    }

    /// `read` with a seed: a reader that needs to know something before it
    /// reads, such as which rows of a list to build (`loose::Window`).
    pub(crate) fn read_with<'a, S: serde::de::DeserializeSeed<'a>>(
        &'a self,
        seed: S,
    ) -> Result<S::Value, ToolError> {
        let not_json = || {
            let mut error = ToolError::new(
                Code::UpstreamError,
                format!("resmon answered {} with {}.", self.route, self.unreadable_body()),
            )
            .with_detail("status", json!(self.status))
            .with_detail("route", json!(self.route));
            if let Some(encoding) = self.foreign_encoding() {
                error = error.with_detail("content_encoding", json!(encoding));
            }
            error
        };
        let text = std::str::from_utf8(&self.bytes).map_err(|_| not_json())?;
        let mut reader = serde_json::Deserializer::from_str(text);
        // `end` refuses anything but whitespace after the value.
        seed.deserialize(&mut reader).and_then(|value| reader.end().map(|()| value)).map_err(|_| not_json())
    }

    /// Why the body could not be read as JSON, as the end of "resmon
    /// answered … with …": an empty body is said as empty, and a body in a
    /// Content-Encoding this server does not read (it asks for none) is
    /// named by it, so neither is mistaken for a broken JSON text.
    pub(crate) fn unreadable_body(&self) -> String {
        if let Some(encoding) = self.foreign_encoding() {
            return format!(
                "a body in the `{encoding}` content encoding, which this server does not read (it asks \
                 for none)"
            );
        }
        if self.bytes.iter().all(u8::is_ascii_whitespace) {
            return format!("an empty body (status {}) where JSON was expected", self.status);
        }
        "a body that is not JSON".to_string()
    }

    /// The answer's Content-Encoding, when it names one other than
    /// `identity` (none is asked for, and none is decoded).
    fn foreign_encoding(&self) -> Option<String> {
        let encoding = self.header("content-encoding")?.trim();
        let printable: String =
            encoding.chars().filter(|c| c.is_ascii_graphic() || *c == ' ').take(40).collect();
        (!printable.is_empty() && !printable.eq_ignore_ascii_case("identity")).then_some(printable)
    }

    /// The body as JSON, required to be an object.
    pub(crate) fn json_object(&self) -> Result<Value, ToolError> {
        let value = self.json()?;
        if value.is_object() { Ok(value) } else { Err(unexpected_shape(&self.route, "an object")) }
    }

    pub(crate) fn text(&self) -> Result<String, ToolError> {
        String::from_utf8(self.bytes.clone()).map_err(|_| {
            ToolError::new(
                Code::UpstreamError,
                format!("resmon answered {} with text that is not UTF-8.", self.route),
            )
            .with_detail("route", json!(self.route))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::reply;

    #[test]
    fn a_body_is_read_only_when_it_is_one_json_text_in_utf8() {
        let read = |bytes: &[u8]| {
            let mut reply = reply(200, "application/json", "");
            reply.bytes = bytes.to_vec();
            reply.read::<serde::de::IgnoredAny>().map(|_| ()).map_err(|error| error.message)
        };
        assert_eq!(read(b" {\"a\": [1, \"x\"]} \n"), Ok(()));
        for broken in [&b"{} x"[..], b"{}{}", b"[1,]", b"{\"a\": \"\xff\"}", b"\xef\xbb\xbf{}"] {
            let message = read(broken).unwrap_err();
            assert!(message.contains("with a body that is not JSON"), "{broken:?}: {message}");
        }
        // An empty body is said as empty, not as broken JSON.
        for empty in [&b""[..], b" \r\n"] {
            let message = read(empty).unwrap_err();
            assert!(message.contains("with an empty body (status 200) where JSON was expected"), "{message}");
        }
    }

    #[test]
    fn a_body_in_an_encoding_this_server_does_not_read_is_named() {
        let mut encoded = reply(200, "application/json", "\u{1f}\u{8b}binary");
        encoded.headers.push(("Content-Encoding".into(), "gzip".into()));
        let error = encoded.json().unwrap_err();
        assert!(
            error
                .message
                .contains("with a body in the `gzip` content encoding, which this server does not read"),
            "{}",
            error.message
        );
        assert_eq!(error.detail["content_encoding"], json!("gzip"));
        let mut plain = reply(200, "application/json", "{}");
        plain.headers.push(("content-encoding".into(), "identity".into()));
        assert!(plain.json().is_ok());
    }

    #[test]
    fn a_non_json_body_is_an_upstream_error_that_does_not_repeat_it() {
        let error = reply(200, "application/json", "<html>oops</html>").json().unwrap_err();
        assert_eq!(error.code, Code::UpstreamError);
        assert!(!error.message.contains("oops"));
        let array = reply(200, "application/json", "[1,2]").json_object().unwrap_err();
        assert_eq!(array.code, Code::UpstreamError);
    }
}
