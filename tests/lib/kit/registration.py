"""What `--check --for <harness>` prints for Claude Code and Codex, read
back as a person reads it to paste it: shared by the agents stage's
drivers and the install stage's. Standard library only.
"""

import json
import re
import shlex
import subprocess

# The prefix Claude Code and Codex give the server's tools.
PREFIX = "mcp__resmon__"


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
