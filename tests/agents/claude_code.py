"""Claude Code (@anthropic-ai/claude-code, pinned in package-lock.json)
against resmon-mcp, with a loopback stand-in for the Messages API so that
Claude Code's own loop makes every MCP call (tests/lib/kit/script.py says
how the stand-in is scripted). Standard library only. Run inside a network
namespace that holds only loopback (run.sh does).

Checks, each a PASS or FAIL line:
- registered with the exact `claude mcp add` line `--check --for claude-code` prints and its
  `permissions.allow` fragment merged into ~/.claude/settings.json (a
  --check that prints no fragment is a failure: it always prints one),
  `claude mcp get resmon` shows Connected;
- default mode (tool search on): the first request carries the server's
  instructions and the definitions of exactly the tools whose tools/list
  `_meta` marks them always-loaded, and names every other tool as deferred;
  the budget (those definitions as sent, plus the instructions) is printed
  and held to 4,096 bytes;
- the most common question, what a routine found lately, is answered with
  no ToolSearch call: the stand-in calls the tools the server's instructions
  give that question, in their order (list_executions, get_execution,
  get_execution_results), each always-loaded, and each call succeeds on a
  run that list_executions listed;
- with ENABLE_TOOL_SEARCH=false all 25 definitions are in the first request;
- headless, with the allow fragment, the 18 reads run and each of the 7
  writes is denied with nothing reaching resmon (the fake's request log);
- the model reads a success as the structuredContent JSON and an error as
  its sentence first;
- with resmon stopped the server still connects and `health` reads as the
  server's own sentence.

Usage: claude_code.py --claude BIN --server BIN --fake BIN --calls calls.json
"""

import json
import os
import re
import sys

from claude import claude_driver, deferred_names, sent_tools, system_text
from kit.calls import first_call_per_tool
from kit.claude import Claude
from kit.fake import FakeBackend, StoppedResmon, changes
from kit.mcp import ERROR_SENTENCE, EXPECTED_READS, EXPECTED_TOOLS, EXPECTED_WRITES, NOT_RUNNING, Surface
from kit.messages_api import AnthropicStandin
from kit.reading import text_of
from kit.registration import PREFIX, Registration, check_output
from kit.tally import Tally, brief, one_line

BUDGET_BYTES = 4096
# The question whose route (in the server's instructions, from the route
# table of src/prompts/routes.rs) the common-question check follows.
FOUND_LATELY = "what a routine found lately"
# What Claude Code answers in place of running a tool nobody allowed (2.1.332).
DENIED_WORDS = ("permission", "haven't granted")


def definition_bytes(tool: dict) -> int:
    """One tool as Claude Code sends it, measured as JSON the way serde_json
    writes it by default: no spaces, non-ASCII kept."""
    sent = {"name": tool["name"], "description": tool.get("description"), "input_schema": tool.get("input_schema")}
    return len(json.dumps(sent, separators=(",", ":"), ensure_ascii=False).encode())


def select_turn(names: list[str]) -> list[tuple[str, dict]]:
    """A ToolSearch turn that loads the named (deferred) tools."""
    return [("ToolSearch", {"query": "select:" + ",".join(PREFIX + name for name in names), "max_results": 30})]


def main() -> int:
    return claude_driver("claude-code", exercise)


