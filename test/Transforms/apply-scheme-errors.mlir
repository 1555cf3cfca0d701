// Scheme selection is explicit and loud: no scheme is an error, `auto` with
// no applicable scheme is an error that says why each was rejected, and an
// option naming no scheme is an error before anything runs.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file -verify-diagnostics
// RUN: not cp-opt %s --cp-apply-scheme=scheme=tree -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not cp-opt %s --cp-apply-scheme="scheme=hybrid(1)" -split-input-file 2>&1 | FileCheck %s --check-prefix=DEGREE

// OPTION: unknown scheme 'tree'
// OPTION: cp-apply-scheme: invalid scheme option 'tree'; expected allgather, ulysses, hybrid(u), head_tail, ring, zigzag or auto
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

// A machine with 1 KB per rank fits no scheme; L = 15 is odd, and Hkv = 6
// does not divide by P = 4.
shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x6x15x8xf32>, %k: tensor<1x6x15x8xf32>, %v: tensor<1x6x15x8xf32>) -> tensor<1x6x15x8xf32> {
  // expected-error-re @+1 {{scheme auto found no applicable scheme on machine h200-nvlink: allgather: needs 33.8 KiB per rank, more than the machine's 1.0 KiB; ulysses: ulysses needs H (6) divisible by the CP group size (4){{.*}}; hybrid(2): needs {{.*}} KiB per rank{{.*}}; head_tail: head_tail splits each local shard in two halves and needs an even local length L, got L = 15{{.*}}; ring: needs {{.*}}; zigzag: zigzag splits{{.*}}}}
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = auto {cp.machine = {memory = 1000}}
      : tensor<1x6x15x8xf32>, tensor<1x6x15x8xf32>, tensor<1x6x15x8xf32> -> tensor<1x6x15x8xf32>
  return %o : tensor<1x6x15x8xf32>
}
