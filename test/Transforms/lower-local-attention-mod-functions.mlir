// cp-lower-local-attention with mask_mod / score_mod functions (the
// outlined regions of bufferization).
//   1. A document mask_mod (seg[q_idx] == seg[kv_idx]) gets the [min, max]
//      segment id of every key tile once per call. Per (query tile, key
//      tile) it skips the tile when the query tile's range and the key
//      tile's do not meet: no score of it is computed.
//   2. The score_mod runs on vector lanes: a row of the transposed score
//      tile St[j, :] (queries on lanes) at once, at global positions,
//      before any mask. What does not depend on the query (batch, head, the
//      key position, constants) stays scalar and is broadcast.
//   3. The structured mask cuts the diagonal tiles.
//   4. The mask_mod runs on lanes too and sets -inf where it is false; a
//      read of a mod operand at the query position is a vector.gather. When
//      the mask_mod is only the document conjunct (and structured ones),
//      a tile whose queries and keys all share one segment id skips it.
// The functions are erased once no op names them.
// RUN: cp-opt %s -cp-lower-local-attention -canonicalize -cse | FileCheck %s

// CHECK-NOT: func.func private
// CHECK-LABEL: func @document_softcap
// CHECK-SAME: (%{{.*}}: memref<1x4x40x16xf32>, %{{.*}}: memref<1x2x100x16xf32>, %{{.*}}: memref<1x2x100x16xf32>, %[[SEG:.*]]: memref<100xi32>, %{{.*}}: memref<1x4x40x16xf32>, %[[QO:.*]]: index, %[[H0:.*]]: index)
// The key tiles' segment ranges, once per call.
// CHECK: %[[KMIN:.*]] = memref.alloc() : memref<2xi32>
// CHECK: %[[KMAX:.*]] = memref.alloc() : memref<2xi32>
// CHECK: scf.for %[[KT0:.*]] = %c0 to %c2 step %c1 {
// CHECK: %[[KS0:.*]] = memref.load %[[SEG]]
// CHECK: %[[KR:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[KS0]], %{{.*}} = %[[KS0]]) -> (i32, i32)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: memref.store %[[KR]]#0, %[[KMIN]][%[[KT0]]]
// CHECK: memref.store %[[KR]]#1, %[[KMAX]][%[[KT0]]]
// CHECK: scf.parallel
// The query tile's first global position and its segment-id range.
// CHECK: %[[QF:.*]] = arith.addi %[[QO]], %{{.*}} : index
// CHECK: %[[QS0:.*]] = memref.load %[[SEG]][%[[QF]]]
// CHECK: %[[QR:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[QS0]], %{{.*}} = %[[QS0]]) -> (i32, i32)
// Per key tile: the skip, and whether the mask_mod must run.
// CHECK: scf.for %[[KT:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: %[[K0:.*]] = arith.muli %[[KT]], %c64 : index
// CHECK: %[[LO:.*]] = memref.load %[[KMIN]][%[[KT]]]
// CHECK: %[[HI:.*]] = memref.load %[[KMAX]][%[[KT]]]
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[HI]], %[[QR]]#0 : i32
// CHECK: %[[ABOVE:.*]] = arith.cmpi slt, %[[QR]]#1, %[[LO]] : i32
// CHECK: %[[APART:.*]] = arith.ori %[[ABOVE]], %[[BELOW]] : i1
// CHECK: %[[MEET:.*]] = arith.xori %[[APART]], %true : i1
// CHECK: scf.if %[[MEET]] {
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[QR]]#0, %[[LO]] : i32
// CHECK: %[[KONE:.*]] = arith.cmpi eq, %[[LO]], %[[HI]] : i32
// CHECK: %[[QONE:.*]] = arith.cmpi eq, %[[QR]]#0, %[[QR]]#1 : i32
// CHECK: %[[ONES:.*]] = arith.andi %[[QONE]], %[[KONE]] : i1
// CHECK: %[[ONE:.*]] = arith.andi %[[ONES]], %[[SAME]] : i1
// CHECK: %[[NEEDED:.*]] = arith.xori %[[ONE]], %true : i1
// The score_mod on lanes: tanh(s / 2) * 2 on a row of St.
// CHECK: scf.for %[[SI:.*]] = %c0 to %{{.*}} step %c8 {
// CHECK: scf.for %[[SJ:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: %[[S:.*]] = vector.load %[[ST:.*]][%[[SJ]], %[[SI]]] : memref<64x32xf32>, vector<8xf32>
// CHECK: %[[XS:.*]] = arith.divf %[[S]], %{{.*}} : vector<8xf32>
// CHECK: %[[T:.*]] = math.tanh %[[XS]] : vector<8xf32>
// CHECK: %[[Y:.*]] = arith.mulf %[[T]], %{{.*}} : vector<8xf32>
// CHECK: vector.store %[[Y]], %[[ST]][%[[SJ]], %[[SI]]]
// The causal cut of a diagonal tile.
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : vector<8xindex>
// The mask_mod on lanes, unless the tile is one document: the query
// positions of the lanes (lanes past the last query repeat the first), the
// query segment ids gathered, the key's loaded once and broadcast.
// CHECK: scf.if %[[NEEDED]] {
// CHECK: scf.for %[[MI:.*]] = %c0 to %{{.*}} step %c8 {
// CHECK: %[[LANE:.*]] = arith.addi %{{.*}}, %[[IOTA:.*]] : vector<8xindex>
// CHECK: %[[INTILE:.*]] = arith.cmpi slt, %[[LANE]], %{{.*}} : vector<8xindex>
// CHECK: %[[REL:.*]] = arith.select %[[INTILE]], %[[LANE]], %{{.*}} : vector<8xi1>, vector<8xindex>
// CHECK: %[[QPOS:.*]] = arith.addi %{{.*}}, %[[REL]] : vector<8xindex>
// CHECK: scf.for %[[MJ:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: %[[S2:.*]] = vector.load %[[ST]][%[[MJ]], %[[MI]]]
// CHECK: %[[KI:.*]] = arith.addi %[[K0]], %[[MJ]] : index
// CHECK: %[[A:.*]] = vector.gather %[[SEG]][%c0] [%[[QPOS]]]
// CHECK: %[[B:.*]] = memref.load %[[SEG]][%[[KI]]]
// CHECK: %[[BL:.*]] = vector.broadcast %[[B]] : i32 to vector<8xi32>
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[A]], %[[BL]] : vector<8xi32>
// CHECK: %[[M:.*]] = arith.select %[[EQ]], %[[S2]], %cst{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: vector.store %[[M]], %[[ST]][%[[MJ]], %[[MI]]]
// CHECK: memref.dealloc %[[KMIN]]
// CHECK: memref.dealloc %[[KMAX]]
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

