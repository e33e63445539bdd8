//! Which backend this server may talk to, and with which token.
//!
//! Contract 1.0 "Port discovery", "The local API token" and "When the backend
//! is not named, or not running"; contract-notes 1 and 2. The port comes from
//! exactly one source, the first of RESMON_PORT and the port file that names
//! one; there is no default port and never a second candidate. The token is
//! read for that port only. Confirming the candidate over HTTP is the
//! backend module's job; this module only reads the environment and files.
//!
//! Every step is written to a `Trace` so that `--check` can show a person
//! what was looked at and why the answer is what it is. Every refusal says
//! what was found, as it is on the platform at hand (a directory is not a
//! permissions problem, a quoted path is not a missing file), and what to do.

mod environment;
mod files;

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Code, ToolError};
pub use environment::Environment;
pub(crate) use environment::{Platform, default_state_dir, is_quoted, native, state_dir_is_default};
use environment::{expansion, unexpanded_reference};
use files::Unreadable;
pub use files::{Text, decode_text};

/// One line of the discovery story, for `--check`.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub what: String,
    pub outcome: String,
}

pub(crate) type Trace = Vec<Step>;

fn note(trace: &mut Trace, what: impl Into<String>, outcome: impl Into<String>) {
    trace.push(Step { what: what.into(), outcome: outcome.into() });
}

/// A port that something named, and the token published for it. Not yet
/// confirmed: only an authenticated health answer does that.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub port: u16,
    /// What named the port, for a sentence about a listener that has not
    /// yet shown it is resmon: "RESMON_PORT" or "the port file <path>".
    pub named_by: String,
    pub token: String,
    pub token_path: PathBuf,
}

impl Candidate {
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

pub(crate) fn find_candidate(env: &Environment, trace: &mut Trace) -> Result<Candidate, ToolError> {
    // A value that is not valid Unicode was still set by someone: reading it
    // as unset could reach another instance (contract-notes 1 and 2).
    if let Some(name) = env.not_unicode.first() {
        note(trace, *name, "set, but not valid Unicode");
        return Err(not_unicode(name));
    }
    let (port, named_by) = resolve_port(env, trace)?;
    let state_dir = state_dir(env, trace).map_err(|error| {
        // A port was named: "no instance was named" would be false here.
        if error.top_level.contains_key("no_port_named") { no_state_dir(port) } else { error }
    })?;
    let token_path = state_dir.join(format!("api-token-{port}"));
    let token = read_token(env, port, &token_path, trace)?;
    Ok(Candidate { port, named_by, token, token_path })
}

/// Where the port file's path came from, for advice that names the right variable.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PortFileSource {
    Variable,
    BesideDatabase,
    DefaultFolder,
}

/// RESMON_PORT, else the one port-file path chosen by `port_file_path`; the
/// port, and what named it.
fn resolve_port(env: &Environment, trace: &mut Trace) -> Result<(u16, String), ToolError> {
    if let Some(raw) = &env.port {
        if raw.is_empty() {
            note(trace, "RESMON_PORT", "set but empty");
            return Err(empty_port());
        }
        note(trace, "RESMON_PORT", format!("set to {:?}", clip(raw)));
        if is_quoted(raw) {
            return Err(quoted("RESMON_PORT", raw));
        }
        let port = parse_port(raw).ok_or_else(|| malformed("RESMON_PORT", raw))?;
        return Ok((port, "RESMON_PORT".to_string()));
    }
    note(trace, "RESMON_PORT", "not set");
    let (path, source) = port_file_path(env, trace)?;
    let what = format!("port file {}", path.display());
    match files::read_small(&path) {
        Ok(Some(bytes)) => {
            let text = decode_text(&bytes);
            if let Text::Utf16 { text, order } = &text {
                note(trace, what, format!("is saved as {order} (it reads {:?})", clip(text)));
                return Err(utf16_port_file(&path, text, order));
            }
            let content = text.text();
            let bom = if matches!(text, Text::Utf8Bom(_)) {
                " after a UTF-8 byte-order mark, which was ignored"
            } else {
                ""
            };
            note(trace, what, format!("holds {:?}{bom}", clip(content)));
            let port = parse_port(content).ok_or_else(|| {
                malformed(&format!("the port file {}", path.display()), content)
                    .with_detail("port_file", json!(path.display().to_string()))
            })?;
            Ok((port, format!("the port file {}", path.display())))
        }
        Ok(None) => {
            note(trace, what, "does not exist");
            Err(no_port_named_in(&path, env))
        }
        Err(problem) => {
            note(trace, what, problem.what());
            Err(port_file_unreadable(&path, source, &problem))
        }
    }
}

