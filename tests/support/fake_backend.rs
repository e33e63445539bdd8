//! A stand-in for the resmon backend, for tests and for trying the MCP server by hand.
//!
//! It is a real HTTP/1.1 server on 127.0.0.1 (std only, one thread per
//! connection, keep-alive) that announces itself the way resmon does: a
//! `resmon.port` file and an owner-only `api-token-<port>` file in the state
//! directory. Every request goes through resmon's guard (Host, then Origin,
//! then the bearer token) before any route sees it, and every request that
//! reaches the socket is recorded, refused or not.
//!
//! It is not a second resmon: what resmon computes (rankings, exports,
//! audits, analytics, refusals) is served as answers recorded in
//! `fixtures/backend/answers/`, and only what writes change (routines,
//! executions, watch profiles, settings, the run queue) is remembered and
//! answered from memory. Tests can reach into that with [`FakeBackend::state`],
//! make routes misbehave with [`FakeBackend::set_fault`] /
//! [`FakeBackend::set_fault_for`], or pin one route's answer with
//! [`FakeBackend::override_response`].
//!
//! Include it with `#[path = "../support/fake_backend.rs"] mod fake_backend;`.
#![allow(dead_code)]

#[path = "fake_backend/answers.rs"]
mod answers;
#[path = "fake_backend/http.rs"]
mod http;
#[path = "fake_backend/routes.rs"]
mod routes;
#[path = "fake_backend/state.rs"]
mod state;
#[path = "fake_backend/util.rs"]
mod util;

#[allow(unused_imports)]
pub use routes::ROUTES;
pub use state::{Corpus, State};

use http::{ReadOutcome, Request, Response};
use routes::path_matches;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Ids in the synthetic corpus that tests rely on (fixtures/backend/README.md
/// describes the rest).
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

/// The routes [`FakeBackend::emulate_older_release`] lacks: the ones the
/// newest contract features live on.
pub const OLDER_RELEASE_LACKS: [(&str, &str); 5] = [
    ("GET", "/api/routines/{id}/deliveries"),
    ("GET", "/api/routines/{id}/coverage"),
    ("GET", "/api/executions/{id}/search-record"),
    ("GET", "/api/analytics/discovery-lag"),
    ("GET", "/api/watchdog"),
];

/// The realistic slice (`fixtures/backend/realistic/`, served by
/// `FakeBackend::start_with(dir, Corpus::Realistic)`).
pub mod realistic {
    /// Paper ids run 2001..=2120, two a day from 2026-11-30 back, all arxiv.
    pub const DOC_COUNT: usize = 120;
    /// A query whose keyword answer is far more than one page of 25 (it
    /// matches 70 papers): the page the budgets are measured on.
    pub const QUERY: &str = "learning";
    pub const QUERY_MATCHES: i64 = 70;
}

/// One request as the fake saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// The path without the query string, as sent.
    pub path: String,
    /// The raw query string, without `?`.
    pub query: String,
    /// The query, percent-decoded, in order.
    pub query_pairs: Vec<(String, String)>,
    /// Header names lowercased, in order, duplicates kept.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The status the fake answered; 0 if it never answered (e.g. `Fault::Hang`).
    pub status: u16,
    /// The body the fake answered with (empty if it never answered).
    pub answer: Vec<u8>,
}

