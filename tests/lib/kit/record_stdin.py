"""Runs resmon-mcp as a harness would, and keeps a copy of every line the
harness wrote to it, so a test can see what reached the server (for
instance that Gemini CLI passed `wait_for_previous` through).

Usage: record_stdin.py LOG -- BIN [ARGS...]

stdout and stderr are the server's own; stdin is copied line by line to
the server and appended to LOG. End of input closes the server's stdin,
and SIGTERM is passed on, so the server ends the way it would unwrapped.
Standard library only. A driver registers `recorded(log, argv)` in place
of the server's command, and reads the log back with `sent(log)`.
"""

import json
import os
import signal
import subprocess
import sys


def recorded(log: str, argv: list[str]) -> list[str]:
    """The command that runs `argv` with what it is sent kept in `log`."""
    return [sys.executable, os.path.abspath(__file__), log, "--", *argv]


class UnreadableLog(RuntimeError):
    """The log cannot say what the server was sent: it is missing (the
    recorder, which makes it as it starts, never ran), cannot be read, or
    holds a line that is not a JSON-RPC message."""


def sent(log: str, method: str | None = None) -> list[dict]:
    """The messages the log holds (only those of `method`, when given),
    oldest first. Raises UnreadableLog rather than answer "nothing" for a
    log it cannot read: a driver's crash is a FAIL, an empty list may pass."""
    try:
        with open(log) as f:
            lines = f.readlines()
    except OSError as e:
        raise UnreadableLog(f"the recorder's log {log} cannot be read: {e}") from e
    messages = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise UnreadableLog(f"line {number} of the recorder's log {log} is not a JSON-RPC message: {line[:200]!r}")
        if method is None or message.get("method") == method:
            messages.append(message)
    return messages


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__.splitlines()[4], file=sys.stderr)
        return 2
    log_path, command = sys.argv[1], sys.argv[3:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE)

    def stop(*_):
        # Ended by the harness: end the server too, and do not wait for an
        # end of input that may never come.
        child.terminate()
        try:
            child.wait(5)
        except subprocess.TimeoutExpired:
            child.kill()
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)
    with open(log_path, "ab", buffering=0) as log:
        for line in sys.stdin.buffer:
            log.write(line)
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except BrokenPipeError:
                break
    try:
        child.stdin.close()
    except BrokenPipeError:
        pass
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
