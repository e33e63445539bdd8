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
