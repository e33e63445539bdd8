#!/usr/bin/env bash
# Fuzz-crate check (docs/fuzzing.md, "Fuzzing (cargo-fuzz, nightly)").
# fuzz/ is a workspace of its own that the root build never compiles, so a
# change to the library's API could break the fuzz targets without anyone
# noticing. This stage compiles them on the
# stable toolchain, against the fuzz crate's own lock, warnings denied, and
# checks their formatting. Run from anywhere:
#
#   bash tests/fuzzcheck/run.sh
#
# `cargo check` is enough: nightly and cargo-fuzz are needed only to build
# the targets instrumented and run them (docs/fuzzing.md), and nothing in
# the targets or their dependencies depends on `--cfg fuzzing`. The build
# script of libfuzzer-sys compiles libFuzzer's C++ sources even for a check,
# so a C++ compiler must be present: g++ is installed when none is.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1

started=$SECONDS
fail() {
    echo "!!!!! FAIL fuzz-check: $1 !!!!!"
    exit 1
}

if ! command -v c++ >/dev/null 2>&1; then
    echo "== installing g++ (libfuzzer-sys compiles libFuzzer even for a check)"
    { apt-get update -qq && apt-get install -y -qq g++ >/dev/null; } \
        || fail "no C++ compiler, and apt-get could not install g++"
fi

echo "== cargo fmt --check (fuzz/)"
cargo fmt --manifest-path fuzz/Cargo.toml -- --check \
    || fail "fuzz/ is not formatted; run: cargo fmt --manifest-path fuzz/Cargo.toml"

echo "== cargo check --locked --bins (fuzz/, warnings denied)"
RUSTFLAGS="-D warnings" cargo check --manifest-path fuzz/Cargo.toml --locked --quiet --bins \
    || fail "the fuzz targets do not compile against the library (or fuzz/Cargo.lock is stale: run cargo update --manifest-path fuzz/Cargo.toml --workspace)"

echo "PASS fuzz-check: both targets compile ($((SECONDS - started)) s)"
