use serde_json::{Value, json};

use super::*;
use crate::settings_policy::credential_word;

/// Names that hold a credential whatever their value (here a word that does
/// not look like a secret): by the last word, the last two, or the whole name.
const HOLDING: [&str; 58] = [
    // The whole name.
    "key",
    "token",
    "auth",
    "authorization",
    "bearer",
    "Authorization",
    "TOKEN",
    "Bearer",
    "AUTH",
    "KEY",
    // The last word.
    "secret",
    "password",
    "passphrase",
    "credential",
    "credentials",
    "apikey",
    "smtp_password",
    "SMTP_PASSWORD",
    "user-password",
    "webhook_secret",
    "client_secret",
    "status_secret",
    "notice_key_secret",
    "db_passphrase",
    "google_credentials",
    "service_credential",
    "session_token",
    "csrf_token",
    "github_token",
    "name_token",
    "author_token",
    "OAuthToken",
    "x-apikey",
    // The last two words.
    "api_key",
    "openai_api_key",
    "apiKey",
    "X-Api-Key",
    "ai.api.key",
    "access_key",
    "aws_access_key",
    "private_key",
    "ssh_private_key",
    "secret_key",
    "stripeSecretKey",
    "access_token",
    "refresh_token",
    "refreshToken",
    "bearer_token",
    // Plurals, short forms, and a last word that says how it is written.
    "client_secrets",
    "db_passwords",
    "smtp_passwd",
    "pwd",
    "api_keys",
    "access_tokens",
    "client_secret_b64",
    "private_key_pem",
    "openai_api_key_value",
    "webhook_token_hex",
];

/// Names that hold no credential whatever their value (here one that looks
/// like a secret, so that the `…_key` rule is not what lets them through):
/// a credential word inside a longer word, a word that counts or describes,
/// this server's own error fields, resmon's identifiers.
const SHOWN: [&str; 52] = [
    "authorships",
    "authors",
    "author",
    "authorName",
    "authority",
    "oauth",
    "auth_method",
    "auth_header",
    "max_tokens",
    "maxTokens",
    "token_count",
    "tokenCount",
    "tokens",
    "input_tokens",
    "token_limit",
    "token_type",
    "tokenizer",
    "tokenized_title",
    "keywords",
    "matched_keywords",
    "keyword_count",
    "keynote",
    "keyed",
    "monkey",
    "turkey",
    "hotkey",
    "passkey",
    "key_id",
    "keys",
    "secretary",
    "secrets_count",
    "password_changed_at",
    "credentials_path",
    "private_key_path",
    "access_token_expires_at",
    "bearer_scheme",
    // Describing a credential rather than holding one.
    "credential_name",
    "credential_alias",
    "api_key_requirement",
    "api_key_name",
    "key_required",
    "key_status",
    "token_names",
    // resmon's identifier.
    "notice_key",
    // This server's own error fields.
    "token_file",
    "missing_keys",
    "group_keys",
    "writable_keys",
    "credential_shaped",
    "route",
    "backend_version",
    "answered",
];

const SECRET_LIKE: &str = "sk-4f9aB82c71dE0a9b3C5d";

#[test]
fn the_table_of_names_each_way() {
    for name in HOLDING {
        for value in [json!("date"), json!(3), json!(null), json!({"a": 1})] {
            assert!(answer_holds_credential(name, &value), "{name}: {value}");
        }
    }
    for name in SHOWN {
        for value in [json!(SECRET_LIKE), json!(3), json!("date")] {
            assert!(!answer_holds_credential(name, &value), "{name}: {value}");
        }
    }
}

