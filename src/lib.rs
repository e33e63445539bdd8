//! resmon-mcp: contract 1.0 of resmon's MCP tool surface, served over stdio,
//! backed by the running resmon app's local HTTP API. See docs/ARCHITECTURE.md.

// A `ToolError` is a few maps wide; it travels once per failed call, so its
// size is irrelevant here and boxing it would only add noise to every handler.
#![allow(clippy::result_large_err)]
// A bare `pub` is for what the binary, the examples, the fuzz targets and the
// tests use; everything else says who may use it (docs/ARCHITECTURE.md).
#![warn(unreachable_pub)]

pub mod args;
pub mod backend;
pub mod check;
pub mod config;
pub mod discovery;
pub mod error;
pub(crate) mod identity;
mod probe;
pub mod prompts;
pub mod protocol;
pub mod redact;
mod register;
pub(crate) mod settings_policy;
pub mod stdio;
pub mod tools;
