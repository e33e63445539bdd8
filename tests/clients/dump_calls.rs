//! Prints `tests/it/calls.rs`'s `every_branch` list as JSON, so the client
//! tests in this folder call exactly what the Rust tests call: one source.
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
    let out = serde_json::json!({"runtime_id_placeholder": RUNTIME_ID_PLACEHOLDER, "calls": list});
    println!("{}", serde_json::to_string_pretty(&out).expect("a Value always serialises"));
}
