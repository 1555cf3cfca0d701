// cp-apply-scheme on cp.attention_grad with ring and zigzag: the forward's
// steps (apply-scheme-ring.mlir), with the dK/dV accumulators of the K/V
// block travelling round the ring together with the block. At step s rank r
// holds the block of group rank (r - s) mod P; the block's dK/dV accumulators
// are shifted after it at the start of the step (so the transfer overlaps the
// step's work) and read after the step's local gradients, which are added to
// them; this rank's dq stays. After the last step the accumulators
// are (P - steps + 1) mod P ranks from home and take one shift there.
// Bytes per rank: (K+V)*shifts for the blocks plus (dK+dV)*(shifts+1) for
// the accumulators (docs/Schemes.md, SchemeTraffic).
// RUN: cp-opt %s -split-input-file -cp-apply-scheme --canonicalize --cse | FileCheck %s
// RUN: cp-opt %s -split-input-file -cp-apply-scheme=unroll-ring --canonicalize --cse | FileCheck %s --check-prefix=UNROLL

shard.grid @cp(shape = 4)

// Causal on 4 ranks: step 0 (the diagonal, no zeros added: its gradient is
// the first value of dq, dK and dV), steps 1 and 2 in one scf.for, step 3
// after it; a block after this rank's last query is skipped at run time.
// The K/V block is 16*2*(32+24)*4 = 7168 bytes: 3 K/V shifts and 4 dK/dV
// shifts make 7 * 7168 = 50176.
// CHECK-LABEL: func @causal
// CHECK-SAME: (%[[Q:[a-z0-9]+]]: tensor<1x8x16x32xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x16x32xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x16x24xf32>, %[[O:[a-z0-9]+]]: tensor<1x8x16x24xf32>, %[[LSE:[a-z0-9]+]]: tensor<1x8x16xf32>, %[[DO:[a-z0-9]+]]: tensor<1x8x16x24xf32>)
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// CHECK: %[[QO:.*]] = arith.muli %[[R]], %[[C16:.*]] : index
// CHECK-NOT: linalg.fill
// CHECK: %[[K1:.*]] = cp.shift %[[K]] on @cp grid_axes = [0] offset = 1
// CHECK: %[[V1:.*]] = cp.shift %[[V]] on @cp grid_axes = [0] offset = 1
// CHECK: %[[DQ0:.*]], %[[DK0:.*]], %[[DV0:.*]] = cp.local_attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]], %[[DO]] offsets(%[[QO]], %[[QO]]) mask = causal {cp.bytes_per_rank = 50176 : i64, cp.scheme = #cp.scheme<ring>}
// The block's accumulators (not yet sent on) are carried with it.
// CHECK: %[[LOOP:.*]]:5 = scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[KS:.*]] = %[[K1]], %[[VS:.*]] = %[[V1]], %[[DKA:.*]] = %[[DK0]], %[[DVA:.*]] = %[[DV0]], %[[DQA:.*]] = %[[DQ0]])
// The accumulators of the block that arrived last step follow it here,
// sent together with the next K/V, before the step's gradient...
// CHECK:   %[[DKIN:.*]] = cp.shift %[[DKA]] on @cp grid_axes = [0] offset = 1
// CHECK:   %[[DVIN:.*]] = cp.shift %[[DVA]] on @cp grid_axes = [0] offset = 1
// CHECK:   cp.shift %[[KS]]
// CHECK:   cp.shift %[[VS]]
// CHECK:   %[[KO:.*]] = arith.muli
// CHECK:   %[[VIS:.*]] = arith.cmpi sle, %[[KO]]
// CHECK:   %[[STEP:.*]]:3 = scf.if %[[VIS]]
// CHECK:     %[[PQ:.*]], %[[PK:.*]], %[[PV:.*]] = cp.local_attention_grad %[[Q]], %[[KS]], %[[VS]], %[[O]], %[[LSE]], %[[DO]] offsets(%[[QO]], %[[KO]]) mask = causal
// CHECK:     %[[SUMQ:.*]] = linalg.generic {{.*}} ins(%[[DQA]], %[[PQ]] :
// CHECK:     scf.yield %[[SUMQ]], %[[PK]], %[[PV]]
// CHECK:   } else {
// CHECK:     linalg.fill
// CHECK:     linalg.fill
// CHECK:     scf.yield %[[DQA]],
// CHECK:   }
// ...and read only after it.
// CHECK:   %[[DKN:.*]] = linalg.generic {{.*}} ins(%[[DKIN]], %[[STEP]]#1 :
// CHECK:   %[[DVN:.*]] = linalg.generic {{.*}} ins(%[[DVIN]], %[[STEP]]#2 :
// CHECK:   scf.yield %{{.*}}, %{{.*}}, %[[DKN]], %[[DVN]], %[[STEP]]#0
// CHECK: }
// The last step: no K/V shift, then the hop home (one rank on).
// CHECK: cp.shift %[[LOOP]]#2 on @cp grid_axes = [0] offset = 1
// CHECK: cp.shift %[[LOOP]]#3 on @cp grid_axes = [0] offset = 1
// CHECK-NOT: cp.shift %[[LOOP]]#0
// CHECK: %[[LAST:.*]]:3 = scf.if
// CHECK:   cp.local_attention_grad %[[Q]], %[[LOOP]]#0, %[[LOOP]]#1
// CHECK: %[[DKL:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[LAST]]#1 :
// CHECK: %[[DVL:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[LAST]]#2 :
// CHECK: %[[DK:.*]] = cp.shift %[[DKL]] on @cp grid_axes = [0] offset = 1
// CHECK: %[[DV:.*]] = cp.shift %[[DVL]] on @cp grid_axes = [0] offset = 1
// CHECK: return %[[LAST]]#0, %[[DK]], %[[DV]]
// UNROLL-LABEL: func @causal
// UNROLL-NOT: scf.for
// UNROLL-COUNT-4: cp.local_attention_grad
// UNROLL-NOT: scf.for
// UNROLL: return
func.func @causal(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                  %v: tensor<1x2x16x24xf32>, %o: tensor<1x8x16x24xf32>,
                  %lse: tensor<1x8x16xf32>, %do: tensor<1x8x16x24xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = ring
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>,
        tensor<1x8x16x24xf32>, tensor<1x8x16xf32>, tensor<1x8x16x24xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
  return %dq, %dk, %dv
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
}

