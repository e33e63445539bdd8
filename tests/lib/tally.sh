# Shared by the CI stages that run third-party programs (tests/clients,
# tests/harnesses): a tally of PASS/FAIL lines, setup failures that count
# as failures (never a silent skip), and one way to run a driver with a
# hang guard. Source it after setting `root`, `work`, `log` and `stage_label`.
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
