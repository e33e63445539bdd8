//! Runs the test fake of the resmon backend by itself, for trying the MCP
//! server by hand or from a script.
//!
//!     cargo run --example fake-backend -- --state-dir DIR
//!
//! Prints `RESMON_PORT_FILE=…` and `RESMON_STATE_DIR=…` on stdout, then
//! serves until stdin reaches end of file (close it, or press Ctrl-D). A
//! line `requests` on stdin prints what reached it so far as one JSON line.
//!
//! Ctrl-C: std cannot catch SIGINT, so the default action kills this process
//! before it can tidy up. To still remove the port and token files, on Unix
//! the example starts a small helper copy of itself in its own process group
//! (so a terminal's Ctrl-C does not reach it). The helper holds the read end
//! of a pipe whose write end only this process has; when this process dies
//! for any reason the pipe closes and the helper removes the two files, if
//! they still hold this instance's values. Elsewhere the files may remain
//! after Ctrl-C; a stale token file only ever earns `401 token_invalid`.

#[path = "../tests/support/fake_backend.rs"]
mod fake_backend;

use fake_backend::{Corpus, FakeBackend};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const USAGE: &str = "\
Usage: fake-backend [--state-dir DIR] [--realistic]

Starts a fake resmon backend on 127.0.0.1 (a free port), writes DIR/resmon.port
and DIR/api-token-<port>, and prints

  RESMON_PORT_FILE=<absolute path of the port file>
  RESMON_STATE_DIR=<absolute state directory>

on stdout. It stops, removing both files, when stdin reaches end of file.
A line `requests` on stdin prints the requests received so far (method,
path, status) as one JSON line on stdout.

Options:
  --state-dir DIR   where to write the files (created if missing);
                    default: a fresh directory under the system temp dir
  --realistic       serve the realistic slice of papers (fixtures/backend/realistic/)
                    instead of the short synthetic corpus
  -h, --help        print this help
";

/// Hidden mode of the helper process: `--cleanup-watch <port file> <port> <token file>`,
/// with the token on its stdin.
const WATCH_FLAG: &str = "--cleanup-watch";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(WATCH_FLAG) {
        cleanup_watch(&args[1..]);
        return;
    }

    let mut state_dir: Option<PathBuf> = None;
    let mut corpus = Corpus::Short;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "-h" || a == "--help" {
            print!("{USAGE}");
            return;
        } else if a == "--state-dir" {
            let Some(v) = args.get(i + 1) else {
                fail("--state-dir needs a directory");
            };
            state_dir = Some(PathBuf::from(v));
            i += 2;
        } else if a == "--realistic" {
            corpus = Corpus::Realistic;
            i += 1;
        } else if let Some(v) = a.strip_prefix("--state-dir=") {
            state_dir = Some(PathBuf::from(v));
            i += 1;
        } else {
            fail(&format!("unexpected argument {a:?}"));
        }
    }

    let dir = state_dir.unwrap_or_else(fresh_temp_dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        fail(&format!("cannot create {}: {e}", dir.display()));
    }
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);

    let fb = FakeBackend::start_with(&dir, corpus);
    let _helper = spawn_cleanup_helper(&fb);

    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "RESMON_PORT_FILE={}", fb.port_file().display());
    let _ = writeln!(out, "RESMON_STATE_DIR={}", fb.state_dir().display());
    let _ = out.flush();
    drop(out);
    eprintln!(
        "fake resmon backend listening on http://127.0.0.1:{} (token in {}); close stdin to stop",
        fb.port(),
        fb.token_file().display()
    );

    // Serve until stdin ends. A line `requests` on stdin asks what reached
    // the fake so far: one JSON line on stdout, so a script driving a
    // harness can assert that nothing was sent (a refused write).
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let mut stdin = std::io::stdin().lock();
    while matches!(stdin.read(&mut byte), Ok(n) if n > 0) {
        if byte[0] != b'\n' {
            line.push(byte[0]);
            continue;
        }
        if line.trim_ascii() == b"requests" {
            print_requests(&fb);
        }
        line.clear();
    }

    fb.stop();
    eprintln!("fake resmon backend stopped");
}

/// `{"requests": [{"method", "path", "status"}, ...]}` in arrival order, on one line.
fn print_requests(fb: &FakeBackend) {
    let list: Vec<serde_json::Value> = fb
        .requests()
        .iter()
        .map(|r| serde_json::json!({"method": r.method, "path": r.path, "status": r.status}))
        .collect();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::json!({ "requests": list }));
    let _ = out.flush();
}

fn fail(msg: &str) -> ! {
    eprintln!("fake-backend: {msg}\n\n{USAGE}");
    std::process::exit(2);
}

fn fresh_temp_dir() -> PathBuf {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    std::env::temp_dir().join(format!("resmon-fake-backend-{}-{nanos}", std::process::id()))
}

/// Starts the helper that tidies up if this process is killed (Unix only).
/// The token travels over the helper's stdin, not its command line, so it
/// does not show up in a process listing.
#[cfg(unix)]
fn spawn_cleanup_helper(fb: &FakeBackend) -> Option<std::process::Child> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().ok()?;
    let mut child = Command::new(exe)
        .arg(WATCH_FLAG)
        .arg(fb.port_file())
        .arg(fb.port().to_string())
        .arg(fb.token_file())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let stdin = child.stdin.as_mut()?;
    stdin.write_all(format!("{}\n", fb.token()).as_bytes()).ok()?;
    stdin.flush().ok()?;
    Some(child)
}

#[cfg(not(unix))]
fn spawn_cleanup_helper(_fb: &FakeBackend) -> Option<std::process::Child> {
    None
}

/// The helper: read the token line, wait for the parent's pipe to close,
/// then remove the files that still hold the parent's values.
fn cleanup_watch(args: &[String]) {
    let [port_file, port, token_file] = args else {
        return;
    };
    let mut stdin = std::io::stdin().lock();
    let mut token = String::new();
    if std::io::BufRead::read_line(&mut stdin, &mut token).is_err() {
        return;
    }
    let mut sink = [0u8; 64];
    while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    remove_if_holds(Path::new(port_file), port);
    remove_if_holds(Path::new(token_file), token.trim());
}

fn remove_if_holds(path: &Path, content: &str) {
    if std::fs::read_to_string(path).is_ok_and(|c| c == content) {
        let _ = std::fs::remove_file(path);
    }
}
