# The kit of the CI stages that run outside programs (tests/clients,
# tests/conformance, tests/wine, tests/bundle, tests/install,
# tests/harnesses, tests/agents), sourced by each run.sh so that a stage says only which
# programs it installs and which drivers it runs. The drivers' own kit is
# the Python package beside this file (tests/lib/kit/), which starts and
# stops the fake for each test of a Python driver; kit_fake_start below does
# it for a stage's shell (conformance), and the Node drivers start their own.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
#   kit_stage NAME LABEL HEADLINE
#
# sets `here` (the stage's folder), `root`, `work` (target/NAME), `log` and
# `stage_label`, puts tests/lib on PYTHONPATH, and works from the root.
# Then, as the stage needs them:
#
#   need_tools TOOL...              each on PATH, or the stage ends, failed
#   need_loopback_namespace [PKG..] `unshare -n` can make a loopback-only namespace
#   kit_build server|fake|calls...  the server, the fake, tests/it/calls.rs as JSON
#   kit_fake_start FAKE STATE_DIR   the fake running (a shell stage's own), kit_fake_stop
#   setup_venv                      $here/requirements.txt in a venv
#   setup_npm                       $here/package-lock.json under the drift rule
#   setup_agent_clis                Claude Code and Codex from tests/agents' lock
#   stage_run NAME LIMIT_S [--isolated] COMMAND...
#   stage_check [--show] [--drop REGEX] NAME PASS_TEXT FAIL_TEXT COMMAND...
#   finish
#
# stage_run runs COMMAND (with --isolated: inside a network namespace that
# holds only loopback, so that nothing a program tries to reach outside,
# updates or telemetry, can leave the machine), shows and logs its output,
# and adds its PASS/FAIL lines to the totals. A driver that exits non-zero
# without reporting a failure (a crash, a timeout), or that reports no check
# at all, counts as one failure. A setup that fails counts as a failure too,
# never as a skip. `finish` prints the closing `N passed, M failed` line and
# exits 0 only when M is 0 and the stage counted at least one check.

passed=0
failed=0
started=$SECONDS

# How a stage makes a network namespace that holds only loopback: a root
# shell makes one directly; anyone else inside a user namespace of its own,
# where it is root (--map-root-user), so that `ip link set lo up` may run.
if [ "$(id -u)" -eq 0 ]; then
    loopback_unshare=(unshare -n)
else
    loopback_unshare=(unshare --map-root-user -n)
fi

note() { echo "== $*"; }

setup_fail() {
    failed=$((failed + 1))
    echo "FAIL setup $*" | tee -a "${log:-/dev/null}"
}

finish() {
    # A stage that counted nothing has shown nothing: that is no pass.
    [ $((passed + failed)) -gt 0 ] || setup_fail "the $stage_label ran no check at all"
    echo "== $stage_label took $((SECONDS - started)) s (full log: ${log#"$root"/})"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

kit_stage() {
    here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
    root="$(cd "$here/../.." && pwd)"
    work="$root/target/$1"
    log="$work/$1.log"
    stage_label="$2"
    mkdir -p "$work"
    : >"$log"
    echo "== $3"
    # The drivers import the kit from tests/lib; no __pycache__ in the tree.
    export PYTHONPATH="$root/tests/lib${PYTHONPATH:+:$PYTHONPATH}"
    export PYTHONDONTWRITEBYTECODE=1
    cd "$root" || exit 1
}

need_tools() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { setup_fail "$tool is not installed"; finish; }
    done
    local versions
    versions="$(python3 --version 2>&1)"
    [[ " $* " == *" npm "* ]] && versions="npm $(npm --version 2>&1), $versions"
    [[ " $* " == *" node "* ]] && versions="node $(node --version 2>&1), $versions"
    echo "$versions"
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
        timeout --kill-after=10 "$limit" "${loopback_unshare[@]}" -- bash -c 'ip link set lo up && exec "$@"' isolated "$@" \
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
    local timed_out=""
    [ "$rc" -eq 124 ] && timed_out=" (timed out after $limit s)"
    if [ $((p + f)) -eq 0 ]; then
        # A driver that checked nothing proves nothing, whatever its status.
        setup_fail "$name reported no checks (exit $rc$timed_out); stderr:"
        tail -n 20 "$work/$name.err" | tee -a "$log"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        setup_fail "$name exited with status $rc without reporting a failure$timed_out; stderr:"
        tail -n 20 "$work/$name.err" | tee -a "$log"
    fi
    echo "-- $name: $p passed, $f failed, exit $rc, $((SECONDS - t0)) s"
}

