//! What discovery reads from the process environment, read once, and the
//! per-platform facts that go with it: which variables name the home and
//! state folders, and how a path is written.

use std::path::{Path, PathBuf};

/// The operating systems whose default state folder differs, as resmon
/// itself computes it. A value rather than `cfg!` alone, so that
/// the Windows and macOS wording can be tested on any host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Platform {
    Windows,
    MacOs,
    /// Linux and the other POSIX systems: the XDG layout.
    Xdg,
}

impl Platform {
    pub(crate) fn current() -> Platform {
        if cfg!(windows) {
            Platform::Windows
        } else if cfg!(target_os = "macos") {
            Platform::MacOs
        } else {
            Platform::Xdg
        }
    }

    /// The variable that names the home folder. Windows programs (resmon's
    /// Python among them) take it from USERPROFILE and ignore HOME, which on
    /// Windows is often a leftover of a POSIX toolchain.
    pub(crate) fn home_variable(self) -> &'static str {
        match self {
            Platform::Windows => "USERPROFILE",
            Platform::MacOs | Platform::Xdg => "HOME",
        }
    }

    /// The variables the default state folder is derived from, in the order
    /// they are tried, for a sentence that says which ones were missing.
    pub(crate) fn state_variables(self) -> &'static [&'static str] {
        match self {
            Platform::Windows => &["LOCALAPPDATA", "USERPROFILE"],
            Platform::MacOs => &["HOME"],
            Platform::Xdg => &["XDG_STATE_HOME", "HOME"],
        }
    }
}

/// The variables discovery reads, captured once so that tests and fuzzers can
/// supply their own.
///
/// The empty string: RESMON_PORT set to "" is kept as `Some("")`, because
/// contract-notes 2 makes it malformed (someone meant to name a port, and
/// reading the port file instead could reach another instance). For
/// RESMON_PORT_FILE, RESMON_DB_PATH and RESMON_STATE_DIR resmon itself treats
/// an empty value as unset when it decides where to write its files, so this
/// server does the same and thereby reads the files resmon wrote; the names
/// are kept in `empty` so that the trace and the messages can point at what
/// is probably a mistake. For the OS variables (HOME, USERPROFILE,
/// LOCALAPPDATA, XDG_STATE_HOME) empty means unset, as it does for every
/// program that reads them.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub port: Option<String>,
    pub port_file: Option<String>,
    pub db_path: Option<String>,
    pub state_dir: Option<String>,
    /// The home folder from the platform's own variable (`Platform::home_variable`).
    pub home: Option<String>,
    pub xdg_state_home: Option<String>,
    pub local_app_data: Option<String>,
    /// RESMON_* path variables that were set to the empty string.
    pub empty: Vec<&'static str>,
    /// RESMON_* variables that were set to something that is not valid
    /// Unicode: set, so never read as unset, and refused by name.
    pub not_unicode: Vec<&'static str>,
}

impl Environment {
    pub(crate) fn from_process() -> Environment {
        let platform = Platform::current();
        let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let not_unicode: Vec<&'static str> =
            ["RESMON_PORT", "RESMON_PORT_FILE", "RESMON_DB_PATH", "RESMON_STATE_DIR"]
                .into_iter()
                .filter(|name| matches!(std::env::var(name), Err(std::env::VarError::NotUnicode(_))))
                .collect();
        let mut empty = Vec::new();
        let mut resmon_path = |name: &'static str| match std::env::var(name) {
            Ok(value) if value.is_empty() => {
                empty.push(name);
                None
            }
            Ok(value) => Some(value),
            Err(_) => None,
        };
        let port_file = resmon_path("RESMON_PORT_FILE");
        let db_path = resmon_path("RESMON_DB_PATH");
        let state_dir = resmon_path("RESMON_STATE_DIR");
        Environment {
            // Not filtered: an empty RESMON_PORT must reach the parser.
            port: std::env::var("RESMON_PORT").ok(),
            port_file,
            db_path,
            state_dir,
            home: read(platform.home_variable()),
            xdg_state_home: read("XDG_STATE_HOME"),
            local_app_data: read("LOCALAPPDATA"),
            empty,
            not_unicode,
        }
    }

    pub(crate) fn is_empty(&self, name: &str) -> bool {
        self.empty.contains(&name)
    }
}

