#!/usr/bin/env bash
# Local attention throughput of the compiled cp.local_attention on this
# machine, next to ceilings measured in the same run (the f32 FMA peak with
# zmm and ymm vectors, the bf16 dot-product peak, memory bandwidth), the
# naive full-score attention (cp-bench-attention) and numpy's attention.
# Prints figures; asserts nothing.
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
# The bf16 cases again on AVX512-BF16 dot products, where the CPU has them.
dot=()
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null; then
  "$build/bin/cp-compile" "$work/bench.mlir" --pipeline-options="$options bf16-dot=true" -o "$work/bench-dot.so"
  dot=(--bf16-dot-lib "$work/bench-dot.so")
fi
echo "cp-lower-to-cpu options: ${options:-defaults}"
"$build/bin/cp-bench-attention" --lib "$work/bench.so" "${dot[@]}"

# What a Python user would write instead: numpy (with its BLAS) computing
# softmax(Q K^T / sqrt(D)) V per head, at the benchmark's largest shape.
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  /usr/bin/python3 - <<'PY'
import time
import numpy as np
H, S, D = 4, 4096, 128
rng = np.random.default_rng(0)
q, k, v = (rng.standard_normal((H, S, D), dtype=np.float32) for _ in range(3))
def attention():
    for h in range(H):
        s = (q[h] @ k[h].T) * np.float32(1 / np.sqrt(D))
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p @ v[h]
attention()
best = 1e300
for _ in range(3):
    t0 = time.perf_counter(); attention(); best = min(best, time.perf_counter() - t0)
print(f"reference: numpy {np.__version__} attention (two matmuls and a softmax per head), "
      f"H={H} S={S} D={D} none: {4.0 * H * S * S * D / best / 1e9:.1f} GFLOP/s")
PY
fi
echo
echo "targets: >= 60% of the f32 FMA peak (the higher of zmm and ymm) for none at S_local=4096 D=128;"
echo "         causal >= 1.8x faster than none at the same shape"
