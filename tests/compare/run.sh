#!/usr/bin/env bash
# Builds resmon-mcp at two commits and compares what `resmon-mcp call`
# prints for every case of examples/compare.rs (every call of
# tests/it/calls.rs as a success, one way to each error code, and each call
# with each of the fake's faults on each route it sends to: broken, reset,
# stalled, trickled, oversized and redirected answers, an interim 100, no
# answer before the deadline, the guard's 401 and 403, 400 and 422
# refusals, and a token planted in an answer), against the fake of this
# checkout. The header of examples/compare.rs lists what it covers.
#
#   tests/compare/run.sh BEFORE AFTER [--only TEXT]
#
# BEFORE and AFTER are any commits (`main`, `HEAD`, a hash). Each is checked
# out in a temporary worktree and built there, both into one target folder
# (COMPARE_TARGET_DIR, or a temporary one), so the dependencies are built
# once; naming a folder that already holds them saves building them again.
# The comparison itself is built wherever cargo builds for the caller. The
# cases take about three minutes on a two-core machine, most of it spent
# waiting for deadlines. Prints each case that differs; exits 1 when one
# does, 0 when none does, 2 when it could not run.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 BEFORE AFTER [--only TEXT]" >&2
    exit 2
fi
before_rev=$1
after_rev=$2
shift 2

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/resmon-compare.XXXXXX")
target="${COMPARE_TARGET_DIR:-$work/target}"
cleanup() {
    for side in before after; do
        if [ -d "$work/$side" ]; then
            git -C "$root" worktree remove --force "$work/$side" >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$work"
}
trap cleanup EXIT

build() {
    local side=$1 rev=$2
    git -C "$root" worktree add --detach --quiet "$work/$side" "$rev"
    echo "building $side ($rev = $(git -C "$root" rev-parse --short "$rev"))" >&2
    CARGO_TARGET_DIR="$target" cargo build --quiet --locked --bin resmon-mcp --manifest-path "$work/$side/Cargo.toml"
    cp "$target/debug/resmon-mcp" "$work/resmon-mcp-$side"
}
build before "$before_rev"
build after "$after_rev"

# The cases and the fake come from this checkout, whichever commits are compared.
# It is built where the caller's cargo builds (CARGO_TARGET_DIR, a configured
# target-dir, or target/), so the binary is run from the path cargo reports.
echo "building the comparison (examples/compare.rs)" >&2
compare=$(cd "$root" && cargo build --quiet --locked --example compare --message-format=json-render-diagnostics |
    sed -n 's/.*"executable":"\([^"]*\/compare\)".*/\1/p' | tail -n 1)
if [ -z "$compare" ] || [ ! -x "$compare" ]; then
    echo "$0: cargo did not report where it built examples/compare.rs" >&2
    exit 2
fi
"$compare" --before "$work/resmon-mcp-before" --after "$work/resmon-mcp-after" "$@"
