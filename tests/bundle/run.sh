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
#    false and true, against the fake backend (launch.mjs), which holds each
#    listing to the write tools named in tests/it/calls.rs (calls.json, built
#    by the kit with the debug server);
# 6. 3 to 5 again for `cargo xtask bundle --all`, with cargo-zigbuild and
#    ziglang (PyPI, pinned below) as the cross linker.
#
# The npm packages come from the committed package-lock.json through
# tests/npm_locked.py (its docstring says why the lock is compared per
# platform). The stage runs on the kit (tests/lib/kit.sh); everything goes
# under target/ (target/bundle-test/, beside the bundles in target/bundle/).
# Every check prints `PASS …` or `FAIL …`; the last line is `N passed, M failed`.
# Nothing is skipped: a tool that cannot be installed is a failure.
set -uo pipefail
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
# Not target/bundle: that is where cargo xtask bundle writes.
kit_stage bundle-test "bundle stage" "bundle stage: the bundles built, then launched by the official mcpb code"
need_tools cargo rustc node npm python3 timeout

# Shown whatever the outcome, as each says what it built or found.
stage_check --show xtask-test "xtask unit tests" "xtask unit tests" cargo test --locked --package xtask --quiet
stage_check --show xtask-lint "xtask lint" "xtask lint" \
    cargo clippy --locked --package xtask --all-targets --quiet -- -D warnings

setup_npm
# Never a silent skip: without the official toolchain nothing below can be judged.
[ "$node_ready" -eq 1 ] || finish
mcpb="$npm_dir/node_modules/.bin/mcpb"
echo "mcpb $("$mcpb" --version)"
stage_check --show mcpb-validate "mcpb validate bundle/manifest.json (the template)" \
    "mcpb validate bundle/manifest.json (the template)" "$mcpb" validate bundle/manifest.json

stage_check --show build-fake "cargo build --example fake-backend" "cargo build --example fake-backend" \
    cargo build --locked --quiet --example fake-backend
# The write tools, by name, for launch.mjs to hold a listing to.
kit_build calls
# ESM resolves packages from the script's folder: run it beside node_modules.
cp "$here/launch.mjs" "$npm_dir/launch.mjs"

# Checks what one `cargo xtask bundle` run wrote: the archives and sums,
# then every bundle, launched.
check_output() {
    local run="$1" bundle name
    stage_run "archives-$run" 300 python3 "$here/archives.py" "$root/target/bundle"
    stage_run "packages-$run" 300 python3 "$here/packages.py" "$root" "$root/target/bundle"
    shopt -s nullglob
    local bundles=("$root"/target/bundle/*.mcpb)
    [ "${#bundles[@]}" -gt 0 ] || setup_fail "$run: cargo xtask bundle wrote no .mcpb to launch"
    for bundle in "${bundles[@]}"; do
        name="$(basename "$bundle" .mcpb)"
        stage_run "launch-$run-$name" 300 node "$npm_dir/launch.mjs" --bundle "$bundle" \
            --fake "$root/target/debug/examples/fake-backend" --work "$work/$name" --calls "$calls"
    done
}

# The targets first, so that both runs below build the same binaries on
# every machine: with the musl target, `cargo xtask bundle` builds the static
# Linux binary that the wheel and the npm packages need; without it, it
# writes neither and says why (xtask's unit tests hold that rule), and the
# host run would check a different set of files than on a machine that had
# the target already. The other targets' standard libraries come from
# rustup's server, which may be out of reach: then one loud line, and --all
# builds and names what it can (it never claims a platform it could not
# build; the launch test checks that).
targets=(x86_64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu)
if ! out=$(timeout 300 rustup target add "${targets[@]}" 2>&1); then
    echo "!!!!! rustup target add failed ($(echo "$out" | grep -m1 '^error' || echo "$out" | tail -n 1)): the bundles build only the targets already installed !!!!!"
fi

# What a person runs on a fresh clone.
stage_check --show xtask-bundle "cargo xtask bundle" "cargo xtask bundle" cargo xtask bundle
check_output host

# --all, with the cross linker from PyPI.
note "cargo-zigbuild and ziglang from PyPI (venv in target/bundle-test/zig)"
zig_venv="$work/zig"
zig_pins=(cargo-zigbuild==0.24.0 ziglang==0.17.0)
if [ "$(cat "$zig_venv/pins" 2>/dev/null)" != "${zig_pins[*]}" ]; then
    if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    rm -rf "$zig_venv"
    if python3 -m venv "$zig_venv" >"$work/zig.log" 2>&1 &&
        "$zig_venv/bin/pip" install --disable-pip-version-check -q "${zig_pins[@]}" >>"$work/zig.log" 2>&1; then
        echo "${zig_pins[*]}" >"$zig_venv/pins"
    else
        setup_fail "pip install ${zig_pins[*]} failed:"
        tail -n 20 "$work/zig.log"
    fi
fi
stage_check --show xtask-bundle-all "cargo xtask bundle --all" "cargo xtask bundle --all" \
    env PATH="$zig_venv/bin:$PATH" cargo xtask bundle --all
check_output all

finish
