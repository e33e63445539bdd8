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

pub fn scrub(text: &str) -> Cow<'_, str> {
    let tokens = KNOWN_TOKENS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut out = Cow::Borrowed(text);
    for token in tokens.iter() {
        if out.contains(token.as_str()) {
            out = Cow::Owned(out.replace(token.as_str(), REDACTED));
        }
    }
    out
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
}
