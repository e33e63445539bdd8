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

# Built-in tools Claude Code 2.1.332 defers in a headless (`claude -p`)
# session, which is what the CI stage runs, and which share ToolSearch's
# results with ours: (name, its searchHint as the program carries it, a
# sentence standing in for its description). Their real descriptions are
# longer (up to 4,096 characters read), so a common word there earns them 2.
BUILTINS = [
    ("CronCreate", "schedule a recurring or one-shot prompt",
     "Schedule a prompt to run later, once or on a recurring cron schedule."),
    ("CronDelete", "cancel a scheduled cron job", "Cancel a cron job that was scheduled."),
    ("CronList", "list active cron jobs", "List all cron jobs that are scheduled."),
    ("EnterWorktree", "", "Only when told to work in a worktree: creates an isolated git worktree and switches to it."),
    ("ExitWorktree", "exit a worktree session and return to the original directory",
     "Leave a worktree session and return to the original working directory."),
    ("Monitor", "watch, monitor, or keep an eye on a process/log/command or WebSocket - stream each stdout line "
     "as a live notification", "Start a background monitor that streams events from a long-running script."),
    ("NotebookEdit", "edit Jupyter notebook cells (.ipynb)", "Replace, insert or delete a cell in a Jupyter notebook."),
    ("SendMessage", "send messages to agent teammates", "Send a message to another agent."),
    ("TaskStop", "kill a running background task", "Stops a running background task by its ID."),
    ("WebFetch", "fetch and extract content from a URL", "Fetches a URL and answers a prompt about the page."),
    ("WebSearch", "search the web for current information", "Search the web for recent information."),
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
    # Equal scores come out in name order (code-point order, so the built-in
    # tools' capitals first), as the real ToolSearch's results show.
    return sorted(out, key=lambda c: c[0])


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
    Ties keep pool order (name order; JavaScript's sort is stable); with
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
