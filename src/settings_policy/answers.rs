//! The answer-side rule (contract-notes 13): which keys of resmon's, in the
//! parts of an answer passed through untyped, hold a credential, and which
//! stretches of its free text are one. It is exact on purpose: a name is
//! judged by its last words, never by a credential word found anywhere in
//! it, so resmon's `authorships`, `max_tokens` or `sort_key` come through
//! as data. The refusal of a requested settings key is another rule, wider
//! on purpose (`settings_policy::credential_word`, contract-notes 11): there
//! a name is only a name, and refusing too much costs nothing.

use serde_json::{Value, json};

use super::words_of;

/// Last words that make a name hold a credential (`smtp_password`,
/// `webhook_token`, `x-apikey`, `client_secrets`, `smtp_passwd`). `tokens`
/// is not one: `max_tokens` counts a model's tokens.
const LAST_WORDS: [&str; 13] = [
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "pwd",
    "passphrase",
    "passphrases",
    "credential",
    "credentials",
    "token",
    "apikey",
    "apikeys",
];

/// Last two words that make a name hold a credential (`openai_api_key`,
/// `refreshToken`, `api_keys`); `key` alone after another word is judged by
/// its value.
const LAST_TWO_WORDS: [[&str; 2]; 16] = [
    ["api", "key"],
    ["api", "keys"],
    ["access", "key"],
    ["access", "keys"],
    ["private", "key"],
    ["private", "keys"],
    ["secret", "key"],
    ["secret", "keys"],
    ["access", "token"],
    ["access", "tokens"],
    ["refresh", "token"],
    ["refresh", "tokens"],
    ["auth", "token"],
    ["auth", "tokens"],
    ["bearer", "token"],
    ["bearer", "tokens"],
];

/// Last words that say only how a value is written down: a name ending in
/// one is judged by the words before it, so `client_secret_b64`,
/// `private_key_pem` and `openai_api_key_value` hold what `client_secret`,
/// `private_key` and `openai_api_key` would.
const FORM_WORDS: [&str; 12] =
    ["value", "b64", "base64", "pem", "der", "hex", "raw", "enc", "encoded", "plain", "plaintext", "bytes"];

/// Names that hold a credential when they are the whole name, one word.
const WHOLE_NAMES: [&str; 5] = ["key", "token", "auth", "authorization", "bearer"];

/// Last words of a name that make it say something about a credential (which
/// one, whether one is needed, whether one is stored) rather than hold one:
/// resmon's `credential_name` and `credential_alias` carry an alias, which the
/// contract wants shown (contract 1.0 "Safety"), `api_key_requirement` a word.
/// No name ending so is caught by the word lists above; the list says so
/// before they are read, and keeps saying so if they grow.
const DESCRIBING_WORDS: [&str; 7] =
    ["name", "names", "alias", "aliases", "status", "requirement", "required"];

/// Whole names resmon gives an identifier that ends in `_key`: a lifecycle
/// event's `notice_key` is the notice's id (`crossref:<doi>`), which is long,
/// unbroken and mixes letters and digits, as a secret does.
const IDENTIFIER_NAMES: [&str; 1] = ["notice_key"];

/// The shortest value under a `…_key` name that is taken for a secret.
const SECRET_LENGTH: usize = 16;

/// The shortest credential taken out of free text (after `Bearer`, or as a
/// `name=value` whose name holds a credential): keys and tokens are longer.
const SHORTEST_SECRET_IN_TEXT: usize = 8;

/// What stands in for a value that is not shown, where a key's value was.
pub(crate) fn withheld() -> Value {
    json!({"withheld": true})
}

/// What stands in for a secret taken out of free text (`Bearer <withheld>`,
/// `?api_key=<withheld>`): the scheme or the parameter's name stays, so a
/// reader still sees what kind of thing was there.
pub(crate) const WITHHELD_TEXT: &str = "<withheld>";

/// Whether `value`, found under `key` in resmon's part of an answer, holds a
/// credential. By the name's words (split as `words_of` splits them,
/// lower-cased): its last word is one of `LAST_WORDS`, its last two are one
/// of `LAST_TWO_WORDS`, or it is one word of `WHOLE_NAMES`. Or by name and
/// value: it ends in `key` after another word and `value` is text that looks
/// like a secret (`looks_like_a_secret`). A name ending in one of
/// `DESCRIBING_WORDS`, or one of `IDENTIFIER_NAMES`, holds none.
pub(crate) fn answer_holds_credential(key: &str, value: &Value) -> bool {
    holds_credential(key, value.as_str())
}