/// The default state folder, the same one resmon's backend, daemon and app
/// use, or None when the variables it is derived from are unset.
pub(crate) fn default_state_dir(platform: Platform, env: &Environment) -> Option<PathBuf> {
    match platform {
        Platform::MacOs => Some(native(env.home.as_ref()?).join("Library/Application Support/resmon")),
        Platform::Windows => match &env.local_app_data {
            Some(local) => Some(native(local).join("resmon")),
            None => Some(native(env.home.as_ref()?).join("AppData").join("Local").join("resmon")),
        },
        Platform::Xdg => match &env.xdg_state_home {
            Some(xdg) => Some(native(xdg).join("resmon")),
            None => Some(native(env.home.as_ref()?).join(".local/state/resmon")),
        },
    }
}

/// Whether RESMON_STATE_DIR names the default state directory: `None` when
/// it is unset (or empty, which counts as unset), `Some(true)` when it names
/// the default folder however it is spelled, and `Some(false)` when it names
/// another folder, or when the default cannot be worked out here (HOME,
/// LOCALAPPDATA or USERPROFILE unset), since a folder that cannot be shown to
/// be the default is treated as another one (contract-notes 1).
pub(crate) fn state_dir_is_default(env: &Environment) -> Option<bool> {
    let named = env.state_dir.as_ref()?;
    let platform = Platform::current();
    Some(
        default_state_dir(platform, env)
            .is_some_and(|default| same_folder(&native(named), &default, platform)),
    )
}

/// Whether two spellings name the same folder, decided on the text alone:
/// both are made absolute against the working directory, then compared in
/// `folder_key`'s form. Links are not followed and `..` is not resolved, so a
/// folder reached another way counts as another folder: the safe side, where
/// the cost is a refusal that says what to set, never a wrong instance.
pub(crate) fn same_folder(a: &Path, b: &Path, platform: Platform) -> bool {
    let key = |path: &Path| {
        let absolute = std::path::absolute(path).ok()?;
        Some(folder_key(absolute.to_str()?, platform))
    };
    matches!((key(a), key(b)), (Some(a), Some(b)) if a == b)
}

/// An absolute path written one way for comparison: on Windows every `/`
/// becomes `\`; repeated separators become one (a leading `\\` of a network
/// path stays); no separator at the end unless the path is a root; and on
/// Windows and macOS, whose file systems ignore case by default, each
/// character in lower case (only where that is one character, so `ß` never
/// meets `ss`). Unicode normalization is not applied: a name macOS would
/// store in another normal form counts as another folder.
pub(crate) fn folder_key(path: &str, platform: Platform) -> String {
    let separator = if platform == Platform::Windows { '\\' } else { '/' };
    let text = if platform == Platform::Windows { path.replace('/', "\\") } else { path.to_string() };
    let leading = text.chars().take_while(|c| *c == separator).count().min(2);
    let mut key: String = std::iter::repeat_n(separator, leading).collect();
    let mut previous_was_separator = true;
    for c in text.chars().skip_while(|c| *c == separator) {
        if c == separator && previous_was_separator {
            continue;
        }
        previous_was_separator = c == separator;
        key.push(c);
    }
    let is_root = |key: &str| key.len() <= 2 || (key.len() == 3 && key.ends_with(":\\"));
    while key.ends_with(separator) && !is_root(&key) {
        key.pop();
    }
    if matches!(platform, Platform::Windows | Platform::MacOs) {
        key = key
            .chars()
            .map(|c| {
                let mut lower = c.to_lowercase();
                match (lower.next(), lower.next()) {
                    (Some(one), None) => one,
                    _ => c,
                }
            })
            .collect();
    }
    key
}

/// A path as this platform writes it. Windows accepts `/` and `\` alike, but a
/// path joined from `Z:/state` and a file name reads `Z:/state\api-token-…`,
/// so every path here is turned into backslashes first and a trace or message
/// shows one style. A verbatim `\\?\` path is left alone: there `/` is not a
/// separator.
pub(crate) fn native(value: &str) -> PathBuf {
    if cfg!(windows) && !value.starts_with(r"\\?\") {
        return PathBuf::from(value.replace('/', "\\"));
    }
    PathBuf::from(value)
}

/// A value wrapped in one pair of matching quotes, as Explorer's "Copy as
/// path" and shell habits produce: straight double or single quotes, or the
/// typographic pairs a word processor substitutes.
pub(crate) fn is_quoted(value: &str) -> bool {
    let mut chars = value.chars();
    let (Some(first), Some(last)) = (chars.next(), chars.next_back()) else {
        return false;
    };
    matches!((first, last), ('"', '"') | ('\'', '\'') | ('\u{201c}', '\u{201d}') | ('\u{2018}', '\u{2019}'))
}

