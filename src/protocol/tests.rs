//! protocol.rs's unit tests: the initialize answer, the instructions (their
//! budget, the tools they name, what they say of an error after a write).

use super::*;

/// The instructions name the write tools of the table, all and only
/// them, and count them right.
#[test]
fn the_instructions_list_the_write_tools_of_the_table() {
    let writes: Vec<&str> =
        tools::TOOLS.iter().filter(|tool| tool.requires_confirmation).map(|tool| tool.name).collect();
    let start = INSTRUCTIONS.find("requires_confirmation: true (").expect("the list of writes") + 29;
    let end = start + INSTRUCTIONS[start..].find(')').unwrap();
    let listed: Vec<&str> = INSTRUCTIONS[start..end].split(',').map(str::trim).collect();
    let mut sorted_writes = writes.clone();
    sorted_writes.sort_unstable();
    let mut sorted_listed = listed.clone();
    sorted_listed.sort_unstable();
    assert_eq!(sorted_listed, sorted_writes);
    let words = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"];
    assert!(INSTRUCTIONS.contains(&format!("{} tools change things", words[writes.len()])));
}

#[test]
fn the_written_out_initialize_result_is_the_serialised_value() {
    for read_only in [false, true] {
        for version in HANDSHAKE_VERSIONS {
            let value = json!({
                "protocolVersion": version,
                "capabilities": capabilities(),
                "serverInfo": server_info(),
                "instructions": instructions(read_only),
                "_meta": {"resmon/server_version": env!("CARGO_PKG_VERSION")},
            });
            assert_eq!(initialize_result(version, read_only), compact(&value));
        }
    }
}

/// Both texts fit the bytes docs/findability.md gives them: 1,700 for a
/// full session, whose text also says what an error after a write may
/// carry, and 1,600 for a read-only one.
#[test]
fn each_instructions_text_fits_its_budget() {
    for (read_only, budget) in [(false, 1_700), (true, 1_600)] {
        let bytes = instructions(read_only).len();
        assert!(bytes <= budget, "the instructions (read-only: {read_only}) are {bytes} B, over {budget} B");
    }
}

/// A model primed by the instructions must not read an error after a
/// write as "nothing happened": they name both fields that say otherwise.
#[test]
fn the_instructions_say_an_error_after_a_write_may_carry_what_was_done() {
    let text = instructions(false);
    for field in ["detail.applied", "outcome_unknown"] {
        assert!(text.contains(field), "{field} missing: {text}");
    }
    assert!(!text.contains("backend_unavailable: resmon is not reachable"), "{text}");
}

/// Words in the instructions that look like identifiers and are not tool
/// names: the fields and values they mention.
const NOT_TOOLS: &[&str] = &[
    "routine_id",
    "missed_fires",
    "exec_id",
    "name_only",
    "requires_confirmation",
    "execution_id",
    "next_cursor",
    "backend_unavailable",
    "outcome_unknown",
];

/// Every identifier either text names is a tool of the table (one a
/// read-only session offers, for its text) or a field it knows of.
#[test]
fn the_instructions_name_only_tools_the_session_offers() {
    for read_only in [false, true] {
        let text = instructions(read_only);
        let words = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .filter(|word| word.contains('_'));
        for word in words {
            if NOT_TOOLS.contains(&word) {
                continue;
            }
            let tool = tools::find(word).unwrap_or_else(|| panic!("`{word}` is no tool of the table"));
            assert!(
                tools::is_offered(tool, read_only),
                "the read-only instructions name `{word}`, which a read-only session does not offer"
            );
        }
        for rule in ["interrupted", "caveats", "name_only"] {
            assert!(text.contains(rule), "{rule} (read-only: {read_only})");
        }
    }
}

/// Both texts route by the table the prompts share: each question whose
/// tools the session offers has its clause, naming exactly its tools in
/// order; a question the session cannot answer is not mentioned.
#[test]
fn the_instructions_route_every_question_of_the_table_in_its_order() {
    for read_only in [false, true] {
        let text = instructions(read_only);
        for route in prompts::ROUTES {
            let clause = prompts::clause_tools(text, route.question);
            if prompts::route_is_offered(route, read_only) {
                assert_eq!(
                    clause.as_deref(),
                    Some(route.tools),
                    "{:?} (read-only: {read_only}) in: {text}",
                    route.question
                );
            } else {
                assert_eq!(clause, None, "{:?} (read-only: {read_only})", route.question);
            }
        }
    }
    assert!(
        prompts::ROUTES.iter().any(|route| !prompts::route_is_offered(route, true)),
        "the filter is tried"
    );
}
