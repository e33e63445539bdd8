"""Codex (@openai/codex, pinned in package-lock.json) against resmon-mcp,
registered with the `[mcp_servers.resmon]` block `--check` prints, with a
loopback stand-in for the Responses API so that Codex's own loop makes every
MCP call (tests/lib/kit/script.py says how the stand-in is scripted).
Standard library only. Run inside a network namespace that holds only loopback
(run.sh does).

Checks, each a PASS or FAIL line:
- `codex app-server` (JSON-RPC on stdio, `mcpServerStatus/list`) lists the
  server's 25 tools;
- `codex exec` with the stand-in provider runs two reads through its loop;
- with the printed block and `approval_policy = "never"`, each of the 18
  reads runs, and each of the 7 writes is refused with none reaching resmon
  (the fake's request log). Codex asks before a tool only when the block
  says so (`default_tools_approval_mode = "writes"`) or the tool's
  annotations call it destructive or open-world, so this check fails for
  the other writes while the printed block lacks that key.

And a NOTE line, not a check: whether Codex shows the server's MCP prompts
(with the server wrapped in tests/lib/kit/record_stdin.py: does app-server
or exec ever ask prompts/list, does mcpServerStatus/list carry prompts,
what does exec do with a typed `/mcp__resmon__paper …`).

Usage: codex.py --codex BIN --server BIN --fake BIN --calls calls.json
"""

import json
import os
import sys

from kit.calls import first_call_per_tool
from kit.codex import CODEX_VERSION, Codex, output_json
from kit.fake import FakeBackend, changes
from kit.mcp import EXPECTED_READS, EXPECTED_TOOLS, EXPECTED_WRITES, Surface
from kit.openai_api import ResponsesStandin
from kit.reading import text_of
from kit.record_stdin import UnreadableLog, recorded, sent
from kit.registration import Registration, check_output
from kit.tally import Tally, brief, one_line, run_driver

# What Codex hands the model for a call that needed approval under approval_policy "never" (0.171.0).
REFUSED = "requires approval"


def main(args, tally) -> None:
    with ResponsesStandin() as model, Codex(args.codex, model) as codex:
        try:
            exercise(codex, model, args, tally)
        finally:
            model.report_errors(tally)


