# Shared by the CI stages that run third-party programs (tests/clients,
# tests/harnesses, tests/agents): a tally of PASS/FAIL lines, setup failures
# that count as failures (never a silent skip), one way to run a driver with
# a hang guard, and the setup they share (a loopback-only namespace; the
# server, the fake and the call list built once the same way). Source it
# after setting `root`, `work`, `log` and `stage_label`.
#
#   stage_run NAME LIMIT_S [--isolated] COMMAND...
#
# runs COMMAND (with --isolated: inside a loopback-only network namespace),
# shows and logs its output, and adds its PASS/FAIL lines to the totals. A
# driver that exits non-zero without reporting a failure (a crash, a
# timeout) counts as one failure. `finish` prints the closing
# `N passed, M failed` line and exits 0 only when M is 0.

passed=0
failed=0
started=$SECONDS

note() { echo "== $*"; }

setup_fail() {
    failed=$((failed + 1))
    echo "FAIL setup $*"
}

finish() {
    echo "== $stage_label took $((SECONDS - started)) s (full log: ${log#"$root"/})"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

stage_run() {
    local name="$1" limit="$2"
    shift 2
    local isolated=0
    if [ "${1:-}" = "--isolated" ]; then
        isolated=1
        shift
    fi
    local out="$work/$name.out" t0=$SECONDS rc
    if [ "$isolated" -eq 1 ]; then
        note "$name (inside unshare -n, loopback only)"
        timeout --kill-after=10 "$limit" unshare -n -- bash -c 'ip link set lo up && exec "$@"' isolated "$@" \
            </dev/null >"$out" 2>"$work/$name.err"
    else
        note "$name"
        timeout --kill-after=10 "$limit" "$@" >"$out" 2>"$work/$name.err"
    fi
    rc=$?
    cat "$out"
    cat "$out" >>"$log"
    local p f
    p=$(grep -c '^PASS ' "$out")
    f=$(grep -c '^FAIL ' "$out")
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        setup_fail "$name exited with status $rc without reporting a failure$([ "$rc" -eq 124 ] && echo " (timed out after $limit s)"); stderr:"
        tail -n 20 "$work/$name.err"
    fi
    echo "-- $name: $p passed, $f failed, exit $rc, $((SECONDS - t0)) s"
}

# A venv at "$work/venv" from "$here/requirements.txt", reused while the
# requirements are unchanged. Sets python_ready (1 or 0) and venv; a failure
# is counted as a setup failure, never a skip.
setup_venv() {
    note "python venv (requirements.txt)"
    local t0=$SECONDS
    venv="$work/venv"
    python_ready=1
    if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
        rm -rf "$venv"
        if python3 -m venv "$venv" >"$work/venv.log" 2>&1 &&
            "$venv/bin/pip" install --disable-pip-version-check -q -r "$here/requirements.txt" >>"$work/venv.log" 2>&1; then
            cp "$here/requirements.txt" "$venv/requirements.txt"
        else
            python_ready=0
            setup_fail "python venv or pip install failed (is python3-venv installed?):"
            tail -n 20 "$work/venv.log"
        fi
    fi
    echo "python venv ready in $((SECONDS - t0)) s"
}

# The npm packages of "$here"'s committed lock, installed into
# "$work/npm" by tests/npm_locked.py (which says why the lock is compared
# per platform). Sets node_ready (1 or 0) and npm_dir.
setup_npm() {
    note "npm install (package-lock.json)"
    local t0=$SECONDS
    npm_dir="$work/npm"
    node_ready=1
    if ! python3 "$root/tests/npm_locked.py" "$here" "$npm_dir" >"$work/npm.log" 2>&1; then
        node_ready=0
        setup_fail "npm packages could not be installed from ${here#"$root"/}/package-lock.json:"
    fi
    cat "$work/npm.log"
    echo "npm packages ready in $((SECONDS - t0)) s"
}

# need_loopback_namespace [APT_PACKAGE_FOR_A_MISSING_NEED...]
# Installs what a stage that runs programs inside `unshare -n` needs and is
# missing (util-linux, iproute2, and any package the caller names), then
# checks that a namespace holding only loopback can be made. A stage that
# cannot make one ends here, counted as failed.
need_loopback_namespace() {
    local missing=("$@")
    command -v unshare >/dev/null || missing+=(util-linux)
    command -v ip >/dev/null || missing+=(iproute2)
    if [ "${#missing[@]}" -gt 0 ]; then
        note "apt-get install ${missing[*]}"
        if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >"$work/apt.log" 2>&1; then
            setup_fail "apt-get install ${missing[*]} failed:"
            tail -n 20 "$work/apt.log"
        fi
    fi
    for tool in unshare ip; do
        command -v "$tool" >/dev/null || { setup_fail "$tool is not installed"; finish; }
    done
    if ! unshare -n -- bash -c 'ip link set lo up' 2>"$work/unshare.err"; then
        setup_fail "cannot make a loopback-only network namespace (unshare -n needs root):"
        cat "$work/unshare.err"
        finish
    fi
}

# build_server_and_calls
# Builds the server and the fake (only those two targets, so a broken
# unrelated example cannot stop a stage) and turns tests/it/calls.rs, the one
# list of valid calls, into JSON through tests/clients/dump_calls.rs. Sets
# `server`, `fake` and `calls`; a failure ends the stage, counted as failed.
build_server_and_calls() {
    note "build (cargo build --bin resmon-mcp --example fake-backend)"
    local t0=$SECONDS serde_json_rlib
    if ! cargo build --locked --bin resmon-mcp --example fake-backend --message-format=json-render-diagnostics \
        >"$work/build.json" 2>"$work/build.err"; then
        setup_fail "cargo build failed:"
        tail -n 30 "$work/build.err"
        finish
    fi
    server="$root/target/debug/resmon-mcp"
    fake="$root/target/debug/examples/fake-backend"
    serde_json_rlib=$(python3 - "$work/build.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message["target"]["name"] == "serde_json":
        print(next(f for f in message["filenames"] if f.endswith(".rlib")))
        break
PY
)
    if [ -z "$serde_json_rlib" ]; then
        setup_fail "cargo did not report a serde_json rlib to build dump_calls.rs against"
        finish
    fi
    if ! rustc --edition 2024 --crate-type bin -o "$work/dump-calls" "$root/tests/clients/dump_calls.rs" \
        --extern serde_json="$serde_json_rlib" -L dependency="$root/target/debug/deps" 2>"$work/dump-calls.err"; then
        setup_fail "tests/clients/dump_calls.rs did not compile:"
        cat "$work/dump-calls.err"
        finish
    fi
    calls="$work/calls.json"
    if ! "$work/dump-calls" >"$calls"; then
        setup_fail "dump-calls failed"
        finish
    fi
    echo "server, fake and $(grep -c '"tool":' "$calls") calls from tests/it/calls.rs ready in $((SECONDS - t0)) s"
}
