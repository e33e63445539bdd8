//! A stand-in for the resmon backend, for tests and for trying the MCP server by hand.
//!
//! A real HTTP/1.1 server on 127.0.0.1 (std only, a thread per connection,
//! keep-alive) that announces itself as resmon does: a `resmon.port` file and
//! an owner-only `api-token-<port>` file in the state directory. Every request
//! is recorded, then passes resmon's guard (Host, Origin, bearer token) before
//! a route sees it. What resmon computes is served from answers recorded in
//! `fixtures/backend/answers/`; only what writes change is remembered
//! ([`FakeBackend::state`]). Tests make routes misbehave with the faults of
//! `fake_backend/modes.rs` ([`FakeBackend::set_fault_for`]) or pin an answer
//! ([`FakeBackend::override_response`]).
//!
//! Include it with `#[path = "../support/fake_backend.rs"] mod fake_backend;`.
#![allow(dead_code)]

#[path = "fake_backend/answers.rs"]
mod answers;
#[path = "fake_backend/http.rs"]
mod http;
#[path = "fake_backend/modes.rs"]
mod modes;
#[path = "fake_backend/routes.rs"]
mod routes;
#[path = "fake_backend/state.rs"]
mod state;
#[path = "fake_backend/util.rs"]
// Its date formatting is also the benchmark's (examples/bench/stats.rs).
pub mod util;

#[allow(unused_imports)]
pub use routes::ROUTES;
pub use state::{Corpus, State};

pub use http::Request;
use http::Response;
pub use modes::Fault;
use modes::{Answer, End, Mode, Wire};
use routes::path_matches;
use serde_json::json;
use std::collections::HashMap;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Ids in the synthetic corpus that tests rely on (fixtures/backend/README.md tells the rest).
pub mod corpus {
    /// Paper ids run 801..=834: 34 papers (14 arxiv, 9 biorxiv, 9 pubmed, 1 medrxiv, 1 crossref),
    /// so a 25-row page has a second page of 9.
    pub const FIRST_DOC: i64 = 801;
    pub const LAST_DOC: i64 = 834;
    pub const DOC_COUNT: usize = 34;
    /// Paper with `publication_date: null` (sorts last, no vector).
    pub const DOC_UNDATED: i64 = 834;
    /// Paper without a DOI.
    pub const DOC_NO_DOI: i64 = 829;
    /// Retracted paper (lifecycle event, severity critical).
    pub const DOC_RETRACTED: i64 = 805;
    /// Paper with a published-version and a new-version event.
    pub const DOC_VERSIONED: i64 = 803;
    /// A paper id that does not exist.
    pub const DOC_MISSING: i64 = 99_999;
    /// Completed run restarted from 118: biorxiv answered in part, `default_starts`.
    pub const EXEC_RESTARTED: i64 = 119;
    pub const EXEC_DEEP_DIVE: i64 = 120;
    pub const EXEC_MISSING: i64 = 99_999;
}

/// The routes [`FakeBackend::emulate_older_release`] lacks: the newest features' routes.
pub const OLDER_RELEASE_LACKS: [(&str, &str); 5] = [
    ("GET", "/api/routines/{id}/deliveries"),
    ("GET", "/api/routines/{id}/coverage"),
    ("GET", "/api/executions/{id}/search-record"),
    ("GET", "/api/analytics/discovery-lag"),
    ("GET", "/api/watchdog"),
];

/// The realistic slice (`fixtures/backend/realistic/`, served with `Corpus::Realistic`).
pub mod realistic {
    /// Paper ids run 2001..=2120, two a day from 2026-11-30 back, all arxiv.
    pub const DOC_COUNT: usize = 120;
    /// A query matching 70 papers, far more than a page of 25: the budgets' page.
    pub const QUERY: &str = "learning";
    pub const QUERY_MATCHES: i64 = 70;
}

/// One request as the fake saw it (its fields through `Deref`), and what it answered.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub request: Request,
    /// The status the fake answered; 0 if it never answered (e.g. `Fault::Hang`).
    pub status: u16,
    /// The body the fake answered with, when it sent it whole.
    pub answer: Vec<u8>,
}

