#!/usr/bin/env bash
# The main job: set up, build, then compile examples/attention.mlir under each
# CP scheme for a group of 4 processes and report what each scheme sends.
# Usage: scripts/demo.sh [build-dir]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh" "$build" >/dev/null
opt="$build/bin/cp-opt"
example="$root/examples/attention.mlir"

# The example must survive a round trip through the printer and parser.
diff <("$opt" "$example") <("$opt" "$example" | "$opt") >/dev/null ||
  { echo "demo: round trip of $example changed the IR" >&2; exit 1; }
echo "examples/attention.mlir: causal GQA attention, H=8 Hkv=4 D=32, S=256 over P=4 (round trip ok)"
echo
printf '%-11s %-9s %-12s %-12s %s\n' scheme status collectives local_attns bytes_sent/rank
failed=0
for scheme in allgather ulysses "hybrid(2)" head_tail; do
  if out=$("$opt" "$example" --cp-apply-scheme="scheme=$scheme" --canonicalize --cse 2>&1); then
    collectives=$(grep -cE 'cp\.(all_gather|all_to_all|exchange|shift) ' <<<"$out" || true)
    local_attn=$(grep -c 'cp.local_attention' <<<"$out" || true)
    bytes=$(grep -o 'cp.bytes_per_rank = [0-9]*' <<<"$out" | head -n 1 | grep -o '[0-9]*$')
    printf '%-11s %-9s %-12s %-12s %s\n' "$scheme" compiled "$collectives" "$local_attn" "$bytes"
  else
    reason=$(grep -o "error: .*" <<<"$out" | head -n 1)
    printf '%-11s %-9s %s\n' "$scheme" rejected "$reason"
    failed=1
  fi
done
exit "$failed"
