// Scheme selection is explicit and loud: no scheme is an error, a scheme the
// pass does not implement is an error, and an option naming no scheme is an
// error before anything runs. `report` counts the rewrites per scheme.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file -verify-diagnostics
// RUN: not cp-opt %s --cp-apply-scheme=scheme=tree -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not cp-opt %s --cp-apply-scheme="scheme=hybrid(1)" -split-input-file 2>&1 | FileCheck %s --check-prefix=DEGREE

// OPTION: unknown scheme 'tree'
// OPTION: cp-apply-scheme: invalid scheme option 'tree'; expected allgather, ulysses, hybrid(u) or head_tail
// DEGREE: hybrid needs a Ulysses degree u >= 2, got u = 1
// DEGREE: cp-apply-scheme: invalid scheme option 'hybrid(1)'


shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{has no scheme: set `scheme = ...` on the op or run cp-apply-scheme{scheme=...}}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{scheme #cp.scheme<ring> is not implemented by cp-apply-scheme; use allgather, ulysses, hybrid(u) or head_tail}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = ring
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}
