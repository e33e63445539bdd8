//! Benchmark of resmon-mcp against floors measured in the same run
//! (docs/performance.md).
//!
//!     cargo run --release --example bench            # full run, a few minutes
//!     cargo run --release --example bench -- --quick # fewer runs, a smoke test
//!
//! It builds the release server and its floors with cargo, starts two fake
//! resmon backends in this process (the short fixture corpus and the
//! realistic slice of contract-notes 24), and prints: cold start against the
//! process floor (`examples/process-floor.rs`, one canned line per line
//! read); the session and warm calls against the MCP floor
//! (`examples/floor.rs`, canned `initialize` and `tools/list`, and the same
//! HTTP exchange as the server for each call); peak memory; callgrind
//! instruction counts per call for `health`, `search_corpus` (short rows,
//! and keyword and semantic pages of the realistic slice) and
//! `get_execution` beside the floor's and the bare exchange's (`floor
//! --bare`); the context cost of the listing and of typical answers; and
//! the binary sizes. Each figure is followed by its target and
//! whether it holds. docs/performance.md explains the method and keeps the
//! latest figures.
//!
//! Timings are medians with min–max over many runs, and the server and its
//! floor alternate run by run, so that a noisy machine slows both alike.

#[path = "bench/calls.rs"]
mod calls;
#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;
#[path = "bench/pipe.rs"]
mod pipe;
#[path = "bench/stats.rs"]
mod stats;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use calls::{CALLS, LABEL_WIDTH};
use fake_backend::{Corpus, FakeBackend};
use pipe::Piped;
use serde_json::Value;
use stats::{Summary, spread, time};

const USAGE: &str = "\
Usage: cargo run --release --example bench [-- OPTIONS]

