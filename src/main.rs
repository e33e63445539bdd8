//! Command line: serve MCP over stdio (no arguments), `--check`, or `call`.
//! Exit codes: 0 success; 1 `--check` found no resmon or `call` answered an
//! error; 2 the command line or the JSON argument was wrong.

use std::io::{self, Write};

use anyhow::Context;
use std::process::ExitCode;

use resmon_mcp::config::Config;
use resmon_mcp::protocol::{self, Server};
use resmon_mcp::{check, redact, tools};

const HELP: &str = "\
resmon-mcp: resmon's MCP tool surface (contract 1.0) over stdio

Usage:
  resmon-mcp                     serve MCP on stdin/stdout (what a harness runs)
  resmon-mcp --check [--json]    show how resmon is found and whether it answers
  resmon-mcp call <tool> [JSON]  run one tool, print its answer as JSON
  resmon-mcp --help | --version

Environment:
  RESMON_PORT             port of the resmon to use (wins over the port file)
  RESMON_PORT_FILE        path of the port file resmon writes on start-up
  RESMON_DB_PATH          database path; its folder holds resmon.port otherwise
  RESMON_STATE_DIR        resmon's state folder (token files); default per OS
  RESMON_MCP_READ_ONLY=1  offer and run only the 18 read tools
  RESMON_MCP_TIMEOUT_MS   lower the per-call bound (at most 30000)

Exit status: 0 ok; 1 no resmon answered (--check) or the tool answered an
error (call); 2 usage error.
";

enum Command {
    Serve,
    Check { json: bool },
    Call { tool: String, arguments: String },
    Help,
    Version,
}

fn parse_args() -> Result<Command, lexopt::Error> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let mut command = Command::Serve;
    let mut json = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Short('V') | Long("version") => return Ok(Command::Version),
            Long("check") => command = Command::Check { json },
            Long("json") => json = true,
            Value(value) if matches!(command, Command::Serve) && value == "call" => {
                let tool = parser.value()?.string()?;
                let arguments = match parser.next()? {
                    Some(Value(arguments)) => arguments.string()?,
                    Some(other) => return Err(other.unexpected()),
                    None => "{}".to_string(),
                };
                if let Some(extra) = parser.next()? {
                    return Err(extra.unexpected());
                }
                return Ok(Command::Call { tool, arguments });
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if let Command::Check { .. } = command {
        return Ok(Command::Check { json });
    }
    if json {
        return Err("--json goes with --check".into());
    }
    Ok(command)
}

fn main() -> ExitCode {
    // One scrubbed line instead of Rust's default panic report: never a
    // stack trace, never a secret (issue 2 §5).
    std::panic::set_hook(Box::new(|info| redact::log(&format!("internal error: {info}"))));
    let command = match parse_args() {
        Ok(command) => command,
        Err(error) => {
            redact::log(&format!("{error}\n\n{HELP}"));
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => print_stdout(HELP),
        Command::Version => print_stdout(&format!(
            "resmon-mcp {} (contract {})\n",
            env!("CARGO_PKG_VERSION"),
            protocol::CONTRACT_VERSION
        )),
        Command::Serve => serve(),
        Command::Check { json } => {
            let report = check::run(&Config::from_process());
            let text = if json { format!("{}\n", pretty(&report.json)) } else { report.text };
            let code = print_stdout(&text);
            if report.connected { code } else { ExitCode::from(1) }
        }
        Command::Call { tool, arguments } => call(&tool, &arguments),
    }
}

fn serve() -> ExitCode {
    match serve_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the context chain on one line: what stopped, and why.
            redact::log(&format!("{error:#}"));
            ExitCode::from(1)
        }
    }
}

/// Only an unreadable stdin or an unwritable stdout (other than a closed
/// pipe, which is a normal end) stops the server; no message ever does.
fn serve_stdio() -> anyhow::Result<()> {
    let config = Config::from_process();
    let mut server = Server::new(config.backend(), config.read_only);
    let stdin = io::stdin();
    let stdout = io::stdout();
    protocol::serve(&mut server, &mut stdin.lock(), &mut stdout.lock())
        .context("stopped serving: stdin or stdout failed")
}

fn call(tool: &str, arguments: &str) -> ExitCode {
    let arguments: serde_json::Value = match serde_json::from_str(arguments) {
        Ok(arguments) => arguments,
        Err(error) => {
            redact::log(&format!(
                "the arguments are not valid JSON ({error}); pass one JSON object, e.g. '{{}}'"
            ));
            return ExitCode::from(2);
        }
    };
    let config = Config::from_process();
    let mut backend = config.backend();
    let Some(result) = tools::call(&mut backend, tool, &arguments, config.read_only) else {
        let names: Vec<&str> = tools::TOOLS.iter().map(|tool| tool.name).collect();
        redact::log(&format!("no tool is named {tool:?}; the tools are: {}", names.join(", ")));
        return ExitCode::from(2);
    };
    let (answer, code) = match result {
        Ok(answer) => (answer, ExitCode::SUCCESS),
        Err(error) => (error.to_json(), ExitCode::from(1)),
    };
    let printed = print_stdout(&format!("{}\n", pretty(&answer)));
    if printed == ExitCode::SUCCESS { code } else { printed }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Writes to stdout through the token scrubber; a closed pipe is not an error
/// worth a message.
fn print_stdout(text: &str) -> ExitCode {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(redact::scrub(text).as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            redact::log(&format!("cannot write to stdout: {error}"));
            ExitCode::from(1)
        }
    }
}
