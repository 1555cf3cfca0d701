#!/usr/bin/env bash
# The main job: set up and build, then compile examples/attention.mlir under
# each CP scheme and run it on 4 CPU ranks (MPI), checked against the plain
# full attention. One row per scheme: max error against the reference, wall
# time of one forward, and bytes each rank sent (runtime counters) next to
# the compiler's prediction (DESIGN §2's formula). Then the same layer as a
# training step (forward + backward) per scheme: forward and gradient
# errors, time, and bytes against the cost model's prediction. The auto
# rows are chosen with a machine profile of these 4 ranks (cp-calibrate;
# $CP_MACHINE_PROFILE, else build-dir/host-p4.profile, measured first when
# missing or unreadable), and print their regret: the pick's time (the faster
# of its own row and the auto row, the same program) over the fastest scheme's.
# Usage: scripts/demo.sh [build-dir]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
"$root/scripts/setup.sh" "$build" >/dev/null
bin="$build/bin"
example="$root/examples/attention.mlir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The example's shapes (see its header): causal GQA, B=1 H=8 Hkv=4 D=Dv=32,
# S=256 over P=4 ranks (L=64 each).
ranks=4
shape=(--P "$ranks" --B 1 --H 8 --Hkv 4 --S 256 --D 32 --Dv 32 --case attention=causal)
cores=$(nproc)
profile=${CP_MACHINE_PROFILE:-$build/host-p$ranks.profile}
# A profile this build cannot read (another format) is measured again.
if [ -f "$profile" ] && [ -z "${CP_MACHINE_PROFILE:-}" ] &&
   ! "$bin/cp-calibrate" --print-profile "$profile" >/dev/null 2>&1; then
  rm -f "$profile"
fi
if [ ! -f "$profile" ]; then
  echo "measuring a machine profile of $ranks ranks for scheme auto (cp-calibrate, once): $profile"
  OMP_NUM_THREADS=1 timeout 300 mpirun -np "$ranks" "$bin/cp-calibrate" -o "$profile"
  echo
fi
# The time of auto's pick over the fastest scheme's, from the rows in $1.
# The auto row runs the same program as its scheme's row: it is one more
# sample of that scheme, and each scheme counts its faster sample.
regret() {
  awk -v table="$2" '$4 == "" || $4 == "-" { next }
    { name = $1; if (name ~ /^auto:/) { name = substr(name, 6); pick = name }
      if (!(name in t) || $4 < t[name]) t[name] = $4 }
    END { for (n in t) if (best == "" || t[n] < best) { best = t[n]; fastest = n }
          if (pick != "" && best > 0)
            printf "%s: auto:%s measured %.3f ms, fastest %s: %.3f ms, regret %.3f\n", table, pick, t[pick], fastest, best, t[pick] / best }' "$1"
}

echo "examples/attention.mlir: causal GQA attention, H=8 Hkv=4 D=32, S=256 over P=$ranks ranks"
echo "each rank's output vs. a plain full attention in double precision (f32 tolerance 1e-5);"
echo "time: one forward, max over ranks, mean of 5 ($ranks ranks on $cores cores, 1 thread each)"
echo
printf '%-14s %-6s %-11s %-9s %-17s %s\n' scheme check max_abs_err time_ms bytes_sent/rank predicted
failed=0
: >"$work/forward-rows"
for scheme in allgather ulysses "hybrid(2)" head_tail ring zigzag auto; do
  so="$work/${scheme//[()]/_}.so"
  # auto is chosen by the cost model with this machine's profile, as
  # cp-compile --machine does.
  if ! "$bin/cp-opt" "$example" --cp-choose-scheme="scheme=$scheme machine=$profile" \
         --cp-apply-scheme="scheme=$scheme" -o "$work/applied.mlir" 2>"$work/err"; then
    printf '%-10s %-6s %s\n' "$scheme" REJECT "$(grep -o 'error: .*' "$work/err" | head -n 1)"
    failed=1
    continue
  fi
  predicted=$(grep -o 'cp.bytes_per_rank = [0-9]*' "$work/applied.mlir" | head -n 1 | grep -o '[0-9]*$')
  label=$scheme
  if [ "$scheme" = auto ]; then
    label="auto:$(grep -o 'cp.scheme = #cp.scheme<[^>]*>' "$work/applied.mlir" | head -n 1 | sed 's/.*<\(.*\)>/\1/')"
  fi
  "$bin/cp-compile" "$example" --scheme="$scheme" --machine="$profile" -o "$so"
  line=$(OMP_NUM_THREADS=1 timeout 300 mpirun -np "$ranks" "$bin/cp-run-attention" "${shape[@]}" \
           --lib "$so" --repeat 5 --expect-bytes "$predicted" | grep ' case=attention ') || true
  field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  status=${line%% *}
  [ "$status" = PASS ] || failed=1
  printf '%-14s %-6s %-11s %-9s %-17s %s\n' "$label" "${status:-ERROR}" "$(field max_abs_err)" \
    "$(field time_ms)" "$(field bytes_sent_per_rank | sed 's/^\([0-9]*\)\.\.\1$/\1/')" "$predicted" |
    tee -a "$work/forward-rows"
