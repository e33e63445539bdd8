"""The OpenAI Agents SDK (openai-agents, pinned in requirements.txt) against
resmon-mcp through `MCPServerStdio`, with a loopback stand-in for the
Chat Completions API so that the SDK's own agent loop makes every MCP call
(standins.py says how the stand-in is scripted). Run inside a network
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

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from importlib.metadata import version as package_version

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients"))

from launch_fake import FakeBackend, Tally  # noqa: E402
from standins import FrozenResmon, OpenAIStandin, StoppedResmon, content_text, saw  # noqa: E402

AGENTS_VERSION = "0.24.0"
EXPECTED_TOOLS = 25
# The first sentence of a refused connection on the named port (src/backend/exchange/failure.rs).
NOT_RUNNING = ("backend_unavailable: resmon is not running on the port this server was given; "
               "start the resmon app, then call again.")
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


def brief(value, limit: int = 1500) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + " …"


class Bench:
    def __init__(self, server_binary: str, model: OpenAIStandin):
        self.server_binary = server_binary
        self.client = AsyncOpenAI(base_url=f"{model.url}/v1", api_key="stand-in-key", max_retries=0)

    def server(self, env: dict, **options) -> MCPServerStdio:
        return MCPServerStdio(params={"command": self.server_binary, "env": env}, name="resmon", **options)

    def agent(self, server: MCPServerStdio) -> Agent:
        return Agent(name="resmon-test", instructions="Follow the script.", mcp_servers=[server],
                     model=OpenAIChatCompletionsModel(model="stand-in", openai_client=self.client))

    async def ask(self, server: MCPServerStdio, calls: list[tuple[str, dict]]):
        """Runs the scripted calls; the model's final text, and the run result."""
        prompt = "\n".join(f"CALL {name} {json.dumps(arguments)}" for name, arguments in calls)
        result = await Runner.run(self.agent(server), prompt, max_turns=len(calls) + 2)
        return result.final_output, result


async def exercise(args, tally: Tally) -> None:
    got = package_version("openai-agents")
    if not tally.check(got == AGENTS_VERSION, f"openai-agents is {AGENTS_VERSION}",
                       f"installed {got}: the test is written for {AGENTS_VERSION}"):
        return
    with OpenAIStandin() as model:
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
                    health = content_text(seen[0])
                    try:
                        answer = json.loads(health)
                    except ValueError:
                        answer = None
                    tally.check(isinstance(answer, dict) and answer.get("status") == "ok",
                                "health through the loop: the model reads resmon's health answer", brief(seen[0]))
                    error = content_text(seen[1])
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
                            and '"status":"ok"' in content_text(seen[0]),
                            "the same hook lets health run without asking", brief(final))

        folder = tempfile.mkdtemp(prefix="resmon-harness-agents-")
        gone = StoppedResmon(os.path.join(folder, "stopped"))
        async with bench.server(gone.env) as server:
            final, _ = await bench.ask(server, [("health", {})])
            seen = saw(final) or [None]
            tally.check(NOT_RUNNING in content_text(seen[0]),
                        "with resmon stopped, the model reads the server's own sentence", brief(final))

        with FrozenResmon(os.path.join(folder, "frozen")) as frozen:
            # Out of the box: the server's 30 s bound against the SDK's 5 s.
            # The SDK abandons the call, and its next request (the tool list
            # for the next turn) waits behind the abandoned one and times out.
            async with bench.server(dict(frozen.env)) as server:
                started = time.monotonic()
                try:
                    final, _ = await bench.ask(server, [("health", {})])
                    outcome = content_text((saw(final) or [None])[0])
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
                text = content_text((saw(final) or [None])[0])
                tally.check(text.startswith("backend_unavailable:") and "before this call's 3 s deadline" in text,
                            f"frozen resmon, RESMON_MCP_TIMEOUT_MS=3000 under the SDK's 5 s: the model reads the "
                            f"server's sentence ({took:.1f} s)", brief(final))
            # Second way: the SDK's timeout raised above the server's bound.
            async with bench.server(dict(frozen.env, RESMON_MCP_TIMEOUT_MS="6000"),
                                    client_session_timeout_seconds=10) as server:
                started = time.monotonic()
                final, _ = await bench.ask(server, [("health", {})])
                took = time.monotonic() - started
                text = content_text((saw(final) or [None])[0])
                tally.check(text.startswith("backend_unavailable:") and "before this call's 6 s deadline" in text,
                            f"frozen resmon, client_session_timeout_seconds=10 over a 6 s bound: the model reads "
                            f"the server's sentence ({took:.1f} s)", brief(final))


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("server", "fake"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    tally = Tally("agents-sdk")
    started = time.monotonic()
    try:
        asyncio.run(exercise(args, tally))
    except Exception as e:  # noqa: BLE001 - a crash of the driver is a failure, never a skip
        tally.fail("driver", f"{type(e).__name__}: {e}")
    print(f"# agents-sdk: {tally.passed} passed, {tally.failed} failed in {time.monotonic() - started:.1f} s",
          flush=True)
    return 0 if tally.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
