// ring: P steps. At step s rank r holds the K/V block of rank (r - s) mod P
// (global offset ((r - s) mod P) * L); it attends its queries to it with
// the log-sum-exp and merges the partial result into the running one, and
// the shift that brings the next block is issued before that attention so
// that it can overlap it. A block the causal mask hides from all of this
// rank's queries (source rank > r) is skipped at run time (scf.if); the
// diagonal step uses the offset-aware mask. K and V cross P - 1 shifts:
// L*Hkv*(D+Dv)*b*(P-1) bytes, the all-gather's. The steps between the
// first and the last are one scf.for (LOOP), so the IR does not grow with
// P; `unroll-ring` emits every step (the checks below the LOOP ones).
// RUN: cp-opt %s --cp-apply-scheme="scheme=ring unroll-ring" --canonicalize --cse -split-input-file | FileCheck %s
// RUN: cp-opt %s --cp-apply-scheme=scheme=ring --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=LOOP

shard.grid @cp(shape = 4)

// Step 0 before the loop, steps 1 and 2 in it (the block of rank
// (r + 4 - s) mod 4, visible iff it starts before this rank's last query,
// decided at run time), step 3 after it, with no shift.
// LOOP-LABEL: func @causal
// LOOP-SAME: (%[[Q:.*]]: tensor<1x8x16x32xf32>, %[[K:.*]]: tensor<1x2x16x32xf32>, %[[V:.*]]: tensor<1x2x16x32xf32>)
// LOOP: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// LOOP: %[[K1:.*]] = cp.shift %[[K]]
// LOOP: %[[V1:.*]] = cp.shift %[[V]]
// LOOP: %[[O0:.*]], %[[L0:.*]] = cp.local_attention %[[Q]], %[[K]], %[[V]]
// LOOP: %[[RES:.*]]:4 = scf.for %[[S:.*]] = %[[C1:.*]] to %[[C3:.*]] step %[[C1]] iter_args(%[[KS:.*]] = %[[K1]], %[[VS:.*]] = %[[V1]], %[[OS:.*]] = %[[O0]], %[[LS:.*]] = %[[L0]])
// LOOP:   %[[BACK:.*]] = arith.subi %[[C4:.*]], %[[S]] : index
// LOOP:   %[[SRC:.*]] = arith.addi %[[R]], %[[BACK]] : index
// LOOP:   arith.remui %[[SRC]], %[[C4]] : index
// LOOP:   %[[KN:.*]] = cp.shift %[[KS]]
// LOOP:   %[[VN:.*]] = cp.shift %[[VS]]
// LOOP:   %[[P:.*]]:2 = scf.if
// LOOP:     cp.local_attention %[[Q]], %[[KS]], %[[VS]]
// LOOP:   %[[OM:.*]], %[[LM:.*]] = cp.merge %[[OS]], %[[LS]], %[[P]]#0, %[[P]]#1
// LOOP:   scf.yield %[[KN]], %[[VN]], %[[OM]], %[[LM]]
// LOOP: }
// LOOP-NOT: cp.shift
// LOOP: cp.local_attention %[[Q]], %[[RES]]#0, %[[RES]]#1
// LOOP: %[[OUT:.*]], %{{.*}} = cp.merge %[[RES]]#2, %[[RES]]#3
// LOOP: return %[[OUT]] : tensor<1x8x16x32xf32>

