//! The command line as a person types it: what `--help` says about `call`,
//! an option written after `call`, a tool name with a slip in it, and
//! `--for`. Each mistake is answered with one sentence about it (and the
//! usage of what was being written), not the whole help.

use crate::harness::{WRITE_TOOLS, env_for, run_cli, start_fake};

fn refused(args: &[&str]) -> String {
    let output = run_cli(args, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?}");
    stderr
}

/// The whole help's sections, which a sentence about one mistake leaves out.
fn is_whole_help(text: &str) -> bool {
    text.contains("Environment:") && text.contains("Exit status:")
}

#[test]
fn the_help_says_that_call_runs_a_write_at_once() {
    let help = String::from_utf8(run_cli(&["--help"], &[]).stdout).unwrap();
    assert!(help.contains("a write runs at once, nobody is asked first"), "{help}");
    assert!(help.contains("--check --for <harness>"), "{help}");
    // Written after call, --help is still the help.
    let output = run_cli(&["call", "health", "--help"], &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), help);
}

#[test]
fn an_option_after_call_is_answered_with_where_it_belongs() {
    let fake = start_fake();
    for args in [&["call", "run_sweep", "{}", "--read-only"][..], &["call", "run_sweep", "--read-only=true"]]
    {
        let output = run_cli(args, &env_for(&fake));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("--read-only goes before call"), "{stderr}");
        assert!(stderr.contains("resmon-mcp --read-only"), "{stderr}");
        assert!(stderr.contains("call run_sweep"), "{stderr}");
        assert!(stderr.contains("Usage: resmon-mcp [--read-only] call <tool> [JSON | -]"), "{stderr}");
        assert!(!is_whole_help(&stderr), "{stderr}");
    }
    assert!(fake.requests().is_empty(), "a refused command line reached resmon");
    let stderr = refused(&["call", "--read-only", "run_sweep"]);
    assert!(stderr.contains("--read-only goes before call") && stderr.contains("call <tool>"), "{stderr}");
    let stderr = refused(&["call", "health", "{}", "--json"]);
    assert!(stderr.contains("call always prints JSON; --json goes with --check."), "{stderr}");
    let stderr = refused(&["call", "health", "--verbose"]);
    assert!(stderr.contains("no option \"--verbose\""), "{stderr}");
    let stderr = refused(&["call", "health", "{\"a\":", "1}"]);
    assert!(stderr.contains("\"1}\" is one word too many"), "{stderr}");
    assert!(!is_whole_help(&stderr), "{stderr}");
    // Before call, --read-only is taken: a write is refused by the server.
    let output = run_cli(&["--read-only", "call", "run_sweep", "{}"], &env_for(&fake));
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).contains("read_only"), "{output:?}");
    assert!(fake.requests().is_empty());
}

#[test]
fn an_unknown_tool_name_gets_the_closest_names() {
    let cases: [(&str, &str, &[&str]); 5] = [
        ("get_routines", "The closest are get_routine, list_routines", &[]),
        ("Get-Routine", "Did you mean get_routine?", &[]),
        ("list_routine", "The closest are list_routines", &[]),
        ("serch_corpus", "Did you mean search_corpus?", &[]),
        ("run", "run_sweep", &["run_routine"]),
    ];
    for (given, expected, also) in cases {
        let stderr = refused(&["call", given, "{}"]);
        assert!(stderr.contains(&format!("No tool is named {given:?}.")), "{stderr}");
        assert!(stderr.contains(expected), "{given}: {stderr}");
        for name in also {
            assert!(stderr.contains(name), "{given}: {stderr}");
        }
        // Not the whole list: a write nobody asked about is not offered.
        assert!(!stderr.contains("update_settings"), "{given}: {stderr}");
    }
    // Nothing near: the whole list, so that the person can pick.
    let stderr = refused(&["call", "xyzzy", "{}"]);
    assert!(stderr.contains("The tools are: health, "), "{stderr}");
    assert!(WRITE_TOOLS.iter().all(|tool| stderr.contains(tool)), "{stderr}");
}

#[test]
fn for_names_a_harness_and_goes_with_check() {
    let stderr = refused(&["--check", "--for", "vscode"]);
    assert!(
        stderr.contains("--for takes one of claude-code, codex, claude-desktop, cursor, gemini, opencode")
    );
    assert!(!is_whole_help(&stderr), "{stderr}");
    let stderr = refused(&["--for", "codex"]);
    assert!(stderr.contains("--for goes with --check: resmon-mcp --check --for <harness>."), "{stderr}");
    assert!(!is_whole_help(&stderr), "{stderr}");
    // Spelled as a person may: the program's name, another case, `_`.
    for spelling in ["claude", "Claude_Code", "CLAUDE-CODE"] {
        let output = run_cli(&["--check", "--for", spelling], &[]);
        assert_ne!(output.status.code(), Some(2), "{spelling}: {}", String::from_utf8_lossy(&output.stderr));
    }
}