#[test]
fn a_name_ending_in_key_holds_a_credential_when_its_value_looks_like_one() {
    let cases: [(&str, Value, bool); 16] = [
        ("openai_key", json!(SECRET_LIKE), true),
        ("sortKey", json!(SECRET_LIKE), true),
        ("session-key", json!("a1b2c3d4e5f6a7b8"), true),
        ("cache_key", json!("0123456789abcdef0123"), true),
        ("sort_key", json!("date"), false),
        ("sort_key", json!("published_date_desc"), false),
        ("source_missing_key", json!(3), false),
        ("source_missing_key", json!(12345678901234567_i64), false),
        ("primary_key", json!(true), false),
        // 15 characters: one short.
        ("session_key", json!("a1b2c3d4e5f6a7b"), false),
        // Letters only, digits only, or with a space.
        ("session_key", json!("abcdefghijklmnopqrstu"), false),
        ("session_key", json!("12345678901234567890"), false),
        ("session_key", json!("abc 123 def 456 ghi 789"), false),
        // An object is walked, not withheld whole.
        ("config_key", json!({"id": SECRET_LIKE}), false),
        // resmon's notice id is long and mixed, and an identifier.
        ("notice_key", json!("crossref:10.1000/abc123"), false),
        ("NOTICE_KEY", json!("crossref:10.1000/abc123"), false),
    ];
    for (name, value, holds) in cases {
        assert_eq!(answer_holds_credential(name, &value), holds, "{name}: {value}");
    }
}

/// The refusal of a requested settings key is the wider rule, untouched:
/// the names the answers show are still refused when asked for.
#[test]
fn the_settings_refusal_stays_the_wider_rule() {
    for name in ["max_tokens", "token_count", "sort_key", "auth_header", "credential_name", "notice_key"] {
        assert!(credential_word(name).is_some(), "{name}");
        assert!(!answer_holds_credential(name, &json!("date")), "{name}");
    }
    // The names the answers withhold and the word list lets through are
    // `bearer` alone and the short forms of a password: no settings key is
    // named so, and a key the app lacks is refused as unknown anyway
    // (contract-notes 11).
    let beyond_the_word_list =
        |name: &str| name.eq_ignore_ascii_case("bearer") || name.ends_with("passwd") || name.ends_with("pwd");
    for name in HOLDING.iter().filter(|name| !beyond_the_word_list(name)) {
        assert!(credential_word(name).is_some(), "every name the answers withhold is refused: {name}");
    }
}

#[test]
fn the_quick_check_lets_through_every_name_the_rule_could_catch() {
    for name in HOLDING.iter().chain(&["openai_key"]) {
        assert!(mentions_a_last_word(name), "{name}");
    }
    let pairs = LAST_TWO_WORDS.map(|[before, last]| format!("{before}_{last}"));
    for word in LAST_WORDS.iter().chain(&WHOLE_NAMES).copied().chain(pairs.iter().map(String::as_str)) {
        assert!(mentions_a_last_word(word), "{word}");
        assert!(mentions_a_last_word(&word.to_uppercase()), "{word}");
    }
    // Lower-cased, the Kelvin sign is an ASCII k: the long way finds it.
    assert!(answer_holds_credential("api_\u{212A}ey", &json!("v")));
}

