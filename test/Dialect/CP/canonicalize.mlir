// Folds of the cp dialect: collectives over a group of one process vanish,
// and a causal/windowed cp.offset_mask feeding cp.local_attention becomes the
// attention's mask attribute, so no mask tensor is built.
// RUN: cp-opt %s -canonicalize -split-input-file | FileCheck %s

shard.grid @single(shape = 1)
shard.grid @grid2d(shape = 4x1)

// CHECK-LABEL: func @size_one_groups_fold
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x64x32xf32>)
// CHECK-NOT: cp.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @size_one_groups_fold(%x: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>,
        tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>) {
  %0 = cp.all_gather %x on @single grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %1 = cp.all_to_all %x on @single grid_axes = [0] split_axis = 1 concat_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  %2 = cp.exchange %x on @single grid_axes = [0] partner = mirror : tensor<1x8x64x32xf32>
  %3 = cp.shift %x on @single grid_axes = [0] offset = 1 : tensor<1x8x64x32xf32>
  // Axis 1 of a 4x1 grid is a group of one too.
  %4 = cp.all_gather %x on @grid2d grid_axes = [1] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x64x32xf32>
  return %0, %1, %2, %3, %4 : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @collectives_over_groups_stay
// CHECK: cp.all_gather
// CHECK: cp.exchange
// CHECK: cp.shift
func.func @collectives_over_groups_stay(%x: tensor<1x8x64x32xf32>)
    -> (tensor<1x8x256x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>) {
  %0 = cp.all_gather %x on @cp grid_axes = [0] gather_axis = 2 : tensor<1x8x64x32xf32> -> tensor<1x8x256x32xf32>
  %1 = cp.exchange %x on @cp grid_axes = [0] partner = mirror : tensor<1x8x64x32xf32>
  %2 = cp.shift %x on @cp grid_axes = [0] offset = 1 : tensor<1x8x64x32xf32>
  return %0, %1, %2 : tensor<1x8x256x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// A shift by a multiple of the group size is the identity.
// CHECK-LABEL: func @full_rotation_folds
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]], %[[X]]
func.func @full_rotation_folds(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = cp.shift %x on @cp grid_axes = [0] offset = 4 : tensor<4xf32>
  %1 = cp.shift %x on @cp grid_axes = [0] offset = -8 : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

shard.grid @cp3(shape = 3)

// The offset is signed: -1 on 3 ranks is a real rotation (2^64 - 1, read
// unsigned, would be a multiple of 3).
// CHECK-LABEL: func @negative_shift_stays
// CHECK: cp.shift %{{.*}} on @cp3 grid_axes = [0] offset = -1
func.func @negative_shift_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cp.shift %x on @cp3 grid_axes = [0] offset = -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @offset_mask_becomes_mask_attribute
// CHECK-SAME: (%[[Q:[^:]*]]: {{[^,]*}}, %[[K:[^:]*]]: {{[^,]*}}, %[[V:[^:]*]]: {{[^,]*}}, %[[QO:[^:]*]]: index, %[[KO:[^:]*]]: index, %[[OTHER:[^:]*]]: index)
// CHECK-NOT: cp.offset_mask
// CHECK: cp.local_attention %[[Q]], %[[K]], %[[V]] offsets(%[[QO]], %[[KO]]) mask = causal :
func.func @offset_mask_becomes_mask_attribute(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x256x32xf32>,
                                              %v: tensor<1x2x256x32xf32>, %qo: index, %ko: index,
                                              %other: index) -> tensor<1x8x64x32xf32> {
  %m = cp.offset_mask offsets(%qo, %ko) mask = causal : tensor<64x256xi1>
  // The attention has no structured mask, so its own offsets are unused and
  // take the mask's.
  %o = cp.local_attention %q, %k, %v offsets(%other, %other) explicit_mask %m
      : tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<64x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

// CHECK-LABEL: func @redundant_offset_mask_is_dropped
// CHECK-NOT: cp.offset_mask
// CHECK: cp.local_attention %{{.*}}, %{{.*}}, %{{.*}} offsets(%{{.*}}, %{{.*}}) mask = sliding_window(32) :
func.func @redundant_offset_mask_is_dropped(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x256x32xf32>,
                                            %v: tensor<1x2x256x32xf32>, %qo: index, %ko: index)
    -> tensor<1x8x64x32xf32> {
  %m = cp.offset_mask offsets(%qo, %ko) mask = sliding_window(32) : tensor<64x256xi1>
  %o = cp.local_attention %q, %k, %v offsets(%qo, %ko) explicit_mask %m mask = sliding_window(32)
      : tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<64x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

// Two different structured masks cannot merge into one attribute: kept.
// CHECK-LABEL: func @different_masks_are_kept
// CHECK: %[[M:.*]] = cp.offset_mask offsets(%{{.*}}, %{{.*}}) mask = sliding_window(32)
// CHECK: cp.local_attention {{.*}} explicit_mask %[[M]] mask = causal
func.func @different_masks_are_kept(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x256x32xf32>,
                                    %v: tensor<1x2x256x32xf32>, %qo: index, %ko: index)
    -> tensor<1x8x64x32xf32> {
  %m = cp.offset_mask offsets(%qo, %ko) mask = sliding_window(32) : tensor<64x256xi1>
  %o = cp.local_attention %q, %k, %v offsets(%qo, %ko) explicit_mask %m mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<64x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

// A relayout between equal layouts, or over one rank, is the identity.
shard.grid @cp(shape = 4)
shard.grid @single(shape = 1)
// CHECK-LABEL: func @relayout_folds
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x16x32xf32>)
// CHECK: %[[Z:.*]] = cp.relayout %[[X]] on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag
// CHECK: return %[[X]], %[[X]], %[[Z]]
func.func @relayout_folds(%x: tensor<1x8x16x32xf32>) -> (tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>) {
  %0 = cp.relayout %x on @cp grid_axes = [0] seq_axis = 2 from zigzag to zigzag : tensor<1x8x16x32xf32>
  %1 = cp.relayout %x on @single grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<1x8x16x32xf32>
  %2 = cp.relayout %x on @cp grid_axes = [0] seq_axis = 2 from contiguous to zigzag : tensor<1x8x16x32xf32>
  return %0, %1, %2 : tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32>
}
