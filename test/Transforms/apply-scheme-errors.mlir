// Scheme selection is explicit and loud: no scheme is an error, `auto` left
// unresolved is an error that names cp-choose-scheme, and an option naming
// no scheme is an error before anything runs.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file -verify-diagnostics
// RUN: not cp-opt %s --cp-apply-scheme=scheme=tree -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not cp-opt %s --cp-apply-scheme="scheme=hybrid(1)" -split-input-file 2>&1 | FileCheck %s --check-prefix=DEGREE

// OPTION: cp-apply-scheme: invalid scheme option 'tree': unknown scheme 'tree'; expected allgather, ulysses, hybrid(u), head_tail, ring, zigzag, auto or a scheme a loaded plugin registers (none is registered)
// DEGREE: cp-apply-scheme: invalid scheme option 'hybrid(1)': hybrid needs a Ulysses degree u >= 2, got u = 1


shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{has no scheme: set `scheme = ...` on the op or run cp-apply-scheme{scheme=...}}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}

// -----

// `auto` is cp-choose-scheme's to resolve; cp-apply-scheme never picks a
// scheme itself.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x8xf32>, %k: tensor<1x8x16x8xf32>, %v: tensor<1x8x16x8xf32>) -> tensor<1x8x16x8xf32> {
  // expected-error @+1 {{has scheme auto, which cp-choose-scheme resolves: run cp-choose-scheme before cp-apply-scheme (the cp-lower-to-cpu and cp-lower-to-nvvm pipelines do)}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = auto
      : tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32>, tensor<1x8x16x8xf32> -> tensor<1x8x16x8xf32>
  return %o : tensor<1x8x16x8xf32>
}
