//! MCP prompts through the real binary (contract-notes 27): the list and the
//! texts in both eras, every refusal, what a read-only session offers, the
//! one routing the prompts and the instructions share, the size budgets,
//! and that building a prompt never reaches resmon.

use serde_json::{Map, Value, json};

use resmon_mcp::error::Code;
use resmon_mcp::prompts::{FORMATS, Kind, MAX_DAYS, MAX_ID, MAX_TEXT_CHARS, PROMPTS};

use crate::harness::{Session, connected, vars};

const STATELESS: &str = "2026-07-28";
/// The compact `prompts/list` result of the stateless era, hints and stamp included.
const LIST_BUDGET: usize = 2_048;
/// One prompt's text with every argument at its longest accepted value.
const TEXT_BUDGET: usize = 1_536;

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": STATELESS,
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}})
}

/// A request in the stateless era: `params` with the per-request `_meta`.
fn stateless(session: &mut Session, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    session.request(method, params)
}

fn read_only() -> Vec<(String, String)> {
    vars(&[("RESMON_MCP_READ_ONLY", "1")])
}

/// Every argument of a prompt at the longest value it accepts.
fn longest(prompt: &resmon_mcp::prompts::Prompt) -> Value {
    let arguments: Map<String, Value> = prompt
        .arguments
        .iter()
        .map(|argument| {
            let value = match argument.kind {
                Kind::Days => MAX_DAYS.to_string(),
                Kind::Id => MAX_ID.to_string(),
                // Four bytes each in UTF-8: the most bytes 100 characters can be.
                Kind::IdOrName | Kind::Text => "\u{1D538}".repeat(MAX_TEXT_CHARS),
                Kind::Format => FORMATS.iter().max_by_key(|format| format.len()).unwrap().to_string(),
            };
            (argument.name.to_string(), json!(value))
        })
        .collect();
    Value::Object(arguments)
}

/// Short valid values for a prompt's required arguments only.
fn required_only(prompt: &resmon_mcp::prompts::Prompt) -> Value {
    let arguments: Map<String, Value> = prompt
        .arguments
        .iter()
        .filter(|argument| argument.required)
        .map(|argument| {
            let value = match argument.kind {
                Kind::Days | Kind::Id => "12",
                Kind::IdOrName | Kind::Text => "Ada Lovelace",
                Kind::Format => "ris",
            };
            (argument.name.to_string(), json!(value))
        })
        .collect();
    Value::Object(arguments)
}

fn text_of(answer: &Value) -> &str {
    let messages = answer["result"]["messages"].as_array().unwrap_or_else(|| panic!("no messages: {answer}"));
    assert_eq!(messages.len(), 1, "{answer}");
    assert_eq!(messages[0]["role"], "user", "{answer}");
    assert_eq!(messages[0]["content"]["type"], "text", "{answer}");
    messages[0]["content"]["text"].as_str().unwrap()
}

/// A -32602 refusal, returning its message.
fn refused(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer.get("result").is_none(), "{answer}");
    answer["error"]["message"].as_str().unwrap().to_string()
}

/// The names a text gives to tools, by the table's own reading of words.
fn tools_named(text: &str) -> Vec<&'static str> {
    resmon_mcp::prompts::named_tools(text)
}

/// The words of a text as tool and field names are spelled.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|word| !word.is_empty())
}

