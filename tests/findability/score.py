#!/usr/bin/env python3
"""Emulates Claude Code 2.1.332's ToolSearch keyword ranking over this
server's listing, and scores a question list the way the CI stage does.

It is the fast local check; the referee is the CI stage that asks Claude
Code's own ToolSearch. docs/findability.md says what the ranking is and
where this copy of it is approximate (the built-in tools Claude Code also
defers are stood in for by their names and one sentence each).

Usage: tests/findability/score.py [QUESTIONS.json ...] [--listing FILE]
       [--show-misses] [--pessimistic]
The listing defaults to src/tools/listing-full.json (what tools/list serves).
"""

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SERVER = "resmon"
MAX_RESULTS = 5
HINT_PREFIX = 4096  # characters of a searchHint that ToolSearch reads
MAX_WORDS = 32  # words of a query that ToolSearch reads

# Built-in tools Claude Code 2.1.332 defers in a default session, which share
# ToolSearch's results with ours: (name, searchHint or "", a sentence standing
# in for its description). Only their names and a few words of purpose are
# copied; their real descriptions are longer.
BUILTINS = [
    ("WebFetch", "", "When you are about to read a public web page, use it."),
    ("WebSearch", "", "Search the web for current information when answering from memory on something recent."),
    ("NotebookEdit", "", "Change, add or delete a cell of a Jupyter notebook."),
    ("EnterPlanMode", "", "Before writing code for a task that is not simple, so that the user approves the approach first."),
    ("ExitPlanMode", "", "In plan mode, when your plan is ready and you ask whether to proceed."),
    ("ListMcpResourcesTool", "", "Lists resources the configured MCP servers offer."),
    ("ReadMcpResourceTool", "", "Read the contents of one resource on an MCP server."),
    ("TaskStop", "", "Stop a running background task by ID."),
    ("TodoWrite", "", "Create and manage a structured task list for your coding session."),
    ("EnterWorktree", "", "When told to work in a worktree and you are about to begin."),
    ("ExitWorktree", "", "When the user asks to leave a worktree."),
    ("TaskCreate", "", "Create a task in the task list."),
    ("TaskGet", "", "Get a task by its id from the task list."),
    ("TaskUpdate", "", "Update a task in the task list."),
    ("TaskList", "", "List all tasks in the task list."),
    ("Monitor", "", "Check a log, process or job again and again to catch each new event."),
    ("CronCreate", "", "Schedule a prompt to run at a set time or at fixed intervals."),
    ("CronDelete", "", "Stop a job that was scheduled."),
    ("CronList", "", "Say which jobs are scheduled or when they next run."),
]


def parse_name(name, server=None):
    """Name parts as ToolSearch splits them."""
    if server is not None:
        coarse = [server.lower(), name.lower()]
        parts = [p for c in coarse for p in re.split(r"[\s_.]+", c) if p]
        return parts, coarse, " ".join(parts), True
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower()
    parts = [p for p in spaced.split() if p]
    return parts, [name.lower()], " ".join(parts), False


def word_test(word):
    return re.compile(r"\b" + re.escape(word) + r"\b", re.ASCII)


def candidates(listing):
    """(model-visible name, parsed name, description, hint, always-loaded)."""
    out = []
    for tool in listing:
        meta = tool.get("_meta") or {}
        hint = meta.get("anthropic/searchHint")
        hint = " ".join(hint.split()) if isinstance(hint, str) else ""
        out.append(
            (
                f"mcp__{SERVER}__{tool['name']}",
                parse_name(tool["name"], SERVER),
                tool["description"][:4096].lower(),
                hint[:HINT_PREFIX].lower(),
                meta.get("anthropic/alwaysLoad") is True,
            )
        )
    for name, hint, description in BUILTINS:
        out.append((name, parse_name(name), description.lower(), hint.lower(), False))
    return out


def score(words, parsed, description, hint):
    parts, coarse, full, is_mcp = parsed
    total = 0
    for word in words:
        test = word_test(word)
        if word in parts:
            total += 12 if is_mcp else 10
        elif any(word in part for part in parts):
            total += 6 if is_mcp else 5
        if word in coarse:
            total += 12 if is_mcp else 10
        elif any(word in part for part in coarse):
            total += 4 if is_mcp else 3
        if word in full and total == 0:
            total += 3
        if hint and test.search(hint):
            total += 4
        if word in description and test.search(description):
            total += 2
    return total


def search(query, pool, pessimistic_for=()):
    """ToolSearch's keyword results for `query` over the deferred `pool`.
    Ties keep pool order (JavaScript's sort is stable); with
    `pessimistic_for`, those names lose every tie instead."""
    words = [w for w in query.strip().lower().split()][:MAX_WORDS]
    required = [w[1:] for w in words if w.startswith("+") and len(w) > 1]
    if required:
        words = required + [w for w in words if not (w.startswith("+") and len(w) > 1)]
    scored = []
    for index, (name, parsed, description, hint, _) in enumerate(pool):
        if required and not all(score([w], parsed, description, hint) > 0 for w in required):
            continue
        points = score(words, parsed, description, hint)
        if points > 0:
            loses_ties = 1 if name in pessimistic_for else 0
            scored.append((-points, loses_ties, index, name, points))
    scored.sort()
    return [(name, points) for _, _, _, name, points in scored[:MAX_RESULTS]]


def evaluate(questions, listing, pessimistic=False, show_misses=False, label=""):
    pool_all = candidates(listing)
    loaded = {c[0] for c in pool_all if c[4]}
    pool = [c for c in pool_all if not c[4]]
    found = first = 0
    for question in questions:
        answers = {f"mcp__{SERVER}__{name}" for name in question["tools"]}
        if answers & loaded:
            found += 1
            first += 1
            continue
        results = search(question["words"], pool, answers if pessimistic else ())
        names = [name for name, _ in results]
        hit3 = bool(answers & set(names[:3]))
        hit1 = bool(names) and names[0] in answers
        found += hit3
        first += hit1
        if show_misses and not hit1:
            shown = ", ".join(f"{n.replace('mcp__resmon__', '')}={p}" for n, p in results)
            print(f"  {'MISS ' if not hit3 else 'late '} {question['words']!r} -> {shown}  (want {question['tools']})")
    n = len(questions)
    print(
        f"{label}{n} questions: found {found}/{n} = {100 * found / n:.1f}%, first {first}/{n} = {100 * first / n:.1f}%"
        f"{' (ties lost)' if pessimistic else ''}; always loaded: {sorted(x.replace('mcp__resmon__', '') for x in loaded)}"
    )
    return found / n, first / n


def main(argv):
    listing_path = ROOT / "src/tools/listing-full.json"
    files, show, pessimistic = [], False, False
    args = iter(argv)
    for arg in args:
        if arg == "--listing":
            listing_path = pathlib.Path(next(args))
        elif arg == "--show-misses":
            show = True
        elif arg == "--pessimistic":
            pessimistic = True
        else:
            files.append(pathlib.Path(arg))
    if not files:
        files = [ROOT / "tests/findability/questions.json"]
    listing = json.loads(listing_path.read_text())
    for path in files:
        questions = json.loads(path.read_text())
        evaluate(questions, listing, pessimistic, show, f"{path.name}: ")


if __name__ == "__main__":
    main(sys.argv[1:])