Options:
  --quick          fewer runs (a smoke test; figures are noisier)
  --no-build       do not run `cargo build` first (the binaries must exist)
  --server PATH    measure this resmon-mcp binary instead of the one built
                   here (e.g. an older commit's, for a before/after)
  -h, --help       print this help
";

const INITIALIZE: &str = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"0\"}}}\n";
const INITIALIZED: &str = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
const TOOLS_LIST: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n";
const KIB: usize = 1024;
const MIB: u64 = 1024 * 1024;
/// The examples `build` makes besides the server.
const EXAMPLES: [&str; 2] = ["floor", "process-floor"];

struct Options {
    quick: bool,
    build: bool,
    server: Option<PathBuf>,
}

/// How many times each measurement runs. A ratio is a median of at least
/// 50 alternating runs, even in a quick run (contract-notes 24).
struct Counts {
    cold: usize,
    session: usize,
    calls: usize,
    warmup: usize,
    tool_calls: usize,
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
        Counts {
            cold: 60,
            session: 60,
            calls: 1000,
            warmup: 50,
            tool_calls: 200,
            memory_calls: 10_000,
            callgrind_calls: 20,
        }
    } else {
        Counts {
            cold: 300,
            session: 200,
            calls: 5000,
            warmup: 200,
            tool_calls: 1000,
            memory_calls: 10_000,
            callgrind_calls: 100,
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if options.build {
        build(root, options.server.is_none());
    }
    let release = release_dir();
    let server = options.server.clone().unwrap_or_else(|| release.join("resmon-mcp"));
    let example = |name: &str| release.join("examples").join(name);
    let (floor, process_floor) = (example("floor"), example("process-floor"));
    for binary in [&server, &floor, &process_floor] {
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
    // One fake per corpus: the realistic slice is a fixture set of its own
    // (contract-notes 24), and a call is measured against the fake that
    // serves its corpus.
    let fake = FakeBackend::start(&work.join("state"));
    let realistic = FakeBackend::start_with(&work.join("state-realistic"), Corpus::Realistic);
    let rig = Rig {
        server,
        floor,
        process_floor,
        home,
        short: Fake::of(&fake),
        realistic: Fake::of(&realistic),
        work: work.clone(),
    };

    println!("resmon-mcp benchmark, {} (UTC)", stats::today());
    println!("machine: {}", machine());
    println!("server:        {}", rig.server.display());
    println!("floor:         {}", rig.floor.display());
    println!("process floor: {}", rig.process_floor.display());
    println!();

    let mut targets = Vec::new();
    like_for_like(&rig);
    cold_start(&rig, &counts, &mut targets);
    session(&rig, &counts, &mut targets);
    per_call(&rig, &counts, &mut targets);
    calls_against_floor(&rig, &counts);
    memory(&rig, &counts, &mut targets);
    instructions(&rig, &counts);
    context(&rig, &mut targets);
    binary_size(&rig, &mut targets);

    println!("\n== targets");
    for target in &targets {
        let verdict = if target.holds { "holds" } else { "MISSED" };
        println!("  {:<40} {:>16}   limit {:<14} {verdict}", target.what, target.figure, target.limit);
    }
    let missed = targets.iter().filter(|target| !target.holds).count();
    println!("  {} of {} targets hold", targets.len() - missed, targets.len());

    fake.stop();
    realistic.stop();
    let _ = std::fs::remove_dir_all(&work);
}

fn parse_options() -> Options {
    let mut options = Options { quick: false, build: true, server: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--no-build" => options.build = false,
            "--server" => match args.next() {
                Some(path) => options.server = Some(PathBuf::from(path)),
                None => {
                    eprintln!("bench: --server needs the path of a resmon-mcp binary\n\n{USAGE}");
                    std::process::exit(2);
                }
            },
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

/// Builds the server (unless another binary is measured) and the floors
/// with the same release profile as this example, so that
/// `cargo run --release --example bench` is the only step.
///
/// The server is built in a cargo run of its own: a run that also builds
/// examples turns on the dev-dependencies, whose features cargo may add to
/// the crates the server shares with them, and the server measured must be
/// the one `cargo build --release` gives.
fn build(root: &Path, server: bool) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut runs = Vec::new();
    if server {
        runs.push(vec!["build", "--release", "--bin", "resmon-mcp"]);
    }
    let mut examples = vec!["build", "--release"];
    for example in EXAMPLES {
        examples.extend(["--example", example]);
    }
    runs.push(examples);
    for args in runs {
        let status = Command::new(&cargo).args(&args).current_dir(root).status().expect("run cargo build");
        if !status.success() {
            eprintln!("bench: cargo build failed ({status})");
            std::process::exit(2);
        }
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
    /// The MCP floor: same requests answered, same HTTP made.
    floor: PathBuf,
    /// The process floor: one canned line per line read.
    process_floor: PathBuf,
    home: PathBuf,
    /// The fake serving the short fixture corpus, which every figure but the
    /// realistic calls' is taken on.
    short: Fake<'a>,
    /// The fake serving the realistic slice.
    realistic: Fake<'a>,
    work: PathBuf,
}

/// A running fake backend and the environment that points a child at it.
struct Fake<'a> {
    backend: &'a FakeBackend,
    env: Vec<(String, String)>,
}

impl<'a> Fake<'a> {
    fn of(backend: &'a FakeBackend) -> Fake<'a> {
        let env = vec![
            ("RESMON_PORT_FILE".to_string(), backend.port_file().display().to_string()),
            ("RESMON_STATE_DIR".to_string(), backend.state_dir().display().to_string()),
        ];
        Fake { backend, env }
    }
}

/// Which program a run drives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    Server,
    Floor,
    ProcessFloor,
}

impl Rig<'_> {
    fn program(&self, who: Who) -> &Path {
        match who {
            Who::Server => &self.server,
            Who::Floor => &self.floor,
            Who::ProcessFloor => &self.process_floor,
        }
    }

    fn fake(&self, corpus: Corpus) -> &Fake<'_> {
        match corpus {
            Corpus::Short => &self.short,
            Corpus::Realistic => &self.realistic,
        }
    }

    /// `who` pointed at the fake serving `corpus`.
    fn spawn(&self, who: Who, corpus: Corpus) -> Piped {
        Piped::spawn(&mut pipe::command(self.program(who), &self.fake(corpus).env, &self.home))
    }

    /// A server or floor that has answered `initialize` (and been told
    /// `initialized`).
    fn initialized(&self, who: Who, corpus: Corpus) -> Piped {
        let mut child = self.spawn(who, corpus);
        let answer = child.round_trip(INITIALIZE);
        assert!(answer.contains("\"protocolVersion\""), "initialize failed ({who:?}): {answer}");
        child.send(INITIALIZED);
        child
    }

    /// A server on the short corpus, for the figures that are not per call.
    fn initialized_server(&self) -> Piped {
        self.initialized(Who::Server, Corpus::Short)
    }
}

fn health_line(id: usize) -> String {
    CALLS[0].line(id)
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

// ================================================================ like for like

/// The floor is only a floor if it sends what the server sends. One session
/// of each makes every measured call once, and `floor --bare` makes each
/// exchange once; the fake's log must show the same requests (method, path,
/// query, body) from all three, the confirming health check first.
fn like_for_like(rig: &Rig) {
    println!("== like for like: the requests each program sends for the measured calls");
    let sent = |fake: &FakeBackend, run: &dyn Fn()| {
        fake.clear_requests();
        run();
        fake.requests()
            .into_iter()
            .map(|r| {
                format!(
                    "{} {}{}{} {}",
                    r.method,
                    r.path,
                    if r.query.is_empty() { "" } else { "?" },
                    r.query,
                    String::from_utf8_lossy(&r.body)
                )
            })
            .collect::<Vec<_>>()
    };
    for call in &CALLS {
        let fake = rig.fake(call.corpus);
        let session = |who: Who| {
            let mut child = rig.initialized(who, call.corpus);
            let answer = child.round_trip(&call.line(2)).to_string();
            assert_success(&answer, &format!("{} ({who:?})", call.label));
            assert!(child.finish().success());
        };
        let server = sent(fake.backend, &|| session(Who::Server));
        let floor = sent(fake.backend, &|| session(Who::Floor));
        let bare = sent(fake.backend, &|| {
            let mut command = pipe::command(&rig.floor, &fake.env, &rig.home);
            command.args(call.bare_args());
            let mut child = Piped::spawn(&mut command);
            assert!(child.round_trip("\n").contains("\"result\""), "floor --bare {}", call.label);
            assert!(child.finish().success());
        });
        let expected = vec![
            "GET /api/health ".to_string(),
            format!("{} {} {}", call.method, call.path, call.body.unwrap_or_default()),
        ];
        assert_eq!(
            server, expected,
            "the server's requests for {} are not the ones the floors make",
            call.label
        );
        assert_eq!(floor, expected, "the floor's requests for {}", call.label);
        assert_eq!(bare, expected, "floor --bare's requests for {}", call.label);
        println!(
            "  {:<w$} {} then {}: the same from server, floor and bare",
            call.label,
            expected[0].trim(),
            expected[1].trim(),
            w = LABEL_WIDTH
        );
        fake.backend.clear_requests();
    }
    println!();
}

// ================================================================ timings

/// Spawn → `initialize` answer read; the process floor answers its one
/// line. The MCP floor is timed in the same rotation, for reference.
fn cold_start(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!("== cold start: spawn → initialize answer read ({} runs each, rotating order)", counts.cold);
    let run = |who: Who| {
        let start = Instant::now();
        let mut child = rig.spawn(who, Corpus::Short);
        let answer_len = child.round_trip(INITIALIZE).len();
        let elapsed = start.elapsed();
        assert!(answer_len > 0);
        assert!(child.finish().success());
        micros(elapsed)
    };
    let order = [Who::Server, Who::ProcessFloor, Who::Floor];
    let (mut server, mut process_floor, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..counts.cold {
        for k in 0..3 {
            let who = order[(i + k) % 3];
            let sample = run(who);
            match who {
                Who::Server => server.push(sample),
                Who::ProcessFloor => process_floor.push(sample),
                Who::Floor => floor.push(sample),
            }
        }
    }
    println!("  against the process floor (examples/process-floor.rs):");
    let ratio = ratio_line(&server, &process_floor);
    println!(
        "  (the MCP floor, examples/floor.rs, for reference: {}; the server is {:.2}× that)",
        spread(&Summary::of(&floor)),
        Summary::of(&server).median / Summary::of(&floor).median
    );
    targets.push(Target {
        what: "cold start / process floor",
        figure: format!("{ratio:.2}×"),
        limit: "≤ 1.10×".into(),
        holds: ratio <= 1.10,
    });
    println!();
}

/// Spawn, initialize, tools/list, one `health` call, EOF, exit, against the
/// MCP floor, which answers the same requests and makes the same two
/// requests of resmon (discovery's confirming health check and the call's
/// own) on a fresh connection.
fn session(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!(
        "== session: spawn, initialize, tools/list, health, EOF, exit ({} runs each, alternating)",
        counts.session
    );
    let (mut server, mut floor) = (Vec::new(), Vec::new());
    for i in 0..counts.session {
        if i % 2 == 0 {
            server.push(timed_session(rig, Who::Server));
            floor.push(timed_session(rig, Who::Floor));
        } else {
            floor.push(timed_session(rig, Who::Floor));
            server.push(timed_session(rig, Who::Server));
        }
        if i % 50 == 49 {
            rig.short.backend.clear_requests();
        }
    }
    let total = |runs: &[[f64; 4]]| runs.iter().map(|phases| phases.iter().sum()).collect::<Vec<f64>>();
    let ratio = ratio_line(&total(&server), &total(&floor));
    let phase = |runs: &[[f64; 4]], k: usize| {
        time(Summary::of(&runs.iter().map(|p| p[k]).collect::<Vec<_>>()).median)
    };
    for (k, name) in
        ["spawn → initialize answered", "tools/list", "health (first call)", "EOF → exit"].iter().enumerate()
    {
        println!("    {name:<28} server {:<10} floor {}", phase(&server, k), phase(&floor, k));
    }
    targets.push(Target {
        what: "session / floor",
        figure: format!("{ratio:.2}×"),
        limit: "≤ 1.15×".into(),
        holds: ratio <= 1.15,
    });
    println!();
}

/// One session of the server or the floor: the time to each answer
/// (initialize, tools/list, health) and from EOF to the exit, in µs.
fn timed_session(rig: &Rig, who: Who) -> [f64; 4] {
    let health = health_line(2);
    let start = Instant::now();
    let mut child = rig.spawn(who, Corpus::Short);
    child.round_trip(INITIALIZE);
    let initialized = start.elapsed();
    child.send(INITIALIZED);
    child.round_trip(TOOLS_LIST);
    let listed = start.elapsed();
    let ok = child.round_trip(&health).contains("\"isError\":false");
    let called = start.elapsed();
    let status = child.finish();
    let exited = start.elapsed();
    assert!(ok && status.success(), "a session failed ({who:?})");
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
/// keep-alive GET of /api/health made here (the per-call target). The three
/// alternate call by call, in a rotating order.
fn per_call(rig: &Rig, counts: &Counts, targets: &mut Vec<Target>) {
    println!(
        "== per call: health in a warm session vs ping + keep-alive GET ({} calls each, after {} warm-up)",
        counts.calls, counts.warmup
    );
    let mut server = rig.initialized_server();
    let http = HttpFloor::new(rig.short.backend);
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
            rig.short.backend.clear_requests();
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

/// Each measured call in a warm server session against the same call in a
/// warm floor session, alternating call by call. No target: the health
/// figure above is the per-call target; this one says what each tool costs
/// over a server that only relays resmon's body.
fn calls_against_floor(rig: &Rig, counts: &Counts) {
    println!(
        "== per call against the floor: warm sessions, alternating ({} calls each, after {} warm-up)",
        counts.tool_calls, counts.warmup
    );
    // A warm server and floor for each corpus, started before the first
    // call is timed.
    let mut sessions: Vec<(Corpus, Piped, Piped)> = [Corpus::Short, Corpus::Realistic]
        .into_iter()
        .map(|corpus| (corpus, rig.initialized(Who::Server, corpus), rig.initialized(Who::Floor, corpus)))
        .collect();
    let mut id = 10;
    for call in &CALLS {
        let (_, server, floor) =
            sessions.iter_mut().find(|(corpus, ..)| *corpus == call.corpus).expect("a session per corpus");
        let (mut s, mut f) = (Vec::new(), Vec::new());
        for i in 0..counts.warmup + counts.tool_calls {
            let line = call.line(id);
            id += 1;
            let mut sample = [0.0; 2];
            for k in 0..2 {
                let which = (i + k) % 2;
                let child = if which == 0 { &mut *server } else { &mut *floor };
                let start = Instant::now();
                let ok = child.round_trip(&line).contains("\"isError\":false");
                sample[which] = micros(start.elapsed());
                assert!(
                    ok,
                    "{} call {i} failed ({})",
                    call.label,
                    if which == 0 { "server" } else { "floor" }
                );
            }
            if i >= counts.warmup {
                s.push(sample[0]);
                f.push(sample[1]);
            }
            if i % 500 == 499 {
                rig.fake(call.corpus).backend.clear_requests();
            }
        }
        let paired: Vec<f64> = s.iter().zip(&f).map(|(s, f)| s / f).collect();
        let (s, f, paired) = (Summary::of(&s), Summary::of(&f), Summary::of(&paired));
        println!(
            "  {:<w$} server {:<9} floor {:<9} ratio of medians {:.2}×; call-by-call {:.2}×; server's extra ≈ {}",
            call.label,
            time(s.median),
            time(f.median),
            s.median / f.median,
            paired.median,
            time(s.median - f.median),
            w = LABEL_WIDTH
        );
    }
    for (_, server, floor) in sessions {
        assert!(server.finish().success());
        assert!(floor.finish().success());
    }
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
            rig.short.backend.clear_requests();
        }
        if (i + 1) % 2500 == 0 {
            checkpoints.push((i + 1, memory_of(server.pid())));
        }
    }
    let (hwm_n, rss_n) = memory_of(server.pid());
    let mut process_floor = rig.spawn(Who::ProcessFloor, Corpus::Short);
    process_floor.round_trip(INITIALIZE);
    let (process_floor_hwm, _) = memory_of(process_floor.pid());
    assert!(process_floor.finish().success());
    let mut floor = rig.initialized(Who::Floor, Corpus::Short);
    floor.round_trip(TOOLS_LIST);
    assert_success(floor.round_trip(&health_line(2)), "the floor's health");
    let (floor_hwm, _) = memory_of(floor.pid());
    assert!(floor.finish().success());
    println!("  after 1 call:       VmHWM {hwm_1} KiB, VmRSS {rss_1} KiB");
    for (calls, (hwm, rss)) in &checkpoints {
        println!("  after {calls:>5} calls: VmHWM {hwm} KiB, VmRSS {rss} KiB");
    }
    let growth = hwm_n as i64 - hwm_1 as i64;
    println!("  growth of the peak from 1 to {} calls: {growth} KiB", counts.memory_calls);
    println!(
        "  (the MCP floor after tools/list and one call: VmHWM {floor_hwm} KiB; the process floor after \
         one line: {process_floor_hwm} KiB)"
    );
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

fn valgrind_present() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Runs `program args` under callgrind with `script` as its stdin, pointed
/// at the fake serving `corpus`; returns the total instruction count and
/// the child's stdout.
fn callgrind(
    rig: &Rig,
    program: &Path,
    args: &[&str],
    name: &str,
    script: &str,
    corpus: Corpus,
) -> Option<(u64, String)> {
    let dir = rig.work.join("callgrind");
    std::fs::create_dir_all(&dir).ok()?;
    let input = dir.join(format!("{name}.in"));
    let output = dir.join(format!("{name}.out"));
    let profile = dir.join(format!("{name}.callgrind"));
    std::fs::write(&input, script).ok()?;
    let mut command = pipe::command(Path::new("valgrind"), &rig.fake(corpus).env, &rig.home);
    let status = command
        .arg("--tool=callgrind")
        .arg("--quiet")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .arg(program)
        .args(args)
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

/// One callgrind run: what runs, on what input, and how many successful
/// call answers its output must hold.
struct Run {
    name: String,
    who: Who,
    corpus: Corpus,
    args: Vec<&'static str>,
    script: String,
    successes: usize,
}

fn instructions(rig: &Rig, counts: &Counts) {
    println!("== instructions (valgrind --tool=callgrind, whole process)");
    if !valgrind_present() {
        println!("  valgrind is not installed: skipped");
        println!();
        return;
    }
    let k = counts.callgrind_calls;
    let listed = format!("{INITIALIZE}{INITIALIZED}{TOOLS_LIST}");
    let run = |name: String, who: Who, script: String, successes: usize| Run {
        name,
        who,
        corpus: Corpus::Short,
        args: Vec::new(),
        script,
        successes,
    };
    let mut runs = vec![
        run("server_init".into(), Who::Server, INITIALIZE.into(), 0),
        run("process_floor_init".into(), Who::ProcessFloor, INITIALIZE.into(), 0),
        run("floor_init".into(), Who::Floor, INITIALIZE.into(), 0),
        run("server_list".into(), Who::Server, listed.clone(), 0),
        run("floor_list".into(), Who::Floor, listed.clone(), 0),
    ];
    let pings: String = (0..k).map(|i| ping_line(1000 + i)).collect();
    runs.push(run("server_ping".into(), Who::Server, format!("{listed}{}{pings}", health_line(2)), 1));
    for call in &CALLS {
        let first = call.line(2);
        let more: String = (0..k).map(|i| call.line(3 + i)).collect();
        let on_corpus = |run: Run| Run { corpus: call.corpus, ..run };
        for (who, prefix) in [(Who::Server, "server"), (Who::Floor, "floor")] {
            let session = format!("{listed}{first}");
            runs.push(on_corpus(run(format!("{prefix}_{}_1", call.key), who, session.clone(), 1)));
            let warm = format!("{session}{more}");
            runs.push(on_corpus(run(format!("{prefix}_{}_more", call.key), who, warm, 1 + k)));
        }
        let lines = |n: usize| "\n".repeat(n);
        for (suffix, n) in [("1", 1), ("more", 1 + k)] {
            runs.push(Run {
                name: format!("bare_{}_{suffix}", call.key),
                who: Who::Floor,
                corpus: call.corpus,
                args: call.bare_args(),
                script: lines(n),
                successes: 0,
            });
        }
    }
    let mut ir = std::collections::HashMap::new();
    for run in &runs {
        let program = rig.program(run.who);
        let Some((total, output)) = callgrind(rig, program, &run.args, &run.name, &run.script, run.corpus)
        else {
            println!("  {}: callgrind failed; skipped", run.name);
            println!();
            return;
        };
        let ok = output.lines().filter(|line| line.contains("\"isError\":false")).count();
        assert!(
            ok >= run.successes,
            "{}: {ok} successful calls under valgrind, {} expected",
            run.name,
            run.successes
        );
        if run.name.starts_with("bare_") {
            assert!(!output.contains("\"error\""), "{}: the bare exchange failed: {output}", run.name);
        }
        ir.insert(run.name.clone(), total);
    }
    let get = |name: &str| ir[name];
    let row = |what: &str, server: u64, floor: u64, floor_name: &str| {
        println!(
            "  {what:<52} server {server:>10}   {floor_name} {floor:>9}   ({:.2}×)",
            server as f64 / floor as f64
        )
    };
    row(
        "start, initialize answered, EOF, exit",
        get("server_init"),
        get("process_floor_init"),
        "process floor",
    );
    row("", get("server_init"), get("floor_init"), "MCP floor    ");
    row(
        "session (initialize, tools/list, health, exit)",
        get("server_health_1"),
        get("floor_health_1"),
        "MCP floor    ",
    );
    row(
        "  of which the first tools/list",
        get("server_list") - get("server_init"),
        get("floor_list") - get("floor_init"),
        "MCP floor    ",
    );
    row(
        "  of which the first health call (discovery, 2 GETs)",
        get("server_health_1") - get("server_list"),
        get("floor_health_1") - get("floor_list"),
        "MCP floor    ",
    );
    println!();
    println!("  per call, mean of {k} more calls in a warm session:");
    println!(
        "  {:<w$} {:>9} {:>9} {:>9} {:>12} {:>12}",
        "",
        "server",
        "floor",
        "bare HTTP",
        "server/bare",
        "server−bare",
        w = LABEL_WIDTH
    );
    for call in &CALLS {
        let per = |prefix: &str| {
            (get(&format!("{prefix}_{}_more", call.key)) - get(&format!("{prefix}_{}_1", call.key)))
                / k as u64
        };
        let (server, floor, bare) = (per("server"), per("floor"), per("bare"));
        println!(
            "  {:<w$} {server:>9} {floor:>9} {bare:>9} {:>11.2}× {:>12}",
            call.label,
            server as f64 / bare as f64,
            server as i64 - bare as i64,
            w = LABEL_WIDTH
        );
    }
    let ping = (get("server_ping") - get("server_health_1")) / k as u64;
    println!("  {:<w$} {ping:>9}", "ping (no HTTP)", w = LABEL_WIDTH);
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

    // The realistic slice is its own fixture set, served by the second fake.
    let mut server = rig.initialized(Who::Server, Corpus::Realistic);
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
    let (server, floor, process_floor) = (size(&rig.server), size(&rig.floor), size(&rig.process_floor));
    println!(
        "  resmon-mcp {server} B ({:.2} MiB); MCP floor {floor} B; process floor {process_floor} B",
        server as f64 / MIB as f64
    );
    targets.push(Target {
        what: "release binary",
        figure: format!("{:.2} MiB", server as f64 / MIB as f64),
        limit: "≤ 2 MiB".into(),
        holds: server <= 2 * MIB,
    });
}