def exercise(codex: Codex, model: ResponsesStandin, args, tally: Tally) -> None:
    if not tally.pinned("codex --version", CODEX_VERSION, codex.run("--version").stdout, "last"):
        return
    with FakeBackend(args.fake) as fake:
        env = fake.server_env
        surface = Surface([args.server], env)
        registration = Registration(check_output(args.server, env, "codex").stdout)
        block = registration.codex_block
        if not tally.check(block is not None and block.startswith("[mcp_servers.resmon]"),
                           "--check prints a [mcp_servers.resmon] block", brief(registration.text)):
            return
        asks = "default_tools_approval_mode" in block
        print("# parsed from --check: the Codex block, "
              + ("with default_tools_approval_mode" if asks else "without default_tools_approval_mode")
              + ": " + " | ".join(line for line in block.splitlines() if line.strip()), flush=True)
        codex.configure(block)

        server, why = codex.app_server_tools()
        tools = server.get("tools") or {}
        tally.check(len(tools) == EXPECTED_TOOLS and set(tools) == set(surface.names),
                    f"codex app-server: mcpServerStatus/list shows resmon with its {EXPECTED_TOOLS} tools",
                    f"{len(tools)} tools: {sorted(tools)}; {why}")

        run, seen = codex.exec([[("mcp__resmon__health", {})], [("mcp__resmon__list_routines", {})]])
        health = output_json((seen or [{}])[0].get("content")) if seen else None
        routines = output_json(seen[1].get("content")) if seen and len(seen) > 1 else None
        tally.check(run.returncode == 0 and isinstance(health, dict) and health.get("status") == "ok"
                    and isinstance(routines, dict) and isinstance(routines.get("routines"), list),
                    "codex exec: health and list_routines run through its loop, the model reads their answers",
                    f"exit {run.returncode}, saw {brief(seen)}, stderr {run.stderr[-600:]}")

        calls = first_call_per_tool(args.calls, surface.runtime_id)
        run, seen = codex.exec([[("mcp__resmon__" + name, calls[name]) for name in surface.reads]])
        refused = [s.get("name") for s in seen or [] if REFUSED in text_of(s.get("content"))]
        unread = [s.get("name") for s in seen or [] if output_json(s.get("content")) is None]
        tally.check(run.returncode == 0 and seen is not None and len(seen) == EXPECTED_READS
                    and not refused and not unread,
                    f"codex exec, approval policy never: the {EXPECTED_READS} reads run unasked",
                    f"exit {run.returncode}; {len(seen or [])} answered; refused {refused}; no JSON from {unread}; "
                    f"stderr {run.stderr[-600:]}")

        before = len(fake.requests())
        run, seen = codex.exec([[("mcp__resmon__" + name, calls[name]) for name in surface.writes]])
        after = fake.requests()[before:]
        ran = [s.get("name") for s in seen or [] if REFUSED not in text_of(s.get("content"))]
        tally.check(run.returncode == 0 and seen is not None and len(seen) == EXPECTED_WRITES and not ran,
                    f"codex exec, approval policy never, the printed block: each of the {EXPECTED_WRITES} writes "
                    "is refused",
                    f"ran unasked: {ran}" + ("" if asks else " (the printed block has no "
                                             "default_tools_approval_mode = \"writes\")")
                    + f"; exit {run.returncode}; {len(seen or [])} answered")
        tally.check(not changes(after), f"no write reached resmon (the fake logged {len(after)} requests, "
                    "none that changes anything)", f"it received {changes(after)}")
        if seen:
            print(f"# a refused write reads: {one_line(text_of(seen[0].get('content')))}", flush=True)

        prompts_note(codex, model, args.server, fake.env, calls)


def prompts_note(codex: Codex, model: ResponsesStandin, server: str, env: dict, calls: dict) -> None:
    """What Codex makes of the server's MCP prompts, said in one NOTE line."""
    log = os.path.join(codex.home, "server-stdin.jsonl")
    command, *arguments = recorded(log, [server])
    codex.configure("[mcp_servers.resmon]\n"
                    f"command = {json.dumps(command)}\n"
                    f"args = {json.dumps(arguments)}\n"
                    "[mcp_servers.resmon.env]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in env.items()))
    entry, why = codex.app_server_tools()
    line = f"/mcp__resmon__paper {calls['explain_match']['doc_id']}"
    model.clear()
    run = codex.run("exec", "--skip-git-repo-check", "--json", line)
    typed = any(item.get("role") == "user" and text_of(item.get("content")) == line
                for body in model.turn_requests() for item in body.get("input") or [])
    # This probe only notes what Codex does; a server Codex never started
    # leaves no log, which the note then says rather than failing the driver.
    try:
        methods = list(dict.fromkeys(message.get("method") for message in sent(log)))
    except UnreadableLog as e:
        methods = [f"nothing readable ({e})"]
    asked = [method for method in methods if str(method).startswith("prompts/")]
    keys = sorted(key for key in entry if key in ("tools", "resources", "resourceTemplates") or "rompt" in key)
    print(f"NOTE codex {CODEX_VERSION} {'asks for' if asked else 'shows no'} MCP prompts: app-server and exec sent "
          f"the server {methods} ({'including ' + ', '.join(asked) if asked else 'never prompts/list or prompts/get'}"
          f"); mcpServerStatus/list's resmon entry carries {keys or why}; `codex exec \"{line}\"` "
          f"{'sent the model the line as typed' if typed else 'did not send the model the line as typed'} "
          f"(exit {run.returncode})", flush=True)


if __name__ == "__main__":
    sys.exit(run_driver("codex", ("codex", "server", "fake", "calls"), main))
