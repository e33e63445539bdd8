//! What `update_settings` may touch (contract 1.0 "The settings update_settings
//! may change" and "Why the allowlist is by key").
//!
//! Three lists, each a decision rather than a filter: the groups a request may
//! name, the keys it may write, and the keys it may not, each with its reason.
//! The writable and withheld lists together partition the app's own 39 keys
//! (fixtures/settings_keys.json holds them as data, and the tests compare
//! against that file, not against these lists). A key the app grows later is on
//! neither list, so it is refused until someone decides; it never arrives
//! writable by default.
//!
//! Two rules say what is credential-shaped, kept apart: `credential_word`,
//! here, refuses a requested settings key on a credential word anywhere in
//! its name (contract-notes 11); `answers` judges the keys and text resmon
//! put in an answer, by exact words and, for a `…_key`, by the value
//! (contract-notes 13). The first is wide because refusing a name costs
//! nothing; the second is exact because hiding resmon's data costs the
//! reader that data.

mod answers;

pub(crate) use answers::{answer_holds_credential, withheld, withhold_credentials};

/// The six groups a request may name. `cloud` and the `execution` route are
/// left out on purpose (contract 1.0 "Excluded on purpose" and "The
/// settings update_settings may change": six groups, though resmon has seven).
pub(crate) const GROUPS: [&str; 6] = ["ai", "assistant", "email", "embeddings", "storage", "notifications"];

/// Words that make a requested settings key credential-shaped. Matched
/// anywhere in the name, ignoring case, so that no tool call can name a secret
/// at all; resmon keeps its secrets in the system keychain, not among its
/// settings. Only for names a caller asks for, and for settings keys echoed
/// back (contract-notes 11, 13); resmon's answers are judged by `answers`.
pub(crate) const CREDENTIAL_WORDS: [&str; 7] =
    ["key", "token", "secret", "password", "passphrase", "credential", "auth"];

// The line every key below is sorted by, restated: a tool may adjust how resmon
// speaks (the model it asks, the ceilings it works under, what it keeps and what
// it notifies about). It may not move the places resmon sends data to, swap the
// program resmon starts, redirect where resmon puts files, rewrite the words
// resmon is instructed with, or hide from the reader how a result was made.
// A key whose value does any of those is withheld, whether or not it moves a
// request: four of them (the three prompt slots and the audit prefix) move none.

/// The 20 keys a tool may write. Which group each belongs to comes from the
/// group's own GET at call time, not from here.
pub(crate) const WRITABLE: [&str; 20] = [
    // ai: which model, and the numeric ceilings.
    "ai_model",
    "ai_local_model",
    "ai_temperature",
    "ai_default_models",
    "ai_subscription_doc_cap",
    "ai_effort",
    // assistant: which model, and how hard it thinks.
    "assistant_model",
    "assistant_effort",
    // email: the sender's own account name and From line; recipients are withheld.
    "smtp_username",
    "smtp_from",
    // embeddings: whether and with which model; never where the text goes.
    "embedding_enabled",
    "embedding_model",
    "embedding_batch_size",
    "embedding_dims",
    "embedding_input_limit",
    // storage: what is retained, and for how long.
    "pdf_policy",
    "txt_policy",
    "archive_after_days",
    // notifications: what the user is told about.
    "notify_manual",
    "notify_automatic_mode",
];

/// The 19 keys refused on their name, each with the sentence a caller is given.
pub(crate) const WITHHELD: [(&str, &str); 19] = [
    // What resmon runs.
    ("ai_cli_path", "it is the program resmon starts for the subscription lane and the assistant"),
    ("assistant_runtime", "it decides whether resmon starts a separate program for the assistant at all"),
    // Where resmon sends things.
    ("ai_provider", "it picks the provider whose servers receive the API key and the prompt"),
    ("assistant_provider", "it picks the provider whose servers receive the assistant's key and prompt"),
    ("ai_custom_base_url", "it is the address custom-provider requests, with the key and corpus text, go to"),
    ("ai_local_endpoint", "it is the address local-model requests go to"),
    ("ai_custom_header_prefix", "it names the header a custom endpoint's requests carry the key in"),
    ("ai_chain", "it lists fallback lanes, each of which names its own provider"),
    ("embedding_provider", "it decides which service corpus text is sent to for embedding"),
    ("embedding_endpoint", "it is the address corpus text is sent to for local embedding"),
    ("embedding_base_url", "it is the address corpus text is sent to for custom-provider embedding"),
    ("smtp_server", "it decides which mail server routine reports are handed to"),
    ("smtp_port", "it is part of the address routine reports are delivered to"),
    ("smtp_to", "it decides who receives routine reports"),
    // Where resmon writes.
    ("export_directory", "it decides where on disk resmon writes exported files"),
    // What resmon is told: each is pasted as-is into the summarizer's prompt.
    ("ai_extraction_goals", "its text is pasted verbatim into the instructions resmon gives the summarizer"),
    ("ai_tone", "its text is pasted verbatim into the instructions resmon gives the summarizer"),
    ("ai_summary_length", "its text is pasted verbatim into the instructions resmon gives the summarizer"),
    // Whether the user is told how a result was produced.
    (
        "ai_show_audit_prefix",
        "it decides whether a summary tells its reader that a model wrote it, and which one",
    ),
];

