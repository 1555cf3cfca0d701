#!/usr/bin/env bash
# Compile time against model depth: one function holding N chained causal
# cp.attention layers (the example layer's shapes), each layer's queries
# the previous output and its K and V the two outputs before that (so every
# layer reads distinct K/V), through cp-opt --cp-lower-to-cpu (MLIR only)
# and through cp-compile (down to a linked .so, LLVM included), under every
# scheme, at N = 10, 100, 300 (and 1000 with --long). Prints seconds, peak
# memory and milliseconds per layer; asserts nothing.
# Usage: bench/compile-time.sh [build-dir] [--long] [--scheme=S]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build
depths="10 100 300"
schemes="allgather ulysses hybrid(2) head_tail ring zigzag"
for arg in "$@"; do
  case "$arg" in
    --long) depths="10 100 300 1000" ;;
    --scheme=*) schemes="${arg#*=}" ;;
    *) build="$arg" ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

layers() { # N -> a module with N chained layers, K/V distinct per layer
  local n=$1 t="tensor<1x8x64x32xf32>"
  echo "shard.grid @cp(shape = 4)"
  echo "func.func @model(%x: $t, %k: $t, %v: $t) -> $t {"
  local q="%x" k="%k" v="%v"
  for ((i = 0; i < n; i++)); do
    echo "  %o$i = cp.attention $q, $k, $v on @cp grid_axes = [0] mask = causal : $t, $t, $t -> $t"
    v=$k k=$q q="%o$i"
  done
  echo "  return $q : $t"
  echo "}"
}

printf '%-10s %-12s %6s %9s %11s %14s\n' scheme stage N seconds max_rss_MB ms_per_layer
for scheme in $schemes; do
for n in $depths; do
  layers "$n" > "$work/m.mlir"
  /usr/bin/time -f '%e %M' -o "$work/t" "$build/bin/cp-opt" "$work/m.mlir" \
    "--cp-lower-to-cpu=scheme=$scheme" -o /dev/null
  read -r s kb < "$work/t"
  printf '%-10s %-12s %6d %9s %11d %14.1f\n' "$scheme" cp-opt "$n" "$s" $((kb / 1024)) \
    "$(awk -v s="$s" -v n="$n" 'BEGIN { print s * 1000 / n }')"
  /usr/bin/time -f '%e %M' -o "$work/t" "$build/bin/cp-compile" "$work/m.mlir" \
    "--scheme=$scheme" -o "$work/m.so"
  read -r s kb < "$work/t"
  printf '%-10s %-12s %6d %9s %11d %14.1f\n' "$scheme" cp-compile "$n" "$s" $((kb / 1024)) \
    "$(awk -v s="$s" -v n="$n" 'BEGIN { print s * 1000 / n }')"
done
done
echo "target: cp-compile of N = 1000 in < 15 s and < 2 GB under every scheme, linear in N"