impl Recorded {
    /// First header with that name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// Ways to make the fake misbehave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Read the request, never answer; the socket stays open until stop or the client leaves.
    Hang,
    /// Status line and headers with Content-Length N, part of the body, then close.
    ResetMidBody,
    /// Content-Length larger than the body sent, then close.
    LyingContentLength,
    /// 500 text/html with a Python traceback in it.
    Html500,
    /// 200 application/json whose body is not JSON.
    NonJson200,
    /// 200 with `[1,2,3]`.
    WrongShape200,
    /// 200 with `{}`.
    NullsBody200,
    /// 302 to another local port (see [`FakeBackend::redirect_target_hits`]).
    Redirect,
    /// 200 application/json, a valid JSON body of 20 MiB, streamed.
    Oversize,
    /// The route's own answer with the request's bearer token planted in string fields
    /// (`detail`, `message`, and a `note` in nested objects / array rows).
    EchoToken,
    /// That status with that body (application/json).
    Status(u16, String),
    /// 401 token_invalid, in place of the guard.
    Unauthorized,
    /// 403 host_refused, in place of the guard.
    HostRefused,
    /// Read the request, then close the connection without a byte of answer.
    CloseWithoutAnswer,
    /// The route's own answer with this key removed from every object in
    /// it, at any depth: a release whose rows lack a field.
    DropKey(String),
    /// The route's own answer with this key's value set to null in every
    /// object in it, at any depth.
    NullKey(String),
    /// The route's own answer (its work done) with the first key renamed to
    /// the second in its top-level object: a release that answers a write
    /// under another key.
    RenameKey(String, String),
    /// The route's own answer (its work done) with each top-level key of
    /// this object set to its value, null included.
    SetKeys(Value),
    /// As [`Fault::SetKeys`], but in every object the path leads to: keys
    /// separated by `/`, `*` for every element of an array (`papers/*`);
    /// an empty path is the top-level object. A step that finds nothing
    /// leads nowhere, and nothing is set there.
    SetKeysIn(String, Value),
    /// The route's own answer (its work done) with this key written once
    /// more, with this value, at the end of its top-level JSON object: an
    /// answer that gives one key twice, which a JSON parser that keeps the
    /// last of them would read without a word.
    RepeatKey(String, Value),
    /// The route's own answer (its work done, its own status) with a
    /// Content-Length for the whole body but only its first N bytes sent,
    /// then the connection closed.
    BreakOff(usize),
    /// The route's own answer, after this many milliseconds.
    Slow(u64),
    /// A status line, then one byte of a header every 20 ms, never ending
    /// the head: each read gets a byte soon, so only a total bound ends it.
    TrickleHead,
    /// A 200 head promising 1 MiB, then one byte of body every 20 ms.
    TrickleBody,
    /// A 200 head and half its body, then nothing more on an open connection.
    StallMidBody,
    /// The route's own answer (its work done) with one more header whose
    /// value is this many bytes: a head larger than a client may read.
    BigHead(usize),
    /// The route's own status line (its work done) and one header, then
    /// nothing more on an open connection: a head that stalls after its
    /// status line.
    StallInHead,
    /// The route's own status line (its work done), then a header line whose
    /// name is not a valid HTTP token, then the rest of its answer.
    InvalidHeader,
    /// The route's own answer (its work done, its own status) with a
    /// Content-Length for the whole body but only its first N bytes sent,
    /// then nothing more on an open connection.
    StallAfter(usize),
    /// As [`Fault::BreakOff`], but the connection is reset (an abortive
    /// close, SO_LINGER 0) rather than closed. Only Linux resets; elsewhere
    /// the connection is closed as `BreakOff` closes it.
    ResetAfter(usize),
    /// These bytes first (an interim `HTTP/1.1 100 Continue` head, a stray
    /// blank line), a moment's pause, then the answer the inner fault gives
    /// (`Fault::None` for the route's own, its work done).
    Preceded(String, Box<Fault>),
    /// The route's work done, then this 3xx status with a `Location` naming
    /// this path on the decoy port (another address, which must never be
    /// reached or shown), and this body (application/json).
    RedirectTo(u16, String, String),
    /// Read the request, then reset the connection without a byte of answer
    /// (Linux; elsewhere it is closed, as `CloseWithoutAnswer` does).
    ResetWithoutAnswer,
    /// The route's work done (a write stored), then this status with this
    /// content type and body: a resmon that did what was asked and then
    /// failed while answering.
    StoredThen(u16, String, String),
    /// A request that arrives on a connection which already carried one is
    /// met by a close without a byte of answer; one on a new connection gets
    /// the route's own answer. What a client sees when the server closed an
    /// idle keep-alive connection just as the client reused it.
    CloseIfReused,
}

/// The pause between two bytes of a trickled answer.
const TRICKLE_EVERY: Duration = Duration::from_millis(20);

const OVERSIZE_BYTES: usize = 20 * 1024 * 1024;

struct Creds {
    token: String,
    runtime_id: String,
    started_at: String,
}

impl Creds {
    /// A fresh token, runtime id and start time, as a (re)started resmon has.
    fn mint() -> Creds {
        let (secs, micros) = util::now();
        let started_at = util::fmt_iso_micros(secs, micros);
        Creds { token: util::mint_token(), runtime_id: util::mint_uuid4(), started_at }
    }
}

struct Override {
    method: String,
    path: String,
    response: Response,
}

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
    /// Route faults that start after a number of matching requests passed.
    delayed_faults: Mutex<Vec<(String, String, usize, Fault)>>,
    /// A route whose next request finds the backend restarted (new token,
    /// new runtime id) just before it arrives.
    restart_on: Mutex<Option<(String, String)>>,
    overrides: Mutex<Vec<Override>>,
    stopped: AtomicBool,
    conns: Mutex<HashMap<u64, TcpStream>>,
    next_conn: AtomicU64,
    decoy_hits: AtomicUsize,
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
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp)?;
    f.write_all(content.as_bytes())?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)
}

fn remove_if_holds(path: &Path, content: &str) {
    if std::fs::read_to_string(path).is_ok_and(|c| c == content) {
        let _ = std::fs::remove_file(path);
    }
}

impl FakeBackend {
    /// Binds 127.0.0.1:0, mints a token and a runtime id, writes the port and
    /// token files into `state_dir` (created if missing), loads the corpus and
    /// starts serving. Panics if any of that fails: it is a test helper.
    pub fn start(state_dir: &Path) -> FakeBackend {
        FakeBackend::start_with(state_dir, Corpus::Short)
    }

