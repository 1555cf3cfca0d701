// cp.attention with queries = replicated: a decode step whose Lq = 2 queries
// are the same on every rank, against a KV cache of S = P * L = 32 entries
// sharded on the sequence (L = 16, P = 2, H = 4, Hkv = 2, D = 8, f32).
// Query row i has global position i, so every local attention starts its
// queries at offset 0 and its keys at the block's global offset; every
// rank returns the whole output and lse.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file | FileCheck %s

shard.grid @cp(shape = 2)

// allgather: K and V gathered, the queries attend all S keys from row 0.
// Bytes: (K + V) shard = 2 * 16 * 16 elements, to 1 peer: 2048.
// CHECK-LABEL: func @allgather
// CHECK-DAG: %[[K:.*]] = cp.all_gather %arg1 {{.*}} gather_axis = 2 : tensor<1x2x16x8xf32> -> tensor<1x2x32x8xf32>
// CHECK-DAG: %[[V:.*]] = cp.all_gather %arg2 {{.*}} gather_axis = 2
// CHECK: %[[O:.*]], %[[LSE:.*]] = cp.local_attention %arg0, %[[K]], %[[V]] offsets(%c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}) mask = causal {cp.bytes_per_rank = 2048 : i64, cp.scheme = #cp.scheme<allgather>}
// CHECK: return %[[O]], %[[LSE]]
func.func @allgather(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>)
    -> (tensor<1x4x2x8xf32>, tensor<1x4x2xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal queries = replicated scheme = allgather
      : tensor<1x4x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x2x8xf32>, tensor<1x4x2xf32>
  return %o, %lse : tensor<1x4x2x8xf32>, tensor<1x4x2xf32>
}

// -----

shard.grid @cp(shape = 2)

// ulysses: this rank's H/P heads of the (replicated) queries are sliced,
// not traded; K/V are traded from sequence to heads; the output and lse
// heads are all-gathered. Bytes: K/V 512 / 2 + O 2 * 2 * 8 elements, times
// 4, + lse 2 * 2 * 4 = 1168.
// CHECK-LABEL: func @ulysses
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0]
// CHECK: %[[H0:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: %[[Q:.*]] = tensor.extract_slice %arg0[0, %[[H0]], 0, 0] [1, 2, 2, 8] [1, 1, 1, 1]
// CHECK: %[[K:.*]] = cp.all_to_all %arg1 {{.*}} split_axis = 1 concat_axis = 2 : tensor<1x2x16x8xf32> -> tensor<1x1x32x8xf32>
// CHECK: %[[V:.*]] = cp.all_to_all %arg2
// CHECK: %[[O:.*]], %[[LSE:.*]] = cp.local_attention %[[Q]], %[[K]], %[[V]] {{.*}}{cp.bytes_per_rank = 1168 : i64, cp.scheme = #cp.scheme<ulysses>}
// CHECK-SAME: -> tensor<1x2x2x8xf32>, tensor<1x2x2xf32>
// CHECK: %[[OUT:.*]] = cp.all_gather %[[O]] {{.*}} gather_axis = 1 : tensor<1x2x2x8xf32> -> tensor<1x4x2x8xf32>
// CHECK: %[[L:.*]] = cp.all_gather %[[LSE]] {{.*}} gather_axis = 1 : tensor<1x2x2xf32> -> tensor<1x4x2xf32>
// CHECK: return %[[OUT]], %[[L]]
func.func @ulysses(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>)
    -> (tensor<1x4x2x8xf32>, tensor<1x4x2xf32>) {
  %o, %lse = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal queries = replicated scheme = ulysses
      : tensor<1x4x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x2x8xf32>, tensor<1x4x2xf32>
  return %o, %lse : tensor<1x4x2x8xf32>, tensor<1x4x2xf32>
}

// -----

shard.grid @cp(shape = 2)

// ring: the queries stay, the cache blocks travel; both steps are run
// (the causal rows 0..1 see nothing in rank 1's block, which gives lse
// -inf and is ignored by the merge). The mask's columns are the block's.
// CHECK-LABEL: func @ring
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0]
// CHECK: %[[K1:.*]] = cp.shift %arg1 {{.*}} offset = 1
// CHECK: %[[V1:.*]] = cp.shift %arg2 {{.*}} offset = 1
// CHECK: %[[OWN:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: %[[M0:.*]] = tensor.extract_slice %arg3[0, 0, 0, %[[OWN]]] [1, 1, 2, 16]
// CHECK: %[[O0:.*]], %[[L0:.*]] = cp.local_attention %arg0, %arg1, %arg2 offsets(%c0, %[[OWN]]) explicit_mask %[[M0]] {cp.bytes_per_rank = 2048 : i64, cp.scheme = #cp.scheme<ring>}
// CHECK: %[[O1:.*]], %[[L1:.*]] = cp.local_attention %arg0, %[[K1]], %[[V1]] offsets(%c0{{.*}}, %{{.*}}) explicit_mask
// CHECK: %[[O:.*]], %[[L:.*]] = cp.merge %[[O0]], %[[L0]], %[[O1]], %[[L1]]
// CHECK: return %[[O]], %[[L]]
func.func @ring(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %m: tensor<1x1x2x32xi1>)
    -> (tensor<1x4x2x8xf32>, tensor<1x4x2xf32>) {
  %o, %lse = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] queries = replicated scheme = ring
      : tensor<1x4x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x1x2x32xi1> -> tensor<1x4x2x8xf32>, tensor<1x4x2xf32>
  return %o, %lse : tensor<1x4x2x8xf32>, tensor<1x4x2xf32>
}
