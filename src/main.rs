//! Command line: serve MCP over stdio (no arguments), `--check`, or `call`.
//! Exit codes: 0 success; 1 `--check` found no resmon or `call` answered an
//! error; 2 the command line or the JSON argument was wrong.

use std::io::{self, Write};

use anyhow::Context;
use std::process::ExitCode;

use resmon_mcp::args::Repeats;
use resmon_mcp::config::Config;
use resmon_mcp::discovery::{self, Text};
use resmon_mcp::protocol::Server;
use resmon_mcp::{check, redact, stdio, tools};

const HELP: &str = "\
resmon-mcp: resmon's MCP tool surface (contract 1.0) over stdio

Usage:
  resmon-mcp                     serve MCP on stdin/stdout (what a harness runs)
  resmon-mcp --check [--json]    show how resmon is found and whether it answers,
                                 then how to register this server
  resmon-mcp --check --for <harness>
                                 ... and that harness's registration: claude-code,
                                 codex, claude-desktop, cursor, gemini or opencode
  resmon-mcp call <tool> [JSON]  run one tool, print its answer as JSON
                                 (JSON as -: read the arguments from stdin);
                                 a write runs at once, nobody is asked first
  resmon-mcp --help | --version

Options (before any subcommand):
  --read-only[=true|false]  offer and run only the 18 read tools; =false leaves
                            it to RESMON_MCP_READ_ONLY (either one can turn it on)

Environment:
  RESMON_PORT             port of the resmon to use (wins over the port file)
  RESMON_PORT_FILE        path of the port file resmon writes on start-up
  RESMON_DB_PATH          database path; its folder holds resmon.port otherwise
  RESMON_STATE_DIR        resmon's state folder (token files); default per OS.
                          It names no instance: a folder other than the default
                          needs RESMON_PORT_FILE or RESMON_PORT beside it
  RESMON_MCP_READ_ONLY=1  offer and run only the 18 read tools
  RESMON_MCP_TIMEOUT_MS   lower the per-call bound (at most 30000)

Exit status: 0 ok; 1 no resmon answered (--check) or the tool answered an
error (call); 2 usage error.
";

/// What `call` takes, for a sentence about a `call` command line that is
/// wrong: shorter than the whole help, and what the person was writing.
const CALL_USAGE: &str = "Usage: resmon-mcp [--read-only] call <tool> [JSON | -]";

enum Command {
    Serve,
    Check { json: bool, harness: Option<check::Harness> },
    Call { tool: String, arguments: String },
    Help,
    Version,
}

/// A command line that cannot be run: the sentence, and whether the whole
/// help follows it (or, for a `call` command line, the usage of `call` alone).
struct Usage {
    sentence: String,
    whole_help: bool,
}

impl From<lexopt::Error> for Usage {
    fn from(error: lexopt::Error) -> Usage {
        // lexopt's sentence, capitalised and closed like every other.
        let sentence = error.to_string();
        let mut chars = sentence.chars();
        let sentence: String =
            chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
        Usage { sentence: format!("{}.", sentence.trim_end_matches('.')), whole_help: true }
    }
}

/// `read_only` collects `--read-only`: set by any occurrence that says true.
fn parse_args(read_only: &mut bool) -> Result<Command, Usage> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let mut command = Command::Serve;
    let mut json = false;
    let mut harness = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help),
            Short('V') | Long("version") => return Ok(Command::Version),
            Long("check") => command = Command::Check { json, harness },
            Long("json") => json = true,
            Long("for") => {
                let given = parser.value()?.string()?;
                let parsed = check::Harness::parse(&given)
                    .map_err(|sentence| Usage { sentence: format!("{sentence}."), whole_help: false })?;
                harness = Some(parsed);
            }
            Long("read-only") => *read_only |= read_only_value(parser.optional_value())?,
            Value(value) if matches!(command, Command::Serve) && value == "call" => {
                let rest: Vec<String> =
                    parser.raw_args()?.map(|word| word.to_string_lossy().into_owned()).collect();
                return call_args(&rest).map_err(|sentence| Usage { sentence, whole_help: false });
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    if let Command::Check { .. } = command {
        return Ok(Command::Check { json, harness });
    }
    if json {
        return Err(Usage { sentence: "--json goes with --check.".into(), whole_help: true });
    }
    if harness.is_some() {
        return Err(Usage {
            sentence: "--for goes with --check: resmon-mcp --check --for <harness>.".into(),
            whole_help: false,
        });
    }
    Ok(command)
}

