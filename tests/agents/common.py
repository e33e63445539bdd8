"""What the Claude Code and Codex drivers of this stage share: the fake
backend with its request log, a small stdio MCP client for the server's own
tools/list, `--check`'s printed registrations read back, and the list of
valid calls. Standard library only.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients"))

from launch_fake import FakeBackend, Tally, load_calls, with_runtime_id  # noqa: E402,F401

EXPECTED_TOOLS = 25
EXPECTED_READS = 18
EXPECTED_WRITES = 7
PREFIX = "mcp__resmon__"
ALWAYS_LOAD = "anthropic/alwaysLoad"
# The first sentence of a refused connection on the named port (src/backend/exchange/failure.rs).
NOT_RUNNING = ("backend_unavailable: resmon is not running on the port this server was given; "
               "start the resmon app, then call again.")
# An error result opens with the sentence `<code>: <message>`.
ERROR_SENTENCE = re.compile(r"^[a-z_]+: \S")


def brief(value, limit: int = 1500) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + " …"


def one_line(text: str, limit: int = 300) -> str:
    """Text for a `#` line of the report: whitespace collapsed, cut at `limit`."""
    return brief(" ".join(str(text).split()), limit)


def compact(value) -> str:
    """JSON as serde_json writes it by default: no spaces, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class LoggedFake(FakeBackend):
    """The runnable fake; `requests()` asks it what reached it so far (a
    line `requests` on its stdin, answered by one JSON line on stdout)."""

    def requests(self) -> list[dict]:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(b"requests\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        return json.loads(line)["requests"]


class McpSession:
    """The server driven directly over stdio (handshake era), for the facts a
    test derives from it rather than hard-codes: its instructions and its
    tools/list as the server sends it."""

    def __init__(self, server: str, env: dict, within_s: float = 20):
        self.proc = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.timer = threading.Timer(within_s, self.proc.kill)
        self.timer.start()
        self.next_id = 0
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "resmon-agents-stage", "version": "1"}})
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
                raise RuntimeError(f"the server ended before answering {method}")
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

    def close(self) -> None:
        self.timer.cancel()
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Surface:
    """The server's tools/list and instructions, read once."""

    def __init__(self, server: str, env: dict):
        session = McpSession(server, env)
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


def check_output(server: str, env: dict, harness: str) -> subprocess.CompletedProcess:
    """`--check --for <harness>`: the report, ending with that harness's
    registration (`--check` alone names the command for each one)."""
    return subprocess.run([server, "--check", "--for", harness], env=env, capture_output=True, text=True,
                          timeout=60)


def sections(text: str) -> dict[str, list[str]]:
    """`--check`'s registration part, by heading: a line at the left margin
    that ends with `:` after a blank line opens a section, which runs to the
    next such heading."""
    out: dict[str, list[str]] = {}
    current = None
    previous_blank = True
    for line in text.splitlines():
        heading = (previous_blank and line and not line[0].isspace() and line.rstrip().endswith(":")
                   and line[0] not in "[{\"" and " = " not in line)
        if heading:
            current = line.rstrip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
        previous_blank = not line.strip()
    return {key: trim(lines) for key, lines in out.items()}


def trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def json_objects(text: str) -> list:
    """Every JSON object that starts at the beginning of a line of `text`."""
    decoder = json.JSONDecoder()
    found = []
    position = 0
    while True:
        match = re.compile(r"^[ \t]*\{", re.M).search(text, position)
        if not match:
            return found
        try:
            value, end = decoder.raw_decode(text, match.end() - 1)
            found.append(value)
            position = end
        except ValueError:
            position = match.start() + 1


def allow_names(value) -> list[str] | None:
    """The `permissions.allow` list of a settings fragment, or None."""
    if isinstance(value, dict):
        allow = (value.get("permissions") or {}).get("allow")
        if isinstance(allow, list) and all(isinstance(item, str) for item in allow):
            return allow
    return None


class Registration:
    """What `--check` printed for Claude Code and Codex, read back:

    - `claude_line`: the first line that starts with `claude mcp add`;
    - `allow_fragment`: the first JSON object printed anywhere whose
      `permissions.allow` names `mcp__resmon__` tools (the Claude Code
      settings fragment; opencode's block says `permission`, and no other
      harness's uses those names), or None when there is none; and
      `allow_where`, the heading it was printed under;
    - `codex_block`: the TOML of the section whose heading starts with
      "Codex", from its first `[mcp_servers.` line on, prose left out.
    """

    def __init__(self, text: str):
        self.text = text
        self.sections = sections(text)
        self.claude_line = None
        self.allow_fragment = None
        self.allow_where = None
        self.codex_block = None
        for line in text.splitlines():
            if line.strip().startswith("claude mcp add "):
                self.claude_line = line.strip()
                break
        for heading, lines in self.sections.items():
            for value in json_objects("\n".join(lines)):
                names = allow_names(value)
                if self.allow_fragment is None and names and all(n.startswith(PREFIX) for n in names):
                    self.allow_fragment, self.allow_where = value, heading
            if heading.startswith("Codex") and self.codex_block is None:
                toml = []
                started = False
                for line in lines:
                    started = started or line.startswith("[mcp_servers.")
                    if started and (not line.strip() or line.startswith("[") or line.startswith("#")
                                    or re.match(r"^[A-Za-z0-9_\-\"]+\s*=", line)):
                        toml.append(line)
                self.codex_block = "\n".join(trim(toml)) + "\n" if toml else None

    def claude_argv(self, claude: str) -> list[str]:
        words = shlex.split(self.claude_line)
        return [claude, *words[1:]]


def first_call_per_tool(calls_path: str, runtime_id: str) -> dict[str, dict]:
    """tests/it/calls.rs's first valid arguments for each tool (dumped to
    JSON by tests/clients/dump_calls.rs), with the fake's runtime id put in."""
    calls, placeholder = load_calls(calls_path)
    first: dict[str, dict] = {}
    for call in calls:
        first.setdefault(call["tool"], with_runtime_id(call["arguments"], placeholder, runtime_id))
    return first


def changes(requests: list[dict]) -> list[str]:
    """The requests of a log that could change something in resmon."""
    return [f"{r['method']} {r['path']}" for r in requests if r["method"] not in ("GET", "HEAD", "OPTIONS")]
