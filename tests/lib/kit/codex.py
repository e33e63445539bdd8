"""Codex (pinned in tests/agents' package-lock.json) run from a scratch
HOME whose config names a loopback stand-in for the Responses API as its
model provider: the home, `codex exec` of scripted turns, `codex
app-server`'s view of the server, and a tool result read back. Shared by
the agents stage's driver and the install stage's. Standard library and
the test kit only.
"""

import json
import os
import subprocess
import threading

from kit.home import ScratchHome
from kit.openai_api import ResponsesStandin
from kit.reading import text_of
from kit.script import saw, script_line
from kit.tally import brief

CODEX_VERSION = "0.171.0"


class Codex(ScratchHome):
    """A scratch HOME whose ~/.codex/config.toml names the stand-in as the
    model provider (`configure`), and the CLI run inside it."""

    def __init__(self, binary: str, model: ResponsesStandin):
        super().__init__("resmon-agents-codex-", binary, {"MOCK_API_KEY": "stand-in-key"})
        self.model = model
        os.makedirs(os.path.join(self.home, ".codex"))
        self.config_path = os.path.join(self.home, ".codex", "config.toml")

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


def output_json(content):
    """The JSON a function_call_output carries after Codex's `Output:` line, or None."""
    text = text_of(content)
    _, _, rest = text.partition("Output:\n")
    try:
        return json.loads(rest or text)
    except ValueError:
        return None
