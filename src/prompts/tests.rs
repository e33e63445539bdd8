//! The prompt table's unit tests: names, arguments, budgets, the read-only
//! filter, the template, and the routes each text follows.

use serde_json::{Value, json};

use super::arguments::judge;
use super::*;
use crate::tools;

const TEXT_BUDGET: usize = 1_536;

/// The words of the tool listing that are spelled like fields: a word
/// with an underscore that a prompt uses must be a tool or one of these.
fn listing_words() -> Vec<String> {
    words(tools::listing_json(false)).map(str::to_string).collect()
}

fn every_text(prompt: &Prompt) -> Vec<String> {
    vec![template_text(prompt), sample_text(prompt, true), sample_text(prompt, false)]
}

#[test]
fn names_are_short_plain_and_unique_and_arguments_too() {
    let mut names: Vec<&str> = PROMPTS.iter().map(|prompt| prompt.name).collect();
    for prompt in PROMPTS {
        assert!(
            !prompt.name.is_empty()
                && prompt.name.len() <= 12
                && prompt.name.bytes().all(|byte| byte.is_ascii_lowercase()),
            "{}",
            prompt.name
        );
        let mut arguments: Vec<&str> = prompt.arguments.iter().map(|argument| argument.name).collect();
        arguments.sort_unstable();
        arguments.dedup();
        assert_eq!(arguments.len(), prompt.arguments.len(), "{}", prompt.name);
        for argument in prompt.arguments {
            assert!(
                argument.required || argument.default.is_some() || argument.kind == Kind::IdOrName,
                "{}.{}: an optional argument says what it stands for when left out",
                prompt.name,
                argument.name
            );
            if let Some(default) = argument.default {
                assert_eq!(judge(argument.kind, default).unwrap(), default, "{}", argument.name);
                assert_eq!(argument.blank, default, "{}: the text states the default", argument.name);
            }
            assert_eq!(argument.required, argument.blank.is_empty(), "{}", argument.name);
        }
        // Required arguments come first: a harness that passes them by
        // position must not have to skip an optional one.
        let first_optional = prompt.arguments.iter().position(|argument| !argument.required);
        let last_required = prompt.arguments.iter().rposition(|argument| argument.required);
        if let (Some(optional), Some(required)) = (first_optional, last_required) {
            assert!(required < optional, "{}", prompt.name);
        }
    }
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), PROMPTS.len());
}

/// Every word spelled like a tool or field name is a tool of the table
/// or a word of the tool listing (a field, an argument, a value), so a
/// renamed or misspelled tool cannot hide in a prompt.
#[test]
fn every_tool_a_prompt_names_is_in_the_table() {
    let known = listing_words();
    for prompt in PROMPTS {
        for text in every_text(prompt) {
            for word in snake_case_words(&text) {
                assert!(
                    tools::find(word).is_some() || known.iter().any(|known| known == word),
                    "prompt {} names {word:?}, which is neither a tool nor a word of the tool listing",
                    prompt.name
                );
            }
            assert!(!named_tools(&text).is_empty(), "{} names no tool", prompt.name);
        }
    }
}

#[test]
fn a_read_only_session_offers_exactly_the_prompts_that_name_no_write() {
    let writes: Vec<&str> =
        tools::TOOLS.iter().filter(|tool| tool.requires_confirmation).map(|tool| tool.name).collect();
    let mut hidden = 0;
    for prompt in PROMPTS {
        let names_one =
            every_text(prompt).iter().any(|text| named_tools(text).iter().any(|name| writes.contains(name)));
        assert_eq!(is_offered(prompt, true), !names_one, "{}", prompt.name);
        assert!(is_offered(prompt, false), "{}", prompt.name);
        if names_one {
            hidden += 1;
            // A text that leads to a write says to ask first.
            assert!(
                every_text(prompt).iter().all(|text| text.contains("wait for my yes")),
                "{}",
                prompt.name
            );
        } else {
            assert!(
                every_text(prompt)
                    .iter()
                    .all(|text| text.contains("change nothing") || text.contains("Only read")),
                "{} says it only reads",
                prompt.name
            );
        }
    }
    assert!(hidden > 0, "the filter is exercised by at least one prompt");
    assert_eq!(listing(true).as_array().unwrap().len(), PROMPTS.len() - hidden);
}

