"""Gemini CLI (@google/gemini-cli, pinned in package-lock.json) against
resmon-mcp, with a loopback stand-in for Gemini's API so that the CLI's own
agent loop makes every MCP call (tests/lib/kit/script.py says how the
stand-in is scripted). Standard library only. Run inside a network
namespace that holds only loopback (run.sh does).

Checks, each a PASS or FAIL line:
- `gemini mcp add` writes the registration docs/setup.md gives (and cuts
  an `-e` value at its second `=`, as it warns), and `gemini mcp list`
  reports the server Connected;
- under `trust`, the model is offered all 25 tools as `mcp_resmon_<tool>`,
  each with the `wait_for_previous` flag the CLI adds;
- health and search_corpus run through its loop, and so does a call with
  `wait_for_previous: true` (which reaches the server, and is accepted);
- an error's sentence reaches the model (not_found), and with resmon
  stopped the model reads the server's own sentence, never a schema
  complaint of the CLI's;
- headless without trust, no resmon tool is offered; with the read-only
  policy rule of docs/setup.md, exactly the 18 read tools (readOnlyHint in
  the server's tools/list) are, and none of the seven writes that
  tests/it/calls.rs names (so a write the server wrongly marks read-only
  fails here);
- in a folder that is not trusted the server is Disabled.

Usage: gemini_cli.py --gemini BIN --server BIN --fake BIN --calls calls.json
"""

import json
import os
import shlex
import subprocess
import sys

from kit.calls import write_tools
from kit.fake import FakeBackend, StoppedResmon
from kit.gemini_api import GeminiStandin
from kit.home import ScratchHome
from kit.mcp import EXPECTED_READS, EXPECTED_TOOLS, EXPECTED_WRITES, NOT_RUNNING, Surface
from kit.record_stdin import recorded, sent
from kit.script import one_per_turn, saw
from kit.tally import brief, run_driver

GEMINI_VERSION = "0.61.0"
MODEL = "gemini-2.5-flash"
# What the CLI's own SDK says when it validates an error against the success schema.
SCHEMA_COMPLAINT = "does not match the tool's output schema"
READ_ONLY_POLICY = """\
[[rule]]
mcpName = "resmon"
toolName = "*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 100
"""


class Gemini(ScratchHome):
    """A scratch HOME whose settings pick the API-key auth and turn off
    telemetry and updates, and the CLI run inside it."""

    def __init__(self, binary: str, model_url: str):
        super().__init__("resmon-harness-gemini-", binary, {
            "GEMINI_API_KEY": "stand-in-key",
            "GOOGLE_GEMINI_BASE_URL": model_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        })
        os.makedirs(os.path.join(self.home, ".gemini"))
        self.settings_path = os.path.join(self.home, ".gemini", "settings.json")
        self.write_settings({})

    def settings(self) -> dict:
        with open(self.settings_path) as f:
            return json.load(f)

    def write_settings(self, servers: dict) -> None:
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        if servers:
            settings["mcpServers"] = servers
        with open(self.settings_path, "w") as f:
            json.dump(settings, f, indent=2)

    def prompt(self, text: str) -> tuple[subprocess.CompletedProcess, str | None]:
        """A headless run; the final response text, or None when there is none."""
        run = self.run("-m", MODEL, "--output-format", "json", "-p", text)
        try:
            return run, json.loads(run.stdout).get("response")
        except (ValueError, AttributeError):
            return run, None


def output_of(seen: dict) -> str:
    """What the model got for one call: the CLI's `output` on success, its
    `error` text on failure."""
    body = seen.get("content") or {}
    return body.get("output") if "output" in body else body.get("error", json.dumps(body))


def untrusted_json(text: str):
    """The JSON inside the CLI's `<untrusted_context>` wrapping, or None."""
    if not isinstance(text, str):
        return None
    inner = text.strip().removeprefix("<untrusted_context>").removesuffix("</untrusted_context>").strip()
    try:
        return json.loads(inner)
    except ValueError:
        return None


def resmon_tools(declarations: list[dict]) -> dict[str, dict]:
    return {d["name"]: d for d in declarations if d.get("name", "").startswith("mcp_resmon_")}


def last_offer(model: GeminiStandin) -> dict[str, dict]:
    requests = model.turn_requests()
    return resmon_tools(model.offered_tools(requests[-1])) if requests else {}


