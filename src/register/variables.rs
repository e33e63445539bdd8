//! Which variables a registration carries: the discovery variables that
//! were set and consulted, made absolute, and never a state directory
//! without what names the port (contract-notes 1).

use std::path::{Path, PathBuf};

use crate::discovery::{Environment, Platform, Trace, default_state_dir};

/// The discovery variables that were set and that discovery consulted: the
/// trace names each variable it looked at, and a set variable it never
/// reached (RESMON_PORT_FILE when RESMON_PORT named the port) stays out.
/// Paths are made absolute, because a harness starts the server in a working
/// directory of its own.
///
/// Returns the variables and the notes that say what was changed.
pub(super) fn discovery_variables(env: &Environment, trace: &Trace) -> (Vec<(String, String)>, Vec<String>) {
    let variables = [
        ("RESMON_PORT", env.port.as_ref(), false),
        ("RESMON_PORT_FILE", env.port_file.as_ref(), true),
        ("RESMON_DB_PATH", env.db_path.as_ref(), true),
        ("RESMON_STATE_DIR", env.state_dir.as_ref(), true),
    ];
    let mut out: Vec<(String, String)> = variables
        .into_iter()
        .filter(|(name, _, _)| trace.iter().any(|step| step.what == *name))
        .filter_map(|(name, value, is_path)| {
            let value = value?;
            let value = if is_path { absolute(value) } else { value.trim().to_string() };
            Some((name.to_string(), value))
        })
        .collect();
    // A default folder derived from XDG_STATE_HOME or LOCALAPPDATA holds only
    // while the harness passes that variable on, and many pass just a short
    // list (HOME, PATH, ...). So the folder discovery used is written out.
    let platform = Platform::current();
    let derived = match platform {
        Platform::Xdg => env.xdg_state_home.is_some(),
        Platform::Windows => env.local_app_data.is_some(),
        Platform::MacOs => false,
    };
    if derived
        && env.state_dir.is_none()
        && let Some(dir) = default_state_dir(platform, env).and_then(|dir| dir.to_str().map(str::to_string))
    {
        let port_from_default = env.port.is_none() && env.port_file.is_none() && env.db_path.is_none();
        if port_from_default {
            let file = std::path::Path::new(&dir).join("resmon.port");
            out.push(("RESMON_PORT_FILE".into(), file.to_string_lossy().into_owned()));
        }
        out.push(("RESMON_STATE_DIR".into(), dir));
    }
    let notes = name_the_port(&mut out, env, platform);
    (out, notes)
}

/// A state directory names no instance (contract 1.0 "The local API token";
/// contract-notes 1), so a registration never carries RESMON_STATE_DIR
/// without RESMON_PORT or RESMON_PORT_FILE. When discovery found the port
/// through a port file that no such variable named, that file is named:
/// the one beside RESMON_DB_PATH (which it then replaces, being the only
/// thing discovery read it for), or the one in the default state directory.
/// Where neither can be worked out, RESMON_STATE_DIR is left out and a note
/// says to register it together with the port. No port number is invented.
pub(super) fn name_the_port(
    out: &mut Vec<(String, String)>,
    env: &Environment,
    platform: Platform,
) -> Vec<String> {
    let has = |out: &[(String, String)], name: &str| out.iter().any(|(key, _)| key == name);
    if !has(out, "RESMON_STATE_DIR") || has(out, "RESMON_PORT") || has(out, "RESMON_PORT_FILE") {
        return Vec::new();
    }
    let beside_database = out.iter().position(|(key, _)| key == "RESMON_DB_PATH");
    if let Some(at) = beside_database {
        let database = PathBuf::from(&out[at].1);
        let folder = database.parent().map(Path::to_path_buf).unwrap_or_default();
        if let Some(file) = folder.join("resmon.port").to_str().map(str::to_string) {
            out[at] = ("RESMON_PORT_FILE".into(), file);
            return vec![
                "RESMON_DB_PATH is registered as the port file beside the database (RESMON_PORT_FILE), the file \
                 discovery read the port from, so that RESMON_STATE_DIR goes with what names the port"
                    .to_string(),
            ];
        }
    } else if let Some(file) = default_state_dir(platform, env)
        .map(|dir| absolute(&dir.join("resmon.port").to_string_lossy()))
        .filter(|file| !file.contains('\u{FFFD}'))
    {
        let at = out.iter().position(|(key, _)| key == "RESMON_STATE_DIR").unwrap_or(out.len());
        out.insert(at, ("RESMON_PORT_FILE".into(), file));
        return vec![
            "RESMON_PORT_FILE names the port file in the default state directory, which discovery read, so that \
             RESMON_STATE_DIR goes with what names the port"
                .to_string(),
        ];
    }
    let dir =
        out.iter().find(|(key, _)| key == "RESMON_STATE_DIR").map(|(_, dir)| dir.clone()).unwrap_or_default();
    out.retain(|(key, _)| key != "RESMON_STATE_DIR");
    vec![format!(
        "RESMON_STATE_DIR ({dir}) was left out: nothing named the port, and the port file discovery read cannot be \
         written out; register it together with RESMON_PORT_FILE (the resmon.port file that resmon writes) or \
         RESMON_PORT"
    )]
}

fn absolute(path: &str) -> String {
    std::path::absolute(path)
        .ok()
        .and_then(|absolute| absolute.to_str().map(str::to_string))
        .unwrap_or_else(|| path.to_string())
}