pub(crate) fn is_reachable_group(group: &str) -> bool {
    GROUPS.contains(&group)
}

/// Words of a name that hold a credential word but name no credential: the
/// search terms and authors resmon's records carry. They are set aside only
/// as whole words of the name, so `authorization` or `keywords_api_key`
/// stays credential-shaped.
const INNOCENT_WORDS: [&str; 4] = ["keyword", "keywords", "author", "authors"];

/// The first credential word found in `key`, ignoring case: anywhere in the
/// name, except inside one of its words that is one of `INNOCENT_WORDS`
/// (words are split at anything but a letter or digit, and where a lower-case
/// letter meets a capital). The refusal of a requested settings key, and
/// the naming of one echoed back; never the judge of resmon's answers
/// (`answer_holds_credential`).
pub(crate) fn credential_word(key: &str) -> Option<&'static str> {
    // Most names hold no credential word at all: an ASCII one is cleared
    // without splitting it into words (every answer's keys pass here). A
    // name with other characters takes the long way, since lower-casing
    // some of them (the Kelvin sign) gives an ASCII letter.
    if key.is_ascii() && !mentions_a_credential_word(key.as_bytes()) {
        return None;
    }
    words_of(key)
        .filter(|word| !INNOCENT_WORDS.contains(&word.as_str()))
        .find_map(|word| CREDENTIAL_WORDS.iter().copied().find(|credential| word.contains(credential)))
}

/// Whether one of `CREDENTIAL_WORDS` occurs anywhere in an ASCII name,
/// ignoring case. Only where a byte can start one of them is it compared.
fn mentions_a_credential_word(name: &[u8]) -> bool {
    (0..name.len()).any(|at| {
        let starting: &[&str] = match name[at].to_ascii_lowercase() {
            b'k' => &["key"],
            b't' => &["token"],
            b's' => &["secret"],
            b'p' => &["password", "passphrase"],
            b'c' => &["credential"],
            b'a' => &["auth"],
            _ => return false,
        };
        let rest = &name[at..];
        starting
            .iter()
            .any(|word| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word.as_bytes()))
    })
}

/// The words of a key's name, lower-cased: what both rules split a name
/// into (`credential_word` and `answers`).
fn words_of(key: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for character in key.chars() {
        if !character.is_alphanumeric() {
            words.push(std::mem::take(&mut current));
            previous_lower = false;
            continue;
        }
        if character.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = character.is_lowercase() || character.is_ascii_digit();
        current.extend(character.to_lowercase());
    }
    words.push(current);
    words.into_iter().filter(|word| !word.is_empty())
}

pub(crate) fn withheld_reason(key: &str) -> Option<&'static str> {
    WITHHELD.iter().find(|(name, _)| *name == key).map(|(_, reason)| *reason)
}

pub(crate) fn is_writable(key: &str) -> bool {
    WRITABLE.contains(&key)
}