impl std::ops::Deref for Recorded {
    type Target = Request;
    fn deref(&self) -> &Request {
        &self.request
    }
}

#[derive(Clone, Default)]
struct Creds {
    token: String,
    runtime_id: String,
    started_at: String,
}

impl Creds {
    /// A fresh token, runtime id and start time, as a (re)started resmon has.
    fn mint() -> Creds {
        let (secs, micros) = util::now();
        let started_at = util::fmt_time(secs, 'T', &format!(".{micros:06}+00:00"));
        Creds { token: util::mint_token(), runtime_id: util::mint_uuid4(), started_at }
    }
}

#[derive(Default)]
struct Inner {
    port: u16,
    decoy_port: u16,
    state_dir: PathBuf,
    creds: Mutex<Creds>,
    state: Mutex<State>,
    log: Mutex<Vec<(u64, Recorded)>>,
    next_seq: AtomicU64,
    fault: Mutex<Fault>,
    route_faults: Mutex<Vec<(String, String, Fault)>>,
    /// Route faults that start once a number of matching requests went by.
    delayed_faults: Mutex<Vec<(String, String, usize, Fault)>>,
    /// A route whose next request finds the backend restarted just before it arrives.
    restart_on: Mutex<Option<(String, String)>>,
    /// Canned answers, by method and exact path.
    overrides: Mutex<Vec<(String, String, Response)>>,
    stopped: AtomicBool,
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
    decoy_hits: AtomicUsize,
}

impl Inner {
    fn token_file(&self) -> PathBuf {
        self.state_dir.join(format!("api-token-{}", self.port))
    }
}

/// A running fake backend. Dropping it stops it.
pub struct FakeBackend {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// Writes `content` to `path` through a temporary file and a rename, owner-only on Unix.
fn write_private_file(path: &Path, content: &str) -> io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    opts.open(&tmp)?.write_all(content.as_bytes())?;
    std::fs::rename(&tmp, path)
}

fn remove_if_holds(path: &Path, content: &str) {
    if std::fs::read_to_string(path).is_ok_and(|c| c == content) {
        let _ = std::fs::remove_file(path);
    }
}

impl FakeBackend {
    /// Binds 127.0.0.1:0, mints a token and a runtime id, writes the port and token
    /// files into `state_dir` (created if missing) and serves; panics if it cannot.
    pub fn start(state_dir: &Path) -> FakeBackend {
        FakeBackend::start_with(state_dir, Corpus::Short)
    }

    /// As `start`, serving the papers of `corpus`.
    pub fn start_with(state_dir: &Path, corpus: Corpus) -> FakeBackend {
        std::fs::create_dir_all(state_dir)
            .unwrap_or_else(|e| panic!("fake backend: cannot create {}: {e}", state_dir.display()));
        let listener = TcpListener::bind(loopback(0)).expect("fake backend: bind 127.0.0.1:0");
        let port = listener.local_addr().expect("fake backend: local addr").port();
        let decoy = TcpListener::bind(loopback(0)).expect("fake backend: bind decoy port");
        let decoy_port = decoy.local_addr().expect("fake backend: decoy addr").port();
        let inner = Arc::new(Inner {
            port,
            decoy_port,
            state_dir: state_dir.to_path_buf(),
            creds: Mutex::new(Creds::mint()),
            state: Mutex::new(State::load_with(corpus)),
            ..Inner::default()
        });
        let fb = FakeBackend { inner: inner.clone(), threads: Mutex::new(Vec::new()) };
        let files = std::fs::write(fb.port_file(), port.to_string())
            .and_then(|()| write_private_file(&fb.token_file(), &fb.token()));
        files.unwrap_or_else(|e| panic!("fake backend: cannot write the port and token files: {e}"));
        let serving = [(listener, serve_connection as fn(Arc<Inner>, TcpStream)), (decoy, serve_decoy)];
        for (listener, serve) in serving {
            let inner = inner.clone();
            lock(&fb.threads).push(thread::spawn(move || accept_loop(inner, listener, serve)));
        }
        fb
    }