# stage_check [--show] [--drop REGEX] NAME PASS_TEXT FAIL_TEXT COMMAND...:
# one check of the stage's own, run here: `PASS PASS_TEXT` when COMMAND
# exits 0, else `FAIL FAIL_TEXT (exit N):` and the last lines of what it
# printed, leaving out the lines REGEX matches (noise that would bury the
# error). With --show, all it printed is shown before the verdict, whatever
# the outcome. What it printed is kept in $work/NAME.out and added to the
# log with the verdict.
stage_check() {
    local show=0 drop=""
    while [ "$#" -gt 0 ]; do
        case "$1" in
        --show) show=1 ;;
        --drop) drop="$2" && shift ;;
        *) break ;;
        esac
        shift
    done
    local name="$1" pass_text="$2" fail_text="$3" out rc
    shift 3
    out="$work/$name.out"
    note "$name"
    "$@" >"$out" 2>&1
    rc=$?
    cat "$out" >>"$log"
    [ "$show" -eq 1 ] && cat "$out"
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS $pass_text" | tee -a "$log"
    else
        failed=$((failed + 1))
        if [ "$show" -eq 1 ]; then
            echo "FAIL $fail_text (exit $rc)" | tee -a "$log"
        else
            echo "FAIL $fail_text (exit $rc):" | tee -a "$log"
            if [ -n "$drop" ]; then grep -v -e "$drop" "$out"; else cat "$out"; fi | tail -n 30
        fi
    fi
}

# A venv at "$work/venv" from "$here/requirements.txt" (pip checks each
# file's hash where the file gives them), reused while the requirements are
# unchanged. Sets python_ready (1 or 0) and venv.
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

# npm_lock SOURCE INTO: the npm packages of SOURCE's committed lock,
# installed into INTO by tests/npm_locked.py, which holds the drift rule
# (the lock compared entry by entry for this platform, an install reused
# while the lock is unchanged). A failure is counted; returns its status.
npm_lock() {
    local source="$1" into="$2" t0=$SECONDS
    note "npm install (${source#"$root"/}/package-lock.json)"
    if python3 "$root/tests/npm_locked.py" "$source" "$into" >"$work/npm-$(basename "$source").log" 2>&1; then
        cat "$work/npm-$(basename "$source").log"
        echo "npm packages ready in $((SECONDS - t0)) s"
        return 0
    fi
    cat "$work/npm-$(basename "$source").log"
    setup_fail "npm packages could not be installed from ${source#"$root"/}/package-lock.json (above)"
    return 1
}

# The stage's own lock, into "$work/npm". Sets node_ready (1 or 0) and npm_dir.
setup_npm() {
    npm_dir="$work/npm"
    node_ready=1
    npm_lock "$here" "$npm_dir" || node_ready=0
}

# Claude Code and Codex, pinned in tests/agents' lock (the agents and the
# install stage both run them), into target/agents/npm. Both ship their
# native program as an optional package per platform and the install runs
# no install script, so `claude` is this platform's native program itself.
# Sets agent_clis (the folder), claude and codex, each empty when it is not
# installed.
setup_agent_clis() {
    agent_clis="$root/target/agents/npm"
    npm_lock "$root/tests/agents" "$agent_clis"
    claude=$(ls "$agent_clis"/node_modules/@anthropic-ai/claude-code-*/claude 2>/dev/null | head -n 1)
    codex="$agent_clis/node_modules/.bin/codex"
    [ -x "$codex" ] || codex=""
}

