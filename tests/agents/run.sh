#!/usr/bin/env bash
# Claude Code and Codex against resmon-mcp, each with a loopback stand-in for
# its model's API so that the CLI's own agent loop makes the MCP calls:
#
#   bash tests/agents/run.sh
#
# Pinned CLIs (versions also asserted by each script), from package.json and
# package-lock.json through tests/npm_locked.py (kit.sh's setup_agent_clis):
#   - Claude Code  @anthropic-ai/claude-code@2.1.332
#   - Codex        @openai/codex@0.171.0
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
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
kit_stage agents "agent CLI stage" "agent CLIs: Claude Code, Codex (pinned; model APIs stood in on loopback)"
need_loopback_namespace
need_tools cargo rustc python3 node npm timeout

kit_build server fake calls
setup_agent_clis

if [ -z "$claude" ]; then
    setup_fail "claude-code did not run: no native claude in ${agent_clis#"$root"/}/node_modules/@anthropic-ai/claude-code-*/"
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
if [ -z "$codex" ]; then
    setup_fail "codex did not run: no ${agent_clis#"$root"/}/node_modules/.bin/codex"
else
    stage_run codex 240 --isolated python3 "$here/codex.py" --codex "$codex" \
        --server "$server" --fake "$fake" --calls "$calls"
fi

finish
