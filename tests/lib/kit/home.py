"""A scratch HOME for a program under test, and the program run inside it.

Nothing of the caller's environment reaches the program but PATH (or the
PATH given): no key or setting of a real installation can leak into a run.
Every run has stdin closed (a headless CLI reads a piped stdin into its
prompt, and one that never ends would hang it) and a time limit far above
what it needs, which only turns a hang into a failure.
"""

import os
import shutil
import subprocess
import tempfile


class ScratchHome:
    """A fresh HOME with a `project` folder in it (where programs run), and
    `env`: PATH, HOME, TERM=dumb, NO_COLOR, and `extra`. With `binary`,
    `run(*arguments)` runs that program; `command(argv)` runs any."""

    def __init__(self, prefix: str, binary: str | None = None, extra: dict | None = None,
                 within_s: float = 120, parent: str | None = None, path: str | None = None):
        self.binary = binary
        self.within_s = within_s
        self.home = tempfile.mkdtemp(prefix=prefix, dir=parent)
        self.project = os.path.join(self.home, "project")
        os.makedirs(self.project)
        self.env = {**self.person_env(path), **(extra or {})}

    def person_env(self, path: str | None = None) -> dict:
        """What a person's shell in this home holds: PATH (`path`, or the
        caller's), HOME, TERM=dumb and NO_COLOR; no program's own setting."""
        return {"PATH": path or os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home, "TERM": "dumb",
                "NO_COLOR": "1"}

    def command(self, argv: list[str], env: dict | None = None, cwd: str | None = None,
                timeout: float | None = None) -> subprocess.CompletedProcess:
        """`argv` run in the project folder with `env` (the home's by
        default); a timeout is exit -1 with what it printed so far."""
        limit = timeout or self.within_s
        try:
            return subprocess.run(argv, cwd=cwd or self.project, env=env or self.env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            return subprocess.CompletedProcess(argv, -1, out, f"timed out after {limit} s")

    def run(self, *arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return self.command([self.binary, *arguments], env=env)

    def cleanup(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.cleanup()