/// A reference a shell would have expanded, found in a value that a harness
/// passed on as written (harnesses start the server without a shell):
/// `%NAME%`, a leading `~`, `$NAME` or `${NAME}`. Returns the reference and
/// the path up to and including the component that holds it, so that the
/// caller can tell a literal folder named so (which is used as it is) from
/// a reference that was never expanded.
pub(crate) fn unexpanded_reference(value: &str) -> Option<(String, PathBuf)> {
    let mut prefix = String::new();
    for (index, component) in value.split_inclusive(['/', '\\']).enumerate() {
        prefix.push_str(component);
        let name = component.trim_end_matches(['/', '\\']);
        let reference = if index == 0 && name == "~" {
            Some("~".to_string())
        } else {
            percent_reference(name).or_else(|| dollar_reference(name))
        };
        if let Some(reference) = reference {
            return Some((reference, PathBuf::from(prefix.trim_end_matches(['/', '\\']))));
        }
    }
    None
}

fn percent_reference(text: &str) -> Option<String> {
    let start = text.find('%')?;
    let length = text[start + 1..].find('%')?;
    let name = &text[start + 1..start + 1 + length];
    let plausible = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || "_()".contains(c));
    plausible.then(|| format!("%{name}%"))
}

fn dollar_reference(text: &str) -> Option<String> {
    let start = text.find('$')?;
    let rest = &text[start + 1..];
    let (name, reference) = match rest.strip_prefix('{') {
        Some(braced) => {
            let name = &braced[..braced.find('}')?];
            (name, format!("${{{name}}}"))
        }
        None => {
            let length = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            (&rest[..length], format!("${}", &rest[..length]))
        }
    };
    let plausible = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plausible.then_some(reference)
}

/// What a reference stands for, when it is one of the variables discovery
/// read anyway (nothing else is read from the process for a message).
pub(crate) fn expansion(reference: &str, env: &Environment) -> Option<String> {
    if reference == "~" {
        return env.home.clone();
    }
    let name = reference.trim_matches(['%', '$', '{', '}']);
    if name.eq_ignore_ascii_case(Platform::current().home_variable()) {
        env.home.clone()
    } else if name.eq_ignore_ascii_case("LOCALAPPDATA") {
        env.local_app_data.clone()
    } else if name.eq_ignore_ascii_case("XDG_STATE_HOME") {
        env.xdg_state_home.clone()
    } else {
        None
    }
}

