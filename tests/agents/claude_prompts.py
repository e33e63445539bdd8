"""Claude Code (pinned, as in claude_code.py) running resmon-mcp's MCP
prompts as slash commands, with the loopback model stand-in. The server is
registered wrapped in tests/lib/kit/record_stdin.py, so the test reads
every request Claude Code sent it. Expected names and texts come from the
binary's own prompts/list and prompts/get, never from a list kept here.
Standard library only; run inside a loopback-only network namespace.

Checks, each a PASS or FAIL line:
1. the stream-json `system`/`init` event's slash_commands name
   /mcp__resmon__<prompt> for exactly the prompts the server lists, in a
   full session and in a read-only one (RESMON_MCP_READ_ONLY=1 in the
   registration: no `watch`, and typing it sends the server no prompts/get);
2. `/mcp__resmon__paper <doc_id>`: the server got one prompts/get (paper,
   {"doc_id": "<doc_id>"}); the model's first request carries the text the
   server returns for it as the person's message, and no other prompt's
   name, nor any prompt's title or description (Claude Code shows its model
   no list of prompts); nothing had reached resmon by then (the fake's
   request log, read by the stand-in as that request arrived); the
   stand-in then loads (ToolSearch select:) the deferred tools the text
   names and calls them, and the calls go through (their tool_result
   blocks in stream-json, their requests in the fake's log);
3. `/mcp__resmon__recent 14`: arguments by position, the text for days "14";
4. `/mcp__resmon__paper 0`: Claude Code shows the server's -32602 message
   (it names doc_id) and sends the model nothing.

Usage: claude_prompts.py --claude BIN --server BIN --fake BIN --calls calls.json
"""

import json
import os
import re
import sys
import threading

from claude import claude_driver
from kit.calls import first_call_per_tool
from kit.claude import Claude, Conversation
from kit.fake import FakeBackend, changes
from kit.mcp import McpSession, Surface
from kit.messages_api import AnthropicStandin
from kit.reading import text_of
from kit.record_stdin import recorded, sent
from kit.registration import PREFIX
from kit.tally import Tally, brief, one_line


class Prompts:
    """The server's prompts/list, and its prompts/get answers, asked directly."""

    def __init__(self, server: str, env: dict):
        self.server, self.env = server, env
        session = McpSession([server], env)
        try:
            self.listing = session.request("prompts/list", {})["prompts"]
        finally:
            session.close()
        self.names = [prompt["name"] for prompt in self.listing]

    def get(self, name: str, arguments: dict) -> dict:
        session = McpSession([self.server], self.env)
        try:
            return session.answer("prompts/get", {"name": name, "arguments": arguments})
        finally:
            session.close()

    def text(self, name: str, arguments: dict) -> str:
        return self.get(name, arguments)["result"]["messages"][0]["content"]["text"]


def register(claude: Claude, server: str, env: dict) -> str:
    """`claude mcp add` of the server wrapped in the stdin recorder; the recorder's log."""
    log = os.path.join(claude.home, "server-stdin.jsonl")
    options = [word for key, value in env.items() for word in ("-e", f"{key}={value}")]
    added = claude.run("mcp", "add", "-s", "local", "resmon", *options, "--", *recorded(log, [server]))
    if added.returncode != 0:
        raise RuntimeError(f"claude mcp add failed: {added.stderr[-500:]}")
    return log


def forget(log: str) -> None:
    """Empties the recorder's log (it appends), so that what is read next was sent after this."""
    open(log, "w").close()


def sent_to_server(log: str, method: str) -> list[dict]:
    """The params of every `method` request the recorder saw, then forgets them."""
    messages = sent(log, method)
    forget(log)
    return [{key: value for key, value in (m.get("params") or {}).items() if key != "_meta"} for m in messages]


def slash_commands(talk: Conversation) -> list[str]:
    for event in talk.events:
        if event.get("type") == "system" and event.get("subtype") == "init":
            return [name for name in event.get("slash_commands") or [] if name.startswith(PREFIX)]
    return []


def user_blocks(request: dict) -> list[str]:
    """The text blocks of a request's first user message."""
    for message in request.get("messages") or []:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return [content]
            return [block.get("text", "") for block in content or [] if block.get("type") == "text"]
    return []


def main() -> int:
    return claude_driver("claude-prompts", exercise)


