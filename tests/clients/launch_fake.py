"""Starts the runnable fake resmon backend for one client test and stops it.

Shared by py_client.py and inspector_cli.py (standard library only). The
fake prints `RESMON_PORT_FILE=…` and `RESMON_STATE_DIR=…` and serves until
its stdin closes; those two lines are the only environment a client passes
to the server under test.
"""

import json
import os
import shutil
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
    """`with FakeBackend(binary) as fake:` gives `fake.env` (the two variables)."""

    def __init__(self, binary: str):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="resmon-clients-")
        self.proc: subprocess.Popen | None = None
        self.env: dict[str, str] = {}
        self.stderr_path = os.path.join(self.dir, "fake.stderr")

    def __enter__(self) -> "FakeBackend":
        state = os.path.join(self.dir, "state")
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [self.binary, "--state-dir", state],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        lines: list[str] = []

        def read_two() -> None:
            assert self.proc is not None and self.proc.stdout is not None
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
            raise RuntimeError(f"fake backend did not print its two environment lines; got {lines!r}")
        return self

    def __exit__(self, *exc) -> None:
        proc = self.proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()  # the fake's stop signal
                proc.wait(STOP_WITHIN_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                print(f"warning: the fake backend did not stop within {STOP_WITHIN_S} s of stdin EOF; killed",
                      file=sys.stderr)
            if proc.stdout is not None:
                proc.stdout.close()
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


def load_calls(path: str) -> tuple[list[dict], str]:
    """The valid calls (from tests/it/calls.rs via dump_calls.rs) with the placeholder left in."""
    with open(path) as f:
        data = json.load(f)
    return data["calls"], data["runtime_id_placeholder"]


def with_runtime_id(value, placeholder: str, runtime_id: str):
    """A copy of `value` with every string equal to the placeholder replaced by the real id."""
    if isinstance(value, dict):
        return {k: with_runtime_id(v, placeholder, runtime_id) for k, v in value.items()}
    if isinstance(value, list):
        return [with_runtime_id(v, placeholder, runtime_id) for v in value]
    if value == placeholder:
        return runtime_id
    return value


# Calls the server must refuse before sending anything, with the argument it
# must name: (tool, arguments, detail.argument). Every client test uses these.
INVALID_CALLS = [
    ("search_corpus", {"query": "graph attention", "limit": 0}, "limit"),
    ("get_routine", {"routine_id": "seven"}, "routine_id"),
    ("get_analytics", {"view": "nonsense"}, "view"),
    ("health", {"expected_runtime_id": "not-a-uuid"}, "expected_runtime_id"),
    ("run_routine", {}, "routine_id"),
    ("get_execution", {"exec_id": 115, "surplus": True}, "surplus"),
]


class Tally:
    """PASS/FAIL lines on stdout; run.sh counts them."""

    def __init__(self, label: str):
        self.label = label
        self.passed = 0
        self.failed = 0

    def ok(self, what: str) -> None:
        self.passed += 1
        print(f"PASS {self.label} {what}", flush=True)

    def fail(self, what: str, why: str) -> None:
        self.failed += 1
        why = " ".join(str(why).split())
        if len(why) > 2000:
            why = why[:2000] + " …"
        print(f"FAIL {self.label} {what}: {why}", flush=True)

    def check(self, condition: bool, what: str, why: str) -> bool:
        if condition:
            self.ok(what)
        else:
            self.fail(what, why)
        return condition
