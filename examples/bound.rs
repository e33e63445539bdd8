//! How far past the per-call bound an answer comes, fault by fault.
//!
//!     cargo run --release --example bound                      # bound 3 s
//!     cargo run --release --example bound -- --bound-ms 20000 --only discovery
//!
//! Builds the release server, starts the fake resmon backend in this
//! process, and for each fault below makes every call of the tests' call
//! list (tests/it/calls.rs, one per branch of every tool) through the real
//! binary with RESMON_MCP_TIMEOUT_MS set to the bound. The time of a call is
//! taken from writing its request line to reading its answer line. For each
//! fault it prints the slowest call and how far it ended past the bound (a
//! negative figure: the call ended before it). The rule is at most 250 ms
//! past the bound whatever the backend does (docs/performance.md, "The
//! per-call bound"); a row past it is marked `MISSED`, and the exit code is
//! not changed.
//!
//! The faults: a backend that reads the request and never answers; one that
//! sends its head, or its body, a byte every 20 ms (no single read waits
//! long, so only the call's deadline ends it); one that stalls after half a
//! body; one that answers every request after 0.6 of the bound (a call of
//! two requests or more runs out in its second); and the first three during
//! discovery (the health request of a session's first call).

// The calls, without the list of writes and the invalid calls this example has no use for.
#[path = "../tests/it/calls.rs"]
#[allow(dead_code)]
mod calls;
#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;
#[allow(dead_code)]
#[path = "bench/pipe.rs"]
mod pipe;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fake_backend::{FakeBackend, Fault};
use pipe::Piped;
use serde_json::{Value, json};

const USAGE: &str = "\
Usage: cargo run --release --example bound [-- OPTIONS]

Options:
  --bound-ms N     the per-call bound given to the server (default 3000)
  --only TEXT      run only the faults whose name contains TEXT
  --no-build       do not run `cargo build --release --bin resmon-mcp` first
  --server PATH    measure this resmon-mcp binary instead
  -h, --help       print this help
";

/// The most a call may end past its bound (contract-notes 4).
const ALLOWED_OVERSHOOT: Duration = Duration::from_millis(250);

const INITIALIZE: &str = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bound\",\"version\":\"0\"}}}\n";
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// Where a fault applies.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every request of the call; the instance was found before it.
    Call,
    /// Only the health request that confirms the backend, in a new session.
    Discovery,
}

struct Row {
    name: String,
    scope: Scope,
    fault: Fault,
}

fn matrix(bound: Duration) -> Vec<Row> {
    let slow = Fault::Slow((bound.as_millis() * 6 / 10) as u64);
    let mut rows = Vec::new();
    for (name, fault) in [
        ("Hang", Fault::Hang),
        ("TrickleHead", Fault::TrickleHead),
        ("TrickleBody", Fault::TrickleBody),
        ("StallMidBody", Fault::StallMidBody),
        ("Slow (0.6 of the bound, every request)", slow),
    ] {
        rows.push(Row { name: name.into(), scope: Scope::Call, fault });
    }
    for (name, fault) in
        [("Hang", Fault::Hang), ("TrickleHead", Fault::TrickleHead), ("TrickleBody", Fault::TrickleBody)]
    {
        rows.push(Row { name: format!("{name} in discovery"), scope: Scope::Discovery, fault });
    }
    rows
}

/// The slowest call of one row of the matrix.
struct Worst {
    took: Duration,
    call: String,
    calls: usize,
}

