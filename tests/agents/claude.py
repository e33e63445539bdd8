"""Claude Code run from a scratch HOME against a loopback model stand-in:
shared by the agents stage's drivers and the install stage's. Standard library
and the test kit (tests/lib/kit) only.

Facts this relies on (Claude Code 2.1.332; docs/setup.md says more):
- `ANTHROPIC_BASE_URL` and any `ANTHROPIC_API_KEY` send its model requests
  to the stand-in; nothing needs a login;
- `claude -p --output-format stream-json --verbose` prints every message,
  the tool results included, one JSON object a line;
- with tool search on (its default), an MCP tool is sent to the model only
  once ToolSearch has loaded it, unless the tool's `_meta` marks it
  `anthropic/alwaysLoad`.
"""

import contextlib
import json
import os
import subprocess

from kit.home import ScratchHome
from kit.messages_api import AnthropicStandin
from kit.reading import text_of
from kit.script import saw, script_line
from kit.tally import run_driver

CLAUDE_VERSION = "2.1.332"
# Far above the 1-3 s a headless run takes here; only turns a hang into a failure.
RUN_WITHIN_S = 90


class Claude(ScratchHome):
    """A scratch HOME whose CLI sends its model requests to the stand-in,
    with telemetry, other traffic and updates off, and the CLI run inside it."""

    def __init__(self, binary: str, model: AnthropicStandin):
        super().__init__("resmon-agents-claude-", binary, {
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "stand-in-key",
        }, within_s=RUN_WITHIN_S)
        self.model = model
        self.settings_path = os.path.join(self.home, ".claude", "settings.json")

    def merge_settings(self, fragment: dict) -> None:
        """Merges a settings fragment into ~/.claude/settings.json the way a
        person would: lists are joined, objects merged, other values replaced."""
        os.makedirs(os.path.dirname(self.settings_path), exist_ok=True)
        try:
            with open(self.settings_path) as f:
                settings = json.load(f)
        except (OSError, ValueError):
            settings = {}
        with open(self.settings_path, "w") as f:
            json.dump(_merged(settings, fragment), f, indent=2)

    def server_entry(self) -> dict:
        """resmon's entry in ~/.claude.json (user scope), or {}."""
        try:
            with open(os.path.join(self.home, ".claude.json")) as f:
                config = json.load(f)
        except (OSError, ValueError):
            return {}
        return (config.get("mcpServers") or {}).get("resmon") or {}

    def prompt(self, turns, *options: str, env: dict | None = None) -> "Conversation":
        """A headless run of the scripted turns (tests/lib/kit/script.py)."""
        return self.type_line(script_line(turns), *options, env=env)

    def type_line(self, line: str, *options: str, env: dict | None = None) -> "Conversation":
        """A headless run of one line typed (a message, or a slash command)."""
        self.model.clear()
        run = self.run("-p", "--output-format", "stream-json", "--verbose", *options, "--", line, env=env)
        return Conversation(run, self.model.scripted_requests())


def _merged(base, extra):
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for key, value in extra.items():
            out[key] = _merged(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(extra, list):
        return base + [item for item in extra if item not in base]
    return extra


class Conversation:
    """One headless run: its exit, the stream-json events, what the stand-in
    model was shown for each call (`seen`), and the requests it received."""

    def __init__(self, run: subprocess.CompletedProcess, requests: list[dict]):
        self.run = run
        self.requests = requests
        self.events = []
        for line in run.stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass
        results = [e for e in self.events if e.get("type") == "result"]
        self.result = results[-1].get("result") if results else None
        self.seen = saw(self.result)
        # Claude Code's own record of each MCP result (structuredContent included), by tool_use id.
        self.raw_results = {}
        for event in self.events:
            if event.get("type") != "user":
                continue
            record = event.get("tool_use_result")
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.raw_results[block.get("tool_use_id")] = record

    def ok(self, calls: int) -> bool:
        return self.run.returncode == 0 and isinstance(self.seen, list) and len(self.seen) == calls

    def why(self) -> str:
        return (f"exit {self.run.returncode}, result {str(self.result)[:800]!r}, "
                f"stderr {self.run.stderr[-800:]!r}, stdout tail {self.run.stdout[-800:]!r}")

    def first_request(self) -> dict:
        return self.requests[0] if self.requests else {}

    def tool_uses(self) -> list[dict]:
        uses = []
        for event in self.events:
            if event.get("type") == "assistant":
                for block in (event.get("message") or {}).get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        uses.append(block)
        return uses


def system_text(request: dict) -> str:
    """Every system text of a Messages request: the `system` field and any
    system-role message (2.1.332 puts the environment, the deferred tool
    names and the servers' instructions in the latter)."""
    parts = [text_of(request.get("system"))]
    parts += [text_of(m.get("content")) for m in request.get("messages") or [] if m.get("role") == "system"]
    return "\n".join(part for part in parts if part)


def deferred_names(request: dict) -> list[str]:
    """The tool names a request lists as deferred (loadable with ToolSearch):
    the lines after the note that names ToolSearch's `select:` form, up to
    the first blank line."""
    lines = system_text(request).splitlines()
    for i, line in enumerate(lines):
        if "deferred tools" in line and "ToolSearch" in line:
            names = []
            for name in lines[i + 1:]:
                if not name.strip():
                    break
                names.append(name.strip())
            return names
    return []


def sent_tools(request: dict) -> dict[str, dict]:
    """The resmon tools whose definitions a request carries, by name."""
    return {t["name"]: t for t in request.get("tools") or [] if t.get("name", "").startswith("mcp__resmon__")}


def references(content) -> list[str]:
    """The tool names of a ToolSearch result's tool_reference blocks, in order."""
    if not isinstance(content, list):
        return []
    return [block.get("tool_name") for block in content
            if isinstance(block, dict) and block.get("type") == "tool_reference"]


def claude_driver(label: str, exercise, homes: int = 2, options=("claude", "server", "fake", "calls"),
                  repeated=()) -> int:
    """The main of a Claude Code driver: `homes` scratch Claude Code homes
    against one model stand-in, handed to `exercise(*homes, model, args,
    tally)` once the CLI is the pinned version; a stand-in that failed to
    answer is a failure too."""

    def with_claude(args, tally) -> None:
        with AnthropicStandin() as model, contextlib.ExitStack() as stack:
            claudes = [stack.enter_context(Claude(args.claude, model)) for _ in range(homes)]
            if not tally.pinned("claude --version", CLAUDE_VERSION, claudes[0].run("--version").stdout,
                                "first"):
                return
            try:
                exercise(*claudes, model, args, tally)
            finally:
                model.report_errors(tally)

    return run_driver(label, options, with_claude, repeated)
