//! Benchmark of resmon-mcp against floors measured in the same run (issue 6).
//!
//!     cargo run --release --example bench            # full run, about two minutes
//!     cargo run --release --example bench -- --quick # fewer runs, a smoke test
//!
//! It builds the release server and the floor binary (`examples/floor.rs`)
//! with cargo, starts the fake resmon backend in this process, and prints:
//! cold start, session and per-call timings with their floors and ratios;
//! peak memory after 1 and 10 000 calls; callgrind instruction counts (when
//! valgrind is installed); the context cost of the listing and of typical
//! answers; and the release binary's size. Each figure is followed by its
//! target and whether it holds. docs/performance.md explains the method and
//! keeps the latest figures.
//!
//! Timings are medians with min–max over many runs, and the server and its
//! floor alternate run by run, so that a noisy machine slows both alike.

#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;
#[path = "bench/pipe.rs"]
mod pipe;
#[path = "bench/stats.rs"]
mod stats;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_backend::{Corpus, FakeBackend};
use pipe::Piped;
use serde_json::Value;
use stats::{Summary, spread, time};

const USAGE: &str = "\
Usage: cargo run --release --example bench [-- OPTIONS]

Options:
  --quick      fewer runs (a smoke test; figures are noisier)
  --no-build   do not run `cargo build` first (the binaries must exist)
  -h, --help   print this help
";

const INITIALIZE: &str = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}}\n";
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
const TOOLS_LIST: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n";
const KIB: usize = 1024;
const MIB: u64 = 1024 * 1024;

struct Options {
    quick: bool,
    build: bool,
}

/// How many times each measurement runs.
struct Counts {
    cold: usize,
    session: usize,
    calls: usize,
    warmup: usize,
    memory_calls: usize,
    callgrind_calls: usize,
}

/// One line of the closing table.
struct Target {
    what: &'static str,
    figure: String,
    limit: String,
    holds: bool,
}

fn main() {
    let options = parse_options();
    let counts = if options.quick {
        Counts { cold: 40, session: 40, calls: 1000, warmup: 50, memory_calls: 10_000, callgrind_calls: 20 }
    } else {
        Counts {
            cold: 300,
            session: 200,
            calls: 5000,
            warmup: 200,
            memory_calls: 10_000,
            callgrind_calls: 100,
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if options.build {
        build(root);
    }
    let release = release_dir();
    let server = release.join("resmon-mcp");
    let floor = release.join("examples").join("floor");
    for binary in [&server, &floor] {
        if !binary.is_file() {
            eprintln!(
                "bench: {} is missing; run `cargo build --release --bins --examples`",
                binary.display()
            );
            std::process::exit(2);
        }
    }

    let work = std::env::temp_dir().join(format!("resmon-mcp-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let home = work.join("home");
    std::fs::create_dir_all(&home).expect("create the bench's temp dir");
    let fake = FakeBackend::start(&work.join("state"));
    let env = vec![
        ("RESMON_PORT_FILE".to_string(), fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR".to_string(), fake.state_dir().display().to_string()),
    ];
    let rig = Rig { server, floor, env, home, fake: &fake, work: work.clone() };

    println!("resmon-mcp benchmark, {} (UTC)", stats::today());
    println!("machine: {}", machine());
    println!("server:  {}", rig.server.display());
    println!("floor:   {}", rig.floor.display());
    println!();

    let mut targets = Vec::new();
    cold_start(&rig, &counts, &mut targets);
    session(&rig, &counts, &mut targets);
    per_call(&rig, &counts, &mut targets);
    memory(&rig, &counts, &mut targets);
    instructions(&rig, &counts);
    context(&rig, &mut targets);
    binary_size(&rig, &mut targets);

    println!("\n== targets");
    for target in &targets {
        let verdict = if target.holds { "holds" } else { "MISSED" };
        println!("  {:<34} {:>22}   limit {:<14} {verdict}", target.what, target.figure, target.limit);
    }
    let missed = targets.iter().filter(|target| !target.holds).count();
    println!("  {} of {} targets hold", targets.len() - missed, targets.len());

    fake.stop();
    let _ = std::fs::remove_dir_all(&work);
}

fn parse_options() -> Options {
    let mut options = Options { quick: false, build: true };
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--no-build" => options.build = false,
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            other => {
                eprintln!("bench: unexpected argument {other:?}\n\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    options
}

/// Builds the server and the floor with the same release profile as this
/// example, so that `cargo run --release --example bench` is the only step.
fn build(root: &Path) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--bin", "resmon-mcp", "--example", "floor"])
        .current_dir(root)
        .status()
        .expect("run cargo build");
    if !status.success() {
        eprintln!("bench: cargo build failed ({status})");
        std::process::exit(2);
    }
}

/// target/<profile>/, found from this example's own path
/// (target/<profile>/examples/bench), so CARGO_TARGET_DIR is respected.
fn release_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>/examples/bench").to_path_buf()
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':').map(|(_, name)| name.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    format!("{cpus} CPUs, {model}; load average {load}")
}

struct Rig<'a> {
    server: PathBuf,
    floor: PathBuf,
    env: Vec<(String, String)>,
    home: PathBuf,
    fake: &'a FakeBackend,
    work: PathBuf,
}

impl Rig<'_> {
    fn spawn_server(&self) -> Piped {
        Piped::spawn(&mut pipe::command(&self.server, &self.env, &self.home))
    }

    fn spawn_floor(&self) -> Piped {
        Piped::spawn(&mut pipe::command(&self.floor, &self.env, &self.home))
    }

    /// A server that has answered `initialize` (and been told `initialized`).
    fn initialized_server(&self) -> Piped {
        let mut server = self.spawn_server();
        let answer = server.round_trip(INITIALIZE);
        assert!(answer.contains("\"protocolVersion\""), "initialize failed: {answer}");
        server.send(INITIALIZED);
        server
    }
}

fn health_line(id: usize) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"health\",\"arguments\":{{}}}}}}\n"
    )
}

fn ping_line(id: usize) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
}

