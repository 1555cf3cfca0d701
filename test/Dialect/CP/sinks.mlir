// Attention sinks on the attention ops: one f32 logit per query head that
// joins every row's softmax denominator once. The round trip of each form,
// then every diagnostic about them, with its numbers.
// RUN: cp-opt %s -split-input-file | cp-opt -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @forward_and_backward
// CHECK: %[[O:.*]], %[[LSE:.*]] = cp.attention %{{.*}}, %{{.*}}, %{{.*}} sinks(%[[S:.*]] : tensor<8xf32>) on @cp grid_axes = [0] mask = causal
// CHECK: cp.attention_grad {{.*}} sinks(%[[S]] : tensor<8xf32>) on @cp
// CHECK-SAME: -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<8xf32>
func.func @forward_and_backward(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>,
                                %s: tensor<8xf32>, %do: tensor<1x8x16x32xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<8xf32>) {
  %o, %lse = cp.attention %q, %k, %v sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  %dq, %dk, %dv, %ds = cp.attention_grad %q, %k, %v, %o, %lse, %do sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16x32xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<8xf32>
  return %dq, %ds : tensor<1x8x16x32xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func @local
// CHECK: cp.local_attention {{.*}} offsets(%{{.*}}, %{{.*}}) sinks(%{{.*}} : tensor<2xf32>) mask = causal
func.func @local(%q: tensor<1x2x16x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>,
                 %s: tensor<2xf32>, %qo: index, %ko: index) -> tensor<1x2x16x32xf32> {
  %o = cp.local_attention %q, %k, %v offsets(%qo, %ko) sinks(%s : tensor<2xf32>) mask = causal
      : tensor<1x2x16x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x2x16x32xf32>
  return %o : tensor<1x2x16x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A backward without sinks of a forward with them: the sinks are frozen
// (dq, dk and dv come from the lse, which counts them), no grad_sinks.
// CHECK-LABEL: func @frozen_sinks
// CHECK: cp.attention_grad
// CHECK-NOT: sinks(
// CHECK-SAME: -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>{{$}}
func.func @frozen_sinks(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>,
                        %s: tensor<8xf32>, %do: tensor<1x8x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %o, %lse = cp.attention %q, %k, %v sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16x32xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>
  return %dq : tensor<1x8x16x32xf32>
}
