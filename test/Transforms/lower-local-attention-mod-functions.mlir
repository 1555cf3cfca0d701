// cp-lower-local-attention with mask_mod / score_mod functions (the
// outlined regions of bufferization). Per key tile:
//   1. a document mask_mod (seg[q_idx] == seg[kv_idx]) skips the tile when
//      the [min, max] of the query tile's segment ids and the key tile's do
//      not meet: no score of the tile is computed;
//   2. the score_mod's body is inlined on every valid score, at global
//      positions, before any mask;
//   3. the structured mask cuts the diagonal tiles;
//   4. the mask_mod's body is inlined per element and sets -inf where it is
//      false.
// The functions are erased once no op names them.
// RUN: cp-opt %s -cp-lower-local-attention -canonicalize -cse | FileCheck %s

// CHECK-NOT: func.func private
// CHECK-LABEL: func @document_softcap
// CHECK-SAME: (%{{.*}}: memref<1x4x40x16xf32>, %{{.*}}: memref<1x2x100x16xf32>, %{{.*}}: memref<1x2x100x16xf32>, %[[SEG:.*]]: memref<100xi32>, %{{.*}}: memref<1x4x40x16xf32>, %[[QO:.*]]: index, %[[H0:.*]]: index)
// The query tile's first global position and its segment-id range.
// CHECK: %[[QF:.*]] = arith.addi %[[QO]], %{{.*}} : index
// CHECK: %[[QS0:.*]] = memref.load %[[SEG]][%[[QF]]]
// CHECK: %[[QR:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[QS0]], %{{.*}} = %[[QS0]]) -> (i32, i32)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// Per key tile: its range, and the skip.
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1 {
// CHECK: %[[K0:.*]] = arith.muli %{{.*}}, %c64 : index
// CHECK: %[[KS0:.*]] = memref.load %[[SEG]][%[[K0]]]
// CHECK: %[[KR:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[KS0]], %{{.*}} = %[[KS0]]) -> (i32, i32)
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[KR]]#1, %[[QR]]#0 : i32
// CHECK: %[[ABOVE:.*]] = arith.cmpi slt, %[[QR]]#1, %[[KR]]#0 : i32
// CHECK: %[[APART:.*]] = arith.ori %[[ABOVE]], %[[BELOW]] : i1
// CHECK: %[[MEET:.*]] = arith.xori %[[APART]], %true : i1
// CHECK: scf.if %[[MEET]] {
// The score_mod: tanh(s / 2) * 2.
// CHECK: %[[S:.*]] = memref.load %[[ST:.*]][%{{.*}}, %{{.*}}] : memref<64x32xf32>
// CHECK: %[[XS:.*]] = arith.divf %[[S]], %{{.*}} : f32
// CHECK: %[[T:.*]] = math.tanh %[[XS]] : f32
// CHECK: %[[Y:.*]] = arith.mulf %[[T]], %{{.*}} : f32
// CHECK: memref.store %[[Y]], %[[ST]]
// The causal cut of a diagonal tile.
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : vector<8xindex>
// The mask_mod at global positions (q: qFirst + i, kv: k0 + j).
// CHECK: %[[S2:.*]] = memref.load %[[ST]][%[[J:.*]], %[[I:.*]]] : memref<64x32xf32>
// CHECK: %[[QI:.*]] = arith.addi %[[QF]], %[[I]] : index
// CHECK: %[[KI:.*]] = arith.addi %[[K0]], %[[J]] : index
// CHECK: %[[A:.*]] = memref.load %[[SEG]][%[[QI]]]
// CHECK: %[[B:.*]] = memref.load %[[SEG]][%[[KI]]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]] : i32
// CHECK: %[[M:.*]] = arith.select %[[SAME]], %[[S2]], %cst{{.*}} : f32
// CHECK: memref.store %[[M]], %[[ST]][%[[J]], %[[I]]]
func.func private @same_document(%b: index, %h: index, %qi: index, %ki: index,
                                 %s: memref<100xi32>) -> i1 {
  %a = memref.load %s[%qi] : memref<100xi32>
  %c = memref.load %s[%ki] : memref<100xi32>
  %same = arith.cmpi eq, %a, %c : i32
  return %same : i1
}
func.func private @softcap(%x: f32, %b: index, %h: index, %qi: index, %ki: index,
                           %s: memref<100xi32>) -> f32 {
  %cap = arith.constant 2.0 : f32
  %xs = arith.divf %x, %cap : f32
  %t = math.tanh %xs : f32
  %y = arith.mulf %t, %cap : f32
  return %y : f32
}
func.func @document_softcap(%q: memref<1x4x40x16xf32>, %k: memref<1x2x100x16xf32>, %v: memref<1x2x100x16xf32>,
                            %seg: memref<100xi32>, %o: memref<1x4x40x16xf32>, %qo: index, %h0: index) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%qo, %c0) head_offset(%h0)
      mod_operands(%seg : memref<100xi32>) into %o mask = causal
      mask_mod = @same_document score_mod = @softcap
      : memref<1x4x40x16xf32>, memref<1x2x100x16xf32>, memref<1x2x100x16xf32> into memref<1x4x40x16xf32>
  return
}
