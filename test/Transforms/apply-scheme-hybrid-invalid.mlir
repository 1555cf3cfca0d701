// hybrid(u) constraints: 1 < u < P, u divides P, H and Hkv; and a CP group
// that is a 1-D grid or two (outer, inner) axes with an inner size of u.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<hybrid(4)>: hybrid needs 1 < u < P, got u = 4 with P = 4; use ulysses for u = P}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = hybrid(4)
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 6)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<hybrid(4)>: hybrid needs the CP group size P (6) divisible by the Ulysses degree u (4); choose u dividing P}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = hybrid(4)
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 6)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<hybrid(3)>: hybrid needs H (8) divisible by the Ulysses degree u (3); choose u dividing H}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = hybrid(3)
      : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 8)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<hybrid(4)>: hybrid needs Hkv (2) divisible by the Ulysses degree u (4); choose u dividing Hkv}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = hybrid(4)
      : tensor<1x8x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 2x4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{hybrid(2) on grid_axes [0, 1] needs the inner axis 1 to have size u = 2, got 4}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0, 1] scheme = hybrid(2)
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 2x4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{hybrid needs a 1-D grid or two grid axes (outer, inner); got grid_axes of size 1 on a rank-2 grid}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [1] scheme = hybrid(2)
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 4)
shard.grid @cp_hybrid_2x2(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{hybrid(2) needs grid @cp_hybrid_2x2 to have shape 2x2, but a grid of that name has another shape}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = hybrid(2)
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}
