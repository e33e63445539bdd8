//! Which backend this server may talk to, and with which token.
//!
//! Contract 1.0 "Port discovery", "The local API token" and "When the backend
//! is not named, or not running"; clarifications 1 and 2. The port comes from
//! exactly one source, the first of RESMON_PORT and the port file that names
//! one; there is no default port and never a second candidate. The token is
//! read for that port only. Confirming the candidate over HTTP is the
//! backend module's job; this module only reads the environment and files.
//!
//! Every step is written to a `Trace` so that `--check` can show a person
//! what was looked at and why the answer is what it is.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::error::{Code, ToolError};

/// The variables discovery reads, captured once so that tests and fuzzers can
/// supply their own. An empty value counts as unset, as it does in resmon.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub port: Option<String>,
    pub port_file: Option<String>,
    pub db_path: Option<String>,
    pub state_dir: Option<String>,
    pub home: Option<String>,
    pub xdg_state_home: Option<String>,
    pub local_app_data: Option<String>,
}

impl Environment {
    pub fn from_process() -> Environment {
        let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        Environment {
            port: read("RESMON_PORT"),
            port_file: read("RESMON_PORT_FILE"),
            db_path: read("RESMON_DB_PATH"),
            state_dir: read("RESMON_STATE_DIR"),
            home: read("HOME").or_else(|| read("USERPROFILE")),
            xdg_state_home: read("XDG_STATE_HOME"),
            local_app_data: read("LOCALAPPDATA"),
        }
    }
}

/// One line of the discovery story, for `--check`.
#[derive(Clone, Debug)]
pub struct Step {
    pub what: String,
    pub outcome: String,
}

pub type Trace = Vec<Step>;

fn note(trace: &mut Trace, what: impl Into<String>, outcome: impl Into<String>) {
    trace.push(Step { what: what.into(), outcome: outcome.into() });
}

/// A port that something named, and the token published for it. Not yet
/// confirmed: only an authenticated health answer does that.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub port: u16,
    pub token: String,
    pub port_source: String,
    pub token_path: PathBuf,
}

