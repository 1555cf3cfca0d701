#!/usr/bin/env bash
# Every CP scheme on P = 2 and 4 CPU ranks (MPI), for one causal GQA
# attention, forward and training step (the forward with its lse chained
# into cp.attention_grad, one function): per-rank time (max over ranks,
# mean of the repeats), bytes each rank sent (runtime counters) against the
# compiler's prediction, and the cost model's time for each scheme twice:
# with a machine profile that cp-calibrate measures first on the same P
# ranks, and with the built-in constants (preset host-mpi). Each table ends
# with what scheme = auto chooses under each, and its regret: the chosen
# scheme's measured time over the fastest one's. Prints figures; asserts
# nothing.
# Usage: bench/schemes.sh [build-dir]   (env: S, H, HKV, D, MASK, REPEAT
#        calls per run, ROUNDS interleaved runs per scheme (the fastest
#        counts),
#        TRAIN=0 to skip the training step, PS="2 4" the rank counts,
#        KEEP=DIR to keep the profiles and the measured rows there)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh" "$build" >/dev/null
bin="$build/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

S=${S:-4096} H=${H:-8} HKV=${HKV:-4} D=${D:-64} MASK=${MASK:-causal}
REPEAT=${REPEAT:-2} ROUNDS=${ROUNDS:-3} TRAIN=${TRAIN:-1} PS=${PS:-2 4}
cores=$(nproc)
run() { OMP_NUM_THREADS=1 timeout 600 mpirun -np "$@"; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
# Figure $3 (time_ns, bytes) of scheme $1 in the cp.cost of file $2.
cost_figure() {
  local key=$1
  [[ $key == *"("* ]] && key="\"$(sed 's/[()]/\\&/g' <<<"$key")\""
  grep -oE "(^|[ {])$key = \{[^}]*\}" "$2" | head -n 1 | grep -oE "[{ ]$3 = [0-9]+" | grep -o '[0-9]*$' || true
}
chosen() { grep -o 'chosen = "[^"]*"' "$1" | head -n 1 | sed 's/.*"\(.*\)"/\1/'; }
ms() { [ -z "$1" ] && echo - || awk -v n="$1" 'BEGIN { printf "%.3f", n / 1e6 }'; }

echo "attention: B=1 H=$H Hkv=$HKV S=$S D=Dv=$D f32, mask=$MASK; $cores cores, 1 thread per rank"

# One table: every scheme of $P ranks on the case x=MASK$1, timed, its
# bytes checked against the prediction, next to both models' times.
table() {
  local suffix=$1
  shape=(--P "$P" --B 1 --H "$H" --Hkv "$HKV" --S "$S" --D "$D" --Dv "$D" --case "x=$MASK$suffix")
  "$bin/cp-run-attention" "${shape[@]}" --emit-mlir --scheme auto >"$work/auto.mlir"
  "$bin/cp-opt" "$work/auto.mlir" --cp-choose-scheme="machine=$profile" >"$work/profiled.mlir"
  "$bin/cp-opt" "$work/auto.mlir" --cp-choose-scheme="machine=host-mpi" >"$work/builtin.mlir"

  schemes=(allgather ulysses head_tail ring zigzag)
  ((P > 2)) && schemes+=("hybrid(2)")
  rows="$work/rows-p$P$suffix"
  : >"$rows"
  # Compile every scheme, then time them in ROUNDS interleaved rounds and
  # keep each one's fastest round: a slow spell of the host then hits every
  # scheme alike instead of the one that happened to run in it.
  for scheme in "${schemes[@]}"; do
    so="$work/${scheme//[()]/_}.so"
    "$bin/cp-run-attention" "${shape[@]}" --scheme "$scheme" --emit-mlir >"$work/plain.mlir"
    "$bin/cp-compile" "$work/plain.mlir" -o "$so" 2>/dev/null || rm -f "$so"
    : >"$so.times"
  done
  for ((round = 0; round < ROUNDS; ++round)); do
    for scheme in "${schemes[@]}"; do
      so="$work/${scheme//[()]/_}.so"
      [ -f "$so" ] || continue
      line=$(run "$P" "$bin/cp-run-attention" "${shape[@]}" --scheme "$scheme" --lib "$so" \
               --repeat "$REPEAT" | grep ' case=x ') || true
      echo "$line" >>"$so.times"
    done
  done
  for scheme in "${schemes[@]}"; do
    so="$work/${scheme//[()]/_}.so"
    # A training step's bytes are the model's (forward + backward, the
    # shared collectives once); a forward's are cp.bytes_per_rank.
    predicted=$(cost_figure "$scheme" "$work/profiled.mlir" bytes)
    if [ ! -f "$so" ] || ! grep -q ' case=x ' "$so.times"; then
      echo "$scheme - - - - - -" >>"$rows"
      continue
    fi
    line=$(grep ' case=x ' "$so.times" | awk '{ for (i = 1; i <= NF; ++i) if ($i ~ /^time_ms=/) t = substr($i, 9); print t, $0 }' |
             sort -g | head -n 1 | cut -d' ' -f2-)
    t=$(field time_ms "$line")
    bytes=$(field bytes_sent_per_rank "$line")
    check=${line%% *}
    [ "${bytes##*..}" = "$predicted" ] || check="$check,BYTES-MISMATCH"
    echo "$scheme ${t:--} $(ms "$(cost_figure "$scheme" "$work/profiled.mlir" time_ns)")" \
      "$(ms "$(cost_figure "$scheme" "$work/builtin.mlir" time_ns)") ${bytes:--} ${predicted:--} $check" >>"$rows"
  done
  printf '%-10s %10s %16s %16s %-19s %10s %s\n' scheme time_ms model_ms:profile model_ms:built-in \
    bytes_sent/rank predicted check
  while read -r scheme t mp mb bytes predicted status; do
    printf '%-10s %10s %16s %16s %-19s %10s %s\n' "$scheme" "$t" "$mp" "$mb" "$bytes" "$predicted" "$status"
  done <"$rows"
  fastest=$(awk '$2 != "-"' "$rows" | sort -k2 -g | head -n 1)
  for model in profile built-in; do
    pick=$(chosen "$work/$([ $model = profile ] && echo profiled || echo builtin).mlir")
    awk -v pick="$pick" -v model="$model" -v fs="${fastest%% *}" -v ft="$(awk '{ print $2 }' <<<"$fastest")" '
      $1 == pick && $2 != "-" { printf "auto (%s) chose %s: measured %.3f ms, fastest %s: %.3f ms, regret %.3f\n", model, pick, $2, fs, ft, $2 / ft; found = 1 }
      END { if (!found) printf "auto (%s) chose %s: not measured\n", model, pick }' "$rows"
  done
}

for P in $PS; do
  echo
  echo "== P = $P =="
  profile="$work/host-p$P.profile"
  run "$P" "$bin/cp-calibrate" -o "$profile" 2>"$work/calibrate.log" ||
    { cat "$work/calibrate.log" >&2; exit 1; }
  echo "profile: $(grep -o 'cp-calibrate: .*' "$work/calibrate.log")"
  echo "-- forward --"
  table ""
  if ((TRAIN)); then
    echo "-- training step: forward (with its lse) + backward, f32 gradients --"
    table "+train"
  fi
done
if [ -n "${KEEP:-}" ]; then
  mkdir -p "$KEEP"
  cp "$work"/host-p*.profile "$work"/rows-p* "$KEEP"/
fi
