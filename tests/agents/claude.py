"""What the agents stage's drivers read of Claude Code beyond the home
and run the kit gives (tests/lib/kit/claude.py): the system text and
deferred tool names of a request, the tool definitions it carries,
ToolSearch's answers; and the main every Claude Code driver shares.
Standard library and the test kit (tests/lib/kit) only.
"""

import contextlib

from kit.claude import CLAUDE_VERSION, Claude
from kit.messages_api import AnthropicStandin
from kit.reading import text_of
from kit.tally import run_driver


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
