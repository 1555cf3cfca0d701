// Static sizes whose element count overflows int64 (9223372036854775807
// rows) used to reach the lowerings, where cp-lower-to-nvvm aborted with
// "LLVM ERROR: SmallVector unable to grow". Sizes, traffic and FLOPs are
// int64 arithmetic, so the verifier rejects such a shape, with the numbers.
// RUN: cp-opt %s -split-input-file -verify-diagnostics
// RUN: not cp-opt %s -split-input-file --cp-lower-to-nvvm=scheme=allgather 2>&1 | FileCheck %s
// RUN: not cp-opt %s -split-input-file --cp-lower-to-cpu=scheme=ring 2>&1 | FileCheck %s
// CHECK: holds more than 9223372036854775807 bytes
// CHECK-NOT: LLVM ERROR
// CHECK-NOT: Stack dump

shard.grid @cp(shape = 4)
func.func @rows(%q: tensor<1x8x9223372036854775807x32xf32>, %k: tensor<1x8x64x32xf32>, %v: tensor<1x8x64x32xf32>) -> tensor<1x8x9223372036854775807x32xf32> {
  // expected-error @+1 {{'cp.attention' op expects query to fit in memory, but its shape 'tensor<1x8x9223372036854775807x32xf32>' holds more than 9223372036854775807 bytes (the element count times the element size overflows int64)}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x9223372036854775807x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x9223372036854775807x32xf32>
  return %o : tensor<1x8x9223372036854775807x32xf32>
}

// -----

// The product overflows even when no single size is near the limit.
shard.grid @cp(shape = 1)
func.func @product(%q: tensor<4194304x4194304x4194304x32xbf16>, %k: tensor<4194304x4194304x4194304x32xbf16>, %v: tensor<4194304x4194304x4194304x32xbf16>, %o: index) -> tensor<4194304x4194304x4194304x32xbf16> {
  // expected-error @+1 {{expects query to fit in memory}}
  %r = cp.local_attention %q, %k, %v offsets(%o, %o)
      : tensor<4194304x4194304x4194304x32xbf16>, tensor<4194304x4194304x4194304x32xbf16>, tensor<4194304x4194304x4194304x32xbf16> -> tensor<4194304x4194304x4194304x32xbf16>
  return %r : tensor<4194304x4194304x4194304x32xbf16>
}

// -----

// Each shard fits, but the global sequence S = P * L does not fit in int64
// (64 * 2^57 = 2^63): found by the fuzzer under UBSan, as a signed overflow
// in the scheme rules' global length.
shard.grid @cp(shape = 64)
func.func @global_length(%q: tensor<1x1x144115188075855872x1xf32>, %k: tensor<1x1x144115188075855872x1xf32>, %v: tensor<1x1x144115188075855872x1xf32>) -> tensor<1x1x144115188075855872x1xf32> {
  // expected-error @+1 {{'cp.attention' op expects the global sequence length S = P * L = 64 * 144115188075855872 to fit in int64; use a smaller local length or fewer ranks}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = ulysses
      : tensor<1x1x144115188075855872x1xf32>, tensor<1x1x144115188075855872x1xf32>, tensor<1x1x144115188075855872x1xf32> -> tensor<1x1x144115188075855872x1xf32>
  return %o : tensor<1x1x144115188075855872x1xf32>
}