def main(args, tally) -> None:
    with GeminiStandin() as model, Gemini(args.gemini, model.url) as gemini:
        try:
            exercise(gemini, model, args, tally)
        finally:
            model.report_errors(tally)


def exercise(gemini: Gemini, model: GeminiStandin, args, tally) -> None:
    if not tally.pinned("gemini --version", GEMINI_VERSION, gemini.run("--version").stdout):
        return
    wire_log = os.path.join(gemini.home, "server-stdin.jsonl")
    # The server runs behind a recorder that keeps what the CLI sent it.
    launcher = os.path.join(gemini.home, "resmon-mcp")
    with open(launcher, "w") as f:
        f.write("#!/bin/sh\nexec " + shlex.join(recorded(wire_log, [args.server])) + "\n")
    os.chmod(launcher, 0o755)

    with FakeBackend(args.fake) as fake:
        surface = Surface([args.server], fake.server_env)
        # The registration docs/setup.md gives, made by the CLI itself.
        env_flags = [flag for key, value in sorted(fake.env.items()) for flag in ("-e", f"{key}={value}")]
        add = gemini.run("mcp", "add", "-s", "user", "--trust", "resmon", *env_flags, launcher)
        entry = (gemini.settings().get("mcpServers") or {}).get("resmon") or {}
        tally.check(add.returncode == 0 and entry.get("env") == fake.env and entry.get("trust") is True
                    and entry.get("command") == launcher,
                    "gemini mcp add -s user --trust -e … writes the server with its env and trust",
                    f"exit {add.returncode}, entry {entry}, stderr {add.stderr[-500:]}")
        # An `-e` value holding `=` is cut (why docs/setup.md also gives the settings.json form).
        cut = gemini.run("mcp", "add", "-s", "user", "cut", "-e", "RESMON_PORT_FILE=/a=b/resmon.port", launcher)
        stored = ((gemini.settings().get("mcpServers") or {}).get("cut") or {}).get("env")
        tally.check(cut.returncode == 0 and stored == {"RESMON_PORT_FILE": "/a"},
                    "gemini mcp add cuts an -e value at its second = (as docs/setup.md warns)",
                    f"exit {cut.returncode}, stored {stored}")
        gemini.run("mcp", "remove", "-s", "user", "cut")
        servers = gemini.settings().get("mcpServers") or {}
        tally.check(set(servers) == {"resmon"}, "gemini mcp remove leaves only resmon", f"servers: {sorted(servers)}")
        listed = gemini.run("mcp", "list")
        # It prints the list on stderr.
        shown = listed.stdout + listed.stderr
        tally.check(listed.returncode == 0 and "resmon" in shown and "Connected" in shown,
                    "gemini mcp list: resmon Connected", f"exit {listed.returncode}: {shown[-800:]}")

        model.clear()
        script = [
            ("mcp_resmon_health", {}),
            ("mcp_resmon_search_corpus", {"query": "graph attention", "limit": 5}),
            ("mcp_resmon_health", {"wait_for_previous": True}),
            ("mcp_resmon_search_corpus", {"query": "graph attention", "limit": 2, "wait_for_previous": False}),
            ("mcp_resmon_get_execution", {"exec_id": 99999}),
        ]
        run, response = gemini.prompt(one_per_turn(script))
        offered = last_offer(model)
        tally.check(len(offered) == EXPECTED_TOOLS,
                    f"under trust the model is offered {EXPECTED_TOOLS} tools as mcp_resmon_<tool>",
                    f"offered {len(offered)}: {sorted(offered)}")
        lacking = [name for name, d in offered.items()
                   if "wait_for_previous" not in ((d.get("parametersJsonSchema") or {}).get("properties") or {})]
        tally.check(offered and not lacking, "the CLI adds wait_for_previous to every tool it offers",
                    f"without it: {lacking}")
        seen = saw(response)
        if not tally.check(run.returncode == 0 and isinstance(seen, list) and len(seen) == len(script),
                           f"the CLI's loop made all {len(script)} calls and relayed the model's answer",
                           f"exit {run.returncode}, response {brief(response)}, stderr {run.stderr[-800:]}"):
            return
        outputs = [output_of(item) for item in seen]
        # What the model must read for each of the first four calls.
        expected = [
            ("health through the loop: the model reads resmon's health answer",
             lambda answer: answer.get("status") == "ok"),
            ("search_corpus through the loop: the model reads 5 papers",
             lambda answer: len(answer.get("papers") or []) == 5),
            ("health with wait_for_previous: true succeeds", lambda answer: answer.get("status") == "ok"),
            ("search_corpus with wait_for_previous: false succeeds",
             lambda answer: len(answer.get("papers") or []) == 2),
        ]
        for output, (what, holds) in zip(outputs, expected):
            answer = untrusted_json(output)
            tally.check(isinstance(answer, dict) and holds(answer), what, brief(output))
        calls = [message["params"] for message in sent(wire_log, "tools/call")]
        flagged = [c for c in calls if (c.get("arguments") or {}).get("wait_for_previous") is True]
        tally.check(any(c.get("name") == "health" for c in flagged),
                    "wait_for_previous: true reached the server (the CLI passes it through)",
                    f"tools/call params the server received: {brief(calls)}")
        error = outputs[4]
        tally.check(isinstance(error, str) and "not_found: Execution not found" in error
                    and SCHEMA_COMPLAINT not in error,
                    "an error's own sentence reaches the model (not_found)", brief(error))
        initialize = sent(wire_log, "initialize")
        if initialize:
            print(f"# the CLI sent initialize at {initialize[0]['params'].get('protocolVersion')}", flush=True)

        # Headless, with neither trust nor a policy: no resmon tool is offered.
        entry = dict(gemini.settings()["mcpServers"]["resmon"])
        entry.pop("trust", None)
        gemini.write_settings({"resmon": entry})
        model.clear()
        run, response = gemini.prompt("CALL mcp_resmon_health {}")
        offered = last_offer(model)
        tally.check(run.returncode == 0 and model.turn_requests() and not offered,
                    "headless without trust or a policy: no resmon tool is offered",
                    f"exit {run.returncode}, offered {sorted(offered)}")

        # The read-only policy rule of docs/setup.md: exactly the reads.
        policies = os.path.join(gemini.home, ".gemini", "policies")
        os.makedirs(policies, exist_ok=True)
        with open(os.path.join(policies, "resmon.toml"), "w") as f:
            f.write(READ_ONLY_POLICY)
        model.clear()
        run, response = gemini.prompt("CALL mcp_resmon_health {}")
        offered = set(last_offer(model))
        reads = {f"mcp_resmon_{name}" for name in surface.reads}
        writes = {f"mcp_resmon_{name}" for name in write_tools(args.calls)}
        health = untrusted_json(output_of((saw(response) or [{}])[0]))
        tally.check(len(reads) == EXPECTED_READS and offered == reads and len(writes) == EXPECTED_WRITES
                    and not offered & writes and isinstance(health, dict) and health.get("status") == "ok",
                    f"the readOnlyHint policy rule offers exactly the {EXPECTED_READS} read tools, none of the "
                    f"{EXPECTED_WRITES} writes, and they run",
                    f"offered {len(offered)}: {sorted(offered)}; writes among them {sorted(offered & writes)}; "
                    f"response {brief(response)}")
        os.remove(os.path.join(policies, "resmon.toml"))

    # resmon stopped, its port file and token left behind as after a crash.
    gone = StoppedResmon(os.path.join(gemini.home, "stopped-resmon"))
    gemini.write_settings({"resmon": {"command": launcher, "env": gone.env, "trust": True}})
    model.clear()
    run, response = gemini.prompt("CALL mcp_resmon_health {}")
    seen = saw(response) or [{}]
    error = output_of(seen[0])
    tally.check(run.returncode == 0 and isinstance(error, str) and NOT_RUNNING in error
                and SCHEMA_COMPLAINT not in error and "-32602" not in error,
                "with resmon stopped, the model reads the server's own sentence",
                f"exit {run.returncode}, model got {brief(error)}")

    # A folder that is not trusted runs no stdio server.
    untrusted = dict(gemini.env)
    del untrusted["GEMINI_CLI_TRUST_WORKSPACE"]
    listed = gemini.run("mcp", "list", env=untrusted)
    shown = listed.stdout + listed.stderr
    tally.check("resmon" in shown and "Disabled" in shown and "Connected" not in shown,
                "in a folder that is not trusted the server is Disabled", f"exit {listed.returncode}: {shown[-800:]}")


if __name__ == "__main__":
    sys.exit(run_driver("gemini-cli", ("gemini", "server", "fake", "calls"), main))
