// cp-outline-local-attention: every buffer-level local attention becomes a
// call of a private kernel function holding one copy of it; ops with the
// same attributes and operand types share the kernel (a model of N equal
// layers compiles one attention loop nest). A memref parameter keeps its
// shape and strides and takes a dynamic offset, so views of one buffer at
// different offsets (zigzag's chunks) share one kernel too. Operands are
// passed by position, so the two offsets stay two arguments even when one
// value (0) is both.
// RUN: cp-opt %s -split-input-file -cp-outline-local-attention | FileCheck %s

// CHECK-LABEL: func.func @two_layers(
// CHECK-SAME: %[[Q:.*]]: memref<1x4x40x16xf32>, %[[K:.*]]: memref<1x2x40x16xf32>, %[[V:.*]]: memref<1x2x40x16xf32>, %[[O1:.*]]: memref<1x4x40x16xf32>, %[[O2:.*]]: memref<1x4x40x16xf32>, %[[O3:.*]]: memref<1x4x40x16xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[QC:.*]] = memref.cast %[[Q]] : memref<1x4x40x16xf32> to memref<1x4x40x16xf32, strided<[2560, 640, 16, 1], offset: ?>>
// CHECK-DAG: %[[KC:.*]] = memref.cast %[[K]] : memref<1x2x40x16xf32> to memref<1x2x40x16xf32, strided<[1280, 640, 16, 1], offset: ?>>
// CHECK-DAG: %[[VC:.*]] = memref.cast %[[V]]
// CHECK-DAG: %[[O1C:.*]] = memref.cast %[[O1]]
// CHECK: call @cp_local_attention(%[[QC]], %[[KC]], %[[VC]], %[[C0]], %[[C0]], %[[O1C]])
// CHECK: call @cp_local_attention({{.*}}, %[[C8]], %[[C0]], %{{.*}})
// A different mask is a different kernel.
// CHECK: call @cp_local_attention_0({{.*}}, %[[C0]], %[[C0]], %{{.*}})
// CHECK-NOT: cp.buffer.local_attention
// CHECK: return

// CHECK: func.func private @cp_local_attention(%[[A0:.*]]: memref<1x4x40x16xf32, strided<[2560, 640, 16, 1], offset: ?>>, %[[A1:.*]]: memref<1x2x40x16xf32, strided<[1280, 640, 16, 1], offset: ?>>, %[[A2:.*]]: memref<1x2x40x16xf32, strided<[1280, 640, 16, 1], offset: ?>>, %[[A3:.*]]: index, %[[A4:.*]]: index, %[[A5:.*]]: memref<1x4x40x16xf32, strided<[2560, 640, 16, 1], offset: ?>>)
// CHECK-NEXT: cp.buffer.local_attention %[[A0]], %[[A1]], %[[A2]] offsets(%[[A3]], %[[A4]]) into %[[A5]] mask = causal
// CHECK-NEXT: return
// CHECK: func.func private @cp_local_attention_0(
// CHECK-NEXT: cp.buffer.local_attention {{.*}} into %{{.*}} :
// CHECK-NEXT: return
func.func @two_layers(%q: memref<1x4x40x16xf32>, %k: memref<1x2x40x16xf32>, %v: memref<1x2x40x16xf32>,
                      %o1: memref<1x4x40x16xf32>, %o2: memref<1x4x40x16xf32>, %o3: memref<1x4x40x16xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  cp.buffer.local_attention %q, %k, %v offsets(%c0, %c0) into %o1 mask = causal
      : memref<1x4x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x40x16xf32>
  cp.buffer.local_attention %o1, %k, %v offsets(%c8, %c0) into %o2 mask = causal
      : memref<1x4x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x40x16xf32>
  cp.buffer.local_attention %o2, %k, %v offsets(%c0, %c0) into %o3
      : memref<1x4x40x16xf32>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x40x16xf32>
  return
}

// -----

