"""Claude Code (pinned in tests/agents' package-lock.json) run from a
scratch HOME against a loopback model stand-in: the home and a headless
run read back, shared by the agents stage's drivers and the install
stage's (tests/agents/claude.py keeps what only the agents stage reads).

Facts this relies on (Claude Code 2.1.332; docs/setup.md says more):
- `ANTHROPIC_BASE_URL` and any `ANTHROPIC_API_KEY` send its model requests
  to the stand-in; nothing needs a login;
- `claude -p --output-format stream-json --verbose` prints every message,
  the tool results included, one JSON object a line;
- with tool search on (its default), an MCP tool is sent to the model only
  once ToolSearch has loaded it, unless the tool's `_meta` marks it
  `anthropic/alwaysLoad`.
"""

import json
import os
import subprocess

from kit.home import ScratchHome
from kit.messages_api import AnthropicStandin
from kit.script import saw, script_line

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
