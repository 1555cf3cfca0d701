// cp.local_attention in upstream's sharding: with Q, K and V annotated as
// split along the sequence (dim 2) over grid axis 0, sharding-propagation
// gives the output the same sharding (ShardingInterfaceImpl.cpp), and
// shard-partition replaces the whole attention by cp.attention on the
// shards, on that grid axis: no shard.all_gather of K and V; a cp scheme
// moves them later. The arguments and the result become the local shards.
// The mod operands (segment ids, read at global positions) stay whole, and
// the regions move along. A sharding cp.attention cannot take falls back to
// replication, as upstream does for an op it cannot split.
// RUN: cp-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition),canonicalize)" \
// RUN:   | FileCheck %s

shard.grid @seq(shape = 4)

// CHECK-LABEL: func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NOT: shard.all_gather
// CHECK: %[[O:.*]] = cp.attention %[[Q]], %[[K]], %[[V]] on @seq grid_axes = [0] mask = causal scale = 5.000000e-01 : tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x4x16x8xf32>
// CHECK: return %[[O]]
func.func @causal(%q: tensor<1x4x64x8xf32>, %k: tensor<1x2x64x8xf32>,
                  %v: tensor<1x2x64x8xf32>) -> tensor<1x4x64x8xf32> {
  %s = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<1x4x64x8xf32>
  %k1 = shard.shard %k to %s : tensor<1x2x64x8xf32>
  %v1 = shard.shard %v to %s : tensor<1x2x64x8xf32>
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q1, %k1, %v1 offsets(%c0, %c0) mask = causal scale = 0.5
      : tensor<1x4x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x4x64x8xf32>
  return %o : tensor<1x4x64x8xf32>
}

// -----

shard.grid @seq(shape = 2)

// A document mask: the segment ids stay whole; the region is carried over.
// CHECK-LABEL: func @document
// CHECK-SAME: %[[SEG:[^:]*]]: tensor<64xi32>
// CHECK: cp.attention %{{.*}}, %{{.*}}, %{{.*}} mod_operands(%[[SEG]] : tensor<64xi32>) on @seq grid_axes = [0]
// CHECK: mask_mod
// CHECK: tensor.extract
// CHECK: -> tensor<1x2x32x8xf32>
func.func @document(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>,
                    %v: tensor<1x2x64x8xf32>, %seg: tensor<64xi32>) -> tensor<1x2x64x8xf32> {
  %s = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<1x2x64x8xf32>
  %k1 = shard.shard %k to %s : tensor<1x2x64x8xf32>
  %v1 = shard.shard %v to %s : tensor<1x2x64x8xf32>
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q1, %k1, %v1 offsets(%c0, %c0) mod_operands(%seg : tensor<64xi32>)
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %t: tensor<64xi32>):
        %a = tensor.extract %t[%qi] : tensor<64xi32>
        %c = tensor.extract %t[%ki] : tensor<64xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      }
      : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
  return %o : tensor<1x2x64x8xf32>
}

// -----

shard.grid @seq(shape = 2)

// Split along the heads: not context parallelism. The op takes the
// replicated option, so shard-partition gathers Q (convert-shard-to-cp turns
// that into cp.all_gather) and every process computes the whole attention.
// CHECK-LABEL: func @heads
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x64x8xf32>,
// CHECK: %[[QF:.*]] = shard.all_gather %[[Q]] on @seq grid_axes = [0] gather_axis = 1 : tensor<1x2x64x8xf32> -> tensor<1x4x64x8xf32>
// CHECK: cp.local_attention %[[QF]]
// CHECK-NOT: cp.attention
func.func @heads(%q: tensor<1x4x64x8xf32>, %k: tensor<1x4x64x8xf32>,
                 %v: tensor<1x4x64x8xf32>) -> tensor<1x4x64x8xf32> {
  %s = shard.sharding @seq split_axes = [[], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<1x4x64x8xf32>
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q1, %k, %v offsets(%c0, %c0)
      : tensor<1x4x64x8xf32>, tensor<1x4x64x8xf32>, tensor<1x4x64x8xf32> -> tensor<1x4x64x8xf32>
  return %o : tensor<1x4x64x8xf32>
}

// -----

shard.grid @seq(shape = 2)

// A block at an offset is already one rank's part: replicated too, the
// sequence-split Q gathered along the sequence.
// CHECK-LABEL: func @block
// CHECK: shard.all_gather %{{.*}} on @seq grid_axes = [0] gather_axis = 2 : tensor<1x2x32x8xf32> -> tensor<1x2x64x8xf32>
// CHECK: cp.local_attention
// CHECK-NOT: cp.attention
func.func @block(%q: tensor<1x2x64x8xf32>, %k: tensor<1x2x64x8xf32>,
                 %v: tensor<1x2x64x8xf32>, %off: index) -> tensor<1x2x64x8xf32> {
  %s = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<1x2x64x8xf32>
  %c0 = arith.constant 0 : index
  %o = cp.local_attention %q1, %k, %v offsets(%off, %c0)
      : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
  return %o : tensor<1x2x64x8xf32>
}

// -----

shard.grid @seq(shape = 2)

// The backward: Q, K, V, O, lse and dO split along the sequence give dQ,
// dK and dV the same split, and the whole local gradient becomes
// cp.attention_grad on the shards (a scheme's backward runs later).
// CHECK-LABEL: func @backward
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>, %[[O:.*]]: tensor<1x4x16x8xf32>, %[[LSE:.*]]: tensor<1x4x16xf32>, %[[DO:.*]]: tensor<1x4x16x8xf32>)
// CHECK-NOT: shard.all_gather
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = cp.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]], %[[DO]] on @seq grid_axes = [0] mask = causal : {{.*}} -> tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
func.func @backward(%q: tensor<1x4x32x8xf32>, %k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x8xf32>,
                    %o: tensor<1x4x32x8xf32>, %lse: tensor<1x4x32xf32>, %do: tensor<1x4x32x8xf32>)
    -> (tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>) {
  %s = shard.sharding @seq split_axes = [[], [], [0]] : !shard.sharding
  %q1 = shard.shard %q to %s : tensor<1x4x32x8xf32>
  %k1 = shard.shard %k to %s : tensor<1x2x32x8xf32>
  %v1 = shard.shard %v to %s : tensor<1x2x32x8xf32>
  %o1 = shard.shard %o to %s : tensor<1x4x32x8xf32>
  %lse1 = shard.shard %lse to %s : tensor<1x4x32xf32>
  %do1 = shard.shard %do to %s : tensor<1x4x32x8xf32>
  %c0 = arith.constant 0 : index
  %dq, %dk, %dv = cp.local_attention_grad %q1, %k1, %v1, %o1, %lse1, %do1 offsets(%c0, %c0) mask = causal
      : tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x4x32x8xf32>, tensor<1x4x32xf32>, tensor<1x4x32x8xf32>
      -> tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>
  return %dq, %dk, %dv : tensor<1x4x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>
}