/// The single port-file path to read: RESMON_PORT_FILE, else `resmon.port`
/// beside RESMON_DB_PATH, else in the default state directory, where the
/// packaged app keeps its database and so writes its port file. That last
/// place serves only a person who named nothing: a RESMON_STATE_DIR that is
/// not the default folder is refused there (contract-notes 1).
fn port_file_path(env: &Environment, trace: &mut Trace) -> Result<(PathBuf, PortFileSource), ToolError> {
    if let Some(file) = &env.port_file {
        let path = path_variable("RESMON_PORT_FILE", file, env, trace)?;
        return Ok((path, PortFileSource::Variable));
    }
    note_unset(env, "RESMON_PORT_FILE", trace);
    if let Some(db) = &env.db_path {
        let db = path_variable("RESMON_DB_PATH", db, env, trace)?;
        return Ok((environment::parent_or_dot(&db).join("resmon.port"), PortFileSource::BesideDatabase));
    }
    note_unset(env, "RESMON_DB_PATH", trace);
    let default = default_dir(env);
    if let Some(named) = &env.state_dir {
        let named = path_variable("RESMON_STATE_DIR", named, env, trace)?;
        let what = "default state directory";
        let is_default = state_dir_is_default(env) == Some(true);
        match &default {
            Ok(dir) if is_default => note(
                trace,
                what,
                format!("{}, the folder RESMON_STATE_DIR names, so its port file is read", dir.display()),
            ),
            Ok(dir) => {
                note(
                    trace,
                    what,
                    format!(
                        "{}, not the folder RESMON_STATE_DIR names; a state directory names no \
                         instance, so its port file was not read",
                        dir.display()
                    ),
                );
                return Err(state_dir_names_no_instance(&named, Some(dir), env));
            }
            Err(_) => {
                note(
                    trace,
                    what,
                    format!(
                        "cannot be worked out ({}), so RESMON_STATE_DIR cannot be shown to name it; \
                         a state directory names no instance, so no port file was read",
                        missing_variables(Platform::current())
                    ),
                );
                return Err(state_dir_names_no_instance(&named, None, env));
            }
        }
    }
    let dir = default?;
    Ok((dir.join("resmon.port"), PortFileSource::DefaultFolder))
}

fn state_dir(env: &Environment, trace: &mut Trace) -> Result<PathBuf, ToolError> {
    if let Some(dir) = &env.state_dir {
        // Already checked and shown when it decided which port file to read.
        if trace.iter().any(|step| step.what == "RESMON_STATE_DIR") {
            return Ok(native(dir));
        }
        return path_variable("RESMON_STATE_DIR", dir, env, trace);
    }
    let dir = default_dir(env)?;
    let why = if env.is_empty("RESMON_STATE_DIR") {
        "set but empty, which counts as unset (resmon reads it so too)"
    } else {
        "not set"
    };
    note(trace, "RESMON_STATE_DIR", format!("{why}; using the default {}", dir.display()));
    Ok(dir)
}