// CHECK-LABEL: func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x8x16x32xf32>, %[[K:.*]]: tensor<1x2x16x32xf32>, %[[V:.*]]: tensor<1x2x16x32xf32>)
// CHECK: %[[R:.*]] = shard.process_multi_index on @cp axes = [0] : index
// CHECK: %[[QO:.*]] = arith.muli %[[R]], %[[C16:.*]] : index
// Step 0: the next block is on its way before the diagonal block is attended.
// CHECK: %[[K1:.*]] = cp.shift %[[K]] on @cp grid_axes = [0] offset = 1 : tensor<1x2x16x32xf32>
// CHECK: %[[V1:.*]] = cp.shift %[[V]] on @cp grid_axes = [0] offset = 1 : tensor<1x2x16x32xf32>
// 16*2*64*4*3 bytes per rank.
// CHECK: %[[O0:.*]], %[[L0:.*]] = cp.local_attention %[[Q]], %[[K]], %[[V]] offsets(%[[QO]], %[[QO]]) mask = causal {cp.bytes_per_rank = 24576 : i64, cp.scheme = #cp.scheme<ring>} : {{.*}} -> tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
// Step 1: the block of rank (r + 3) mod 4, visible iff it starts before
// this rank's last query.
// CHECK: %[[SRC:.*]] = arith.addi %[[R]], %[[C3:.*]] : index
// CHECK: %[[J:.*]] = arith.remui %[[SRC]], %[[C4:.*]] : index
// CHECK: %[[K2:.*]] = cp.shift %[[K1]]
// CHECK: %[[V2:.*]] = cp.shift %[[V1]]
// CHECK: %[[KO:.*]] = arith.muli %[[J]], %[[C16]] : index
// CHECK: %[[QLAST:.*]] = arith.addi %[[QO]], %[[C15:.*]] : index
// CHECK: %[[VIS:.*]] = arith.cmpi sle, %[[KO]], %[[QLAST]] : index
// CHECK: %[[P1:.*]]:2 = scf.if %[[VIS]]
// CHECK:   cp.local_attention %[[Q]], %[[K1]], %[[V1]] offsets(%[[QO]], %[[KO]]) mask = causal
// CHECK: } else {
// CHECK:   linalg.fill
// CHECK:   linalg.fill
// CHECK: }
// CHECK: %[[O1:.*]], %[[L1:.*]] = cp.merge %[[O0]], %[[L0]], %[[P1]]#0, %[[P1]]#1 : tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
// Step 2, then step 3 with no shift after it.
// CHECK: %[[K3:.*]] = cp.shift %[[K2]]
// CHECK: scf.if
// CHECK: cp.merge %[[O1]], %[[L1]]
// CHECK-NOT: cp.shift
// CHECK: cp.local_attention %[[Q]], %[[K3]]
// CHECK: %[[OUT:.*]], %{{.*}} = cp.merge
// CHECK: return %[[OUT]] : tensor<1x8x16x32xf32>
func.func @causal(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>, %v: tensor<1x2x16x32xf32>)
    -> tensor<1x8x16x32xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0] mask = causal
      : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return %o : tensor<1x8x16x32xf32>
}

// -----

shard.grid @cp(shape = 3)

// Without a mask every block is visible on every rank: no scf.if.
// CHECK-LABEL: func @no_mask
// CHECK-NOT: scf.if
// CHECK-COUNT-3: cp.local_attention
// CHECK-NOT: scf.if
// CHECK: return
func.func @no_mask(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>)
    -> tensor<1x4x8x16xf32> {
  %o = cp.attention %q, %k, %v on @cp grid_axes = [0]
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

shard.grid @cp(shape = 2)

// bf16 storage: partial outputs and merges stay in f32; the result is
// rounded once. A global-extent explicit mask is sliced per block: rows of
// this rank's queries, columns of the block's keys.
// CHECK-LABEL: func @bf16_global_mask
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<32x32xi1>
// CHECK: %[[QO:.*]] = arith.muli
// CHECK: %[[ROWS:.*]] = tensor.extract_slice %[[M]][%[[QO]], 0] [16, 32] [1, 1]
// CHECK: %[[DIAG:.*]] = tensor.extract_slice %[[ROWS]][0, %[[QO]]] [16, 16] [1, 1]
// CHECK: cp.local_attention {{.*}} explicit_mask %[[DIAG]] mask = sliding_window(5) {{.*}} -> tensor<1x4x16x8xf32>, tensor<1x4x16xf32>
// CHECK: cp.merge {{.*}} : tensor<1x4x16x8xf32>, tensor<1x4x16xf32>
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x16x8xf32>) outs(%{{.*}} : tensor<1x4x16x8xbf16>)
// CHECK:   arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[OUT]] : tensor<1x4x16x8xbf16>
func.func @bf16_global_mask(%q: tensor<1x4x16x8xbf16>, %k: tensor<1x2x16x8xbf16>, %v: tensor<1x2x16x8xbf16>,
                            %m: tensor<32x32xi1>) -> tensor<1x4x16x8xbf16> {
  %o = cp.attention %q, %k, %v explicit_mask %m on @cp grid_axes = [0] mask = sliding_window(5)
      : tensor<1x4x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<32x32xi1> -> tensor<1x4x16x8xbf16>
  return %o : tensor<1x4x16x8xbf16>
}

// -----

shard.grid @single(shape = 1)

// One rank: one step, the diagonal block, and nothing to shift.
// CHECK-LABEL: func @one_rank
// CHECK-NOT: cp.shift
// CHECK: cp.local_attention
// CHECK-NOT: cp.local_attention
// CHECK: return
func.func @one_rank(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>)
    -> tensor<1x4x8x16xf32> {
  %o = cp.attention %q, %k, %v on @single grid_axes = [0] mask = causal
      : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}
