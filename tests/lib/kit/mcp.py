"""An MCP stdio session with the server (handshake era), for the facts a
test derives from the server rather than hard-codes, and for a launcher
(npx, uvx, cargo install) tried from nothing; and the server's surface read
once through it."""

import json
import re
import subprocess
import tempfile
import threading
import time

EXPECTED_TOOLS = 25
EXPECTED_READS = 18
EXPECTED_WRITES = 7
# The tools/list `_meta` key by which a tool asks to be loaded up front.
ALWAYS_LOAD = "anthropic/alwaysLoad"
# The first sentence of a refused connection on the named port (src/backend/exchange/failure.rs).
NOT_RUNNING = ("backend_unavailable: resmon is not running on the port this server was given; "
               "start the resmon app, then call again.")
# An error result opens with the sentence `<code>: <message>`.
ERROR_SENTENCE = re.compile(r"^[a-z_]+: \S")
# How long a session with a built server may last; far above what it takes.
SESSION_WITHIN_S = 20


class McpSession:
    """`argv` started with `env` (in `cwd`), initialized, and spoken to one
    JSON-RPC line each way; killed when it outlives `within_s`. `started`
    is when it was started, `instructions` what it answered initialize with."""

    def __init__(self, argv: list[str], env: dict, cwd: str | None = None, within_s: float = SESSION_WITHIN_S):
        self.started = time.monotonic()
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=env, cwd=cwd)
        self.timer = threading.Timer(within_s, self.proc.kill)
        self.timer.start()
        self.next_id = 0
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "resmon-test-kit", "version": "1"}})
        self.instructions = init.get("instructions") or ""
        self.notify("notifications/initialized")

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        message = self.answer(method, params)
        if "error" in message:
            raise RuntimeError(f"{method} failed: {message['error']}")
        return message["result"]

    def answer(self, method: str, params: dict) -> dict:
        """The server's whole answer to one request: a `result` or an `error`."""
        self.next_id += 1
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                           "params": params}) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                self.stderr.seek(0)
                raise RuntimeError(f"the server ended before answering {method}: "
                                   f"{self.stderr.read().decode(errors='replace')[-800:]}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def tools(self) -> list[dict]:
        tools, cursor = [], None
        while True:
            result = self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools += result.get("tools") or []
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    def close(self) -> int:
        """Ends the session by closing stdin; the server's exit status."""
        self.timer.cancel()
        self.proc.stdin.close()
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self.stderr.close()


class Surface:
    """The server's tools/list, instructions and runtime id (from health),
    read once: `names`, the `reads` (readOnlyHint true), the `writes`, and
    the tools `always` loaded up front. `within_s` is the session's hang
    guard (a launcher that fetches the server first wants more)."""

    def __init__(self, argv: list[str], env: dict, cwd: str | None = None, within_s: float = SESSION_WITHIN_S):
        session = McpSession(argv, env, cwd, within_s)
        try:
            self.instructions = session.instructions
            self.tools = session.tools()
            health = session.request("tools/call", {"name": "health", "arguments": {}})
            identity = (health.get("structuredContent") or {}).get("identity") or {}
            self.runtime_id = identity.get("runtime_id")
        finally:
            session.close()
        self.names = [tool["name"] for tool in self.tools]
        self.reads = [t["name"] for t in self.tools if (t.get("annotations") or {}).get("readOnlyHint") is True]
        self.writes = [name for name in self.names if name not in self.reads]
        self.always = [t["name"] for t in self.tools if (t.get("_meta") or {}).get(ALWAYS_LOAD) is True]
