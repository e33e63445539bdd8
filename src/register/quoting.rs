//! Each value quoted for where it is pasted: a word for a POSIX shell, a
//! word for cmd.exe and PowerShell alike, a TOML basic string. (JSON strings
//! are serde_json's.)

/// One word for a POSIX shell (sh, bash, zsh): left bare when it holds only
/// characters no shell treats specially, otherwise single-quoted, inside
/// which nothing is special; a single quote itself is closed, escaped and
/// reopened. `~` is never left bare: bash expands it after `=` even in an
/// argument.
pub(crate) fn shell_word(value: &str) -> String {
    let bare = |c: char| c.is_ascii_alphanumeric() || "@%+:,./_-".contains(c);
    if !value.is_empty() && value.chars().all(bare) {
        return value.to_string();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// One word for the command lines on this platform: POSIX shell quoting,
/// or on Windows double quotes, which cmd.exe and PowerShell both honour
/// (single quotes mean nothing to cmd.exe). A value that no double-quoted
/// form carries unchanged through both falls back to POSIX quoting, and the
/// human report then says to use a JSON block (`command_lines_are_faithful`).
pub(crate) fn command_word(value: &str) -> String {
    if cfg!(windows) { windows_word(value).unwrap_or_else(|| shell_word(value)) } else { shell_word(value) }
}

/// A word for cmd.exe and PowerShell alike: bare when it holds only plain
/// characters, else in double quotes, with trailing backslashes doubled so
/// the closing quote is not read as escaped (the rule the C runtime and
/// Node.js use to split a Windows command line). None when the value holds
/// a character one of the two shells would act on inside double quotes
/// (`"`, `%` for cmd.exe; `$` and `` ` `` for PowerShell).
pub(crate) fn windows_word(value: &str) -> Option<String> {
    if value.chars().any(|c| "\"%$`".contains(c) || c.is_control()) {
        return None;
    }
    let bare = |c: char| c.is_ascii_alphanumeric() || "@+:,./\\_-".contains(c);
    if !value.is_empty() && value.chars().all(bare) {
        return Some(value.to_string());
    }
    let trailing = value.len() - value.trim_end_matches('\\').len();
    Some(format!("\"{value}{}\"", "\\".repeat(trailing)))
}

/// A TOML basic string: backslashes and quotes escaped, and every control
/// character written as an escape, since TOML allows none of them raw.
pub(crate) fn toml_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
