#!/usr/bin/env bash
# Compile time of one ring / zigzag layer against the group size P: the
# example attention layer (S/P = 64 rows per rank) through cp-lower-to-cpu
# at P = 2, 64 and 1024. The middle steps are one scf.for, so the time and
# the memory should stay flat in P. Usage: bench/ring-compile-time.sh [build]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-8s %6s %10s %10s\n' scheme P seconds max_rss_MB
for scheme in ring zigzag; do
  for p in 2 64 1024; do
    sed "s/shard.grid @cp(shape = 4)/shard.grid @cp(shape = $p)/" \
      "$root/examples/attention.mlir" > "$work/p.mlir"
    /usr/bin/time -f '%e %M' -o "$work/t" "$build/bin/cp-opt" "$work/p.mlir" \
      --cp-lower-to-cpu="scheme=$scheme" -o /dev/null
    read -r seconds kb < "$work/t"
    printf '%-8s %6d %10s %10d\n' "$scheme" "$p" "$seconds" $((kb / 1024))
  done
done