/// A path from a RESMON_* variable, refused when it is wrapped in quotes or
/// holds a reference that no shell expanded (and no folder of that literal
/// name exists).
fn path_variable(
    name: &str,
    value: &str,
    env: &Environment,
    trace: &mut Trace,
) -> Result<PathBuf, ToolError> {
    if is_quoted(value) {
        note(trace, name, format!("set to {value}, quotes included"));
        return Err(quoted(name, value));
    }
    if let Some((reference, prefix)) = unexpanded_reference(value)
        && !native(&prefix.to_string_lossy()).exists()
    {
        note(trace, name, format!("set to {value}, with {reference} not expanded"));
        return Err(unexpanded(name, value, &reference, env));
    }
    let path = native(value);
    note(trace, name, format!("set to {}", path.display()));
    Ok(path)
}

fn note_unset(env: &Environment, name: &str, trace: &mut Trace) {
    if env.is_empty(name) {
        note(trace, name, "set but empty, which counts as unset (resmon reads it so too)");
    } else {
        note(trace, name, "not set");
    }
}

/// The default state directory, or the refusal that names the variables the
/// platform derives it from. A quoted value there is refused like any other.
fn default_dir(env: &Environment) -> Result<PathBuf, ToolError> {
    let platform = Platform::current();
    let used = match platform {
        Platform::Windows if env.local_app_data.is_some() => ("LOCALAPPDATA", &env.local_app_data),
        Platform::Xdg if env.xdg_state_home.is_some() => ("XDG_STATE_HOME", &env.xdg_state_home),
        _ => (platform.home_variable(), &env.home),
    };
    if let (name, Some(value)) = used
        && is_quoted(value)
    {
        return Err(quoted(name, value));
    }
    default_state_dir(platform, env).ok_or_else(|| no_home(platform))
}

fn read_token(env: &Environment, port: u16, path: &Path, trace: &mut Trace) -> Result<String, ToolError> {
    let what = format!("token file {}", path.display());
    let refusal = |message: String, problem: &str| {
        ToolError::new(Code::BackendUnavailable, message)
            .with_detail("port", json!(port))
            .with_detail("token_file", json!(path.display().to_string()))
            .with_detail("problem", json!(problem))
            .with_top_level("tried", json!([]))
    };
    let elsewhere = "If that resmon keeps its state in another folder, set RESMON_STATE_DIR to that folder, \
                     and name its port with RESMON_PORT_FILE or RESMON_PORT as well: a state directory \
                     alone names no instance.";
    match files::read_small(path) {
        Ok(Some(bytes)) => {
            let text = decode_text(&bytes);
            if let Text::Utf16 { order, .. } = &text {
                note(trace, what, format!("is saved as {order}, not as the plain text resmon writes"));
                return Err(refusal(
                    format!(
                        "Port {port} was named, but its token file {} is saved as {order}, not as \
                         the plain text resmon writes, so nothing was sent to it. Restart resmon so \
                         that it writes a fresh token file. {elsewhere}",
                        path.display()
                    ),
                    "utf16",
                ));
            }
            let token = text.text().trim();
            if is_usable_token(token) {
                note(trace, what, "present and well-formed (the token itself is never shown)");
                crate::redact::remember(token);
                Ok(token.to_string())
            } else {
                note(trace, what, "present but does not hold a usable token");
                Err(refusal(
                    format!(
                        "Port {port} was named, but its token file {} does not hold a usable token, \
                         so nothing was sent to it. Restart resmon so that it writes a fresh one. \
                         {elsewhere}",
                        path.display()
                    ),
                    "unusable_token",
                ))
            }
        }
        Ok(None) => {
            note(trace, what, "does not exist");
            let folder = environment::parent_or_dot(path);
            let mut context = String::new();
            if env.is_empty("RESMON_STATE_DIR") {
                context.push_str(
                    " RESMON_STATE_DIR is set but empty, which counts as unset, so the default \
                     folder was used.",
                );
            }
            if !folder.is_dir() {
                context.push_str(&format!(" The folder {} does not exist either.", folder.display()));
            }
            Err(refusal(
                format!(
                    "Port {port} was named, but resmon published no token file at {}, so nothing \
                     was sent to it.{context} {elsewhere} A resmon release older than the local-API \
                     token publishes no token file at all; that resmon must be updated before this \
                     server can use it. Otherwise start resmon, or restart it so that it writes its \
                     token file, and try again.",
                    path.display()
                ),
                "absent",
            ))
        }
        Err(problem) => {
            note(trace, what, problem.what());
            let advice = match &problem {
                Unreadable::Directory | Unreadable::NotRegular(_) => {
                    "Check that RESMON_STATE_DIR names resmon's state folder; if it does, move that \
                     entry away and restart resmon so that it writes its token file."
                }
                Unreadable::NotADirectory(_) => "Check that RESMON_STATE_DIR names a folder.",
                Unreadable::HeldOpen(_) => HELD_OPEN_ADVICE,
                Unreadable::PermissionDenied(_) => {
                    "Run this server as the user that runs resmon, or let that user's token file be \
                     read by this one."
                }
                Unreadable::InvalidName(_) => INVALID_NAME_ADVICE,
                Unreadable::Other(_) => "Check that RESMON_STATE_DIR names resmon's state folder.",
            };
            Err(refusal(
                format!(
                    "Port {port} was named, but its token file {} {}, so nothing was sent to it. {advice}",
                    path.display(),
                    problem.what()
                ),
                problem.code(),
            ))
        }
    }
}

