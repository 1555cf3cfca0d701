// mask_mod and score_mod regions under every scheme: each local attention
// gets a copy of the regions and the offsets that make their arguments
// global positions. q_idx = q_offset + i and kv_idx = kv_offset + j come
// from the local op's offsets (all-gathered keys start at 0, a ring block
// at its source rank's offset); under ulysses a rank holds heads
// [r * H/P, (r+1) * H/P), so its local op carries head_offset = r * H/P and
// the regions see global head numbers. Mod operands (here the segment ids
// of the whole sequence) are the same on every rank and pass through.
// RUN: cp-opt %s --cp-apply-scheme=scheme=allgather --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,ALLGATHER
// RUN: cp-opt %s --cp-apply-scheme=scheme=ulysses --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,ULYSSES
// RUN: cp-opt %s --cp-apply-scheme="scheme=hybrid(2)" --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,HYBRID
// RUN: cp-opt %s --cp-apply-scheme=scheme=head_tail --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,HEADTAIL
// RUN: cp-opt %s --cp-apply-scheme=scheme=ring --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,RING

shard.grid @cp(shape = 4)

// CHECK-LABEL: func @document_alibi
// CHECK-SAME: %[[SEG:[^:]*]]: tensor<256xi32>
// CHECK: %[[R:.*]] = shard.process_multi_index

// ALLGATHER: %[[QO:.*]] = arith.muli %[[R]], %c64 : index
// ALLGATHER: cp.local_attention {{.*}} offsets(%[[QO]], %c0) mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {

// ULYSSES: %[[H0:.*]] = arith.muli %[[R]], %c2 : index
// ULYSSES: cp.local_attention {{.*}} offsets(%c0, %c0) head_offset(%[[H0]]) mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {

// Ulysses over axis 1 of a 2x2 grid: 8 heads / 2 = 4 per rank.
// HYBRID: %[[R1:.*]] = shard.process_multi_index on @cp_hybrid_2x2 axes = [1]
// HYBRID: %[[H0:.*]] = arith.muli %[[R1]], %c4 : index
// HYBRID: cp.local_attention {{.*}} head_offset(%[[H0]]) mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {

// Two local ops (head chunk r, tail chunk 2P-1-r), both with the regions.
// HEADTAIL: cp.local_attention {{.*}} mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {
// HEADTAIL: cp.local_attention {{.*}} mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {

// Step 0 sees this rank's own block; later steps the shifted ones, at
// their source rank's offset.
// RING: cp.local_attention {{.*}} offsets(%[[QO:.*]], %[[QO]]) mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {
// RING: cp.local_attention {{.*}} offsets(%[[QO]], %{{.*}}) mod_operands(%[[SEG]] : tensor<256xi32>) mask = causal mask_mod {

// The regions, verbatim.
// CHECK: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[QI:.*]]: index, %[[KI:.*]]: index, %[[S:.*]]: tensor<256xi32>):
// CHECK-NEXT: %[[A:.*]] = tensor.extract %[[S]][%[[QI]]]
// CHECK-NEXT: %[[B:.*]] = tensor.extract %[[S]][%[[KI]]]
// CHECK-NEXT: %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]] : i32
// CHECK-NEXT: cp.yield %[[SAME]] : i1
// CHECK-NEXT: } score_mod {
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index,
// CHECK: %{{.*}} = arith.index_cast %[[H]] : index to i64
// CHECK: %[[Y:.*]] = arith.addf %[[X]], %{{.*}} : f32
// CHECK-NEXT: cp.yield %[[Y]] : f32
func.func @document_alibi(%q: tensor<1x8x64x32xf32>, %k: tensor<1x4x64x32xf32>,
                          %v: tensor<1x4x64x32xf32>, %seg: tensor<256xi32>)
    -> tensor<1x8x64x32xf32> {
  %o = cp.attention %q, %k, %v mod_operands(%seg : tensor<256xi32>)
      on @cp grid_axes = [0] mask = causal
      mask_mod {
      ^bb0(%b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %a = tensor.extract %s[%qi] : tensor<256xi32>
        %c = tensor.extract %s[%ki] : tensor<256xi32>
        %same = arith.cmpi eq, %a, %c : i32
        cp.yield %same : i1
      }
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %qi: index, %ki: index, %s: tensor<256xi32>):
        %hi = arith.index_cast %h : index to i64
        %hf = arith.sitofp %hi : i64 to f32
        %qii = arith.index_cast %qi : index to i64
        %kii = arith.index_cast %ki : index to i64
        %d = arith.subi %kii, %qii : i64
        %df = arith.sitofp %d : i64 to f32
        %bias = arith.mulf %hf, %df : f32
        %y = arith.addf %x, %bias : f32
        cp.yield %y : f32
      }
      : tensor<1x8x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>
        -> tensor<1x8x64x32xf32>
  return %o : tensor<1x8x64x32xf32>
}