    /// As `start`, serving the papers of `corpus` (the realistic slice for
    /// the context-budget measures).
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
            log: Mutex::new(Vec::new()),
            next_seq: AtomicU64::new(1),
            fault: Mutex::new(Fault::None),
            route_faults: Mutex::new(Vec::new()),
            delayed_faults: Mutex::new(Vec::new()),
            restart_on: Mutex::new(None),
            overrides: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            next_conn: AtomicU64::new(1),
            decoy_hits: AtomicUsize::new(0),
        });
        let fb = FakeBackend { inner: inner.clone(), threads: Mutex::new(Vec::new()) };
        std::fs::write(fb.port_file(), port.to_string())
            .unwrap_or_else(|e| panic!("fake backend: cannot write the port file: {e}"));
        let token = fb.token();
        write_private_file(&fb.token_file(), &token)
            .unwrap_or_else(|e| panic!("fake backend: cannot write the token file: {e}"));

        let main_inner = inner.clone();
        let accept = thread::Builder::new()
            .name(format!("fake-backend-{port}"))
            .spawn(move || accept_loop(main_inner, listener))
            .expect("fake backend: spawn accept thread");
        let decoy_inner = inner;
        let decoy_thread = thread::Builder::new()
            .name(format!("fake-backend-decoy-{decoy_port}"))
            .spawn(move || decoy_loop(decoy_inner, decoy))
            .expect("fake backend: spawn decoy thread");
        lock(&fb.threads).extend([accept, decoy_thread]);
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
        self.inner.state_dir.join(format!("api-token-{}", self.inner.port))
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

    /// Applies `fault` only to requests with this method and path (no query);
    /// a `{name}` segment in `path` matches any one segment. `Fault::None`
    /// removes it. A route fault wins over the global one.
    pub fn set_fault_for(&self, method: &str, path: &str, fault: Fault) {
        let mut faults = lock(&self.inner.route_faults);
        faults.retain(|(m, p, _)| !(m == method && p == path));
        if fault != Fault::None {
            faults.push((method.to_string(), path.to_string(), fault));
        }
    }

    /// Clears the global fault and every route fault, and gives back every
    /// route `lack_route` took away.
    pub fn clear_faults(&self) {
        lock(&self.inner.state).lacking.clear();
        *lock(&self.inner.fault) = Fault::None;
        lock(&self.inner.route_faults).clear();
        lock(&self.inner.delayed_faults).clear();
    }

    /// Like [`FakeBackend::set_fault_for`], but the first `pass` matching
    /// requests are answered normally: a fault in the middle of one call
    /// (the read-back after a write, say).
    pub fn set_fault_after(&self, method: &str, path: &str, pass: usize, fault: Fault) {
        lock(&self.inner.delayed_faults).push((method.to_string(), path.to_string(), pass, fault));
    }

    /// A canned answer for one method and exact path (the guard still runs first).
    /// Content-Type defaults to application/json unless `headers` names one;
    /// Content-Length is always computed.
    pub fn override_response(
        &self,
        method: &str,
        path: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: &str,
    ) {
        let mut hs: Vec<(String, String)> = headers
            .iter()
            .filter(|(k, _)| !k.eq_ignore_ascii_case("content-length"))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect();
        if !hs.iter().any(|(k, _)| k == "content-type") {
            hs.insert(0, ("content-type".into(), "application/json".into()));
        }
        let mut overrides = lock(&self.inner.overrides);
        overrides.retain(|o| !(o.method == method && o.path == path));
        overrides.push(Override {
            method: method.to_string(),
            path: path.to_string(),
            response: Response { status, headers: hs, body: body.as_bytes().to_vec() },
        });
    }

    pub fn clear_overrides(&self) {
        lock(&self.inner.overrides).clear();
    }

    /// Makes `method path` answer as a resmon release without that route
    /// does: the web framework's own 404, `{"detail": "Not Found"}`.
    /// Another method on the same path then answers as the framework does
    /// for a path it serves with no method: 404, or 405 if one remains.
    pub fn lack_route(&self, method: &str, path: &str) {
        self.set_fault_for(method, path, Fault::Status(404, r#"{"detail":"Not Found"}"#.into()));
        lock(&self.inner.state).lacking.push((method.to_string(), path.to_string()));
    }

    /// Behaves as resmon 1.6.1, the oldest release this project was tried
    /// against: an older release (above) that also has no
    /// `POST /api/routines/{id}/run`.
    pub fn emulate_resmon_1_6_1(&self) {
        self.emulate_older_release("1.6.1");
        self.lack_route("POST", "/api/routines/{id}/run");
    }

    /// Behaves as a resmon release older than contract 1.0 expects: health
    /// reports `version` and no identity (and `expected_runtime_id` is
    /// ignored), the answers recorded for an older release are served (a
    /// created routine's `intent` is not stored), the reference export
    /// refuses the `json` format for every run, the profile list refuses
    /// `kind=group` ("kind must be person or institution"), and each route in
    /// [`OLDER_RELEASE_LACKS`] answers the framework's 404.
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

    /// With [`FakeBackend::emulate_older_release`]: the reference export's
    /// `format` is an enum, so `json` is refused by FastAPI's validation (a
    /// 422 listing `loc` `["query", "format"]`, `input` `"json"`) for any
    /// run id, instead of the release's 400 sentence.
    pub fn refuse_json_by_validation(&self) {
        lock(&self.inner.state).json_refused_by_validation = true;
    }

    /// Behaves as a restarted backend on the same port: a new token and a new
    /// runtime id; the token file is rewritten and the old token is refused.
    pub fn restart_with_new_token(&self) {
        restart(&self.inner);
    }

    /// The next request to `method path` finds the backend restarted on the
    /// same port, as if resmon restarted between two requests of one call.
    pub fn restart_before(&self, method: &str, path: &str) {
        *lock(&self.inner.restart_on) = Some((method.to_string(), path.to_string()));
    }

    /// How many connections reached the port `Fault::Redirect` points at.
    pub fn redirect_target_hits(&self) -> usize {
        self.inner.decoy_hits.load(Ordering::SeqCst)
    }

    /// Stops listening (later connects are refused), closes open connections
    /// and removes the port and token files (when they still hold this
    /// instance's values). Safe to call twice.
    pub fn stop(&self) {
        if self.inner.stopped.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake both accept loops so they notice and drop their listeners.
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

// ====================================================================== serving

fn accept_loop(inner: Arc<Inner>, listener: TcpListener) {
    for conn in listener.incoming() {
        if inner.stopped.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = conn else {
            thread::sleep(Duration::from_millis(5));
            continue;
        };
        let inner = inner.clone();
        let _ = thread::Builder::new()
            .name("fake-backend-conn".into())
            .spawn(move || serve_connection(inner, stream));
    }
}

/// The port a redirect points at: counts whoever arrives and sends them away.
fn decoy_loop(inner: Arc<Inner>, listener: TcpListener) {
    for conn in listener.incoming() {
        if inner.stopped.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = conn else { continue };
        inner.decoy_hits.fetch_add(1, Ordering::SeqCst);
        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
        let mut buf = [0u8; 8192];
        let _ = stream.read(&mut buf);
        let body = br#"{"detail":"This is not the backend you were sent to."}"#;
        let head =
            http::head_bytes(404, &[("content-type".into(), "application/json".into())], body.len(), true);
        let _ = stream.write_all(&head);
        let _ = stream.write_all(body);
        let _ = stream.shutdown(Shutdown::Both);
    }
}

enum Outcome {
    Reply(Response),
    Hang,
    Close,
    /// A status and headers that promise this many bytes, then fewer, then close.
    Truncated(u16, usize, Vec<u8>),
    Oversize,
    /// Headers that promise this many bytes, then fewer, then silence on an
    /// open connection.
    Stalled(usize, Vec<u8>),
    /// A trickled head (true) or body (false).
    Trickle(bool),
    /// These bytes as they are, then the connection ended as said.
    Raw(u16, Vec<u8>, End),
    /// These bytes, a pause, then the rest.
    Preceded(Vec<u8>, Box<Outcome>),
}

/// The pause after the bytes of [`Outcome::Preceded`], so that the client
/// reads them apart from what follows.
const PRECEDED_PAUSE: Duration = Duration::from_millis(30);

/// How a [`Outcome::Raw`] answer leaves its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Kept open and silent until stop or the peer leaves.
    Hang,
    /// Closed in the usual way.
    Close,
    /// Reset (an abortive close), where the platform lets the fake ask for one.
    Reset,
}

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
            ReadOutcome::Request(r) => r,
            ReadOutcome::Closed => break,
            ReadOutcome::Malformed(why) => {
                let r = Response::bytes(400, "text/plain; charset=utf-8", why);
                let _ = http::write_response(reader.get_mut(), &r, true);
                break;
            }
        };
        let seq = record(&inner, &req);
        let close = req.wants_close();
        let stream = reader.get_mut();
        let mut outcome = handle(&inner, &req, served > 0);
        served += 1;
        while let Outcome::Preceded(first, then) = outcome {
            let _ = stream.write_all(&first).and_then(|()| stream.flush());
            thread::sleep(PRECEDED_PAUSE);
            outcome = *then;
        }
        match outcome {
            Outcome::Reply(resp) => {
                set_answer(&inner, seq, resp.status, &resp.body);
                if http::write_response(stream, &resp, close).is_err() || close {
                    break;
                }
            }
            Outcome::Hang => {
                hang(&inner, stream);
                break;
            }
            Outcome::Close => {
                let _ = stream.shutdown(Shutdown::Both);
                break;
            }
            Outcome::Truncated(status, declared, sent) => {
                set_answer(&inner, seq, status, b"");
                let _ = stream.write_all(&http::head_bytes(status, &json_ct(), declared, false));
                let _ = stream.write_all(&sent);
                let _ = stream.flush();
                break;
            }
            Outcome::Oversize => {
                set_answer(&inner, seq, 200, b"");
                if write_oversize(stream, close).is_err() || close {
                    break;
                }
            }
            Outcome::Stalled(declared, sent) => {
                set_answer(&inner, seq, 200, b"");
                let _ = stream.write_all(&http::head_bytes(200, &json_ct(), declared, false));
                let _ = stream.write_all(&sent);
                let _ = stream.flush();
                hang(&inner, stream);
                break;
            }
            Outcome::Trickle(head) => {
                trickle(&inner, stream, head);
                break;
            }
            Outcome::Raw(status, bytes, end) => {
                set_answer(&inner, seq, status, b"");
                let _ = stream.write_all(&bytes).and_then(|()| stream.flush());
                match end {
                    End::Hang => hang(&inner, stream),
                    End::Close => (),
                    End::Reset => reset = abortive_close(stream),
                }
                break;
            }
            Outcome::Preceded(..) => unreachable!("written above"),
        }
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
    #[repr(C)]
    struct Linger {
        onoff: i32,
        seconds: i32,
    }
    unsafe extern "C" {
        fn setsockopt(fd: i32, level: i32, name: i32, value: *const Linger, length: u32) -> i32;
    }
    const SOL_SOCKET: i32 = 1;
    const SO_LINGER: i32 = 13;
    let linger = Linger { onoff: 1, seconds: 0 };
    // SAFETY: the descriptor is open for as long as `stream` is borrowed,
    // and the value is a `struct linger` of the length given.
    let done = unsafe {
        setsockopt(stream.as_raw_fd(), SOL_SOCKET, SO_LINGER, &linger, std::mem::size_of::<Linger>() as u32)
    };
    done == 0
}

