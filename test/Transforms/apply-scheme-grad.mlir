// cp-apply-scheme on cp.attention_grad: each scheme's backward mirrors its
// forward (docs/Training.md §3). The local gradient ops carry the scheme
// and the backward's bytes per rank (SchemeTraffic).
// RUN: cp-opt %s -split-input-file -cp-apply-scheme -verify-diagnostics | FileCheck %s

shard.grid @cp(shape = 4)

// allgather: K and V gathered, the local gradient of this rank's queries
// (q_offset = r * L) against all S = 256 keys, dK and dV reduce-scattered
// (each rank keeps the sum over ranks of its own rows). Bytes:
// (P-1)(K+V) gathered + (P-1)(K+V) reduce-scattered = 2 * 3 * 32768.
// CHECK-LABEL: func @allgather
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0]
// CHECK: %[[KF:.*]] = cp.all_gather %arg1 on @cp grid_axes = [0] gather_axis = 2 : tensor<1x2x64x32xf32> -> tensor<1x2x256x32xf32>
// CHECK: %[[VF:.*]] = cp.all_gather %arg2 {{.*}} gather_axis = 2
// CHECK: %[[QO:.*]] = arith.muli %[[R]], %c64
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = cp.local_attention_grad %arg0, %[[KF]], %[[VF]], %arg3, %arg4, %arg5 offsets(%[[QO]], %c0) mask = causal {cp.backward_kv = "regathered", cp.bytes_per_rank = 196608 : i64, cp.scheme = #cp.scheme<allgather>} {{.*}} -> tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
// CHECK: %[[RK:.*]] = cp.reduce_scatter %[[DK]] on @cp grid_axes = [0] scatter_axis = 2 : tensor<1x2x256x32xf32> -> tensor<1x2x64x32xf32>
// CHECK: %[[RV:.*]] = cp.reduce_scatter %[[DV]]
// CHECK: return %[[DQ]], %[[RK]], %[[RV]]
func.func @allgather(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                     %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = allgather
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Forward and backward in one function: the backward reuses the forward's
// gathered K/V instead of sending them again, and says so; only the
// reduce-scatter is left (3 * 32768 bytes).
// CHECK-LABEL: func @reuse
// CHECK: %[[KF:.*]] = cp.all_gather %arg1
// CHECK: %[[VF:.*]] = cp.all_gather %arg2
// CHECK-NOT: cp.all_gather
// CHECK: cp.local_attention %arg0, %[[KF]], %[[VF]]
// CHECK: cp.local_attention_grad %arg0, %[[KF]], %[[VF]], {{.*}} {cp.backward_kv = "reused", cp.bytes_per_rank = 98304 : i64
// CHECK-COUNT-2: cp.reduce_scatter
func.func @reuse(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                 %v: tensor<1x2x64x32xf32>, %lse: tensor<1x8x64xf32>,
                 %do: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = allgather
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
      -> tensor<1x8x64x32xf32>
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = allgather
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %o, %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// ulysses: q, k, v, o, dO and lse trade the sequence split for a head split
// (split heads, concat sequence), the local gradient runs over the whole
// sequence for H/P heads at head_offset r * H/P (the score_mod reads the
// global head), and dq, dk, dv trade back (split sequence, concat heads).
// CHECK-LABEL: func @ulysses
// CHECK-COUNT-4: cp.all_to_all {{.*}} split_axis = 1 concat_axis = 2 : tensor<1x
// CHECK: cp.all_to_all %arg4 {{.*}} split_axis = 1 concat_axis = 2 : tensor<1x8x64xf32> -> tensor<1x2x256xf32>
// CHECK: cp.all_to_all %arg5 {{.*}} split_axis = 1 concat_axis = 2
// CHECK: %[[H0:.*]] = arith.muli %{{.*}}, %c2
// CHECK: cp.local_attention_grad {{.*}} offsets(%{{.*}}, %{{.*}}) head_offset(%[[H0]]) mask = causal score_mod
// CHECK: cp.scheme = #cp.scheme<ulysses>} {{.*}} -> tensor<1x2x256x32xf32>, tensor<1x1x256x32xf32>, tensor<1x1x256x32xf32>
// CHECK-COUNT-3: cp.all_to_all {{.*}} split_axis = 2 concat_axis = 1
func.func @ulysses(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                   %v: tensor<1x4x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                   %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = ulysses
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index):
        %hi = arith.index_cast %h : index to i64
        %hf = arith.sitofp %hi : i64 to f32
        %y = arith.subf %x, %hf : f32
        cp.yield %y : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// hybrid(2): Ulysses inside pairs, then allgather's backward across them on
// the derived 2x2 grid: K/V gathered over the outer axis, dK/dV
// reduce-scattered over it before they trade back.
// CHECK-LABEL: func @hybrid
// CHECK-COUNT-6: cp.all_to_all {{.*}} on @cp_hybrid_2x2 grid_axes = [1] split_axis = 1 concat_axis = 2
// CHECK-COUNT-2: cp.all_gather {{.*}} on @cp_hybrid_2x2 grid_axes = [0] gather_axis = 2
// CHECK: cp.local_attention_grad {{.*}} cp.scheme = #cp.scheme<hybrid(2)>
// CHECK-COUNT-2: cp.reduce_scatter {{.*}} on @cp_hybrid_2x2 grid_axes = [0] scatter_axis = 2
// CHECK-COUNT-3: cp.all_to_all {{.*}} on @cp_hybrid_2x2 grid_axes = [1] split_axis = 2 concat_axis = 1
func.func @hybrid(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                  %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                  %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] scheme = hybrid(2)
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// An op in the zigzag layout under allgather (which computes in the
// contiguous one): the six inputs are relaid, the three gradients relaid
// back. bf16 storage with f32 gradients: dK/dV partial sums travel and are
// summed in f32.
// CHECK-LABEL: func @zigzag_bf16
// CHECK-COUNT-6: cp.relayout {{.*}} from zigzag to contiguous
// CHECK: cp.local_attention_grad {{.*}} -> tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>
// CHECK: cp.reduce_scatter {{.*}} : tensor<1x2x256x32xf32> -> tensor<1x2x64x32xf32>
// CHECK-COUNT-3: cp.relayout {{.*}} from contiguous to zigzag : tensor<1x{{.*}}xf32>
func.func @zigzag_bf16(%q: tensor<1x8x64x32xbf16>, %k: tensor<1x2x64x32xbf16>,
                       %v: tensor<1x2x64x32xbf16>, %o: tensor<1x8x64x32xbf16>,
                       %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xbf16>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal layout = zigzag scheme = allgather
      : tensor<1x8x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>,
        tensor<1x8x64x32xbf16>, tensor<1x8x64xf32>, tensor<1x8x64x32xbf16>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// head_tail: the tail halves of q, o, dO and lse go to the mirror rank
// (P-1-r), which computes their gradient at the tail's global offset and
// sends the tail's dq back; both halves' dK/dV contributions are added and
// reduce-scattered as in allgather.
// CHECK-LABEL: func @head_tail
// CHECK-COUNT-4: cp.exchange {{.*}} partner = mirror
// CHECK-COUNT-2: cp.all_gather
// CHECK: %[[DQ0:.*]], %[[DK0:.*]], %[[DV0:.*]] = cp.local_attention_grad {{.*}} cp.scheme = #cp.scheme<head_tail>
// CHECK: %[[DQ1:.*]], %[[DK1:.*]], %[[DV1:.*]] = cp.local_attention_grad
// CHECK: %[[TAIL:.*]] = cp.exchange %[[DQ1]] {{.*}} partner = mirror : tensor<1x8x32x32xf32>
// CHECK: tensor.concat dim(2) %[[DQ0]], %[[TAIL]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[DK0]], %[[DK1]]
// CHECK: cp.reduce_scatter %[[SUM]]
func.func @head_tail(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                     %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                     %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = head_tail
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return %dq, %dk, %dv
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

func.func @dynamic_gradient(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                            %v: tensor<1x2x64x32xf32>, %o: tensor<1x8x64x32xf32>,
                            %lse: tensor<1x8x64xf32>, %do: tensor<1x8x64x32xf32>) {
  // expected-error @+1 {{cp-apply-scheme needs static shapes, got 'tensor<1x?x64x32xf32>' for an output, lse, grad_output or gradient; give every operand and result of cp.attention_grad a static shape}}
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] scheme = allgather
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64xf32>, tensor<1x8x64x32xf32>
      -> tensor<1x?x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>
  return
}