// Zigzag's two query chunks: subviews of one buffer at offsets 0 and 320
// (rows 0..19 and 20..39) are one kernel; the mod operand keeps its type,
// which the mask_mod takes. The two mask_mod functions bufferization made
// of one region are equal, so both ops name the first and the second is
// erased.
// CHECK-LABEL: func.func @two_chunks(
// CHECK: %[[LO:.*]] = memref.subview
// CHECK: %[[HI:.*]] = memref.subview
// CHECK: %[[LOC:.*]] = memref.cast %[[LO]] : memref<1x4x20x16xf32, strided<[2560, 640, 16, 1]>> to memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: ?>>
// CHECK: call @[[KERNEL:cp_local_attention[_0-9]*]](%[[LOC]], {{.*}}, %[[SEG:.*]], %{{.*}}) : (memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: ?>>, {{.*}}, memref<40xi32>,
// CHECK: %[[HIC:.*]] = memref.cast %[[HI]] : memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: 320>> to memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: ?>>
// CHECK: call @[[KERNEL]](%[[HIC]], {{.*}}, %[[SEG]], %{{.*}})
// CHECK: func.func private @same_document(
// CHECK-NOT: func.func private @same_document_again(
// CHECK: func.func private @[[KERNEL]](
// CHECK-NEXT: cp.buffer.local_attention {{.*}} mask_mod = @same_document :
// CHECK-NOT: func.func private @same_document_again(
func.func @two_chunks(%q: memref<1x4x40x16xf32>, %k: memref<1x2x40x16xf32>, %v: memref<1x2x40x16xf32>,
                      %seg: memref<40xi32>, %o: memref<1x4x40x16xf32>) {
  %c0 = arith.constant 0 : index
  %c20 = arith.constant 20 : index
  %lo = memref.subview %q[0, 0, 0, 0] [1, 4, 20, 16] [1, 1, 1, 1]
      : memref<1x4x40x16xf32> to memref<1x4x20x16xf32, strided<[2560, 640, 16, 1]>>
  %hi = memref.subview %q[0, 0, 20, 0] [1, 4, 20, 16] [1, 1, 1, 1]
      : memref<1x4x40x16xf32> to memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: 320>>
  %olo = memref.subview %o[0, 0, 0, 0] [1, 4, 20, 16] [1, 1, 1, 1]
      : memref<1x4x40x16xf32> to memref<1x4x20x16xf32, strided<[2560, 640, 16, 1]>>
  %ohi = memref.subview %o[0, 0, 20, 0] [1, 4, 20, 16] [1, 1, 1, 1]
      : memref<1x4x40x16xf32> to memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: 320>>
  cp.buffer.local_attention %lo, %k, %v offsets(%c0, %c0) mod_operands(%seg : memref<40xi32>) into %olo mask_mod = @same_document
      : memref<1x4x20x16xf32, strided<[2560, 640, 16, 1]>>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x20x16xf32, strided<[2560, 640, 16, 1]>>
  cp.buffer.local_attention %hi, %k, %v offsets(%c20, %c0) mod_operands(%seg : memref<40xi32>) into %ohi mask_mod = @same_document_again
      : memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: 320>>, memref<1x2x40x16xf32>, memref<1x2x40x16xf32> into memref<1x4x20x16xf32, strided<[2560, 640, 16, 1], offset: 320>>
  return
}
func.func private @same_document(%b: index, %h: index, %i: index, %j: index, %seg: memref<40xi32>) -> i1 {
  %a = memref.load %seg[%i] : memref<40xi32>
  %c = memref.load %seg[%j] : memref<40xi32>
  %same = arith.cmpi eq, %a, %c : i32
  return %same : i1
}
func.func private @same_document_again(%b: index, %h: index, %i: index, %j: index, %seg: memref<40xi32>) -> i1 {
  %a = memref.load %seg[%i] : memref<40xi32>
  %c = memref.load %seg[%j] : memref<40xi32>
  %same = arith.cmpi eq, %a, %c : i32
  return %same : i1
}
