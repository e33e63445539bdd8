#!/usr/bin/env bash
# The MCP Bundle, built and launched as a bundle host launches it
# (docs/packaging.md, "How it is tested"):
#
#   bash tests/bundle/run.sh
#
# 1. the xtask's own tests and lints (the root's lint stage covers only the server);
# 2. `mcpb validate` on the manifest template bundle/manifest.json;
# 3. `cargo xtask bundle`: the host bundle, its archive, the registry
#    packages and SHA256SUMS;
# 4. the archives and sums checked (archives.py), and the registry packages
#    (crate, wheel, npm, server.json) against each other and their sources
#    (packages.py);
# 5. every bundle in target/bundle/ unpacked, validated and launched with the
#    official @anthropic-ai/mcpb code, for read_only left at its default,
#    false and true, against the fake backend (launch.mjs);
# 6. 3 to 5 again for `cargo xtask bundle --all`, with cargo-zigbuild and
#    ziglang (PyPI, pinned below) as the cross linker.
#
# The npm packages come from the committed package-lock.json through
# tests/npm_locked.py (its docstring says why the lock is compared per
# platform). Everything goes under target/ (target/bundle-test/).
# Every check prints `PASS …` or `FAIL …`; the last line is `N passed, M failed`.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/bundle-test"
mkdir -p "$work"
passed=0
failed=0
started=$SECONDS

pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() {
    echo "== bundle stage took $((SECONDS - started)) s"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
# Runs a step, shows its output, and counts it as one check.
step() {
    local what="$1"
    shift
    echo "== $what"
    if "$@"; then pass "$what"; else fail "$what (exit $?)"; fi
}
# Runs a script that prints its own PASS/FAIL lines and adds them up; a
# non-zero exit without a FAIL line (a crash) is a failure of its own.
counted() {
    local what="$1" out="$work/$1.out" rc p f
    shift
    echo "== $what"
    timeout --kill-after=10 300 "$@" >"$out" 2>"$work/$what.err"
    rc=$?
    cat "$out"
    p=$(grep -c '^PASS ' "$out")
    f=$(grep -c '^FAIL ' "$out")
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        fail "$what exited with status $rc without reporting a failure; stderr:"
        tail -n 20 "$work/$what.err"
    fi
}

cd "$root" || exit 1
# archives.py and packages.py tally their checks with the test kit (tests/lib/kit).
export PYTHONPATH="$root/tests/lib${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
for tool in cargo node npm python3 timeout; do
    command -v "$tool" >/dev/null || { fail "setup: $tool is not installed"; finish; }
done

step "xtask unit tests" cargo test --locked --package xtask --quiet
step "xtask lint" cargo clippy --locked --package xtask --all-targets --quiet -- -D warnings

echo "== npm install (tests/bundle/package-lock.json)"
npm_dir="$work/npm"
if python3 "$root/tests/npm_locked.py" "$here" "$npm_dir"; then
    mcpb="$npm_dir/node_modules/.bin/mcpb"
    echo "mcpb $("$mcpb" --version)"
    step "mcpb validate bundle/manifest.json (the template)" "$mcpb" validate bundle/manifest.json
else
    # Never a silent skip: without the official toolchain nothing below can be judged.
    fail "setup: the npm packages could not be installed from tests/bundle/package-lock.json"
    finish
fi

step "cargo build --example fake-backend" cargo build --locked --quiet --example fake-backend
# ESM resolves packages from the script's folder: run it beside node_modules.
cp "$here/launch.mjs" "$npm_dir/launch.mjs"

# Checks what one `cargo xtask bundle` run wrote: the archives and sums,
# then every bundle, launched.
check_output() {
    local run="$1" bundle name
    counted "archives-$run" python3 "$here/archives.py" "$root/target/bundle"
    counted "packages-$run" python3 "$here/packages.py" "$root" "$root/target/bundle"
    shopt -s nullglob
    local bundles=("$root"/target/bundle/*.mcpb)
    [ "${#bundles[@]}" -gt 0 ] || fail "$run: cargo xtask bundle wrote no .mcpb"
    for bundle in "${bundles[@]}"; do
        name="$(basename "$bundle" .mcpb)"
        counted "launch-$run-$name" node "$npm_dir/launch.mjs" --bundle "$bundle" \
            --fake "$root/target/debug/examples/fake-backend" --work "$work/$name"
    done
}

# What a person runs on a fresh clone.
step "cargo xtask bundle" cargo xtask bundle
check_output host

# --all, with the cross linker from PyPI. The other targets' standard
# libraries come from rustup's server, which may be out of reach: then one
# loud line, and --all builds and names what it can (it never claims a
# platform it could not build; the launch test checks that).
targets="x86_64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu"
if ! out=$(timeout 300 rustup target add $targets 2>&1); then
    echo "!!!!! rustup target add failed ($(echo "$out" | grep -m1 '^error' || echo "$out" | tail -n 1)): --all builds only the targets already installed !!!!!"
fi
echo "== cargo-zigbuild and ziglang from PyPI (venv in target/bundle-test/zig)"
zig_venv="$work/zig"
zig_pins="cargo-zigbuild==0.24.0 ziglang==0.17.0"
if [ "$(cat "$zig_venv/pins" 2>/dev/null)" != "$zig_pins" ]; then
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    rm -rf "$zig_venv"
    if python3 -m venv "$zig_venv" >"$work/zig.log" 2>&1 &&
        "$zig_venv/bin/pip" install --disable-pip-version-check -q $zig_pins >>"$work/zig.log" 2>&1; then
        echo "$zig_pins" >"$zig_venv/pins"
    else
        fail "setup: pip install $zig_pins failed:"
        tail -n 20 "$work/zig.log"
    fi
fi
step "cargo xtask bundle --all" env PATH="$zig_venv/bin:$PATH" cargo xtask bundle --all
check_output all

finish
