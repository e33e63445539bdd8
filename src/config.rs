//! Process-wide settings read once from the environment at start-up.

use std::time::Duration;

use crate::backend::{Backend, MAX_REQUEST_TIMEOUT};
use crate::discovery::Environment;

pub struct Config {
    pub env: Environment,
    /// RESMON_MCP_READ_ONLY=1, exactly (contract 1.0 "A read-only session"),
    /// or `--read-only[=true]` on the command line (contract-notes 23).
    pub read_only: bool,
    /// The per-call bound; RESMON_MCP_TIMEOUT_MS may lower it, never raise it
    /// past 30 s (contract-notes 4).
    pub request_timeout: Duration,
    /// What started this process, for the registration `--check` prints.
    pub started_by: StartedBy,
}

/// What the npm launcher says about itself: `RESMON_MCP_LAUNCHER=npx` and
/// `RESMON_MCP_PACKAGE=<spec>` (such as `resmon-mcp@0.2.0`) in the
/// environment of the binary it starts. Read only by `--check`, which
/// prints the registration as that launcher's command rather than the path
/// of the binary in npm's cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StartedBy {
    pub launcher: Option<String>,
    pub package: Option<String>,
}

impl StartedBy {
    fn from_process() -> StartedBy {
        let read = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        StartedBy { launcher: read("RESMON_MCP_LAUNCHER"), package: read("RESMON_MCP_PACKAGE") }
    }
}

impl Config {
    pub fn from_process() -> Config {
        let read_only = std::env::var("RESMON_MCP_READ_ONLY").is_ok_and(|value| value == "1");
        let (request_timeout, warning) =
            request_timeout(std::env::var("RESMON_MCP_TIMEOUT_MS").ok().as_deref());
        if let Some(warning) = warning {
            crate::redact::log(&warning);
        }
        Config {
            env: Environment::from_process(),
            read_only,
            request_timeout,
            started_by: StartedBy::from_process(),
        }
    }

    /// Adds the command line's `--read-only` answer. Either source can make
    /// the session read-only and neither can undo the other: `--read-only=false`
    /// leaves RESMON_MCP_READ_ONLY=1 in force (contract-notes 23).
    pub fn with_read_only_flag(mut self, flag: bool) -> Config {
        self.read_only |= flag;
        self
    }

    pub fn backend(&self) -> Backend {
        Backend::new(self.env.clone(), self.request_timeout)
    }
}

const MIN_REQUEST_TIMEOUT_MS: u64 = 100;

/// The per-call bound RESMON_MCP_TIMEOUT_MS asks for, and a sentence for
/// stderr when the value could not be used as written. The variable is set
/// to fit under a client's own timeout, so a value that is silently read
/// as something else would bring back the very timeout it was set to avoid.
fn request_timeout(value: Option<&str>) -> (Duration, Option<String>) {
    let ceiling = MAX_REQUEST_TIMEOUT.as_millis();
    let Some(value) = value else { return (MAX_REQUEST_TIMEOUT, None) };
    let Ok(millis) = value.trim().parse::<u64>() else {
        return (
            MAX_REQUEST_TIMEOUT,
            Some(format!(
                "RESMON_MCP_TIMEOUT_MS={value:?} is not a whole number of milliseconds, so the per-call \
                 bound stays {ceiling} ms; write it as digits only, e.g. 4000."
            )),
        );
    };
    if u128::from(millis) > ceiling {
        let warning = format!(
            "RESMON_MCP_TIMEOUT_MS={millis} is above the {ceiling} ms ceiling, so the per-call bound is {ceiling} ms."
        );
        return (MAX_REQUEST_TIMEOUT, Some(warning));
    }
    if millis < MIN_REQUEST_TIMEOUT_MS {
        let warning = format!(
            "RESMON_MCP_TIMEOUT_MS={millis} is below {MIN_REQUEST_TIMEOUT_MS} ms, too short for any call to \
             succeed, so the per-call bound is {MIN_REQUEST_TIMEOUT_MS} ms."
        );
        return (Duration::from_millis(MIN_REQUEST_TIMEOUT_MS), Some(warning));
    }
    (Duration::from_millis(millis), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_taken_as_written_or_said_why_not() {
        assert_eq!(request_timeout(None), (MAX_REQUEST_TIMEOUT, None));
        assert_eq!(request_timeout(Some("4000")), (Duration::from_millis(4000), None));
        assert_eq!(request_timeout(Some(" 30000 ")), (MAX_REQUEST_TIMEOUT, None));
        for (value, bound) in [("4s", 30_000), ("", 30_000), ("-5", 30_000), ("90000", 30_000), ("5", 100)] {
            let (got, warning) = request_timeout(Some(value));
            assert_eq!(got, Duration::from_millis(bound), "{value:?}");
            let warning = warning.unwrap_or_else(|| panic!("no warning for {value:?}"));
            assert!(warning.starts_with("RESMON_MCP_TIMEOUT_MS="), "{warning}");
            assert!(warning.contains(&format!("{bound} ms")), "{warning}");
        }
    }
}
