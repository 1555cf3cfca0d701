// cp-choose-scheme's options: the machine preset applies to ops without a
// cp.machine; numeric options override both; `scheme=auto` resolves ops
// that carry no scheme, and ops with a concrete scheme are left alone.
// RUN: cp-opt %s --cp-choose-scheme="scheme=auto machine=multinode-ib" | FileCheck %s --check-prefix=IB
// RUN: cp-opt %s --cp-choose-scheme="scheme=auto machine=multinode-ib attention-flops=5e13" | FileCheck %s --check-prefix=SLOW
// RUN: not cp-opt %s --cp-choose-scheme="machine=tpu-pod" 2>&1 | FileCheck %s --check-prefix=PRESET

shard.grid @cp16(shape = 16)

// IB-LABEL: func @no_scheme
// IB: scheme = hybrid(4) {cp.cost = {
// IB-SAME: machine = "multinode-ib"
// With a 10x slower attention kernel the zigzag ring's shifts hide behind
// the computation.
// SLOW-LABEL: func @no_scheme
// SLOW: scheme = zigzag {cp.cost = {
func.func @no_scheme(%q: tensor<1x32x1024x128xbf16>, %k: tensor<1x8x1024x128xbf16>, %v: tensor<1x8x1024x128xbf16>)
    -> tensor<1x32x1024x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp16 grid_axes = [0] mask = causal
      : tensor<1x32x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16> -> tensor<1x32x1024x128xbf16>
  return %o : tensor<1x32x1024x128xbf16>
}

// IB-LABEL: func @explicit_scheme
// IB: cp.attention {{.*}} scheme = allgather :
// IB-NOT: cp.cost
func.func @explicit_scheme(%q: tensor<1x32x1024x128xbf16>, %k: tensor<1x8x1024x128xbf16>, %v: tensor<1x8x1024x128xbf16>)
    -> tensor<1x32x1024x128xbf16> {
  %o = cp.attention %q, %k, %v on @cp16 grid_axes = [0] mask = causal scheme = allgather
      : tensor<1x32x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16> -> tensor<1x32x1024x128xbf16>
  return %o : tensor<1x32x1024x128xbf16>
}

// PRESET: cp-choose-scheme: unknown machine 'tpu-pod'; expected one of h200-nvlink, multinode-ib, host-mpi
