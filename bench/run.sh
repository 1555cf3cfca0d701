#!/usr/bin/env bash
# Local attention throughput of the compiled cp.local_attention on this
# machine, next to its FMA peak and the naive full-score attention
# (cp-bench-attention). Prints figures; asserts nothing.
# Usage: bench/run.sh [build-dir] [-- cp-lower-to-cpu options, e.g. "tile-q=64"]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
options=""
while (($#)); do
  case "$1" in
    --) shift; options="$*"; break ;;
    *) build="$1"; shift ;;
  esac
done
"$root/scripts/setup.sh" "$build" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/bin/cp-bench-attention" --emit-mlir > "$work/bench.mlir"
"$build/bin/cp-compile" "$work/bench.mlir" --pipeline-options="$options" -o "$work/bench.so"
echo "cp-lower-to-cpu options: ${options:-defaults}"
"$build/bin/cp-bench-attention" --lib "$work/bench.so"
echo
echo "targets: >= 40% of the FMA peak for none at S_local=4096 D=128;"
echo "         causal >= 1.7x faster than none at the same shape"
