#!/usr/bin/env bash
# Claude Code and Codex against resmon-mcp, each with a loopback stand-in for
# its model's API so that the CLI's own agent loop makes the MCP calls:
#
#   bash tests/agents/run.sh
#
# Pinned CLIs (versions also asserted by each script), from package.json and
# package-lock.json through tests/npm_locked.py:
#   - Claude Code  @anthropic-ai/claude-code@2.1.332
#   - Codex        @openai/codex@0.171.0
# Both ship their native program as an optional package per platform; the
# install runs no install script, so the drivers start the native program
# of this platform's package directly.
#
# Drivers, each inside its own network namespace that holds only loopback
# (`unshare -n`, then `ip link set lo up`), so that nothing a CLI tries to
# reach outside (updates, telemetry) can leave the machine:
#   - claude_code.py  registration, what the first request carries, reads
#                     and writes headless, what the model reads;
#   - claude_prompts.py  the server's MCP prompts as Claude Code's slash
#                     commands: listed, run (prompts/get, the text as the
#                     person's message, the calls it names), refused;
#   - toolsearch.py   Claude Code's own ToolSearch asked the search words of
#                     tests/findability/questions.json (found / first figures),
#                     and of the held-out lists (a report each);
#   - codex.py        app-server's tool list, exec's loop, approvals, and a
#                     NOTE of whether it shows MCP prompts.
# Needs root (or the right to make a network namespace), cargo, rustc,
# python3, node >= 20 and npm, and the npm registry. Everything goes under
# target/agents/.
#
# Every check prints `PASS …` or `FAIL …`; the last line is `N passed, M failed`.
# Exit status 0 only when M is 0. Nothing is skipped: a CLI that cannot be
# installed or started is a failure.
set -uo pipefail
echo "== agent CLIs: Claude Code, Codex (pinned; model APIs stood in on loopback)"
export PYTHONDONTWRITEBYTECODE=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/agents"
mkdir -p "$work"
log="$work/agents.log"
: >"$log"

stage_label="agent CLI stage"
# shellcheck source=../lib/tally.sh
source "$root/tests/lib/tally.sh"

cd "$root" || exit 1

need_loopback_namespace
for tool in cargo rustc python3 node npm timeout; do
    command -v "$tool" >/dev/null || { setup_fail "$tool is not installed"; finish; }
done
echo "node $(node --version), npm $(npm --version), $(python3 --version)"

# The server, the fake backend, and tests/it/calls.rs's valid calls as JSON
# (one list of calls for every stage).
build_server_and_calls

setup_npm
# The native programs of this platform's optional packages (never an install script's copy).
claude=$(ls "$npm_dir"/node_modules/@anthropic-ai/claude-code-*/claude 2>/dev/null | head -n 1)
codex="$npm_dir/node_modules/.bin/codex"

if [ "$node_ready" -eq 0 ] || [ -z "$claude" ]; then
    setup_fail "claude-code did not run: no native claude in $npm_dir/node_modules/@anthropic-ai/claude-code-*/"
    setup_fail "claude-prompts did not run: Claude Code is not installed"
    setup_fail "toolsearch did not run: Claude Code is not installed"
else
    stage_run claude-code 240 --isolated python3 "$here/claude_code.py" --claude "$claude" \
        --server "$server" --fake "$fake" --calls "$calls"
    stage_run claude-prompts 240 --isolated python3 "$here/claude_prompts.py" --claude "$claude" \
        --server "$server" --fake "$fake" --calls "$calls"
    stage_run toolsearch 240 --isolated python3 "$here/toolsearch.py" --claude "$claude" \
        --server "$server" --fake "$fake" --questions "$root/tests/findability/questions.json" \
        --held-out "$root/tests/findability/held-out.json" \
        --held-out "$root/tests/findability/held-out-2.json" \
        --held-out "$root/tests/findability/held-out-3.json"
fi
if [ "$node_ready" -eq 0 ] || [ ! -x "$codex" ]; then
    setup_fail "codex did not run: $codex is not installed"
else
    stage_run codex 240 --isolated python3 "$here/codex.py" --codex "$codex" \
        --server "$server" --fake "$fake" --calls "$calls"
fi

finish
