//! Which protocol era a request belongs to, and whether its params carry
//! what that era asks every request of its kind to carry.
//!
//! Both eras are judged here and nowhere else, so the era a request is
//! served in and the fields it is checked for can never disagree. Fields
//! beyond the ones named here are never refused: both eras let a client add
//! members the server does not know.

use serde_json::{Map, Value, json};

use crate::args::kind_of;

use super::{
    HANDSHAKE_VERSIONS, INVALID_PARAMS, RpcError, STATELESS_VERSION, UNSUPPORTED_VERSION, rpc_error,
};

pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(super) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// Which era a request is served in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Era {
    Handshake,
    Stateless,
}

/// The era rule. A request whose `params._meta` carries the protocol-version
/// key speaks the per-request revision (2026-07-28 and later), whatever its
/// method, as the official conformance suite and the SDKs' era classifiers
/// read it. That includes `initialize`, which that revision no longer has,
/// so such an `initialize` is answered as an unknown method there. The one
/// exception is an `initialize` whose key names a handshake-era version: it
/// asks for the handshake, so it opens one (the specification's versioning
/// page: an `initialize` selects the legacy semantics). `server/discover`
/// exists only in the per-request revision, so it belongs there even without
/// the key (and is then told the key is missing). Everything else belongs to
/// the handshake era.
pub(super) fn era_of(method: &str, params: &Value) -> Era {
    let named = params.get("_meta").and_then(|meta| meta.get(META_VERSION));
    let names_a_handshake_version =
        named.and_then(Value::as_str).is_some_and(|version| HANDSHAKE_VERSIONS.contains(&version));
    if method == "initialize" && names_a_handshake_version {
        return Era::Handshake;
    }
    if named.is_some() || method == "server/discover" { Era::Stateless } else { Era::Handshake }
}

/// The per-request envelope of the stateless era. The version is judged
/// first: the other fields are defined by the revision it names, so a
/// version this server does not serve is answered with the versions it does
/// (-32022), whatever the rest looks like.
pub(super) fn check_stateless(params: &Value) -> Result<(), RpcError> {
    let meta = match params.get("_meta") {
        None => {
            return Err(invalid(format!(
                "params._meta is required in the stateless era, holding \"{META_VERSION}\" and \"{META_CAPABILITIES}\"."
            )));
        }
        Some(Value::Object(meta)) => meta,
        Some(other) => return Err(wrong_type("params._meta", "an object", other)),
    };
    let version = required(meta, META_VERSION, &meta_field(META_VERSION), "a protocol version string")?;
    let Some(version) = version.as_str() else {
        return Err(wrong_type(&meta_field(META_VERSION), "a string", version));
    };
    if version != STATELESS_VERSION {
        let mut supported: Vec<&str> = vec![STATELESS_VERSION];
        supported.extend(HANDSHAKE_VERSIONS.iter().rev());
        return Err(RpcError {
            code: UNSUPPORTED_VERSION,
            message: format!(
                "Unsupported protocol version: this server serves {STATELESS_VERSION} per request. For {} to {}, \
                 send initialize without \"{META_VERSION}\" in params._meta.",
                HANDSHAKE_VERSIONS[0],
                HANDSHAKE_VERSIONS[HANDSHAKE_VERSIONS.len() - 1],
            ),
            data: Some(json!({"supported": supported, "requested": version})),
        });
    }
    let capabilities = required(meta, META_CAPABILITIES, &meta_field(META_CAPABILITIES), "an object")?;
    if !capabilities.is_object() {
        return Err(wrong_type(&meta_field(META_CAPABILITIES), "an object", capabilities));
    }
    // Optional (a SHOULD), but when a client sends it, it must be well formed.
    if let Some(info) = meta.get(META_CLIENT_INFO) {
        check_implementation(info, &meta_field(META_CLIENT_INFO))?;
    }
    Ok(())
}

/// The parameters the handshake era's `initialize` requires; returns the
/// version the client asked for. Only the three required members are
/// judged: what the server does with a version it does not speak is the
/// negotiation's business (it offers its latest), not a malformed request.
pub(super) fn check_initialize(params: &Value) -> Result<&str, RpcError> {
    let params = match params {
        Value::Object(params) => params,
        Value::Null => {
            return Err(invalid(
                "initialize needs params holding protocolVersion (a string), capabilities (an object) and \
                 clientInfo (an object with name and version).",
            ));
        }
        other => return Err(wrong_type("params", "an object", other)),
    };
    let version = required(
        params,
        "protocolVersion",
        "params.protocolVersion",
        "the newest version the client speaks, a string",
    )?;
    let Some(version) = version.as_str() else {
        return Err(wrong_type("params.protocolVersion", "a string", version));
    };
    let capabilities = required(params, "capabilities", "params.capabilities", "an object")?;
    if !capabilities.is_object() {
        return Err(wrong_type("params.capabilities", "an object", capabilities));
    }
    let info = required(params, "clientInfo", "params.clientInfo", "an object with name and version")?;
    check_implementation(info, "params.clientInfo")?;
    Ok(version)
}

/// The `Implementation` shape both eras share: an object whose `name` and
/// `version` are strings. Its optional members (title, icons, ...) are not
/// judged.
fn check_implementation(info: &Value, field: &str) -> Result<(), RpcError> {
    let Some(info) = info.as_object() else {
        return Err(wrong_type(field, "an object with name and version", info));
    };
    for member in ["name", "version"] {
        let path = format!("{field}.{member}");
        let value = required(info, member, &path, "a string")?;
        if !value.is_string() {
            return Err(wrong_type(&path, "a string", value));
        }
    }
    Ok(())
}

fn required<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    path: &str,
    what: &str,
) -> Result<&'a Value, RpcError> {
    object.get(key).ok_or_else(|| invalid(format!("{path} is required ({what}).")))
}

fn meta_field(key: &str) -> String {
    format!("params._meta[\"{key}\"]")
}

fn invalid(message: impl AsRef<str>) -> RpcError {
    rpc_error(INVALID_PARAMS, format!("Invalid params: {}", message.as_ref()))
}

fn wrong_type(path: &str, expected: &str, got: &Value) -> RpcError {
    invalid(format!("{path} must be {expected}, not {}.", kind_of(got)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_era_follows_the_version_key_not_the_method() {
        let stateless = json!({"_meta": {META_VERSION: STATELESS_VERSION}});
        for method in ["initialize", "ping", "tools/list", "anything/else"] {
            assert_eq!(era_of(method, &stateless), Era::Stateless, "{method}");
            assert_eq!(era_of(method, &json!({"_meta": {}})), Era::Handshake, "{method}");
            assert_eq!(era_of(method, &Value::Null), Era::Handshake, "{method}");
        }
        assert_eq!(era_of("server/discover", &Value::Null), Era::Stateless);
        // A key holding null still says the client meant the stateless era.
        assert_eq!(era_of("initialize", &json!({"_meta": {META_VERSION: null}})), Era::Stateless);
    }
}