fn main() {
    let mut bound = Duration::from_millis(3000);
    let mut build = true;
    let mut server: Option<PathBuf> = None;
    let mut only = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bound-ms" => {
                let value = args.next().and_then(|value| value.parse::<u64>().ok());
                bound = Duration::from_millis(value.unwrap_or_else(|| usage("--bound-ms needs a number")));
            }
            "--only" => only = args.next().unwrap_or_else(|| usage("--only needs a text")),
            "--no-build" => build = false,
            "--server" => server = Some(args.next().unwrap_or_else(|| usage("--server needs a path")).into()),
            "-h" | "--help" => {
                print!("{USAGE}");
                return;
            }
            other => usage(&format!("unknown option {other}")),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = server.unwrap_or_else(|| {
        if build {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--release", "--bin", "resmon-mcp"])
                .current_dir(root)
                .status()
                .expect("run cargo build");
            if !status.success() {
                eprintln!("bound: cargo build failed ({status})");
                std::process::exit(2);
            }
        }
        root.join("target/release/resmon-mcp")
    });
    let rows: Vec<Row> = matrix(bound).into_iter().filter(|row| row.name.contains(&only)).collect();
    println!(
        "per-call bound {} ms; {} calls per fault after discovery; rule: at most {} ms past the bound",
        bound.as_millis(),
        calls::every_branch("").len(),
        ALLOWED_OVERSHOOT.as_millis()
    );
    // The rows wait side by side: each has its own fake and its own server.
    let results: Vec<Worst> = std::thread::scope(|scope| {
        let handles: Vec<_> = rows.iter().map(|row| scope.spawn(|| run_row(&server, row, bound))).collect();
        handles.into_iter().map(|handle| handle.join().expect("a row panicked")).collect()
    });
    println!("{:<42} {:>6} {:>10} {:>11}  slowest call", "fault", "calls", "slowest", "past bound");
    for (row, worst) in rows.iter().zip(&results) {
        let past = worst.took.as_secs_f64() * 1000.0 - bound.as_secs_f64() * 1000.0;
        let verdict = if worst.took <= bound + ALLOWED_OVERSHOOT { "" } else { "  MISSED" };
        println!(
            "{:<42} {:>6} {:>8.1} ms {:>+8.1} ms  {}{verdict}",
            row.name,
            worst.calls,
            worst.took.as_secs_f64() * 1000.0,
            past,
            worst.call
        );
    }
}

fn usage(problem: &str) -> ! {
    eprintln!("bound: {problem}\n{USAGE}");
    std::process::exit(2);
}

fn start_server(server: &Path, fake: &FakeBackend, bound: Duration, home: &Path) -> Piped {
    let env = vec![
        ("RESMON_PORT_FILE".to_string(), fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR".to_string(), fake.state_dir().display().to_string()),
        ("RESMON_MCP_TIMEOUT_MS".to_string(), bound.as_millis().to_string()),
    ];
    let mut piped = Piped::spawn(&mut pipe::command(server, &env, home));
    piped.round_trip(INITIALIZE);
    piped.send(INITIALIZED);
    piped
}

fn tool_call(id: usize, tool: &str, arguments: &Value) -> String {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    format!("{line}\n")
}

fn run_row(server: &Path, row: &Row, bound: Duration) -> Worst {
    let dir = std::env::temp_dir()
        .join(format!("resmon-mcp-bound-{}", std::process::id()))
        .join(row.name.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
    let home = dir.join("home");
    std::fs::create_dir_all(&home).expect("create a home folder");
    let fake = FakeBackend::start(&dir.join("state"));
    let mut worst = Worst { took: Duration::ZERO, call: String::new(), calls: 0 };
    let mut piped = start_server(server, &fake, bound, &home);
    let health = tool_call(1, "health", &json!({}));
    let list = if row.scope == Scope::Discovery {
        vec![("list_routines", json!({})), ("activate_routine", json!({"routine_id": 8}))]
    } else {
        calls::every_branch(&fake.runtime_id())
    };
    for (index, (tool, arguments)) in list.into_iter().enumerate() {
        fake.clear_faults();
        if row.scope == Scope::Discovery {
            // A new session: nothing is cached, so the call starts with discovery.
            piped = start_server(server, &fake, bound, &home);
            fake.set_fault_for("GET", "/api/health", row.fault.clone());
        } else {
            piped.round_trip(&health);
            fake.set_fault(row.fault.clone());
        }
        let line = tool_call(index + 2, tool, &arguments);
        let started = Instant::now();
        piped.round_trip(&line);
        let took = started.elapsed();
        worst.calls += 1;
        if took > worst.took {
            worst = Worst { took, call: format!("{tool} {arguments}"), calls: worst.calls };
        }
    }
    drop(piped);
    drop(fake);
    let _ = std::fs::remove_dir_all(&dir);
    worst
}
