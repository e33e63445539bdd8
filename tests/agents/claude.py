"""Claude Code run from a scratch HOME against a loopback model stand-in:
shared by claude_code.py and toolsearch.py. Standard library only.

Facts this relies on (Claude Code 2.1.332; docs/setup.md and
../shared research notes say more):
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
import shutil
import subprocess
import tempfile

from model_standins import AnthropicStandin, saw, script_line

CLAUDE_VERSION = "2.1.332"
# Far above the 1-3 s a headless run takes here; only turns a hang into a failure.
RUN_WITHIN_S = 90


class Claude:
    """One scratch HOME and project folder, and the CLI run inside them."""

    def __init__(self, binary: str, model: AnthropicStandin):
        self.binary = binary
        self.model = model
        self.home = tempfile.mkdtemp(prefix="resmon-agents-claude-")
        self.project = os.path.join(self.home, "project")
        os.makedirs(self.project)
        # Nothing of the caller's environment but PATH: no key or setting of
        # a real installation can leak into the run.
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TERM": "dumb",
            "NO_COLOR": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "stand-in-key",
        }
        self.settings_path = os.path.join(self.home, ".claude", "settings.json")

    def run(self, *arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
        command = [self.binary, *arguments]
        try:
            return subprocess.run(command, cwd=self.project, env=env or self.env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=RUN_WITHIN_S)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return subprocess.CompletedProcess(command, -1, out, f"timed out after {RUN_WITHIN_S} s")

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
        """A headless run of the scripted turns (model_standins.py)."""
        self.model.clear()
        run = self.run("-p", "--output-format", "stream-json", "--verbose", *options, "--", script_line(turns),
                       env=env)
        return Conversation(run, self.model.scripted_requests())

    def cleanup(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


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
    parts = []
    system = request.get("system")
    if isinstance(system, str):
        parts.append(system)
    for block in system if isinstance(system, list) else []:
        if isinstance(block, dict):
            parts.append(block.get("text", ""))
    for message in request.get("messages") or []:
        if message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict):
                    parts.append(block.get("text", ""))
    return "\n".join(parts)


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


def result_text(content) -> str:
    """A tool_result's content as the model reads it: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content
                         if isinstance(block, dict) and block.get("type") == "text")
    return ""


def references(content) -> list[str]:
    """The tool names of a ToolSearch result's tool_reference blocks, in order."""
    if not isinstance(content, list):
        return []
    return [block.get("tool_name") for block in content
            if isinstance(block, dict) and block.get("type") == "tool_reference"]


def run_driver(label: str, exercise, sessions: int = 2) -> int:
    """The main of a Claude Code driver: parses --claude, --server, --fake and
    --calls, makes `sessions` scratch Claude Code homes against one model
    stand-in, runs `exercise(*homes, model, args, tally)`, counts a crash or
    a stand-in failure as a failure (never a skip), cleans up, and prints the
    driver's closing line. Returns the exit status."""
    import argparse
    import time

    from common import Tally

    parser = argparse.ArgumentParser()
    for name in ("claude", "server", "fake", "calls"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    tally = Tally(label)
    started = time.monotonic()
    with AnthropicStandin() as model:
        homes = [Claude(args.claude, model) for _ in range(sessions)]
        try:
            exercise(*homes, model, args, tally)
        except Exception as e:  # noqa: BLE001 - a crash of the driver is a failure, never a skip
            tally.fail("driver", f"{type(e).__name__}: {e}")
        finally:
            for home in homes:
                home.cleanup()
        if model.errors():
            tally.fail("the model stand-in answered every request", f"it failed: {model.errors()[:3]}")
    print(f"# {label}: {tally.passed} passed, {tally.failed} failed in {time.monotonic() - started:.1f} s",
          flush=True)
    return 0 if tally.failed == 0 else 1