impl Candidate {
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

pub fn find_candidate(env: &Environment, trace: &mut Trace) -> Result<Candidate, ToolError> {
    let (port, port_source) = resolve_port(env, trace)?;
    let state_dir = state_dir(env, trace)?;
    let token_path = state_dir.join(format!("api-token-{port}"));
    let token = read_token(port, &token_path, trace)?;
    Ok(Candidate { port, token, port_source, token_path })
}

/// RESMON_PORT, else the one port-file path chosen by `port_file_path`.
fn resolve_port(env: &Environment, trace: &mut Trace) -> Result<(u16, String), ToolError> {
    if let Some(raw) = &env.port {
        note(trace, "RESMON_PORT", format!("set to {:?}", clip(raw)));
        let port = parse_port(raw).ok_or_else(|| malformed("RESMON_PORT", raw))?;
        return Ok((port, "RESMON_PORT".to_string()));
    }
    note(trace, "RESMON_PORT", "not set");
    let (path, why) = port_file_path(env, trace)?;
    match read_small_file(&path) {
        Ok(Some(content)) => {
            note(trace, format!("port file {}", path.display()), format!("holds {:?}", clip(&content)));
            let port = parse_port(&content).ok_or_else(|| {
                malformed(&format!("the port file {}", path.display()), &content)
                    .with_detail("port_file", json!(path.display().to_string()))
            })?;
            Ok((port, format!("the port file {} ({why})", path.display())))
        }
        Ok(None) => {
            note(trace, format!("port file {}", path.display()), "does not exist");
            Err(no_port_named(&path))
        }
        Err(error) => {
            note(trace, format!("port file {}", path.display()), format!("cannot be read: {error}"));
            Err(ToolError::new(
                Code::BackendUnavailable,
                format!(
                    "The port file {} exists but cannot be read ({error}), so no resmon was \
                     reached. Fix its permissions, or set RESMON_PORT to the port resmon uses.",
                    path.display()
                ),
            )
            .with_detail("port_file", json!(path.display().to_string()))
            .with_top_level("tried", json!([])))
        }
    }
}

/// The single port-file path to read: RESMON_PORT_FILE, else `resmon.port`
/// beside RESMON_DB_PATH, else in the default state directory where the
/// packaged app keeps its database (discovery.md 1.2 and 1.3).
fn port_file_path(env: &Environment, trace: &mut Trace) -> Result<(PathBuf, String), ToolError> {
    if let Some(file) = &env.port_file {
        note(trace, "RESMON_PORT_FILE", format!("set to {file}"));
        return Ok((PathBuf::from(file), "named by RESMON_PORT_FILE".into()));
    }
    note(trace, "RESMON_PORT_FILE", "not set");
    if let Some(db) = &env.db_path {
        note(trace, "RESMON_DB_PATH", format!("set to {db}"));
        let dir = Path::new(db).parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
        return Ok((dir.join("resmon.port"), "beside RESMON_DB_PATH".into()));
    }
    note(trace, "RESMON_DB_PATH", "not set");
    match default_state_dir(env) {
        Some(dir) => Ok((dir.join("resmon.port"), "in the default state directory".into())),
        None => Err(no_home()),
    }
}

fn state_dir(env: &Environment, trace: &mut Trace) -> Result<PathBuf, ToolError> {
    if let Some(dir) = &env.state_dir {
        note(trace, "RESMON_STATE_DIR", format!("set to {dir}"));
        return Ok(PathBuf::from(dir));
    }
    let dir = default_state_dir(env).ok_or_else(no_home)?;
    note(trace, "RESMON_STATE_DIR", format!("not set; using the default {}", dir.display()));
    Ok(dir)
}

/// The OS default state directory (discovery.md 1.1).
pub fn default_state_dir(env: &Environment) -> Option<PathBuf> {
    if cfg!(target_os = "macos") {
        let home = env.home.as_ref()?;
        return Some(Path::new(home).join("Library/Application Support/resmon"));
    }
    if cfg!(windows) {
        if let Some(local) = &env.local_app_data {
            return Some(Path::new(local).join("resmon"));
        }
        return Some(Path::new(env.home.as_ref()?).join("AppData").join("Local").join("resmon"));
    }
    if let Some(xdg) = &env.xdg_state_home {
        return Some(Path::new(xdg).join("resmon"));
    }
    Some(Path::new(env.home.as_ref()?).join(".local/state/resmon"))
}

fn read_token(port: u16, path: &Path, trace: &mut Trace) -> Result<String, ToolError> {
    let unavailable = |why: &str| {
        ToolError::new(
            Code::BackendUnavailable,
            format!(
                "resmon on port {port} cannot be reached: {why} Nothing was sent to it. If that \
                 instance keeps its state elsewhere, set RESMON_STATE_DIR to that directory; \
                 otherwise start resmon (or restart it so it writes a fresh token) and try again."
            ),
        )
        .with_detail("port", json!(port))
        .with_detail("token_file", json!(path.display().to_string()))
        .with_top_level("tried", json!([]))
    };
    let what = format!("token file {}", path.display());
    match read_small_file(path) {
        Ok(Some(content)) => {
            let token = content.trim();
            if is_usable_token(token) {
                note(trace, what, "present and well-formed (the token itself is never shown)");
                crate::redact::remember(token);
                Ok(token.to_string())
            } else {
                note(trace, what, "present but does not hold a usable token");
                Err(unavailable(&format!("the token file {} does not hold a usable token.", path.display())))
            }
        }
        Ok(None) => {
            note(trace, what, "does not exist");
            Err(unavailable(&format!("it published no token file at {}.", path.display())))
        }
        Err(error) => {
            note(trace, what, format!("cannot be read: {error}"));
            Err(unavailable(&format!("its token file {} cannot be read ({error}).", path.display())))
        }
    }
}

/// The pattern resmon itself accepts: 43 to 128 URL-safe base64 characters.
pub fn is_usable_token(token: &str) -> bool {
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

/// Reads a file that should be tiny. `Ok(None)` when it does not exist. At most
/// 4 KiB is read, so a wrong path pointing at something huge costs nothing.
fn read_small_file(path: &Path) -> std::io::Result<Option<String>> {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let mut bytes = Vec::new();
    file.take(4096).read_to_end(&mut bytes)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(40).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}

fn malformed(source: &str, value: &str) -> ToolError {
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "{source} holds {:?}, which is not a port number (1 to 65535), so no resmon was \
             reached and no other source was tried. Correct it and try again.",
            clip(value)
        ),
    )
    .with_detail("source", json!(source))
    .with_detail("value", json!(clip(value)))
    .with_top_level("tried", json!([]))
}

/// Nothing named a port. The wording follows contract 1.0: it must not claim
/// that resmon is not running, because this server does not know that.
pub fn no_port_named(port_file: &Path) -> ToolError {
    ToolError::new(
        Code::BackendUnavailable,
        format!(
            "No resmon instance was named, so this server did not look for one and will not \
             guess. A port is named by the RESMON_PORT environment variable or by the port \
             file a running resmon writes (looked for at {}); neither named one. Picking a \
             port anyway could attach to a different installation with a different database, \
             and an answer about the wrong corpus is worse than none. Start resmon and call \
             again. If it runs already, give this server its port in RESMON_PORT, or the \
             path of the port file it writes in RESMON_PORT_FILE.",
            port_file.display()
        ),
    )
    .with_detail("port_file", json!(port_file.display().to_string()))
    .with_top_level("tried", json!([]))
    .with_top_level("no_port_named", json!(true))
}

fn no_home() -> ToolError {
    ToolError::new(
        Code::BackendUnavailable,
        "No resmon instance was named and the default state directory cannot be worked out \
         (HOME is not set), so this server did not look for one. Set RESMON_PORT_FILE (or \
         RESMON_PORT) and RESMON_STATE_DIR in this server's environment.",
    )
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
        for bad in ["", "0", "65536", "-1", "+80", "80a", "1e3", "0x50", "８０"] {
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
}