const HELD_OPEN_ADVICE: &str = "Close the program that holds it (an editor, or a sync, backup or \
                                antivirus tool) or wait until it lets go, then try again.";
const INVALID_NAME_ADVICE: &str = "Check the value for stray characters (quotes, a trailing space, a \
                                   character copied from a document) and correct it.";

fn port_file_unreadable(path: &Path, source: PortFileSource, problem: &Unreadable) -> ToolError {
    let advice = match problem {
        Unreadable::Directory if source == PortFileSource::Variable => format!(
            "RESMON_PORT_FILE must name the file itself; in that folder it would be {}.",
            path.join("resmon.port").display()
        ),
        Unreadable::Directory | Unreadable::NotRegular(_) | Unreadable::NotADirectory(_) => {
            "Point RESMON_PORT_FILE at the port file resmon writes (resmon.port).".to_string()
        }
        Unreadable::HeldOpen(_) => HELD_OPEN_ADVICE.to_string(),
        Unreadable::PermissionDenied(_) => {
            "Fix its permissions so that this server's user can read it.".to_string()
        }
        Unreadable::InvalidName(_) => INVALID_NAME_ADVICE.to_string(),
        Unreadable::Other(_) => "Check that the path names the port file resmon writes.".to_string(),
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "The port file {} {}, so no port was read and no resmon was reached. {advice} Or set \
             RESMON_PORT to the port resmon uses.",
            path.display(),
            problem.what()
        ),
    )
    .with_detail("port_file", json!(path.display().to_string()))
    .with_detail("problem", json!(problem.code()))
    .with_top_level("tried", json!([]))
}

/// The pattern resmon itself accepts: 43 to 128 URL-safe base64 characters.
pub(crate) fn is_usable_token(token: &str) -> bool {
    (43..=128).contains(&token.len())
        && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Decimal digits only (whitespace around them tolerated), 1 to 65535.
fn parse_port(raw: &str) -> Option<u16> {
    let digits = raw.trim();
    if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u16>().ok().filter(|port| *port != 0)
}

fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(40).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}

