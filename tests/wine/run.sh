#!/usr/bin/env bash
# The Windows build, run for real: the x86_64-pc-windows-gnu .exe under Wine
# against the fake backend, tried the way a Windows user would
# (docs/setup.md, "Windows").
#
# Installs what it needs (Debian's wine, wine64 and the MinGW compiler, and
# the Rust target), builds the .exe, then runs tests/wine/cases.py inside a
# network namespace that holds only loopback, so neither Wine nor anything it
# starts can leave the machine. No display is used: the binary is a console
# program. Every setup failure fails the stage loudly; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)

die() {
  echo "WINE STAGE FAILED: $*" >&2
  exit 1
}

echo "== Windows .exe under Wine: install"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || die "apt-get update failed"
apt-get install -y -qq wine wine64 gcc-mingw-w64-x86-64 >/dev/null \
  || die "apt-get could not install wine, wine64 and gcc-mingw-w64-x86-64"
rustup target add x86_64-pc-windows-gnu >/dev/null 2>&1 \
  || die "rustup could not add the x86_64-pc-windows-gnu target, so there is no .exe to run"

echo "== Windows .exe under Wine: build"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
cargo build --locked --release --target x86_64-pc-windows-gnu --bin resmon-mcp \
  || die "the Windows build failed"
cargo build --locked --bin resmon-mcp --example fake-backend || die "the Linux build failed"

work=$(mktemp -d /tmp/resmon-wine.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tools"
# Test-only helpers, built here and kept in this run's own folder and prefix.
x86_64-w64-mingw32-gcc -O2 -shared -s -o "$work/tools/bcryptprimitives.dll" \
  tests/wine/process_prng.c tests/wine/process_prng.def -ladvapi32 \
  || die "could not build the ProcessPrng stand-in"
x86_64-w64-mingw32-gcc -O2 -s -municode -o "$work/tools/hold_open.exe" tests/wine/hold_open.c \
  || die "could not build hold_open.exe"

unshare -n true 2>/dev/null || die "unshare -n is not permitted here, so Wine cannot be fenced off the network"

echo "== Windows .exe under Wine: cases (loopback-only network namespace)"
export WINE_STAGE_WORK="$work"
export WINE_STAGE_EXE="$PWD/target/x86_64-pc-windows-gnu/release/resmon-mcp.exe"
export WINE_STAGE_LINUX_BIN="$PWD/target/debug/resmon-mcp"
export WINE_STAGE_FAKE="$PWD/target/debug/examples/fake-backend"
export WINE_STAGE_TOOLS="$work/tools"
export WINE_STAGE_REPO="$PWD"
status=0
unshare -n -- bash -c 'ip link set lo up && exec python3 tests/wine/cases.py' || status=$?
echo "Wine stage took $(($(date +%s) - started)) s"
exit "$status"