/// The words after `call`: a tool's name and at most one JSON argument.
/// An option there is answered with where it belongs, since `call` takes
/// none of its own (`-` alone is the JSON read from stdin).
fn call_args(rest: &[String]) -> Result<Command, String> {
    let is_option = |word: &str| word.len() > 1 && word.starts_with('-');
    if rest.iter().any(|word| word == "--help" || word == "-h") {
        return Ok(Command::Help);
    }
    if let Some(option) = rest.iter().find(|word| is_option(word)) {
        let tool = rest.first().filter(|word| !is_option(word)).map_or("<tool>", String::as_str);
        let name = option.split('=').next().unwrap_or(option);
        return Err(match name {
            "--read-only" => format!(
                "--read-only goes before call, where it applies to the whole run: resmon-mcp {option} call {tool} \
                 …\n{CALL_USAGE}"
            ),
            "--json" => format!("call always prints JSON; --json goes with --check.\n{CALL_USAGE}"),
            "--check" | "--for" => {
                format!("{name} is not part of call: resmon-mcp --check [--for <harness>].\n{CALL_USAGE}")
            }
            _ => format!(
                "call takes a tool's name and its JSON arguments, and no option {option:?}.\n{CALL_USAGE}"
            ),
        });
    }
    match rest {
        [] => Err(format!("call needs a tool's name. {}\n{CALL_USAGE}", tool_list())),
        [tool] => Ok(Command::Call { tool: tool.clone(), arguments: "{}".into() }),
        [tool, arguments] => Ok(Command::Call { tool: tool.clone(), arguments: arguments.clone() }),
        [_, _, extra, ..] => Err(format!(
            "call takes a tool's name and one JSON argument; {extra:?} is one word too many (put the whole JSON \
             object in one quoted argument, or pass - and give it on stdin).\n{CALL_USAGE}"
        )),
    }
}

/// `--read-only` alone means true. A bundle host fills in `--read-only=${user_config.read_only}`
/// with its checkbox as the text `true` or `false` (contract-notes 23); anything else
/// is refused, because guessing could leave the write tools on.
fn read_only_value(value: Option<std::ffi::OsString>) -> Result<bool, lexopt::Error> {
    let Some(value) = value else { return Ok(true) };
    match value.to_str() {
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(other) if other.starts_with("${") => Err(format!(
            "--read-only got {other:?}: the host that started this server did not fill in its \
             setting; give --read-only=true or --read-only=false"
        )
        .into()),
        _ => Err(format!("--read-only takes true or false (--read-only=false), not {value:?}").into()),
    }
}

fn main() -> ExitCode {
    // One scrubbed line instead of Rust's default panic report: never a
    // stack trace, never a secret (contract 1.0 "When the backend is not named, or not running": never a stack trace).
    std::panic::set_hook(Box::new(|info| redact::log(&format!("internal error: {info}"))));
    let mut read_only_flag = false;
    let command = match parse_args(&mut read_only_flag) {
        Ok(command) => command,
        Err(Usage { sentence, whole_help }) => {
            let help = if whole_help { format!("\n\n{HELP}") } else { String::new() };
            redact::log(&format!("{sentence}{help}"));
            return ExitCode::from(2);
        }
    };
    let config = Config::from_process().with_read_only_flag(read_only_flag);
    match command {
        Command::Help => print_stdout(HELP),
        Command::Version => print_stdout(&format!(
            "resmon-mcp {} (contract {})\n",
            env!("CARGO_PKG_VERSION"),
            tools::CONTRACT_VERSION
        )),
        Command::Serve => serve(&config),
        Command::Check { json, harness } => {
            let report = check::run(&config, harness);
            let text = if json { format!("{}\n", pretty(&report.json)) } else { report.text };
            let code = print_stdout(&text);
            if report.connected { code } else { ExitCode::from(1) }
        }
        Command::Call { tool, arguments } => call(&config, &tool, &arguments),
    }
}

