// hybrid(u): the CP group is a (P/u) x u grid, row-major (rank r is at
// (r / u, r % u)). Ulysses runs on the inner axis (u contiguous ranks), then
// K/V are all-gathered on the outer axis; local queries start at
// (r / u) * u * L.
// RUN: cp-opt %s --cp-apply-scheme -split-input-file | FileCheck %s

shard.grid @cp(shape = 8)

// A 1-D grid gets a derived 2-D grid whose linear index is the 1-D index.
// CHECK: shard.grid @cp(shape = 8)
// CHECK-NEXT: shard.grid @cp_hybrid_4x2(shape = 4x2)
// CHECK-LABEL: func @derived_grid
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x32x32xf32>, %[[K:.*]]: tensor<1x2x32x32xf32>, %[[V:.*]]: tensor<1x2x32x32xf32>)
// CHECK-DAG: %[[OUTER:.*]] = shard.process_multi_index on @cp_hybrid_4x2 axes = [0] : index
// CHECK-DAG: %[[QH:.*]] = cp.all_to_all %[[Q]] on @cp_hybrid_4x2 grid_axes = [1] split_axis = 1 concat_axis = 2 : tensor<1x8x32x32xf32> -> tensor<1x4x64x32xf32>
// CHECK-DAG: %[[KH:.*]] = cp.all_to_all %[[K]] on @cp_hybrid_4x2 grid_axes = [1] split_axis = 1 concat_axis = 2 : tensor<1x2x32x32xf32> -> tensor<1x1x64x32xf32>
// CHECK-DAG: %[[VH:.*]] = cp.all_to_all %[[V]] on @cp_hybrid_4x2 grid_axes = [1] split_axis = 1 concat_axis = 2 : tensor<1x2x32x32xf32> -> tensor<1x1x64x32xf32>
// CHECK: %[[KF:.*]] = cp.all_gather %[[KH]] on @cp_hybrid_4x2 grid_axes = [0] gather_axis = 2 : tensor<1x1x64x32xf32> -> tensor<1x1x256x32xf32>
// CHECK: %[[VF:.*]] = cp.all_gather %[[VH]] on @cp_hybrid_4x2 grid_axes = [0] gather_axis = 2 : tensor<1x1x64x32xf32> -> tensor<1x1x256x32xf32>
// CHECK: %[[UL:.*]] = arith.constant 64 : index
// CHECK: %[[QO:.*]] = arith.muli %[[OUTER]], %[[UL]] : index
// CHECK: %[[OH:.*]] = cp.local_attention %[[QH]], %[[KF]], %[[VF]] offsets(%[[QO]], %{{.*}}) mask = causal
// CHECK-SAME: cp.scheme = #cp.scheme<hybrid(2)>
// CHECK-SAME: -> tensor<1x4x64x32xf32>
// CHECK: cp.all_to_all %[[OH]] on @cp_hybrid_4x2 grid_axes = [1] split_axis = 2 concat_axis = 1 : tensor<1x4x64x32xf32> -> tensor<1x8x32x32xf32>
func.func @derived_grid(%q: tensor<1x8x32x32xf32>, %k: tensor<1x2x32x32xf32>, %v: tensor<1x2x32x32xf32>)
    -> tensor<1x8x32x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal scheme = hybrid(2)
      : tensor<1x8x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32> -> tensor<1x8x32x32xf32>
  return %o : tensor<1x8x32x32xf32>
}

// -----

shard.grid @cp(shape = 4)
shard.grid @cp_hybrid_2x2(shape = 2x2)

// A matching derived grid is reused, not duplicated.
// CHECK: shard.grid @cp_hybrid_2x2(shape = 2x2)
// CHECK-NOT: shard.grid
// CHECK-LABEL: func @reuse
func.func @reuse(%q: tensor<1x8x32x32xf32>, %k: tensor<1x2x32x32xf32>, %v: tensor<1x2x32x32xf32>)
    -> tensor<1x8x32x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] scheme = hybrid(2)
      : tensor<1x8x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32> -> tensor<1x8x32x32xf32>
  return %o : tensor<1x8x32x32xf32>
}

// -----

shard.grid @grid(shape = 2x4)

// Two grid axes name (outer, inner) directly; the inner size must be u.
// bytes: 32 * (8*32 + 4*32 + 4*32 + 8*32) * 4 * 3/4 (Ulysses) + 32 * 4 * 64 * 4 * 1 (all-gather)
// CHECK-LABEL: func @two_axes
// CHECK: %[[OUTER:.*]] = shard.process_multi_index on @grid axes = [0]
// CHECK: %[[INNER:.*]] = shard.process_multi_index on @grid axes = [1]
// CHECK: cp.all_to_all %{{.*}} on @grid grid_axes = [1] split_axis = 1 concat_axis = 2 : tensor<1x8x32x32xf32> -> tensor<1x2x128x32xf32>
// CHECK: cp.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 2 : tensor<1x1x128x32xf32> -> tensor<1x1x256x32xf32>
// CHECK: %[[QO:.*]] = arith.muli %[[OUTER]], %{{.*}} : index
// CHECK: %[[H0:.*]] = arith.muli %[[INNER]], %{{.*}} : index
// Global-extent mask: rows [(r/u) * u * L, + u * L), heads [(r%u) * H/u, + H/u).
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0, %[[QO]], 0] [1, 8, 128, 256] [1, 1, 1, 1] : tensor<1x8x256x256xi1> to tensor<1x8x128x256xi1>
// CHECK: %[[HEADS:.*]] = tensor.extract_slice %[[ROWS]][0, %[[H0]], 0, 0] [1, 2, 128, 256] [1, 1, 1, 1] : tensor<1x8x128x256xi1> to tensor<1x2x128x256xi1>
// CHECK: cp.local_attention {{.*}} offsets(%[[QO]], %{{.*}}) explicit_mask %[[HEADS]] {cp.bytes_per_rank = 106496 : i64, cp.scheme = #cp.scheme<hybrid(4)>}
func.func @two_axes(%q: tensor<1x8x32x32xf32>, %k: tensor<1x4x32x32xf32>, %v: tensor<1x4x32x32xf32>,
                    %m: tensor<1x8x256x256xi1>) -> tensor<1x8x32x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @grid grid_axes = [0, 1] scheme = hybrid(4)
      : tensor<1x8x32x32xf32>, tensor<1x4x32x32xf32>, tensor<1x4x32x32xf32>, tensor<1x8x256x256xi1>
      -> tensor<1x8x32x32xf32>
  return %o : tensor<1x8x32x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A local-extent mask shared by all heads is all-gathered within the inner
// (Ulysses) group: u * L rows, exactly this rank's queries.
// CHECK-LABEL: func @local_mask
// CHECK: %[[MG:.*]] = cp.all_gather %{{.*}} on @cp_hybrid_2x2 grid_axes = [1] gather_axis = 0 : tensor<32x128xi1> -> tensor<64x128xi1>
// CHECK: cp.local_attention {{.*}} explicit_mask %[[MG]] mask = sliding_window(4)
func.func @local_mask(%q: tensor<1x8x32x32xf32>, %k: tensor<1x2x32x32xf32>, %v: tensor<1x2x32x32xf32>,
                      %m: tensor<32x128xi1>) -> tensor<1x8x32x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = sliding_window(4) scheme = hybrid(2)
      : tensor<1x8x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<32x128xi1>
      -> tensor<1x8x32x32xf32>
  return %o : tensor<1x8x32x32xf32>
}
