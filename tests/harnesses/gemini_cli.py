"""Gemini CLI (@google/gemini-cli, pinned in package-lock.json) against
resmon-mcp, with a loopback stand-in for Gemini's API so that the CLI's own
agent loop makes every MCP call (standins.py says how the stand-in is
scripted). Standard library only. Run inside a network namespace that holds
only loopback (run.sh does).

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
  policy rule of docs/setup.md, exactly the 18 read tools are;
- in a folder that is not trusted the server is Disabled.

Usage: gemini_cli.py --gemini BIN --server BIN --fake BIN
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients"))

from launch_fake import FakeBackend, Tally  # noqa: E402
from standins import GeminiStandin, StoppedResmon, saw  # noqa: E402

GEMINI_VERSION = "0.61.0"
MODEL = "gemini-2.5-flash"
EXPECTED_TOOLS = 25
WRITE_TOOLS = {"run_sweep", "create_routine", "create_watch_profile", "run_routine",
               "activate_routine", "deactivate_routine", "update_settings"}
# The first sentence of a refused connection on the named port (src/backend/exchange/failure.rs).
NOT_RUNNING = ("backend_unavailable: resmon is not running on the port this server was given; "
               "start the resmon app, then call again.")
# What the CLI's own SDK says when it validates an error against the success schema.
SCHEMA_COMPLAINT = "does not match the tool's output schema"
# Far above the 2-3 s a headless run takes here; only turns a hang into a failure.
RUN_WITHIN_S = 120
READ_ONLY_POLICY = """\
[[rule]]
mcpName = "resmon"
toolName = "*"
toolAnnotations = { readOnlyHint = true }
decision = "allow"
priority = 100
"""


class Gemini:
    """One scratch HOME and project folder, and the CLI run inside them."""

    def __init__(self, binary: str, model_url: str):
        self.binary = binary
        self.home = tempfile.mkdtemp(prefix="resmon-harness-gemini-")
        self.project = os.path.join(self.home, "project")
        os.makedirs(os.path.join(self.home, ".gemini"))
        os.makedirs(self.project)
        self.settings_path = os.path.join(self.home, ".gemini", "settings.json")
        # Nothing of the caller's environment but PATH: no key, no setting of
        # a real installation can leak into the run.
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TERM": "dumb",
            "NO_COLOR": "1",
            "GEMINI_API_KEY": "stand-in-key",
            "GOOGLE_GEMINI_BASE_URL": model_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
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

    def run(self, *arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
        command = [self.binary, *arguments]
        try:
            # stdin closed: a headless run reads a piped stdin into the prompt,
            # and one that never ends would hang it.
            return subprocess.run(command, cwd=self.project, env=env or self.env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=RUN_WITHIN_S)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(command, -1, e.stdout or "", f"timed out after {RUN_WITHIN_S} s")

    def prompt(self, text: str) -> tuple[subprocess.CompletedProcess, str | None]:
        """A headless run; the final response text, or None when there is none."""
        run = self.run("-m", MODEL, "--output-format", "json", "-p", text)
        try:
            return run, json.loads(run.stdout).get("response")
        except (ValueError, AttributeError):
            return run, None

    def cleanup(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)


def output_of(response: dict) -> str:
    """What the model got for one call: the CLI's `output` on success, its
    `error` text on failure."""
    body = response.get("response") or {}
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
    requests = model.generate_requests()
    return resmon_tools(model.offered_tools(requests[-1])) if requests else {}


def brief(value, limit: int = 1500) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + " …"


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("gemini", "server", "fake"):
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    tally = Tally("gemini-cli")
    started = time.monotonic()
    with GeminiStandin() as model:
        gemini = Gemini(args.gemini, model.url)
        try:
            exercise(gemini, model, args, tally)
        except Exception as e:  # noqa: BLE001 - a crash of the driver is a failure, never a skip
            tally.fail("driver", f"{type(e).__name__}: {e}")
        finally:
            gemini.cleanup()
    print(f"# gemini-cli: {tally.passed} passed, {tally.failed} failed in {time.monotonic() - started:.1f} s",
          flush=True)
    return 0 if tally.failed == 0 else 1


def exercise(gemini: Gemini, model: GeminiStandin, args, tally: Tally) -> None:
    version = gemini.run("--version").stdout.strip()
    if not tally.check(version == GEMINI_VERSION, f"gemini --version is {GEMINI_VERSION}",
                       f"got {version!r}: the test is written for {GEMINI_VERSION}"):
        return
    wire_log = os.path.join(gemini.home, "server-stdin.jsonl")
    # The server runs behind a recorder that keeps what the CLI sent it.
    launcher = os.path.join(gemini.home, "resmon-mcp")
    with open(launcher, "w") as f:
        f.write(f"#!/bin/sh\nexec {sys.executable} {HERE}/record_stdin.py {wire_log} -- {args.server}\n")
    os.chmod(launcher, 0o755)

    with FakeBackend(args.fake) as fake:
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
        run, response = gemini.prompt("\n".join(f"CALL {name} {json.dumps(a)}" for name, a in script))
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
        health = untrusted_json(outputs[0])
        tally.check(isinstance(health, dict) and health.get("status") == "ok",
                    "health through the loop: the model reads resmon's health answer", brief(outputs[0]))
        search = untrusted_json(outputs[1])
        tally.check(isinstance(search, dict) and len(search.get("papers") or []) == 5,
                    "search_corpus through the loop: the model reads 5 papers", brief(outputs[1]))
        pinned = untrusted_json(outputs[2])
        tally.check(isinstance(pinned, dict) and pinned.get("status") == "ok",
                    "health with wait_for_previous: true succeeds", brief(outputs[2]))
        paged = untrusted_json(outputs[3])
        tally.check(isinstance(paged, dict) and len(paged.get("papers") or []) == 2,
                    "search_corpus with wait_for_previous: false succeeds", brief(outputs[3]))
        calls = []
        with open(wire_log) as f:
            for line in f:
                message = json.loads(line)
                if message.get("method") == "tools/call":
                    calls.append(message["params"])
        flagged = [c for c in calls if (c.get("arguments") or {}).get("wait_for_previous") is True]
        tally.check(any(c.get("name") == "health" for c in flagged),
                    "wait_for_previous: true reached the server (the CLI passes it through)",
                    f"tools/call params the server received: {brief(calls)}")
        error = outputs[4]
        tally.check(isinstance(error, str) and "not_found: Execution not found" in error
                    and SCHEMA_COMPLAINT not in error,
                    "an error's own sentence reaches the model (not_found)", brief(error))
        initialize = []
        with open(wire_log) as f:
            initialize = [json.loads(line) for line in f if '"initialize"' in line]
        if initialize:
            print(f"# the CLI sent initialize at {initialize[0]['params'].get('protocolVersion')}", flush=True)

        # Headless, with neither trust nor a policy: no resmon tool is offered.
        entry = dict(gemini.settings()["mcpServers"]["resmon"])
        entry.pop("trust", None)
        gemini.write_settings({"resmon": entry})
        model.clear()
        run, response = gemini.prompt("CALL mcp_resmon_health {}")
        offered = last_offer(model)
        tally.check(run.returncode == 0 and model.generate_requests() and not offered,
                    "headless without trust or a policy: no resmon tool is offered",
                    f"exit {run.returncode}, offered {sorted(offered)}")

        # The read-only policy rule of docs/setup.md: exactly the 18 reads.
        policies = os.path.join(gemini.home, ".gemini", "policies")
        os.makedirs(policies, exist_ok=True)
        with open(os.path.join(policies, "resmon.toml"), "w") as f:
            f.write(READ_ONLY_POLICY)
        model.clear()
        run, response = gemini.prompt("CALL mcp_resmon_health {}")
        offered = set(last_offer(model))
        writes = {f"mcp_resmon_{name}" for name in WRITE_TOOLS}
        health = untrusted_json(output_of((saw(response) or [{}])[0]))
        tally.check(len(offered) == EXPECTED_TOOLS - len(WRITE_TOOLS) and not offered & writes
                    and isinstance(health, dict) and health.get("status") == "ok",
                    "the readOnlyHint policy rule offers exactly the 18 read tools, and they run",
                    f"offered {len(offered)}: {sorted(offered)}; response {brief(response)}")
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
    sys.exit(main())
