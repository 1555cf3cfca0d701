// cp-outline-attention-layers: in a function with several forwards (or
// several backwards) whose scheme is decided, each becomes a call of a
// private function holding one copy of it, and ops that print the same
// (attributes, types, regions) share it. One forward with its backward (a
// training step) stays in place, as do ops still under auto.
// RUN: cp-opt %s -split-input-file --cp-outline-attention-layers=scheme=ring | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-LABEL: func.func @three_layers(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x8x64x32xf32>, %[[K:[^:]*]]: tensor<1x8x64x32xf32>, %[[V:[^:]*]]: tensor<1x8x64x32xf32>
// CHECK: %[[O0:.*]] = call @cp_ring_layer(%[[X]], %[[K]], %[[V]])
// Each layer's K/V are earlier outputs: the same function serves.
// CHECK: %[[O1:.*]] = call @cp_ring_layer(%[[O0]], %[[X]], %[[K]])
// A window is another layer, zigzag and ulysses other schemes; auto is
// not decided yet, so that op stays.
// CHECK: %[[O2:.*]] = call @cp_ring_layer_0(%[[O1]], %[[O0]], %[[X]])
// CHECK: %[[O3:.*]] = call @cp_zigzag_layer(%[[O2]], %[[O1]], %[[O0]])
// CHECK: %[[O4:.*]] = call @cp_ulysses_layer(%[[O3]], %[[O2]], %[[O1]])
// CHECK: %[[O5:.*]] = cp.attention %[[O4]], %[[O3]], %[[O2]] {{.*}} scheme = auto
// CHECK: return %[[O5]]
// CHECK: func.func private @cp_ring_layer(%[[A0:.*]]: tensor<1x8x64x32xf32>, %[[A1:.*]]: tensor<1x8x64x32xf32>, %[[A2:.*]]: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32>
// CHECK-NEXT: %[[R:.*]] = cp.attention %[[A0]], %[[A1]], %[[A2]] on @cp grid_axes = [0] mask = causal :
// CHECK-NEXT: return %[[R]]
// CHECK: func.func private @cp_ring_layer_0(
// CHECK-NEXT: cp.attention {{.*}} mask = sliding_window(16)
// CHECK: func.func private @cp_zigzag_layer(
// CHECK-NEXT: cp.attention {{.*}} layout = zigzag scheme = zigzag
// CHECK: func.func private @cp_ulysses_layer(
// CHECK-NEXT: cp.attention {{.*}} scheme = ulysses
// CHECK-NOT: func.func
func.func @three_layers(%x: tensor<1x8x64x32xf32>, %k: tensor<1x8x64x32xf32>,
                        %v: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o0 = cp.attention %x, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o1 = cp.attention %o0, %x, %k on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o2 = cp.attention %o1, %o0, %x on @cp grid_axes = [0] mask = sliding_window(16)
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o3 = cp.attention %o2, %o1, %o0 on @cp grid_axes = [0] mask = causal layout = zigzag scheme = zigzag
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o4 = cp.attention %o3, %o2, %o1 on @cp grid_axes = [0] mask = causal scheme = ulysses
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o5 = cp.attention %o4, %o3, %o2 on @cp grid_axes = [0] mask = causal scheme = auto
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  return %o5 : tensor<1x8x64x32xf32>
}

// -----

// Regions are part of what makes two layers the same: a different
// score_mod constant is a different function.
shard.grid @cp(shape = 4)

// CHECK-LABEL: func.func @softcaps(
// CHECK: call @cp_ring_layer(
// CHECK: call @cp_ring_layer_0(
// CHECK: call @cp_ring_layer(
// CHECK: func.func private @cp_ring_layer(
// CHECK: arith.constant 3.0
// CHECK: func.func private @cp_ring_layer_0(
// CHECK: arith.constant 5.0
func.func @softcaps(%x: tensor<1x8x64x32xf32>, %k: tensor<1x8x64x32xf32>,
                    %v: tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> {
  %o0 = cp.attention %x, %k, %v on @cp grid_axes = [0] mask = causal
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
        %c = arith.constant 3.0 : f32
        %r = arith.divf %s, %c : f32
        cp.yield %r : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o1 = cp.attention %o0, %k, %v on @cp grid_axes = [0] mask = causal
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
        %c = arith.constant 5.0 : f32
        %r = arith.divf %s, %c : f32
        cp.yield %r : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %o2 = cp.attention %o1, %k, %v on @cp grid_axes = [0] mask = causal
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %qi: index, %ki: index):
        %c = arith.constant 3.0 : f32
        %r = arith.divf %s, %c : f32
        cp.yield %r : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  return %o2 : tensor<1x8x64x32xf32>
}

// -----

// One forward and its backward (a training step) stay in place, so CSE
// can share the backward's first K/V shift with the forward's.
shard.grid @cp(shape = 2)

// CHECK-LABEL: func.func @training_step(
// CHECK-NOT: call
// CHECK: cp.attention
// CHECK: cp.attention_grad
// CHECK-NOT: func.func private
func.func @training_step(%q: tensor<1x4x32x16xf32>, %k: tensor<1x4x32x16xf32>,
                         %v: tensor<1x4x32x16xf32>, %do: tensor<1x4x32x16xf32>)
    -> (tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>, tensor<1x4x32xf32>
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0] mask = causal
      : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32xf32>, tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>
  return %dq, %dk, %dv : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>
}

// -----

// Two backwards are outlined like two forwards: `_grad` functions.
shard.grid @cp(shape = 2)

// CHECK-LABEL: func.func @two_backwards(
// CHECK: call @cp_ring_layer_grad(
// CHECK: call @cp_ring_layer_grad(
// CHECK: func.func private @cp_ring_layer_grad(
// CHECK-NEXT: cp.attention_grad
func.func @two_backwards(%q: tensor<1x4x32x16xf32>, %k: tensor<1x4x32x16xf32>,
                         %v: tensor<1x4x32x16xf32>, %o: tensor<1x4x32x16xf32>,
                         %lse: tensor<1x4x32xf32>, %do: tensor<1x4x32x16xf32>)
    -> (tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0] mask = causal
      : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32xf32>, tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>
  %dq2, %dk2, %dv2 = cp.attention_grad %dq, %k, %v, %o, %lse, %do on @cp grid_axes = [0] mask = causal
      : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32xf32>, tensor<1x4x32x16xf32> -> tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>
  return %dq2, %dk2 : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>
}