    pub fn port(&self) -> u16 {
        self.inner.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.inner.port)
    }

    pub fn token(&self) -> String {
        lock(&self.inner.creds).token.clone()
    }

    pub fn runtime_id(&self) -> String {
        lock(&self.inner.creds).runtime_id.clone()
    }

    pub fn state_dir(&self) -> PathBuf {
        self.inner.state_dir.clone()
    }

    /// `<state_dir>/resmon.port`.
    pub fn port_file(&self) -> PathBuf {
        self.inner.state_dir.join("resmon.port")
    }

    /// `<state_dir>/api-token-<port>`.
    pub fn token_file(&self) -> PathBuf {
        self.inner.token_file()
    }

    /// Every request that reached the server so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.inner.log).iter().map(|(_, r)| r.clone()).collect()
    }

    /// The recorded requests with that method and path.
    pub fn requests_to(&self, method: &str, path: &str) -> Vec<Recorded> {
        self.requests().into_iter().filter(|r| r.method == method && r.path == path).collect()
    }

    pub fn clear_requests(&self) {
        lock(&self.inner.log).clear();
    }

    /// Applies `fault` to every later request until `set_fault(Fault::None)`.
    pub fn set_fault(&self, fault: Fault) {
        *lock(&self.inner.fault) = fault;
    }

    /// Applies `fault` to requests with this method and path, the query aside (a `{name}`
    /// segment matches any one), over the global fault; `Fault::None` removes it.
    pub fn set_fault_for(&self, method: &str, path: &str, fault: Fault) {
        let mut faults = lock(&self.inner.route_faults);
        faults.retain(|(m, p, _)| !(m == method && p == path));
        if fault != Fault::None {
            faults.push((method.to_string(), path.to_string(), fault));
        }
    }

    /// Clears every fault, and gives back every route `lack_route` took away.
    pub fn clear_faults(&self) {
        lock(&self.inner.state).lacking.clear();
        *lock(&self.inner.fault) = Fault::None;
        lock(&self.inner.route_faults).clear();
        lock(&self.inner.delayed_faults).clear();
    }

    /// As `set_fault_for`, once `pass` matching requests went by: a fault in the
    /// middle of one call (the read-back after a write, say).
    pub fn set_fault_after(&self, method: &str, path: &str, pass: usize, fault: Fault) {
        lock(&self.inner.delayed_faults).push((method.to_string(), path.to_string(), pass, fault));
    }

    /// A canned answer for one method and exact path, after the guard; Content-Type
    /// is application/json unless `headers` names one, Content-Length is computed.
    pub fn override_response(
        &self,
        method: &str,
        path: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: &str,
    ) {
        let mut response = Response { status, headers: Vec::new(), body: body.into() };
        for (name, value) in headers.iter().filter(|(name, _)| !name.eq_ignore_ascii_case("content-length")) {
            response = response.with_header(name, value);
        }
        if response.headers.iter().all(|(name, _)| name != "content-type") {
            response.headers.insert(0, ("content-type".into(), "application/json".into()));
        }
        let mut overrides = lock(&self.inner.overrides);
        overrides.retain(|(m, p, _)| !(m == method && p == path));
        overrides.push((method.to_string(), path.to_string(), response));
    }

    pub fn clear_overrides(&self) {
        lock(&self.inner.overrides).clear();
    }

    /// Makes `method path` answer as a release without that route: the web
    /// framework's 404, `{"detail": "Not Found"}`; another method there then
    /// answers 404, or 405 if the path keeps one.
    pub fn lack_route(&self, method: &str, path: &str) {
        self.set_fault_for(method, path, Fault::Status(404, r#"{"detail":"Not Found"}"#.into()));
        lock(&self.inner.state).lacking.push((method.to_string(), path.to_string()));
    }

    /// Behaves as resmon 1.6.1, the oldest release tried: an older release
    /// without `POST /api/routines/{id}/run`.
    pub fn emulate_resmon_1_6_1(&self) {
        self.emulate_older_release("1.6.1");
        self.lack_route("POST", "/api/routines/{id}/run");
    }

    /// Behaves as a release older than contract 1.0 expects: health has no identity
    /// (`expected_runtime_id` is ignored), the answers recorded for an older release
    /// are served (a created routine's `intent` is not stored), the reference export
    /// refuses `json`, the profile list refuses `kind=group` ("kind must be person or
    /// institution"), and [`OLDER_RELEASE_LACKS`] answer the framework's 404.
    pub fn emulate_older_release(&self, version: &str) {
        {
            let mut st = lock(&self.inner.state);
            st.version = version.to_string();
            st.reports_identity = false;
            st.older_release = true;
        }
        for (method, path) in OLDER_RELEASE_LACKS {
            self.lack_route(method, path);
        }
    }

    /// With `emulate_older_release`: the reference export refuses `json` for any
    /// run by FastAPI's validation (a 422, its `format` an enum), not a 400 sentence.
    pub fn refuse_json_by_validation(&self) {
        lock(&self.inner.state).json_refused_by_validation = true;
    }

    /// Restarts on the same port: a new token (rewritten to its file, the old one
    /// refused from now on) and a new runtime id.
    pub fn restart_with_new_token(&self) {
        restart(&self.inner);
    }

    /// The next request to `method path` finds the backend restarted, as if
    /// resmon restarted between two requests of one call.
    pub fn restart_before(&self, method: &str, path: &str) {
        *lock(&self.inner.restart_on) = Some((method.to_string(), path.to_string()));
    }

    /// How many connections reached the port `Fault::Redirect` points at.
    pub fn redirect_target_hits(&self) -> usize {
        self.inner.decoy_hits.load(Ordering::SeqCst)
    }

    /// Stops listening, closes open connections and removes the port and token
    /// files that still hold this instance's values. Safe to call twice.
    pub fn stop(&self) {
        if self.inner.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake both accept loops, so that they see the stop.
        for p in [self.inner.port, self.inner.decoy_port] {
            let _ = TcpStream::connect_timeout(&loopback(p), Duration::from_secs(1));
        }
        for t in lock(&self.threads).drain(..) {
            let _ = t.join();
        }
        for (_, s) in lock(&self.inner.conns).drain() {
            let _ = s.shutdown(Shutdown::Both);
        }
        remove_if_holds(&self.port_file(), &self.inner.port.to_string());
        remove_if_holds(&self.token_file(), &self.token());
    }

    /// The in-memory data, for reading or adjusting.
    pub fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.inner.state)
    }
}

