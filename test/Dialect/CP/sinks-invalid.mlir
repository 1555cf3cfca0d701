// Every diagnostic about attention sinks, one case each.
// RUN: cp-opt %s -split-input-file -verify-diagnostics

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects sinks to have shape [H] = [8] (one f32 logit per query head), got 'tensor<2xf32>'}}
  %o = cp.attention %q, %k, %v sinks(%s : tensor<2xf32>) on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<1x8xf32>) {
  // expected-error @+1 {{expects sinks to have shape [H] = [8] (one f32 logit per query head), got 'tensor<1x8xf32>'}}
  %o = cp.attention %q, %k, %v sinks(%s : tensor<1x8xf32>) on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<8xf16>) {
  // expected-error @+1 {{operand #3 must be ranked tensor of 32-bit float values, but got 'tensor<8xf16>'}}
  %o = cp.attention %q, %k, %v sinks(%s : tensor<8xf16>) on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return
}

// -----

func.func @f(%q: tensor<1x2x16x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>, %s: tensor<8xf32>, %i: index) {
  // expected-error @+1 {{expects sinks to have shape [H] = [2] (one f32 logit per query head), got 'tensor<8xf32>'}}
  %o = cp.local_attention %q, %k, %v offsets(%i, %i) sinks(%s : tensor<8xf32>)
      : tensor<1x2x16x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x2x16x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>,
             %o: tensor<1x8x16x32xf32>, %lse: tensor<1x8x16xf32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{has sinks but no grad_sinks result; add a result of the sinks' type}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %o sinks(%s : tensor<8xf32>) on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16x32xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>,
             %o: tensor<1x8x16x32xf32>, %lse: tensor<1x8x16xf32>) {
  // expected-error @+1 {{has a grad_sinks result but no sinks; pass the forward's sinks}}
  %dq, %dk, %dv, %ds = cp.attention_grad %q, %k, %v, %o, %lse, %o on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16x32xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<8xf32>
  return
}

// -----

shard.grid @cp(shape = 4)
func.func @f(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<8xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  // expected-error @+1 {{has sinks, but differentiates a cp.attention without sinks; pass the forward's own}}
  %dq, %dk, %dv, %ds = cp.attention_grad %q, %k, %v, %o, %lse, %o sinks(%s : tensor<8xf32>) on @cp grid_axes = [0]
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16x32xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<8xf32>
  return
}
