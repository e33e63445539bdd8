//! Whether resmon's sentence is evidence against the caller (contract-notes
//! 17): the words that name a request field or quote one of its values.
//! Reading words is all this module does; `refusal` decides what a match
//! means for the code.

use super::last_name;

/// The lowercase words of a sentence, with `_` kept inside words so that
/// `include_ids` is one word.
pub(super) fn words_of(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Whether a sentence names a request field (contract-notes 17). A name of
/// more than one word counts whole (`include_ids`) or by its parts in a row
/// (`document ids`), and an id (`profile_id`) by what it is the id of
/// (`profile`), as a sentence about a missing record says it. A single-word
/// name (`query`, `limit`, an entity's `mode`) is too common a word to
/// count by itself ("Rate limit exceeded", "Query planner timed out",
/// "read-only mode"): it counts only written as a key (`keyed`), or within
/// its path written in a row (`parameters.query`, `entity mode`,
/// `orcid value`). `bare` lets a single word count by itself all the same:
/// a field this server chose, which never blames the caller, is named so.
pub(super) fn names_field(sentence: &str, words: &[String], path: &str, bare: bool) -> bool {
    let name = last_name(path).to_ascii_lowercase();
    let parts: Vec<&str> = name.split('_').filter(|part| !part.is_empty()).collect();
    let in_a_row = |parts: &[String]| {
        parts.len() > 1
            && words.windows(parts.len()).any(|run| run.iter().zip(parts).all(|(word, part)| word == part))
    };
    let own_parts: Vec<String> = parts.iter().map(|part| part.to_string()).collect();
    let path_parts = |skip: usize| -> Vec<String> {
        path.split('.')
            .skip(skip)
            .flat_map(|part| part.split('_'))
            .filter(|part| !part.is_empty())
            .map(str::to_ascii_lowercase)
            .collect()
    };
    let record = name.strip_suffix("_id").filter(|noun| !noun.is_empty() && !noun.contains('_'));
    let whole = words.contains(&name) && (parts.len() > 1 || bare);
    whole
        || in_a_row(&own_parts)
        || in_a_row(&path_parts(0))
        || in_a_row(&path_parts(1))
        || keyed(sentence, &name)
        || record.is_some_and(|noun| words.iter().any(|word| word == noun))
}

/// Whether a sentence writes `name` as a key: in quotes of any kind
/// (`'mode'`, `` `mode` ``), or as a word of its own followed by `=`
/// (`mode=…`), or by `:` where a label stands, at the start of the
/// sentence or of a clause (`mode: …`, `…; limit: …`, `(limit: …)`). After
/// another word a colon ends a phrase of prose ("Rate limit: 30 per
/// minute", "Database mode: read-only"), which names no field.
fn keyed(sentence: &str, name: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    let quoted = ["'", "\"", "`"].iter().any(|q| lower.contains(&format!("{q}{name}{q}")));
    quoted
        || lower.match_indices(name).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + name.len()..].chars().next();
            let own_word = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let starts_a_clause =
                lower[..at].trim_end().chars().next_back().is_none_or(|c| ",;.(!?".contains(c));
            own_word && (after == Some('=') || (after == Some(':') && starts_a_clause))
        })
}

/// Whether a sentence quotes a value: inside quotes of any kind. A bare
/// word of the sentence is no quotation, a number included ("line 1
/// column 5" quotes no one's 5); a sentence about a number the caller gave
/// names its field too ("No watch profile with id 999"), which counts.
pub(super) fn quotes(sentence: &str, value: &str) -> bool {
    ["'", "\"", "`"].iter().any(|q| sentence.contains(&format!("{q}{value}{q}")))
}
