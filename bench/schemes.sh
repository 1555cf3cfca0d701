#!/usr/bin/env bash
# Every CP scheme on P = 2 and 4 CPU ranks (MPI), for one causal GQA
# attention: per-rank time (max over ranks, mean of the repeats), bytes each
# rank sent (runtime counters) against the compiler's prediction, and the
# cost model's predicted ranking next to the measured one. The model is
# given this host's figures, measured first: the attention kernel's FLOP/s
# on one rank, and a ring shift's latency and bandwidth among P ranks
# (cp-bench-link). Then the same for a training step (the forward with its
# lse chained into cp.attention_grad, one function): forward + backward
# time per scheme, bytes against trainingBytesSentPerRank, and the model's
# forward + backward ranking. Prints figures; asserts nothing.
# Usage: bench/schemes.sh [build-dir]   (env: S, H, HKV, D, MASK, REPEAT,
#        TRAIN=0 to skip the training step)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh" "$build" >/dev/null
bin="$build/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

S=${S:-4096} H=${H:-8} HKV=${HKV:-4} D=${D:-64} MASK=${MASK:-causal}
REPEAT=${REPEAT:-3} TRAIN=${TRAIN:-1}
cores=$(nproc)
run() { OMP_NUM_THREADS=1 timeout 600 mpirun -np "$@"; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

echo "attention: B=1 H=$H Hkv=$HKV S=$S D=Dv=$D f32, mask=$MASK; $cores cores, 1 thread per rank"

# The kernel's rate on one rank: a P = 1 program (no communication).
shape1=(--P 1 --B 1 --H "$H" --Hkv "$HKV" --S 2048 --D "$D" --Dv "$D" --case none=none)
"$bin/cp-run-attention" "${shape1[@]}" --emit-mlir >"$work/one.mlir"
"$bin/cp-compile" "$work/one.mlir" --scheme=allgather -o "$work/one.so"
line=$(run 1 "$bin/cp-run-attention" "${shape1[@]}" --lib "$work/one.so" --repeat 3 | grep ' case=none ')
one_ms=$(field time_ms "$line")
flops_one=$(awk -v h="$H" -v d="$D" -v ms="$one_ms" 'BEGIN { printf "%.4e", 2 * h * 2 * d * 2048 * 2048 / (ms / 1e3) }')
echo "kernel on one rank: ${flops_one} FLOP/s"

# One table: every scheme of $P ranks on the case "$1" (x=MASK or
# x=MASK+train), timed, its bytes checked against the prediction, ranked
# next to the cost model (cp-choose-scheme with this host's figures).
table() {
  local suffix=$1 machine=$2
  shape=(--P "$P" --B 1 --H "$H" --Hkv "$HKV" --S "$S" --D "$D" --Dv "$D" --case "x=$MASK$suffix")
  "$bin/cp-run-attention" "${shape[@]}" --emit-mlir --scheme auto >"$work/auto.mlir"
  "$bin/cp-opt" "$work/auto.mlir" --cp-choose-scheme="$machine" >"$work/cost.mlir"
  chosen=$(grep -o 'chosen = "[^"]*"' "$work/cost.mlir" | head -n 1 | sed 's/.*"\(.*\)"/\1/')

  schemes=(allgather ulysses head_tail ring zigzag)
  ((P > 2)) && schemes+=("hybrid(2)")
  : >"$work/rows"
  for scheme in "${schemes[@]}"; do
    model_ns=$(grep -o "\"\?$scheme\"\? = {[^}]*time_ns = [0-9]*" "$work/cost.mlir" | head -n 1 |
      sed 's/.*time_ns = //' || true)
    # A training step's bytes are the model's (forward + backward, the
    # shared collectives once); a forward's are cp.bytes_per_rank.
    predicted=$(grep -o "\"\?$scheme\"\? = {[^}]*}" "$work/cost.mlir" | head -n 1 |
      grep -o '[{ ]bytes = [0-9]*' | grep -o '[0-9]*$' || true)
    "$bin/cp-run-attention" "${shape[@]}" --scheme "$scheme" --emit-mlir >"$work/plain.mlir"
    so="$work/${scheme//[()]/_}.so"
    if [ -z "$predicted" ] || ! "$bin/cp-compile" "$work/plain.mlir" -o "$so" 2>/dev/null; then
      echo "$scheme - - - - -" >>"$work/rows"
      continue
    fi
    line=$(run "$P" "$bin/cp-run-attention" "${shape[@]}" --scheme "$scheme" --lib "$so" \
             --repeat "$REPEAT" --expect-bytes "$predicted" | grep ' case=x ') || true
    ms=$(field time_ms "$line")
    bytes=$(field bytes_sent_per_rank "$line")
    echo "$scheme ${ms:--} ${model_ns:--} ${bytes:--} $predicted ${line%% *}" >>"$work/rows"
  done
  # Ranks: 1 = fastest, measured and predicted.
  awk '$2 != "-" { print $1, $2 }' "$work/rows" | sort -k2 -g | awk '{ print $1, NR }' >"$work/measured_rank"
  awk '$3 != "-" { print $1, $3 }' "$work/rows" | sort -k2 -g | awk '{ print $1, NR }' >"$work/model_rank"
  printf '%-10s %10s %6s %10s %6s %-19s %10s %s\n' scheme time_ms rank model_ms rank bytes_sent/rank predicted check
  while read -r scheme ms model bytes predicted status; do
    mr=$(awk -v s="$scheme" '$1 == s { print $2 }' "$work/measured_rank")
    pr=$(awk -v s="$scheme" '$1 == s { print $2 }' "$work/model_rank")
    model_ms=$([ "$model" = - ] && echo - || awk -v n="$model" 'BEGIN { printf "%.3f", n / 1e6 }')
    printf '%-10s %10s %6s %10s %6s %-19s %10s %s\n' "$scheme" "$ms" "${mr:--}" "$model_ms" "${pr:--}" \
      "$bytes" "$predicted" "$status"
  done <"$work/rows"
  fastest=$(awk 'NR == 1 { print $1 }' "$work/measured_rank")
  echo "auto chooses: $chosen; measured fastest: $fastest"
}

for P in 2 4; do
  echo
  echo "== P = $P =="
  # This host's link among P ranks; ranks share the cores, so each gets
  # min(1, cores/P) of the kernel's one-rank rate.
  link=$(run "$P" "$bin/cp-bench-link")
  latency=$(sed -n 's/^latency=//p' <<<"$link")
  bandwidth=$(sed -n 's/^bandwidth=//p' <<<"$link")
  membw=$(sed -n 's/^memory_bandwidth=//p' <<<"$link")
  flops=$(awk -v f="$flops_one" -v c="$cores" -v p="$P" 'BEGIN { s = c / p; if (s > 1) s = 1; printf "%.4e", f * s }')
  echo "machine: latency ${latency} s, bandwidth ${bandwidth} B/s, memory ${membw} B/s, attention ${flops} FLOP/s per rank"

  machine="machine=host-mpi latency=$latency intra-node-bandwidth=$bandwidth inter-node-bandwidth=$bandwidth memory-bandwidth=$membw attention-flops=$flops"
  echo "-- forward --"
  table "" "$machine"
  if ((TRAIN)); then
    echo "-- training step: forward (with its lse) + backward, f32 gradients --"
    table "+train" "$machine"
  fi
done
