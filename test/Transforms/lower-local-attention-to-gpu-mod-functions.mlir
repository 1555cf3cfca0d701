// cp-lower-local-attention-to-gpu with mask_mod / score_mod functions: in
// the kernel each thread evaluates the score_mod on each of its scores and
// the mask_mod at its (query row, key) pair, at global positions, with the
// structured mask; the mod operands (segment ids) are read from the buffer
// the launch captures. A document mask_mod also skips whole key tiles: each
// thread computes the query tile's [min, max] segment id once and each key
// tile's per tile (the same values on every thread, so the branch is uniform
// and the barriers inside it hold); a tile whose range does not meet the
// query tile's carries the softmax state through unchanged. The functions
// are erased once no op names them.
// RUN: cp-opt %s -cp-lower-local-attention-to-gpu -canonicalize -cse | FileCheck %s

// CHECK-NOT: func.func private
// CHECK-LABEL: func @document_softcap
// CHECK-SAME: %[[SEG:[^:]*]]: memref<100xi32>
// CHECK: gpu.launch
// CHECK: %[[QR:.*]]:2 = scf.for {{.*}} -> (i32, i32)
// CHECK: scf.for %{{.*}} iter_args(%[[M:[^ ]*]] = {{.*}}) -> (f32, f32, f32, f32, f32, f32) {
// CHECK: %[[KR:.*]]:2 = scf.for {{.*}} -> (i32, i32)
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[KR]]#1, %[[QR]]#0 : i32
// CHECK: %[[ABOVE:.*]] = arith.cmpi slt, %[[QR]]#1, %[[KR]]#0 : i32
// CHECK: %[[APART:.*]] = arith.ori %[[ABOVE]], %[[BELOW]] : i1
// CHECK: scf.if %[[APART]] -> (f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT: scf.yield %[[M]],
// CHECK-NEXT: } else {
// One key of the thread: score_mod, then mask_mod.
// CHECK: %[[T:.*]] = math.tanh %{{.*}} : f32
// CHECK: %[[Y:.*]] = arith.mulf %[[T]], %{{.*}} : f32
// CHECK: %[[A:.*]] = memref.load %[[SEG]][%{{.*}}] : memref<100xi32>
// CHECK: %[[B:.*]] = memref.load %[[SEG]][%{{.*}}] : memref<100xi32>
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]] : i32
// CHECK: arith.andi %{{.*}}, %[[SAME]] : i1
// CHECK: arith.select %{{.*}}, %[[Y]], %{{.*}} : f32
// The thread's next key reuses the query's segment id.
// CHECK: math.tanh
// CHECK: %[[B2:.*]] = memref.load %[[SEG]][%{{.*}}] : memref<100xi32>
// CHECK: arith.cmpi eq, %[[A]], %[[B2]] : i32
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
