"""PASS and FAIL lines, which run.sh counts (tests/lib/kit.sh), and the main
every driver shares: its options, a crash counted as a failure (never a
skip), and the closing `# <label>: N passed, M failed in T s` line."""

import argparse
import asyncio
import inspect
import json
import time


class Tally:
    """PASS/FAIL lines on stdout, each naming the driver (`label`)."""

    def __init__(self, label: str):
        self.label = label
        self.passed = 0
        self.failed = 0

    def ok(self, what: str) -> None:
        self.passed += 1
        print(f"PASS {self.label} {what}", flush=True)

    def fail(self, what: str, why) -> None:
        self.failed += 1
        print(f"FAIL {self.label} {what}: {brief(' '.join(str(why).split()), 2000)}", flush=True)

    def check(self, condition, what: str, why="") -> bool:
        if condition:
            self.ok(what)
        else:
            self.fail(what, why)
        return bool(condition)

    def pinned(self, what: str, want: str, got: str, where: str = "exact") -> bool:
        """A check that the program under test is the version the test is
        written for: `want` is where the program puts its version in what
        it printed (`got`), and nowhere else will do: all of it (`exact`,
        blanks around it aside), its `first` word or its `last` word. A
        version named elsewhere (a dependency's, a newer one offered) is
        not the program's."""
        words = got.split() or [""]
        found = {"exact": got.strip(), "first": words[0], "last": words[-1]}[where]
        return self.check(found == want, f"{what} is {want}", f"got {got!r}: the test is written for {want}")


def brief(value, limit: int = 1500) -> str:
    """A value for a failure's reason: its text (JSON when not a string), cut at `limit`."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[:limit] + " …"


def one_line(text, limit: int = 300) -> str:
    """Text for a `#` line of the report: whitespace collapsed, cut at `limit`."""
    return brief(" ".join(str(text).split()), limit)


def run_driver(label: str, options, exercise, repeated=(), choices: dict | None = None) -> int:
    """A driver's main: parses `--<name> VALUE` for each of `options` (all
    required) and of `repeated` (each given any number of times, a list),
    a value outside `choices[name]` (where given) being a usage error;
    runs `exercise(args, tally)` (awaited when it is a coroutine function),
    counts a crash as a failure, and a run that checked nothing too (a
    driver that returns early before its first check would otherwise pass);
    prints the closing line and returns the exit status: 0 only when
    something was checked and nothing failed."""
    choices = choices or {}
    parser = argparse.ArgumentParser()
    for name in options:
        parser.add_argument(f"--{name}", required=True, choices=choices.get(name))
    for name in repeated:
        parser.add_argument(f"--{name}", action="append", default=[], choices=choices.get(name))
    args = parser.parse_args()
    tally = Tally(label)
    started = time.monotonic()
    try:
        outcome = exercise(args, tally)
        if inspect.iscoroutine(outcome):
            asyncio.run(outcome)
    except Exception as e:  # noqa: BLE001 - a crash of the driver is a failure, never a skip
        tally.fail("driver", f"{type(e).__name__}: {e}")
    if tally.passed + tally.failed == 0:
        tally.fail("driver", "reported no checks")
    print(f"# {label}: {tally.passed} passed, {tally.failed} failed in {time.monotonic() - started:.1f} s",
          flush=True)
    return 0 if tally.failed == 0 else 1