/// The words spelled as tools and fields are (lower case, with an
/// underscore); names in capitals, such as variables, are not among them.
fn snake_case_words(text: &str) -> impl Iterator<Item = &str> {
    words(text).filter(|word| {
        word.contains('_') && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}

fn listed_tools(session: &mut Session) -> Vec<String> {
    let answer = session.request("tools/list", json!({}));
    answer["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect()
}

fn listed_prompts(result: &Value) -> Vec<&str> {
    result["prompts"].as_array().unwrap().iter().map(|prompt| prompt["name"].as_str().unwrap()).collect()
}

#[test]
fn both_eras_declare_list_and_serve_every_prompt() {
    let names: Vec<&str> = PROMPTS.iter().map(|prompt| prompt.name).collect();
    let mut session = Session::start(&[]);
    // The stateless era first, on a process that never saw initialize.
    let discover = stateless(&mut session, "server/discover", json!({}));
    assert_eq!(discover["result"]["capabilities"]["prompts"], json!({"listChanged": false}), "{discover}");
    let list = stateless(&mut session, "prompts/list", json!({}));
    let result = &list["result"];
    assert_eq!(listed_prompts(result), names);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 300_000, "the same hints as tools/list");
    assert_eq!(result["cacheScope"], "private");
    assert!(result.get("nextCursor").is_none(), "one page");
    let tools = stateless(&mut session, "tools/list", json!({}));
    assert_eq!(result["ttlMs"], tools["result"]["ttlMs"]);
    assert_eq!(result["cacheScope"], tools["result"]["cacheScope"]);
    for (listed, prompt) in result["prompts"].as_array().unwrap().iter().zip(PROMPTS) {
        assert_eq!(listed["title"], prompt.title);
        assert_eq!(listed["description"], prompt.description);
        let arguments: Vec<Value> = prompt
            .arguments
            .iter()
            .map(|a| json!({"name": a.name, "description": a.description, "required": a.required}))
            .collect();
        assert_eq!(listed["arguments"], json!(arguments), "{}", prompt.name);
    }
    let mut stateless_texts = Vec::new();
    for prompt in PROMPTS {
        let answer = stateless(
            &mut session,
            "prompts/get",
            json!({"name": prompt.name, "arguments": longest(prompt)}),
        );
        assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
        assert_eq!(answer["result"]["description"], prompt.description);
        stateless_texts.push(text_of(&answer).to_string());
    }

    // Then the handshake on the same process: the same list and texts.
    let init = session.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
    );
    assert_eq!(init["result"]["capabilities"]["prompts"], json!({"listChanged": false}), "{init}");
    session.notify("notifications/initialized", json!({}));
    let list = session.request("prompts/list", json!({}));
    assert_eq!(listed_prompts(&list["result"]), names);
    assert!(list["result"].get("ttlMs").is_none() && list["result"].get("resultType").is_none(), "{list}");
    for (prompt, stateless_text) in PROMPTS.iter().zip(&stateless_texts) {
        let answer =
            session.request("prompts/get", json!({"name": prompt.name, "arguments": longest(prompt)}));
        assert!(answer["result"].get("resultType").is_none(), "{answer}");
        assert_eq!(text_of(&answer), stateless_text, "{}", prompt.name);
        // Required arguments alone are enough; the text says what the blanks mean.
        let answer =
            session.request("prompts/get", json!({"name": prompt.name, "arguments": required_only(prompt)}));
        text_of(&answer);
    }
    let (status, _) = session.finish();
    assert!(status.success());
}

#[test]
fn arguments_take_their_defaults_and_canonical_forms() {
    let mut session = Session::initialized(&[]);
    let get = |session: &mut Session, name: &str, arguments: Value| {
        let answer = session.request("prompts/get", json!({"name": name, "arguments": arguments}));
        text_of(&answer).to_string()
    };
    // Left out, a value is written blank and the text says what a blank
    // means (the bundle's template, filled in by a host, reads the same).
    let absent = get(&mut session, "recent", json!({}));
    assert!(absent.contains("Days back: \"\" (blank means 7)"), "{absent}");
    assert!(absent.contains("Routine: \"\" (blank means every routine"), "{absent}");
    assert_eq!(get(&mut session, "recent", json!({"days": "", "routine": ""})), absent, "\"\" is absent");
    let no_arguments = session.request("prompts/get", json!({"name": "recent"}));
    assert_eq!(text_of(&no_arguments), absent);
    let null_arguments = session.request("prompts/get", json!({"name": "recent", "arguments": null}));
    assert_eq!(text_of(&null_arguments), absent);
    let thirty = get(&mut session, "recent", json!({"days": "030", "routine": "LLM safety"}));
    assert!(thirty.contains("Days back: \"30\"") && thirty.contains("Routine: \"LLM safety\""), "{thirty}");
    let by_id = get(&mut session, "recent", json!({"routine": "4"}));
    assert!(by_id.contains("Routine: \"4\"") && by_id.contains("routine_id"), "{by_id}");
    let export = get(&mut session, "export", json!({"exec_id": "115"}));
    assert!(export.contains("run 115 ") && export.contains("Format: \"\" (blank means bibtex)"), "{export}");
    let ris = get(&mut session, "export", json!({"exec_id": "115", "format": "RIS"}));
    assert!(ris.contains("Format: \"ris\""), "{ris}");
    let paper = get(&mut session, "paper", json!({"doc_id": "9007199254740991"}));
    assert!(paper.contains("paper 9007199254740991 "), "{paper}");
}

/// Each refusal is -32602 and its message names what was wrong; the session goes on.
#[test]
fn every_bad_request_is_refused_naming_what_was_wrong() {
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let cases: Vec<(Value, &[&str], Option<&str>)> = vec![
        (json!({"name": "nonsense"}), &["unknown prompt", "nonsense", "recent"], None),
        (json!({}), &["params.name"], None),
        (json!({"name": 3}), &["params.name", "string"], None),
        (json!({"name": "paper"}), &["\"doc_id\"", "needs"], Some("doc_id")),
        (json!({"name": "paper", "arguments": {"doc_id": ""}}), &["\"doc_id\"", "needs"], Some("doc_id")),
        (
            json!({"name": "paper", "arguments": {"doc_id": "7", "limit": "3"}}),
            &["\"limit\"", "doc_id"],
            None,
        ),
        (json!({"name": "recent", "arguments": {"weeks": "2"}}), &["\"weeks\"", "days, routine"], None),
        (
            json!({"name": "paper", "arguments": {"doc_id": 7}}),
            &["\"doc_id\"", "string", "a number"],
            Some("doc_id"),
        ),
        (
            json!({"name": "recent", "arguments": {"days": null}}),
            &["\"days\"", "string", "null"],
            Some("days"),
        ),
        (json!({"name": "recent", "arguments": {"days": ["7"]}}), &["\"days\"", "an array"], Some("days")),
        (json!({"name": "recent", "arguments": "days=7"}), &["params.arguments", "object"], None),
        (json!({"name": "recent", "arguments": {"days": "0"}}), &["\"days\"", "1 to 365"], Some("days")),
        (json!({"name": "recent", "arguments": {"days": "366"}}), &["\"days\"", "1 to 365"], Some("days")),
        (json!({"name": "recent", "arguments": {"days": "seven"}}), &["\"days\"", "seven"], Some("days")),
        (json!({"name": "recent", "arguments": {"days": "-7"}}), &["\"days\""], Some("days")),
        (json!({"name": "recent", "arguments": {"days": "７"}}), &["\"days\"", "ASCII"], Some("days")),
        (
            json!({"name": "paper", "arguments": {"doc_id": "0"}}),
            &["\"doc_id\"", "9007199254740991"],
            Some("doc_id"),
        ),
        (
            json!({"name": "paper", "arguments": {"doc_id": "9007199254740992"}}),
            &["\"doc_id\"", "9007199254740991"],
            Some("doc_id"),
        ),
        (json!({"name": "export", "arguments": {"exec_id": "1.5"}}), &["\"exec_id\""], Some("exec_id")),
        (
            json!({"name": "export", "arguments": {"exec_id": "1", "format": "bib"}}),
            &["\"format\"", "bibtex"],
            Some("format"),
        ),
        (
            json!({"name": "recent", "arguments": {"routine": long}}),
            &["\"routine\"", "101 characters", "100"],
            Some("routine"),
        ),
        (
            json!({"name": "recent", "arguments": {"routine": "0"}}),
            &["\"routine\"", "an id"],
            Some("routine"),
        ),
        (
            json!({"name": "person", "arguments": {"person": "a\nb"}}),
            &["\"person\"", "one line"],
            Some("person"),
        ),
        (
            json!({"name": "person", "arguments": {"person": "Ada\u{2028}Lovelace"}}),
            &["\"person\"", "one line", "U+2028"],
            Some("person"),
        ),
        (
            json!({"name": "watch", "arguments": {"name": "Ada \u{202E}ecalevol"}}),
            &["\"name\"", "one line", "U+202E"],
            Some("name"),
        ),
        (
            json!({"name": "person", "arguments": {"person": " \u{3000}\t"}}),
            &["needs the argument \"person\"", "only white space"],
            Some("person"),
        ),
        (
            json!({"name": "watch", "arguments": {"name": long}}),
            &["\"name\"", "101 characters"],
            Some("name"),
        ),
    ];
    for era in ["handshake", STATELESS] {
        let mut session = if era == STATELESS { Session::start(&[]) } else { Session::initialized(&[]) };
        for (params, needles, argument) in &cases {
            let answer = if era == STATELESS {
                stateless(&mut session, "prompts/get", params.clone())
            } else {
                session.request("prompts/get", params.clone())
            };
            let message = refused(&answer);
            for needle in *needles {
                assert!(message.contains(needle), "{era} {params}: {message:?} does not say {needle:?}");
            }
            assert_eq!(answer["error"]["data"]["argument"].as_str(), *argument, "{era} {params}: {answer}");
        }
        let cursor = if era == STATELESS {
            stateless(&mut session, "prompts/list", json!({"cursor": "2"}))
        } else {
            session.request("prompts/list", json!({"cursor": "2"}))
        };
        assert!(refused(&cursor).contains("cursor"));
        // Still serving.
        assert_eq!(session.request("ping", json!({}))["result"], json!({}));
    }
}

#[test]
fn a_read_only_session_offers_only_prompts_that_name_no_write() {
    let mut full = Session::initialized(&[]);
    let writes: Vec<&str> = resmon_mcp::tools::TOOLS
        .iter()
        .filter(|tool| tool.requires_confirmation)
        .map(|tool| tool.name)
        .collect();
    let mut hidden = Vec::new();
    for prompt in PROMPTS {
        let text =
            text_of(&full.request("prompts/get", json!({"name": prompt.name, "arguments": longest(prompt)})))
                .to_string();
        if tools_named(&text).iter().any(|tool| writes.contains(tool)) {
            hidden.push(prompt.name);
        }
    }
    assert!(!hidden.is_empty(), "some prompt leads to a write, so the filter is exercised");

    for (label, mut session) in [
        ("env", Session::initialized(&read_only())),
        ("flag", Session::start_with_args(&["--read-only=true"], &[])),
    ] {
        if label == "flag" {
            session.handshake();
        }
        let list = session.request("prompts/list", json!({}));
        let offered = listed_prompts(&list["result"]);
        let expected: Vec<&str> =
            PROMPTS.iter().map(|prompt| prompt.name).filter(|name| !hidden.contains(name)).collect();
        assert_eq!(offered, expected, "{label}");
        let modern = stateless(&mut session, "prompts/list", json!({}));
        assert_eq!(listed_prompts(&modern["result"]), expected, "{label}");
        for name in &hidden {
            // Exactly the refusal a name no prompt has gets, name aside.
            let prompt = PROMPTS.iter().find(|prompt| prompt.name == *name).unwrap();
            let hidden_answer =
                session.request("prompts/get", json!({"name": name, "arguments": longest(prompt)}));
            let unknown_answer = session.request("prompts/get", json!({"name": "zzzzz"}));
            assert_eq!(
                refused(&hidden_answer).replace(name, "?"),
                refused(&unknown_answer).replace("zzzzz", "?"),
                "{label}"
            );
            assert!(
                !refused(&hidden_answer).contains(&format!("are {name}")),
                "it is not offered as a choice"
            );
        }
    }
}

/// One routing: every tool a prompt or the server's instructions name is in
/// the tool table, and a read-only session offers every tool its prompts name.
#[test]
fn prompts_and_instructions_name_only_tools_the_session_offers() {
    for read_only_session in [false, true] {
        let env = if read_only_session { read_only() } else { Vec::new() };
        let mut session = Session::start(&env);
        let init = session.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        let instructions = init["result"]["instructions"].as_str().unwrap().to_string();
        session.notify("notifications/initialized", json!({}));
        let offered = listed_tools(&mut session);
        let every_tool: Vec<&str> = resmon_mcp::tools::TOOLS.iter().map(|tool| tool.name).collect();
        // The whole surface's listing: the read-only one lacks the writes' fields.
        let listing = Session::initialized(&[]).request("tools/list", json!({}))["result"].to_string();
        let listing: Vec<&str> = words(&listing).collect();
        let codes = [
            Code::BackendUnavailable,
            Code::NotFound,
            Code::InvalidArgument,
            Code::Conflict,
            Code::UpstreamError,
            Code::InternalError,
            Code::InstanceMismatch,
            Code::IdentityUnavailable,
        ]
        .map(Code::as_str);
        let list = session.request("prompts/list", json!({}));
        let mut named_by_prompts = Vec::new();
        for name in listed_prompts(&list["result"]) {
            let prompt = PROMPTS.iter().find(|prompt| prompt.name == name).unwrap();
            for arguments in [longest(prompt), required_only(prompt)] {
                let answer = session.request("prompts/get", json!({"name": name, "arguments": arguments}));
                let text = text_of(&answer);
                for word in snake_case_words(text) {
                    assert!(
                        every_tool.contains(&word) || listing.contains(&word),
                        "prompt {name} names {word:?}, which is neither a tool nor a word of the listing"
                    );
                }
                let named = tools_named(text);
                assert!(!named.is_empty(), "{name} names no tool");
                for tool in named {
                    assert!(
                        offered.iter().any(|offered| offered == tool),
                        "{name} names {tool}, not offered here"
                    );
                    named_by_prompts.push(tool);
                }
            }
        }
        // That the instructions and each prompt route every question by the
        // route table, in its order, is the unit tests' (src/protocol/tests.rs,
        // src/prompts/tests.rs): they read the same texts this session served.
        let named_by_instructions = tools_named(&instructions);
        assert!(!named_by_instructions.is_empty());
        for tool in &named_by_instructions {
            assert!(every_tool.contains(tool), "the instructions name {tool}");
        }
        // Words spelled like tools that are no tool: a misspelt or removed
        // tool would be one. Fields the listing spells are allowed.
        // The fields of an error's detail that say what became of a write
        // (contract-notes 26), which no output schema spells.
        let write_outcome_fields = ["outcome_unknown"];
        for word in snake_case_words(&instructions) {
            assert!(
                every_tool.contains(&word)
                    || listing.contains(&word)
                    || codes.contains(&word)
                    || write_outcome_fields.contains(&word),
                "the instructions name {word:?}, which is neither a tool, a word of the listing nor an error code"
            );
        }
        if read_only_session {
            // What the instructions name and this session does not offer is
            // a write, which it refuses with a sentence if called.
            for tool in named_by_instructions.iter().filter(|tool| !offered.iter().any(|o| o == *tool)) {
                assert!(resmon_mcp::tools::find(tool).unwrap().requires_confirmation, "{tool}");
            }
        }
        assert!(!named_by_prompts.is_empty());
    }
}

#[test]
fn prompts_fit_their_budgets() {
    let mut session = Session::start(&[]);
    let list = stateless(&mut session, "prompts/list", json!({}));
    let list_bytes = list["result"].to_string().len();
    let handshake_list = {
        let mut session = Session::initialized(&[]);
        session.request("prompts/list", json!({}))["result"].to_string().len()
    };
    println!(
        "prompts/list: {list_bytes} B compact in {STATELESS} (hints and stamp included), {handshake_list} B in \
         the handshake era, for {} prompts",
        PROMPTS.len()
    );
    assert!(list_bytes <= LIST_BUDGET, "prompts/list is {list_bytes} B, over {LIST_BUDGET} B");
    for prompt in PROMPTS {
        let answer = stateless(
            &mut session,
            "prompts/get",
            json!({"name": prompt.name, "arguments": longest(prompt)}),
        );
        let bytes = text_of(&answer).len();
        let short = text_of(&stateless(
            &mut session,
            "prompts/get",
            json!({"name": prompt.name, "arguments": required_only(prompt)}),
        ))
        .len();
        println!(
            "prompt {}: {bytes} B at the longest accepted values, {short} B with only the required ones",
            prompt.name
        );
        assert!(bytes <= TEXT_BUDGET, "{}: {bytes} B over {TEXT_BUDGET} B", prompt.name);
    }
}

/// Claude Code passes one word per argument, so a name may arrive cut short
/// (`/mcp__resmon__person Ada Lovelace` gives "Ada"): the texts that take a
/// name have the model find what it could mean and ask, and the one that
/// leads to a write asks for the full name before proposing it.
#[test]
fn a_name_that_may_be_cut_short_is_checked_with_the_person() {
    let mut session = Session::initialized(&[]);
    let mut get = |name: &str, arguments: Value| {
        text_of(&session.request("prompts/get", json!({"name": name, "arguments": arguments}))).to_string()
    };
    let person = get("person", json!({"person": "Ada"}));
    assert!(person.contains("\"Ada\"") && person.contains("maybe only its first word"), "{person}");
    assert!(person.contains("show me the candidates and ask which"), "{person}");
    let recent = get("recent", json!({"days": "14", "routine": "LLM"}));
    assert!(recent.contains("maybe only its first word"), "{recent}");
    assert!(recent.contains("show me the candidates and ask which"), "{recent}");
    let watch = get("watch", json!({"name": "Ada"}));
    let full_name = watch.find("ask me for the person's full name").unwrap_or_else(|| panic!("{watch}"));
    let proposal = watch.find("create_watch_profile").unwrap();
    assert!(full_name < proposal && watch.contains("the full name I confirmed"), "{watch}");
    // The argument descriptions say so where the harness shows them.
    let list = session.request("prompts/list", json!({}));
    for (prompt, argument) in [("recent", "routine"), ("person", "person"), ("watch", "name")] {
        let entry =
            list["result"]["prompts"].as_array().unwrap().iter().find(|p| p["name"] == prompt).unwrap();
        let described =
            entry["arguments"].as_array().unwrap().iter().find(|a| a["name"] == argument).unwrap();
        assert!(
            described["description"].as_str().unwrap().contains("Claude Code passes one word"),
            "{entry}"
        );
    }
}

/// A prompt is text: getting one sends nothing to resmon, and it works with
/// no resmon named at all.
#[test]
fn getting_a_prompt_never_reaches_resmon() {
    let (fake, mut session) = connected();
    // The session is live: a tool call reaches the fake.
    session.call("health", json!({}));
    assert!(!fake.requests().is_empty(), "the fake records what reaches it");
    fake.clear_requests();
    session.request("prompts/list", json!({}));
    for prompt in PROMPTS {
        text_of(&session.request("prompts/get", json!({"name": prompt.name, "arguments": longest(prompt)})));
        text_of(&stateless(
            &mut session,
            "prompts/get",
            json!({"name": prompt.name, "arguments": required_only(prompt)}),
        ));
    }
    refused(&session.request("prompts/get", json!({"name": "paper", "arguments": {"doc_id": "0"}})));
    let reached: Vec<String> = fake.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    assert!(reached.is_empty(), "prompts reached resmon: {reached:?}");

    let mut alone = Session::initialized(&[]);
    for prompt in PROMPTS {
        text_of(
            &alone.request("prompts/get", json!({"name": prompt.name, "arguments": required_only(prompt)})),
        );
    }
}
