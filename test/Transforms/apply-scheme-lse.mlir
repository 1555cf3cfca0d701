// cp.attention's optional lse result (what cp.attention_grad needs): every
// scheme returns this rank's rows of the log-sum-exp, f32 [B, H, L], moved
// wherever the output moves, and its bytes are counted in
// cp.bytes_per_rank (SchemeTraffic's withLse). B = 1, H = 8, L = 16, P = 4.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// allgather: the local attention of the L local queries returns its lse,
// which is already this rank's; nothing more is sent (3 * (K + V) * 4).
// CHECK-LABEL: func @allgather
// CHECK: %[[O:.*]], %[[LSE:.*]] = cp.local_attention {{.*}} mask = causal {cp.bytes_per_rank = 24576 : i64, cp.scheme = #cp.scheme<allgather>}
// CHECK-SAME: -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
// CHECK: return %[[O]], %[[LSE]]
func.func @allgather(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x8x16xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = allgather
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  return %o, %lse : tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
}

// -----

shard.grid @cp(shape = 4)

// ulysses: the lse, computed on H/P heads over all S rows, is all-to-all'ed
// back to the sequence like the output: (P-1)/P of Q, K, V, O (36864) and
// of the lse (16 * 8 * 4 = 512 -> 384).
// CHECK-LABEL: func @ulysses
// CHECK: %[[OH:.*]], %[[LH:.*]] = cp.local_attention {{.*}} {cp.bytes_per_rank = 37248 : i64, cp.scheme = #cp.scheme<ulysses>}
// CHECK-SAME: -> tensor<1x2x64x32xf32>, tensor<1x2x64xf32>
// CHECK: %[[O:.*]] = cp.all_to_all %[[OH]] on @cp grid_axes = [0] split_axis = 2 concat_axis = 1 : tensor<1x2x64x32xf32> -> tensor<1x8x16x32xf32>
// CHECK: %[[LSE:.*]] = cp.all_to_all %[[LH]] on @cp grid_axes = [0] split_axis = 2 concat_axis = 1 : tensor<1x2x64xf32> -> tensor<1x8x16xf32>
// CHECK: return %[[O]], %[[LSE]]
func.func @ulysses(%q: tensor<1x8x16x32xf32>, %k: tensor<1x4x16x32xf32>, %v: tensor<1x4x16x32xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x8x16xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = ulysses
      : tensor<1x8x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  return %o, %lse : tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
}

// -----

shard.grid @cp(shape = 4)

// head_tail: the tail rows computed for the partner go back with their lse,
// and this rank's tail comes from it: the gathered K/V (24576), the tail of
// Q and the tail output (16384) and half the lse (256).
// CHECK-LABEL: func @head_tail
// CHECK: %[[KO:.*]], %[[KL:.*]] = cp.local_attention {{.*}} {cp.bytes_per_rank = 41216 : i64, cp.scheme = #cp.scheme<head_tail>}
// CHECK: %[[PO:.*]], %[[PL:.*]] = cp.local_attention
// CHECK: %[[TO:.*]] = cp.exchange %[[PO]] on @cp grid_axes = [0] partner = mirror : tensor<1x8x8x32xf32>
// CHECK: %[[O:.*]] = tensor.concat dim(2) %[[KO]], %[[TO]]
// CHECK: %[[TL:.*]] = cp.exchange %[[PL]] on @cp grid_axes = [0] partner = mirror : tensor<1x8x8xf32>
// CHECK: %[[LSE:.*]] = tensor.concat dim(2) %[[KL]], %[[TL]] : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x16xf32>
// CHECK: return %[[O]], %[[LSE]]
func.func @head_tail(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x8x16xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = head_tail
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  return %o, %lse : tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
}

// -----

shard.grid @cp(shape = 4)

// ring: the merged lse is carried through the steps with the f32 output
// and returned as it is; only the output is rounded to the storage type.
// The K/V shifts alone travel (3 * 2048 * 2 bytes).
// CHECK-LABEL: func @ring
// CHECK: scf.for {{.*}} -> (tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>)
// CHECK: cp.local_attention {{.*}} {cp.bytes_per_rank = 12288 : i64, cp.scheme = #cp.scheme<ring>}
// CHECK: %[[O:.*]], %[[LSE:.*]] = cp.merge %{{.*}}#2, %{{.*}}#3
// CHECK: %[[B:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: return %[[B]], %[[LSE]] : tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>
func.func @ring(%q: tensor<1x8x16x32xbf16>, %k: tensor<1x2x16x32xbf16>, %v: tensor<1x2x16x32xbf16>)
    -> (tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = ring
      : tensor<1x8x16x32xbf16>, tensor<1x2x16x32xbf16>, tensor<1x2x16x32xbf16> -> tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>
  return %o, %lse : tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>
}

// -----

shard.grid @cp(shape = 4)

// zigzag from the contiguous layout: each chunk's lse is merged like its
// output, the two chunks are concatenated and relaid back like the output.
// The busiest rank sends the ring's 24576, both halves of Q, K, V in
// (24576) and of O and lse out (16 * (1024 + 32) = 16896).
// CHECK-LABEL: func @zigzag
// CHECK: cp.local_attention {{.*}} {cp.bytes_per_rank = 66048 : i64, cp.scheme = #cp.scheme<zigzag>}
// CHECK: %[[O:.*]] = tensor.concat dim(2) {{.*}} -> tensor<1x8x16x32xf32>
// CHECK: %[[L:.*]] = tensor.concat dim(2) {{.*}} -> tensor<1x8x16xf32>
// CHECK: %[[OC:.*]] = cp.relayout %[[O]] on @cp grid_axes = [0] seq_axis = 2 from zigzag to contiguous : tensor<1x8x16x32xf32>
// CHECK: %[[LC:.*]] = cp.relayout %[[L]] on @cp grid_axes = [0] seq_axis = 2 from zigzag to contiguous : tensor<1x8x16xf32>
// CHECK: return %[[OC]], %[[LC]]
func.func @zigzag(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x8x16xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = zigzag
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  return %o, %lse : tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
}
