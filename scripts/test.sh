#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs every cp-mlir test.
# Usage: scripts/test.sh [build-dir]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh" "$build"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cmake --build "$build" --target check-cp 2>&1 | tee "$log" || status=$?

passed=$(sed -n 's/^ *Passed: *\([0-9]*\).*/\1/p' "$log" | tail -n 1 || true)
failed=$(grep -E '^ *(Failed|Unresolved|Timed Out): *[0-9]+' "$log" |
  sed -E 's/^ *[A-Za-z ]+: *([0-9]+).*/\1/' | awk '{s += $1} END {print s + 0}' || true)
echo "cp-mlir tests: ${passed:-0} passed, ${failed} failed"
if [ "$status" -ne 0 ] || [ "${passed:-0}" -eq 0 ]; then
  exit 1
fi