fn tool_line(id: usize, tool: &str, arguments: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{arguments}}}}}\n"
    )
}

fn assert_success(answer: &str, what: &str) {
    assert!(answer.contains("\"isError\":false"), "{what} did not succeed: {answer}");
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// Prints server and floor timings and three ratios: of the medians (the
/// figure the target is judged on), the median of the run-by-run ratios
/// (each pair ran back to back, so a load change hits both), and of the
/// minimums (the least disturbed runs). Returns the ratio of the medians.
fn ratio_line(server: &[f64], floor: &[f64]) -> f64 {
    let paired: Vec<f64> = server.iter().zip(floor).map(|(s, f)| s / f).collect();
    let (paired, server, floor) = (Summary::of(&paired), Summary::of(server), Summary::of(floor));
    let ratio = server.median / floor.median;
    println!("  server {}   floor {}", spread(&server), spread(&floor));
    println!(
        "  ratio of medians {ratio:.2}×; run-by-run ratio, median {:.2}×; ratio of minimums {:.2}×",
        paired.median,
        server.min / floor.min
    );
    ratio
}

// ================================================================ timings

/// Spawn → `initialize` answer read; the floor answers its one line.
fn cold_start(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!("== cold start: spawn → initialize answer read ({} runs each, alternating)", counts.cold);
    let run = |spawn: &dyn Fn() -> Piped| {
        let start = Instant::now();
        let mut child = spawn();
        let answer_len = child.round_trip(INITIALIZE).len();
        let elapsed = start.elapsed();
        assert!(answer_len > 0);
        assert!(child.finish().success());
        micros(elapsed)
    };
    let (mut server, mut floor) = (Vec::new(), Vec::new());
    for i in 0..counts.cold {
        if i % 2 == 0 {
            server.push(run(&|| rig.spawn_server()));
            floor.push(run(&|| rig.spawn_floor()));
        } else {
            floor.push(run(&|| rig.spawn_floor()));
            server.push(run(&|| rig.spawn_server()));
        }
    }
    let ratio = ratio_line(&server, &floor);
    targets.push(Target {
        what: "cold start / floor",
        figure: format!("{ratio:.2}×"),
        limit: "≤ 1.10×".into(),
        holds: ratio <= 1.10,
    });
    println!();
}

/// Spawn, initialize, tools/list, one `health` call, EOF, exit. The floor
/// answers the same three requests with canned lines. The server's session
/// also discovers resmon (port file, token file) and makes two requests
/// (the confirming health check and the call's own), on a fresh connection;
/// the "+ backend" floor adds that HTTP work, measured in this process.
fn session(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!("== session: spawn, initialize, tools/list, health, EOF, exit ({} runs each)", counts.session);
    // What the server must add over the floor to talk to resmon at all: a
    // new connection and two GETs of /api/health.
    let backend_run = || {
        let start = Instant::now();
        let agent = HttpFloor::new(rig.fake);
        agent.get_health();
        agent.get_health();
        micros(start.elapsed())
    };
    let (mut server, mut floor, mut backend) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..counts.session {
        if i % 2 == 0 {
            server.push(timed_session(rig, true));
            floor.push(timed_session(rig, false));
        } else {
            floor.push(timed_session(rig, false));
            server.push(timed_session(rig, true));
        }
        backend.push(backend_run());
        if i % 50 == 49 {
            rig.fake.clear_requests();
        }
    }
    let total = |runs: &[[f64; 4]]| runs.iter().map(|phases| phases.iter().sum()).collect::<Vec<f64>>();
    let (server_total, floor_total) = (total(&server), total(&floor));
    let with_backend: Vec<f64> = floor_total.iter().zip(&backend).map(|(f, b)| f + b).collect();
    let ratio = ratio_line(&server_total, &floor_total);
    let phase = |runs: &[[f64; 4]], k: usize| {
        time(Summary::of(&runs.iter().map(|p| p[k]).collect::<Vec<_>>()).median)
    };
    for (k, name) in
        ["spawn → initialize answered", "tools/list", "health (first call)", "EOF → exit"].iter().enumerate()
    {
        println!("    {name:<28} server {:<10} floor {}", phase(&server, k), phase(&floor, k));
    }
    let (backend, with_backend) = (Summary::of(&backend), Summary::of(&with_backend));
    println!("  backend work alone (new connection + 2 × GET /api/health, in-process): {}", spread(&backend));
    println!(
        "  floor + backend work: {}; the server is {:.2}× that",
        spread(&with_backend),
        Summary::of(&server_total).median / with_backend.median
    );
    targets.push(Target {
        what: "session / floor",
        figure: format!("{ratio:.2}×"),
        limit: "≤ 1.20×".into(),
        holds: ratio <= 1.20,
    });
    println!();
}

/// One session of the server or the floor: the time to each answer
/// (initialize, tools/list, health) and from EOF to the exit, in µs. The
/// floor gets the same three requests (it would answer the notification,
/// so that is sent to the server only).
fn timed_session(rig: &Rig, server: bool) -> [f64; 4] {
    let health = health_line(2);
    let start = Instant::now();
    let mut child = if server { rig.spawn_server() } else { rig.spawn_floor() };
    child.round_trip(INITIALIZE);
    let initialized = start.elapsed();
    if server {
        child.send(INITIALIZED);
    }
    child.round_trip(TOOLS_LIST);
    let listed = start.elapsed();
    let ok = child.round_trip(&health).contains(if server { "\"isError\":false" } else { "\"result\"" });
    let called = start.elapsed();
    let status = child.finish();
    let exited = start.elapsed();
    assert!(ok && status.success(), "a session failed (server: {server})");
    [initialized, listed - initialized, called - listed, exited - called].map(micros)
}

/// The in-process HTTP floor: one keep-alive ureq agent that sends what the
/// server sends for `health` (Host and bearer token) to the same route, with
/// the server's buffer sizes, so that a new agent's first request costs what
/// the server's does.
struct HttpFloor {
    agent: ureq::Agent,
    url: String,
    host: String,
    authorization: String,
}

impl HttpFloor {
    fn new(fake: &FakeBackend) -> HttpFloor {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_idle_connections(1)
            .max_idle_connections_per_host(1)
            .input_buffer_size(resmon_mcp::backend::IO_BUFFER_BYTES)
            .output_buffer_size(resmon_mcp::backend::IO_BUFFER_BYTES)
            .build()
            .into();
        HttpFloor {
            agent,
            url: format!("{}/api/health", fake.base_url()),
            host: format!("127.0.0.1:{}", fake.port()),
            authorization: format!("Bearer {}", fake.token()),
        }
    }

    /// One GET; returns the body length.
    fn get_health(&self) -> usize {
        let mut response = self
            .agent
            .get(&self.url)
            .header("Host", &self.host)
            .header("Authorization", &self.authorization)
            .call()
            .expect("GET /api/health");
        assert_eq!(response.status().as_u16(), 200);
        response.body_mut().read_to_vec().expect("read the health body").len()
    }
}

/// `health` in a warm session against ping on the same session plus one
/// keep-alive GET of /api/health made here. The three alternate call by
/// call, in a rotating order.
fn per_call(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!(
        "== per call: health in a warm session vs ping + keep-alive GET ({} calls each, after {} warm-up)",
        counts.calls, counts.warmup
    );
    let mut server = rig.initialized_server();
    let http = HttpFloor::new(rig.fake);
    let total = counts.warmup + counts.calls;
    let health: Vec<String> = (0..total).map(|i| health_line(10 + 2 * i)).collect();
    let pings: Vec<String> = (0..total).map(|i| ping_line(11 + 2 * i)).collect();
    let (mut h, mut p, mut g) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..total {
        let mut sample = [0.0; 3];
        for k in 0..3 {
            let which = (i + k) % 3;
            let start = Instant::now();
            let ok = match which {
                0 => server.round_trip(&health[i]).contains("\"isError\":false"),
                1 => server.round_trip(&pings[i]).contains("\"result\":{}"),
                _ => http.get_health() > 0,
            };
            sample[which] = micros(start.elapsed());
            assert!(ok, "call {i} ({which}) failed");
        }
        if i >= counts.warmup {
            h.push(sample[0]);
            p.push(sample[1]);
            g.push(sample[2]);
        }
        if i % 1000 == 999 {
            rig.fake.clear_requests();
        }
    }
    let floor: Vec<f64> = p.iter().zip(&g).map(|(p, g)| p + g).collect();
    let paired: Vec<f64> = h.iter().zip(&floor).map(|(h, f)| h / f).collect();
    let (h, p, g) = (Summary::of(&h), Summary::of(&p), Summary::of(&g));
    let (floor, paired) = (Summary::of(&floor), Summary::of(&paired));
    for (name, s) in [("health", &h), ("ping", &p), ("GET (ureq)", &g), ("ping + GET", &floor)] {
        println!(
            "  {name:<12} median {:<9} p99 {:<9} min–max {}–{}",
            time(s.median),
            time(s.p99),
            time(s.min),
            time(s.max)
        );
    }
    let floor_median = p.median + g.median;
    let ratio = h.median / floor_median;
    println!(
        "  ratio median health / (median ping + median GET) {ratio:.2}×; call-by-call ratio, median {:.2}×; \
         of minimums {:.2}×; of p99s {:.2}×",
        paired.median,
        h.min / (p.min + g.min),
        h.p99 / floor.p99
    );
    println!("  the server's own work per call ≈ {}", time(h.median - floor_median));
    targets.push(Target {
        what: "per call / (ping + GET)",
        figure: format!("{ratio:.2}×"),
        limit: "≤ 1.20×".into(),
        holds: ratio <= 1.20,
    });
    assert!(server.finish().success());
    println!();
}

// ================================================================ memory

/// VmHWM (peak resident set) and VmRSS of a live process, in KiB.
fn memory_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn memory(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!("== memory: peak RSS (VmHWM) of one session");
    let mut server = rig.initialized_server();
    server.round_trip(TOOLS_LIST);
    assert_success(server.round_trip(&health_line(2)), "health");
    let (hwm_1, rss_1) = memory_of(server.pid());
    let mut checkpoints = Vec::new();
    for i in 1..counts.memory_calls {
        let answer = server.round_trip(&health_line(3 + i));
        if i % 1000 == 0 {
            assert_success(answer, "health");
            rig.fake.clear_requests();
        }
        if (i + 1) % 2500 == 0 {
            checkpoints.push((i + 1, memory_of(server.pid())));
        }
    }
    let (hwm_n, rss_n) = memory_of(server.pid());
    let mut floor = rig.spawn_floor();
    floor.round_trip(INITIALIZE);
    let (floor_hwm, _) = memory_of(floor.pid());
    assert!(floor.finish().success());
    println!("  after 1 call:       VmHWM {hwm_1} KiB, VmRSS {rss_1} KiB");
    for (calls, (hwm, rss)) in &checkpoints {
        println!("  after {calls:>5} calls: VmHWM {hwm} KiB, VmRSS {rss} KiB");
    }
    let growth = hwm_n as i64 - hwm_1 as i64;
    println!("  growth of the peak from 1 to {} calls: {growth} KiB", counts.memory_calls);
    println!("  (the floor binary after one line: VmHWM {floor_hwm} KiB)");
    assert!(server.finish().success());
    targets.push(Target {
        what: "peak RSS after 10 000 calls",
        figure: format!("{:.2} MiB", hwm_n as f64 / 1024.0),
        limit: "≤ 4 MiB".into(),
        holds: hwm_n * 1024 <= 4 * MIB,
    });
    // "Within noise": a page or two of allocator slack, no more.
    targets.push(Target {
        what: "peak RSS growth, 1 → 10 000 calls",
        figure: format!("{growth} KiB"),
        limit: "≤ 64 KiB".into(),
        holds: growth <= 64,
    });
    let _ = rss_n;
    println!();
}

// ================================================================ instructions

/// Runs `program` under callgrind with `script` as its stdin; returns the
/// total instruction count and the child's stdout.
fn callgrind(rig: &Rig, program: &Path, name: &str, script: &str) -> Option<(u64, String)> {
    let dir = rig.work.join("callgrind");
    std::fs::create_dir_all(&dir).ok()?;
    let input = dir.join(format!("{name}.in"));
    let output = dir.join(format!("{name}.out"));
    let profile = dir.join(format!("{name}.callgrind"));
    std::fs::write(&input, script).ok()?;
    let mut command = pipe::command(Path::new("valgrind"), &rig.env, &rig.home);
    let status = command
        .arg("--tool=callgrind")
        .arg("--quiet")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .arg(program)
        .stdin(std::fs::File::open(&input).ok()?)
        .stdout(std::fs::File::create(&output).ok()?)
        .stderr(Stdio::null())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let text = std::fs::read_to_string(&profile).ok()?;
    let total = text
        .lines()
        .find_map(|line| line.strip_prefix("summary:").or_else(|| line.strip_prefix("totals:")))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())?;
    Some((total, std::fs::read_to_string(&output).ok()?))
}

