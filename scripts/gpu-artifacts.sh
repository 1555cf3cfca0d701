#!/usr/bin/env bash
# Builds, on a machine with the CUDA toolkit (no GPU needed), everything the
# GPU checks run: one program per (scheme, P) compiled with
# cp-compile --target=nvvm, the GPU benchmark, the drivers, the runtime
# libraries, MPICH's launcher and their shared libraries, and
# scripts/gpu-check.sh, which runs them on a GPU machine (docs/GPU.md).
# libcuda (the driver) and libnccl (PyTorch's wheels, or a CUDA install) are
# taken from the GPU machine; they are too large or machine-specific to carry.
# Usage: scripts/gpu-artifacts.sh [build-dir] [out-dir]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
out=${2:-$root/.device/gpu-artifacts}
"$root/scripts/setup.sh" "$build" >/dev/null
bin="$build/bin"
if [ ! -f "$build/lib/libcp_runtime_gpu.so" ]; then
  echo "gpu-artifacts: this build has no GPU runtime (CUDA/NCCL not found)" >&2
  exit 1
fi
chip=${CP_GPU_CHIP:-sm_90}
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/programs"

# The numeric checks: every scheme at P = 1, 2 and 4 where it applies,
# f32 and bf16, every mask kind. Shapes are multiples of nothing in
# particular, so tile bounds are exercised.
cases="--case none=none --case causal=causal --case window=window:37"
cases+=" --case explicit_global=explicit-global --case bias_global=bias-global"
cases+=" --case causal_explicit=causal+explicit-local"
manifest="$out/programs/manifest"
: >"$manifest"
# The kernels of each program (forward and backward): auto (the
# tensor-core kernels, mma, for f16/bf16 on sm_80+; SIMT otherwise) unless
# $kernel says simt or mma; $options adds pipeline options.
kernel=auto
options=""
add() { # name P scheme dtype shape...
  local name=$1 p=$2 scheme=$3 dtype=$4
  shift 4
  local shape="--P $p $* --dtype $dtype $cases"
  # shellcheck disable=SC2086
  "$bin/cp-run-attention" $shape --emit-mlir >"$out/programs/$name.mlir"
  "$bin/cp-compile" "$out/programs/$name.mlir" --target=nvvm --scheme="$scheme" \
    --pipeline-options="chip=$chip kernel=$kernel $options" -o "$out/programs/$name.so"
  rm "$out/programs/$name.mlir"
  echo "$name $p $shape" >>"$manifest"
}
# A variant DTYPE:KERNEL sets $dtype, $kernel and the name suffix (f32, or
# bf16-KERNEL).
use() {
  dtype=${1%%:*}
  kernel=${1##*:}
  suffix=$dtype
  [ "$dtype" = bf16 ] && suffix=$dtype-$kernel
  return 0
}
shape="--B 2 --H 8 --Hkv 4 --D 64 --Dv 48"
# f32 runs the SIMT kernel; bf16 runs each forward kernel variant (the
# tensor-core one needs sm_80 or newer).
capability=${chip#sm_}
capability=${capability%%[!0-9]*}
mma=mma
[ "$capability" -lt 80 ] && mma=""
for variant in f32:simt ${mma:+bf16:mma} bf16:simt; do
  use "$variant"
  add "p1-$suffix" 1 allgather "$dtype" $shape --S 300
  for scheme in allgather ulysses head_tail ring zigzag; do
    add "$scheme-p2-$suffix" 2 "$scheme" "$dtype" $shape --S 600
    add "$scheme-p4-$suffix" 4 "$scheme" "$dtype" $shape --S 1200
  done
  add "hybrid2-p4-$suffix" 4 "hybrid(2)" "$dtype" $shape --S 1200
done
# The widest heads the tensor-core kernel takes, with regions.
cases="--case causal=causal --case regions=window:200+document+softcap:3+alibi"
for kernel in $mma simt; do
  add "wide-p2-bf16-$kernel" 2 ring bf16 --B 1 --H 8 --Hkv 2 --D 128 --Dv 128 --S 1000
done
kernel=auto

# The backward kernels: cp.local_attention_grad on one rank (+grad) and
# training steps, cp.attention chained into cp.attention_grad (+train), on
# 2 and 4 ranks; dq, dk, dv against the reference gradient. f32 runs the
# SIMT backward; bf16 each backward kernel, the tensor-core one with dQ by
# atomics and by its recompute kernel.
cases="--case none=none+grad --case causal=causal+grad --case window=window:37+grad"
cases+=" --case bias_global=bias-global+grad --case softcap=causal+softcap:5+grad"
for variant in f32:simt ${mma:+bf16:mma} bf16:simt; do
  use "$variant"
  add "grad-p1-$suffix" 1 allgather "$dtype" $shape --S 300
done
if [ -n "$mma" ]; then
  kernel=mma
  options="grad-dq=recompute"
  add "grad-p1-bf16-mma-recompute" 1 allgather bf16 $shape --S 300
  options=""
  # The widest heads the tensor-core backward takes.
  add "grad-wide-p1-bf16-mma" 1 allgather bf16 --B 1 --H 8 --Hkv 2 --D 128 --Dv 128 --S 700
fi
kernel=auto
cases="--case none=none+train --case causal=causal+train --case window=window:37+train"
cases+=" --case softcap=causal+softcap:5+train"
for scheme in allgather ulysses ring zigzag; do
  add "train-$scheme-p2-f32" 2 "$scheme" f32 $shape --S 600 --scheme "$scheme"
done
add "train-ring-p4-f32" 4 ring f32 $shape --S 1200 --scheme ring
for scheme in ring zigzag; do
  add "train-$scheme-p2-bf16" 2 "$scheme" bf16 $shape --S 600 --scheme "$scheme"
done

# The kernel benchmark (bf16, S up to 16k, forward and backward), once per
# kernel.
"$bin/cp-bench-attention" --device gpu --emit-mlir >"$out/programs/bench.mlir"
for kernel in $mma simt; do
  "$bin/cp-compile" "$out/programs/bench.mlir" --target=nvvm \
    --pipeline-options="chip=$chip kernel=$kernel" -o "$out/programs/bench-$kernel.so"
done
rm "$out/programs/bench.mlir"

# Drivers, runtime, launcher, and every shared library they need that is
# not the C runtime, the driver or NCCL.
cp "$bin/cp-run-attention" "$bin/cp-bench-attention" "$out/bin/"
cp "$build/lib/libcp_runtime.so" "$build/lib/libcp_runtime_gpu.so" "$out/lib/"
for tool in mpiexec.hydra hydra_pmi_proxy; do
  cp "$(command -v "$tool")" "$out/bin/"
done
for f in "$out"/bin/* "$out"/lib/*.so "$out"/programs/*.so; do
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r library; do
  case "$(basename "$library")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|\
    libcuda.so*|libnccl.so*|libcp_runtime*) ;;
    *) cp -L "$library" "$out/lib/" ;;
  esac
done
# UCX (MPICH's transport) loads its transports as plugins; one machine
# needs only shared memory and CMA, not InfiniBand or RDMA-CM.
ucx=$(dirname "$(ldconfig -p | awk '/libucp.so.0 / {print $NF; exit}')")/ucx
if [ -d "$ucx" ]; then
  mkdir -p "$out/lib/ucx"
  for plugin in "$ucx"/libuct_*.so.0; do
    case "$(basename "$plugin")" in
      libuct_ib*|libuct_rdmacm*) ;;
      *) cp -L "$plugin" "$out/lib/ucx/" ;;
    esac
  done
fi
cp "$root/scripts/gpu-check.sh" "$out/"
# One compressed file travels to the GPU machine (MPICH alone is ~40 MiB).
tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
du -sh "$out" "$out.tar.gz"