def exercise(claude: Claude, stopped: Claude, model: AnthropicStandin, args, tally: Tally) -> None:
    with FakeBackend(args.fake) as fake:
        base_env = fake.server_env
        surface = Surface([args.server], base_env)
        tally.check(len(surface.names) == EXPECTED_TOOLS and len(surface.reads) == EXPECTED_READS
                    and len(surface.writes) == EXPECTED_WRITES,
                    f"tools/list: {EXPECTED_TOOLS} tools, {EXPECTED_READS} marked readOnlyHint, "
                    f"{EXPECTED_WRITES} not", f"{len(surface.names)} tools, reads {surface.reads}")
        always = surface.always
        print(f"# always-loaded (tools/list _meta anthropic/alwaysLoad true): {always or 'none'}", flush=True)

        printed = check_output(args.server, base_env, "claude-code")
        registration = Registration(printed.stdout)
        if not tally.check(printed.returncode == 0 and registration.claude_line is not None,
                           "--check prints a `claude mcp add` line",
                           f"exit {printed.returncode}: {brief(printed.stdout + printed.stderr)}"):
            return
        print(f"# parsed from --check: {registration.claude_line}", flush=True)
        fragment = registration.allow_fragment
        reads = [PREFIX + name for name in surface.reads]
        # --check always prints the fragment; without it the reads would have
        # to be allowed some other way, and the stage would no longer test
        # what a person pastes.
        if not tally.check(fragment is not None, "--check prints Claude Code's permissions.allow fragment",
                           f"no JSON object with permissions.allow of {PREFIX} names in: {brief(printed.stdout)}"):
            return
        allowed = fragment["permissions"]["allow"]
        print(f"# parsed from --check under {registration.allow_where!r}: a permissions.allow fragment of "
              f"{len(allowed)} names, merged into ~/.claude/settings.json", flush=True)
        tally.check(sorted(allowed) == sorted(reads),
                    f"the printed allow fragment names exactly the {EXPECTED_READS} read tools",
                    f"it names {sorted(allowed)}; the reads are {sorted(reads)}")
        allow_options: list[str] = []

        add = claude.run(*registration.claude_argv(claude.binary)[1:])
        entry = claude.server_entry()
        tally.check(add.returncode == 0 and entry.get("command") == args.server and entry.get("env") == fake.env,
                    "the printed `claude mcp add` line registers resmon with its command and environment",
                    f"exit {add.returncode}, entry {entry}, stderr {add.stderr[-500:]}")
        claude.merge_settings(fragment)
        shown = claude.run("mcp", "get", "resmon")
        tally.check(shown.returncode == 0 and "Connected" in shown.stdout,
                    "claude mcp get resmon: Connected", f"exit {shown.returncode}: {shown.stdout[-800:]}"
                    f"{shown.stderr[-300:]}")

        calls = first_call_per_tool(args.calls, surface.runtime_id)
        default_mode(claude, surface, calls, allow_options, tally)
        tool_search_off(claude, surface, allow_options, tally)
        reads_and_writes(claude, fake, surface, calls, allow_options, tally)

    # resmon stopped, its port file and token left behind as after a crash.
    gone = StoppedResmon(os.path.join(stopped.home, "stopped-resmon"))
    words = registration.claude_argv(stopped.binary)
    for i, word in enumerate(words[:-1]):
        if word == "-e" and words[i + 1].split("=", 1)[0] in gone.env:
            key = words[i + 1].split("=", 1)[0]
            words[i + 1] = f"{key}={gone.env[key]}"
    stopped.run(*words[1:])
    stopped.merge_settings(fragment)
    shown = stopped.run("mcp", "get", "resmon")
    tally.check(shown.returncode == 0 and "Connected" in shown.stdout,
                "with resmon stopped, claude mcp get resmon still shows Connected",
                f"exit {shown.returncode}: {shown.stdout[-800:]}")
    turns = ([] if "health" in always else [select_turn(["health"])]) + [[("mcp__resmon__health", {})]]
    talk = stopped.prompt(turns, *allow_options)
    seen = (talk.seen or [{}])[-1]
    text = text_of(seen.get("content"))
    tally.check(talk.ok(len(turns)) and seen.get("is_error") and text.startswith(NOT_RUNNING),
                "with resmon stopped, the model reads health as the server's sentence (backend_unavailable …)",
                f"model got {brief(seen)}; {talk.why()}")


def routed_tools(instructions: str, question: str, names: list[str]) -> list[str]:
    """The tools the instructions' clause `<question>: …` names, in order:
    the clause runs to the first `;` or `. ` outside parentheses, as
    prompts::clause_tools reads it."""
    start = instructions.find(question + ": ")
    if start < 0:
        return []
    rest, depth, end = instructions[start + len(question) + 2:], 0, None
    for at, c in enumerate(rest):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and (c == ";" or (c == "." and rest[at + 1:at + 2] in ("", " "))):
            end = at
            break
    words = re.findall(r"\w+", rest[:end])
    return [word for word in dict.fromkeys(words) if word in names]


