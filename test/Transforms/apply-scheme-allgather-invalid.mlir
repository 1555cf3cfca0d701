// allgather has no head or length constraint; what it can reject is input
// it cannot lower statically, and masks whose extents do not fit S.
// RUN: cp-opt %s --cp-apply-scheme=scheme=allgather -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x?x8xf32>, %k: tensor<1x8x?x8xf32>, %v: tensor<1x8x?x8xf32>) -> tensor<1x8x?x8xf32> {
  // expected-error @+1 {{cp-apply-scheme needs static shapes and a static CP group size, got P = 4 and query 'tensor<1x8x?x8xf32>'}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x?x8xf32>, tensor<1x8x?x8xf32>, tensor<1x8x?x8xf32> -> tensor<1x8x?x8xf32>
  return %o : tensor<1x8x?x8xf32>
}

// -----

shard.grid @cp(shape = ?)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cp-apply-scheme needs static shapes and a static CP group size, got P = ? and query 'tensor<1x8x16x8xf32>'}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %m: tensor<16x32xi1>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{explicit_mask key extent (32) must equal the global sequence length S = P * L = 4 * 16 = 64}}
  %o = cp.attention %q, %q, %q explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<16x32xi1> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}
