//! A child process driven over pipes one line at a time, with as little
//! work on the benchmark's side as possible: one write per request, one
//! buffered line read per answer.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};

pub struct Piped {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

/// A command with an empty environment except PATH, HOME and `env`, the way
/// SDK clients start a server.
pub fn command(program: &Path, env: &[(String, String)], home: &Path) -> Command {
    let mut command = Command::new(program);
    command.env_clear();
    command.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    command.env("HOME", home);
    command.envs(env.iter().map(|(key, value)| (key, value)));
    command
}

impl Piped {
    pub fn spawn(command: &mut Command) -> Piped {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::with_capacity(256 * 1024, child.stdout.take().expect("stdout piped"));
        Piped { child, stdin, stdout, line: String::with_capacity(64 * 1024) }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line, which must already end in a newline.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush()).expect("write to the child");
    }

    /// Reads the next line (with its newline).
    pub fn recv(&mut self) -> &str {
        self.line.clear();
        let n = self.stdout.read_line(&mut self.line).expect("read from the child");
        assert!(n > 0, "the child closed its stdout");
        &self.line
    }

    pub fn round_trip(&mut self, line: &str) -> &str {
        self.send(line);
        self.recv()
    }

    /// Closes stdin (end of input) and waits for the exit.
    pub fn finish(mut self) -> ExitStatus {
        self.stdin.take();
        self.child.wait().expect("wait for the child")
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            self.stdin.take();
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
