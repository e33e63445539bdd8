//! The line handler: the function the stdio loop calls for every line, with
//! a backend that has no port named (so a tool call ends at discovery and
//! nothing touches the network). Each input is split into lines as the loop
//! splits stdin; every line must get one well-formed JSON-RPC answer, or
//! none when it needs none (tests/support/line_rule.rs), and must not panic.
#![no_main]

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use resmon_mcp::backend::Backend;
use resmon_mcp::discovery::Environment;
use resmon_mcp::protocol::Server;

// The rule every answer keeps, shared with the randomised line test.
#[path = "../../tests/support/line_rule.rs"]
mod line_rule;

fn server() -> &'static Mutex<Server> {
    static SERVER: OnceLock<Mutex<Server>> = OnceLock::new();
    SERVER.get_or_init(|| {
        Mutex::new(Server::new(Backend::new(Environment::default(), Duration::from_millis(200)), false))
    })
}

fuzz_target!(|data: &[u8]| {
    let mut server = server().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for line in data.split(|&byte| byte == b'\n') {
        let answer = server.handle_line(line);
        if let Err(why) = line_rule::check_answer(line, answer.as_deref()) {
            panic!("{why}; the line: {:?}", String::from_utf8_lossy(line));
        }
    }
});
