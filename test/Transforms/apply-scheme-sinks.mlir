// Attention sinks under each scheme: every local attention gets the sinks
// of the heads it computes (ulysses and hybrid slice them with the heads),
// and where partial results are merged (ring, zigzag) exactly one partial
// of each query row counts them: step 0's diagonal one. The backward's
// grad_sinks is the same for every scheme: -sum exp(sinks - lse) *
// rowsum(dO * O) over this rank's rows, summed over the group through an
// all-gather of the [H] partial sums. B = 1, H = 8, Hkv = 2, L = 16, P = 4.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file | FileCheck %s
// RUN: cp-opt %s --cp-apply-scheme=unroll-ring -split-input-file | FileCheck %s --check-prefix=UNROLLED

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @allgather
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<8xf32>
// CHECK: cp.local_attention {{.*}} sinks(%[[S]] : tensor<8xf32>) mask = causal
func.func @allgather(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<8xf32>)
    -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal scheme = allgather
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Ulysses: rank r computes heads 2r and 2r + 1, with their two sinks.
// CHECK-LABEL: func @ulysses
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<8xf32>
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0]
// CHECK: %[[FIRST:.*]] = arith.muli %[[R]], %c2
// CHECK: %[[MINE:.*]] = tensor.extract_slice %[[S]][%[[FIRST]]] [2] [1] : tensor<8xf32> to tensor<2xf32>
// CHECK: cp.local_attention {{.*}} sinks(%[[MINE]] : tensor<2xf32>) mask = causal
func.func @ulysses(%q: tensor<1x8x16x32xf32>, %k: tensor<1x4x16x32xf32>, %v: tensor<1x4x16x32xf32>, %s: tensor<8xf32>)
    -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal scheme = ulysses
      : tensor<1x8x16x32xf32>, tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Ring, unrolled: of the four partials (one per step) only the first
// counts the sinks; cp.merge then counts them once.
// UNROLLED-LABEL: func @ring
// UNROLLED: cp.local_attention {{.*}} sinks(%{{.*}} : tensor<8xf32>) mask = causal
// UNROLLED-NOT: sinks(
// UNROLLED: cp.merge
// UNROLLED-NOT: sinks(
// UNROLLED: return
func.func @ring(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<8xf32>)
    -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal scheme = ring
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Zigzag: each of the two query chunks has its own first partial.
// UNROLLED-LABEL: func @zigzag
// UNROLLED-COUNT-2: sinks(%{{.*}} : tensor<8xf32>) mask = causal
// UNROLLED-NOT: sinks(
// UNROLLED: return
func.func @zigzag(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>, %s: tensor<8xf32>)
    -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal layout = zigzag scheme = zigzag
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// The backward: dq, dk, dv as without sinks (the lse counts them), and
// grad_sinks from this rank's rows, summed over the group.
// CHECK-LABEL: func @backward
// CHECK: cp.local_attention_grad
// CHECK-NOT: sinks(
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]
// CHECK: math.exp
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[PARTIAL]] {{\[\[}}0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK: %[[ALL:.*]] = cp.all_gather %[[ROW]] on @cp grid_axes = [0] gather_axis = 0 : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[ALL]] : tensor<4x8xf32>)
// CHECK: return %{{.*}}, %[[SUM]]
func.func @backward(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>,
                    %o: tensor<1x8x16x32xf32>, %lse: tensor<1x8x16xf32>, %do: tensor<1x8x16x32xf32>, %s: tensor<8xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<8xf32>) {
  %dq, %dk, %dv, %ds = cp.attention_grad %q, %k, %v, %o, %lse, %do sinks(%s : tensor<8xf32>) on @cp grid_axes = [0] mask = causal scheme = ring
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>, tensor<1x8x16x32xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<8xf32>
  return %dq, %ds : tensor<1x8x16x32xf32>, tensor<8xf32>
}
