#!/usr/bin/env bash
# Compile time of one layer against the group size P: the example attention
# layer (S/P = 64 rows per rank) through cp-lower-to-cpu and
# cp-lower-to-nvvm (format=isa) at P = 2, 64 and 1024, for ring and zigzag
# (their middle steps are one scf.for) and allgather (its P gathered blocks
# are unpacked by one copy). Time and memory should stay flat in P.
# Usage: bench/ring-compile-time.sh [build]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-10s %-8s %6s %10s %10s\n' pipeline scheme P seconds max_rss_MB
for pipeline in cpu nvvm; do
  for scheme in ring zigzag allgather; do
    for p in 2 64 1024; do
      sed "s/shard.grid @cp(shape = 4)/shard.grid @cp(shape = $p)/" \
        "$root/examples/attention.mlir" > "$work/p.mlir"
      if [ "$pipeline" = cpu ]; then
        flag="--cp-lower-to-cpu=scheme=$scheme"
      else
        flag="--cp-lower-to-nvvm=scheme=$scheme format=isa"
      fi
      /usr/bin/time -f '%e %M' -o "$work/t" "$build/bin/cp-opt" "$work/p.mlir" \
        "$flag" -o /dev/null
      read -r seconds kb < "$work/t"
      printf '%-10s %-8s %6d %10s %10d\n' "$pipeline" "$scheme" "$p" "$seconds" $((kb / 1024))
    done
  done
done