fn instructions(rig: &Rig, counts: &Counts) {
    println!("== instructions (valgrind --tool=callgrind, whole process)");
    let present = Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !present {
        println!("  valgrind is not installed: skipped");
        println!();
        return;
    }
    let k = counts.callgrind_calls;
    let session = format!("{INITIALIZE}{INITIALIZED}{TOOLS_LIST}{}", health_line(2));
    let health_more: String = (0..k).map(|i| health_line(3 + i)).collect();
    let pings: String = (0..k).map(|i| ping_line(3 + i)).collect();
    let floor_session = format!("{INITIALIZE}{TOOLS_LIST}{}", health_line(2));
    let runs = [
        ("server_init", &rig.server, INITIALIZE.to_string()),
        ("floor_init", &rig.floor, INITIALIZE.to_string()),
        ("server_list", &rig.server, format!("{INITIALIZE}{INITIALIZED}{TOOLS_LIST}")),
        ("server_session", &rig.server, session.clone()),
        ("floor_session", &rig.floor, floor_session),
        ("server_health", &rig.server, format!("{session}{health_more}")),
        ("server_ping", &rig.server, format!("{session}{pings}")),
    ];
    let mut ir = std::collections::HashMap::new();
    for (name, program, script) in runs {
        match callgrind(rig, program, name, &script) {
            Some((total, output)) => {
                if name.starts_with("server_") && !matches!(name, "server_init" | "server_list") {
                    let calls = output.lines().filter(|line| line.contains("\"isError\":false")).count();
                    assert!(calls >= 1, "{name}: no successful health call under valgrind");
                }
                ir.insert(name, total);
            }
            None => {
                println!("  {name}: callgrind failed; skipped");
                println!();
                return;
            }
        }
    }
    let row = |what: &str, server: u64, floor: Option<u64>| match floor {
        Some(floor) => println!(
            "  {what:<52} server {server:>10}   floor {floor:>9}   ({:.2}×)",
            server as f64 / floor as f64
        ),
        None => println!("  {what:<52} server {server:>10}"),
    };
    row("start, initialize answered, EOF, exit", ir["server_init"], Some(ir["floor_init"]));
    row("session (initialize, tools/list, health, exit)", ir["server_session"], Some(ir["floor_session"]));
    row("  of which the first tools/list", ir["server_list"] - ir["server_init"], None);
    row(
        "  of which the first health call (discovery, 2 GETs)",
        ir["server_session"] - ir["server_list"],
        None,
    );
    let per = |name: &str| (ir[name] - ir["server_session"]) / k as u64;
    row(&format!("per health call (mean of {k} more)"), per("server_health"), None);
    row(&format!("per ping (mean of {k} more)"), per("server_ping"), None);
    println!();
}