# need_loopback_namespace [APT_PACKAGE_FOR_A_MISSING_NEED...]
# Installs what a stage that runs programs inside `unshare -n` needs and is
# missing (util-linux, iproute2, and any package the caller names), then
# checks that a namespace holding only loopback can be made (as root, or
# through a user namespace: loopback_unshare above). A stage that cannot
# make one ends here, counted as failed.
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
    if ! "${loopback_unshare[@]}" -- bash -c 'ip link set lo up' 2>"$work/unshare.err"; then
        setup_fail "cannot make a loopback-only network namespace with ${loopback_unshare[*]} (it needs root, or unprivileged user namespaces):"
        tee -a "$log" <"$work/unshare.err"
        finish
    fi
}

# kit_fake_start FAKE STATE_DIR: the fake resmon for a stage that starts it
# from the shell (the Python drivers use tests/lib/kit/fake.py), in the
# background with its stdin held open on fd 3, since closing that is its
# stop signal (kit_fake_stop). Waits up to 30 s for its two lines and
# exports them (RESMON_PORT_FILE, RESMON_STATE_DIR) for the server to find
# it. Returns 1 with the reason in kit_fake_failure when it did not start.
kit_fake_start() {
    local fake="$1" state="$2" port_file state_dir
    rm -f "$work/fake.stdin"
    if ! mkfifo "$work/fake.stdin"; then
        kit_fake_failure="mkfifo failed in $work"
        return 1
    fi
    "$fake" --state-dir "$state" <"$work/fake.stdin" >"$work/fake.out" 2>"$work/fake.err" &
    exec 3>"$work/fake.stdin"
    for _ in $(seq 300); do
        [ "$(grep -c '^RESMON_' "$work/fake.out" 2>/dev/null)" = 2 ] && break
        sleep 0.1
    done
    port_file="$(sed -n 's/^RESMON_PORT_FILE=//p' "$work/fake.out")"
    state_dir="$(sed -n 's/^RESMON_STATE_DIR=//p' "$work/fake.out")"
    if [ -z "$port_file" ] || [ -z "$state_dir" ]; then
        kit_fake_failure="the fake backend did not print its two lines within 30 s: $(tail -n 5 "$work/fake.err")"
        return 1
    fi
    export RESMON_PORT_FILE="$port_file" RESMON_STATE_DIR="$state_dir"
}

kit_fake_stop() {
    exec 3>&- 2>/dev/null
}

# kit_build WHAT...: builds only what is named, so that a broken unrelated
# example cannot stop a stage: `server` (sets server), `fake` (the fake
# resmon, sets fake), `calls` (tests/it/calls.rs, the one list of valid
# calls, of calls the server refuses and of the write tools, turned into
# JSON through tests/clients/dump_calls.rs; sets calls).
# A failure ends the stage, counted as failed.
kit_build() {
    local what=" $* " targets=() t0=$SECONDS
    [[ "$what" == *" server "* || "$what" == *" calls "* ]] && targets+=(--bin resmon-mcp)
    [[ "$what" == *" fake "* ]] && targets+=(--example fake-backend)
    note "build (cargo build ${targets[*]})"
    if ! cargo build --locked "${targets[@]}" --message-format=json-render-diagnostics \
        >"$work/build.json" 2>"$work/build.err"; then
        setup_fail "cargo build failed:"
        tail -n 30 "$work/build.err"
        finish
    fi
    server="$root/target/debug/resmon-mcp"
    fake="$root/target/debug/examples/fake-backend"
    [[ "$what" == *" calls "* ]] && dump_calls
    echo "$* ready in $((SECONDS - t0)) s"
}

dump_calls() {
    local serde_json_rlib
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
    echo "$(grep -c '"tool":' "$calls") calls from tests/it/calls.rs"
}