// A mask_mod reading a table at [q_idx, h] (the query index is not the last)
// and a strided operand: one scalar load per lane, gathered into a vector.
// Its document conjunct still skips tiles; the other conjunct keeps the
// mask_mod on every visible tile. ALiBi's slope depends on the head only:
// it stays a scalar, and only the distance is on lanes.
// CHECK-LABEL: func @per_lane_reads
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: scf.if
// CHECK: math.exp2 %{{.*}} : f32
// CHECK: arith.sitofp %{{.*}} : vector<8xi64> to vector<8xf32>
// CHECK-NOT: scf.if
// CHECK: vector.gather
// CHECK: vector.extract %{{.*}}[0] : index from vector<8xindex>
// CHECK: memref.load %{{.*}} : memref<100x4xi8>
// CHECK: vector.extract %{{.*}}[7] : index from vector<8xindex>
// CHECK: vector.from_elements %{{.*}} : vector<8xi8>
// CHECK: memref.load %{{.*}} : memref<50xi32, strided<[2]>>
// CHECK: vector.from_elements %{{.*}} : vector<8xi32>
func.func private @document_and_table(%b: index, %h: index, %qi: index,
    %ki: index, %s: memref<100xi32>, %t: memref<100x4xi8>,
    %w: memref<50xi32, strided<[2]>>) -> i1 {
  %a = memref.load %s[%qi] : memref<100xi32>
  %c = memref.load %s[%ki] : memref<100xi32>
  %same = arith.cmpi eq, %a, %c : i32
  %allowed = memref.load %t[%qi, %h] : memref<100x4xi8>
  %zero = arith.constant 0 : i8
  %on = arith.cmpi ne, %allowed, %zero : i8
  %c2 = arith.constant 2 : index
  %half = arith.divui %qi, %c2 : index
  %x = memref.load %w[%half] : memref<50xi32, strided<[2]>>
  %zero32 = arith.constant 0 : i32
  %pos = arith.cmpi sge, %x, %zero32 : i32
  %both = arith.andi %same, %on : i1
  %all = arith.andi %both, %pos : i1
  return %all : i1
}
func.func private @alibi(%x: f32, %b: index, %h: index, %qi: index, %ki: index,
    %s: memref<100xi32>, %t: memref<100x4xi8>,
    %w: memref<50xi32, strided<[2]>>) -> f32 {
  %one = arith.constant 1 : index
  %h1 = arith.addi %h, %one : index
  %h1i = arith.index_cast %h1 : index to i64
  %h1f = arith.sitofp %h1i : i64 to f32
  %rate = arith.constant -2.0 : f32
  %e = arith.mulf %h1f, %rate : f32
  %slope = math.exp2 %e : f32
  %qii = arith.index_cast %qi : index to i64
  %kii = arith.index_cast %ki : index to i64
  %dist = arith.subi %kii, %qii : i64
  %distf = arith.sitofp %dist : i64 to f32
  %bias = arith.mulf %slope, %distf : f32
  %y = arith.addf %x, %bias : f32
  return %y : f32
}
func.func @per_lane_reads(%q: memref<1x4x40x16xf32>, %k: memref<1x2x100x16xf32>, %v: memref<1x2x100x16xf32>,
                          %seg: memref<100xi32>, %table: memref<100x4xi8>,
                          %w: memref<50xi32, strided<[2]>>, %o: memref<1x4x40x16xf32>) {
  %c0 = arith.constant 0 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0)
      mod_operands(%seg, %table, %w : memref<100xi32>, memref<100x4xi8>, memref<50xi32, strided<[2]>>)
      into %o mask_mod = @document_and_table score_mod = @alibi
      : memref<1x4x40x16xf32>, memref<1x2x100x16xf32>, memref<1x2x100x16xf32> into memref<1x4x40x16xf32>
  return
}
