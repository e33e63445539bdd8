//! `resmon-mcp --check`: tells a person (or, with --json, a script) what
//! discovery looked at, what it found, and whether resmon answered.
//! The token itself is never printed; only whether a usable one exists.

use serde_json::{Value, json};

use crate::config::Config;
use crate::discovery::{self, Trace};
pub use crate::register::Harness;
use crate::register::{Registration, launch};
use crate::tools;

pub struct Report {
    pub connected: bool,
    pub text: String,
    pub json: Value,
}

/// `harness`: the one `--for` named, whose registration the text ends with;
/// without it the text ends with the command that prints each one. The JSON
/// carries every harness's either way.
pub fn run(config: &Config, harness: Option<Harness>) -> Report {
    let mut backend = config.backend();
    let mut trace = Trace::new();
    let outcome = backend.discover(&mut trace);
    let offered = tools::TOOLS.iter().filter(|tool| tools::is_offered(tool, config.read_only)).count();
    let mode = if config.read_only {
        format!(
            "read-only (RESMON_MCP_READ_ONLY=1 or --read-only): {offered} read tools offered, write tools refused"
        )
    } else {
        format!("full surface: {offered} tools offered (write tools are marked requires_confirmation)")
    };
    let mut text = format!(
        "resmon-mcp {} (contract {})\nmode: {mode}\nper-call bound in force: {} s (a call resmon has not answered by then is backend_unavailable; keep it below the harness's tool timeout: docs/setup.md)\ndiscovery:\n",
        env!("CARGO_PKG_VERSION"),
        crate::tools::CONTRACT_VERSION,
        config.request_timeout.as_secs_f32()
    );
    for step in &trace {
        text.push_str(&format!("  {}: {}\n", step.what, step.outcome));
    }
    let steps: Vec<Value> =
        trace.iter().map(|step| json!({"what": step.what, "outcome": step.outcome})).collect();
    let mut report = match outcome {
        Ok(health) => {
            let field = |pointer: &str| health.pointer(pointer).cloned().unwrap_or(Value::Null);
            text.push_str(&format!(
                "result: connected to resmon {} (runtime_id {}, schema {})\n",
                plain(&field("/version")),
                plain(&field("/identity/runtime_id")),
                plain(&field("/identity/schema_version")),
            ));
            let verdicts = crate::probe::probe_all(&mut backend);
            text.push_str(&crate::probe::summary(&verdicts, health["version"].as_str()));
            let tools: Vec<Value> = verdicts.iter().map(crate::probe::Verdict::to_json).collect();
            let json = json!({
                "connected": true, "read_only": config.read_only, "steps": steps,
                "per_call_bound_s": config.request_timeout.as_secs_f64(),
                "health": {"version": field("/version"), "identity": field("/identity")},
                "tools": tools,
            });
            Report { connected: true, text, json }
        }
        Err(error) => {
            text.push_str(&format!("result: not connected ({})\n  {}\n", error.code.as_str(), error.message));
            let json = json!({"connected": false, "read_only": config.read_only, "steps": steps,
                "per_call_bound_s": config.request_timeout.as_secs_f64(), "error": error.to_json()});
            Report { connected: false, text, json }
        }
    };
    attach_registrations(&mut report, config, &trace, harness);
    report
}

/// Adds the registrations. A report that connected gets the ones built
/// from what discovery just used. One that did not still gets them, marked
/// as not verified, when the variables alone name an instance (or leave it
/// to the default paths): that is how a person sets up a harness while the
/// app is closed. When they do not, the report already names the variable
/// to fix, and a registration would only carry the mistake along.
fn attach_registrations(report: &mut Report, config: &Config, trace: &Trace, harness: Option<Harness>) {
    let verified = report.connected;
    let mut named = Trace::new();
    let trace = if verified {
        trace
    } else if discovery::names_an_instance(&config.env, &mut named) {
        &named
    } else {
        return;
    };
    // Made absolute: on some systems current_exe is the path as the binary
    // was started, which may be relative to a working directory.
    let exe = std::env::current_exe()
        .and_then(std::path::absolute)
        .map_err(|error| format!("this binary's path cannot be read ({error})"));
    let exe = exe.and_then(|path| match path.to_str() {
        Some(text) => Ok(text.to_string()),
        None => Err(format!(
            "this binary's path {} is not valid Unicode, which no harness config can hold",
            path.display()
        )),
    });
    let registration = match exe {
        Ok(exe) => Registration::new(launch(&exe, &config.started_by, cfg!(windows)), config, trace),
        Err(why) => {
            let sentence =
                format!("No registration was printed: {why}. Register the binary by hand (docs/setup.md).");
            report.text.push_str(&format!("registration: {sentence}\n"));
            report.json["register_error"] = json!(sentence);
            return;
        }
    };
    report.text.push_str(&match harness {
        Some(harness) => registration.harness_text(harness, verified),
        None => registration.summary_text(verified),
    });
    report.json["register_verified"] = json!(verified);
    report.json["register_launch"] = registration.launch_json();
    report.json["register"] = registration.to_json();
    report.json["register_approval"] = registration.approval_json();
    report.json["register_notes"] = json!(registration.notes);
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "unknown".into(),
        other => other.to_string(),
    }
}