#[cfg(not(target_os = "linux"))]
fn abortive_close(_stream: &TcpStream) -> bool {
    false
}

fn json_ct() -> Vec<(String, String)> {
    vec![("content-type".into(), "application/json".into())]
}

/// A 20 MiB JSON object written in 64 KiB pieces, so it is never held whole.
fn write_oversize(stream: &mut TcpStream, close: bool) -> io::Result<()> {
    let (prefix, suffix) = (br#"{"status":"ok","padding":""#, br#""}"#);
    stream.write_all(&http::head_bytes(200, &json_ct(), OVERSIZE_BYTES, close))?;
    stream.write_all(prefix)?;
    let chunk = vec![b'x'; 64 * 1024];
    let mut left = OVERSIZE_BYTES - prefix.len() - suffix.len();
    while left > 0 {
        let n = left.min(chunk.len());
        stream.write_all(&chunk[..n])?;
        left -= n;
    }
    stream.write_all(suffix)?;
    stream.flush()
}

/// Keeps the connection open without answering until stop or the peer leaves.
fn hang(inner: &Inner, stream: &mut TcpStream) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 4096];
    while !inner.stopped.load(Ordering::SeqCst) {
        match stream.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// Writes a head (or a head and then a body) one byte at a time until stop
/// or the peer leaves; it never ends.
fn trickle(inner: &Inner, stream: &mut TcpStream, head: bool) {
    let start: Vec<u8> = if head {
        b"HTTP/1.1 200 OK\r\nx-trickle: ".to_vec()
    } else {
        http::head_bytes(200, &json_ct(), 1024 * 1024, false)
    };
    if stream.write_all(&start).and_then(|()| stream.flush()).is_err() {
        return;
    }
    let byte: &[u8] = if head { b"a" } else { b" " };
    while !inner.stopped.load(Ordering::SeqCst) {
        thread::sleep(TRICKLE_EVERY);
        if stream.write_all(byte).and_then(|()| stream.flush()).is_err() {
            return;
        }
    }
}

fn record(inner: &Inner, req: &Request) -> u64 {
    let seq = inner.next_seq.fetch_add(1, Ordering::SeqCst);
    let rec = Recorded {
        method: req.method.clone(),
        path: req.path.clone(),
        query: req.query.clone(),
        query_pairs: req.query_pairs.clone(),
        headers: req.headers.clone(),
        body: req.body.clone(),
        status: 0,
        answer: Vec::new(),
    };
    lock(&inner.log).push((seq, rec));
    seq
}

/// What the fake answered a recorded request (the body only when it sent it whole).
fn set_answer(inner: &Inner, seq: u64, status: u16, body: &[u8]) {
    if let Some((_, r)) = lock(&inner.log).iter_mut().find(|(s, _)| *s == seq) {
        r.status = status;
        r.answer = body.to_vec();
    }
}

fn fault_for(inner: &Inner, method: &str, path: &str) -> Fault {
    for (m, p, pass, fault) in lock(&inner.delayed_faults).iter_mut() {
        if m == method && path_matches(p, path) {
            if *pass == 0 {
                return fault.clone();
            }
            *pass -= 1;
        }
    }
    let route = lock(&inner.route_faults)
        .iter()
        .find(|(m, p, _)| m == method && path_matches(p, path))
        .map(|(_, _, f)| f.clone());
    route.unwrap_or_else(|| lock(&inner.fault).clone())
}

fn refusal(status: u16, reason: &str, message: &str) -> Response {
    let mut r = Response::json(status, &json!({"detail": {"reason": reason, "message": message}}))
        .with_header("cache-control", "no-store");
    if status == 401 {
        r = r.with_header("www-authenticate", "Bearer realm=\"resmon\"");
    }
    r
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

/// resmon's guard, in its order: Host, Origin, token.
fn guard(inner: &Inner, token: &str, req: &Request) -> Option<Response> {
    let hosts = req.headers_named("host");
    let port = inner.port;
    let host_ok = hosts.len() == 1
        && (hosts[0] == format!("127.0.0.1:{port}") || hosts[0] == format!("localhost:{port}"));
    if !host_ok {
        return Some(host_refused());
    }
    // No renderer origin is ever registered with the fake, so any Origin is refused.
    if !req.headers_named("origin").is_empty() {
        return Some(refusal(
            403,
            "origin_refused",
            "resmon answers browser requests only from its own window.",
        ));
    }
    let auths = req.headers_named("authorization");
    if auths.is_empty() {
        return Some(refusal(401, "token_missing", "This request needs resmon's local API token."));
    }
    let good = auths.len() == 1
        && auths[0]
            .trim()
            .split_once(char::is_whitespace)
            .is_some_and(|(scheme, t)| scheme.eq_ignore_ascii_case("bearer") && t.trim() == token);
    if !good {
        return Some(token_invalid());
    }
    None
}

fn bearer_of(req: &Request) -> String {
    req.header("authorization")
        .and_then(|a| a.trim().split_once(char::is_whitespace))
        .map(|(_, t)| t.trim().to_string())
        .unwrap_or_default()
}

/// A restart on the same port: a new token (written to the token file) and
/// a new runtime id; the old token is refused from then on.
fn restart(inner: &Inner) {
    let token = {
        let mut c = lock(&inner.creds);
        *c = Creds::mint();
        c.token.clone()
    };
    let path = inner.state_dir.join(format!("api-token-{}", inner.port));
    write_private_file(&path, &token)
        .unwrap_or_else(|e| panic!("fake backend: cannot rewrite the token file: {e}"));
}

fn handle(inner: &Inner, req: &Request, reused: bool) -> Outcome {
    let due =
        lock(&inner.restart_on).as_ref().is_some_and(|(m, p)| *m == req.method && path_matches(p, &req.path));
    if due {
        lock(&inner.restart_on).take();
        restart(inner);
    }
    let fault = match fault_for(inner, &req.method, &req.path) {
        Fault::CloseIfReused if reused => Fault::CloseWithoutAnswer,
        Fault::CloseIfReused => Fault::None,
        fault => fault,
    };
    answer(inner, req, fault)
}

/// What the fake answers `req` with, given the fault in force for it.
fn answer(inner: &Inner, req: &Request, fault: Fault) -> Outcome {
    if let Fault::Preceded(first, then) = fault {
        return Outcome::Preceded(first.into_bytes(), Box::new(answer(inner, req, *then)));
    }
    match fault {
        Fault::Unauthorized => return Outcome::Reply(token_invalid()),
        Fault::HostRefused => return Outcome::Reply(host_refused()),
        _ => {}
    }
    let (token, runtime_id, started_at) = {
        let c = lock(&inner.creds);
        (c.token.clone(), c.runtime_id.clone(), c.started_at.clone())
    };
    if let Some(refused) = guard(inner, &token, req) {
        return Outcome::Reply(refused);
    }
    let normal = || {
        let ctx = routes::Ctx { runtime_id: &runtime_id, started_at: &started_at, pid: std::process::id() };
        let mut st = lock(&inner.state);
        routes::dispatch(&mut st, &ctx, req)
    };
    let reply = match fault {
        Fault::None | Fault::Unauthorized | Fault::HostRefused | Fault::CloseIfReused => None,
        Fault::Hang => return Outcome::Hang,
        Fault::CloseWithoutAnswer => return Outcome::Close,
        Fault::ResetMidBody => {
            let body = format!(r#"{{"status":"ok","padding":"{}"}}"#, "y".repeat(4000)).into_bytes();
            return Outcome::Truncated(200, body.len(), body[..body.len() / 2].to_vec());
        }
        Fault::LyingContentLength => return Outcome::Truncated(200, 4096, br#"{"status":"ok"}"#.to_vec()),
        Fault::BreakOff(sent) => {
            let resp = normal();
            let sent = sent.min(resp.body.len());
            let declared = resp.body.len().max(sent + 1);
            return Outcome::Truncated(resp.status, declared, resp.body[..sent].to_vec());
        }
        Fault::Oversize => return Outcome::Oversize,
        Fault::StallMidBody => {
            let body = format!(r#"{{"status":"ok","padding":"{}"}}"#, "z".repeat(4000)).into_bytes();
            return Outcome::Stalled(body.len(), body[..body.len() / 2].to_vec());
        }
        Fault::TrickleHead => return Outcome::Trickle(true),
        Fault::BigHead(bytes) => {
            return Outcome::Reply(normal().with_header("x-big", &"b".repeat(bytes)));
        }
        Fault::StallInHead => {
            let resp = normal();
            let line = format!(
                "HTTP/1.1 {} {}\r\nserver: resmon-fake\r\n",
                resp.status,
                http::reason_phrase(resp.status)
            );
            return Outcome::Raw(resp.status, line.into_bytes(), End::Hang);
        }
        Fault::InvalidHeader => {
            let resp = normal();
            let head = http::head_bytes(resp.status, &resp.headers, resp.body.len(), true);
            // After the status line, a header whose name holds a space.
            let line_end = head.iter().position(|b| *b == b'\n').map_or(0, |at| at + 1);
            let mut bytes = head[..line_end].to_vec();
            bytes.extend_from_slice(b"bad header: 1\r\n");
            bytes.extend_from_slice(&head[line_end..]);
            bytes.extend_from_slice(&resp.body);
            return Outcome::Raw(resp.status, bytes, End::Close);
        }
        Fault::StallAfter(sent) | Fault::ResetAfter(sent) => {
            let resp = normal();
            let sent = sent.min(resp.body.len());
            let declared = resp.body.len().max(sent + 1);
            let mut bytes = http::head_bytes(resp.status, &resp.headers, declared, false);
            bytes.extend_from_slice(&resp.body[..sent]);
            let end = if matches!(fault, Fault::StallAfter(_)) { End::Hang } else { End::Reset };
            return Outcome::Raw(resp.status, bytes, end);
        }
        Fault::TrickleBody => return Outcome::Trickle(false),
        Fault::Slow(ms) => {
            thread::sleep(Duration::from_millis(ms));
            None
        }
        Fault::Html500 => Some(Response::bytes(500, "text/html; charset=utf-8", HTML_500)),
        Fault::NonJson200 => Some(Response::bytes(
            200,
            "application/json",
            "this is not JSON <html><body>upstream said no</body></html>",
        )),
        Fault::WrongShape200 => Some(Response::json(200, &json!([1, 2, 3]))),
        Fault::NullsBody200 => Some(Response::json(200, &json!({}))),
        Fault::Redirect => Some(
            Response::bytes(302, "text/plain; charset=utf-8", "Found")
                .with_header("location", &format!("http://127.0.0.1:{}/api/health", inner.decoy_port)),
        ),
        Fault::EchoToken => Some(echo_token(normal(), &bearer_of(req))),
        Fault::DropKey(key) => Some(rewrite_key(normal(), &key, false)),
        Fault::NullKey(key) => Some(rewrite_key(normal(), &key, true)),
        Fault::RenameKey(from, to) => Some(edit_top_level(normal(), |object| {
            if let Some(value) = object.shift_remove(&from) {
                object.insert(to.clone(), value);
            }
        })),
        Fault::SetKeys(keys) => Some(edit_top_level(normal(), |object| {
            for (key, value) in keys.as_object().into_iter().flatten() {
                object.insert(key.clone(), value.clone());
            }
        })),
        Fault::SetKeysIn(path, keys) => Some(edit_top_level(normal(), |object| {
            let mut top = Value::Object(std::mem::take(object));
            set_keys_in(&mut top, &path, &keys);
            if let Value::Object(edited) = top {
                *object = edited;
            }
        })),
        Fault::RepeatKey(key, value) => Some(repeat_key(normal(), &key, &value)),
        Fault::Status(code, body) => Some(Response::bytes(code, "application/json", body)),
        Fault::RedirectTo(code, path, body) => {
            normal();
            Some(
                Response::bytes(code, "application/json", body)
                    .with_header("location", &format!("http://127.0.0.1:{}{path}", inner.decoy_port)),
            )
        }
        Fault::ResetWithoutAnswer => return Outcome::Raw(0, Vec::new(), End::Reset),
        Fault::StoredThen(code, content_type, body) => {
            normal();
            Some(Response::bytes(code, &content_type, body))
        }
        Fault::Preceded(..) => unreachable!("answered above"),
    };
    if let Some(r) = reply {
        return Outcome::Reply(r);
    }
    let canned = lock(&inner.overrides)
        .iter()
        .find(|o| o.method == req.method && o.path == req.path)
        .map(|o| o.response.clone());
    Outcome::Reply(canned.unwrap_or_else(normal))
}

/// Removes `key` from every object of a JSON answer, or sets it to null;
/// other answers pass.
fn rewrite_key(resp: Response, key: &str, to_null: bool) -> Response {
    fn strip(value: &mut Value, key: &str, to_null: bool) {
        match value {
            Value::Object(object) => {
                if to_null {
                    if let Some(inner) = object.get_mut(key) {
                        *inner = Value::Null;
                    }
                } else {
                    object.shift_remove(key);
                }
                object.values_mut().for_each(|inner| strip(inner, key, to_null));
            }
            Value::Array(items) => items.iter_mut().for_each(|inner| strip(inner, key, to_null)),
            _ => (),
        }
    }
    let Ok(mut body) = serde_json::from_slice::<Value>(&resp.body) else { return resp };
    strip(&mut body, key, to_null);
    let mut out = Response::json(resp.status, &body);
    out.headers.extend(resp.headers.into_iter().filter(|(name, _)| name != "content-type"));
    out
}

/// Sets each key of `keys` in every object `path` leads to inside `value`.
fn set_keys_in(value: &mut Value, path: &str, keys: &Value) {
    let (step, rest) = path.split_once('/').unwrap_or((path, ""));
    match (step, value) {
        ("", Value::Object(object)) => {
            for (key, inner) in keys.as_object().into_iter().flatten() {
                object.insert(key.clone(), inner.clone());
            }
        }
        ("*", Value::Array(items)) => items.iter_mut().for_each(|item| set_keys_in(item, rest, keys)),
        (step, Value::Object(object)) if step != "*" => {
            if let Some(inner) = object.get_mut(step) {
                set_keys_in(inner, rest, keys);
            }
        }
        _ => (),
    }
}

/// Changes the top-level object of a JSON answer; other answers pass.
fn edit_top_level(resp: Response, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Response {
    let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(&resp.body) else { return resp };
    edit(&mut object);
    let mut out = Response::json(resp.status, &Value::Object(object));
    out.headers.extend(resp.headers.into_iter().filter(|(name, _)| name != "content-type"));
    out
}

/// Writes `key` once more at the end of a JSON object answer's text; other
/// answers pass.
fn repeat_key(resp: Response, key: &str, value: &Value) -> Response {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(&resp.body) else { return resp };
    let mut text = Value::Object(object).to_string();
    text.pop();
    let comma = if text.len() > 1 { "," } else { "" };
    text.push_str(&format!("{comma}{}:{value}}}", Value::String(key.into())));
    let mut out = Response::bytes(resp.status, "application/json", text);
    out.headers.extend(resp.headers.into_iter().filter(|(name, _)| name != "content-type"));
    out
}

/// Plants the token in the string fields of an answer.
fn echo_token(resp: Response, token: &str) -> Response {
    let sentence = format!("bad token {token}");
    let auth_line = format!("Authorization: Bearer {token}");
    let status = if resp.status < 400 { 200 } else { resp.status };
    let note = |o: &mut serde_json::Map<String, Value>| {
        o.insert("note".into(), Value::String(sentence.clone()));
    };
    let planted = match serde_json::from_slice::<Value>(&resp.body) {
        Ok(Value::Object(mut m)) => {
            m.values_mut().filter_map(Value::as_object_mut).for_each(note);
            m.insert("detail".into(), Value::String(sentence.clone()));
            m.insert("message".into(), Value::String(auth_line));
            Value::Object(m)
        }
        Ok(Value::Array(mut a)) if !a.is_empty() => {
            a.iter_mut().filter_map(Value::as_object_mut).for_each(note);
            Value::Array(a)
        }
        Ok(Value::Array(_)) => json!([{"note": sentence}]),
        _ => json!({"detail": sentence, "message": auth_line}),
    };
    let mut out = Response::json(status, &planted);
    out.headers.extend(resp.headers.into_iter().filter(|(k, _)| k != "content-type"));
    out
}

const HTML_500: &str = r#"<!DOCTYPE html>
<html><head><title>500 Internal Server Error</title></head>
<body><h1>Internal Server Error</h1>
<pre>Traceback (most recent call last):
  File "/opt/resmon/venv/lib/python3.12/site-packages/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
    result = await app(self.scope, self.receive, self.send)
  File "/opt/resmon/resmon_scripts/resmon.py", line 2211, in handler
    rows = conn.execute(sql, params).fetchall()
sqlite3.OperationalError: synthetic failure raised by the fake backend for a test
</pre></body></html>
"#;
