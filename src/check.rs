//! `resmon-mcp --check`: tells a person (or, with --json, a script) what
//! discovery looked at, what it found, and whether resmon answered.
//! The token itself is never printed; only whether a usable one exists.

use serde_json::{Value, json};

use crate::config::Config;
use crate::discovery::Trace;
use crate::register::Registration;
use crate::tools;

pub struct Report {
    pub connected: bool,
    pub text: String,
    pub json: Value,
}

pub fn run(config: &Config) -> Report {
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
    attach_registrations(&mut report, config, &trace);
    report
}

/// Adds the registrations to a connected report; a report that did not
/// connect already names the variable to set and gets nothing.
fn attach_registrations(report: &mut Report, config: &Config, trace: &Trace) {
    if !report.connected {
        return;
    }
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
        Ok(command) => Registration::new(command, config, trace),
        Err(why) => {
            let sentence =
                format!("No registration was printed: {why}. Register the binary by hand (docs/setup.md).");
            report.text.push_str(&format!("registration: {sentence}\n"));
            report.json["register_error"] = json!(sentence);
            return;
        }
    };
    report.text.push_str(&registration.human_text());
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
