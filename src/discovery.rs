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
mod refusals;

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Code, ToolError};
pub use environment::Environment;
pub(crate) use environment::{Platform, default_state_dir, is_quoted, native, state_dir_is_default};
use environment::{expansion, unexpanded_reference};
use files::Unreadable;
pub use files::{Text, decode_text};
use refusals::*;

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
    /// Whether a port file named the port (rather than RESMON_PORT): a
    /// resmon that restarts writes a new one, so it is worth reading again.
    pub from_port_file: bool,
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
    let from_port_file = env.port.is_none();
    Ok(Candidate { port, named_by, from_port_file, token, token_path })
}

/// Whether the variables alone say which instance to use and where its
/// token is: RESMON_PORT holds a port, or a port-file path can be chosen
/// (a variable's, or the default folder's), and the state directory can be
/// worked out; every value involved is one discovery accepts. No file is
/// read, so this holds while resmon is closed and has written nothing yet.
/// `trace` gets the steps that decided it, for `--check`'s registration,
/// which carries the variables those steps name.
pub(crate) fn names_an_instance(env: &Environment, trace: &mut Trace) -> bool {
    if !env.not_unicode.is_empty() {
        return false;
    }
    let port_named = match &env.port {
        Some(raw) => {
            note(trace, "RESMON_PORT", format!("set to {:?}", clip(raw)));
            !is_quoted(raw) && parse_port(raw).is_some()
        }
        None => port_file_path(env, trace).is_ok(),
    };
    port_named && state_dir(env, trace).is_ok()
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
        Ok(None) if source == PortFileSource::DefaultFolder => {
            note(trace, what, "does not exist");
            Err(no_port_named_in(&path, env))
        }
        // A person named this file (or the database it sits beside): the
        // answer says so, and no other place is read instead (contract-notes 1).
        Ok(None) => {
            let folder_exists = environment::parent_or_dot(&path).is_dir();
            let folder = if folder_exists { "" } else { ", and neither does its folder" };
            note(trace, what, format!("does not exist{folder}"));
            Err(named_port_file_missing(&path, source, folder_exists, env))
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
        Ok(None) if env.port.is_some() => {
            let folder_exists = environment::parent_or_dot(path).is_dir();
            let folder = if folder_exists { "" } else { ", and neither does its folder" };
            note(trace, what, format!("does not exist{folder}"));
            Err(named_port_without_token(port, path, folder_exists, env))
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
            // The port file is there, so a resmon wrote it and has not
            // stopped cleanly (a clean stop removes both files): the token
            // most likely lives in another state folder. What was seen
            // comes first, and no resmon is said to be there.
            Err(refusal(
                format!(
                    "There is no token file for port {port} at {}, so nothing was sent to that port; the \
                     port file that names it is there, which a resmon that stopped cleanly would have \
                     removed.{context} {elsewhere} If resmon stopped without removing its port file, \
                     start it again. A resmon release older than the local-API token publishes no token \
                     file at all and must be updated before this server can use it.",
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

#[cfg(test)]
mod tests;