def default_mode(claude: Claude, surface: Surface, calls: dict, allow_options: list[str], tally: Tally) -> None:
    always = surface.always
    # The common question, asked as the instructions route it: their tools
    # in their order, with the run calls.rs names (the fake lists it).
    route = routed_tools(surface.instructions, FOUND_LATELY, surface.names)
    exec_id = calls.get("get_execution_results", {}).get("exec_id")
    arguments = {name: dict(calls.get(name, {})) for name in route}
    for name in route:
        if "exec_id" in arguments[name]:
            arguments[name]["exec_id"] = exec_id
    turns = [[(PREFIX + name, arguments[name])] for name in route]
    if not tally.check(route[:1] == ["list_executions"] and "get_execution_results" in route
                       and all(name in always for name in route) and exec_id is not None,
                       f"the instructions route {FOUND_LATELY!r} through always-loaded tools, list_executions first "
                       "and get_execution_results among them",
                       f"they give {route}; always-loaded {always}"):
        return
    talk = claude.prompt(turns, *allow_options)
    first = talk.first_request()
    if not tally.check(talk.ok(len(turns)) and first, "default mode: a headless run completes through the stand-in",
                       talk.why()):
        return
    text = system_text(first)
    tally.check(bool(surface.instructions) and surface.instructions in text,
                "default mode: the first request carries the server's instructions",
                f"instructions ({len(surface.instructions)} bytes) not found in the system text")
    sent = sent_tools(first)
    tally.check(set(sent) == {PREFIX + name for name in always}
                and not any(t.get("defer_loading") for t in sent.values()),
                f"default mode: the first request defines exactly the always-loaded tools ({len(always)})",
                f"it defines {sorted(sent)} (defer_loading on {[n for n, t in sent.items() if t.get('defer_loading')]})")
    deferred = {name for name in deferred_names(first) if name.startswith(PREFIX)}
    others = {PREFIX + name for name in surface.names if name not in always}
    tally.check(deferred == others,
                f"default mode: the other {len(others)} tools are named as deferred, the always-loaded ones are not",
                f"deferred resmon names: {sorted(deferred)}")
    definitions = sum(definition_bytes(t) for t in sent.values())
    instructions = len(surface.instructions.encode())
    names = sum(len(name.encode()) + 1 for name in deferred)
    budget = definitions + instructions
    print(f"# budget: {budget} bytes = always-loaded definitions as sent {definitions} + instructions {instructions}",
          flush=True)
    print(f"# before any search the model reads about resmon: {budget + names} bytes (the budget, plus "
          f"{len(deferred)} deferred names, {names} bytes with their line ends)", flush=True)
    tally.check(budget <= BUDGET_BYTES, f"default mode: the budget is within {BUDGET_BYTES} bytes ({budget})",
                f"{budget} bytes = definitions {definitions} + instructions {instructions}")
    searched = [use for use in talk.tool_uses() if use.get("name") == "ToolSearch"]
    seen = (talk.seen or [])[-len(route):]
    failed = [(s.get("name"), brief(text_of(s.get("content")), 200)) for s in seen if s.get("is_error")]
    try:
        listed = [run.get("id") for run in json.loads(text_of(seen[0].get("content")))["executions"]]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        listed = []
    tally.check(not searched and [s.get("name") for s in seen] == [PREFIX + name for name in route] and not failed
                and exec_id in listed,
                f"{FOUND_LATELY!r} is answered with no ToolSearch call: {', '.join(route)} in that order, each "
                f"succeeding, on run {exec_id} that list_executions listed",
                f"ToolSearch calls {searched}; the model saw {[s.get('name') for s in seen]}; failed {failed}; "
                f"listed runs {listed}")


