//! Keeps the local API token out of every byte this process writes.
//!
//! Contract 1.0 "The local API token": tool results and relayed errors are
//! scrubbed of the token. Rather than trusting every code path to avoid it,
//! each token this process has ever read is remembered here, and the two
//! writers (the protocol stream and stderr) pass their text through `scrub`.
//! Tokens are URL-safe base64, which JSON never escapes, so a plain substring
//! replacement over serialised JSON is complete.

use std::borrow::Cow;
use std::sync::Mutex;

static KNOWN_TOKENS: Mutex<Vec<String>> = Mutex::new(Vec::new());

pub(crate) const REDACTED: &str = "[redacted]";

/// Remembers a token so that it is removed from all later output. A token
/// stays remembered after the backend restarts: an old token is still a secret.
pub(crate) fn remember(token: &str) {
    if token.is_empty() {
        return;
    }
    let mut tokens = KNOWN_TOKENS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !tokens.iter().any(|known| known == token) {
        tokens.push(token.to_string());
    }
}

/// The shortest piece of a token that is taken out when it appears on its
/// own: resmon's answer might quote a token cut short, and 12 characters of
/// URL-safe base64 (72 bits) do not turn up in other text by chance.
const FRAGMENT: usize = 12;

pub fn scrub(text: &str) -> Cow<'_, str> {
    let tokens = KNOWN_TOKENS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut out = Cow::Borrowed(text);
    for token in tokens.iter() {
        if out.contains(token.as_str()) {
            out = Cow::Owned(out.replace(token.as_str(), REDACTED));
        }
    }
    match without_fragments(&out, &tokens) {
        Some(scrubbed) => Cow::Owned(scrubbed),
        None => out,
    }
}

/// `text` with every run of token characters that holds a piece of a known
/// token (`FRAGMENT` characters or more) replaced; `None` when there is none.
fn without_fragments(text: &str, tokens: &[String]) -> Option<String> {
    if tokens.is_empty() {
        return None;
    }
    let is_token_byte = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_';
    let holds_fragment = |run: &[u8]| {
        run.windows(FRAGMENT).any(|piece| {
            tokens.iter().any(|token| token.as_bytes().windows(FRAGMENT).any(|part| part == piece))
        })
    };
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut start = 0;
    while start < bytes.len() {
        if !is_token_byte(bytes[start]) {
            start += 1;
            continue;
        }
        let end =
            bytes[start..].iter().position(|byte| !is_token_byte(*byte)).map_or(bytes.len(), |at| start + at);
        if end - start >= FRAGMENT && holds_fragment(&bytes[start..end]) {
            let scrubbed = out.get_or_insert_with(String::new);
            scrubbed.push_str(&text[copied..start]);
            scrubbed.push_str(REDACTED);
            copied = end;
        }
        start = end;
    }
    out.map(|mut scrubbed| {
        scrubbed.push_str(&text[copied..]);
        scrubbed
    })
}

/// Writes one diagnostic line to stderr, scrubbed. Failures to write are
/// ignored: a closed stderr must never take the server down.
pub fn log(message: &str) {
    use std::io::Write;
    let line = format!("resmon-mcp: {}\n", scrub(message));
    let _ = std::io::stderr().write_all(line.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_tokens_are_replaced_everywhere() {
        let token = "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4";
        assert_eq!(scrub(&format!("a {token} b {token}")), format!("a {token} b {token}"));
        remember(token);
        assert_eq!(scrub(&format!("a {token} b {token}")), "a [redacted] b [redacted]");
        assert_eq!(scrub("nothing secret"), "nothing secret");
    }

    /// A token cut short, or a piece of one inside a longer word, is taken
    /// out with the run of token characters that holds it.
    #[test]
    fn a_piece_of_a_remembered_token_is_replaced_too() {
        let token = "cGllY2Vvb2ZhdG9rZW5jdXRzaG9ydGZvcnRoZXRlc3Q";
        remember(token);
        assert_eq!(scrub(&format!("bad token {}…", &token[..30])), "bad token [redacted]…");
        assert_eq!(scrub(&format!("x=abc{}def.", &token[10..24])), "x=[redacted].");
        assert_eq!(scrub(&format!("short {}", &token[..11])), format!("short {}", &token[..11]));
        assert_eq!(
            scrub("get_execution_results and list_watch_profiles"),
            "get_execution_results and list_watch_profiles"
        );
    }
}
