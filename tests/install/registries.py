"""The loopback stand-ins for the public registries, and the scratch homes a
person's computer is played by; shared by the install stage's drivers.
Standard library only. Run inside a network namespace that holds only
loopback (run.sh does): nothing here may reach further than 127.0.0.1.

- `Verdaccio`: a real npm registry (verdaccio, pinned in package-lock.json)
  on 127.0.0.1 with no uplink, so that it serves only what was published to
  it; `publish(tgz)` goes through `npm publish`, as a release would.
- `PyPIServer`: a real package index (pypiserver, pinned in
  requirements.txt) on 127.0.0.1; `publish(wheels)` uploads with `uv publish`.
- `Home`: a fresh HOME with empty caches, whose npm and uv configuration
  name the loopback registries (so the commands typed are exactly the
  README's), the default resmon state folder served by the fake resmon, and
  a PATH that holds Node.js, npm, npx, uv and uvx but no Rust: no `cargo`.
"""

import os
import shutil
import socket
import subprocess
import time
import urllib.request

from kit.fake import FakeBackend
from kit.home import ScratchHome

START_WITHIN_S = 30
# Far above what a launcher takes from nothing; only turns a hang into a failure.
RUN_WITHIN_S = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, proc: subprocess.Popen, log: str) -> None:
    deadline = time.monotonic() + START_WITHIN_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode} before answering: {tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {START_WITHIN_S} s: {tail(log)}")


def tail(path: str, limit: int = 1500) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()[-limit:]
    except OSError:
        return ""


class Server:
    """A registry process on a free loopback port, stopped on exit."""

    def __init__(self, work: str, name: str):
        self.dir = os.path.join(work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = os.path.join(self.dir, "server.log")
        self.proc: subprocess.Popen | None = None

    def start(self, argv: list[str], probe: str) -> None:
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        wait_for(probe, self.proc, self.log)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Verdaccio(Server):
    def __init__(self, work: str, verdaccio: str):
        super().__init__(work, "verdaccio")
        config = os.path.join(self.dir, "config.yaml")
        with open(config, "w") as f:
            f.write("storage: ./storage\n"
                    "uplinks: {}\n"
                    "packages:\n"
                    "  '**':\n"
                    "    access: $all\n"
                    "    publish: $all\n"
                    f"listen: 127.0.0.1:{self.port}\n"
                    "log: { type: stdout, format: pretty, level: warn }\n")
        # The publisher's own npm configuration: any token does for a
        # registry whose rule lets anyone publish.
        self.publisher = os.path.join(self.dir, "publisher")
        os.makedirs(self.publisher)
        with open(os.path.join(self.publisher, ".npmrc"), "w") as f:
            f.write(f"registry={self.url}\n//127.0.0.1:{self.port}/:_authToken=install-stage\n")
        self.start([verdaccio, "--config", config], self.url + "-/ping")

    def publish(self, tarball: str) -> subprocess.CompletedProcess:
        env = {"PATH": os.environ["PATH"], "HOME": self.publisher}
        return subprocess.run(["npm", "publish", tarball, "--registry", self.url], env=env, cwd=self.publisher,
                              capture_output=True, text=True, timeout=120)


class PyPIServer(Server):
    def __init__(self, work: str, pypi_server: str):
        super().__init__(work, "pypiserver")
        self.packages = os.path.join(self.dir, "packages")
        os.makedirs(self.packages)
        # -a . -P .: no authentication, so that an upload needs no account.
        self.start([pypi_server, "run", "-i", "127.0.0.1", "-p", str(self.port), "-a", ".", "-P", ".",
                    self.packages], self.url + "simple/")
        self.index = self.url + "simple/"

    def publish(self, uv: str, wheels: list[str]) -> subprocess.CompletedProcess:
        env = {"PATH": os.environ["PATH"], "HOME": self.dir}
        return subprocess.run([uv, "publish", "--publish-url", self.url, "--username", "install-stage",
                               "--password", "install-stage", *wheels], env=env, cwd=self.dir,
                              capture_output=True, text=True, timeout=120)


class Home:
    """A person's account: a fresh HOME (or a harness's own scratch HOME,
    `scratch`) whose npm and uv point at the loopback registries and whose
    PATH has no Rust, and whose default resmon state folder
    (~/.local/state/resmon) the fake resmon serves while `with` is open."""

    def __init__(self, work: str, label: str, bin_dir: str, npm_registry: str, pypi_index: str, fake: str,
                 scratch: ScratchHome | None = None):
        scratch = scratch or ScratchHome(f"home-{label}-", parent=work)
        self.home, self.project = scratch.home, scratch.project
        self.env = scratch.person_env(path_without_rust(bin_dir))
        scratch.env.update(self.env)
        self.scratch = scratch
        with open(os.path.join(self.home, ".npmrc"), "w") as f:
            f.write(f"registry={npm_registry}\n")
        uv_config = os.path.join(self.home, ".config", "uv")
        os.makedirs(uv_config)
        with open(os.path.join(uv_config, "uv.toml"), "w") as f:
            f.write(f'[[index]]\nurl = "{pypi_index}"\ndefault = true\n')
        self.fake = FakeBackend(fake, os.path.join(self.home, ".local", "state", "resmon"))

    def run(self, argv: list[str], timeout: float = RUN_WITHIN_S,
            cwd: str | None = None) -> tuple[subprocess.CompletedProcess, float]:
        """`argv` run as the person types it; what it did, and how long it took."""
        started = time.monotonic()
        done = self.scratch.command(argv, env=self.env, cwd=cwd, timeout=timeout)
        return done, time.monotonic() - started

    def __enter__(self) -> "Home":
        self.fake.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.fake.__exit__()


def path_without_rust(bin_dir: str) -> str:
    """The PATH of a person without Rust: the folder of links to node, npm,
    npx, uv and uvx, and the system's own folders."""
    return f"{bin_dir}:/usr/bin:/bin"


def link_tools(bin_dir: str, tools: dict[str, str]) -> None:
    os.makedirs(bin_dir, exist_ok=True)
    for name, target in tools.items():
        link = os.path.join(bin_dir, name)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(target, link)
