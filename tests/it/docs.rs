//! docs/tools.md is generated from the tool listing (and so from the tool
//! table) and must match it. After changing a tool, regenerate with
//! `UPDATE_DOCS=1 cargo test --test it docs`.

use serde_json::{Value, json};

use crate::harness::Session;

fn type_of(schema: &Value) -> String {
    let base = match schema["type"].as_str() {
        Some("array") => format!("array of {}", type_of(&schema["items"])),
        Some(kind) => kind.to_string(),
        None => "any (may be null)".to_string(),
    };
    match schema["enum"].as_array() {
        Some(values) => {
            let values: Vec<String> =
                values.iter().map(|value| format!("`{}`", value.as_str().unwrap_or(""))).collect();
            format!("{base}: {}", values.join(" \\| "))
        }
        None => base,
    }
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn render(tools: &[Value]) -> String {
    let mut out = String::from(
        "# Tools\n\n\
         Generated from the tool table by `UPDATE_DOCS=1 cargo test --test it docs`; a test fails when this file \
         and the table disagree. Contract 1.0 \"Tools\" is the specification.\n\n\
         Every tool answers either its result (as `structuredContent`, and the same JSON as text) or an error \
         result with `isError: true` and no `structuredContent`: its first text block is a sentence, `<code>: <message>`, \
         and its second holds the error object `{\"error\", \"message\", \"detail\"}` as JSON. Error codes: \
         `backend_unavailable` (resmon not named, not running, or refusing the token: see [docs/setup.md](setup.md)), \
         `invalid_argument` (the arguments, before anything is sent; also every write in a read-only session), \
         `not_found`, `conflict`, `upstream_error` (resmon failed or answered something unusable), \
         `internal_error`, and for calls that name `expected_runtime_id`, `instance_mismatch` and \
         `identity_unavailable`.\n\n",
    );
    out.push_str("| Tool | Changes something | Asks for confirmation |\n|---|---|---|\n");
    for tool in tools {
        let writes = tool["requires_confirmation"] == json!(true);
        let name = tool["name"].as_str().unwrap();
        out.push_str(&format!(
            "| [`{name}`](#{name}) | {} | {} |\n",
            if writes { "yes" } else { "no" },
            if writes { "yes (`requires_confirmation: true`)" } else { "no" }
        ));
    }
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        out.push_str(&format!("\n## {name}\n\n{}\n\n", tool["title"].as_str().unwrap()));
        out.push_str(&format!("{}\n\n", tool["description"].as_str().unwrap()));
        let hints = &tool["annotations"];
        out.push_str(&format!(
            "- requires_confirmation: `{}`; readOnlyHint `{}`, destructiveHint `{}`, idempotentHint `{}`, openWorldHint `{}`\n",
            tool["requires_confirmation"],
            hints["readOnlyHint"],
            hints["destructiveHint"],
            hints["idempotentHint"],
            hints["openWorldHint"]
        ));
        let meta = &tool["_meta"];
        out.push_str(&format!(
            "- Claude Code: {}; search words `{}` ([docs/findability.md](findability.md))\n",
            if meta["anthropic/alwaysLoad"] == json!(true) {
                "loaded before any search"
            } else {
                "deferred until a tool search finds it"
            },
            meta["anthropic/searchHint"].as_str().unwrap_or("")
        ));
        let input = &tool["inputSchema"];
        let required: Vec<&str> =
            input["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let properties = input["properties"].as_object().unwrap();
        if properties.is_empty() {
            out.push_str("\nArguments: none.\n");
        } else {
            out.push_str("\n| Argument | Type | Required | Notes |\n|---|---|---|---|\n");
            for (argument, schema) in properties {
                let mut notes = schema["description"].as_str().unwrap_or("").to_string();
                if let Some(minimum) = schema["minimum"].as_i64() {
                    notes = format!("{notes} (at least {minimum})").trim().to_string();
                }
                if let Some(max) = schema["maxItems"].as_u64() {
                    notes = format!("{notes} (at most {max} entries)").trim().to_string();
                }
                if let Some(values) = schema["additionalProperties"]["description"].as_str() {
                    notes = format!("{notes} Values: {values}").trim().to_string();
                }
                out.push_str(&format!(
                    "| `{argument}` | {} | {} | {} |\n",
                    cell(&type_of(schema)),
                    if required.contains(&argument.as_str()) { "yes" } else { "no" },
                    cell(&notes)
                ));
            }
        }
        let output = &tool["outputSchema"];
        let always: Vec<&str> =
            output["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        out.push_str("\n| Answer field | Type | Always present | Notes |\n|---|---|---|---|\n");
        for (field, schema) in output["properties"].as_object().unwrap() {
            out.push_str(&format!(
                "| `{field}` | {} | {} | {} |\n",
                cell(&type_of(schema)),
                if always.contains(&field.as_str()) { "yes" } else { "no" },
                cell(schema["description"].as_str().unwrap_or(""))
            ));
        }
    }
    out
}

#[test]
fn docs_tools_md_matches_the_tool_table() {
    let mut session = Session::initialized(&[]);
    let answer = session.request("tools/list", json!({}));
    let rendered = render(answer["result"]["tools"].as_array().unwrap());
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tools.md");
    if std::env::var("UPDATE_DOCS").is_ok_and(|value| value == "1") {
        std::fs::write(path, &rendered).unwrap();
    }
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == rendered,
        "docs/tools.md is out of date with the tool table; run UPDATE_DOCS=1 cargo test --test it docs"
    );
}

/// Names in the docs that begin with a tool's verb but are not tools: each
/// must still be defined in the code (a `fn` or a field), so that this list
/// cannot excuse a name nothing has any more.
const NOT_TOOLS_IN_DOCS: &[&str] = &["search_hint", "run_cli", "find_candidate"];

/// The words of a text, spelled as Rust and tool names are.
fn snake_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|word| word.contains('_'))
}

