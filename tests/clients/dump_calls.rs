//! Prints `tests/it/calls.rs` as JSON: its `every_branch` list, its
//! `invalid_calls` and its `WRITE_TOOLS`, so that the drivers of outside
//! programs call and expect exactly what the Rust tests do: one source.
//!
//! Not a Cargo target (nothing under tests/clients/ is); `run.sh` compiles it
//! with `rustc` against the serde_json that `cargo build` already built.
//! The fake's runtime id differs per start, so it is printed as a placeholder
//! the client scripts replace with the id `health` reports.

#[path = "../it/calls.rs"]
mod calls;

/// What the scripts look for and replace.
const RUNTIME_ID_PLACEHOLDER: &str = "@RUNTIME_ID@";

fn main() {
    let list: Vec<serde_json::Value> = calls::every_branch(RUNTIME_ID_PLACEHOLDER)
        .into_iter()
        .map(|(tool, arguments)| serde_json::json!({"tool": tool, "arguments": arguments}))
        .collect();
    // Each as [tool, arguments, argument], the order the drivers unpack.
    let invalid: Vec<serde_json::Value> = calls::invalid_calls()
        .into_iter()
        .map(|(tool, arguments, argument)| serde_json::json!([tool, arguments, argument]))
        .collect();
    let out = serde_json::json!({
        "runtime_id_placeholder": RUNTIME_ID_PLACEHOLDER,
        "calls": list,
        "invalid_calls": invalid,
        "write_tools": calls::WRITE_TOOLS,
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("a Value always serialises"));
}