// ================================================================ context

/// The measures of contract-notes 14 and 24, as clients hand the bytes to a
/// model: compact JSON of each tool's `{name, description, inputSchema}`,
/// and the text of a first page of 25 papers (structuredContent is the same
/// JSON, so an answer is counted once). tests/it/budgets.rs holds the limits.
fn context(rig: &Rig, targets: &mut Vec<Target>) {
    println!("== context cost (bytes a client receives)");
    let mut server = rig.initialized_server();
    let listing = server.round_trip(TOOLS_LIST).trim_end().to_string();
    let message: Value = serde_json::from_str(&listing).expect("tools/list is JSON");
    let tools = message["result"]["tools"].as_array().expect("a tools array");
    let visible: usize = tools
        .iter()
        .map(|tool| {
            let shown = serde_json::json!({
                "name": tool["name"],
                "description": tool["description"],
                "inputSchema": tool["inputSchema"],
            });
            shown.to_string().len()
        })
        .sum();
    let output_schemas: usize = tools
        .iter()
        .map(|tool| serde_json::to_string(&tool["outputSchema"]).map(|s| s.len()).unwrap_or(0))
        .sum();
    println!(
        "  tools/list, model-visible (compact {{name, description, inputSchema}} of {} tools): {visible} B",
        tools.len()
    );
    println!("    output schemas, compact: {output_schemas} B");
    println!("  tools/list, whole message: {} B", listing.len());
    targets.push(Target {
        what: "tools/list, model-visible",
        figure: format!("{visible} B"),
        limit: "≤ 10 040 B".into(),
        holds: visible + 200 <= 10 * KIB && tools.len() == 25,
    });

    let short = [
        ("search page of 25, short rows (keyword)", "search_corpus", r#"{"query":"synthetic"}"#, 6 * KIB),
        ("get_execution 119", "get_execution", r#"{"exec_id":119}"#, 0),
        ("get_routine 7", "get_routine", r#"{"routine_id":7}"#, 0),
    ];
    for (i, (label, tool, arguments, limit)) in short.into_iter().enumerate() {
        answer_size(&mut server, 100 + i, label, tool, arguments, limit, targets);
    }
    assert!(server.finish().success());

    // The realistic slice is its own fixture set, served by a second fake.
    let fake = FakeBackend::start_with(&rig.work.join("state-realistic"), Corpus::Realistic);
    let env = vec![
        ("RESMON_PORT_FILE".to_string(), fake.port_file().display().to_string()),
        ("RESMON_STATE_DIR".to_string(), fake.state_dir().display().to_string()),
    ];
    let mut server = Piped::spawn(&mut pipe::command(&rig.server, &env, &rig.home));
    let answer = server.round_trip(INITIALIZE);
    assert!(answer.contains("\"protocolVersion\""), "initialize failed: {answer}");
    server.send(INITIALIZED);
    let realistic = [
        ("search page of 25, realistic (keyword)", r#"{"query":"learning"}"#, 7 * KIB),
        (
            "search page of 25, realistic (semantic)",
            r#"{"query":"learning","mode":"semantic"}"#,
            7 * KIB + KIB / 2,
        ),
    ];
    for (i, (label, arguments, limit)) in realistic.into_iter().enumerate() {
        answer_size(&mut server, 200 + i, label, "search_corpus", arguments, limit, targets);
    }
    assert!(server.finish().success());
    fake.stop();
    println!();
}

/// One call's answer size; a page of papers is judged against `limit` (0: none).
fn answer_size(
    server: &mut Piped,
    id: usize,
    label: &'static str,
    tool: &str,
    arguments: &str,
    limit: usize,
    targets: &mut Vec<Target>,
) {
    let line = server.round_trip(&tool_line(id, tool, arguments)).trim_end().to_string();
    let message: Value = serde_json::from_str(&line).expect("a JSON answer");
    let result = &message["result"];
    assert_eq!(result["isError"], Value::Bool(false), "{label}: {line}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    println!("  {label}: answer {} B, message {} B", text.len(), line.len());
    if limit > 0 {
        let papers = result["structuredContent"]["papers"].as_array().map_or(0, Vec::len);
        assert_eq!(papers, 25, "{label}: expected a page of 25 papers");
        targets.push(Target {
            what: label,
            figure: format!("{} B", text.len()),
            limit: format!("≤ {limit} B"),
            holds: text.len() <= limit,
        });
    }
}

fn binary_size(rig: &Rig, targets: &mut Vec<Target>) {
    println!("== binary size (release profile)");
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let (server, floor) = (size(&rig.server), size(&rig.floor));
    println!("  resmon-mcp {server} B ({:.2} MiB); floor {floor} B", server as f64 / MIB as f64);
    targets.push(Target {
        what: "release binary",
        figure: format!("{:.2} MiB", server as f64 / MIB as f64),
        limit: "≤ 2 MiB".into(),
        holds: server <= 2 * MIB,
    });
}
