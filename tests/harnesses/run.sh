#!/usr/bin/env bash
# Agent harnesses against resmon-mcp, each with a loopback stand-in for its
# model's API so that the harness's own loop makes the MCP calls
# (docs/setup.md, "What the harnesses do with the tools"):
#
#   bash tests/harnesses/run.sh
#
# Pinned harnesses (versions also asserted by each script):
#   - Gemini CLI         @google/gemini-cli@0.61.0  (package.json + package-lock.json, via tests/npm_locked.py)
#   - OpenAI Agents SDK  openai-agents==0.24.0      (requirements.txt, venv in target/harnesses/venv)
#
# Each runs inside its own network namespace that holds only loopback
# (`unshare -n`, then `ip link set lo up`): a harness that tries to reach an
# outside service (update checks, telemetry, tracing) cannot, and the fake
# backend and the stand-ins it talks to live in that namespace with it.
# Needs root (or the right to make a network namespace), cargo (and its
# rustc, for the call list tests/clients/dump_calls.rs writes), python3 with
# venv, node >= 20 and npm, and the package registries; whatever is missing
# and installable with apt-get is installed. Everything goes under
# target/harnesses/.
#
# Every check prints `PASS …` or `FAIL …`; the last line is `N passed, M failed`.
# Exit status 0 only when M is 0. Nothing is ever skipped: a harness that
# cannot be installed or started is a failure.
set -uo pipefail
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
kit_stage harnesses "harness stage" \
    "agent harnesses: Gemini CLI, OpenAI Agents SDK (pinned; model APIs stood in on loopback)"

# What the stage needs from the system, installed when it is missing.
missing=()
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
need_loopback_namespace "${missing[@]}"
need_tools cargo rustc python3 node npm timeout

kit_build server fake calls
setup_venv
setup_npm

if [ "$node_ready" -eq 0 ]; then
    setup_fail "gemini-cli did not run: its npm package is not installed"
else
    stage_run gemini-cli 300 --isolated python3 "$here/gemini_cli.py" --gemini "$npm_dir/node_modules/.bin/gemini" \
        --server "$server" --fake "$fake" --calls "$calls"
fi
if [ "$python_ready" -eq 0 ]; then
    setup_fail "agents-sdk did not run: its venv is not ready"
else
    stage_run agents-sdk 240 --isolated env OPENAI_AGENTS_DISABLE_TRACING=1 "$venv/bin/python" "$here/agents_sdk.py" \
        --server "$server" --fake "$fake"
fi

finish