/// `answer_holds_credential`, with the value as text when it is text.
fn holds_credential(key: &str, text: Option<&str>) -> bool {
    // Most names hold no credential word at all; only those are split.
    if !mentions_a_last_word(key) || IDENTIFIER_NAMES.iter().any(|name| key.eq_ignore_ascii_case(name)) {
        return false;
    }
    let mut words: Vec<String> = words_of(key).collect();
    // A word that says how the value is written adds nothing to what it is.
    if words.len() > 1 && words.last().is_some_and(|last| FORM_WORDS.contains(&last.as_str())) {
        words.pop();
    }
    let (last, before) = match words.as_slice() {
        [] => return false,
        [.., before, last] => (last.as_str(), Some(before.as_str())),
        [last] => (last.as_str(), None),
    };
    if DESCRIBING_WORDS.contains(&last) {
        return false;
    }
    match before {
        None => WHOLE_NAMES.contains(&last) || LAST_WORDS.contains(&last),
        Some(before) => {
            LAST_WORDS.contains(&last)
                || LAST_TWO_WORDS.contains(&[before, last])
                || (last == "key" && text.is_some_and(looks_like_a_secret))
        }
    }
}

/// Whether a name can end in a word the rule looks at, ignoring case: a
/// cheap test every answer's keys pass, so that only the few names that
/// can hold a credential are split into words. A name with other than
/// ASCII characters always takes the long way, since lower-casing some of
/// them (the Kelvin sign) gives an ASCII letter.
fn mentions_a_last_word(key: &str) -> bool {
    if !key.is_ascii() {
        return true;
    }
    ["key", "token", "secret", "password", "passwd", "pwd", "passphrase", "credential", "auth", "bearer"]
        .iter()
        .any(|word| key.as_bytes().windows(word.len()).any(|part| part.eq_ignore_ascii_case(word.as_bytes())))
}

/// Text that looks like a secret: 16 characters or more, none of them a
/// space of any kind, with both letters and digits (`sk-4f9a…`, a hex
/// digest). `"date"`, `"title_asc"` and a sentence do not.
fn looks_like_a_secret(text: &str) -> bool {
    text.chars().count() >= SECRET_LENGTH
        && !text.chars().any(char::is_whitespace)
        && text.chars().any(char::is_alphabetic)
        && text.chars().any(|character| character.is_ascii_digit())
}

/// Withholds, in place, every credential in resmon's part of an answer, at
/// any depth of `value` (objects inside objects and arrays):
/// - the value of every key that holds one (`answer_holds_credential`)
///   becomes `withheld()`; the key is kept, so a reader still sees that
///   resmon holds such a field;
/// - a string that is, whole, a JSON object or array is read, and when
///   anything in it is withheld it is replaced by that JSON written out
///   again (compact) with the values withheld;
/// - any other string has its secrets in free text replaced (`scrub_text`).
///
/// Answers whether anything was withheld.
pub(crate) fn withhold_credentials(value: &mut Value) -> bool {
    match value {
        Value::Object(object) => {
            let mut any = false;
            for (key, inner) in object.iter_mut() {
                if answer_holds_credential(key, inner) {
                    if *inner != withheld() {
                        *inner = withheld();
                    }
                    any = true;
                } else {
                    any |= withhold_credentials(inner);
                }
            }
            any
        }
        Value::Array(items) => items.iter_mut().fold(false, |any, item| withhold_credentials(item) | any),
        Value::String(text) => {
            if text.trim_start().starts_with(['{', '['])
                && let Ok(mut inner) = serde_json::from_str::<Value>(text)
            {
                if !withhold_credentials(&mut inner) {
                    return false;
                }
                *text = inner.to_string();
                return true;
            }
            let Some(scrubbed) = scrub_text(text) else { return false };
            *text = scrubbed;
            true
        }
        _ => false,
    }
}

