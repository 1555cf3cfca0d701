// ulysses constraints, checked when the pass applies the scheme: H and Hkv
// must both divide by the CP group size.
// RUN: cp-opt %s --cp-apply-scheme=scheme=ulysses -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x6x16x8xf32>, %k: tensor<1x6x16x8xf32>, %v: tensor<1x6x16x8xf32>) -> tensor<1x6x16x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<ulysses>: ulysses needs H (6) divisible by the CP group size (4); use allgather, or hybrid(u) with u dividing H}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x6x16x8xf32>, tensor<1x6x16x8xf32>, tensor<1x6x16x8xf32> -> tensor<1x6x16x8xf32>
  return %o : tensor<1x6x16x8xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<ulysses>: ulysses needs Hkv (2) divisible by the CP group size (4); use allgather, or hybrid(u) with u dividing Hkv}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}