fn malformed(source: &str, value: &str) -> ToolError {
    let quotes = if is_quoted(value.trim()) {
        " The quotes around it are part of the value; remove them."
    } else {
        ""
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{} holds {:?}, which is not a port number (1 to 65535), so no resmon was reached and \
             no other source was tried.{quotes} Correct it and try again.",
            capitalised(source),
            clip(value)
        ),
    )
    .with_detail("source", json!(source))
    .with_detail("value", json!(clip(value)))
    .with_top_level("tried", json!([]))
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// RESMON_PORT="" (contract-notes 2): malformed, and the port file is not read.
fn empty_port() -> ToolError {
    ToolError::new(
        Code::BackendUnavailable,
        "RESMON_PORT is set but empty. An empty value names no port, and it does not count as \
         unset: the port file was not read, because it could name another resmon. Set RESMON_PORT \
         to the port resmon uses, or remove it from this server's environment to use the port file.",
    )
    .with_detail("source", json!("RESMON_PORT"))
    .with_detail("value", json!(""))
    .with_top_level("tried", json!([]))
}

/// A value wrapped in one pair of quotes. Nothing is stripped: the quotes may
/// come from a config that needs fixing, and guessing would hide that.
fn quoted(name: &str, value: &str) -> ToolError {
    let consequence = if name == "RESMON_PORT" {
        "it is not a port number"
    } else {
        "the path it names is not the one meant"
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{name} is wrapped in quotes ({value}). The quotes are part of the value, so {consequence} \
             and nothing was read or sent. Remove them: a value in a harness's env, or in a JSON \
             string, needs no quotes of its own."
        ),
    )
    .with_detail("source", json!(name))
    .with_detail("value", json!(value))
    .with_detail("problem", json!("quoted"))
    .with_top_level("tried", json!([]))
}

/// `%LOCALAPPDATA%\resmon` or `~/…` in a harness's env: harnesses start the
/// server without a shell, so such a value arrives as written.
fn unexpanded(name: &str, value: &str, reference: &str, env: &Environment) -> ToolError {
    let written_out = expansion(reference, env)
        .map(|expanded| native(&value.replacen(reference, &expanded, 1)).display().to_string());
    let suggestion = match &written_out {
        Some(path) => format!(" Here that would be {path}."),
        None => String::new(),
    };
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{name} holds {value}, in which {reference} was never expanded: a harness passes env \
             values on as written, with no shell to expand them, so nothing was read or sent. \
             Write the path out in full.{suggestion}"
        ),
    )
    .with_detail("source", json!(name))
    .with_detail("value", json!(value))
    .with_detail("problem", json!("not_expanded"))
    .with_detail("written_out", json!(written_out))
    .with_top_level("tried", json!([]))
}

fn utf16_port_file(path: &Path, text: &str, order: &str) -> ToolError {
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "The port file {} is saved as UTF-16 (decoded, it reads {:?}), so no port was read and \
             no resmon was reached. Save it as plain text (ASCII or UTF-8), or set RESMON_PORT to \
             the port instead.",
            path.display(),
            clip(text.trim())
        ),
    )
    .with_detail("source", json!(format!("the port file {}", path.display())))
    .with_detail("port_file", json!(path.display().to_string()))
    .with_detail("value", json!(clip(text.trim())))
    .with_detail("encoding", json!(order))
    .with_top_level("tried", json!([]))
}

/// Nothing named a port. The wording follows contract 1.0: it must not claim
/// that resmon is not running, because this server does not know that.
fn no_port_named_in(port_file: &Path, env: &Environment) -> ToolError {
    let mut message = format!(
        "No resmon instance was named, so this server did not look for one and will not \
         guess. A port is named by the RESMON_PORT environment variable or by the port \
         file a running resmon writes (looked for at {}); neither named one. Picking a \
         port anyway could attach to a different installation with a different database, \
         and an answer about the wrong corpus is worse than none. Start resmon and call \
         again. If it runs already, give this server its port in RESMON_PORT, or the \
         path of the port file it writes in RESMON_PORT_FILE.",
        port_file.display()
    );
    for name in ["RESMON_PORT_FILE", "RESMON_DB_PATH"] {
        if env.is_empty(name) {
            message.push_str(&format!(" {name} is set but empty, which counts as unset."));
        }
    }
    ToolError::new(Code::BackendUnavailable, message)
        .with_detail("port_file", json!(port_file.display().to_string()))
        .with_top_level("tried", json!([]))
        .with_top_level("no_port_named", json!(true))
}