/// The words of `text` that look like a tool but name none: a word that
/// opens with the verb of a tool of the table (`get_`, `list_`, `run_`, …),
/// and a name as a harness shows it (`mcp__resmon__…`, `resmon_…`), which
/// must be a tool or a prompt.
fn stray_tool_names(text: &str) -> Vec<String> {
    let tools = &resmon_mcp::tools::TOOLS;
    let verbs: Vec<&str> =
        tools.iter().filter_map(|tool| tool.name.split_once('_')).map(|(verb, _)| verb).collect();
    let mut stray = Vec::new();
    for word in snake_words(text) {
        let prefixed = ["mcp__resmon__", "mcp_resmon_", "resmon_"].iter().find_map(|p| word.strip_prefix(p));
        let bad = match prefixed {
            // resmon_mcp: the library crate, and the wheel's file names.
            Some("" | "mcp") => false,
            Some(rest) => {
                resmon_mcp::tools::find(rest).is_none() && resmon_mcp::prompts::find(rest).is_none()
            }
            None => {
                let verb = word.split('_').next().unwrap_or("");
                verbs.contains(&verb)
                    && resmon_mcp::tools::find(word).is_none()
                    && !NOT_TOOLS_IN_DOCS.contains(&word)
            }
        };
        if bad && !stray.iter().any(|seen| seen == word) {
            stray.push(word.to_string());
        }
    }
    stray
}