// -----

shard.grid @cp(shape = 4)

// A window of 9 reaches one block back: 2 steps, one K/V shift, two dK/dV
// shifts (3 * 7168 = 21504 bytes), no loop, and the accumulators end
// 4 - 2 + 1 = 3 ranks from home.
// CHECK-LABEL: func @window
// CHECK-NOT: scf.for
// CHECK: %[[DQ0:.*]], %[[DK0:.*]], %[[DV0:.*]] = cp.local_attention_grad {{.*}} mask = sliding_window(9) {cp.bytes_per_rank = 21504 : i64, cp.scheme = #cp.scheme<ring>}
// CHECK: %[[DKIN:.*]] = cp.shift %[[DK0]] {{.*}} offset = 1
// CHECK: %[[DVIN:.*]] = cp.shift %[[DV0]] {{.*}} offset = 1
// CHECK: %[[VIS:.*]] = arith.andi
// CHECK: %[[LAST:.*]]:3 = scf.if %[[VIS]]
// CHECK: %[[DKL:.*]] = linalg.generic {{.*}} ins(%[[DKIN]], %[[LAST]]#1 :
// CHECK: %[[DVL:.*]] = linalg.generic {{.*}} ins(%[[DVIN]], %[[LAST]]#2 :
// CHECK: %[[DK:.*]] = cp.shift %[[DKL]] on @cp grid_axes = [0] offset = 3
// CHECK: %[[DV:.*]] = cp.shift %[[DVL]] on @cp grid_axes = [0] offset = 3
// CHECK: return %[[LAST]]#0, %[[DK]], %[[DV]]
func.func @window(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                  %v: tensor<1x2x16x24xf32>, %o: tensor<1x8x16x24xf32>,
                  %lse: tensor<1x8x16xf32>, %do: tensor<1x8x16x24xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = sliding_window(9) scheme = ring
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>,
        tensor<1x8x16x24xf32>, tensor<1x8x16xf32>, tensor<1x8x16x24xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
  return %dq, %dk, %dv
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
}

// -----

shard.grid @cp(shape = 3)