#[test]
fn each_text_fits_its_budget_at_the_longest_accepted_values() {
    for prompt in PROMPTS {
        let longest = sample_text(prompt, true);
        println!("prompt {}: {} B at the longest values", prompt.name, longest.len());
        assert!(longest.len() <= TEXT_BUDGET, "{}: {} B over {TEXT_BUDGET} B", prompt.name, longest.len());
        for text in every_text(prompt) {
            assert!(text.len() <= longest.len() || text.contains("${arguments."), "{}", prompt.name);
        }
    }
}

#[test]
fn values_are_judged_as_the_table_says() {
    assert_eq!(judge(Kind::Days, "7").unwrap(), "7");
    assert_eq!(judge(Kind::Days, "007").unwrap(), "7");
    assert_eq!(judge(Kind::Days, "365").unwrap(), "365");
    for bad in ["0", "366", "-1", "+3", " 7", "7 ", "1e2", "seven", "٣", "99999999999999999999999"] {
        assert!(judge(Kind::Days, bad).is_err(), "{bad:?}");
    }
    assert_eq!(judge(Kind::Id, "9007199254740991").unwrap(), "9007199254740991");
    for bad in ["0", "9007199254740992", "18446744073709551616", "1.0", "0x10"] {
        assert!(judge(Kind::Id, bad).is_err(), "{bad:?}");
    }
    assert_eq!(judge(Kind::IdOrName, "12").unwrap(), "12");
    assert!(judge(Kind::IdOrName, "0").is_err(), "all digits is an id");
    assert_eq!(judge(Kind::IdOrName, "LLM safety").unwrap(), "LLM safety");
    let hundred = "é".repeat(MAX_TEXT_CHARS);
    assert_eq!(judge(Kind::Text, &hundred).unwrap(), hundred);
    assert!(judge(Kind::Text, &format!("{hundred}e")).is_err());
    assert!(judge(Kind::Text, "two\nlines").is_err());
    assert_eq!(judge(Kind::Text, "Ada Lovelace-Byron, née 1815").unwrap(), "Ada Lovelace-Byron, née 1815");
    assert_eq!(judge(Kind::Format, "BibTeX").unwrap(), "bibtex");
    assert!(judge(Kind::Format, "bib").is_err());
}

/// A one-line value refuses every line break, every control that reorders
/// text for display, a double quote and the format characters that show
/// nothing, wherever they stand, and says which one it met.
#[test]
fn a_one_line_value_refuses_line_breaks_and_bidirectional_controls() {
    let refused = [
        '\n',
        '\r',
        '\u{85}',
        '\u{2028}',
        '\u{2029}',
        '\u{61C}',
        '\u{200E}',
        '\u{200F}',
        '\u{202A}',
        '\u{202B}',
        '\u{202C}',
        '\u{202D}',
        '\u{202E}',
        '\u{2066}',
        '\u{2067}',
        '\u{2068}',
        '\u{2069}',
        '\u{0}',
        '\u{7F}',
        '"',
        '\u{200B}',
        '\u{FEFF}',
        '\u{2060}',
        '\u{E0041}',
        '\u{AD}',
        '\u{3164}',
        '\u{34F}',
    ];
    for kind in [Kind::Text, Kind::IdOrName] {
        for c in refused {
            for text in [format!("Grace{c}Hopper"), format!("{c}Grace"), format!("Grace{c}")] {
                let why = judge(kind, &text).expect_err(&format!("{kind:?} {text:?}"));
                assert!(why.contains(&format!("U+{:04X}", u32::from(c))), "{why}");
            }
        }
        // Spaces of every kind stay, and so do the joiners names in some
        // scripts need: they neither break the line nor hide text.
        for kept in
            ["Grace\u{3000}Hopper", "Grace\u{A0}Hopper", "Grace\u{200D}Hopper", "مریم\u{200C}ها", "O'Brien"]
        {
            assert_eq!(judge(kind, kept).unwrap(), kept);
        }
    }
}

