//! The process floor the cold start is measured against: the least a Rust
//! program on stdio can do. For every line it reads it writes one canned
//! line, and it exits 0 at end of input. No JSON, no HTTP, no environment.
//! (The session and per-call figures use `examples/floor.rs` instead, which
//! also talks to resmon.)
//!
//! Built by `cargo run --release --example bench` (see docs/performance.md);
//! by hand: `cargo build --release --example process-floor`.

use std::io::{BufRead, Write};

const CANNED: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";

fn main() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = std::io::stdout().lock();
    let mut line = Vec::with_capacity(8 * 1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if output.write_all(CANNED).and_then(|()| output.flush()).is_err() {
                    return;
                }
            }
        }
    }
}
