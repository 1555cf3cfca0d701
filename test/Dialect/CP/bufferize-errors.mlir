// What one-shot-bufferize refuses among cp ops, with the reason.
// RUN: cp-opt %s -one-shot-bufferize -split-input-file -verify-diagnostics

// cp.attention has no buffer form: a scheme comes first.
shard.grid @cp(shape = 4)
func.func @unscheduled(%q: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  // expected-error @+2 {{has no buffer form: apply a CP scheme first (cp-apply-scheme, or cp-lower-to-cpu{scheme=...})}}
  // expected-error @+1 {{failed to bufferize op}}
  %o = cp.attention %q, %q, %q on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

// A mask of dynamic shape cannot be materialized.
func.func @dynamic_mask(%qo: index, %ko: index) -> tensor<?x16xi1> {
  // expected-error @+2 {{cannot bufferize a mask of dynamic shape 'tensor<?x16xi1>'}}
  // expected-error @+1 {{failed to bufferize op}}
  %m = cp.offset_mask offsets(%qo, %ko) mask = causal : tensor<?x16xi1>
  return %m : tensor<?x16xi1>
}
