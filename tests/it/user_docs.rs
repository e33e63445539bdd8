//! The pages a person installing the server reads (README.md, docs/setup.md)
//! speak to that person: no test files, CI stages or byte figures (those
//! live on the contributor pages, docs/testing.md and docs/findability.md),
//! every variable the binary reads, and no advice the printed registrations
//! contradict.

use std::path::Path;

use crate::harness::run_cli;

fn read(page: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap()
}

/// Whether `text` holds `word` with no letter or digit on either side.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The lines of `text` that talk about how this project tests itself.
fn contributor_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| {
            // A path of this repository's (another project's `…/src/…` is a citation).
            let repository_path = ["tests/", "src/", "fuzz/", "xtask/"]
                .iter()
                .any(|dir| line.match_indices(dir).any(|(at, _)| !line[..at].ends_with(['/', '-'])));
            let byte_figure = line.match_indices(" bytes").any(|(at, _)| {
                line[..at]
                    .trim_end_matches([',', ' '])
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_digit())
            });
            repository_path || byte_figure || has_word(line, "CI") || line.contains(".py")
        })
        .collect()
}

#[test]
fn setup_md_speaks_to_the_person_installing() {
    let setup = read("docs/setup.md");
    let lines = contributor_lines(&setup);
    assert!(
        lines.is_empty(),
        "docs/setup.md speaks of testing (docs/testing.md is for that):\n{}",
        lines.join("\n")
    );
    // The rule finds what it is for.
    assert_eq!(
        contributor_lines("CI checks it\nsee tests/it/x.rs\n1,919 bytes\nin codex-rs/core/src/a.rs\nfine")
            .len(),
        3
    );
}

/// Every `claude mcp add` the pages show says its scope: without `-s`,
/// Claude Code registers the server for the current folder only, and the
/// person finds it missing in the next project.
#[test]
fn every_claude_code_registration_shown_says_its_scope() {
    for page in ["README.md", "docs/setup.md"] {
        let text = read(page);
        let shown: Vec<&str> = text
            .match_indices("claude mcp add")
            .map(|(at, _)| text[at..].split(['`', '\n']).next().unwrap())
            // The command named in a sentence, not a registration.
            .filter(|line| *line != "claude mcp add")
            .collect();
        assert!(!shown.is_empty(), "{page} shows no claude mcp add");
        for line in shown {
            assert!(line.contains(" -s user") || line.contains(" -s project"), "{page}: {line:?}");
        }
    }
}

/// The README names every variable `--help` lists, and says that `call`
/// runs a write at once.
#[test]
fn the_readme_names_every_variable_and_what_call_does_with_a_write() {
    let help = String::from_utf8(run_cli(&["--help"], &[]).stdout).unwrap();
    let environment = help.split("Environment:").nth(1).unwrap().split("\n\n").next().unwrap();
    let variables: Vec<&str> = environment
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|word| word.starts_with("RESMON_"))
        .map(|word| word.split('=').next().unwrap())
        .collect();
    assert_eq!(variables.len(), 6, "{environment}");
    let readme = read("README.md");
    for variable in variables {
        assert!(readme.contains(&format!("`{variable}")), "README.md does not name {variable}");
    }
    assert!(readme.contains("`call` runs a write at once, with nobody asked first"), "README.md");
}

/// On Windows the printed command lines are double-quoted for cmd.exe and
/// PowerShell alike; the page says so and sends nobody to a POSIX shell.
#[test]
fn setup_md_gives_the_windows_quoting_the_check_prints() {
    let setup = read("docs/setup.md");
    assert!(setup.contains(
        "On Windows the command lines use double quotes instead, which cmd.exe and PowerShell both read"
    ));
    assert!(
        !setup.contains("from a POSIX shell") && !setup.contains("In cmd.exe single quotes do not quote, so")
    );
}
