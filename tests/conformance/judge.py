"""Judges conformance-suite results against tests/conformance/not-applicable.txt.

Usage: python3 judge.py LIST ERA RESULTS_DIR SUITE_OUTPUT [ERA RESULTS_DIR SUITE_OUTPUT ...]

RESULTS_DIR is what `conformance server -o` wrote for one era (a folder per
scenario, each with checks.json); SUITE_OUTPUT is the suite's stdout for
that run, read only for the number of scenarios it announced.

A check passes, fails, or reports something else (a warning, a skip, an
info line). The stage fails when:
- a check fails and is not on the list for that era;
- a check warns and is not on the list for that era;
- a listed check fails because the server faulted (a crash, an internal
  error, a hang): the list never covers the server's own faults;
- a listed check did not fail in an era the list names it for (it passed,
  or it no longer ran), so the list stays true;
- a scenario the suite announced left no readable checks.json;
- the list itself is malformed.

Prints a PASS line for each check that passed and a FAIL line for each of
those (tests/lib/kit.sh's stage_run counts them), one count line per era,
and last a line `conformance: N passed, M failed, K listed as not
applicable`. Exit status 0 only when M is 0. Standard library and the test
kit only (tests/lib on PYTHONPATH, as tests/lib/kit.sh sets it).
"""

import glob
import json
import os
import re
import sys
from collections import Counter

from kit.tally import one_line

ERAS = ("2025-11-25", "2026-07-28")
KINDS = ("fixture", "undeclared", "http")
# server-<scenario>-<ISO timestamp with dashes>, as the suite names its folders.
FOLDER = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
ANNOUNCED = re.compile(r"^Running requirements \S+ \((?P<count>\d+) scenarios?\)", re.MULTILINE)



# What a failure message says when the server itself went wrong, whatever
# the list says about the check: an internal error, a crash, a hang.
SERVER_FAULT = re.compile(r"-32603|internal error|timed? ?out|ECONNRESET|socket hang up|exited|crash", re.I)

def load_list(path: str) -> tuple[dict[tuple[str, str], str], list[str]]:
    """{(era, scenario:check): kind} and the problems found in the file."""
    entries: dict[tuple[str, str], str] = {}
    problems: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 3)
            where = f"{os.path.basename(path)} line {number}"
            if len(parts) < 4:
                problems.append(f"{where}: expected `era scenario:check kind reason`, got {line!r}")
                continue
            era, check, kind, _reason = parts
            eras = ERAS if era == "both" else (era,)
            if era != "both" and era not in ERAS:
                problems.append(f"{where}: era {era!r} is none of {', '.join(ERAS)}, both")
            if kind not in KINDS:
                problems.append(f"{where}: kind {kind!r} is none of {', '.join(KINDS)}")
            if ":" not in check:
                problems.append(f"{where}: {check!r} is not scenario:check-id")
            for one in eras:
                if (one, check) in entries:
                    problems.append(f"{where}: {one} {check} is listed twice")
                entries[(one, check)] = kind
    return entries, problems


def load_results(results_dir: str) -> tuple[list[tuple[str, dict]], list[str], int]:
    """Every (scenario, check) the run wrote, problems, and the folder count."""
    checks: list[tuple[str, dict]] = []
    problems: list[str] = []
    folders = sorted(glob.glob(os.path.join(results_dir, "server-*")))
    for folder in folders:
        match = FOLDER.match(os.path.basename(folder))
        if not match:
            problems.append(f"unexpected results folder {os.path.basename(folder)}")
            continue
        scenario = match["scenario"]
        try:
            with open(os.path.join(folder, "checks.json"), encoding="utf-8") as handle:
                written = json.load(handle)
        except (OSError, ValueError) as error:
            problems.append(f"scenario {scenario} left no readable checks.json ({error})")
            continue
        if not isinstance(written, list):
            problems.append(f"scenario {scenario}: checks.json is not a list of checks")
            continue
        checks.extend((scenario, check) for check in written if isinstance(check, dict))
    return checks, problems, len(folders)