fn serve(config: &Config) -> ExitCode {
    match serve_stdio(config) {
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
fn serve_stdio(config: &Config) -> anyhow::Result<()> {
    let mut server = Server::new(config.backend(), config.read_only);
    let stdin = io::stdin();
    let stdout = io::stdout();
    stdio::serve(&mut server, &mut stdin.lock(), &mut stdout.lock())
        .context("stopped serving: stdin or stdout failed")
}

/// A name that is no tool's: the closest names, or the whole list.
fn unknown_tool(tool: &str) -> ExitCode {
    let closest = tools::nearest_names(tool);
    let hint = match closest.as_slice() {
        [] => tool_list(),
        [one] => format!("Did you mean {one}?"),
        several => format!("The closest are {}.", several.join(", ")),
    };
    redact::log(&format!("No tool is named {tool:?}. {hint}"));
    ExitCode::from(2)
}

fn call(config: &Config, tool: &str, arguments: &str) -> ExitCode {
    // The name first, so that a typo is not answered by waiting on stdin.
    if !tools::TOOLS.iter().any(|known| known.name == tool) {
        return unknown_tool(tool);
    }
    let arguments = match call_arguments(tool, arguments) {
        Ok(arguments) => arguments,
        Err(message) => {
            redact::log(&message);
            return ExitCode::from(2);
        }
    };
    let (arguments, repeats) = arguments;
    let mut backend = config.backend();
    // tools::call answers None only for a name it does not know, which the
    // check above has already answered; should that ever change, the answer
    // is still that one, not a second wording of it.
    let Some(result) = tools::call(&mut backend, tool, &arguments, &repeats, config.read_only) else {
        return unknown_tool(tool);
    };
    let (answer, code) = match result {
        Ok(answer) => (answer, ExitCode::SUCCESS),
        Err(error) => (error.to_json(), ExitCode::from(1)),
    };
    let printed = print_stdout(&format!("{}\n", pretty(&answer)));
    if printed == ExitCode::SUCCESS { code } else { printed }
}

fn tool_list() -> String {
    let names: Vec<&str> = tools::TOOLS.iter().map(|tool| tool.name).collect();
    format!("The tools are: {}.", names.join(", "))
}

/// The arguments of `call`: the command-line value, or stdin when it is `-`,
/// with the keys its text gives more than once (which the parsed value
/// cannot show; `tools::call` refuses them). Reading stdin lets a script
/// hand over JSON without any shell quoting, which differs between cmd.exe,
/// PowerShell and POSIX shells.
fn call_arguments(tool: &str, given: &str) -> Result<(serde_json::Value, Repeats), String> {
    let repeats = |text: &str| Repeats::in_object(text.as_bytes());
    if given == "-" {
        let text = read_stdin_arguments(tool)?;
        return serde_json::from_str(&text).map(|value| (value, repeats(&text))).map_err(|error| {
            format!(
                "The arguments read from stdin for {tool} are not valid JSON ({error}). Give one \
                 JSON object, such as {{\"key\":\"value\"}}; on stdin it needs no shell quoting."
            )
        });
    }
    serde_json::from_str(given).map(|value| (value, repeats(given))).map_err(|error| {
        let trimmed = given.trim();
        let cause = if trimmed.len() >= 2 && trimmed.starts_with('\'') && trimmed.ends_with('\'') {
            " It arrived wrapped in single quotes, which cmd.exe passes on as they are."
        } else {
            ""
        };
        format!(
            "The arguments given for {tool} are not valid JSON ({error}).{cause} Give one JSON \
             object. Written as \"{{\\\"key\\\":\\\"value\\\"}}\" (double quotes around it, a \
             backslash before each inner double quote) it reads the same in cmd.exe and in POSIX \
             shells. Or pass - in its place and put the JSON on stdin, which needs no quoting: \
             resmon-mcp call {tool} - < arguments.json"
        )
    })
}

fn read_stdin_arguments(tool: &str) -> Result<String, String> {
    use std::io::{IsTerminal, Read};
    let stdin = io::stdin();
    if stdin.is_terminal() {
        redact::log(&format!(
            "Reading the JSON arguments for {tool} from stdin; end them with Ctrl-D (on Windows, \
             Ctrl-Z and Enter)."
        ));
    }
    let limit = stdio::MAX_LINE_BYTES as u64;
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("The arguments for {tool} could not be read from stdin ({error})."))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "The arguments for {tool} on stdin are longer than {} MiB; no tool takes that much.",
            limit >> 20
        ));
    }
    // A file saved by a Windows editor may carry a byte-order mark, or be
    // UTF-16 (Windows PowerShell's `>`): take the first, name the second.
    match discovery::decode_text(&bytes) {
        Text::Utf16 { order, .. } => Err(format!(
            "The arguments for {tool} on stdin are {order}; save them as UTF-8 (or plain ASCII) \
             and try again."
        )),
        Text::Plain(text) | Text::Utf8Bom(text) if text.trim().is_empty() => {
            Err(format!("No arguments for {tool} arrived on stdin; give one JSON object, such as {{}}."))
        }
        Text::Plain(text) | Text::Utf8Bom(text) => Ok(text),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The read-tool count the help states is the tool table's.
    #[test]
    fn the_help_counts_the_read_tools_of_the_table() {
        let reads = tools::TOOLS.iter().filter(|tool| !tool.requires_confirmation).count();
        let stated = format!("only the {reads} read tools");
        assert_eq!(HELP.matches(&stated).count(), 2, "--help must say `{stated}` for both switches:\n{HELP}");
    }
}
