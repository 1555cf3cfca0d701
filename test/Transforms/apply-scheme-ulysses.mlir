// ulysses: all-to-all Q, K and V from sequence-sharded [B, H, L, D] to
// head-sharded [B, H/P, S, D] (split heads, concatenate sequence), attend
// over the full sequence at offsets 0, then all-to-all the output back.
// RUN: cp-opt %s --cp-apply-scheme=scheme=ulysses -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// GQA with Hkv = 4: K and V keep Hkv / P = 1 head each; MLA (Dv = 16).
// CHECK-LABEL: func @causal_gqa_mla
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x64x32xf32>, %[[K:.*]]: tensor<1x4x64x32xf32>, %[[V:.*]]: tensor<1x4x64x16xf32>)
// CHECK: %[[QH:.*]] = cp.all_to_all %[[Q]] on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x2x256x32xf32>
// CHECK: %[[KH:.*]] = cp.all_to_all %[[K]] on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x4x64x32xf32> -> tensor<1x1x256x32xf32>
// CHECK: %[[VH:.*]] = cp.all_to_all %[[V]] on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x4x64x16xf32> -> tensor<1x1x256x16xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// B * L * (H*D + Hkv*D + Hkv*Dv + H*Dv) * b * (P-1)/P = 64 * 576 * 4 * 3/4
// CHECK: %[[OH:.*]] = cp.local_attention %[[QH]], %[[KH]], %[[VH]] offsets(%[[ZERO]], %{{.*}}) mask = causal {cp.bytes_per_rank = 110592 : i64, cp.scheme = #cp.scheme<ulysses>}
// CHECK-SAME: -> tensor<1x2x256x16xf32>
// CHECK: %[[O:.*]] = cp.all_to_all %[[OH]] on @cp grid_axes = [0] split_axis = 2 concat_axis = 1 : tensor<1x2x256x16xf32> -> tensor<1x8x64x16xf32>
// CHECK: return %[[O]]
func.func @causal_gqa_mla(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>, %v: tensor<1x4x64x16xf32>)
    -> tensor<1x8x64x16xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x16xf32> -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// -----

shard.grid @cp(shape = 4)

// A local-extent mask with one slice per head travels like Q: it is
// all-to-all'ed to this rank's H/P heads and all S query rows.
// CHECK-LABEL: func @local_mask_per_head
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x8x64x256xi1>
// CHECK: %[[MH:.*]] = cp.all_to_all %[[M]] on @cp grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x256xi1> -> tensor<1x2x256x256xi1>
// CHECK: cp.local_attention {{.*}} explicit_mask %[[MH]] mask = causal
func.func @local_mask_per_head(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                               %v: tensor<1x4x64x32xf32>, %m: tensor<1x8x64x256xi1>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x8x64x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A local-extent mask shared by all heads is all-gathered along its rows.
// CHECK-LABEL: func @local_mask_shared
// CHECK: %[[MG:.*]] = cp.all_gather %{{.*}} on @cp grid_axes = [0] gather_axis = 0 : tensor<64x256xf32> -> tensor<256x256xf32>
// CHECK: cp.local_attention {{.*}} explicit_mask %[[MG]] {
func.func @local_mask_shared(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                             %v: tensor<1x4x64x32xf32>, %m: tensor<64x256xf32>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<64x256xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A global-extent mask already has all S rows; with a head extent of H it
// is sliced to this rank's heads [r * H/P, r * H/P + H/P).
// CHECK-LABEL: func @global_mask_per_head
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x8x256x256xi1>
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0]
// CHECK: %[[H0:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: %[[MH:.*]] = tensor.extract_slice %[[M]][0, %[[H0]], 0, 0] [1, 2, 256, 256] [1, 1, 1, 1] : tensor<1x8x256x256xi1> to tensor<1x2x256x256xi1>
// CHECK: cp.local_attention {{.*}} explicit_mask %[[MH]] mask = sliding_window(16)
func.func @global_mask_per_head(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                                %v: tensor<1x4x64x32xf32>, %m: tensor<1x8x256x256xi1>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = sliding_window(16)
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x8x256x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}
