// head_tail: rank r keeps the first half of its queries (global offset
// r * L) and trades the second half with its mirror p = P-1-r, whose tail
// sits at p * L + L/2. K and V are all-gathered; both halves attend at their
// global offsets; the peer's output goes back, and the result is
// concat(keep, own tail). Every rank then does the same causal work.
// RUN: cp-opt %s --cp-apply-scheme=scheme=head_tail -split-input-file | FileCheck %s

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @causal_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x64x32xf32>, %[[K:.*]]: tensor<1x2x64x32xf32>, %[[V:.*]]: tensor<1x2x64x16xf32>)
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// CHECK: %[[LAST:.*]] = arith.constant 3 : index
// CHECK: %[[P:.*]] = arith.subi %[[LAST]], %[[R]] : index
// CHECK: %[[KEEPOFF:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: %[[PL:.*]] = arith.muli %[[P]], %{{.*}} : index
// CHECK: %[[HALF:.*]] = arith.constant 32 : index
// CHECK: %[[PEEROFF:.*]] = arith.addi %[[PL]], %[[HALF]] : index
// CHECK: %[[KEEPQ:.*]] = tensor.extract_slice %[[Q]][0, 0, 0, 0] [1, 8, 32, 32] [1, 1, 1, 1]
// CHECK: %[[TAILQ:.*]] = tensor.extract_slice %[[Q]][0, 0, 32, 0] [1, 8, 32, 32] [1, 1, 1, 1]
// CHECK: %[[PEERQ:.*]] = cp.exchange %[[TAILQ]] on @cp grid_axes = [0] partner = mirror : tensor<1x8x32x32xf32>
// CHECK: %[[KF:.*]] = cp.all_gather %[[K]] on @cp grid_axes = [0] gather_axis = 2 : tensor<1x2x64x32xf32> -> tensor<1x2x256x32xf32>
// CHECK: %[[VF:.*]] = cp.all_gather %[[V]] on @cp grid_axes = [0] gather_axis = 2 : tensor<1x2x64x16xf32> -> tensor<1x2x256x16xf32>
// Q tail 32*8*32*4 + K/V 64*2*48*4*3 + O back 32*8*16*4 bytes.
// CHECK: %[[KEEPO:.*]] = cp.local_attention %[[KEEPQ]], %[[KF]], %[[VF]] offsets(%[[KEEPOFF]], %{{.*}}) mask = causal {cp.bytes_per_rank = 122880 : i64
// CHECK: %[[PEERO:.*]] = cp.local_attention %[[PEERQ]], %[[KF]], %[[VF]] offsets(%[[PEEROFF]], %{{.*}}) mask = causal
// CHECK: %[[TAILO:.*]] = cp.exchange %[[PEERO]] on @cp grid_axes = [0] partner = mirror : tensor<1x8x32x16xf32>
// CHECK: %[[O:.*]] = tensor.concat dim(2) %[[KEEPO]], %[[TAILO]] : (tensor<1x8x32x16xf32>, tensor<1x8x32x16xf32>) -> tensor<1x8x64x16xf32>
// CHECK: return %[[O]]
func.func @causal_gqa(%q: tensor<1x8x64x32xf32>, %k: tensor<1x2x64x32xf32>, %v: tensor<1x2x64x16xf32>)
    -> tensor<1x8x64x16xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x16xf32> -> tensor<1x8x64x16xf32>
  return %o : tensor<1x8x64x16xf32>
}

// -----

shard.grid @cp(shape = 4)

// Global-extent mask: the keep half takes rows [r*L, +L/2), the peer half
// rows [p*L + L/2, +L/2).
// CHECK-LABEL: func @global_mask
// CHECK: %[[KEEPOFF:.*]] = arith.muli
// CHECK: %[[PEEROFF:.*]] = arith.addi
// CHECK: %[[MK:.*]] = tensor.extract_slice %{{.*}}[%[[KEEPOFF]], 0] [32, 256] [1, 1] : tensor<256x256xi1> to tensor<32x256xi1>
// CHECK: %[[MP:.*]] = tensor.extract_slice %{{.*}}[%[[PEEROFF]], 0] [32, 256] [1, 1] : tensor<256x256xi1> to tensor<32x256xi1>
// CHECK: cp.local_attention {{.*}} offsets(%[[KEEPOFF]], %{{.*}}) explicit_mask %[[MK]] mask = sliding_window(48)
// CHECK: cp.local_attention {{.*}} offsets(%[[PEEROFF]], %{{.*}}) explicit_mask %[[MP]] mask = sliding_window(48)
func.func @global_mask(%q: tensor<1x8x64x32xf32>, %k: tensor<1x8x64x32xf32>, %v: tensor<1x8x64x32xf32>,
                       %m: tensor<256x256xi1>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = sliding_window(48)
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<256x256xi1>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 4)

// Local-extent mask: its tail rows belong to the tail queries, so they go to
// the mirror rank together with them.
// CHECK-LABEL: func @local_mask
// CHECK-SAME: %[[M:[^:]*]]: tensor<1x1x64x256xf32>
// CHECK: %[[MK:.*]] = tensor.extract_slice %[[M]][0, 0, 0, 0] [1, 1, 32, 256]
// CHECK: %[[MT:.*]] = tensor.extract_slice %[[M]][0, 0, 32, 0] [1, 1, 32, 256]
// CHECK: %[[MP:.*]] = cp.exchange %[[MT]] on @cp grid_axes = [0] partner = mirror : tensor<1x1x32x256xf32>
// CHECK: cp.local_attention {{.*}} explicit_mask %[[MK]] {
// CHECK: cp.local_attention {{.*}} explicit_mask %[[MP]] {
func.func @local_mask(%q: tensor<1x8x64x32xf32>, %k: tensor<1x8x64x32xf32>, %v: tensor<1x8x64x32xf32>,
                      %m: tensor<1x1x64x256xf32>) -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0]
      : tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x8x64x32xf32>, tensor<1x1x64x256xf32>
      -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}

// -----

shard.grid @cp(shape = 3)

// Odd P: the middle rank (r = 1) is its own mirror; the same IR serves all
// ranks, and the runtime exchange is the identity there.
// CHECK-LABEL: func @odd_group
// CHECK: arith.constant 2 : index
// CHECK: cp.exchange %{{.*}} on @cp grid_axes = [0] partner = mirror
func.func @odd_group(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>)
    -> tensor<1x4x8x16xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
