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

// -----

// A mask_mod that is only a causal or sliding-window predicate on the
// global positions is that structured mask: it folds into `mask`, which the
// lowerings evaluate per tile rather than per element.
shard.grid @cp(shape = 4)
// CHECK-LABEL: func @structured_mask_mod
// CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} on @cp grid_axes = [0] mask = causal :
// Causal and q - kv < 32: a window of 32 keys.
// CHECK: cp.local_attention {{.*}} mask = sliding_window(32) :
// The intersection with the op's own mask.
// CHECK: cp.local_attention {{.*}} mask = sliding_window(16) :
func.func @structured_mask_mod(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                               %v: tensor<1x2x64x32xf32>, %qo: index)
    -> (tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>) {
  %0 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        cp.yield %past : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  %1 = cp.local_attention %q, %k, %v offsets(%qo, %qo)
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi sge, %qi, %ki : index
        %d = arith.subi %qi, %ki : index
        %w = arith.constant 32 : index
        %near = arith.cmpi slt, %d, %w : index
        %both = arith.andi %near, %past : i1
        cp.yield %both : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  %2 = cp.local_attention %q, %k, %v offsets(%qo, %qo) mask = sliding_window(16)
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        %d = arith.subi %qi, %ki : index
        %w = arith.constant 31 : index
        %near = arith.cmpi sle, %d, %w : index
        %both = arith.andi %past, %near : i1
        cp.yield %both : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return %0, %1, %2 : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
}

// -----

// Anything else stays a region: a document predicate, a window without the
// causal bound (it lets future keys in), or a predicate on heads.
shard.grid @cp(shape = 4)
// CHECK-LABEL: func @kept_mask_mod
// CHECK-COUNT-3: mask_mod {
func.func @kept_mask_mod(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                         %v: tensor<1x2x64x32xf32>, %seg: tensor<256xi32>)
    -> (tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>) {
  %0 = cp.attention %q, %k, %v mod_operands(%seg : tensor<256xi32>) on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %past = arith.cmpi ule, %ki, %qi : index
        %a = tensor.extract %s[%qi] : tensor<256xi32>
        %c = tensor.extract %s[%ki] : tensor<256xi32>
        %same = arith.cmpi eq, %a, %c : i32
        %both = arith.andi %past, %same : i1
        cp.yield %both : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  %1 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %d = arith.subi %qi, %ki : index
        %w = arith.constant 32 : index
        %near = arith.cmpi slt, %d, %w : index
        cp.yield %near : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  %2 = cp.attention %q, %k, %v on @cp grid_axes = [0]
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index):
        %past = arith.cmpi ule, %ki, %qi : index
        %c4 = arith.constant 4 : index
        %low = arith.cmpi ult, %h, %c4 : index
        %both = arith.andi %past, %low : i1
        cp.yield %both : i1
      }
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x8x64x32xf32>
  return %0, %1, %2 : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>
}
