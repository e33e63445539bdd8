#!/usr/bin/env bash
# Cross-target check (docs/packaging.md, "How it is tested"): the server,
# its tests and examples must compile for Windows and macOS, so that a
# unix-only API cannot slip in unguarded. Run from anywhere:
#
#   bash tests/cross/run.sh
#
# `cargo check` needs only each target's standard library, not a linker.
# That library comes from rustup's own server, which is not a package
# registry and may be out of reach: then this stage says so in one loud
# line per target and passes, so the rest of CI goes on. A target that is
# installed and does not compile fails the stage.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1

passed=0
failed=0
started=$SECONDS
for target in x86_64-pc-windows-gnu aarch64-apple-darwin; do
    echo "== cargo check --all-targets --target $target"
    if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
        if ! command -v rustup >/dev/null; then
            why="rustup is not installed"
        elif out=$(timeout 300 rustup target add "$target" 2>&1); then
            why=""
        else
            why="rustup target add $target failed: $(echo "$out" | grep -m1 '^error' || echo "$out" | tail -n 1)"
        fi
        if [ -n "$why" ]; then
            echo "!!!!! NOT CHECKED for $target ($why); unix-only APIs are not being caught for it !!!!!"
            continue
        fi
    fi
    if cargo check --locked --quiet --all-targets --target "$target"; then
        passed=$((passed + 1))
        echo "PASS cross-check $target"
    else
        failed=$((failed + 1))
        echo "FAIL cross-check $target: the server, a test or an example does not compile for it"
    fi
done
echo "== cross-check stage took $((SECONDS - started)) s"
# No tally when nothing ran: a "0 passed" line would read as a run with no test.
if [ $((passed + failed)) -gt 0 ]; then
    echo "$passed passed, $failed failed"
else
    echo "!!!!! cross-check: no target could be checked !!!!!"
fi
[ "$failed" -eq 0 ]