def exercise(claude: Claude, readonly: Claude, model: AnthropicStandin, args, tally: Tally) -> None:
    with FakeBackend(args.fake) as fake:
        env = fake.server_env
        ro_env = dict(env, RESMON_MCP_READ_ONLY="1")
        full, limited = Prompts(args.server, env), Prompts(args.server, ro_env)
        surface = Surface([args.server], env)
        log = register(claude, args.server, fake.env)
        ro_log = register(readonly, args.server, dict(fake.env, RESMON_MCP_READ_ONLY="1"))
        lock = threading.Lock()

        def reached_resmon() -> int:
            with lock:
                return len(fake.requests())

        model.probe = reached_resmon

        # 2 (and 1, full session): a prompt run, its text, then its tool calls.
        calls = first_call_per_tool(args.calls, surface.runtime_id)
        doc_id = str(calls["explain_match"]["doc_id"])
        text = full.text("paper", {"doc_id": doc_id})
        named = [word for word in dict.fromkeys(re.findall(r"\w+", text)) if word in surface.names]
        deferred = [name for name in named if name not in surface.always]
        batch = [(PREFIX + name, {"doc_id": int(doc_id)}) for name in named]
        turns = ([[("ToolSearch", {"query": "select:" + ",".join(PREFIX + n for n in deferred),
                                   "max_results": 10})]] if deferred else []) + [batch]
        model.script(text, turns)
        before = reached_resmon()
        forget(log)
        # Headless Claude Code runs only the tools it was told it may: the reads.
        talk = claude.type_line(f"/mcp__resmon__paper {doc_id}", "--allowedTools",
                           ",".join(PREFIX + name for name in surface.reads))

        listed = slash_commands(talk)
        tally.check(sorted(listed) == sorted(PREFIX + name for name in full.names),
                    f"slash commands: /{PREFIX}<name> for each of the {len(full.names)} prompts the server lists "
                    f"({', '.join(full.names)})", f"stream-json init lists {listed}; {talk.why()}")
        gets = sent_to_server(log, "prompts/get")
        tally.check(gets == [{"name": "paper", "arguments": {"doc_id": doc_id}}],
                    f"/mcp__resmon__paper {doc_id}: the server got one prompts/get (paper, doc_id \"{doc_id}\")",
                    f"it got {gets}")
        first = (model.turn_requests() or [{}])[0]
        blocks = user_blocks(first)
        tally.check(text in blocks, "the model's first request carries the server's prompts/get text as the "
                    "person's message, unchanged", f"its first user message holds {brief(blocks)}")
        others = [one_line(block, 80) for block in blocks if block != text]
        print(f"# beside the prompt text that message holds {len(others)} blocks of Claude Code's own: {others}",
              flush=True)
        sent = json.dumps(first, ensure_ascii=False)
        shown = [words for prompt in full.listing for words in (prompt["title"], prompt["description"])
                 + ((PREFIX + prompt["name"],) if prompt["name"] != "paper" else ()) if words in sent]
        tally.check(first and not shown, "Claude Code shows its model no list of prompts: no other prompt's name, "
                    "and no prompt's title or description, is in that request (0 bytes beside the tool budget)",
                    f"the request holds {shown}")
        marks = model.scripted_marks()
        tally.check(marks[:1] == [before], "nothing reached resmon before the first tool call (the fake's log as "
                    "the model's first request arrived)", f"fake requests before the run {before}, then {marks[:1]}")
        seen = (talk.seen or [])[-len(batch):]
        after = fake.requests()[before:]
        unrecorded = [use.get("name") for use in talk.tool_uses()
                      if use.get("name", "").startswith(PREFIX) and use.get("id") not in talk.raw_results]
        failed = [(s.get("name"), brief(text_of(s.get("content")), 200)) for s in seen if s.get("is_error")]
        tally.check(talk.ok(len(turns) - 1 + len(batch)) and len(seen) == len(named) and not failed
                    and not unrecorded and after and not changes(after),
                    f"the stand-in then loads ({', '.join(deferred) or 'nothing'}) and calls the tools the text "
                    f"names ({', '.join(named)}); they go through (tool_result in stream-json, "
                    f"{len(after)} GET requests in the fake's log)",
                    f"failed {failed}; no tool_result for {unrecorded}; fake {after}; {talk.why()}")

        # 3: arguments by position.
        text = full.text("recent", {"days": "14"})
        model.script(text, [])
        talk = claude.type_line("/mcp__resmon__recent 14")
        gets = sent_to_server(log, "prompts/get")
        blocks = user_blocks((model.turn_requests() or [{}])[0])
        tally.check(gets == [{"name": "recent", "arguments": {"days": "14"}}] and text in blocks
                    and text != full.text("recent", {}),
                    "/mcp__resmon__recent 14: the first word goes to the first argument (days \"14\"), and the "
                    "model gets the 14-day text", f"the server got {gets}; the message holds {brief(blocks)}")
        claude.type_line("/mcp__resmon__recent 14 Daily arxiv")
        print(f"# a value with a space: /mcp__resmon__recent 14 Daily arxiv sends the server "
              f"{sent_to_server(log, 'prompts/get')}", flush=True)

        # 4: a refused argument.
        refused = full.get("paper", {"doc_id": "0"}).get("error") or {}
        message = refused.get("message", "")
        talk = claude.type_line("/mcp__resmon__paper 0")
        gets = sent_to_server(log, "prompts/get")
        asked = model.turn_requests()
        tally.check(refused.get("code") == -32602 and "doc_id" in message and message in str(talk.result)
                    and gets == [{"name": "paper", "arguments": {"doc_id": "0"}}] and not asked,
                    "/mcp__resmon__paper 0: Claude Code shows the server's -32602 message (naming doc_id) and sends "
                    "the model nothing", f"server error {refused}; Claude Code's result {talk.result!r}; "
                    f"prompts/get sent {gets}; {len(asked)} model requests")
        print(f"# Claude Code shows: {one_line(talk.result)}", flush=True)

        # 1, read-only session.
        talk = readonly.type_line("/mcp__resmon__watch Ada")
        listed = slash_commands(talk)
        blocks = user_blocks((model.turn_requests() or [{}])[0])
        typed = any("/mcp__resmon__watch Ada" in block for block in blocks)
        noted = any("not installed" in block for block in blocks)
        print(f"# read-only, /mcp__resmon__watch Ada: the model {'gets' if typed else 'does not get'} the line as "
              f"typed, {'with' if noted else 'without'} a note of Claude Code's that the command is not installed",
              flush=True)
        gets = sent_to_server(ro_log, "prompts/get")
        tally.check("watch" in full.names and "watch" not in limited.names
                    and sorted(listed) == sorted(PREFIX + name for name in limited.names) and not gets,
                    f"read-only registration: slash commands for exactly the {len(limited.names)} prompts the server "
                    "lists there (no watch); typing /mcp__resmon__watch sends the server no prompts/get",
                    f"read-only prompts/list {limited.names}; init lists {listed}; prompts/get sent {gets}")


if __name__ == "__main__":
    sys.exit(main())
