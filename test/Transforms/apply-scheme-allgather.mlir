// allgather: K and V are all-gathered along the sequence in rank order; the
// local queries sit at q_offset = r * L against all S keys (kv_offset = 0).
// RUN: cp-opt %s --cp-apply-scheme=scheme=allgather -split-input-file | FileCheck %s
// RUN: cp-opt %s --cp-apply-scheme=scheme=allgather --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=CANON

shard.grid @cp(shape = 4)

// GQA (H = 8, Hkv = 2): K and V travel with their 2 heads, never expanded.
// CHECK-LABEL: func @causal_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x64x32xf32>, %[[K:.*]]: tensor<1x2x64x32xf32>, %[[V:.*]]: tensor<1x2x64x32xf32>)
// CHECK-DAG: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// CHECK-DAG: %[[KF:.*]] = cp.all_gather %[[K]] on @cp grid_axes = [0] gather_axis = 2 : tensor<1x2x64x32xf32> -> tensor<1x2x256x32xf32>
// CHECK-DAG: %[[VF:.*]] = cp.all_gather %[[V]] on @cp grid_axes = [0] gather_axis = 2 : tensor<1x2x64x32xf32> -> tensor<1x2x256x32xf32>
// CHECK-DAG: %[[L:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[QO:.*]] = arith.muli %[[R]], %[[L]] : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: %[[O:.*]] = cp.local_attention %[[Q]], %[[KF]], %[[VF]] offsets(%[[QO]], %[[ZERO]]) mask = causal
// CHECK-SAME: cp.bytes_per_rank = 98304 : i64, cp.scheme = #cp.scheme<allgather>
// CHECK-SAME: -> tensor<1x8x64x32xf32>
// CHECK: return %[[O]]
// CHECK-NOT: cp.attention
func.func @causal_gqa(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// An explicit mask with the global query extent S = 256 is narrowed to this
// rank's rows [r * L, r * L + L); its key extent stays global.
// CHECK-LABEL: func @explicit_global_mask
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0]
// CHECK: %[[QO:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %{{.*}}[0, 0, %[[QO]], 0] [1, 8, 64, 256] [1, 1, 1, 1] : tensor<1x8x256x256xi1> to tensor<1x8x64x256xi1>
// CHECK: cp.local_attention {{.*}} offsets(%[[QO]], %{{.*}}) explicit_mask %[[ROWS]] {
func.func @explicit_global_mask(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                                %v: tensor<1x2x64x32xf32>, %m: tensor<1x8x256x256xi1>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x8x256x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A mask with the local query extent L = 64 already covers this rank's rows.
// CHECK-LABEL: func @explicit_local_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<64x256xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: cp.local_attention {{.*}} explicit_mask %[[M]] mask = causal
func.func @explicit_local_mask(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                               %v: tensor<1x2x64x32xf32>, %m: tensor<64x256xf32>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<64x256xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 2)

// MLA (Dv = 16 != D = 48) with a sliding window and an explicit scale.
// CHECK-LABEL: func @mla_sliding_window
// CHECK: cp.all_gather %{{.*}} gather_axis = 2 : tensor<2x4x32x48xbf16> -> tensor<2x4x64x48xbf16>
// CHECK: cp.all_gather %{{.*}} gather_axis = 2 : tensor<2x4x32x16xbf16> -> tensor<2x4x64x16xbf16>
// B * L * Hkv * (D + Dv) * b * (P - 1) = 2 * 32 * 4 * 64 * 2 * 1
// CHECK: cp.local_attention {{.*}} mask = sliding_window(8) scale = 1.250000e-01 {cp.bytes_per_rank = 32768 : i64
// CHECK-SAME: -> tensor<2x4x32x16xbf16>
func.func @mla_sliding_window(%q: tensor<2x4x32x48xbf16>, %k: tensor<2x4x32x48xbf16>,
                              %v: tensor<2x4x32x16xbf16>) -> tensor<2x4x32x16xbf16> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = sliding_window(8) scale = 0.125
      : tensor<2x4x32x48xbf16>, tensor<2x4x32x48xbf16>, tensor<2x4x32x16xbf16> -> tensor<2x4x32x16xbf16>
  return %o : tensor<2x4x32x16xbf16>
}

// -----

shard.grid @dp_cp(shape = 2x4)

// The CP group is axis 1 of a data x context grid: the collectives and the
// rank index use that axis only.
// CHECK-LABEL: func @cp_axis_of_2d_grid
// CHECK: shard.process_multi_index on @dp_cp axes = [1]
// CHECK: cp.all_gather %{{.*}} on @dp_cp grid_axes = [1] gather_axis = 2
func.func @cp_axis_of_2d_grid(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @dp_cp grid_axes = [1] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @single(shape = 1)

// P = 1 degenerates to one local attention: no collective survives
// canonicalization, and the offsets are the constant 0.
// CANON-LABEL: func @single_process
// CANON-NOT: cp.all_gather
// CANON-NOT: shard.process
// CANON: %[[ZERO:.*]] = arith.constant 0 : index
// CANON: cp.local_attention %arg0, %arg1, %arg2 offsets(%[[ZERO]], %[[ZERO]]) mask = causal
// CANON-NOT: cp.{{all_gather|all_to_all|exchange|shift}}
// CANON: return
func.func @single_process(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x32xf32>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v on @single grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}
