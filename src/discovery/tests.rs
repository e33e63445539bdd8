//! Unit tests of discovery: the candidate, the port and token reading, and the refusals with their advice; they own no code of their own.

use super::*;

#[test]
fn ports_are_digits_in_range_only() {
    assert_eq!(parse_port("51734"), Some(51734));
    assert_eq!(parse_port(" 8742\n"), Some(8742));
    assert_eq!(parse_port("8742\r\n"), Some(8742));
    for bad in ["", "0", "65536", "-1", "+80", "80a", "1e3", "0x50", "８０", "\"8742\""] {
        assert_eq!(parse_port(bad), None, "{bad:?}");
    }
}

#[test]
fn tokens_follow_resmons_pattern() {
    assert!(is_usable_token(&"a".repeat(43)));
    assert!(is_usable_token(&"A-_9".repeat(32)));
    assert!(!is_usable_token(&"a".repeat(42)));
    assert!(!is_usable_token(&"a".repeat(129)));
    assert!(!is_usable_token(&format!("{}=", "a".repeat(43))));
}

#[test]
fn the_missing_home_is_named_per_platform() {
    let windows = no_home(Platform::Windows).message;
    assert!(windows.contains("neither LOCALAPPDATA nor USERPROFILE is set"), "{windows}");
    assert!(!windows.contains("HOME is"), "{windows}");
    assert!(no_home(Platform::MacOs).message.contains("(HOME is not set)"));
    assert!(no_home(Platform::Xdg).message.contains("neither XDG_STATE_HOME nor HOME is set"));
}

/// Every sentence of every discovery refusal opens with a capital letter.
#[test]
fn sentences_start_with_a_capital() {
    let path = Path::new("/x/resmon.port");
    let errors = [
        empty_port(),
        quoted("RESMON_STATE_DIR", "\"/x\""),
        quoted("RESMON_PORT", "'80'"),
        unexpanded("RESMON_STATE_DIR", "~/x", "~", &Environment::default()),
        malformed("the port file /x/resmon.port", "abc"),
        malformed("RESMON_PORT", "\"80\""),
        utf16_port_file(path, "8742", "UTF-16LE"),
        no_port_named_in(path, &Environment::default()),
        named_port_file_missing(path, PortFileSource::Variable, true, &Environment::default()),
        named_port_file_missing(path, PortFileSource::Variable, false, &Environment::default()),
        named_port_file_missing(path, PortFileSource::BesideDatabase, true, &Environment::default()),
        named_port_file_missing(path, PortFileSource::BesideDatabase, false, &Environment::default()),
        named_port_without_token(8742, Path::new("/x/api-token-8742"), true, &Environment::default()),
        named_port_without_token(8742, Path::new("/x/api-token-8742"), false, &Environment::default()),
        no_home(Platform::Windows),
        state_dir_names_no_instance(
            Path::new("/x"),
            Some(Path::new("/h/.local/state/resmon")),
            &Environment::default(),
        ),
        state_dir_names_no_instance(Path::new("/x"), None, &Environment::default()),
        port_file_unreadable(path, PortFileSource::Variable, &Unreadable::Directory),
        port_file_unreadable(path, PortFileSource::DefaultFolder, &Unreadable::NotRegular("a socket")),
    ];
    for error in errors {
        let message = &error.message;
        // Split after ". " so that a path or a value never counts as a sentence start.
        for sentence in message.split(". ") {
            let first = sentence.chars().next().unwrap();
            assert!(!first.is_lowercase(), "{sentence:?} in {message:?}");
        }
    }
}