done
regret "$work/forward-rows" "forward, auto with $(basename "$profile")"

# The training step: the same layer's forward (returning its lse) chained
# into cp.attention_grad in one function (cp-run-attention +train), so o,
# dq, dk and dv are all checked against the reference and its analytic
# gradient. The prediction is the cost model's bytes for the step
# (trainingBytesSentPerRank: forward + backward, the collectives they share
# sent once), read from cp-choose-scheme's cp.cost.
train=(--P "$ranks" --B 1 --H 8 --Hkv 4 --S 256 --D 32 --Dv 32 --case step=causal+train)
"$bin/cp-run-attention" "${train[@]}" --scheme auto --emit-mlir > "$work/train-auto.mlir"
"$bin/cp-opt" "$work/train-auto.mlir" --cp-choose-scheme="machine=$profile" -o "$work/train-cost.mlir"
echo
echo "training step (forward + backward, f32 gradients; tolerance 1e-5 on o, 1e-4 on dq, dk, dv):"
echo "time: one forward + backward, max over ranks, mean of 5"
echo
printf '%-14s %-6s %-11s %-11s %-9s %-17s %s\n' scheme check fwd_err bwd_err time_ms bytes_sent/rank predicted
: >"$work/train-rows"
for scheme in allgather ulysses "hybrid(2)" head_tail ring zigzag auto; do
  so="$work/train-${scheme//[()]/_}.so"
  label=$scheme
  key=$scheme
  if [ "$scheme" = auto ]; then
    key=$(grep -o 'chosen = "[^"]*"' "$work/train-cost.mlir" | head -n 1 | sed 's/.*"\(.*\)"/\1/')
    label="auto:$key"
  fi
  [[ $key == *"("* ]] && key="\"$key\""
  predicted=$(grep -oE "$(sed 's/[()]/\\&/g' <<<"$key") = \{[^}]*\}" "$work/train-cost.mlir" | head -n 1 |
                grep -o '[{ ]bytes = [0-9]*' | grep -o '[0-9]*$') || true
  "$bin/cp-run-attention" "${train[@]}" --scheme "$scheme" --emit-mlir > "$work/train.mlir"
  "$bin/cp-compile" "$work/train.mlir" --machine="$profile" -o "$so"
  line=$(OMP_NUM_THREADS=1 timeout 300 mpirun -np "$ranks" "$bin/cp-run-attention" "${train[@]}" \
           --scheme "$scheme" --lib "$so" --repeat 5 ${predicted:+--expect-bytes "$predicted"} |
           grep ' case=step ') || true
  field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  status=${line%% *}
  [ "$status" = PASS ] && [ -n "$predicted" ] || failed=1
  printf '%-14s %-6s %-11s %-11s %-9s %-17s %s\n' "$label" "${status:-ERROR}" "$(field max_abs_err)" \
    "$(field grad_max_abs_err)" "$(field time_ms)" \
    "$(field bytes_sent_per_rank | sed 's/^\([0-9]*\)\.\.\1$/\1/')" "${predicted:-none}"
  # label, check, and the time in the forward rows' column.
  echo "$label ${status:-ERROR} - $(field time_ms)" >>"$work/train-rows"
done
regret "$work/train-rows" "training step, auto with $(basename "$profile")"
echo
if ((failed)); then
  echo "demo: a scheme failed its check (see above)" >&2
else
  echo "every scheme matches the reference, forward and backward, and the busiest rank sent exactly the predicted bytes"
  echo "(zigzag's ranks send different amounts: the relayout keeps some halves in place)"
fi
exit "$failed"