def judge_era(era: str, results_dir: str, suite_output: str, listed: dict) -> tuple[int, int, int]:
    """Prints this era's PASS and FAIL lines and its count line; returns (passed, failed, skipped)."""
    failed = 0
    checks, problems, folders = load_results(results_dir)
    try:
        with open(suite_output, encoding="utf-8", errors="replace") as handle:
            announced = ANNOUNCED.search(handle.read())
    except OSError:
        announced = None
    if announced is None:
        problems.append(f"the suite's output ({suite_output}) does not say how many scenarios it ran")
    elif int(announced["count"]) != folders:
        problems.append(f"the suite announced {announced['count']} scenarios but wrote results for {folders}")
    if not checks:
        problems.append("no checks were recorded at all")
    for problem in problems:
        failed += 1
        print(f"FAIL conformance {era} setup: {problem}")

    statuses = Counter(check.get("status") for _, check in checks)
    for scenario, check in checks:
        if check.get("status") == "SUCCESS":
            print(f"PASS conformance {era} {scenario}:{check.get('id')}")
    failing: dict[str, list[dict]] = {}
    for scenario, check in checks:
        if check.get("status") == "FAILURE":
            failing.setdefault(f"{scenario}:{check.get('id')}", []).append(check)
    expected = 0
    for key in sorted(failing):
        if (era, key) in listed:
            # A listed check is exempt for the reason on its line, never for
            # a fault of the server's own: a crash, an internal error or a
            # hang fails the stage even on a listed check.
            faults = [check for check in failing[key] if SERVER_FAULT.search(str(check.get("errorMessage") or ""))]
            for check in faults:
                failed += 1
                print(f"FAIL conformance {era} {key} (listed, but the server faulted): {one_line(check.get('errorMessage'))}")
            expected += len(failing[key]) - len(faults)
            continue
        failed += len(failing[key])
        for check in failing[key]:
            print(f"FAIL conformance {era} {key}: {one_line(check.get('errorMessage') or check.get('description'))}")
    short_of_passing = set(failing) | {
        f"{scenario}:{check.get('id')}" for scenario, check in checks if check.get("status") == "WARNING"
    }
    for listed_era, key in sorted(listed):
        if listed_era == era and key not in short_of_passing:
            failed += 1
            seen = any(f"{scenario}:{check.get('id')}" == key for scenario, check in checks)
            how = "passed" if seen else "did not run"
            print(
                f"FAIL conformance {era} {key} is on tests/conformance/not-applicable.txt but {how}: "
                "delete its line (or narrow it to the era where it still fails)"
            )
    # A warning is a check that found something short of a failure: it is
    # not on the list's terms, so it fails the stage unless listed.
    for scenario, check in checks:
        key = f"{scenario}:{check.get('id')}"
        if check.get("status") == "WARNING" and (era, key) not in listed:
            failed += 1
            print(f"FAIL conformance {era} {key} (warning): {one_line(check.get('errorMessage') or check.get('description'))}")
    passed = statuses.get("SUCCESS", 0)
    others = {status: n for status, n in statuses.items() if status not in ("SUCCESS", "FAILURE")}
    names = {"WARNING": "warnings", "SKIPPED": "skipped", "INFO": "info"}
    other_text = "".join(
        f", {n} {names.get(status, str(status).lower())}" for status, n in sorted(others.items(), key=str)
    )
    unexpected = statuses.get("FAILURE", 0) - expected
    print(
        f"== {era}: {folders} scenarios, {len(checks)} checks: {passed} passed, "
        f"{statuses.get('FAILURE', 0)} failed ({expected} not applicable, {unexpected} not listed){other_text}"
    )
    return passed, failed, expected


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 4 or (len(args) - 1) % 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    listed, problems = load_list(args[0])
    failed = len(problems)
    for problem in problems:
        print(f"FAIL conformance list: {problem}")
    runs = [args[i : i + 3] for i in range(1, len(args), 3)]
    judged = {run[0] for run in runs}
    passed = skipped = 0
    for era, results_dir, suite_output in runs:
        era_passed, era_failed, era_skipped = judge_era(era, results_dir, suite_output, listed)
        passed += era_passed
        failed += era_failed
        skipped += era_skipped
    for era in sorted({era for era, _ in listed} - judged):
        failed += 1
        print(f"FAIL conformance list: names era {era}, which was not run")
    print(f"conformance: {passed} passed, {failed} failed, {skipped} listed as not applicable")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