// No mask: every block is visible everywhere, so no scf.if. (The one middle
// step's loop is folded by --canonicalize.) 2 K/V shifts + 3 dK/dV shifts
// of 7168 bytes = 35840.
// CHECK-LABEL: func @no_mask
// CHECK-NOT: scf.if
// CHECK-COUNT-3: cp.local_attention_grad {{.*}} {cp.bytes_per_rank = 35840 : i64, cp.scheme = #cp.scheme<ring>}
// CHECK-NOT: scf.if
// CHECK: cp.shift {{.*}} offset = 1
// CHECK: cp.shift {{.*}} offset = 1
// CHECK: return
func.func @no_mask(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                   %v: tensor<1x2x16x24xf32>, %o: tensor<1x8x16x24xf32>,
                   %lse: tensor<1x8x16xf32>, %do: tensor<1x8x16x24xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] scheme = ring
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>,
        tensor<1x8x16x24xf32>, tensor<1x8x16xf32>, tensor<1x8x16x24xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
  return %dq, %dk, %dv
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
}

// -----

shard.grid @cp(shape = 2)

// zigzag: q, k, v, o, lse and dO are relaid out to the zigzag layout and
// dq, dk, dv back; each rank's block is two chunks of 8 rows (global chunks
// r and 3 - r) and the pairs are attended chunk by chunk, their gradients
// added into the chunk's rows. Step 0 attends (head, head), (tail, tail) and
// (tail, head); at step 1 the tail attends the other rank's head on every
// rank, the rest is decided at run time. Bytes: one K/V shift and two dK/dV
// shifts (21504) plus the relayouts, half of each tensor in and out
// (24320 + 11776): 57600.
// CHECK-LABEL: func @zigzag
// CHECK-COUNT-6: cp.relayout {{.*}} from contiguous to zigzag
// CHECK: %[[HEAD:.*]] = arith.muli %[[R:.*]], %[[C8:.*]] : index
// CHECK: %[[TAIL:.*]] = arith.muli %{{.*}}, %[[C8]] : index
// CHECK: cp.local_attention_grad {{.*}} offsets(%[[HEAD]], %[[HEAD]]) mask = causal {cp.bytes_per_rank = 57600 : i64, cp.scheme = #cp.scheme<zigzag>} : tensor<1x8x8x32xf32>
// CHECK: tensor.insert_slice {{.*}}[0, 0, 0, 0] [1, 2, 8, 32] [1, 1, 1, 1] : tensor<1x2x8x32xf32> into tensor<1x2x16x32xf32>
// CHECK: cp.local_attention_grad {{.*}} offsets(%[[TAIL]], %[[TAIL]]) mask = causal
// CHECK: tensor.insert_slice {{.*}}[0, 0, 8, 0] [1, 2, 8, 32] [1, 1, 1, 1] : tensor<1x2x8x32xf32> into tensor<1x2x16x32xf32>
// CHECK: cp.local_attention_grad {{.*}} offsets(%[[TAIL]], %[[HEAD]]) mask = causal
// CHECK: cp.shift {{.*}} offset = 1 : tensor<1x2x16x32xf32>
// CHECK: cp.shift {{.*}} offset = 1 : tensor<1x2x16x24xf32>
// CHECK: scf.if
// CHECK: scf.if
// CHECK: cp.local_attention_grad {{.*}} offsets(%[[TAIL]], %{{.*}}) mask = causal
// CHECK: %[[DK:.*]] = cp.shift {{.*}} offset = 1 : tensor<1x2x16x32xf32>
// CHECK: %[[DV:.*]] = cp.shift {{.*}} offset = 1 : tensor<1x2x16x24xf32>
// CHECK: %[[DQ:.*]] = cp.relayout %{{.*}} from zigzag to contiguous : tensor<1x8x16x32xf32>
// CHECK: cp.relayout %[[DK]] {{.*}} from zigzag to contiguous
// CHECK: cp.relayout %[[DV]] {{.*}} from zigzag to contiguous
func.func @zigzag(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>,
                  %v: tensor<1x2x16x24xf32>, %o: tensor<1x8x16x24xf32>,
                  %lse: tensor<1x8x16xf32>, %do: tensor<1x8x16x24xf32>)
    -> (tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>) {
  %dq, %dk, %dv = cp.attention_grad %q, %k, %v, %o, %lse, %do
      on @cp grid_axes = [0] mask = causal scheme = zigzag
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>,
        tensor<1x8x16x24xf32>, tensor<1x8x16xf32>, tensor<1x8x16x24xf32>
      -> tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
  return %dq, %dk, %dv
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x24xf32>
}