/// `text` with its credentials in free text replaced by `WITHHELD_TEXT`,
/// or `None` when it holds none:
/// - the credentials of an HTTP `Bearer` scheme (the word in any case, on
///   its own, then spaces, then the token's characters), unless they are a
///   short word of letters, as in prose;
/// - the value of a `name=value` pair (a URL's query, a log line) whose name
///   holds a credential by the same rule as a key (`api_key=`, `apiKey=`,
///   `token=`, `key=`, `access_token=`, and `session_key=` when the value
///   looks like a secret); `sort_key=date` or `max_tokens=5` stay;
/// - the value after a quoted name and a colon (`"api_key": "…"`,
///   `'token': '…'`, or `\"secret\": \"…\"` as JSON quoted inside JSON
///   writes it) whose name holds a credential: JSON or a Python dict inside
///   a sentence, whole, cut short or malformed, read as its pairs.
pub(crate) fn scrub_text(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for at in 0..bytes.len() {
        let span = match bytes[at] {
            b'=' => query_value(text, at),
            b':' => quoted_pair_value(text, at),
            b'b' | b'B' => bearer_credentials(bytes, at),
            _ => None,
        };
        spans.extend(span);
    }
    if spans.is_empty() {
        return None;
    }
    // A span may touch or overlap another (`Bearer token=x`): joined, one
    // placeholder stands for them.
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut spans = spans.into_iter().peekable();
    while let Some((start, mut end)) = spans.next() {
        while let Some(&(next_start, next_end)) = spans.peek()
            && next_start <= end
        {
            end = end.max(next_end);
            spans.next();
        }
        let start = start.max(copied);
        out.push_str(&text[copied..start]);
        out.push_str(WITHHELD_TEXT);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Characters of a parameter's name in free text.
fn in_a_name(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// Characters that end a parameter's value in free text: a space, the next
/// parameter or the fragment, a quote, a bracket, a clause's punctuation,
/// and `<`, which also keeps a placeholder already written from being read
/// as a value again.
fn ends_a_value(byte: u8) -> bool {
    byte.is_ascii_whitespace() || b"&#\"'<>`()[]{},;".contains(&byte)
}

/// The span of the value after the `=` at `equals` when its name holds a
/// credential.
fn query_value(text: &str, equals: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let name_start = bytes[..equals].iter().rposition(|byte| !in_a_name(*byte)).map_or(0, |at| at + 1);
    // A keyword argument's value may be quoted (`api_key='…'`): it runs to
    // its closing quote.
    let (value_start, value_end) = match bytes.get(equals + 1) {
        Some(&quote) if matches!(quote, b'"' | b'\'') => {
            let start = equals + 2;
            (start, closing_quote(bytes, start, quote).unwrap_or(bytes.len()))
        }
        _ => {
            let start = equals + 1;
            (start, value_end(bytes, start))
        }
    };
    // A value shorter than any key or token (`token=4096` in a sentence about
    // a model's limits, `key=value` as an example) is prose, not a secret.
    if name_start == equals
        || value_end - value_start < SHORTEST_SECRET_IN_TEXT
        || &text[value_start..value_end] == WITHHELD_TEXT
    {
        return None;
    }
    holds_credential(&text[name_start..equals], Some(&text[value_start..value_end]))
        .then_some((value_start, value_end))
}

/// The span of the value after the `:` at `colon` when a quoted name that
/// holds a credential stands before it, by the same rule as a key, inside
/// a dict or an object (the name follows `{` or `,`). Only such a name
/// counts, so prose keeps its words (`The key: a new method`, `"Passwords":
/// a usability study`). The name is what its quotes hold (`'API key'`
/// included), with the quotes escaped too (`\"secret\": \"…\"`, JSON
/// quoted inside JSON). The value is withheld whole whatever it is: a
/// quoted string (a Python prefix such as `b'…'` included) to its closing
/// quote, an object or list to its closing bracket, anything else as a
/// `name=value` pair's value runs, each to the end of a text cut short. No
/// shortest length, as for a key of JSON: the quotes and the colon already
/// say that this is data.
fn quoted_pair_value(text: &str, colon: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let close = colon - bytes[..colon].iter().rev().take_while(|byte| byte.is_ascii_whitespace()).count();
    let quote = *bytes.get(close.checked_sub(1)?)?;
    if !matches!(quote, b'"' | b'\'') {
        return None;
    }
    let escaped = close >= 2 && bytes[close - 2] == b'\\';
    let name_end = close - 1 - usize::from(escaped);
    let open = bytes[..name_end].iter().rposition(|byte| *byte == quote)?;
    let name_start = open + 1;
    if escaped && (open == 0 || bytes[open - 1] != b'\\') {
        return None;
    }
    let name = &text[name_start..name_end];
    if name.is_empty() || name.len() > LONGEST_QUOTED_NAME || name.contains(['"', '\'', '\\', ':']) {
        return None;
    }
    let before = bytes[..open - usize::from(escaped)].iter().rev().find(|byte| !byte.is_ascii_whitespace());
    if !matches!(before, Some(b'{' | b',')) {
        return None;
    }
    let after = colon + 1 + bytes[colon + 1..].iter().take_while(|byte| byte.is_ascii_whitespace()).count();
    let (value_start, value_end) = value_of_pair(bytes, after);
    let value = &text[value_start..value_end];
    // Already withheld, in either form this server writes.
    let already = serde_json::from_str::<Value>(value).is_ok_and(|parsed| parsed == withheld());
    if value.is_empty() || value == WITHHELD_TEXT || already {
        return None;
    }
    holds_credential(name, Some(value)).then_some((value_start, value_end))
}

/// The longest name in quotes that `quoted_pair_value` reads as a key.
const LONGEST_QUOTED_NAME: usize = 64;

/// The span of a pair's value that starts at `at` (see `quoted_pair_value`).
fn value_of_pair(bytes: &[u8], at: usize) -> (usize, usize) {
    let rest = &bytes[at..];
    // A Python string prefix (`b'…'`, `rb"…"`) before the quote.
    let prefix = rest.iter().take(2).take_while(|byte| b"bBrRuUfF".contains(byte)).count();
    match (rest.get(prefix), rest.get(prefix + 1)) {
        (Some(&quote), _) if matches!(quote, b'"' | b'\'') => {
            let start = at + prefix + 1;
            (start, closing_quote(bytes, start, quote).unwrap_or(bytes.len()))
        }
        (Some(b'\\'), Some(&quote)) if prefix == 0 && matches!(quote, b'"' | b'\'') => {
            let start = at + 2;
            (start, closing_escaped_quote(bytes, start, quote).unwrap_or(bytes.len()))
        }
        _ if prefix == 0 && matches!(rest.first(), Some(b'{' | b'[')) => (at, closing_bracket(bytes, at)),
        _ => (at, value_end(bytes, at)),
    }
}

/// Where an unquoted value in free text that starts at `start` ends.
fn value_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..].iter().position(|byte| ends_a_value(*byte)).map_or(bytes.len(), |at| start + at)
}

/// Where a value quoted with `quote` from `start` on ends: the next `quote`
/// that no backslash escapes.
fn closing_quote(bytes: &[u8], start: usize, quote: u8) -> Option<usize> {
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            byte if byte == quote => return Some(at),
            _ => at += 1,
        }
    }
    None
}

