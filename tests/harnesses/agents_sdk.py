"""The OpenAI Agents SDK (openai-agents, pinned in requirements.txt) against
resmon-mcp through `MCPServerStdio`, with a loopback stand-in for the
Chat Completions API so that the SDK's own agent loop makes every MCP call
(tests/lib/kit/script.py says how the stand-in is scripted). Run inside a network
namespace that holds only loopback (run.sh does).

Checks, each a PASS or FAIL line:
- the server is listed with 25 tools, only the variables of `env` given;
- `health` runs through the loop and the model reads resmon's answer;
- an error's sentence reaches the model (not_found), and so does the
  server's own sentence when resmon is stopped;
- `require_approval` keyed on readOnlyHint (docs/setup.md) stops a write
  before it is sent and lets a read run;
- timeouts, against a frozen resmon: with both defaults the model never
  reads the server's sentence; with the server's bound below the SDK's
  timeout, or the SDK's raised above the bound, it does (docs/setup.md).

Usage: agents_sdk.py --server BIN --fake BIN
"""

import os
import sys
import tempfile
import time
from importlib.metadata import version as package_version

from kit.openai_api import ChatStandin
from kit.fake import FakeBackend, FrozenResmon, StoppedResmon
from kit.mcp import EXPECTED_TOOLS, NOT_RUNNING
from kit.reading import json_of, text_of
from kit.script import one_per_turn, saw
from kit.tally import brief, run_driver

AGENTS_VERSION = "0.24.0"
SDK_FAILURE = "An error occurred while running the tool"

os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled  # noqa: E402
from agents.mcp import MCPServerStdio  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

set_tracing_disabled(True)


def needs_approval(_context, _agent, tool) -> bool:
    """The approval hook docs/setup.md gives: ask before anything that is not
    marked read-only. The SDK hands over the MCP SDK's own Tool, whose
    annotation is spelled `read_only_hint` there (not `readOnlyHint`)."""
    hints = getattr(tool, "annotations", None)
    return not (hints is not None and hints.read_only_hint is True)


def shown(final, index: int = 0) -> str:
    """The text the model was shown for the `index`-th call of its script."""
    seen = saw(final) or []
    return text_of(seen[index].get("content")) if index < len(seen) else ""


class Bench:
    def __init__(self, server_binary: str, model: ChatStandin):
        self.server_binary = server_binary
        self.client = AsyncOpenAI(base_url=f"{model.url}/v1", api_key="stand-in-key", max_retries=0)

    def server(self, env: dict, **options) -> MCPServerStdio:
        return MCPServerStdio(params={"command": self.server_binary, "env": env}, name="resmon", **options)

    def agent(self, server: MCPServerStdio) -> Agent:
        return Agent(name="resmon-test", instructions="Follow the script.", mcp_servers=[server],
                     model=OpenAIChatCompletionsModel(model="stand-in", openai_client=self.client))

    async def ask(self, server: MCPServerStdio, calls: list[tuple[str, dict]]):
        """Runs the scripted calls; the model's final text, and the run result."""
        result = await Runner.run(self.agent(server), one_per_turn(calls), max_turns=len(calls) + 2)
        return result.final_output, result


