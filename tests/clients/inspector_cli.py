"""The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0, pinned in
package.json / package-lock.json) against resmon-mcp. Standard library only.

Against one fake backend (the calls run in tests/it/calls.rs's order, so each
write succeeds on the state the previous ones left):
- `--method tools/list --strict` exits 0 (no error-severity portability
  problem), in the default legacy era and with `--protocol-era auto`
  (2026-07-28); the warnings it prints are counted and shown;
- one `tools/call --format json` per tool (its first call in calls.rs)
  exits 0 with isError false and structuredContent present;
- calls that must fail exit 5 with isError true and the expected error code.

The server gets the fake's two variables only through `-e KEY=VALUE`.
Usage: inspector_cli.py --inspector BIN --server BIN --fake BIN --calls calls.json
"""

import json
import sys

from kit.calls import load_calls, with_runtime_id
from kit.fake import FakeBackend
from kit.home import ScratchHome
from kit.mcp import EXPECTED_TOOLS
from kit.tally import run_driver

INSPECTOR_VERSION = "2.12.0"
# (tool, arguments, exit code, error code in the answer). The inspector turns
# a string where the schema says integer into null before sending (seen with
# 2.12.0, despite --tool-args-json promising verbatim values), so these use
# values it passes on unchanged.
EXPECTED_ERRORS = [
    ("get_analytics", {"view": "nonsense"}, 5, "invalid_argument"),
    ("search_corpus", {"query": "graph attention", "limit": 0}, 5, "invalid_argument"),
    ("get_routine", {"routine_id": 999}, 5, "not_found"),
]


def exercise(args, tally) -> None:
    # The inspector keeps a catalog and client config under HOME; give it a
    # throwaway one so CI leaves nothing behind.
    with ScratchHome("resmon-clients-inspector-", args.inspector) as home:
        if not tally.pinned("mcp-inspector --cli --version", INSPECTOR_VERSION, home.run("--cli", "--version").stdout):
            return
        calls, placeholder = load_calls(args.calls)
        with FakeBackend(args.fake) as fake:
            env_flags = [flag for key, value in sorted(fake.env.items()) for flag in ("-e", f"{key}={value}")]

            def inspector(*options: str):
                return home.run("--cli", *env_flags, *options, "--", args.server)

            for era in ("legacy", "auto"):
                what = f"tools/list --strict --protocol-era {era}"
                run = inspector("--method", "tools/list", "--strict", "--protocol-era", era)
                try:
                    tools = json.loads(run.stdout)["tools"]
                except (ValueError, KeyError, TypeError):
                    tools = None
                warnings = sum(1 for line in run.stderr.splitlines() if line.startswith("Warning:"))
                errors = sum(1 for line in run.stderr.splitlines() if line.startswith("Error:"))
                print(f"# {what}: exit {run.returncode}, {warnings} warning(s), {errors} error(s) from --strict",
                      flush=True)
                if run.returncode == 0 and tools is not None and len(tools) == EXPECTED_TOOLS:
                    tally.ok(what)
                else:
                    tally.fail(what, f"exit {run.returncode}, {len(tools) if tools is not None else 'no'} tools; "
                                     f"stderr: {strip_warnings(run.stderr)}")
                if era == "legacy" and warnings:
                    kinds = {}
                    for line in run.stderr.splitlines():
                        if line.strip().startswith("Issue:"):
                            issue = line.strip()[len("Issue:"):].strip().split(" — ")[0].split(",")[0]
                            kinds[issue] = kinds.get(issue, 0) + 1
                    for issue, count in sorted(kinds.items(), key=lambda kv: -kv[1]):
                        print(f"#   {count} x {issue}", flush=True)

            first_call = {}
            for call in calls:
                first_call.setdefault(call["tool"], call["arguments"])
            runtime_id = None
            for tool, arguments in first_call.items():
                if runtime_id is None and placeholder in json.dumps(arguments):
                    tally.fail(f"tools/call {tool}", "no runtime id known yet (health must come first)")
                    continue
                arguments = with_runtime_id(arguments, placeholder, runtime_id or "")
                what = f"tools/call {tool} {json.dumps(arguments, separators=(',', ':'))}"
                run = inspector("--format", "json", "--method", "tools/call", "--tool-name", tool,
                                "--tool-args-json", json.dumps(arguments))
                result = parse_result(run.stdout)
                if run.returncode != 0 or result is None or result.get("isError") is not False \
                        or not isinstance(result.get("structuredContent"), dict):
                    tally.fail(what, f"exit {run.returncode}; stdout: {run.stdout[:500]}; stderr: {run.stderr[:500]}")
                    continue
                if tool == "health":
                    runtime_id = result["structuredContent"].get("identity", {}).get("runtime_id")
                tally.ok(what)

            for tool, arguments, want_exit, want_code in EXPECTED_ERRORS:
                what = f"tools/call {tool} {json.dumps(arguments, separators=(',', ':'))} fails with {want_code}"
                run = inspector("--format", "json", "--method", "tools/call", "--tool-name", tool,
                                "--tool-args-json", json.dumps(arguments))
                result = parse_result(run.stdout) or {}
                # An error opens with the sentence `<code>: <message>`; the
                # error object is the second block's JSON.
                try:
                    sentence = result["content"][0]["text"]
                    payload = json.loads(result["content"][1]["text"])
                except (KeyError, IndexError, TypeError, ValueError):
                    sentence, payload = "", {}
                tally.check(
                    run.returncode == want_exit and result.get("isError") is True and payload.get("error") == want_code
                    and sentence == f"{want_code}: {payload.get('message')}",
                    what,
                    f"exit {run.returncode} (want {want_exit}); stdout: {run.stdout[:500]}; stderr: {run.stderr[:500]}",
                )

            called = set(first_call)
            tally.check(len(called) == EXPECTED_TOOLS, f"one call for each of the {EXPECTED_TOOLS} tools",
                        f"calls.rs covers {len(called)} tools: {sorted(called)}")


def parse_result(stdout: str):
    try:
        value = json.loads(stdout)
    except ValueError:
        return None
    return value.get("result") if isinstance(value, dict) else None


def strip_warnings(stderr: str) -> str:
    """--strict's stderr without its warning blocks (they are counted separately)."""
    keep, skipping = [], False
    for line in stderr.splitlines():
        if line.startswith("Warning:"):
            skipping = True
        elif not line.strip():
            skipping = False
        elif not skipping:
            keep.append(line)
    return " | ".join(keep)[:1500]


if __name__ == "__main__":
    sys.exit(run_driver("inspector", ("inspector", "server", "fake", "calls"), exercise))