impl Drop for FakeBackend {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serves each connection `listener` accepts on a thread of its own, until stop.
fn accept_loop(inner: Arc<Inner>, listener: TcpListener, serve: fn(Arc<Inner>, TcpStream)) {
    for conn in listener.incoming() {
        if inner.stopped.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else {
            thread::sleep(Duration::from_millis(5));
            continue;
        };
        let inner = inner.clone();
        let _ = thread::Builder::new().name("fake-backend-conn".into()).spawn(move || serve(inner, stream));
    }
}

/// The port a redirect points at: counts whoever arrives and sends them away.
fn serve_decoy(inner: Arc<Inner>, mut stream: TcpStream) {
    inner.decoy_hits.fetch_add(1, Ordering::SeqCst);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let _ = stream.read(&mut [0u8; 8192]);
    let away = Response::detail(404, "This is not the backend you were sent to.");
    let _ = http::write_response(&mut stream, &away, true);
    let _ = stream.shutdown(Shutdown::Both);
}

/// The pause after a mode's preface bytes, so that the client reads them apart.
const PRECEDED_PAUSE: Duration = Duration::from_millis(30);

/// The pause between two bytes of an answer that drips.
const DRIP_EVERY: Duration = Duration::from_millis(20);

/// Reads requests off one connection and answers each as the mode in force
/// for it says (`modes.rs`), until the connection ends.
fn serve_connection(inner: Arc<Inner>, stream: TcpStream) {
    let id = inner.next_conn.fetch_add(1, Ordering::SeqCst);
    if let Ok(c) = stream.try_clone() {
        lock(&inner.conns).insert(id, c);
    }
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream);
    let mut reset = false;
    // Requests this connection carried before the current one.
    let mut served = 0usize;
    while !inner.stopped.load(Ordering::SeqCst) {
        let req = match http::read_request(&mut reader) {
            Ok(Ok(r)) => r,
            Err(_) => break,
            Ok(Err(why)) => {
                let r = Response::bytes(400, "text/plain; charset=utf-8", why);
                let _ = http::write_response(reader.get_mut(), &r, true);
                break;
            }
        };
        let seq = record(&inner, &req);
        let close = req.wants_close();
        let stream = reader.get_mut();
        let (mode, answer) = handle(&inner, &req, served > 0);
        served += 1;
        for first in &mode.preface {
            let _ = stream.write_all(first).and_then(|()| stream.flush());
            thread::sleep(PRECEDED_PAUSE);
        }
        let (status, body) = mode.recorded(&answer);
        set_answer(&inner, seq, status, body);
        let written = stream.write_all(&mode.bytes(&answer, close)).and_then(|()| stream.flush());
        match mode.end {
            End::KeepAlive if written.is_ok() && !close => continue,
            End::KeepAlive | End::Close => (),
            End::Hang => hang(&inner, stream),
            End::Reset => reset = abortive_close(stream),
            End::Drip(byte) => {
                let mut dripping = written.is_ok();
                while dripping && !inner.stopped.load(Ordering::SeqCst) {
                    thread::sleep(DRIP_EVERY);
                    dripping = stream.write_all(&[byte]).and_then(|()| stream.flush()).is_ok();
                }
            }
        }
        break;
    }
    let s = reader.into_inner();
    if !reset {
        let _ = s.shutdown(Shutdown::Both);
    }
    // The last handle to the socket closes it: with SO_LINGER 0, by a reset.
    lock(&inner.conns).remove(&id);
    drop(s);
}