/// RESMON_STATE_DIR names a folder that is not the default state directory
/// (or that cannot be shown to be, when the default cannot be worked out),
/// and nothing names a port. The default port file belongs to whichever
/// resmon runs on the default paths, so reading it could attach to another
/// instance than the one whose state was named (contract-notes 1).
fn state_dir_names_no_instance(named: &Path, default: Option<&Path>, env: &Environment) -> ToolError {
    let relation = match default {
        Some(default) => format!("which is not the default state directory ({})", default.display()),
        None => format!(
            "which cannot be shown to be the default state directory, since that cannot be worked \
             out here ({})",
            missing_variables(Platform::current())
        ),
    };
    let mut message = format!(
        "RESMON_STATE_DIR names {}, {relation}, and no port was named (none of RESMON_PORT, \
         RESMON_PORT_FILE or RESMON_DB_PATH is set). A state directory names no instance: it says \
         where a resmon keeps its token files, not which resmon to reach, so the port file in the \
         default folder was not read and nothing was sent. Set RESMON_PORT to that instance's \
         port, or RESMON_PORT_FILE to the port file it writes, next to RESMON_STATE_DIR.",
        named.display()
    );
    for name in ["RESMON_PORT_FILE", "RESMON_DB_PATH"] {
        if env.is_empty(name) {
            message.push_str(&format!(" {name} is set but empty, which counts as unset."));
        }
    }
    ToolError::new(Code::BackendUnavailable, message)
        .with_detail("state_dir", json!(named.display().to_string()))
        .with_detail("default_state_dir", json!(default.map(|dir| dir.display().to_string())))
        .with_detail("problem", json!("state_dir_names_no_port"))
        .with_top_level("tried", json!([]))
        .with_top_level("no_port_named", json!(true))
}

fn not_unicode(name: &str) -> ToolError {
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{name} is set, but its value is not valid Unicode, so it cannot name a port or a path \
             this server can use, and no other source was tried in its place. Set it to a plain \
             port number or path, or remove it from this server's environment."
        ),
    )
    .with_detail("source", json!(name))
    .with_top_level("tried", json!([]))
}

/// A port was named, but the folder that holds its token cannot be worked
/// out: the same variables are missing as for `no_home`, and the sentence
/// names the instance instead of claiming none was named.
fn no_state_dir(port: u16) -> ToolError {
    let platform = Platform::current();
    let missing = missing_variables(platform);
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "Port {port} was named, but the state directory that holds its token file cannot be \
             worked out ({missing}), so nothing was sent to it. Set RESMON_STATE_DIR to that \
             resmon's state directory, and keep naming its port as now (RESMON_PORT or \
             RESMON_PORT_FILE): a state directory alone names no instance."
        ),
    )
    .with_detail("port", json!(port))
    .with_detail("missing", json!(platform.state_variables()))
    .with_top_level("tried", json!([]))
}

/// Which of the variables the default state folder comes from are unset,
/// in words.
fn missing_variables(platform: Platform) -> String {
    match platform.state_variables() {
        [one] => format!("{one} is not set"),
        [first, second] => format!("neither {first} nor {second} is set"),
        names => format!("none of {} is set", names.join(", ")),
    }
}

fn no_home(platform: Platform) -> ToolError {
    let missing = missing_variables(platform);
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "No resmon instance was named and the default state directory cannot be worked out \
             ({missing}), so this server did not look for one. Set RESMON_PORT_FILE (or \
             RESMON_PORT) and RESMON_STATE_DIR in this server's environment."
        ),
    )
    .with_detail("missing", json!(platform.state_variables()))
    .with_top_level("tried", json!([]))
    .with_top_level("no_port_named", json!(true))
}

#[cfg(test)]
mod tests {
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
}
