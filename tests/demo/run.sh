#!/usr/bin/env bash
# CI stage: the README's try-it command works on a fresh clone
# (README.md, its opening paragraph: "No resmon yet?").
# The demo checks every answer itself and exits non-zero on the first
# surprise; this script also insists on the tool count it prints.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
echo "== demo (cargo run --release --example demo)"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
cargo run --locked --release --example demo | tee "$out"
grep -q '^  25 tools: 18 read, 7 write' "$out" || { echo "FAIL demo: no '25 tools' line"; exit 1; }
grep -q '^demo passed: 25 tools offered' "$out" || { echo "FAIL demo: no closing line"; exit 1; }
echo "PASS demo"