/// Sets SO_LINGER to 0, so that closing the socket resets the connection
/// instead of closing it in order. Linux only (std has no stable way to
/// ask); elsewhere nothing is set and `false` says the close will be plain.
#[cfg(target_os = "linux")]
fn abortive_close(stream: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    unsafe extern "C" {
        fn setsockopt(fd: i32, level: i32, name: i32, value: *const [i32; 2], length: u32) -> i32;
    }
    // SOL_SOCKET (1), SO_LINGER (13), and a `struct linger` (two ints): on, 0 seconds.
    // SAFETY: the descriptor is open while `stream` is borrowed, and the value
    // is a `struct linger` of the length given.
    unsafe { setsockopt(stream.as_raw_fd(), 1, 13, &[1, 0], 8) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn abortive_close(_stream: &TcpStream) -> bool {
    false
}

/// Keeps the connection open without answering until stop or the peer leaves.
fn hang(inner: &Inner, stream: &mut TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 4096];
    while !inner.stopped.load(Ordering::SeqCst) {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Err(e) if !matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => return,
            _ => {}
        }
    }
}

fn record(inner: &Inner, req: &Request) -> u64 {
    let seq = inner.next_seq.fetch_add(1, Ordering::SeqCst);
    lock(&inner.log).push((seq, Recorded { request: req.clone(), status: 0, answer: Vec::new() }));
    seq
}

/// What the fake answered a recorded request (the body only when it sent it whole).
fn set_answer(inner: &Inner, seq: u64, status: u16, body: Vec<u8>) {
    if let Some((_, r)) = lock(&inner.log).iter_mut().find(|(s, _)| *s == seq) {
        r.status = status;
        r.answer = body;
    }
}

/// The fault in force for a request: a delayed one once its passes are spent,
/// else a route's, else the global one.
fn fault_for(inner: &Inner, method: &str, path: &str) -> Fault {
    let fits = |m: &str, p: &str| m == method && path_matches(p, path);
    for (.., pass, fault) in lock(&inner.delayed_faults).iter_mut().filter(|(m, p, ..)| fits(m, p)) {
        if *pass == 0 {
            return fault.clone();
        }
        *pass -= 1;
    }
    let route_faults = lock(&inner.route_faults);
    let route = route_faults.iter().find(|(m, p, _)| fits(m, p)).map(|(.., fault)| fault.clone());
    route.unwrap_or_else(|| lock(&inner.fault).clone())
}

