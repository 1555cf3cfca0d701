// head_tail constraint: the local length L is split in two halves, so it
// must be even (S divisible by 2P).
// RUN: cp-opt %s --cp-apply-scheme=scheme=head_tail -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x7x8xf32>, %k: tensor<1x8x7x8xf32>, %v: tensor<1x8x7x8xf32>) -> tensor<1x8x7x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<head_tail>: head_tail splits each local shard in two halves and needs an even local length L, got L = 7; pad the sequence to a multiple of 2 * P = 8}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x7x8xf32>, tensor<1x8x7x8xf32>, tensor<1x8x7x8xf32> -> tensor<1x8x7x8xf32>
  return %o : tensor<1x8x7x8xf32>
}

// -----

shard.grid @cp(shape = 3)
func.func @f(%q: tensor<1x8x5x8xf32>, %k: tensor<1x8x5x8xf32>, %v: tensor<1x8x5x8xf32>) -> tensor<1x8x5x8xf32> {
  // expected-error @+1 {{cannot use scheme #cp.scheme<head_tail>: head_tail splits each local shard in two halves and needs an even local length L, got L = 5; pad the sequence to a multiple of 2 * P = 6}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x5x8xf32>, tensor<1x8x5x8xf32>, tensor<1x8x5x8xf32> -> tensor<1x8x5x8xf32>
  return %o : tensor<1x8x5x8xf32>
}
