#!/usr/bin/env bash
# Real MCP clients against resmon-mcp: each pinned client connects, lists,
# calls and reads errors through its own API, in both eras. Run from anywhere:
#
#   bash tests/clients/run.sh
#
# Pinned clients (versions also asserted by each script):
#   - Python SDK        mcp==2.3.0                             (requirements.txt, venv in target/clients/venv)
#   - TypeScript SDK    @modelcontextprotocol/sdk@1.32.2       (package.json + package-lock.json)
#   - Inspector CLI     @modelcontextprotocol/inspector@2.12.0 (same lock file)
#   - TypeScript client @modelcontextprotocol/client@2.3.1     (the Inspector's own dependency, same
#                       lock; ts_client.mjs uses it for the prompts in the 2026-07-28 era, which SDK 1.x lacks)
#
# Needs: cargo/rustc, python3 with venv (Debian: python3-venv), node >= 20
# and npm, and the package registries (PyPI, npm). Everything it installs
# or builds goes under target/ (target/clients/), nothing into the tree.
#
# Every check prints `PASS …` or `FAIL …`; the last line is `N passed, M failed`.
# Exit status 0 only when M is 0.
set -uo pipefail
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
kit_stage clients "client stage" "MCP clients: Python SDK, TypeScript SDK, MCP Inspector (pinned)"
need_tools cargo rustc python3 node npm timeout

kit_build server fake calls
setup_venv
setup_npm
# ESM resolves packages from the script's folder: run the TS client beside node_modules.
mkdir -p "$npm_dir"
cp "$here/ts_client.mjs" "$npm_dir/ts_client.mjs"

# Each client starts its own fake backend(s) and passes the server nothing
# but RESMON_PORT_FILE and RESMON_STATE_DIR.
if [ "$python_ready" -eq 0 ]; then
    setup_fail "python-sdk did not run: its venv is not ready"
else
    stage_run python-sdk 180 "$venv/bin/python" "$here/py_client.py" --server "$server" --fake "$fake" --calls "$calls"
fi
if [ "$node_ready" -eq 0 ]; then
    # Never a silent skip: each client that could not run is a failure of its own.
    setup_fail "typescript-sdk did not run: its npm packages are not installed"
    setup_fail "inspector did not run: its npm packages are not installed"
else
    stage_run typescript-sdk 120 node "$npm_dir/ts_client.mjs" --server "$server" --fake "$fake" --calls "$calls"
    stage_run inspector 240 python3 "$here/inspector_cli.py" --inspector "$npm_dir/node_modules/.bin/mcp-inspector" \
        --server "$server" --fake "$fake" --calls "$calls"
fi

finish