/// A value of only white space is a value left blank: a required argument
/// so given is missing, and an optional one takes its default.
#[test]
fn a_value_of_only_white_space_is_blank() {
    for spaces in [" ", "\t", "   ", "\u{3000}", "\u{A0}\u{2003}", "\u{85}", "\u{2028}"] {
        let error = get(&json!({"name": "person", "arguments": {"person": spaces}}), false).unwrap_err();
        assert_eq!(error.argument, Some("person"), "{spaces:?}");
        assert!(error.message.contains("needs the argument \"person\""), "{}", error.message);
        assert!(error.message.contains("only white space"), "{}", error.message);
        let blank = get(&json!({"name": "recent"}), false).unwrap();
        let spaced = get(&json!({"name": "recent", "arguments": {"routine": spaces, "days": spaces}}), false);
        assert_eq!(spaced.unwrap(), blank, "{spaces:?}");
    }
}

/// The values a test gives: every argument, or only the required ones.
fn given(prompt: &Prompt, every: bool) -> serde_json::Map<String, Value> {
    prompt
        .arguments
        .iter()
        .filter(|argument| every || argument.required)
        .map(|argument| {
            let value = match argument.kind {
                Kind::Days => "30",
                Kind::Id => "42",
                Kind::IdOrName | Kind::Text => "Grace Hopper",
                Kind::Format => "ris",
            };
            (argument.name.to_string(), json!(value))
        })
        .collect()
}

/// The bundle's template, filled in as a host does: each placeholder
/// replaced by the value given, or by nothing for one left out. That
/// is the text `prompts/get` serves for the same arguments, whether
/// the optional ones are given or not.
#[test]
fn the_template_is_the_text_once_values_replace_its_placeholders() {
    for prompt in PROMPTS {
        let template = template_text(prompt);
        for every in [true, false] {
            let given = given(prompt, every);
            let mut filled = template.clone();
            for argument in prompt.arguments {
                let value = given.get(argument.name).and_then(Value::as_str).unwrap_or_default();
                filled = filled.replace(&format!("${{arguments.{}}}", argument.name), value);
            }
            assert!(!filled.contains("${"), "{filled}");
            let got = get(&json!({"name": prompt.name, "arguments": given}), false).unwrap();
            assert_eq!(
                got["messages"][0]["content"]["text"], filled,
                "{} (every argument: {every})",
                prompt.name
            );
        }
    }
}

/// An optional value stands in one place, quoted, and what a blank
/// means follows it: its default, or what leaving it out asks for. So
/// a text filled with nothing there still says what to do.
#[test]
fn an_optional_value_left_blank_says_what_it_stands_for() {
    for prompt in PROMPTS {
        let template = template_text(prompt);
        for argument in prompt.arguments.iter().filter(|argument| !argument.required) {
            let placeholder = format!("\"${{arguments.{}}}\" (blank means {}", argument.name, argument.blank);
            assert_eq!(
                template.matches(&format!("${{arguments.{}}}", argument.name)).count(),
                1,
                "{template}"
            );
            assert!(template.contains(&placeholder), "{}: no {placeholder:?} in {template}", prompt.name);
        }
    }
    let blank = get(&json!({"name": "recent"}), false).unwrap();
    let text = blank["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("Days back: \"\" (blank means 7)"), "{text}");
    assert!(text.contains("Routine: \"\" (blank means every routine"), "{text}");
}

/// Each prompt names exactly the tools of its questions, in the order
/// the route table gives them, in every form of its text.
#[test]
fn each_prompt_names_its_routes_tools_in_order() {
    for prompt in PROMPTS {
        assert!(!prompt.routes.is_empty(), "{}", prompt.name);
        for route in prompt.routes {
            assert!(ROUTES.iter().any(|known| known.question == route.question), "{}", route.question);
        }
        for text in every_text(prompt) {
            assert_eq!(named_tools(&text), routed_tools(prompt), "{}: {text}", prompt.name);
        }
    }
}

#[test]
fn routes_name_tools_of_the_table_and_clauses_are_read_as_written() {
    for route in ROUTES {
        assert!(!route.tools.is_empty(), "{}", route.question);
        for name in route.tools {
            assert!(tools::find(name).is_some(), "{}: {name} is no tool", route.question);
        }
    }
    let text =
        "a: health (x; y), get_execution; b: search_corpus. c: list_routines (a. b) and explain_match.";
    assert_eq!(clause_tools(text, "a"), Some(vec!["health", "get_execution"]));
    assert_eq!(clause_tools(text, "b"), Some(vec!["search_corpus"]));
    assert_eq!(clause_tools(text, "c"), Some(vec!["list_routines", "explain_match"]));
    assert_eq!(clause_tools(text, "d"), None);
}
