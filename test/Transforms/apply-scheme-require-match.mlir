// require-match: a function with no cp.attention to rewrite is an error, the
// compiler form of "the wrapper intercepted no attention call". Without the
// option such a function passes through untouched.
// RUN: cp-opt %s --cp-apply-scheme="scheme=allgather require-match" -split-input-file -verify-diagnostics
// RUN: cp-opt %s --cp-apply-scheme=scheme=allgather -split-input-file | FileCheck %s

// expected-error @+1 {{cp-apply-scheme found no cp.attention in function @no_attention (require-match is set): nothing would be parallelized; check that the attention was raised to cp.attention}}
func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-LABEL: func @no_attention
  // CHECK-NEXT: return
  return %x : tensor<4xf32>
}

// -----

shard.grid @cp(shape = 2)

// Declarations have no body to search and are not reported.
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// CHECK-LABEL: func @has_attention
// CHECK: cp.local_attention
func.func @has_attention(%q: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %o = cp.attention %q, %q, %q on @cp grid_axes = [0]
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %o : tensor<1x2x8x4xf32>
}
