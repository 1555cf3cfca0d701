// Scheme selection is explicit and loud: no scheme is an error, and an
// option naming no scheme is an error before anything runs (`auto` is
// apply-scheme-auto.mlir's).
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

// `auto` is resolved by cp-choose-scheme, run by this pass; when no scheme
// applies, its one error lists every rejection and the pass fails.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x6x15x8xf32>, %k: tensor<1x6x15x8xf32>, %v: tensor<1x6x15x8xf32>) -> tensor<1x6x15x8xf32> {
  // expected-error-re @+1 {{scheme auto found no applicable scheme on machine h200-nvlink: allgather: needs 33.8 KiB per rank, more than the machine's 1.0 KiB; ulysses: {{.*}}; zigzag: zigzag splits{{.*}}}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = auto {cp.machine = {memory = 1000}}
      : tensor<1x6x15x8xf32>, tensor<1x6x15x8xf32>, tensor<1x6x15x8xf32> -> tensor<1x6x15x8xf32>
  return %o : tensor<1x6x15x8xf32>
}
