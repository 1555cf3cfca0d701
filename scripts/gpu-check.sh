#!/usr/bin/env bash
# Runs on a GPU machine from the folder scripts/gpu-artifacts.sh made: the
# numeric check of every compiled scheme against the plain reference
# (P = 1 on the device; P = 2 and 4 processes sharing it, collectives staged
# through MPI), for each kernel (bf16 programs end in -mma or -simt), then
# the bf16 throughput tables of each kernel: the forward with its fraction
# of FlashAttention-3's, the backward with its time against the forward's. Prints one line per check and the tables; exits 1
# if a check fails. docs/GPU.md.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nccl=""
for candidate in "${CP_NCCL_DIR:-}" /usr/local/cuda/lib64 /usr/local/cuda/lib \
  $(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) + "/lib")' 2>/dev/null); do
  if [ -n "$candidate" ] && [ -e "$candidate/libnccl.so.2" ]; then nccl=$candidate; break; fi
done
[ -n "$nccl" ] || nccl=$(dirname "$(find / -name libnccl.so.2 -print -quit 2>/dev/null)")
export LD_LIBRARY_PATH="$here/lib:$nccl:${LD_LIBRARY_PATH:-}"
export UCX_MODULE_DIR="$here/lib/ucx"
export PATH="$here/bin:$PATH"
echo "gpu-check: $(nvidia-smi -L 2>/dev/null | head -n 1); NCCL from ${nccl:-nowhere}"

failed=0
while read -r name p shape; do
  # shellcheck disable=SC2086
  if [ "$p" = 1 ]; then
    out=$(timeout 120 cp-run-attention $shape --device gpu --lib "$here/programs/$name.so" </dev/null 2>&1)
  else
    out=$(CP_RT_GPU_COLLECTIVES=mpi CP_RT_DEVICE=0 timeout 180 \
            mpiexec.hydra -launcher fork -np "$p" \
            cp-run-attention $shape --device gpu --lib "$here/programs/$name.so" \
            </dev/null 2>&1)
  fi
  status=$?
  summary=$(grep -E '^cp-run-attention: [0-9]+ cases' <<<"$out" || true)
  printf '%-22s P=%s %s\n' "$name" "$p" "${summary:-no result (exit $status)}"
  if [ "$status" -ne 0 ]; then
    failed=1
    grep -v '^PASS' <<<"$out" | tail -n 5
  fi
done <"$here/programs/manifest"

# The throughput tables of each kernel, forward and backward (names end
# in -mma and -simt above: the numeric checks of each variant). The SIMT
# backward is slow enough that its table stops at S = 4096.
for kernel in mma simt; do
  [ -e "$here/programs/bench-$kernel.so" ] || continue
  limit=""
  [ "$kernel" = simt ] && limit="--max-length 4096"
  echo
  echo "kernel=$kernel"
  # shellcheck disable=SC2086
  timeout 150 cp-bench-attention --device gpu $limit --lib "$here/programs/bench-$kernel.so" || failed=1
done
exit "$failed"