/// A refusal by the guard; a 401 names the scheme it takes.
fn refusal(status: u16, reason: &str, message: &str) -> Response {
    let r = Response::json(status, &json!({"detail": {"reason": reason, "message": message}}));
    let r = r.with_header("cache-control", "no-store");
    if status == 401 { r.with_header("www-authenticate", "Bearer realm=\"resmon\"") } else { r }
}

fn host_refused() -> Response {
    refusal(
        403,
        "host_refused",
        "resmon answers only requests addressed to 127.0.0.1 or localhost on its own port.",
    )
}

fn token_invalid() -> Response {
    refusal(401, "token_invalid", "The local API token on this request is not this resmon's.")
}

/// resmon's guard, in its order: Host, Origin (the fake registers no
/// renderer origin, so any is refused), token.
fn guard(inner: &Inner, token: &str, req: &Request) -> Option<Response> {
    let (hosts, auths) = (req.headers_named("host"), req.headers_named("authorization"));
    let ours = [format!("127.0.0.1:{}", inner.port), format!("localhost:{}", inner.port)];
    if hosts.len() != 1 || !ours.iter().any(|host| host == hosts[0]) {
        Some(host_refused())
    } else if !req.headers_named("origin").is_empty() {
        Some(refusal(403, "origin_refused", "resmon answers browser requests only from its own window."))
    } else if auths.is_empty() {
        Some(refusal(401, "token_missing", "This request needs resmon's local API token."))
    } else if auths.len() != 1 || bearer(auths[0]) != Some(token) {
        Some(token_invalid())
    } else {
        None
    }
}

/// The token of a `Bearer` authorization, the scheme's name in any case.
fn bearer(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(char::is_whitespace)?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn restart(inner: &Inner) {
    *lock(&inner.creds) = Creds::mint();
    let token = lock(&inner.creds).token.clone();
    write_private_file(&inner.token_file(), &token)
        .unwrap_or_else(|e| panic!("fake backend: cannot rewrite the token file: {e}"));
}

/// The mode in force for `req` (a row of the fault table) and the answer it serves.
fn handle(inner: &Inner, req: &Request, reused: bool) -> (Mode, Response) {
    let due = lock(&inner.restart_on).take_if(|(m, p)| *m == req.method && path_matches(p, &req.path));
    if due.is_some() {
        restart(inner);
    }
    let decoy = |path: &str| format!("http://127.0.0.1:{}{path}", inner.decoy_port);
    let mut mode = fault_for(inner, &req.method, &req.path).mode(req, &decoy, reused);
    let creds = lock(&inner.creds).clone();
    let refused =
        if matches!(mode.answer, Answer::Guard(_)) { None } else { guard(inner, &creds.token, req) };
    if let Some(refused) = refused {
        (mode.wire, mode.end) = (Wire::Whole, End::KeepAlive);
        return (mode, refused);
    }
    thread::sleep(mode.delay);
    // The route's answer: a test's override of it, else the route's own, its work done.
    let route = || {
        let overrides = lock(&inner.overrides);
        let canned =
            overrides.iter().find(|(m, p, _)| *m == req.method && *p == req.path).map(|(.., r)| r.clone());
        drop(overrides); // not held while the route locks the state
        canned.unwrap_or_else(|| {
            let ctx = routes::Ctx { runtime_id: &creds.runtime_id, started_at: &creds.started_at };
            routes::dispatch(&mut lock(&inner.state), &ctx, req)
        })
    };
    let answer = match std::mem::replace(&mut mode.answer, Answer::Own) {
        Answer::Own => route(),
        Answer::Changed(edit) => edit(route()),
        Answer::Instead(answer) | Answer::Guard(answer) => answer,
        Answer::After(answer) => {
            route();
            answer
        }
    };
    (mode, answer)
}