/// The folder that holds `path`, `.` for a bare file name.
pub(crate) fn parent_or_dot(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_recognised_only_as_one_matching_pair() {
        for quoted in ["\"C:\\x\"", "'/tmp/x'", "\u{201c}x\u{201d}", "\u{2018}x\u{2019}", "\"\""] {
            assert!(is_quoted(quoted), "{quoted}");
        }
        for plain in ["C:\\x", "\"C:\\x", "x\"", "'x\"", "\"", "it's", "a\"b\"c", ""] {
            assert!(!is_quoted(plain), "{plain}");
        }
    }

    #[test]
    fn references_a_shell_would_expand_are_found() {
        let found = |value: &str| {
            unexpanded_reference(value).map(|(reference, prefix)| (reference, prefix.display().to_string()))
        };
        assert_eq!(found(r"%LOCALAPPDATA%\resmon"), Some(("%LOCALAPPDATA%".into(), "%LOCALAPPDATA%".into())));
        assert_eq!(found("~/Library/x"), Some(("~".into(), "~".into())));
        assert_eq!(found("$HOME/.local/state/resmon"), Some(("$HOME".into(), "$HOME".into())));
        assert_eq!(
            found("/srv/${XDG_STATE_HOME}/resmon"),
            Some(("${XDG_STATE_HOME}".into(), "/srv/${XDG_STATE_HOME}".into()))
        );
        assert_eq!(
            found(r"C:\Users\%USERNAME%\x"),
            Some(("%USERNAME%".into(), r"C:\Users\%USERNAME%".into()))
        );
        for plain in
            [r"C:\Users\me\AppData", "/tmp/100% sure/x", "/tmp/a~b", "/tmp/$5/x", "/tmp/~x", "/a/b%c"]
        {
            assert_eq!(found(plain), None, "{plain}");
        }
    }

    #[test]
    fn each_platform_names_its_own_variables() {
        assert_eq!(Platform::Windows.state_variables(), ["LOCALAPPDATA", "USERPROFILE"]);
        assert_eq!(Platform::Windows.home_variable(), "USERPROFILE");
        assert_eq!(Platform::MacOs.state_variables(), ["HOME"]);
        assert_eq!(Platform::Xdg.state_variables(), ["XDG_STATE_HOME", "HOME"]);
    }

    #[test]
    fn spellings_of_one_folder_share_a_key() {
        let key = folder_key;
        assert_eq!(key("/h/.local/state/resmon/", Platform::Xdg), "/h/.local/state/resmon");
        assert_eq!(key("/h//.local///state/resmon//", Platform::Xdg), "/h/.local/state/resmon");
        assert_eq!(key("/", Platform::Xdg), "/");
        assert_eq!(key("//", Platform::Xdg), "//");
        // Case counts on Linux, and not on macOS or Windows.
        assert_ne!(key("/h/Resmon", Platform::Xdg), key("/h/resmon", Platform::Xdg));
        assert_eq!(
            key("/Users/Me/library/Application Support/RESMON/", Platform::MacOs),
            key("/Users/me/Library/Application Support/resmon", Platform::MacOs)
        );
        let windows = key(r"C:\Users\me\AppData\Local\resmon", Platform::Windows);
        assert_eq!(windows, r"c:\users\me\appdata\local\resmon");
        for other in [
            "C:/Users/me/AppData/Local/resmon",
            "C:/Users/me/AppData/Local/resmon/",
            r"c:\USERS\Me\appdata\local\Resmon\",
            r"C:\Users\\me\AppData/Local\resmon\\",
        ] {
            assert_eq!(key(other, Platform::Windows), windows, "{other}");
        }
        assert_eq!(key(r"C:\", Platform::Windows), r"c:\");
        assert_eq!(key("C:/", Platform::Windows), r"c:\");
        assert_eq!(key(r"\\server\share\x\", Platform::Windows), r"\\server\share\x");
        // Only one-to-one case mappings: "ß" is not "ss", and "İ" stays.
        assert_ne!(key(r"C:\Straße", Platform::Windows), key(r"C:\STRASSE", Platform::Windows));
        assert_eq!(key("C:\\\u{130}", Platform::Windows), "c:\\\u{130}");
    }

    #[test]
    fn a_named_state_dir_is_the_default_only_when_it_is_that_folder() {
        let home = std::env::temp_dir().join("resmon-home");
        let home = home.to_str().unwrap();
        let env = |state_dir: Option<String>| Environment {
            home: Some(home.into()),
            state_dir,
            ..Environment::default()
        };
        assert_eq!(state_dir_is_default(&env(None)), None);
        let default = default_state_dir(Platform::current(), &env(None)).unwrap();
        let default = default.to_str().unwrap();
        assert_eq!(state_dir_is_default(&env(Some(default.into()))), Some(true));
        assert_eq!(state_dir_is_default(&env(Some(format!("{default}/")))), Some(true));
        assert_eq!(state_dir_is_default(&env(Some(format!("{default}/elsewhere")))), Some(false));
        // A default that cannot be worked out is never matched.
        let homeless = Environment { state_dir: Some(default.into()), ..Environment::default() };
        assert_eq!(state_dir_is_default(&homeless), Some(false));
    }

    #[test]
    fn the_default_state_dir_follows_the_platform() {
        let env = Environment { home: Some("/h".into()), ..Environment::default() };
        assert_eq!(default_state_dir(Platform::Xdg, &env), Some(PathBuf::from("/h/.local/state/resmon")));
        assert_eq!(
            default_state_dir(Platform::MacOs, &env),
            Some(PathBuf::from("/h/Library/Application Support/resmon"))
        );
        let xdg = Environment { xdg_state_home: Some("/s".into()), ..env.clone() };
        assert_eq!(default_state_dir(Platform::Xdg, &xdg), Some(PathBuf::from("/s/resmon")));
        let local = Environment { local_app_data: Some("L".into()), ..Environment::default() };
        assert_eq!(default_state_dir(Platform::Windows, &local), Some(Path::new("L").join("resmon")));
        assert_eq!(default_state_dir(Platform::Windows, &Environment::default()), None);
        assert_eq!(default_state_dir(Platform::Xdg, &Environment::default()), None);
    }
}
