//! Process-wide settings read once from the environment at start-up.

use std::time::Duration;

use crate::backend::{Backend, MAX_REQUEST_TIMEOUT};
use crate::discovery::Environment;

pub struct Config {
    pub env: Environment,
    /// RESMON_MCP_READ_ONLY=1, exactly (contract 1.0 "A read-only session"),
    /// or `--read-only[=true]` on the command line (contract-notes 23).
    pub read_only: bool,
    /// Per-request bound; RESMON_MCP_TIMEOUT_MS may lower it, never raise it
    /// past 30 s (clarification 4).
    pub request_timeout: Duration,
}

impl Config {
    pub fn from_process() -> Config {
        let read_only = std::env::var("RESMON_MCP_READ_ONLY").is_ok_and(|value| value == "1");
        let request_timeout = std::env::var("RESMON_MCP_TIMEOUT_MS")
            .ok()
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(|millis| Duration::from_millis(millis.max(100)))
            .unwrap_or(MAX_REQUEST_TIMEOUT)
            .min(MAX_REQUEST_TIMEOUT);
        Config { env: Environment::from_process(), read_only, request_timeout }
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
