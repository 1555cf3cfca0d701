#!/usr/bin/env bash
# Builds cp-mlir with AddressSanitizer + UndefinedBehaviorSanitizer
# (CP_ENABLE_SANITIZERS) in its own build directory and runs the whole lit
# suite there: every pass, pipeline, tool, C API, Python and MPI integration
# test. Any sanitizer report fails its test.
# Usage: scripts/sanitize.sh [build-dir] (default build-sanitizers)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-sanitizers}
CP_CMAKE_ARGS="-DCP_ENABLE_SANITIZERS=ON" "$root/scripts/setup.sh" "$build"
grep -q '^CP_ENABLE_SANITIZERS:BOOL=ON' "$build/CMakeCache.txt" || {
  echo "sanitize: $build is configured without CP_ENABLE_SANITIZERS" >&2
  exit 1
}
cmake --build "$build" --target check-cp
