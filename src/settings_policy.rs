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

/// The six groups a request may name. `cloud` and the `execution` route are
/// left out on purpose (contract 1.0 "Excluded on purpose" and "The
/// settings update_settings may change": six groups, though resmon has seven).
pub const GROUPS: [&str; 6] = ["ai", "assistant", "email", "embeddings", "storage", "notifications"];

/// Words that make a key name credential-shaped. Matched anywhere in the name,
/// ignoring case, so that no tool call can name a secret at all; resmon keeps
/// its secrets in the system keychain, not among its settings.
pub const CREDENTIAL_WORDS: [&str; 7] =
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
pub const WRITABLE: [&str; 20] = [
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
pub const WITHHELD: [(&str, &str); 19] = [
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

pub fn is_reachable_group(group: &str) -> bool {
    GROUPS.contains(&group)
}

/// The first credential word found in `key`, ignoring case.
pub fn credential_word(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    CREDENTIAL_WORDS.iter().copied().find(|word| lower.contains(word))
}

pub(crate) fn withheld_reason(key: &str) -> Option<&'static str> {
    WITHHELD.iter().find(|(name, _)| *name == key).map(|(_, reason)| *reason)
}

pub fn is_writable(key: &str) -> bool {
    WRITABLE.contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_words_match_anywhere_and_in_any_case() {
        assert_eq!(credential_word("anthropic_API_KEY"), Some("key"));
        assert_eq!(credential_word("OAuthClient"), Some("auth"));
        assert_eq!(credential_word("smtp_Password"), Some("password"));
        assert_eq!(credential_word("ai_model"), None);
    }

    #[test]
    fn the_two_lists_do_not_overlap() {
        assert!(WITHHELD.iter().all(|(key, _)| !is_writable(key)));
        assert!(WITHHELD.iter().all(|(_, reason)| !reason.trim().is_empty()));
    }
}