#[test]
fn free_text_loses_bearer_credentials_and_credential_query_values() {
    let cases = [
        ("Authorization: Bearer abc.DEF-123_~+/== sent", "Authorization: Bearer <withheld> sent"),
        ("bearer  xyz1uvw2", "bearer  <withheld>"),
        ("Bearer abcdefghijklmnopqrstuvwxyz", "Bearer <withheld>"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc", "Bearer <withheld>"),
        ("header was 'BEARER\tSECRET-1'", "header was 'BEARER\t<withheld>'"),
        (
            "GET https://api.example.org/v1?q=x&api_key=SECRET-2&page=2 failed",
            "GET https://api.example.org/v1?q=x&api_key=<withheld>&page=2 failed",
        ),
        ("?apiKey=SECRET-3", "?apiKey=<withheld>"),
        ("?APIKEY=SECRET-4#top", "?APIKEY=<withheld>#top"),
        ("token=SECRET-5; key=SECRET-6", "token=<withheld>; key=<withheld>"),
        ("(access_token=SECRET-7)", "(access_token=<withheld>)"),
        ("session_key=4f9aB82c71dE0a9b3C5d", "session_key=<withheld>"),
        ("clé=ok token=é€abc", "clé=ok token=<withheld>"),
        ("Bearer token=SECRET-8", "Bearer token=<withheld>"),
    ];
    for (text, scrubbed) in cases {
        assert_eq!(scrub_text(text).as_deref(), Some(scrubbed), "{text}");
        assert_eq!(scrub_text(scrubbed), None, "a scrubbed text is left as it is: {scrubbed}");
    }
    for text in [
        "sort_key=date&max_tokens=5&monkey=3&token_count=9",
        "a == b, x=1",
        "Bearers are fine; unbearer x1; Bearer",
        "the standard-bearer of a Bearer token scheme",
        // Prose, paper titles: a compound, a short word or a number, a long
        // word of letters, a limit, an example.
        "Tumor-bearer 4T1 mice show load-bearer 316L response",
        "Ring bearer 2 of 3",
        "The bearer Superconductivity question",
        "max token=4096 per call",
        "key=value",
        "Bearer <withheld>",
        "key=",
        "?key=&page=2",
        "a plain sentence about a token and a key",
        "",
    ] {
        assert_eq!(scrub_text(text), None, "{text}");
    }
}

#[test]
fn free_text_loses_the_values_of_quoted_credential_names() {
    let cases = [
        (r#"Refused {"api_key": "LEAK-abcdef123456"}"#, r#"Refused {"api_key": "<withheld>"}"#),
        // Short values too: the quotes and the colon say this is data.
        (r#"{"smtp_password": "hunter2", "name": "R"}"#, r#"{"smtp_password": "<withheld>", "name": "R"}"#),
        // A Python dict, and JSON cut short or with a trailing comma.
        ("{'api_key': 'sk-ant-x1', 'n': 1}", "{'api_key': '<withheld>', 'n': 1}"),
        (r#"Refused {"token": "abc"#, r#"Refused {"token": "<withheld>"#),
        (r#"Refused {"apiKey": "LEAK-6",}"#, r#"Refused {"apiKey": "<withheld>",}"#),
        // Unquoted values, and quotes escaped as JSON inside JSON writes them.
        (r#"{"token": 4096, "x": 1}"#, r#"{"token": <withheld>, "x": 1}"#),
        (r#"x {\"api_key\": \"LEAK-17\"} y"#, r#"x {\"api_key\": \"<withheld>\"} y"#),
        // A quote escaped inside the value does not end it, at either level.
        (r#"{"password": "a\"b c"}"#, r#"{"password": "<withheld>"}"#),
        (r#"x {\"password\": \"ab\\\"LEAK\"} y"#, r#"x {\"password\": \"<withheld>\"} y"#),
        // White space around the colon, a name with a space, a Python prefix.
        (r#"{"core_api_key" : "K-1"}"#, r#"{"core_api_key" : "<withheld>"}"#),
        ("{'api_key':\n\t'LEAK-5'}", "{'api_key':\n\t'<withheld>'}"),
        ("{'API key': 'LEAK-8'}", "{'API key': '<withheld>'}"),
        ("{'token': b'LEAK-6'}", "{'token': b'<withheld>'}"),
        // A credential holding an object or a list is withheld whole.
        (
            r#"Refused {'credentials': {'user': 'u', 'pass': 'L}2'}, 'n': 1}"#,
            r#"Refused {'credentials': <withheld>, 'n': 1}"#,
        ),
        (r#"{"api_keys": ["LEAK-3", "LEAK-4"]}"#, r#"{"api_keys": <withheld>}"#),
        (r#"{"secret": {"a": [1, {"b": 2"#, r#"{"secret": <withheld>"#),
        // A keyword argument's quoted value.
        ("Settings(api_key='LEAKA7-abcdef123456')", "Settings(api_key='<withheld>')"),
    ];
    for (text, scrubbed) in cases {
        assert_eq!(scrub_text(text).as_deref(), Some(scrubbed), "{text}");
        assert_eq!(scrub_text(scrubbed), None, "a scrubbed text is left as it is: {scrubbed}");
    }
    // Prose and data keep their words: a name that does not stand in a dict
    // or an object, and names that hold no credential.
    for text in [
        "The key: a new method for graph attention",
        "Token: the unit of text",
        r#"The "Key": findings of a survey"#,
        r#""Passwords": a usability study"#,
        r#"query "token": embedding"#,
        r#"{"sort_key": "date", "max_tokens": 4096, "name": "R"}"#,
        r#"{"credential_name": "core_api_key"}"#,
        r#"{"api_key": ""}"#,
        r#"a "token" : "#,
        // Withheld already, as a JSON walk writes it.
        r#"it gave {"api_key":{"withheld":true}}"#,
        r#"{"token": {"withheld": true}}"#,
        ":'':\"\":{'':}",
    ] {
        assert_eq!(scrub_text(text), None, "{text}");
    }
}

#[test]
fn credential_values_are_withheld_at_any_depth_and_inside_json_text() {
    let mut record = json!({
        "name": "R",
        "webhook_secret": "S3",
        "parameters": {"keywords": ["a"], "hooks": [{"url": "u", "api_token": "T"}]},
        "storage_settings": "{\"auth\": \"Bearer S4\", \"folder\": \"x\"}",
        "notes": "{not json but {\"password\": \"p\"}",
        "plain": "[1, 2]",
        "authorships": [{"author": "A"}],
        "max_tokens": 5,
        "openai_key": SECRET_LIKE,
        "sort_key": "date",
    });
    assert!(withhold_credentials(&mut record));
    assert_eq!(record["webhook_secret"], withheld());
    assert_eq!(record["parameters"]["keywords"], json!(["a"]));
    assert_eq!(record["parameters"]["hooks"][0], json!({"url": "u", "api_token": {"withheld": true}}));
    let storage: Value = serde_json::from_str(record["storage_settings"].as_str().unwrap()).unwrap();
    assert_eq!(storage, json!({"auth": {"withheld": true}, "folder": "x"}));
    // Text that is not whole JSON is not read as JSON, but its quoted pairs
    // are read as free text is (contract-notes 13 says so).
    assert_eq!(record["notes"], json!("{not json but {\"password\": \"<withheld>\"}"));
    assert_eq!(record["plain"], json!("[1, 2]"));
    assert_eq!(record["authorships"], json!([{"author": "A"}]));
    assert_eq!(record["max_tokens"], json!(5));
    assert_eq!(record["openai_key"], withheld());
    assert_eq!(record["sort_key"], json!("date"));

    // Free text in a value, at any depth and inside JSON text, is scrubbed.
    let mut texts = json!({
        "log": ["called https://x.org/?apikey=SECRET-9", {"header": "Bearer SECRET-10"}],
        "hooks": "[{\"target\": \"https://h.example/?token=SECRET-11\"}]",
    });
    assert!(withhold_credentials(&mut texts));
    assert_eq!(
        texts,
        json!({
            "log": ["called https://x.org/?apikey=<withheld>", {"header": "Bearer <withheld>"}],
            "hooks": r#"[{"target":"https://h.example/?token=<withheld>"}]"#,
        })
    );
    assert!(!withhold_credentials(&mut texts), "withholding twice changes nothing");

    let mut clean = json!({"name": "R", "parameters": "{\"query\": \"x\"}", "note": "sort_key=date"});
    assert!(!withhold_credentials(&mut clean));
    assert_eq!(clean["parameters"], json!("{\"query\": \"x\"}"));
}

/// Every text made of up to four pieces that the rules look at (quotes,
/// escapes, brackets, a colon, an equals sign, names, letters of several
/// bytes) is scrubbed without a panic, and what comes out is left as it is.
#[test]
fn free_text_of_any_shape_is_scrubbed_without_a_panic() {
    const PIECES: [&str; 18] = [
        "'",
        "\"",
        "\\",
        ":",
        "=",
        "{",
        "}",
        "[",
        ",",
        " ",
        "é",
        "😀",
        "b",
        "api_key",
        "token",
        "Bearer ",
        "x",
        "<withheld>",
    ];
    let mut texts = vec![String::new()];
    for _ in 0..4 {
        texts =
            texts.iter().flat_map(|text| PIECES.iter().map(move |piece| format!("{text}{piece}"))).collect();
        for text in &texts {
            if let Some(scrubbed) = scrub_text(text) {
                assert_eq!(scrub_text(&scrubbed), None, "{text:?} became {scrubbed:?}");
            }
        }
    }
}