def tool_search_off(claude: Claude, surface: Surface, allow_options: list[str], tally: Tally) -> None:
    env = dict(claude.env, ENABLE_TOOL_SEARCH="false")
    talk = claude.prompt([[("mcp__resmon__health", {})]], *allow_options, env=env)
    first = talk.first_request()
    sent = sent_tools(first)
    deferred = [name for name in deferred_names(first) if name.startswith(PREFIX)]
    everything = sum(definition_bytes(t) for t in sent.values())
    tally.check(talk.ok(1) and len(sent) == EXPECTED_TOOLS and not deferred
                and not any(t.get("defer_loading") for t in sent.values()),
                f"ENABLE_TOOL_SEARCH=false: the first request defines all {EXPECTED_TOOLS} tools "
                f"({everything} bytes as sent)",
                f"it defines {len(sent)}: {sorted(sent)}; deferred {deferred}; {talk.why()}")


def reads_and_writes(claude: Claude, fake: FakeBackend, surface: Surface, calls: dict, allow_options: list[str],
                     tally: Tally) -> None:
    missing = [name for name in surface.names if name not in calls]
    if not tally.check(not missing, "tests/it/calls.rs has valid arguments for every tool", f"none for {missing}"):
        return
    # The reads, and one read that fails, in one turn after loading them.
    batch = [(PREFIX + name, calls[name]) for name in surface.reads]
    batch.append((PREFIX + "get_execution", {"exec_id": 99999}))
    deferred_reads = [name for name in surface.reads if name not in surface.always]
    turns = ([select_turn(deferred_reads)] if deferred_reads else []) + [batch]
    talk = claude.prompt(turns, *allow_options)
    if not tally.check(talk.ok(len(turns) - 1 + len(batch)), f"headless: the stand-in's {len(batch)} read calls "
                       "all came back", talk.why()):
        return
    seen = talk.seen[-len(batch):]
    uses = [use for use in talk.tool_uses() if use.get("name", "").startswith(PREFIX)]
    failed = [(s["name"], brief(text_of(s.get("content")), 200)) for s in seen[:-1] if s.get("is_error")]
    tally.check(not failed, f"headless: the {len(surface.reads)} read tools run "
                "(allowed by the printed fragment)",
                f"refused or failed: {failed}")
    # What the model reads for a success: the structuredContent JSON, not the text block.
    mismatched = []
    for use, shown in zip(uses, seen[:-1]):
        raw = talk.raw_results.get(use.get("id")) or {}
        try:
            value = json.loads(text_of(shown.get("content")))
        except ValueError:
            value = None
        if not isinstance(raw, dict) or "structuredContent" not in raw or value != raw["structuredContent"]:
            mismatched.append(shown.get("name"))
    tally.check(len(uses) == len(batch) and not mismatched,
                f"a success reads as its structuredContent JSON (all {len(surface.reads)} reads)",
                f"not so for {mismatched}")
    error = seen[-1]
    text = text_of(error.get("content"))
    tally.check(error.get("is_error") and ERROR_SENTENCE.match(text) and text.startswith("not_found: "),
                "an error reads with its sentence first (not_found: …)", brief(error))

    # The writes: loaded, called, and each refused before reaching the server.
    before = len(fake.requests())
    batch = [(PREFIX + name, calls[name]) for name in surface.writes]
    turns = [select_turn(surface.writes), batch]
    talk = claude.prompt(turns, *allow_options)
    after = fake.requests()[before:]
    seen = (talk.seen or [])[-len(batch):]
    ran = [s.get("name") for s in seen if not s.get("is_error")]
    undenied = [s.get("name") for s in seen
                if not any(word in text_of(s.get("content")) for word in DENIED_WORDS)]
    tally.check(talk.ok(1 + len(batch)) and not ran and not undenied,
                f"headless: each of the {len(surface.writes)} writes is denied by Claude Code",
                f"ran {ran}; not a permission denial: {undenied}; {talk.why()}")
    tally.check(not changes(after),
                f"no write reached resmon (the fake logged {len(after)} requests, none that changes anything)",
                f"it received {changes(after)}")
    if seen:
        print(f"# a denied write reads: {one_line(text_of(seen[0].get('content')))}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