/// Prose that names tools names tools of the table: README.md and every
/// file of docs/ (the instructions and the prompts are also held to the
/// route table where they are built, src/protocol.rs and
/// src/prompts/tests.rs, and the question lists in tests/it/findability.rs).
#[test]
fn the_docs_name_only_tools_of_the_table() {
    // The rule must see a stray name, or it proves nothing.
    assert_eq!(
        stray_tool_names("`get_routines` and mcp__resmon__run_sweeps, not `get_routine` or `run_cli`"),
        vec!["get_routines", "mcp__resmon__run_sweeps"]
    );
    assert!(stray_tool_names("`mcp__resmon__paper` (a prompt) and resmon_run_sweep").is_empty());
    assert!(stray_tool_names("the wheel resmon_mcp-0.1.0-py3-none-any.whl").is_empty());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            files.push(path);
        }
    }
    assert!(files.len() > 5, "{files:?}");
    let mut problems = Vec::new();
    for path in &files {
        let stray = stray_tool_names(&std::fs::read_to_string(path).unwrap());
        if !stray.is_empty() {
            problems.push(format!("{} names {stray:?}, which are no tools of the table", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Each excused name is still something the code defines.
    let mut code = String::new();
    for dir in ["src", "src/tools", "src/discovery", "tests/it"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "rs") {
                code.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    for name in NOT_TOOLS_IN_DOCS {
        assert!(
            code.contains(&format!("fn {name}(")) || code.contains(&format!("pub {name}:")),
            "{name} is excused as no tool, but no code defines it any more"
        );
    }
}

/// The prose inside Rust source: the text of its comments (line and block)
/// and of its string literals (plain, byte and raw), each followed by a
/// newline. Code is left out, so that a function or field named like a tool
/// is not taken for one; an escape (`\n`, `\"`) reads as a space, so that a
/// word right after it is read whole.
fn prose_of_rust(code: &str) -> String {
    let mut prose = String::new();
    let bytes = code.as_bytes();
    let after_identifier =
        |at: usize| at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
    let mut at = 0;
    while at < bytes.len() {
        let rest = &code[at..];
        let raw = rest.strip_prefix("br").or_else(|| rest.strip_prefix('r'));
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            prose.push_str(&rest[..end]);
            prose.push('\n');
            at += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |end| end + 2);
            prose.push_str(&rest[..end]);
            prose.push('\n');
            at += end;
        } else if let Some(raw) = raw
            && raw.trim_start_matches('#').starts_with('"')
            && !after_identifier(at)
        {
            let hashes = raw.len() - raw.trim_start_matches('#').len();
            let open = rest.len() - raw.len() + hashes + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = rest[open..].find(&close).map_or(rest.len(), |end| open + end);
            prose.push_str(&rest[open..end]);
            prose.push('\n');
            at += (end + close.len()).min(rest.len());
        } else if rest.starts_with('"') {
            let mut chars = rest.char_indices().skip(1);
            let mut end = rest.len();
            while let Some((index, c)) = chars.next() {
                match c {
                    '"' => {
                        end = index + 1;
                        break;
                    }
                    '\\' => {
                        chars.next();
                        prose.push(' ');
                    }
                    c => prose.push(c),
                }
            }
            prose.push('\n');
            at += end;
        } else if let Some(after) = rest.strip_prefix('\'') {
            // A char literal ('"', '\'') is passed over whole; a lifetime
            // ('static) is one quote. An escape's backslash and the byte
            // after it cannot close the literal.
            let skip = if after.starts_with('\\') { 2 } else { 0 };
            let quoted = after.get(skip..).and_then(|tail| tail.find('\'')).map(|len| len + skip);
            let quoted = quoted.filter(|&len| len <= 10 && !after[..len].contains(char::is_whitespace));
            at += quoted.map_or(1, |len| len + 2);
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    prose
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The sentences the server writes (descriptions, errors, the instructions)
/// and the comments beside its code name only tools of the table, so that a
/// renamed tool cannot leave a sentence pointing at the old name.
#[test]
fn the_sources_sentences_and_comments_name_only_tools_of_the_table() {
    // The reading must find words in strings and comments and none in code.
    let sample = r##"fn get_routines() {} // see list_routine
        let s = "run_sweeps"; let r = r#""get_runs""#; let q = '"'; let e = '\''; let c = 'x';
        let b = br#"""#; let n = "x\nlist_routinez"; /* get_thing */ let y = b"find_similars";
        fn f<'a>(x: &'a str) -> &'a str { "export_all" }"##;
    assert_eq!(
        stray_tool_names(&prose_of_rust(sample)),
        vec![
            "list_routine",
            "run_sweeps",
            "get_runs",
            "list_routinez",
            "get_thing",
            "find_similars",
            "export_all"
        ]
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 40, "{files:?}");
    let mut problems = Vec::new();
    for path in &files {
        let mut stray = stray_tool_names(&prose_of_rust(&std::fs::read_to_string(path).unwrap()));
        stray.retain(|word| !RESMONS_NAMES.contains(&word.as_str()));
        if !stray.is_empty() {
            problems.push(format!("{} names {stray:?}, which are no tools of the table", path.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let policy = std::fs::read_to_string(root.join("src/settings_policy.rs")).unwrap();
    for name in RESMONS_NAMES {
        assert!(policy.contains(&format!("\"{name}\"")), "{name} is excused, but no settings rule names it");
    }
}

/// resmon's own names that open with a tool's verb: a key of its settings
/// that src/settings_policy.rs names (the test above fails when it no
/// longer does, so that this list cannot excuse a name nothing uses).
const RESMONS_NAMES: &[&str] = &["export_directory"];

/// The pages a contributor reads line by line (docs/CONTRIBUTING.md), whose
/// lines are kept short enough to follow, tables and code blocks included.
const CONTRIBUTOR_PAGES: [&str; 2] = ["docs/ARCHITECTURE.md", "docs/CONTRIBUTING.md"];
const LONGEST_LINE: usize = 200;

/// The lines of `text` over `LONGEST_LINE` characters, each as `line N (M characters)`.
fn long_lines(text: &str) -> Vec<String> {
    text.lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line.chars().count()))
        .filter(|&(_, length)| length > LONGEST_LINE)
        .map(|(number, length)| format!("line {number} ({length} characters)"))
        .collect()
}

#[test]
fn the_contributor_pages_have_lines_a_reader_can_follow() {
    // Characters are counted, not bytes.
    let sample = format!("short\n{}\n{}\n", "é".repeat(LONGEST_LINE), "x".repeat(LONGEST_LINE + 1));
    assert_eq!(long_lines(&sample), ["line 3 (201 characters)"]);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut problems = Vec::new();
    for page in CONTRIBUTOR_PAGES {
        for long in long_lines(&std::fs::read_to_string(root.join(page)).unwrap()) {
            problems.push(format!("{page}: {long}"));
        }
    }
    assert!(
        problems.is_empty(),
        "break these lines into short sentences or sub-bullets:\n{}",
        problems.join("\n")
    );
}

/// The folders a path of this repository starts with, as the pages write it.
const REPOSITORY_FOLDERS: [&str; 10] =
    ["src/", "tests/", "docs/", "examples/", "fixtures/", "bundle/", "xtask/", "fuzz/", ".ci/", ".github/"];

/// The paths of this repository that `text` names and that are not under
/// `root`. A path is a word that opens with one of `REPOSITORY_FOLDERS`; a
/// placeholder (`tests/<stage>/run.sh`, `tests/…/run.sh`) is no path, and a
/// `*` stands for any name in its folder that starts as the path does.
fn missing_paths(text: &str, root: &std::path::Path) -> Vec<String> {
    let path_char = |c: char| c.is_alphanumeric() || "_./-*<>…".contains(c);
    let mut missing = Vec::new();
    for word in text.split(|c: char| !path_char(c)) {
        let path = word.trim_end_matches('.');
        let placeholder = path.contains(['<', '>', '…']);
        if placeholder || !REPOSITORY_FOLDERS.iter().any(|folder| path.starts_with(folder)) {
            continue;
        }
        let found = match path.split_once('*') {
            None => root.join(path).exists(),
            Some((before, _)) => {
                let (folder, start) = before.rsplit_once('/').unwrap_or(("", before));
                std::fs::read_dir(root.join(folder)).is_ok_and(|entries| {
                    entries.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with(start))
                })
            }
        };
        if !found && !missing.iter().any(|seen| seen == path) {
            missing.push(path.to_string());
        }
    }
    missing
}

/// What the contributor pages tell a person to run names files that exist,
/// and docs/CONTRIBUTING.md says how to run every stage `.ci/run` runs.
#[test]
fn the_contributor_pages_name_files_that_exist_and_every_stage() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The rule must see a path that leads nowhere, or it proves nothing.
    let sample = "Run `bash tests/gone/run.sh` or bash tests/<stage>/run.sh (tests/demo/run.sh, see docs/tools.md).\n\
                  `UPDATE_DOCS=1` rewrites src/tools/listing-*.json, not src/tools/gone-*.json or examples/gone.rs.";
    assert_eq!(
        missing_paths(sample, root),
        ["tests/gone/run.sh", "src/tools/gone-*.json", "examples/gone.rs"]
    );
    let mut problems = Vec::new();
    for page in CONTRIBUTOR_PAGES {
        for path in missing_paths(&std::fs::read_to_string(root.join(page)).unwrap(), root) {
            problems.push(format!("{page} names {path}, which is not in the repository"));
        }
    }
    let contributing = std::fs::read_to_string(root.join("docs/CONTRIBUTING.md")).unwrap();
    let architecture = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    // A stage line may end with a comment naming the program it drives.
    let stages: Vec<&str> = ci
        .lines()
        .filter_map(|line| line.strip_prefix("stage "))
        .map(|rest| rest.split('#').next().unwrap_or(rest).trim())
        .collect();
    assert!(stages.len() >= 10, "{stages:?}");
    for script in stages {
        if !contributing.contains(&format!("`bash {script}`")) {
            problems.push(format!("docs/CONTRIBUTING.md does not say how to run `bash {script}`"));
        }
        let folder = script.trim_end_matches("run.sh");
        if !architecture.contains(&format!("`{folder}`")) {
            problems.push(format!("docs/ARCHITECTURE.md's test map has no row for `{folder}`"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
