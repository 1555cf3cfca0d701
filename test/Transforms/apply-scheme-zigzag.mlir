// zigzag: ring over the zigzag layout, where rank r holds chunks r and
// 2P-1-r of 2P chunks of L/2 rows. Every (query chunk, key chunk) pair is
// attended at its own global offsets; under a causal mask a rank sees, at
// step 0, its two diagonal chunks and the late query chunk against the
// early key chunk, and at each later step the late query chunk against the
// early key chunk plus exactly one of the two same-side pairs, so every rank
// does the same work. Pairs the mask hides on every rank are not emitted.
// An op in the contiguous layout goes through cp.relayout and back.
// RUN: cp-opt %s --cp-apply-scheme=scheme=zigzag --canonicalize --cse -split-input-file | FileCheck %s
// RUN: cp-opt %s --cp-apply-scheme=scheme=allgather -split-input-file | FileCheck %s --check-prefix=OTHER

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @zigzag_layout
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x16x32xf32>, %[[K:.*]]: tensor<1x2x16x32xf32>, %[[V:.*]]: tensor<1x2x16x32xf32>)
// CHECK-NOT: cp.relayout
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// CHECK: %[[MIRROR:.*]] = arith.subi %{{.*}}, %[[R]] : index
// CHECK: %[[EARLY:.*]] = arith.muli %[[R]], %[[C8:.*]] : index
// CHECK: %[[LATE:.*]] = arith.muli %[[MIRROR]], %[[C8]] : index
// CHECK: cp.shift %[[K]] on @cp grid_axes = [0] offset = 1
// CHECK: cp.shift %[[V]] on @cp grid_axes = [0] offset = 1
// Step 0: chunk r against itself, chunk 2P-1-r against itself and against
// chunk r; chunk r never sees chunk 2P-1-r.
// CHECK: %[[QE:.*]] = tensor.extract_slice %[[Q]][0, 0, 0, 0] [1, 8, 8, 32]
// CHECK: cp.local_attention %[[QE]], {{.*}} offsets(%[[EARLY]], %[[EARLY]]) mask = causal {cp.bytes_per_rank = 24576 : i64
// CHECK: %[[QL:.*]] = tensor.extract_slice %[[Q]][0, 0, 8, 0] [1, 8, 8, 32]
// CHECK: cp.local_attention %[[QL]], {{.*}} offsets(%[[LATE]], %[[LATE]]) mask = causal
// CHECK: cp.local_attention %[[QL]], {{.*}} offsets(%[[LATE]], %[[EARLY]]) mask = causal
// CHECK-NOT: offsets(%[[EARLY]], %[[LATE]])
// CHECK: cp.merge
// Step 1: the early pair only where the source rank is before r (scf.if),
// the late query chunk against the early key chunk always, the late pair
// only where the source rank is after r.
// CHECK: %[[SRC:.*]] = arith.remui
// CHECK: %[[KE:.*]] = arith.muli %[[SRC]], %[[C8]] : index
// CHECK: scf.if
// CHECK:   cp.local_attention %[[QE]], {{.*}} offsets(%[[EARLY]], %[[KE]]) mask = causal
// CHECK: cp.merge
// CHECK: cp.local_attention %[[QL]], {{.*}} offsets(%[[LATE]], %[[KE]]) mask = causal
// CHECK: scf.if
// CHECK:   cp.local_attention %[[QL]], {{.*}} offsets(%[[LATE]], %{{.*}}) mask = causal
// The two chunks' results, in local order.
// CHECK: %[[O:.*]] = tensor.concat dim(2) %{{.*}}, %{{.*}} : (tensor<1x8x8x32xf32>, tensor<1x8x8x32xf32>) -> tensor<1x8x16x32xf32>
// CHECK: return %[[O]]

// Under any other scheme the zigzag operands are converted to the
// contiguous layout first, and the result back.
// OTHER-LABEL: func @zigzag_layout
// OTHER: cp.relayout %{{.*}} on @cp grid_axes = [0] seq_axis = 2 from zigzag to contiguous : tensor<1x8x16x32xf32>
// OTHER: cp.relayout %{{.*}} from zigzag to contiguous : tensor<1x2x16x32xf32>
// OTHER: cp.relayout %{{.*}} from zigzag to contiguous : tensor<1x2x16x32xf32>
// The busiest rank (r = 1 or 3) sends both its halves in each direction:
// 2 * 8*(8*32 + 2*64)*4 (Q, K, V in) + 2 * 8*8*32*4 (O out) = 40960 bytes,
// plus the all-gather's 16*2*64*4*3 = 24576.
// OTHER: cp.local_attention {{.*}} {cp.bytes_per_rank = 65536 : i64, cp.scheme = #cp.scheme<allgather>}
// OTHER: %[[BACK:.*]] = cp.relayout %{{.*}} from contiguous to zigzag : tensor<1x8x16x32xf32>
// OTHER: return %[[BACK]]
func.func @zigzag_layout(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>)
    -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal layout = zigzag
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Contiguous operands: Q, K, V and a mask with the local query extent move
// to the zigzag layout (its rows are positions too), and the result back.
// CHECK-LABEL: func @contiguous_layout
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<16x64xi1>
// CHECK: cp.relayout %{{.*}} on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<1x8x16x32xf32>
// CHECK: cp.relayout %{{.*}} seq_axis = 2 from contiguous to zigzag : tensor<1x2x16x32xf32>
// CHECK: cp.relayout %{{.*}} seq_axis = 2 from contiguous to zigzag : tensor<1x2x16x32xf32>
// CHECK: %[[MZ:.*]] = cp.relayout %[[M]] on @cp grid_axes = [0] seq_axis = 0 from contiguous to zigzag : tensor<16x64xi1>
// CHECK: tensor.extract_slice %[[MZ]][0, 0] [8, 64]
// CHECK: %[[O:.*]] = cp.relayout %{{.*}} seq_axis = 2 from zigzag to contiguous : tensor<1x8x16x32xf32>
// CHECK: return %[[O]]
func.func @contiguous_layout(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>,
                             %m: tensor<16x64xi1>) -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<16x64xi1> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}
