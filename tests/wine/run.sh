#!/usr/bin/env bash
# The Windows build, run for real: the x86_64-pc-windows-gnu .exe under Wine
# against the fake backend, tried the way a Windows user would
# (docs/setup.md, "Windows"):
#
#   bash tests/wine/run.sh
#
# Installs what it lacks (Debian's wine, wine64 and the MinGW compiler, and
# the Rust target), builds the .exe, the Linux server (whose answers the
# .exe's must match byte for byte), the fake and two test-only Windows
# helpers, then runs cases.py inside a network namespace that holds only
# loopback (tests/lib/kit.sh's stage_run --isolated), so that neither Wine
# nor anything it starts can leave the machine. No display is used: the
# binary is a console program. Needs root for apt-get where a package is
# missing. The builds go to cargo's target/, the logs and each run's Wine
# prefix to target/wine/. Every setup failure is counted as a failure;
# nothing is skipped. The last line is `N passed, M failed`; exit 0 only
# when M is 0.
set -uo pipefail
# shellcheck source=../lib/kit.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/kit.sh"
kit_stage wine "Wine stage" "Windows .exe under Wine (the fake backend on loopback)"
# A package counts as there only when installed: a removed one can leave
# its configuration files behind, which `dpkg -s` still reports.
missing=()
for package in wine wine64 gcc-mingw-w64-x86-64; do
    [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ] || missing+=("$package")
done
need_loopback_namespace "${missing[@]}"
need_tools python3 rustup wine wineboot wineserver winepath x86_64-w64-mingw32-gcc timeout
echo "$(wine --version 2>/dev/null), $(x86_64-w64-mingw32-gcc --version 2>&1 | head -n 1)"

kit_build server fake

note "build the .exe (cargo build --target x86_64-pc-windows-gnu --release)"
exe_started=$SECONDS
if ! rustup target add x86_64-pc-windows-gnu >"$work/rustup.log" 2>&1; then
    setup_fail "rustup could not add the x86_64-pc-windows-gnu target, so there is no .exe to run:"
    tail -n 20 "$work/rustup.log"
    finish
fi
if ! CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc \
    cargo build --locked --release --target x86_64-pc-windows-gnu --bin resmon-mcp >"$work/exe.log" 2>&1; then
    setup_fail "the Windows build failed:"
    tail -n 30 "$work/exe.log"
    finish
fi
echo "resmon-mcp.exe ready in $((SECONDS - exe_started)) s"

# A fresh Wine prefix and scratch folder for each run, removed at its end,
# after its Wine server: one left running (when the limit below stops the
# cases before they end it) would outlive the stage.
run_dir=$(mktemp -d "$work/run.XXXXXX") || { setup_fail "mktemp could not make a run folder in $work"; finish; }
trap 'WINEPREFIX="$run_dir/prefix" timeout 30 wineserver -k >/dev/null 2>&1; rm -rf "$run_dir"' EXIT
mkdir -p "$run_dir/tools"
# Test-only Windows helpers, kept in this run's folder: a stand-in for
# ProcessPrng, which Wine before 8.13 lacks, and a program that holds a file
# open the way another Windows program would.
if ! x86_64-w64-mingw32-gcc -O2 -shared -s -o "$run_dir/tools/bcryptprimitives.dll" \
    "$here/process_prng.c" "$here/process_prng.def" -ladvapi32 >"$work/helpers.log" 2>&1 ||
    ! x86_64-w64-mingw32-gcc -O2 -s -municode -o "$run_dir/tools/hold_open.exe" "$here/hold_open.c" \
        >>"$work/helpers.log" 2>&1; then
    setup_fail "the test-only Windows helpers (tests/wine/*.c) did not build:"
    tail -n 20 "$work/helpers.log"
    finish
fi

export WINE_STAGE_WORK="$run_dir"
export WINE_STAGE_EXE="$root/target/x86_64-pc-windows-gnu/release/resmon-mcp.exe"
export WINE_STAGE_LINUX_BIN="$server"
export WINE_STAGE_FAKE="$fake"
export WINE_STAGE_TOOLS="$run_dir/tools"
export WINE_STAGE_REPO="$root"
stage_run wine-cases 900 --isolated python3 "$here/cases.py"
finish
