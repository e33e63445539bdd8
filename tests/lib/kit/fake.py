"""The fake resmon (`cargo build --example fake-backend`, which kit.sh's
`kit_build` makes) started and stopped for a test, and two resmons that are
not there to answer: one gone (a crash left its files behind), one frozen.

The fake prints `RESMON_PORT_FILE=…` and `RESMON_STATE_DIR=…` and serves
until its stdin closes; those two variables are all a client passes to the
server under test. A line `requests` on its stdin is answered with one JSON
line, the requests that reached it so far.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

# How long the fake may take to print its two lines, and to stop after its
# stdin closes. Both are far above what it needs (milliseconds); they only
# turn a hang into a clear failure.
START_WITHIN_S = 30
STOP_WITHIN_S = 15


class FakeBackend:
    """`with FakeBackend(binary) as fake:` gives `fake.env` (the two
    variables). With `state_dir` the fake keeps its files there (a person's
    default state folder, say); without, in a folder removed at the end."""

    def __init__(self, binary: str, state_dir: str | None = None):
        self.binary = binary
        self.state = state_dir
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}

    def __enter__(self) -> "FakeBackend":
        self.dir = tempfile.mkdtemp(prefix="resmon-fake-")
        state = self.state or os.path.join(self.dir, "state")
        with open(os.path.join(self.dir, "fake.stderr"), "wb") as err:
            self.proc = subprocess.Popen([self.binary, "--state-dir", state], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=err)
        lines: list[str] = []

        def read_two() -> None:
            for _ in range(2):
                line = self.proc.stdout.readline()
                if not line:
                    return
                lines.append(line.decode().rstrip("\n"))

        reader = threading.Thread(target=read_two, daemon=True)
        reader.start()
        reader.join(START_WITHIN_S)
        for line in lines:
            key, _, value = line.partition("=")
            self.env[key] = value
        if set(self.env) != {"RESMON_PORT_FILE", "RESMON_STATE_DIR"}:
            self.__exit__(None, None, None)
            raise RuntimeError(f"the fake backend did not print its two environment lines; got {lines!r}")
        return self

    @property
    def server_env(self) -> dict[str, str]:
        """The server's whole environment, as a harness starts it: PATH and the two variables."""
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **self.env}

    def requests(self) -> list[dict]:
        """What reached the fake so far, oldest first."""
        self.proc.stdin.write(b"requests\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["requests"]

    def __exit__(self, *exc) -> None:
        proc = self.proc
        if proc is not None:
            try:
                proc.stdin.close()  # the fake's stop signal
                proc.wait(STOP_WITHIN_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                print(f"warning: the fake backend did not stop within {STOP_WITHIN_S} s of stdin EOF; killed",
                      file=sys.stderr)
            proc.stdout.close()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


def changes(requests: list[dict]) -> list[str]:
    """The requests of the fake's log that could change something in resmon."""
    return [f"{r['method']} {r['path']}" for r in requests if r["method"] not in ("GET", "HEAD", "OPTIONS")]


def _leave_files(folder: str, port: int) -> dict[str, str]:
    """A port file and a token file as resmon writes them, naming `port`;
    the two variables that name them, as a harness passes them."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "resmon.port"), "w") as f:
        f.write(str(port))
    token = os.path.join(folder, f"api-token-{port}")
    with open(token, "w") as f:
        f.write("stand-in-token-" + "x" * 40)
    os.chmod(token, 0o600)
    return {"RESMON_PORT_FILE": os.path.join(folder, "resmon.port"), "RESMON_STATE_DIR": folder}


class StoppedResmon:
    """What a crashed resmon leaves: its files, naming a port where nothing
    listens. `env` names them as a harness would."""

    def __init__(self, folder: str):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.env = _leave_files(folder, port)


class FrozenResmon:
    """A resmon that accepts connections and never answers (a hung app):
    every request waits until the server's own bound gives up on it."""

    def __init__(self, folder: str):
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.env = _leave_files(folder, self.listener.getsockname()[1])
        self.held: list[socket.socket] = []
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self):
        while self.running:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(connection)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.running = False
        self.listener.close()
        for connection in self.held:
            connection.close()
