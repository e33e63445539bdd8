"""Codex (@openai/codex, pinned in package-lock.json) against resmon-mcp,
registered with the `[mcp_servers.resmon]` block `--check` prints, with a
loopback stand-in for the Responses API so that Codex's own loop makes every
MCP call (model_standins.py says how the stand-in is scripted). Standard
library only. Run inside a network namespace that holds only loopback
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
(with the server wrapped in tests/harnesses/record_stdin.py: does app-server
or exec ever ask prompts/list, does mcpServerStatus/list carry prompts,
what does exec do with a typed `/mcp__resmon__paper …`).

Usage: codex.py --codex BIN --server BIN --fake BIN --calls calls.json
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
from common import (EXPECTED_READS, EXPECTED_TOOLS, EXPECTED_WRITES, LoggedFake, Registration, Surface, Tally,
                    brief, changes, check_output, first_call_per_tool, one_line)
from model_standins import ResponsesStandin, saw, script_line

CODEX_VERSION = "0.171.0"
RUN_WITHIN_S = 120
# What Codex hands the model for a call that needed approval under approval_policy "never" (0.171.0).
REFUSED = "requires approval"


class Codex:
    def __init__(self, binary: str, model: ResponsesStandin):
        self.binary = binary
        self.model = model
        self.home = tempfile.mkdtemp(prefix="resmon-agents-codex-")
        self.project = os.path.join(self.home, "project")
        os.makedirs(self.project)
        os.makedirs(os.path.join(self.home, ".codex"))
        self.config_path = os.path.join(self.home, ".codex", "config.toml")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TERM": "dumb",
            "NO_COLOR": "1",
            "MOCK_API_KEY": "stand-in-key",
        }

    def configure(self, block: str) -> None:
        """~/.codex/config.toml: the stand-in provider, the approval policy
        and analytics off, then the printed block as it is (top-level keys
        come before tables)."""
        provider = (
            'model = "gpt-5"\n'
            'model_provider = "mock"\n'
            'approval_policy = "never"\n'
            "\n"
            "[model_providers.mock]\n"
            'name = "mock"\n'
            f'base_url = "{self.model.url}/v1"\n'
            'env_key = "MOCK_API_KEY"\n'
            'wire_api = "responses"\n'
            "\n"
            # Without this, each run spends ~5 s at its end trying to send
            # usage metrics out of the loopback-only namespace.
            "[analytics]\n"
            "enabled = false\n"
        )
        with open(self.config_path, "w") as f:
            f.write(provider + "\n" + block)

    def run(self, *arguments: str) -> subprocess.CompletedProcess:
        command = [self.binary, *arguments]
        try:
            return subprocess.run(command, cwd=self.project, env=self.env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=RUN_WITHIN_S)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return subprocess.CompletedProcess(command, -1, out, f"timed out after {RUN_WITHIN_S} s")

    def exec(self, turns) -> tuple[subprocess.CompletedProcess, list | None]:
        """A `codex exec` of the scripted turns; the model's SAW list."""
        self.model.clear()
        run = self.run("exec", "--skip-git-repo-check", "--json", script_line(turns))
        final = None
        for line in run.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            item = event.get("item") or {}
            if event.get("type") == "item.completed" and item.get("type") == "agent_message":
                final = item.get("text")
        return run, saw(final)

    def app_server_tools(self) -> tuple[dict, str]:
        """`mcpServerStatus/list` through `codex app-server`: resmon's entry, and what went wrong."""
        proc = subprocess.Popen([self.binary, "app-server"], cwd=self.project, env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        timer = threading.Timer(60, proc.kill)
        timer.start()

        def send(message: dict) -> None:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            proc.stdin.flush()

        def answer(want: int) -> dict:
            for line in proc.stdout:
                message = json.loads(line)
                if message.get("id") == want:
                    return message
            return {"error": "app-server ended without answering"}

        try:
            send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "resmon-ci", "version": "1"}}})
            answer(1)
            send({"method": "initialized"})
            send({"id": 2, "method": "mcpServerStatus/list", "params": {}})
            reply = answer(2)
        finally:
            timer.cancel()
            proc.stdin.close()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for server in (reply.get("result") or {}).get("data") or []:
            if server.get("name") == "resmon":
                return server, ""
        return {}, brief(reply)

    def cleanup(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


def output_json(content):
    """The JSON a function_call_output carries after Codex's `Output:` line, or None."""
    text = content if isinstance(content, str) else "\n".join(
        part.get("text", "") for part in content or [] if isinstance(part, dict))
    _, _, rest = text.partition("Output:\n")
    try:
        return json.loads(rest or text)
    except ValueError:
        return None


def output_text(content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("codex", "server", "fake", "calls"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    tally = Tally("codex")
    started = time.monotonic()
    with ResponsesStandin() as model:
        codex = Codex(args.codex, model)
        try:
            exercise(codex, model, args, tally)
        except Exception as e:  # noqa: BLE001 - a crash of the driver is a failure, never a skip
            tally.fail("driver", f"{type(e).__name__}: {e}")
        finally:
            codex.cleanup()
        if model.errors():
            tally.fail("the model stand-in answered every request", f"it failed: {model.errors()[:3]}")
    print(f"# codex: {tally.passed} passed, {tally.failed} failed in {time.monotonic() - started:.1f} s", flush=True)
    return 0 if tally.failed == 0 else 1


def exercise(codex: Codex, model: ResponsesStandin, args, tally: Tally) -> None:
    version = codex.run("--version").stdout.strip()
    if not tally.check(version.endswith(CODEX_VERSION), f"codex --version is {CODEX_VERSION}",
                       f"got {version!r}: the test is written for {CODEX_VERSION}"):
        return
    with LoggedFake(args.fake) as fake:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **fake.env}
        surface = Surface(args.server, env)
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
        refused = [s.get("name") for s in seen or [] if REFUSED in output_text(s.get("content"))]
        unread = [s.get("name") for s in seen or [] if output_json(s.get("content")) is None]
        tally.check(run.returncode == 0 and seen is not None and len(seen) == EXPECTED_READS
                    and not refused and not unread,
                    f"codex exec, approval policy never: the {EXPECTED_READS} reads run unasked",
                    f"exit {run.returncode}; {len(seen or [])} answered; refused {refused}; no JSON from {unread}; "
                    f"stderr {run.stderr[-600:]}")

        before = len(fake.requests())
        run, seen = codex.exec([[("mcp__resmon__" + name, calls[name]) for name in surface.writes]])
        after = fake.requests()[before:]
        ran = [s.get("name") for s in seen or [] if REFUSED not in output_text(s.get("content"))]
        tally.check(run.returncode == 0 and seen is not None and len(seen) == EXPECTED_WRITES and not ran,
                    f"codex exec, approval policy never, the printed block: each of the {EXPECTED_WRITES} writes "
                    "is refused",
                    f"ran unasked: {ran}" + ("" if asks else " (the printed block has no "
                                             "default_tools_approval_mode = \"writes\")")
                    + f"; exit {run.returncode}; {len(seen or [])} answered")
        tally.check(not changes(after), f"no write reached resmon (the fake logged {len(after)} requests, "
                    "none that changes anything)", f"it received {changes(after)}")
        if seen:
            print(f"# a refused write reads: {one_line(output_text(seen[0].get('content')))}", flush=True)

        prompts_note(codex, model, args.server, fake.env, calls)


def prompts_note(codex: Codex, model: ResponsesStandin, server: str, env: dict, calls: dict) -> None:
    """What Codex makes of the server's MCP prompts, said in one NOTE line."""
    log = os.path.join(codex.home, "server-stdin.jsonl")
    recorder = os.path.join(HERE, "..", "harnesses", "record_stdin.py")
    codex.configure("[mcp_servers.resmon]\n"
                    f"command = {json.dumps(sys.executable)}\n"
                    f"args = {json.dumps([recorder, log, '--', server])}\n"
                    "[mcp_servers.resmon.env]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in env.items()))
    entry, why = codex.app_server_tools()
    line = f"/mcp__resmon__paper {calls['explain_match']['doc_id']}"
    model.clear()
    run = codex.run("exec", "--skip-git-repo-check", "--json", line)
    typed = any(item.get("role") == "user" and output_text(item.get("content")) == line
                for body in model.response_requests() for item in body.get("input") or [])
    try:
        with open(log) as f:
            methods = list(dict.fromkeys(json.loads(text).get("method") for text in f if text.strip()))
    except (OSError, ValueError) as e:
        methods = [f"unreadable log: {e}"]
    asked = [method for method in methods if str(method).startswith("prompts/")]
    keys = sorted(key for key in entry if key in ("tools", "resources", "resourceTemplates") or "rompt" in key)
    print(f"NOTE codex {CODEX_VERSION} {'asks for' if asked else 'shows no'} MCP prompts: app-server and exec sent "
          f"the server {methods} ({'including ' + ', '.join(asked) if asked else 'never prompts/list or prompts/get'}"
          f"); mcpServerStatus/list's resmon entry carries {keys or why}; `codex exec \"{line}\"` "
          f"{'sent the model the line as typed' if typed else 'did not send the model the line as typed'} "
          f"(exit {run.returncode})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
