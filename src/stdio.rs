//! The stdio transport: read one line, hand it to the protocol, write the
//! one line it answers, flush, and go on until stdin ends. Kept apart from
//! `protocol.rs`, which holds JSON-RPC and the MCP methods and never touches
//! a stream. Lines are read with a bound, so a huge or endless line is
//! answered and skipped without ever being held whole in memory.

use std::io::{self, BufRead, Write};

use serde_json::Value;

use crate::protocol::{INVALID_REQUEST, Server, echo_id, error_line, internal_tool_error, rpc_error};
use crate::redact;

/// Longest request line accepted; a longer one is answered and skipped
/// without ever being held whole in memory.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What reading one line produced.
enum Line {
    Eof,
    Complete,
    /// Longer than `MAX_LINE_BYTES`: the rest was skipped unread.
    TooLong,
}

/// Reads up to the next newline into `buf`, keeping at most `MAX_LINE_BYTES`.
fn read_line(input: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(match (read_any, too_long) {
                (false, _) => Line::Eof,
                (true, true) => Line::TooLong,
                (true, false) => Line::Complete,
            });
        }
        read_any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(newline) => (&available[..newline], newline + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if buf.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                buf.clear();
                buf.shrink_to(64 * 1024);
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        input.consume(used);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Complete });
        }
    }
}

/// `handle_line`, with a panic turned into an internal error so that one bad
/// message can never end the session. (The panic hook set in main has
/// already written one scrubbed line to stderr.)
fn handle_guarded(server: &mut Server, line: &[u8]) -> Option<String> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.handle_line(line)));
    outcome.unwrap_or_else(|_| panic_reply(line))
}

/// The reply to a request whose handling panicked: addressed to the
/// request's own id, so that the client is not left waiting for an answer
/// that never comes. A notification still gets no reply.
fn panic_reply(line: &[u8]) -> Option<String> {
    let message: Value = serde_json::from_slice(line.strip_suffix(b"\r").unwrap_or(line)).ok()?;
    let id = echo_id(Some(message.get("id")?));
    // A tool call is answered as a tool error, as every other failure of a
    // tool is (contract 1.0 "Error model"), so the model reads a sentence.
    if message.get("method").and_then(Value::as_str) == Some("tools/call") {
        let params = message.get("params").unwrap_or(&Value::Null);
        return Some(internal_tool_error(&id, params));
    }
    Some(error_line(&id, rpc_error(-32603, "Internal error: this request could not be handled.")))
}

/// The stdio loop: read a line, answer it, flush. Returns on EOF. A closed
/// stdout (the client went away) ends the loop quietly as well.
pub fn serve(server: &mut Server, input: &mut dyn BufRead, output: &mut dyn Write) -> io::Result<()> {
    let mut buf = Vec::with_capacity(8 * 1024);
    loop {
        let reply = match read_line(input, &mut buf)? {
            Line::Eof => return Ok(()),
            Line::Complete => handle_guarded(server, &buf),
            Line::TooLong => Some(error_line(
                &Value::Null,
                rpc_error(
                    INVALID_REQUEST,
                    format!(
                        "Invalid request: the message is longer than {} MiB and was skipped.",
                        MAX_LINE_BYTES >> 20
                    ),
                ),
            )),
        };
        if buf.capacity() > 256 * 1024 {
            // A large request once should not keep its buffer for the session.
            buf = Vec::with_capacity(8 * 1024);
        }
        if let Some(mut line) = reply {
            // The newline goes into the reply's spare room rather than into
            // a copy of it (the listing alone is 38 KB).
            line.push('\n');
            let scrubbed = redact::scrub(&line);
            match output.write_all(scrubbed.as_bytes()).and_then(|()| output.flush()) {
                Ok(()) => (),
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
                Err(error) => return Err(error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_request_is_answered_to_its_own_id() {
        // A tool call gets a tool error, which a harness shows its model.
        let reply = panic_reply(br#"{"jsonrpc":"2.0","id":"abc","method":"tools/call"}"#).unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["id"], "abc");
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        assert!(reply["result"]["content"][0]["text"].as_str().unwrap().starts_with("internal_error: "));
        // Any other request gets JSON-RPC's internal error.
        let reply = panic_reply(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#).unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], -32603);
        assert!(panic_reply(br#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_none());
    }
}