/// Whether `key` is one of the app's own settings keys, on either list.
pub(crate) fn is_known(key: &str) -> bool {
    is_writable(key) || withheld_reason(key).is_some()
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use serde_json::Value;

    use super::*;

    /// The app's own settings keys by group, as the fixture written from
    /// resmon's source holds them (never the policy's own lists).
    fn fixture() -> Value {
        serde_json::from_str(include_str!("../fixtures/settings_keys.json")).unwrap()
    }

    fn app_keys() -> BTreeMap<String, Vec<String>> {
        fixture()["groups"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(group, keys)| {
                let keys = keys.as_array().unwrap().iter().map(|key| key.as_str().unwrap().to_string());
                (group.clone(), keys.collect())
            })
            .collect()
    }

    #[test]
    fn writable_and_withheld_partition_the_apps_39_keys_exactly() {
        let app: BTreeSet<String> = app_keys().into_values().flatten().collect();
        let writable: BTreeSet<String> = WRITABLE.iter().map(|key| key.to_string()).collect();
        let withheld: BTreeSet<String> = WITHHELD.iter().map(|(key, _)| key.to_string()).collect();
        assert_eq!(app.len(), 39, "the fixture holds the app's 39 keys");
        assert_eq!(writable.len(), 20, "20 distinct writable keys");
        assert_eq!(withheld.len(), 19, "19 distinct withheld keys");
        // A set is as long as its list only when the list names no key twice.
        assert_eq!(writable.len(), WRITABLE.len(), "WRITABLE names a key twice");
        assert_eq!(withheld.len(), WITHHELD.len(), "WITHHELD names a key twice");
        assert!(
            writable.is_disjoint(&withheld),
            "{:?}",
            writable.intersection(&withheld).collect::<Vec<_>>()
        );
        let union: BTreeSet<String> = writable.union(&withheld).cloned().collect();
        assert_eq!(
            union, app,
            "writable and withheld together must be the app's key list, no more and no less"
        );
        for (key, reason) in WITHHELD {
            assert!(reason.split_whitespace().count() >= 5, "{key} needs a real reason: {reason:?}");
        }
    }

    #[test]
    fn every_allowlisted_group_is_the_apps_and_holds_a_writable_key() {
        let app = app_keys();
        let groups: BTreeSet<&str> = GROUPS.iter().copied().collect();
        let app_groups: BTreeSet<&str> = app.keys().map(String::as_str).collect();
        assert_eq!(groups, app_groups);
        for (group, keys) in &app {
            assert!(
                keys.iter().any(|key| is_writable(key)),
                "{group} has no writable key, so why is it reachable?"
            );
        }
        for group in fixture()["groups_outside_the_allowlist"].as_object().unwrap().keys() {
            assert!(!is_reachable_group(group), "{group}");
        }
    }

    #[test]
    fn the_credential_denylist_refuses_no_key_that_exists() {
        let mut every_key: Vec<String> = app_keys().into_values().flatten().collect();
        for keys in fixture()["groups_outside_the_allowlist"].as_object().unwrap().values() {
            every_key.extend(keys.as_array().unwrap().iter().map(|key| key.as_str().unwrap().to_string()));
        }
        for key in &every_key {
            assert_eq!(credential_word(key), None, "{key} would be refused as a credential");
        }
        // And it is not a filter doing nothing: each word refuses a name built from it.
        for word in CREDENTIAL_WORDS {
            assert_eq!(credential_word(&format!("x_{}_y", word.to_uppercase())), Some(word));
        }
    }

    #[test]
    fn credential_words_match_anywhere_and_in_any_case() {
        assert_eq!(credential_word("anthropic_API_KEY"), Some("key"));
        assert_eq!(credential_word("OAuthClient"), Some("auth"));
        assert_eq!(credential_word("smtp_Password"), Some("password"));
        assert_eq!(credential_word("ai_model"), None);
    }

    #[test]
    fn the_quick_check_knows_every_credential_word() {
        for word in CREDENTIAL_WORDS {
            assert!(mentions_a_credential_word(word.as_bytes()), "{word}");
            assert!(mentions_a_credential_word(word.to_uppercase().as_bytes()), "{word}");
        }
    }

    #[test]
    fn the_quick_check_and_the_word_split_agree() {
        for name in
            ["api_KEY", "x-Auth", "plain", "keywords", "author_token", "PassPhrase", "cred", "to_ken", ""]
        {
            let split =
                words_of(name).filter(|word| !INNOCENT_WORDS.contains(&word.as_str())).find_map(|word| {
                    CREDENTIAL_WORDS.iter().copied().find(|credential| word.contains(credential))
                });
            assert_eq!(credential_word(name), split, "{name}");
        }
        // Lower-cased, the Kelvin sign is an ASCII k: the long way finds it.
        assert_eq!(credential_word("api_\u{212A}ey"), Some("key"));
    }

    #[test]
    fn search_terms_and_authors_are_not_credentials_but_their_neighbours_are() {
        for innocent in
            ["keywords", "matched_keywords", "keyword_count", "authors", "matched_author", "authorName"]
        {
            assert_eq!(credential_word(innocent), None, "{innocent}");
        }
        for shaped in ["authorization", "keywords_api_key", "authorToken", "apiKey", "x-auth-header"] {
            assert!(credential_word(shaped).is_some(), "{shaped}");
        }
    }

    #[test]
    fn the_two_lists_do_not_overlap() {
        assert!(WITHHELD.iter().all(|(key, _)| !is_writable(key)));
        assert!(WITHHELD.iter().all(|(_, reason)| !reason.trim().is_empty()));
    }
}
