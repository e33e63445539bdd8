"""Claude Code's own ToolSearch asked the search words of every question in
tests/findability/questions.json (a JSON array of {"words", "tools"}), with
`max_results` 5, through the model stand-in: the stand-in's turn is a batch
of ToolSearch calls, and it reads back the `tool_reference` blocks Claude
Code returns, which is exactly what a model is shown. Standard library only.
Run inside a network namespace that holds only loopback (run.sh does).
With --held-out FILE (given once per list, as often as there are lists),
each such list in the same form (written apart from the tuning of the
search words, and never tuned against) is asked too and its figures printed
beside the first; only the first list's figure can fail.

A question is *found* when a tool that answers it is always-loaded (its
definition is in the first request, so no search is needed) or among
ToolSearch's first three results, and *first* when one is always-loaded or
is ToolSearch's first result. Both are shares of all questions. Prints both,
and the always-loaded tools; fails below 95 % found.

No query may change another's result. Every batch runs in a fresh session
(one `claude -p` each), all its queries in one turn, so none runs after
another's loaded tools reach the model. Whether neighbours matter at all is
measured, not assumed: the list is asked again in reverse order (so every
query has other neighbours) and a few questions alone in a session of their
own, and every result must be the same.

Usage: toolsearch.py --claude BIN --server BIN --fake BIN --questions FILE [--held-out FILE ...]
"""

import json
import os
import sys

from claude import claude_driver, references
from kit.claude import Claude
from kit.fake import FakeBackend
from kit.mcp import Surface
from kit.messages_api import AnthropicStandin
from kit.registration import PREFIX, Registration, check_output
from kit.tally import Tally

FOUND_AT_LEAST = 95.0
MAX_RESULTS = 5
BATCH = 20
ALONE = 3


def ask(claude: Claude, words: list[str]) -> tuple[dict[str, list[str]], str]:
    """Each query's ToolSearch results in one fresh session; and why, when it went wrong."""
    turn = [("ToolSearch", {"query": w, "max_results": MAX_RESULTS}) for w in words]
    talk = claude.prompt([turn])
    if not talk.ok(len(words)):
        return {}, talk.why()
    got = {}
    for shown in talk.seen:
        query = (shown.get("input") or {}).get("query")
        got[query] = [name for name in references(shown.get("content")) if name]
    return got, ""


def ask_all(claude: Claude, words: list[str]) -> tuple[dict[str, list[str]], int, list[str]]:
    results, sessions, problems = {}, 0, []
    for start in range(0, len(words), BATCH):
        got, why = ask(claude, words[start:start + BATCH])
        sessions += 1
        if why:
            problems.append(why)
        results.update(got)
    return results, sessions, problems


def main() -> int:
    return claude_driver("toolsearch", exercise, homes=1, options=("claude", "server", "fake", "questions"),
                         repeated=("held-out",))


def exercise(claude: Claude, model: AnthropicStandin, args, tally: Tally) -> None:
    with open(args.questions) as f:
        questions = json.load(f)
    held_outs = []
    for path in args.held_out:
        with open(path) as f:
            held_outs.append((path, json.load(f)))
    held_out = [q for _, lst in held_outs for q in lst]
    with FakeBackend(args.fake) as fake:
        env = fake.server_env
        surface = Surface([args.server], env)
        every = questions + held_out
        unknown = sorted({tool for q in every for tool in q.get("tools") or [] if tool not in surface.names})
        shapeless = [q for q in every if not isinstance(q.get("words"), str) or not q.get("tools")]
        words = list(dict.fromkeys(q["words"] for q in every if isinstance(q.get("words"), str)))
        repeated = sorted({w for w in (q.get("words") for q in questions) if [x.get("words") for x in questions].count(w) > 1})
        if not tally.check(questions and not unknown and not shapeless and not repeated,
                           f"{os.path.relpath(args.questions)}: {len(questions)} questions"
                           f"{f' (and {len(held_out)} held out)' if held_out else ''}, each with its words "
                           "and tools the server lists",
                           f"unknown tools {unknown}; without words or tools {shapeless[:5]}; "
                           f"repeated words {repeated}"):
            return
        registration = Registration(check_output(args.server, env, "claude-code").stdout)
        if not tally.check(registration.claude_line is not None, "--check prints a `claude mcp add` line",
                           "none found in its output"):
            return
        claude.run(*registration.claude_argv(claude.binary)[1:])

        results, sessions, problems = ask_all(claude, words)
        if not tally.check(not problems and set(results) == set(words),
                           f"ToolSearch answered all {len(words)} queries ({sessions} fresh session"
                           f"{'s' if sessions != 1 else ''}, up to {BATCH} queries in one turn each)",
                           f"{len(results)} answered; {problems[:2]}"):
            return
        again, _, problems = ask_all(claude, list(reversed(words)))
        alone = {}
        for w in words[:ALONE]:
            got, why = ask(claude, [w])
            problems += [why] if why else []
            alone.update(got)
        differ = [w for w in words if again.get(w) != results[w] or (w in alone and alone[w] != results[w])]
        tally.check(not problems and not differ,
                    f"no query changes another's result (asked again in reverse order, and {ALONE} alone: "
                    "the same results)",
                    f"differ: {[(w, results[w], again.get(w), alone.get(w)) for w in differ[:5]]}; {problems[:2]}")

        always = set(surface.always)
        print(f"# always-loaded: {sorted(always) or 'none'}", flush=True)
        found_pct, first_pct, misses = score("questions", questions, results, always)
        tally.check(found_pct >= FOUND_AT_LEAST,
                    f"found {found_pct:.1f} % of the questions (at least {FOUND_AT_LEAST:.0f} %); first {first_pct:.1f} %",
                    f"{misses} of {len(questions)} not found")
        for path, listed in held_outs:
            score(f"held-out questions of {os.path.basename(path)} (a report, not a check)", listed, results,
                  always)


def score(label: str, questions: list[dict], results: dict[str, list[str]], always: set[str]) -> tuple[float, float, int]:
    """Prints the found and first figures of one list, and each question
    that was not found or not first; returns both shares and the misses."""
    found = first = 0
    misses, seconds = [], []
    for q in questions:
        answers = set(q["tools"])
        ranked = [name[len(PREFIX):] if name.startswith(PREFIX) else name for name in results[q["words"]]]
        up_front = bool(answers & always)
        is_found = up_front or bool(answers & set(ranked[:3]))
        is_first = up_front or bool(ranked and ranked[0] in answers)
        found += is_found
        first += is_first
        if not is_found:
            misses.append((q, ranked))
        elif not is_first:
            seconds.append((q, ranked))
    total = len(questions)
    found_pct, first_pct = 100.0 * found / total, 100.0 * first / total
    print(f"# {label}: found {found}/{total} = {found_pct:.1f} %, first {first}/{total} = {first_pct:.1f} % "
          f"(ToolSearch max_results {MAX_RESULTS}; found: always-loaded or in the first 3; "
          "first: always-loaded or the first result)", flush=True)
    for q, ranked in misses:
        print(f"#   not found: {q['words']!r} (answered by {', '.join(q['tools'])}) -> {ranked}", flush=True)
    for q, ranked in seconds:
        print(f"#   found, not first: {q['words']!r} (answered by {', '.join(q['tools'])}) -> {ranked}",
              flush=True)
    return found_pct, first_pct, len(misses)

if __name__ == "__main__":
    sys.exit(main())