async def exercise(args, model: ChatStandin, folder: str, tally) -> None:
    if not tally.pinned("openai-agents", AGENTS_VERSION, package_version("openai-agents")):
        return
    bench = Bench(args.server, model)
    with FakeBackend(args.fake) as fake:
        async with bench.server(dict(fake.env)) as server:
            tools = await server.list_tools()
            names = sorted(tool.name for tool in tools)
            tally.check(len(tools) == EXPECTED_TOOLS and len(set(names)) == EXPECTED_TOOLS,
                        f"MCPServerStdio lists {EXPECTED_TOOLS} tools", f"got {len(tools)}: {names}")
            final, _ = await bench.ask(server, [("health", {}), ("get_execution", {"exec_id": 99999})])
            seen = saw(final)
            if tally.check(isinstance(seen, list) and len(seen) == 2,
                           "the SDK's loop made both calls and relayed the model's answer", brief(final)):
                answer = json_of(seen[0].get("content"))
                tally.check(isinstance(answer, dict) and answer.get("status") == "ok",
                            "health through the loop: the model reads resmon's health answer", brief(seen[0]))
                error = shown(final, 1)
                tally.check(error.startswith("not_found: Execution not found") and '"error":"not_found"' in error,
                            "an error's sentence reaches the model, then the error object",
                            brief(seen[1]))
        # Approval keyed on readOnlyHint: the write stops, the read runs.
        async with bench.server(dict(fake.env), require_approval=needs_approval) as server:
            _, result = await bench.ask(server, [("run_sweep", {"query": "graph attention",
                                                                 "sources": ["arxiv"]})])
            pending = [getattr(item, "tool_name", None) or getattr(getattr(item, "raw_item", None), "name", None)
                       for item in getattr(result, "interruptions", [])]
            tally.check(pending == ["run_sweep"],
                        "require_approval on readOnlyHint stops run_sweep for a person's answer",
                        f"interruptions: {pending}, final {brief(result.final_output)}")
            final, result = await bench.ask(server, [("health", {})])
            seen = saw(final)
            tally.check(not getattr(result, "interruptions", []) and isinstance(seen, list) and len(seen) == 1
                        and '"status":"ok"' in shown(final),
                        "the same hook lets health run without asking", brief(final))

    gone = StoppedResmon(os.path.join(folder, "stopped"))
    async with bench.server(gone.env) as server:
        final, _ = await bench.ask(server, [("health", {})])
        tally.check(NOT_RUNNING in shown(final),
                    "with resmon stopped, the model reads the server's own sentence", brief(final))

    with FrozenResmon(os.path.join(folder, "frozen")) as frozen:
        # Out of the box: the server's 30 s bound against the SDK's 5 s.
        # The SDK abandons the call, and its next request (the tool list
        # for the next turn) waits behind the abandoned one and times out.
        async with bench.server(dict(frozen.env)) as server:
            started = time.monotonic()
            try:
                final, _ = await bench.ask(server, [("health", {})])
                outcome = shown(final)
            except Exception as e:  # noqa: BLE001 - what the SDK raises is the finding
                outcome = f"the run raised {type(e).__name__}: {e}"
            took = time.monotonic() - started
            tally.check("backend_unavailable" not in outcome and (SDK_FAILURE in outcome or "timed out" in outcome),
                        f"frozen resmon, default bounds (server 30 s, SDK 5 s): the model never reads the "
                        f"server's sentence ({took:.1f} s: {brief(outcome, 120)})", brief(outcome))
        # docs/setup.md, first way: the server's bound below the SDK's.
        async with bench.server(dict(frozen.env, RESMON_MCP_TIMEOUT_MS="3000")) as server:
            started = time.monotonic()
            final, _ = await bench.ask(server, [("health", {})])
            took = time.monotonic() - started
            text = shown(final)
            tally.check(text.startswith("backend_unavailable:") and "before this call's 3 s deadline" in text,
                        f"frozen resmon, RESMON_MCP_TIMEOUT_MS=3000 under the SDK's 5 s: the model reads the "
                        f"server's sentence ({took:.1f} s)", brief(final))
        # Second way: the SDK's timeout raised above the server's bound.
        async with bench.server(dict(frozen.env, RESMON_MCP_TIMEOUT_MS="6000"),
                                client_session_timeout_seconds=10) as server:
            started = time.monotonic()
            final, _ = await bench.ask(server, [("health", {})])
            took = time.monotonic() - started
            text = shown(final)
            tally.check(text.startswith("backend_unavailable:") and "before this call's 6 s deadline" in text,
                        f"frozen resmon, client_session_timeout_seconds=10 over a 6 s bound: the model reads "
                        f"the server's sentence ({took:.1f} s)", brief(final))


async def main(args, tally) -> None:
    with ChatStandin() as model, tempfile.TemporaryDirectory(prefix="resmon-harness-agents-") as folder:
        try:
            await exercise(args, model, folder, tally)
        finally:
            model.report_errors(tally)


if __name__ == "__main__":
    sys.exit(run_driver("agents-sdk", ("server", "fake"), main))