/// Where a value quoted with an escaped quote (`\"…\"`, JSON quoted inside
/// JSON) from `start` on ends: the next `\` and `quote`. A `\\` there is the
/// inner text's own backslash, which escapes the inner character after it
/// (`\\\"` is a quote inside the inner value), so both are passed over.
fn closing_escaped_quote(bytes: &[u8], start: usize, quote: u8) -> Option<usize> {
    let mut at = start;
    while at + 1 < bytes.len() {
        match (bytes[at], bytes[at + 1]) {
            (b'\\', b'\\') => at += if bytes.get(at + 2) == Some(&b'\\') { 4 } else { 3 },
            (b'\\', next) if next == quote => return Some(at),
            (b'\\', _) => at += 2,
            _ => at += 1,
        }
    }
    None
}

/// The end (one past the bracket that closes it) of the object or list
/// that opens at `open`, brackets inside quoted strings passed over; the
/// end of the text when it is cut short.
fn closing_bracket(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            quote @ (b'"' | b'\'') => {
                at = closing_quote(bytes, at + 1, quote).unwrap_or(bytes.len());
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// A token's characters after `Bearer ` (RFC 6750's b64token: letters,
/// digits, `-._~+/`, then any `=` padding).
fn in_a_bearer_token(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~+/".contains(&byte)
}

/// The span of a `Bearer` scheme's credentials starting with the `b` at `at`.
fn bearer_credentials(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    const SCHEME: &[u8] = b"bearer";
    let word = bytes.get(at..at + SCHEME.len())?;
    // The scheme stands on its own (after a space, a colon, a quote), never
    // at the end of a compound (`Tumor-bearer`, `load_bearer`).
    let joined = at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || matches!(bytes[at - 1], b'-' | b'_'));
    if !word.eq_ignore_ascii_case(SCHEME) || joined {
        return None;
    }
    let after = at + SCHEME.len();
    let start = after + bytes[after..].iter().take_while(|byte| matches!(byte, b' ' | b'\t')).count();
    if start == after {
        return None;
    }
    let mut end = start + bytes[start..].iter().take_while(|byte| in_a_bearer_token(**byte)).count();
    end += bytes[end..].iter().take_while(|byte| **byte == b'=').count();
    let credentials = &bytes[start..end];
    // Prose uses the word too (`the bearer of a mutation`, `ring bearer 2`,
    // `the bearer Superconductivity question`): what follows it there is a
    // short word, or a word of letters only, which a token is not: a token
    // is at least `SHORTEST_SECRET_IN_TEXT` long and holds a digit or a
    // symbol, unless it is very long.
    let token_like = credentials.len() >= SHORTEST_SECRET_IN_TEXT
        && (credentials.len() >= 24 || credentials.iter().any(|byte| !byte.is_ascii_alphabetic()));
    token_like.then_some((start, end))
}

#[cfg(test)]
mod tests;
