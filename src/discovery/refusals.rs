//! The refusals of discovery: owns every sentence that says why no port or
//! token could be used and what to do, with its detail; it reads nothing
//! itself and decides nothing, the parent module chooses which to give.

use std::path::Path;

use serde_json::json;

use super::{Environment, Platform, PortFileSource, Unreadable, expansion, is_quoted, native};
use crate::error::{Code, ToolError};

pub(super) const HELD_OPEN_ADVICE: &str = "Close the program that holds it (an editor, or a sync, backup or \
                                antivirus tool) or wait until it lets go, then try again.";
pub(super) const INVALID_NAME_ADVICE: &str = "Check the value for stray characters (quotes, a trailing space, a \
                                   character copied from a document) and correct it.";

pub(super) fn port_file_unreadable(path: &Path, source: PortFileSource, problem: &Unreadable) -> ToolError {
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

pub(super) fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(40).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped
}

pub(super) fn malformed(source: &str, value: &str) -> ToolError {
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

pub(super) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// RESMON_PORT="" (contract-notes 2): malformed, and the port file is not read.
pub(super) fn empty_port() -> ToolError {
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
pub(super) fn quoted(name: &str, value: &str) -> ToolError {
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
pub(super) fn unexpanded(name: &str, value: &str, reference: &str, env: &Environment) -> ToolError {
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

pub(super) fn utf16_port_file(path: &Path, text: &str, order: &str) -> ToolError {
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
/// that resmon is not running, because this server does not know that. Yet
/// a closed app is the likeliest reason a person who named nothing meets
/// this, so starting resmon is the first advice, and why no port is guessed
/// comes last.
pub(super) fn no_port_named_in(port_file: &Path, env: &Environment) -> ToolError {
    let mut message = format!(
        "No resmon instance was named, so this server did not look for one and will not \
         guess. Start resmon and call again: a resmon on its default paths writes its port \
         file at {} when it starts, and no such file is there now. If it runs already, give \
         this server its port in RESMON_PORT, or the path of the port file it writes in \
         RESMON_PORT_FILE. Only those two name a port: picking one anyway could attach to a \
         different installation with a different database, and an answer about the wrong \
         corpus is worse than none.",
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

/// A port file a person named is not there: RESMON_PORT_FILE names it, or it
/// is the one beside the database RESMON_DB_PATH names. resmon removes its
/// port file when it stops, so a closed resmon is the likeliest reading and
/// comes first, unless the file's folder is missing too, which a stopped
/// resmon never leaves and which points at the path instead. It is never
/// "nothing was named", and carries no `no_port_named` (contract-notes 1).
pub(super) fn named_port_file_missing(
    path: &Path,
    source: PortFileSource,
    folder_exists: bool,
    env: &Environment,
) -> ToolError {
    let folder = super::environment::parent_or_dot(path);
    let (path, folder) = (path.display(), folder.display());
    let closed = "which is what resmon leaves when it stops (it removes that file as it closes), \
                  so resmon is probably not running: start it and call again";
    let nothing_sent = "Nothing was sent, and no other port file was read in its place.";
    let (variable, mut message) = match (source, folder_exists) {
        (PortFileSource::BesideDatabase, true) => (
            "RESMON_DB_PATH",
            format!(
                "There is no port file beside the database RESMON_DB_PATH names ({path} is not \
                 there), {closed}. {nothing_sent} If resmon is running, it was started with another \
                 RESMON_DB_PATH or RESMON_PORT_FILE: give this server the same one, or set \
                 RESMON_PORT to its port."
            ),
        ),
        (PortFileSource::BesideDatabase, false) => (
            "RESMON_DB_PATH",
            format!(
                "The folder of the database RESMON_DB_PATH names, {folder}, does not exist, so there \
                 is no port file beside it ({path}). A stopped resmon leaves its database and that \
                 folder in place, so the path is probably not the one resmon uses. {nothing_sent} \
                 Set RESMON_DB_PATH to the database resmon uses (or RESMON_PORT_FILE to its port \
                 file, or RESMON_PORT to its port), and start resmon if it is not running."
            ),
        ),
        (_, true) => (
            "RESMON_PORT_FILE",
            format!(
                "The port file {path} that RESMON_PORT_FILE names is not there, {closed}. \
                 {nothing_sent} If resmon is running, it writes its port file somewhere else: set \
                 RESMON_PORT_FILE to that file, or RESMON_PORT to its port."
            ),
        ),
        (_, false) => (
            "RESMON_PORT_FILE",
            format!(
                "The port file {path} that RESMON_PORT_FILE names is not there, and neither is its \
                 folder {folder}. A stopped resmon leaves that folder in place, so the path is \
                 probably not the one resmon writes to. {nothing_sent} Set RESMON_PORT_FILE to the \
                 port file resmon writes, or RESMON_PORT to its port, and start resmon if it is not \
                 running."
            ),
        ),
    };
    if variable == "RESMON_DB_PATH" && env.is_empty("RESMON_PORT_FILE") {
        message.push_str(" RESMON_PORT_FILE is set but empty, which counts as unset.");
    }
    ToolError::new(Code::BackendUnavailable, message)
        .with_detail("port_file", json!(path.to_string()))
        .with_detail("source", json!(variable))
        .with_detail("problem", json!("absent"))
        .with_top_level("tried", json!([]))
}

/// RESMON_PORT names a port and no token file for it is there. A running
/// resmon keeps its token file until it stops, and a clean shutdown removes
/// it, so "not running" comes first; a state folder elsewhere and a release
/// too old to publish a token are rarer and come after. A missing folder, which
/// no stopped resmon leaves, points at the state folder instead.
pub(super) fn named_port_without_token(
    port: u16,
    token_file: &Path,
    folder_exists: bool,
    env: &Environment,
) -> ToolError {
    let folder = super::environment::parent_or_dot(token_file);
    let empty_state_dir = if env.is_empty("RESMON_STATE_DIR") {
        " RESMON_STATE_DIR is set but empty, which counts as unset, so the default folder was used."
    } else {
        ""
    };
    let too_old = "A resmon release older than the local-API token publishes no token file at all; \
                   such a resmon must be updated before this server can use it.";
    let message = if folder_exists {
        format!(
            "No resmon appears to be running on port {port}, which RESMON_PORT names: there is no \
             token file for that port at {}, and a running resmon keeps its token file until it \
             stops (a clean shutdown removes it). Nothing was sent to that port. Start resmon and \
             call again.{empty_state_dir} If resmon is running on that port, it keeps its state in \
             another folder: set RESMON_STATE_DIR to that folder. {too_old}",
            token_file.display()
        )
    } else {
        format!(
            "Port {port} was named by RESMON_PORT, but the folder that would hold its token file, \
             {}, does not exist, so nothing was sent to that port.{empty_state_dir} A resmon creates \
             that folder when it starts and leaves it when it stops, so the resmon on that port \
             keeps its state elsewhere: set RESMON_STATE_DIR to that folder, and start resmon if it \
             is not running. {too_old}",
            folder.display()
        )
    };
    ToolError::new(Code::BackendUnavailable, message)
        .with_detail("port", json!(port))
        .with_detail("token_file", json!(token_file.display().to_string()))
        .with_detail("problem", json!("absent"))
        .with_top_level("tried", json!([]))
}

/// RESMON_STATE_DIR names a folder that is not the default state directory
/// (or that cannot be shown to be, when the default cannot be worked out),
/// and nothing names a port. The default port file belongs to whichever
/// resmon runs on the default paths, so reading it could attach to another
/// instance than the one whose state was named (contract-notes 1).
pub(super) fn state_dir_names_no_instance(
    named: &Path,
    default: Option<&Path>,
    env: &Environment,
) -> ToolError {
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

pub(super) fn not_unicode(name: &str) -> ToolError {
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
pub(super) fn no_state_dir(port: u16) -> ToolError {
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
pub(super) fn missing_variables(platform: Platform) -> String {
    match platform.state_variables() {
        [one] => format!("{one} is not set"),
        [first, second] => format!("neither {first} nor {second} is set"),
        names => format!("none of {} is set", names.join(", ")),
    }
}

pub(super) fn no_home(platform: Platform) -> ToolError {
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
